//! MTP 2 (decode step 3) with a full decode graph, no capture sizes and `max_num_seqs` 1: the
//! image's defaults are vllm-ascend's cap 1 x 3 = 3 and vLLM's grid below it, 1 and 2, which do not
//! hold a step, and vLLM 0.23.0 refuses to start
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-1p1d",
        model: deepseek_v3_1_w8a8_mtp_quarot,
        hardware: a3,
        image: "v0.23.0",
        topology: <prefill 1 x dp2tp8; decode 1 x dp4tp4;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-12-05" },
        serve: { expert_parallel: true, max_model_len: 32768 },
        decode: { graph: full_decode_only, max_num_seqs: 1, speculative: { method: mtp, tokens: 2 } },
    };
}
