//! A mixed engine spanning two A2 nodes with native DP (`--headless` on node 1).
use pd_dsl::layout;

fn main() {
    let spec = layout! {
        name: "demo/a2-mixed-2n",
        model: deepseek_v3_1_w8a8_mtp_quarot,
        hardware: a2,
        image: "v0.21.0rc1",
        topology: <mixed 1 x dp4tp4;>,
        ports: { api: 8000, dp_rpc: 13389 },
        provenance: { recorded: "2026-06-27" }, serve: { expert_parallel: true, max_model_len: 32768 },
    };
    let Ok(layout) = pd_dsl::check(&spec) else {
        std::process::exit(1)
    };
    assert_eq!(layout.node_count(), 2);
    assert!(layout.placement.nodes[1].headless);
}
