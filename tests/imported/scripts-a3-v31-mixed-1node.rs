// Written by `catalog import`; every value the input set is kept, every rule it
// breaks is acknowledged below, and what no rule covers is a `deviate`.

use pd_dsl::{LayoutSpec, layout};

/// The imported layout.
pub fn imported() -> LayoutSpec {
    layout! {
        /// Imported from `tests/fixtures/import/scripts/a3-v31-mixed-1node/serve.sh`.
        name: "imported/a3-v31-mixed-1node",
        model: deepseek_v3_1_w8a8_mtp_quarot,
        hardware: a3,
        image: "v0.30.0rc2",
        topology: <mixed 1 x dp4tp4;>,
        ports: { api: 8015 },
        serve: {
            max_model_len: 16384,
            max_num_batched_tokens: 4096,
            max_num_seqs: 16,
            gpu_memory_utilization: 0.92,
            seed: 1024,
            expert_parallel: true,
            trust_remote_code: true,
            prefix_caching: false,
            graph: full_decode_only,
            speculative: { method: mtp, tokens: 3 },
            additional_config: { "enable_balance_scheduling": true },
            env: {
                HCCL_OP_EXPANSION_MODE: "AIV",
                PYTORCH_NPU_ALLOC_CONF: "expandable_segments:True",
                VLLM_ASCEND_BALANCE_SCHEDULING: "1",
            },
        },
        provenance: { recorded: "2026-10-13", sources: ["imported from tests/fixtures/import/scripts/a3-v31-mixed-1node/serve.sh"] },
        allow(dead_env_toggle, "imported from tests/fixtures/import/scripts/a3-v31-mixed-1node/serve.sh:5"),
    }
}
