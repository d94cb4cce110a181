//! PCP on v0.30.0rc2 without `VLLM_USE_V2_MODEL_RUNNER=1`: vllm-ascend refuses PCP on the V1
//! model runner (vllm_ascend/platform.py:1643 @0.30.0rc2), and on Ascend only that env selects
//! the V2 runner (vllm_ascend/patch/platform/patch_use_v2_model_runner.py); the same layout on
//! v0.26.0rc1 with the env set is refused too: vLLM 0.26.0's V2 runner refuses PCP
use pd_dsl::layout;

fn main() {
    let _newest = layout! {
        name: "demo/a3-longseq",
        model: deepseek_r1_0528_w8a8,
        hardware: a3,
        image: "v0.30.0rc2",
        topology: <prefill 1 x dp1tp8pcp2; decode 1 x dp2tp8;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 8080, dp_rpc: 12321 },
        proxy: { port: 1999 },
        serve: { expert_parallel: true, trust_remote_code: true },
        prefill: { flags: ["--cp-kv-cache-interleave-size" = 128] },
        provenance: { recorded: "2026-08-17" },
    };
    let _older = layout! {
        name: "demo/a3-longseq",
        model: deepseek_r1_0528_w8a8,
        hardware: a3,
        image: "v0.26.0rc1",
        topology: <prefill 1 x dp1tp8pcp2; decode 1 x dp2tp8;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 8080, dp_rpc: 12321 },
        proxy: { port: 1999 },
        serve: { expert_parallel: true, trust_remote_code: true },
        prefill: { env: { VLLM_USE_V2_MODEL_RUNNER: "1" }, flags: ["--cp-kv-cache-interleave-size" = 128] },
        provenance: { recorded: "2026-08-17" },
    };
}
