//! Settings upstream's own configs use that the image does act on: MLAPO on
//! the prefill engine of a DSA model (the SFA backend takes it on every role),
//! the split sparse C8 keys where the release reads them, DSA context
//! parallel without sequence parallelism once the check is gone (v0.27.1rc1),
//! and env variables read by torch_npu (`ACL_OP_INIT_MODE`) or Mooncake
//! (`ASCEND_BUFFER_POOL`) rather than by vllm-ascend.
use pd_dsl::layout;

fn main() {
    let mlapo = layout! {
        name: "demo/a3-1p1d-dsa-mlapo",
        model: deepseek_v3_2_w8a8,
        hardware: a3,
        image: "v0.23.0",
        topology: <prefill 1 x dp2tp8; decode 1 x dp4tp4;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-08-20" },
        serve: { max_model_len: 65536, env: { ACL_OP_INIT_MODE: 1, ASCEND_BUFFER_POOL: "4:8" } },
        prefill: { additional_config: { "enable_mlapo": true } },
    };
    let c8 = layout! {
        name: "demo/a3-1p1d-glm-c8",
        model: glm_5_2_w8a8c8,
        hardware: a3,
        image: "v0.23.0rc1",
        topology: <prefill 1 x dp2tp8; decode 1 x dp4tp4;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-08-20" },
        serve: { additional_config: { "enable_sparse_sfa_c8": true, "enable_sparse_li_c8": true } },
    };
    let dsa_cp = layout! {
        name: "demo/a3-1p1d-dsa-cp",
        model: deepseek_v3_2_w8a8,
        hardware: a3,
        image: "v0.27.1rc1",
        topology: <prefill 1 x dp2tp8; decode 1 x dp4tp4;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-10-01" },
        serve: { max_model_len: 65536, expert_parallel: true },
        prefill: { additional_config: { "enable_dsa_cp": true } },
    };
    for spec in [&mlapo, &c8, &dsa_cp] {
        if pd_dsl::check(spec).is_err() {
            std::process::exit(1)
        }
    }
}
