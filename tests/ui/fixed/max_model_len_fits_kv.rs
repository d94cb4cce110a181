//! `max_model_len` lowered to 32768, which the KV cache left at 80 % utilization holds
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-mixed",
        model: deepseek_v3_1_w8a8_mtp_quarot,
        hardware: a3,
        image: "v0.23.0",
        topology: <mixed 1 x dp4tp4>,
        ports: { api: 8000 },
        provenance: { recorded: "2026-08-20" },
        serve: { expert_parallel: true },
        mixed: { max_model_len: 32768, gpu_memory_utilization: 0.8 },
    };
}
