//! A mixed (no PD) engine on one node: no connector, no proxy, no DP RPC port.
use pd_dsl::layout;

fn main() {
    let spec = layout! {
        name: "demo/a3-mixed",
        model: deepseek_v4_flash_w8a8_mtp,
        hardware: a3,
        image: "v0.21.0rc1",
        topology: <mixed 1 x dp4tp4>,
        ports: { api: 8000 },
        mixed: { max_model_len: 32768, additional_config: { "enable_balance_scheduling": true } },
        provenance: { recorded: "2026-06-27" }, serve: { expert_parallel: true },
    };
    let Ok(layout) = pd_dsl::check(&spec) else {
        std::process::exit(1)
    };
    assert!(!layout.is_pd());
    assert_eq!(layout.node_count(), 1);
}
