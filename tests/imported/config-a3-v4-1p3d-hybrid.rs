// Written by `catalog import`; every value the input set is kept, every rule it
// breaks is acknowledged below, and what no rule covers is a `deviate`.

use pd_dsl::{LayoutSpec, layout};

/// The imported layout.
pub fn imported() -> LayoutSpec {
    layout! {
        /// Imported from `tests/fixtures/import/configs/a3-v4-1p3d-hybrid.yaml`.
        name: "imported/a3-v4-1p3d-hybrid",
        model: deepseek_v4_flash_w8a8_mtp,
        hardware: a3,
        image: "v0.30.0rc2",
        topology: <prefill 1 x dp4tp4; decode 3 x dp16tp1;>,
        connector: mooncake_hybrid { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        serve: {
            max_model_len: 32768,
            seed: 1024,
            expert_parallel: true,
            trust_remote_code: true,
            prefix_caching: false,
            speculative: { method: mtp, tokens: 1 },
            env: {
                VLLM_RPC_TIMEOUT: "3600000",
                HCCL_EXEC_TIMEOUT: "204",
                OMP_PROC_BIND: "False",
                OMP_NUM_THREADS: "10",
                PYTORCH_NPU_ALLOC_CONF: "expandable_segments:True",
                TASK_QUEUE_ENABLE: "1",
                LD_LIBRARY_PATH: prepend("/usr/local/Ascend/ascend-toolkit/latest/python/site-packages/mooncake"),
            },
        },
        prefill: {
            max_num_batched_tokens: 16384,
            max_num_seqs: 8,
            gpu_memory_utilization: 0.9,
            graph: eager,
            env: {
                HCCL_BUFFSIZE: "256",
            },
        },
        decode: {
            max_num_batched_tokens: 256,
            max_num_seqs: 40,
            gpu_memory_utilization: 0.94,
            graph: full_decode_only,
            env: {
                HCCL_BUFFSIZE: "1024",
            },
        },
        provenance: { recorded: "2026-10-13", sources: ["imported from tests/fixtures/import/configs/a3-v4-1p3d-hybrid.yaml"] },
        deviate("model `Eco-Tech/DeepSeek-V4-Flash-w8a8-mtp` loaded from the hub (tests/fixtures/import/configs/a3-v4-1p3d-hybrid.yaml:4)", "pd-dsl serves weights from a path; the model table's is `/root/.cache/modelscope/hub/models/vllm-ascend/DeepSeek-V4-Flash-w8a8-mtp`"),
        deviate("no `--tokenizer-mode` (vLLM's default) (tests/fixtures/import/configs/a3-v4-1p3d-hybrid.yaml:4)", "pd-dsl passes the model table's `--tokenizer-mode deepseek_v4` for `deepseek_v4_flash_w8a8_mtp`"),
        deviate("no `--served-model-name` (vLLM serves the model as `Eco-Tech/DeepSeek-V4-Flash-w8a8-mtp`) (tests/fixtures/import/configs/a3-v4-1p3d-hybrid.yaml:4)", "pd-dsl passes the model table's `--served-model-name dsv4`: clients ask for that name"),
    }
}
