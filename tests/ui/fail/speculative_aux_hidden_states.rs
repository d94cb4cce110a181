//! extract_hidden_states on DeepSeek-V4-Flash (text model type `deepseek_v4`) on image v0.20.2rc1:
//! vLLM 0.20.2 runs the methods that read the target's auxiliary hidden states only on the model
//! types it lists (`deepseek_v3`, `kimi_k2`, `qwen`, ...) and refuses this one at start
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-1p1d",
        model: deepseek_v4_flash_w8a8_mtp,
        hardware: a3,
        image: "v0.20.2rc1",
        topology: <prefill 1 x dp2tp8; decode 1 x dp4tp4;>,
        connector: mooncake_hybrid { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-12-04" },
        serve: { expert_parallel: true, max_model_len: 32768 },
        decode: { speculative: { method: extract_hidden_states, tokens: 1 } },
    };
}
