//! `/ 2`: spread a prefill engine over two nodes, two ranks each (`3x` also reads as `3 x`).
use pd_dsl::layout;

fn main() {
    let spec = layout! {
        name: "demo/a3-spread",
        model: deepseek_v4_flash_w8a8_mtp,
        hardware: a3,
        image: "v0.21.0rc1",
        topology: <prefill 1x dp4tp4 / 2; decode 1 x dp16tp1>,
        connector: mooncake_hybrid { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-06-27" }, serve: { expert_parallel: true },
    };
    let Ok(layout) = pd_dsl::check(&spec) else {
        std::process::exit(1)
    };
    assert_eq!(layout.node_count(), 3);
    assert_eq!(layout.placement.nodes[0].dp_size_local, 2);
}
