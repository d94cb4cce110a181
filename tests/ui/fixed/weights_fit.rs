//! MiniMax-M2.7 spread over four DP ranks with expert parallelism, so each rank holds a sixteenth of the experts
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-mixed",
        model: minimax_m2_7_w8a8_quarot,
        hardware: a3,
        image: "v0.23.0",
        topology: <mixed 1 x dp4tp4>,
        ports: { api: 8000 },
        provenance: { recorded: "2026-08-20" }, serve: { expert_parallel: true },
        mixed: { gpu_memory_utilization: 0.5 },
    };
}
