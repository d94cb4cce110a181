// Written by `catalog import`; every value the input set is kept, every rule it
// breaks is acknowledged below, and what no rule covers is a `deviate`.

use pd_dsl::{LayoutSpec, layout};

/// The imported layout.
pub fn imported() -> LayoutSpec {
    layout! {
        /// Imported from `tests/fixtures/import/scripts/a3-v31-2p1d-v1/launch.sh`, `tests/fixtures/import/scripts/a3-v31-2p1d-v1/proxy.sh`, `tests/fixtures/import/scripts/a3-v31-2p1d-v1/run_dp_template_d.sh`, `tests/fixtures/import/scripts/a3-v31-2p1d-v1/run_dp_template_p0.sh`, `tests/fixtures/import/scripts/a3-v31-2p1d-v1/run_dp_template_p1.sh`.
        name: "imported/a3-v31-2p1d-v1",
        model: deepseek_v3_1_w8a8_mtp_quarot,
        hardware: a3,
        image: "v0.30.0rc2",
        topology: <prefill 2 x dp2tp8; decode 1 x dp32tp1;>,
        connector: mooncake_v1 { kv_port: { prefill: [36100, 36200], decode: 36300 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        serve: {
            max_model_len: 65536,
            seed: 1024,
            expert_parallel: true,
            trust_remote_code: true,
            prefix_caching: false,
            speculative: { method: mtp, tokens: 1 },
            additional_config: { "recompute_scheduler_enable": true },
            env: {
                VLLM_RPC_TIMEOUT: "3600000",
                HCCL_EXEC_TIMEOUT: "204",
                OMP_PROC_BIND: "false",
                OMP_NUM_THREADS: "10",
                PYTORCH_NPU_ALLOC_CONF: "expandable_segments:True",
                TASK_QUEUE_ENABLE: "1",
                HCCL_OP_EXPANSION_MODE: "AIV",
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
            max_num_seqs: 28,
            gpu_memory_utilization: 0.94,
            graph: full_decode_only,
            env: {
                HCCL_BUFFSIZE: "600",
            },
        },
        provenance: { recorded: "2026-10-13", sources: ["imported from tests/fixtures/import/scripts/a3-v31-2p1d-v1/launch.sh", "imported from tests/fixtures/import/scripts/a3-v31-2p1d-v1/proxy.sh", "imported from tests/fixtures/import/scripts/a3-v31-2p1d-v1/run_dp_template_d.sh", "imported from tests/fixtures/import/scripts/a3-v31-2p1d-v1/run_dp_template_p0.sh", "imported from tests/fixtures/import/scripts/a3-v31-2p1d-v1/run_dp_template_p1.sh"] },
        allow(recompute_scheduler_on_prefill, "imported from tests/fixtures/import/scripts/a3-v31-2p1d-v1/run_dp_template_p0.sh:39"),
    }
}
