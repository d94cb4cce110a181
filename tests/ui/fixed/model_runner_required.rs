//! env `VLLM_USE_V2_MODEL_RUNNER=1` on every engine: the V2 model runner, which vllm-ascend requires for DeepSeek-V4.1 on A5
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/950dt-1p1d",
        model: deepseek_v4_1_flash_w8a8,
        hardware: ascend_950dt,
        image: "v0.30.0rc2",
        topology: <prefill 1 x dp2tp4; decode 1 x dp4tp2;>,
        connector: mooncake_hybrid { kv_port: { prefill: 30000, decode: 30100 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-12-03" }, serve: { expert_parallel: true, max_model_len: 32768, env: { VLLM_USE_V2_MODEL_RUNNER: "1" } },
    };
}
