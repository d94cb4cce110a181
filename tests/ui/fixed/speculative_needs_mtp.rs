//! speculation by `ngram`, since Qwen3-235B's weights carry no MTP layer
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
        mixed: { speculative: { method: ngram, tokens: 1 } },
    };
}
