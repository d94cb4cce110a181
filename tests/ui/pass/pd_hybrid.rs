//! A PD layout with the Hybrid connector: 1P1D on A3, per-role serve settings.
use pd_dsl::layout;

fn main() {
    let spec = layout! {
        name: "demo/a3-1p1d",
        model: deepseek_v4_flash_w8a8_mtp,
        hardware: a3,
        image: "v0.21.0rc1",
        topology: <prefill 1 x dp4tp4; decode 1 x dp16tp1;>,
        connector: mooncake_hybrid { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        serve: {
            expert_parallel: true,
            trust_remote_code: true,
            speculative: { method: mtp, tokens: 1, enforce_eager: true },
        },
        prefill: { max_num_batched_tokens: 8192, max_num_seqs: 16, graph: eager },
        decode: { max_num_batched_tokens: 120, max_num_seqs: 60, graph: full_decode_only, gpu_memory_utilization: 0.92 },
        provenance: { recorded: "2026-06-27" },
    };
    let Ok(layout) = pd_dsl::check(&spec) else {
        std::process::exit(1)
    };
    assert_eq!(layout.node_count(), 2);
    assert_eq!(layout.placement.proxy.prefill.len(), 4);
    assert_eq!(layout.placement.proxy.decode.len(), 16);
}
