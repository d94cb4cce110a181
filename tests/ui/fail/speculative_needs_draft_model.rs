//! mlp_speculator (and custom_class) run a draft model vLLM refuses to go
//! without, and a layout renders `model` only for the table's drafts
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-mixed",
        model: kimi_k2_5_w4a8,
        hardware: a3,
        image: "v0.30.0rc2",
        topology: <mixed 1 x dp4tp4>,
        ports: { api: 8000 },
        provenance: { recorded: "2026-12-02" }, serve: { expert_parallel: true },
        mixed: { speculative: { method: mlp_speculator, tokens: 3 } },
    };
}
