//! A memcache KV pool next to the Hybrid connector: every engine runs a
//! MultiConnector of its PD connector (its own kv_port and engine_id) and
//! `AscendStoreConnector` (the pool's backend, the shared extras, then its
//! role's), and node 0 holds the pool's two service ports.
use pd_dsl::layout;
use pd_dsl::SocketKind;

fn main() {
    let spec = layout! {
        name: "demo/a3-1p1d-pool",
        model: deepseek_v4_flash_w8a8_mtp,
        hardware: a3,
        image: "v0.30.0rc2",
        topology: <prefill 1 x dp4tp4; decode 1 x dp16tp1;>,
        connector: mooncake_hybrid { kv_port: { prefill: 36100, decode: 36200 },
            pool: memcache {
                ports: { meta_service_port: 5000, config_store_port: 6000 },
                config: {
                    meta: { "ock.mmc.meta_service.metrics_url": "http://${MASTER_IP}:8002" },
                    local: { "ock.mmc.local_service.protocol": "device_sdma", "ock.mmc.local_service.dram.size": "1GB" },
                },
                extra: { "lookup_rpc_port": "0" },
                prefill: { "use_layerwise": true },
                decode: { "use_layerwise": false },
            } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-12-02" }, serve: { expert_parallel: true },
    };
    let Ok(layout) = pd_dsl::check(&spec) else {
        std::process::exit(1)
    };
    let prefill = &layout.placement.engines[0];
    let decode = &layout.placement.engines[1];
    let p = layout.kv_transfer_config(prefill).expect("PD");
    assert_eq!(p["kv_connector"], "MultiConnector");
    assert_eq!(p["kv_role"], "kv_producer");
    let children = p["kv_connector_extra_config"]["connectors"].as_array().expect("chain");
    assert_eq!(children.len(), 2);
    assert_eq!(children[0]["kv_connector"], "MooncakeHybridConnector");
    assert_eq!(children[0]["kv_port"], "36100");
    assert_eq!(children[0]["engine_id"], prefill.engine_id.expect("id").to_string());
    assert_eq!(children[1]["kv_connector"], "AscendStoreConnector");
    assert_eq!(children[1]["kv_role"], "kv_producer");
    let store = &children[1]["kv_connector_extra_config"];
    assert_eq!(store["backend"], "memcache");
    assert_eq!(store["lookup_rpc_port"], "0");
    assert_eq!(store["use_layerwise"], true);
    let d = layout.kv_transfer_config(decode).expect("PD");
    assert_eq!(d["kv_role"], "kv_consumer");
    assert_eq!(d["kv_connector_extra_config"]["connectors"][1]["kv_connector_extra_config"]["use_layerwise"], false);
    assert_eq!(d["kv_connector_extra_config"]["connectors"][0]["kv_port"], "36200");
    let pool: Vec<u32> = layout
        .node_sockets(0)
        .into_iter()
        .filter(|s| matches!(s.kind, SocketKind::Pool { .. }))
        .map(|s| s.first)
        .collect();
    assert_eq!(pool, [5000, 6000]);
    assert!(layout.node_sockets(1).iter().all(|s| !matches!(s.kind, SocketKind::Pool { .. })));
}
