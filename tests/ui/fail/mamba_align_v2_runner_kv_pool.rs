//! Qwen3.5 with a KV pool and env `VLLM_USE_V2_MODEL_RUNNER=1` on the decode engine on image
//! v0.23.0, prefix caching off: the pool's AscendStoreConnector makes vllm-ascend put the Mamba
//! cache in 'align' mode anyway, where vLLM 0.23.0 asserts the V2 runner off and refuses to start
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-1p1d-pool",
        model: qwen3_5_397b_a17b_w8a8_mtp,
        hardware: a3,
        image: "v0.23.0",
        topology: <prefill 1 x dp2tp8; decode 1 x dp4tp4;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 },
            pool: memcache { ports: { meta_service_port: 5000, config_store_port: 6000 }, config: { meta: {}, local: {} } } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        provenance: { recorded: "2026-12-06" },
        serve: { expert_parallel: true, max_model_len: 32768 },
        decode: { max_num_batched_tokens: 4096, max_num_seqs: 16, env: { VLLM_USE_V2_MODEL_RUNNER: "1" } },
    };
}
