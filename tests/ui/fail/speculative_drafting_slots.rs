//! `dflash` with 8 tokens and 32 sequences on image v0.27.1rc1: vLLM 0.27.1 reserves
//! (8 - 1) x 32 = 224 batch slots for drafting, all of `max_num_batched_tokens` 224, and raises
//! ValueError at start (vllm/config/vllm.py:1747 `_set_max_num_scheduled_tokens`)
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-dflash",
        model: kimi_k2_6_w4a8,
        hardware: a3,
        image: "v0.27.1rc1",
        topology: <mixed 1 x dp4tp4>,
        ports: { api: 8000 },
        provenance: { recorded: "2026-12-03" },
        serve: { expert_parallel: true, trust_remote_code: true },
        mixed: {
            max_num_batched_tokens: 224,
            max_num_seqs: 32,
            max_model_len: 32768,
            speculative: { method: dflash, tokens: 8 },
        },
    };
}
