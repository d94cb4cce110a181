// Written by `catalog import`; every value the input set is kept, every rule it
// breaks is acknowledged below, and what no rule covers is a `deviate`.

use pd_dsl::{LayoutSpec, layout};

/// The imported layout.
pub fn imported() -> LayoutSpec {
    layout! {
        /// Imported from `tests/fixtures/import/configs/a3-v31-mixed-2node-internal.yaml`.
        name: "imported/a3-v31-mixed-2node-internal",
        model: deepseek_v3_1,
        hardware: a3,
        image: "v0.30.0rc2",
        topology: <mixed 1 x dp4tp8;>,
        ports: { api: 8080, dp_rpc: 13399 },
        serve: {
            max_model_len: 8192,
            max_num_batched_tokens: 4096,
            max_num_seqs: 16,
            gpu_memory_utilization: 0.9,
            expert_parallel: true,
            trust_remote_code: true,
            prefix_caching: false,
            graph: full_decode_only,
            speculative: { method: mtp, tokens: 1 },
            env: {
                VLLM_USE_MODELSCOPE: "True",
                HCCL_BUFFSIZE: "1024",
                OMP_PROC_BIND: "False",
                OMP_NUM_THREADS: "1",
                HCCL_INTRA_PCIE_ENABLE: "1",
                HCCL_INTRA_ROCE_ENABLE: "0",
                VLLM_WORKER_MULTIPROC_METHOD: "spawn",
            },
        },
        provenance: { recorded: "2026-10-13", sources: ["imported from tests/fixtures/import/configs/a3-v31-mixed-2node-internal.yaml"] },
        deviate("env `VLLM_WORKER_MULTIPROC_METHOD=spawn` added (tests/fixtures/import/configs/a3-v31-mixed-2node-internal.yaml:22)", "the e2e runner's server sets it on every `vllm serve` it starts (tests/e2e/conftest.py `RemoteOpenAIServer._start_server`); the layout states it"),
        deviate("model `unsloth/DeepSeek-V3.1-BF16` loaded from the hub (tests/fixtures/import/configs/a3-v31-mixed-2node-internal.yaml:22)", "pd-dsl serves weights from a path; the model table's is `/weights/DeepSeek-V3.1`"),
        deviate("no `--served-model-name` (vLLM serves the model as `unsloth/DeepSeek-V3.1-BF16`) (tests/fixtures/import/configs/a3-v31-mixed-2node-internal.yaml:22)", "pd-dsl passes the model table's `--served-model-name deepseek_v3`: clients ask for that name"),
    }
}
