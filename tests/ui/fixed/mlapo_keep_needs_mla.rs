//! `mlapo_keep_prefill_weights` dropped: Qwen3 is a GQA model, and only MLA models take it
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-mixed",
        model: qwen3_235b_a22b_w8a8,
        hardware: a3,
        image: "v0.30.0rc2",
        topology: <mixed 1 x dp4tp4>,
        ports: { api: 8000 },
        provenance: { recorded: "2026-12-02" }, serve: { expert_parallel: true },
    };
}
