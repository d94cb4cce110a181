//! `max_model_len` past GLM-5.1's 202752 positions, a model the budget does not size, without `VLLM_ALLOW_LONG_MAX_MODEL_LEN`
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-mixed",
        model: glm_5_1_w8a8,
        hardware: a3,
        image: "v0.23.0",
        topology: <mixed 1 x dp4tp4>,
        ports: { api: 8000 },
        provenance: { recorded: "2026-08-20" },
        serve: { expert_parallel: true, max_model_len: 262144 },
    };
}
