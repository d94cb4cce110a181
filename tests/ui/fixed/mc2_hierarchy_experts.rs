//! 128 redundant experts: 384 + 128 = 512, the most hierarchy MC2 takes
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
        decode: { additional_config: { "mc2_comm_alg": "hierarchy", "eplb_config": { "dynamic_eplb": true, "num_redundant_experts": 128 } }, env: { DYNAMIC_EPLB: "true" } },
    };
}
