// Written by `catalog import`; every value the input set is kept, every rule it
// breaks is acknowledged below, and what no rule covers is a `deviate`.

use pd_dsl::{LayoutSpec, layout};

/// The imported layout.
pub fn imported() -> LayoutSpec {
    layout! {
        /// Imported from `tests/fixtures/import/scripts/a2-v31-mixed-2node/node0.sh`, `tests/fixtures/import/scripts/a2-v31-mixed-2node/node1.sh`.
        name: "imported/a2-v31-mixed-2node",
        model: deepseek_v3_1_w8a8_mtp_quarot,
        hardware: a2,
        image: "v0.30.0rc2",
        topology: <mixed 1 x dp4tp4;>,
        ports: { api: 8004, dp_rpc: 13389 },
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
            env: {
                OMP_PROC_BIND: "false",
                OMP_NUM_THREADS: "1",
                HCCL_BUFFSIZE: "200",
                PYTORCH_NPU_ALLOC_CONF: "expandable_segments:True",
                HCCL_INTRA_PCIE_ENABLE: "1",
                HCCL_INTRA_ROCE_ENABLE: "0",
            },
        },
        provenance: { recorded: "2026-10-13", sources: ["imported from tests/fixtures/import/scripts/a2-v31-mixed-2node/node0.sh", "imported from tests/fixtures/import/scripts/a2-v31-mixed-2node/node1.sh"] },
    }
}
