//! hierarchy MC2 on Kimi-K2.5's 384 routed experts with 129 redundant dynamic-EPLB experts: 513,
//! above the 512 experts vllm-ascend v0.30.0rc2 lets hierarchy MC2 run
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-1p1d",
        model: kimi_k2_5_w4a8,
        hardware: a3,
        image: "v0.30.0rc2",
        topology: <prefill 1 x dp2tp8; decode 1 x dp4tp4;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-12-04" },
        serve: { expert_parallel: true, max_model_len: 32768 },
        decode: { additional_config: { "mc2_comm_alg": "hierarchy", "eplb_config": { "dynamic_eplb": true, "num_redundant_experts": 129 } }, env: { DYNAMIC_EPLB: "true" } },
    };
}
