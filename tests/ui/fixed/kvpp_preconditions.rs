//! KVPP dropped from the PD prefill engine (no layout renders MooncakeConnectorV2), and the mixed engine given piecewise graphs without eagle3
use pd_dsl::layout;

fn main() {
    let _pd = layout! {
        name: "demo/a3-1p1d",
        model: kimi_k2_5_w4a8,
        hardware: a3,
        image: "v0.30.0rc2",
        topology: <prefill 1 x dp2tp8; decode 1 x dp4tp4;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-12-02" }, serve: { expert_parallel: true },
        prefill: { graph: eager },
    };
    let _mixed = layout! {
        name: "demo/a3-mixed",
        model: kimi_k2_5_w4a8,
        hardware: a3,
        image: "v0.30.0rc2",
        topology: <mixed 1 x dp2tp8>,
        ports: { api: 8000 },
        provenance: { recorded: "2026-12-02" }, serve: { expert_parallel: true },
        mixed: { graph: piecewise, additional_config: { "enable_kvpp": true } },
    };
}
