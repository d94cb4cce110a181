//! `max_num_batched_tokens` raised to 128 so every one of the 128 sequences can schedule a token each step
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-mixed",
        model: minimax_m2_7_w8a8_quarot,
        hardware: a3,
        image: "v0.23.0",
        topology: <mixed 1 x dp4tp4>,
        ports: { api: 8000 },
        provenance: { recorded: "2026-08-20" },
        serve: { expert_parallel: true },
        mixed: { max_num_batched_tokens: 128, max_num_seqs: 128, max_model_len: 32768 },
    };
}
