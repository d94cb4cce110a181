//! MTP 1 (decode step 2) with a full decode graph and capture size 1 only: vLLM 0.23.0 rounds the
//! size up to 2, which does not fit under the largest size 1, and refuses to start
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
        provenance: { recorded: "2026-12-04" },
        serve: { expert_parallel: true, max_model_len: 32768 },
        decode: { graph: full_decode_only { capture_sizes: [1] }, speculative: { method: mtp, tokens: 1 } },
    };
}
