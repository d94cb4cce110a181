//! Engines spanning nodes on 950DT: each prefill engine DP4 x TP4 takes two nodes (v0.23.0: the first release whose image workflow pushes a 950DT image).
use pd_dsl::layout;

fn main() {
    let spec = layout! {
        name: "demo/950dt-2p1d",
        model: deepseek_v3_1_w4a4c8_mxfp4,
        hardware: ascend_950dt,
        image: "v0.23.0",
        topology: <prefill 2 x dp4tp4; decode 1 x dp8tp1;>,
        connector: mooncake_v1 { kv_port: { prefill: 30000, decode: 30100 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-06-27" }, serve: { expert_parallel: true },
    };
    let Ok(layout) = pd_dsl::check(&spec) else {
        std::process::exit(1)
    };
    assert_eq!(layout.node_count(), 5);
    assert_eq!(layout.placement.engines[0].nodes, [0, 1]);
}
