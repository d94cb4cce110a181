// Written by `catalog import`; every value the input set is kept, every rule it
// breaks is acknowledged below, and what no rule covers is a `deviate`.

use pd_dsl::{LayoutSpec, layout};

/// The imported layout.
pub fn imported() -> LayoutSpec {
    layout! {
        /// Imported from `tests/fixtures/import/configs/a2-v31-mixed-1node.yaml`.
        name: "imported/a2-v31-mixed-1node",
        model: deepseek_v3_1_terminus_w4a8_mtp_quarot,
        hardware: a2,
        image: "v0.30.0rc2",
        topology: <mixed 1 x dp1tp8;>,
        ports: { api: 8015 },
        serve: {
            max_model_len: 32768,
            trust_remote_code: true,
            graph: eager,
            env: {
                OMP_NUM_THREADS: "10",
                VLLM_ASCEND_ENABLE_MLAPO: "1",
                VLLM_WORKER_MULTIPROC_METHOD: "spawn",
            },
        },
        provenance: { recorded: "2026-10-13", sources: ["imported from tests/fixtures/import/configs/a2-v31-mixed-1node.yaml"] },
        allow(dead_env_toggle, "imported from tests/fixtures/import/configs/a2-v31-mixed-1node.yaml:9"),
        deviate("env `VLLM_WORKER_MULTIPROC_METHOD=spawn` added (tests/fixtures/import/configs/a2-v31-mixed-1node.yaml:11)", "the e2e runner's server sets it on every `vllm serve` it starts (tests/e2e/conftest.py `RemoteOpenAIServer._start_server`); the layout states it"),
        deviate("model `Eco-Tech/DeepSeek-V3.1-Terminus-w4a8-mtp-QuaRot` loaded from the hub (tests/fixtures/import/configs/a2-v31-mixed-1node.yaml:11)", "pd-dsl serves weights from a path; the model table's is `/weights/DeepSeek-V3.1-Terminus-w4a8-mtp-QuaRot`"),
        deviate("no `--served-model-name` (vLLM serves the model as `Eco-Tech/DeepSeek-V3.1-Terminus-w4a8-mtp-QuaRot`) (tests/fixtures/import/configs/a2-v31-mixed-1node.yaml:11)", "pd-dsl passes the model table's `--served-model-name deepseek_v3`: clients ask for that name"),
    }
}
