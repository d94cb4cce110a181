//! `max_num_batched_tokens` 512 leaves 288 slots after the 224 that vLLM 0.27.1 reserves for `dflash` with 8 tokens and 32 sequences
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
            max_num_batched_tokens: 512,
            max_num_seqs: 32,
            max_model_len: 32768,
            speculative: { method: dflash, tokens: 8 },
        },
    };
}
