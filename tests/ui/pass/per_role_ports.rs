//! Per-role API and DP RPC ports, as upstream's e2e configs give prefill and
//! decode nodes their own `port_start` and `dp_rpc_port`.
use pd_dsl::layout;

fn main() {
    let spec = layout! {
        name: "demo/a3-per-role-ports",
        model: deepseek_v4_flash_w8a8_mtp,
        hardware: a3,
        image: "v0.21.0rc1",
        topology: <prefill 2 x dp4tp4; decode 1 x dp16tp1;>,
        connector: mooncake_hybrid { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321, decode: { api: 9000, dp_rpc: 13000 } },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-06-27" }, serve: { expert_parallel: true },
    };
    let Ok(layout) = pd_dsl::check(&spec) else {
        std::process::exit(1)
    };
    let engines: Vec<(u32, Option<u32>)> = layout
        .placement
        .engines
        .iter()
        .map(|e| (e.api_port, e.dp_rpc_port))
        .collect();
    assert_eq!(
        engines,
        [(7100, Some(12321)), (7100, Some(12321)), (9000, Some(13000))]
    );
    // The proxy lists and the decode node's sockets use the decode ports.
    let decode: Vec<u32> = layout.placement.proxy.decode.iter().map(|e| e.port).collect();
    assert_eq!(decode, (9000..9016).collect::<Vec<u32>>());
    let rpc: Vec<u32> = layout
        .node_sockets(2)
        .iter()
        .filter(|s| matches!(s.kind, pd_dsl::SocketKind::DpRpc))
        .map(|s| s.first)
        .collect();
    assert_eq!(rpc, [13000]);
    assert!(!layout.uniform_dp_rpc_port());
}
