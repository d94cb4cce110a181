//! the prefill engine at DP2 x TP8 instead of DP1 x TP16: Engram takes TP 1, 2, 4 or 8
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-1p1d",
        model: deepseek_v4_1_flash_w8a8,
        hardware: a3,
        image: "v0.30.0rc2",
        topology: <prefill 1 x dp2tp8; decode 1 x dp4tp4;>,
        connector: mooncake_hybrid { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-12-03" }, serve: { expert_parallel: true, max_model_len: 32768 },
    };
}
