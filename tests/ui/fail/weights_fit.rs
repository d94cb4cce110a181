//! one DP rank at TP4: every rank of MiniMax-M2.7 w8a8 holds a quarter of all routed experts
//! (vLLM shards them over the DP group's dp x tp ranks, here four), more than half of a 64 GB NPU
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-mixed",
        model: minimax_m2_7_w8a8_quarot,
        hardware: a3,
        image: "v0.23.0",
        topology: <mixed 1 x dp1tp4>,
        ports: { api: 8000 },
        provenance: { recorded: "2026-08-20" },
        mixed: { gpu_memory_utilization: 0.5 },
    };
}
