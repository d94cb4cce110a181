//! chunked prefill off, `max_model_len` not set, and a batch smaller than the length vLLM derives for GLM-5.1 w8a8c8 (202752; a build the budget does not size)
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-mixed",
        model: glm_5_1_w8a8c8,
        hardware: a3,
        image: "v0.23.0",
        topology: <mixed 1 x dp4tp4>,
        ports: { api: 8000 },
        provenance: { recorded: "2026-08-20" },
        serve: { expert_parallel: true },
        mixed: { max_num_batched_tokens: 131072, flags: ["--no-enable-chunked-prefill"] },
    };
}
