//! The decode batch budget raised to 2048 tokens, the block vllm-ascend derives at TP4
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
        decode: { max_num_batched_tokens: 2048, max_num_seqs: 16 },
    };
}
