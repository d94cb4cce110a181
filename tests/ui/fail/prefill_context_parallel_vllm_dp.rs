//! PCP with DP above 1 on v0.28.0rc1, V2 runner on: vLLM 0.28.0's `ParallelConfig` refuses the
//! pair ("PCP does not support data parallelism yet.", vllm/config/parallel.py:527 @0.28.0), and
//! vllm-ascend 0.28.0rc1 has no patch that takes it out (0.29.0rc1 does, for vLLM 0.29.0)
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-longseq",
        model: deepseek_r1_0528_w8a8,
        hardware: a3,
        image: "v0.28.0rc1",
        topology: <prefill 1 x dp2tp8pcp2; decode 1 x dp2tp8;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 8080, dp_rpc: 12321 },
        proxy: { port: 1999 },
        serve: { expert_parallel: true, trust_remote_code: true },
        prefill: { env: { VLLM_USE_V2_MODEL_RUNNER: "1" }, flags: ["--cp-kv-cache-interleave-size" = 128] },
        provenance: { recorded: "2026-08-17" },
    };
}
