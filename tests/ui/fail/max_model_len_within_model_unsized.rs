//! `max_model_len` past the 202752 positions of GLM-5.1 w8a8c8, a build the budget does not size, without `VLLM_ALLOW_LONG_MAX_MODEL_LEN`
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
        serve: { expert_parallel: true, max_model_len: 262144 },
    };
}
