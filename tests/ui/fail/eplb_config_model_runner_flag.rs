//! the V2 model runner's `load_collection_phase` off `all` without vLLM's `--enable-eplb`
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-1p1d",
        model: deepseek_v4_flash_w8a8_mtp,
        hardware: a3,
        image: "v0.30.0rc2",
        topology: <prefill 1 x dp4tp4; decode 1 x dp16tp1;>,
        connector: mooncake_hybrid { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-06-27" }, serve: { expert_parallel: true },
        decode: { additional_config: { "eplb_config": { "load_collection_phase": "decode" } }, env: { VLLM_USE_V2_MODEL_RUNNER: "1" } },
    };
}
