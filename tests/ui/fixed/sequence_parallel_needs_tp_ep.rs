//! FlashComm1 on the prefill engine (TP 8 with expert parallelism) instead of the TP1 decode engine
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-1p1d",
        model: qwen3_235b_a22b_w8a8,
        hardware: a3,
        image: "v0.23.0",
        topology: <prefill 1 x dp2tp8; decode 1 x dp16tp1;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-12-05" },
        serve: { expert_parallel: true, max_model_len: 32768 },
        prefill: { env: { VLLM_ASCEND_ENABLE_FLASHCOMM1: "1" } },
    };
}
