//! `eplb_heat_collection_stage` dropped: v0.22.1rc1's `EplbConfig` does not know it yet
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-1p1d",
        model: deepseek_r1_0528_w8a8,
        hardware: a3,
        image: "v0.22.1rc1",
        topology: <prefill 1 x dp2tp8; decode 1 x dp4tp4;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-08-20" }, serve: { expert_parallel: true, max_model_len: 32768 },
        decode: { env: { DYNAMIC_EPLB: "true" }, additional_config: { "eplb_config": { "dynamic_eplb": true } } },
    };
}
