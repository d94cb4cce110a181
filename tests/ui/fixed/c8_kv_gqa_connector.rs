//! the C8 KV cache moved by `mooncake_layerwise`, with the layerwise proxy it pairs with
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-1p1d",
        model: minimax_m2_7_w8a8c8_quarot,
        hardware: a3,
        image: "v0.23.0",
        topology: <prefill 1 x dp2tp8; decode 1 x dp4tp4;>,
        connector: mooncake_layerwise { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999, script: layerwise },
        provenance: { recorded: "2026-08-20" }, serve: { expert_parallel: true },
    };
}
