// Written by `catalog import`; every value the input set is kept, every rule it
// breaks is acknowledged below, and what no rule covers is a `deviate`.

use pd_dsl::{LayoutSpec, layout};

/// The imported layout.
pub fn imported() -> LayoutSpec {
    layout! {
        /// Imported from `tests/fixtures/import/configs/950dt-v31-1p1d-v1.yaml`.
        name: "imported/950dt-v31-1p1d-v1",
        model: deepseek_v3_1_w4a4c8_mxfp4,
        hardware: ascend_950dt,
        image: "v0.30.0rc2",
        topology: <prefill 1 x dp1tp8; decode 1 x dp8tp1;>,
        connector: mooncake_v1 { kv_port: { prefill: 36000, decode: 36100 }, extra: { "ascend_local_comm_res_path": "/etc/hccl_rootinfo.json" } },
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
            additional_config: { "recompute_scheduler_enable": true },
            env: {
                HCCL_BUFFSIZE: "512",
            },
        },
        provenance: { recorded: "2026-10-13", sources: ["imported from tests/fixtures/import/configs/950dt-v31-1p1d-v1.yaml"] },
        deviate("model `Eco-Tech/DeepSeek-V3.1-w4a4c8-mxfp4` loaded from the hub (tests/fixtures/import/configs/950dt-v31-1p1d-v1.yaml:4)", "pd-dsl serves weights from a path; the model table's is `/weight/dsk-v3.1-w4a4_mlp-w8a8c8_attn-0618-full`"),
        deviate("`--data-parallel-rank` on a DP 1 engine, which vLLM refuses (\"data_parallel_external_lb can only be set when data_parallel_size > 1\", vllm/config/parallel.py) (tests/fixtures/import/configs/950dt-v31-1p1d-v1.yaml:62)", "pd-dsl passes no DP rank to a DP 1 engine, so it starts"),
        deviate("no `--served-model-name` (vLLM serves the model as `Eco-Tech/DeepSeek-V3.1-w4a4c8-mxfp4`) (tests/fixtures/import/configs/950dt-v31-1p1d-v1.yaml:4)", "pd-dsl passes the model table's `--served-model-name deepseek_v3`: clients ask for that name"),
    }
}
