//! the oproj TP split dropped from decode: on v0.30 it needs a connector pd-dsl does not derive
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-1p1d",
        model: deepseek_v4_flash_w8a8_mtp,
        hardware: a3,
        image: "v0.30.0rc2",
        topology: <prefill 1 x dp2tp8; decode 1 x dp16tp1;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-12-03" },
        serve: { expert_parallel: true, max_model_len: 32768 },
    };
}
