//! A decode engine with TP > 1 spanning nodes: DP8 x TP4 = 32 NPUs, two A3 nodes.
use pd_dsl::layout;

fn main() {
    let spec = layout! {
        name: "demo/a3-1p1d-dtp4",
        model: deepseek_v4_flash_w8a8_mtp,
        hardware: a3,
        image: "v0.21.0rc1",
        topology: <prefill 1 x dp4tp4; decode 1 x dp8tp4;>,
        connector: mooncake_hybrid { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-06-27" }, serve: { expert_parallel: true },
    };
    let Ok(layout) = pd_dsl::check(&spec) else {
        std::process::exit(1)
    };
    assert_eq!(layout.node_count(), 3);
    assert_eq!(layout.placement.nodes[2].dp_rank_start, 4);
}
