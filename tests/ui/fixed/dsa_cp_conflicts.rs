//! the V2 model runner env dropped so DSA context parallelism can run on the V1 runner
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-1p1d",
        model: deepseek_v3_2_w8a8,
        hardware: a3,
        image: "v0.30.0rc2",
        topology: <prefill 1 x dp2tp8; decode 1 x dp4tp4;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-12-01" }, serve: { expert_parallel: true, max_model_len: 32768 },
        prefill: { additional_config: { "enable_dsa_cp": true } },
    };
}
