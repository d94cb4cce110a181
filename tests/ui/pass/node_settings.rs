//! Settings per node: the second node of a two-node decode engine runs its
//! own `gpu_memory_utilization` and env, as upstream's per-node commands
//! may; every other setting is the role's.
use pd_dsl::layout;

fn main() {
    let spec = layout! {
        name: "demo/a3-node-settings",
        model: deepseek_v4_flash_w8a8_mtp,
        hardware: a3,
        image: "v0.23.0",
        topology: <prefill 1 x dp4tp4; decode 1 x dp32tp1;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-08-17" },
        serve: { expert_parallel: true, max_model_len: 32768 },
        decode: { gpu_memory_utilization: 0.9, env: { HCCL_BUFFSIZE: 1024 } },
        nodes: { 2: { gpu_memory_utilization: 0.92, env: { HCCL_BUFFSIZE: 1100 } } },
    };
    let Ok(layout) = pd_dsl::check(&spec) else {
        std::process::exit(1)
    };
    let node = &layout.node_serve[&2];
    assert_eq!(node.gpu_memory_utilization.as_deref(), Some("0.92"));
    assert_eq!(node.max_model_len, Some(32768));
    assert!(node.expert_parallel);
    let role = &layout.serve[&pd_dsl::Role::Decode];
    assert_eq!(role.gpu_memory_utilization.as_deref(), Some("0.9"));
    assert!(!layout.node_serve.contains_key(&1));
}
