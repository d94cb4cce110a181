//! Whole-node TP: prefill TP16 fills an A3 node; decode TP must divide 16.
use pd_dsl::layout;

fn main() {
    let spec = layout! {
        name: "demo/a3-tp16",
        model: deepseek_v4_flash_w8a8_mtp,
        hardware: a3,
        image: "v0.21.0rc1",
        topology: <prefill 1 x dp2tp16; decode 1 x dp8tp2;>,
        connector: mooncake_hybrid { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-06-27" }, serve: { expert_parallel: true },
    };
    let Ok(layout) = pd_dsl::check(&spec) else {
        std::process::exit(1)
    };
    assert_eq!(layout.node_count(), 3);
    assert_eq!(layout.role_shape(pd_dsl::Role::Prefill), Some((2, 16)));
}
