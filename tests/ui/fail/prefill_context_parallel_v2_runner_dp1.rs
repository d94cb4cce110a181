//! PCP at DP1 on v0.23.0 with `VLLM_USE_V2_MODEL_RUNNER=1`: vllm-ascend 0.23.0 runs PCP on the V1
//! model runner, but vLLM 0.23.0's V2 model runner refuses "prefill context parallelism" at start
//! (vllm/config/vllm.py `_get_v2_model_runner_unsupported_features`, raised by
//! `_validate_v2_model_runner`)
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-longseq",
        model: deepseek_r1_0528_w8a8,
        hardware: a3,
        image: "v0.23.0",
        topology: <prefill 1 x dp1tp8pcp2; decode 1 x dp2tp8;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 8080, dp_rpc: 12321 },
        proxy: { port: 1999 },
        serve: { expert_parallel: true, trust_remote_code: true },
        prefill: { env: { VLLM_USE_V2_MODEL_RUNNER: "1" }, flags: ["--cp-kv-cache-interleave-size" = 128] },
        provenance: { recorded: "2026-12-04" },
    };
}
