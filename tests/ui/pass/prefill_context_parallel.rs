//! PCP where the image starts it: DP1 x TP8 x PCP2 prefill ranks (16 NPUs, one A3 node) on
//! v0.23.0 (refused only with DP above 1; a PD engine there interleaves its KV cache by its
//! block size), and with `VLLM_USE_V2_MODEL_RUNNER=1` on v0.30.0rc2
use pd_dsl::layout;

fn main() {
    let v0_23 = layout! {
        name: "demo/a3-longseq",
        model: deepseek_r1_0528_w8a8,
        hardware: a3,
        image: "v0.23.0",
        topology: <prefill 1 x dp1tp8pcp2; decode 1 x dp2tp8;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 8080, dp_rpc: 12321 },
        proxy: { port: 1999 },
        serve: { expert_parallel: true, trust_remote_code: true },
        prefill: { flags: ["--cp-kv-cache-interleave-size" = 128] },
        provenance: { recorded: "2026-08-17" },
    };
    let layout = pd_dsl::check(&v0_23).expect("checked at compile time");
    let prefill = &layout.placement.nodes[0];
    assert_eq!(prefill.ranks[0].devices, (0..16).collect::<Vec<u32>>());
    assert_eq!(prefill.ranks[0].kv_span, Some((36100, 36115)));
    let v0_30 = layout! {
        name: "demo/a3-longseq",
        model: deepseek_r1_0528_w8a8,
        hardware: a3,
        image: "v0.30.0rc2",
        topology: <prefill 1 x dp1tp8pcp2; decode 1 x dp2tp8;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 8080, dp_rpc: 12321 },
        proxy: { port: 1999 },
        serve: { expert_parallel: true, trust_remote_code: true },
        prefill: { env: { VLLM_USE_V2_MODEL_RUNNER: "1" } },
        provenance: { recorded: "2026-08-17" },
    };
    assert!(pd_dsl::check(&v0_30).is_ok());
}
