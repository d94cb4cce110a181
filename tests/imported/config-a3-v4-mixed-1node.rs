// Written by `catalog import`; every value the input set is kept, every rule it
// breaks is acknowledged below, and what no rule covers is a `deviate`.

use pd_dsl::{LayoutSpec, layout};

/// The imported layout.
pub fn imported() -> LayoutSpec {
    layout! {
        /// Imported from `tests/fixtures/import/configs/a3-v4-mixed-1node.yaml`.
        name: "imported/a3-v4-mixed-1node",
        model: deepseek_v4_flash_w8a8_mtp,
        hardware: a3,
        image: "v0.30.0rc2",
        topology: <mixed 1 x dp2tp8;>,
        ports: { api: 8000 },
        serve: {
            max_model_len: 65536,
            max_num_seqs: 32,
            expert_parallel: true,
            trust_remote_code: true,
            graph: full_decode_only,
            speculative: { method: mtp, tokens: 2 },
            env: {
                HCCL_BUFFSIZE: "1024",
                PYTORCH_NPU_ALLOC_CONF: "expandable_segments:True",
                LD_PRELOAD: prepend("/usr/lib/aarch64-linux-gnu/libjemalloc.so.2"),
                VLLM_WORKER_MULTIPROC_METHOD: "spawn",
            },
        },
        provenance: { recorded: "2026-10-13", sources: ["imported from tests/fixtures/import/configs/a3-v4-mixed-1node.yaml"] },
        deviate("env `VLLM_WORKER_MULTIPROC_METHOD=spawn` added (tests/fixtures/import/configs/a3-v4-mixed-1node.yaml:11)", "the e2e runner's server sets it on every `vllm serve` it starts (tests/e2e/conftest.py `RemoteOpenAIServer._start_server`); the layout states it"),
        deviate("model `vllm-ascend/DeepSeek-V4-Flash-w8a8-mtp` loaded from the hub (tests/fixtures/import/configs/a3-v4-mixed-1node.yaml:11)", "pd-dsl serves weights from a path; the model table's is `/root/.cache/modelscope/hub/models/vllm-ascend/DeepSeek-V4-Flash-w8a8-mtp`"),
        deviate("no `--quantization` (vLLM's default) (tests/fixtures/import/configs/a3-v4-mixed-1node.yaml:11)", "pd-dsl passes the model table's `--quantization ascend` for `deepseek_v4_flash_w8a8_mtp`"),
        deviate("no `--tokenizer-mode` (vLLM's default) (tests/fixtures/import/configs/a3-v4-mixed-1node.yaml:11)", "pd-dsl passes the model table's `--tokenizer-mode deepseek_v4` for `deepseek_v4_flash_w8a8_mtp`"),
        deviate("no `--served-model-name` (vLLM serves the model as `vllm-ascend/DeepSeek-V4-Flash-w8a8-mtp`) (tests/fixtures/import/configs/a3-v4-mixed-1node.yaml:11)", "pd-dsl passes the model table's `--served-model-name dsv4`: clients ask for that name"),
    }
}
