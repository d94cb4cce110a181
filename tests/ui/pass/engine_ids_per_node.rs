//! One engine id per node of a multi-node engine (upstream e2e configs give
//! each node of an engine its own), the others derived. Ids given per node
//! are not held to the catalog's parity convention (decode `[2, 3]`).
use pd_dsl::layout;

fn main() {
    let spec = layout! {
        name: "demo/a3-ids-per-node",
        model: deepseek_v4_flash_w8a8_mtp,
        hardware: a3,
        image: "v0.23.0",
        topology: <prefill 1 x dp4tp4; decode 1 x dp32tp1;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        engine_ids: { prefill: [0], decode: [[2, 3]] },
        provenance: { recorded: "2026-08-17" },
    };
    let Ok(layout) = pd_dsl::check(&spec) else {
        std::process::exit(1)
    };
    let ids: Vec<Option<u64>> = layout.placement.nodes.iter().map(|n| n.engine_id).collect();
    assert_eq!(ids, [Some(0), Some(2), Some(3)]);
    assert_eq!(layout.placement.engines[1].engine_id, Some(2));
    assert!(layout.acknowledged.is_empty());
}
