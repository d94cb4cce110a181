//! Qwen3.5 with prefix caching on image v0.23.0 and a decode batch budget of 1024 tokens at TP4:
//! 'align' mode makes vllm-ascend raise the attention block to 2048 tokens to carry a request's
//! linear-attention state, and vLLM 0.23.0 asserts the block within the batch and refuses to start
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-1p1d",
        model: qwen3_5_397b_a17b_w8a8_mtp,
        hardware: a3,
        image: "v0.23.0",
        topology: <prefill 1 x dp2tp8; decode 1 x dp4tp4;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-12-06" },
        serve: { expert_parallel: true, max_model_len: 32768, prefix_caching: true },
        decode: { max_num_batched_tokens: 1024, max_num_seqs: 16 },
    };
}
