//! `dflash` with 8 tokens on image v0.30.0rc2: from vLLM 0.28.0 the drafting reserve is per
//! request, `num_speculative_tokens` slots for DFlash, so `max_num_batched_tokens` 8 leaves none to
//! schedule and vLLM raises ValueError at start (vllm/config/vllm.py:2144)
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-dflash",
        model: kimi_k2_6_w4a8,
        hardware: a3,
        image: "v0.30.0rc2",
        topology: <mixed 1 x dp4tp4>,
        ports: { api: 8000 },
        provenance: { recorded: "2026-12-03" },
        serve: { expert_parallel: true, trust_remote_code: true },
        mixed: {
            max_num_batched_tokens: 8,
            max_num_seqs: 4,
            max_model_len: 32768,
            speculative: { method: dflash, tokens: 8 },
        },
    };
}
