//! The V1 connector with one kv port per prefill engine (2P1D, DeepSeek-V3.1).
use pd_dsl::layout;

fn main() {
    let spec = layout! {
        name: "demo/a3-2p1d-v1",
        model: deepseek_v3_1_terminus_w4a8_mtp_quarot,
        hardware: a3,
        image: "v0.21.0rc1",
        topology: <prefill 2 x dp4tp4; decode 1 x dp16tp1;>,
        connector: mooncake_v1 { kv_port: { prefill: [36100, 36200], decode: 36300 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999, script: load_balance },
        provenance: { recorded: "2026-06-27" }, serve: { expert_parallel: true, max_model_len: 32768 },
    };
    let Ok(layout) = pd_dsl::check(&spec) else {
        std::process::exit(1)
    };
    assert_eq!(layout.node_count(), 3);
    let kv: Vec<_> = layout.placement.engines.iter().map(|e| e.kv_port).collect();
    assert_eq!(kv, [Some(36100), Some(36200), Some(36300)]);
}
