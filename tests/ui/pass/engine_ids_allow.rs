//! Engine ids overridden against the parity convention, acknowledged with `allow`.
use pd_dsl::layout;

fn main() {
    let spec = layout! {
        name: "demo/a3-ids",
        model: deepseek_v4_flash_w8a8_mtp,
        hardware: a3,
        image: "v0.21.0rc1",
        topology: <prefill 1 x dp4tp4; decode 1 x dp16tp1;>,
        connector: mooncake_hybrid { kv_port: { prefill: 36000, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        engine_ids: { prefill: [0], decode: [2] },
        provenance: { recorded: "2026-06-27" }, serve: { expert_parallel: true },
        allow(engine_id_parity, "ids kept from the cluster's existing scripts"),
        allow(kv_port_on_adxl_edge, "upstream tutorial ports preserved"),
    };
    let Ok(layout) = pd_dsl::check(&spec) else {
        std::process::exit(1)
    };
    assert_eq!(layout.placement.engines[1].engine_id, Some(2));
    assert_eq!(layout.acknowledged.len(), 2);
}
