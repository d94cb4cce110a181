//! `--decode-context-parallel-size` 4, a divisor of the decode engine's TP 8, as vLLM requires
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-dcp",
        model: deepseek_r1_0528_w8a8,
        hardware: a3,
        image: "v0.23.0",
        topology: <prefill 1 x dp2tp8; decode 1 x dp2tp8;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 8080, dp_rpc: 12321 },
        proxy: { port: 1999 },
        serve: { expert_parallel: true, trust_remote_code: true },
        decode: { flags: ["--decode-context-parallel-size" = 4, "--cp-kv-cache-interleave-size" = 128] },
        provenance: { recorded: "2026-08-17" },
    };
}
