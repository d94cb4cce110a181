//! the hand-written `backend` dropped from the pool's prefill entries: it is the pool's backend
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-1p1d-pool",
        model: deepseek_v4_flash_w8a8_mtp,
        hardware: a3,
        image: "v0.30.0rc2",
        topology: <prefill 1 x dp4tp4; decode 1 x dp16tp1;>,
        connector: mooncake_hybrid { kv_port: { prefill: 36100, decode: 36200 },
            pool: memcache { ports: { meta_service_port: 5000, config_store_port: 6000 }, config: { meta: {}, local: {} } } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-12-02" }, serve: { expert_parallel: true },
    };
}
