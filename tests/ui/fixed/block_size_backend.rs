//! `block_size` set to 128, the size vllm-ascend uses for a GQA model with prefix caching on
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-mixed",
        model: qwen3_235b_a22b_w8a8,
        hardware: a3,
        image: "v0.23.0",
        topology: <mixed 1 x dp4tp4>,
        ports: { api: 8000 },
        provenance: { recorded: "2026-08-20" }, serve: { expert_parallel: true },
        mixed: { block_size: 128 },
    };
}
