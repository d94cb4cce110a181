// Written by `catalog import`; every value the input set is kept, every rule it
// breaks is acknowledged below, and what no rule covers is a `deviate`.

use pd_dsl::{LayoutSpec, layout};

/// The imported layout.
pub fn imported() -> LayoutSpec {
    layout! {
        /// Imported from `tests/fixtures/import/scripts/950dt-v31-1p1d-layerwise/launch.sh`, `tests/fixtures/import/scripts/950dt-v31-1p1d-layerwise/proxy.sh`, `tests/fixtures/import/scripts/950dt-v31-1p1d-layerwise/run_dp_template_decode.sh`, `tests/fixtures/import/scripts/950dt-v31-1p1d-layerwise/run_dp_template_prefill.sh`.
        name: "imported/950dt-v31-1p1d-layerwise",
        model: deepseek_v3_1_w4a4c8_mxfp4,
        hardware: ascend_950dt,
        image: "v0.30.0rc2",
        topology: <prefill 1 x dp1tp8; decode 1 x dp8tp1;>,
        connector: mooncake_layerwise { kv_port: { prefill: 36000, decode: 36100 }, extra: { "ascend_local_comm_res_path": "/etc/hccl_rootinfo.json" } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        served_model_name: "dsv3",
        serve: {
            max_model_len: 32768,
            expert_parallel: true,
            trust_remote_code: true,
            env: {
                HCCL_BUFFSIZE: "512",
                OMP_NUM_THREADS: "10",
            },
        },
        prefill: {
            max_num_seqs: 8,
            graph: eager,
        },
        decode: {
            max_num_batched_tokens: 128,
            max_num_seqs: 32,
        },
        provenance: { recorded: "2026-10-13", sources: ["imported from tests/fixtures/import/scripts/950dt-v31-1p1d-layerwise/launch.sh", "imported from tests/fixtures/import/scripts/950dt-v31-1p1d-layerwise/proxy.sh", "imported from tests/fixtures/import/scripts/950dt-v31-1p1d-layerwise/run_dp_template_decode.sh", "imported from tests/fixtures/import/scripts/950dt-v31-1p1d-layerwise/run_dp_template_prefill.sh"] },
        deviate("`--data-parallel-rank` on a DP 1 engine, which vLLM refuses (\"data_parallel_external_lb can only be set when data_parallel_size > 1\", vllm/config/parallel.py) (tests/fixtures/import/scripts/950dt-v31-1p1d-layerwise/run_dp_template_prefill.sh:9)", "pd-dsl passes no DP rank to a DP 1 engine, so it starts"),
    }
}
