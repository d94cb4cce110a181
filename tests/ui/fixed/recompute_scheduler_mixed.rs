//! the recompute scheduler dropped: a mixed layout has no kv_consumer for it
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-mixed",
        model: deepseek_v4_flash_w8a8_mtp,
        hardware: a3,
        image: "v0.21.0rc1",
        topology: <mixed 1 x dp4tp4;>,
        ports: { api: 7100 },
        provenance: { recorded: "2026-06-27" }, serve: { expert_parallel: true },
    };
}
