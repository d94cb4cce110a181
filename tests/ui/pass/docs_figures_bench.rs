//! Doc comments, workload, bench, figures, provenance, verification, deviations, paths.
use pd_dsl::layout;

fn main() {
    let spec = layout! {
        /// Decode-heavy 1P1D for chat traffic:
        /// one prefill engine, one decode engine.
        ///
        /// Short prompts, long outputs.
        name: "demo/a3-documented",
        model: deepseek_v4_flash_w8a8_mtp,
        hardware: a3,
        image: "v0.21.0rc1",
        topology: <prefill 1 x dp4tp4; decode 1 x dp16tp1;>,
        connector: mooncake_hybrid { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        model_path: "/root/model",
        served_model_name: "dsv4",
        serve: { expert_parallel: true },
        provenance: {
            recorded: "2026-06-30",
            derived_from: "demo/a3-1p1d",
            sources: ["docs/source/tutorials/DeepSeek-V4-Flash.md @v0.21.0rc1"],
            refresh: ["migrated speculative method deepseek_mtp -> mtp"],
        },
        verified: before("v0.21.0rc1"),
        workload: "decode-heavy: short prompts, long outputs",
        bench: { input_len: 3500, output_len: 1500, num_prompts: 200, request_rate: 1.5, max_concurrency: 64 },
        figures: [
            { metric: "TTFT", value: "6.16 s", context: "A3, 2 nodes, 1P1D, 3.5k/1.5k, v0.21.0rc1" },
        ],
        deviate("model path `/root/model`", "ModelArts mounts the weights there"),
    };
    let Ok(layout) = pd_dsl::check(&spec) else {
        std::process::exit(1)
    };
    // Doc lines join into paragraphs; a blank doc line starts a new one.
    assert_eq!(
        spec.summary,
        ["Decode-heavy 1P1D for chat traffic: one prefill engine, one decode engine.", "Short prompts, long outputs."]
    );
    assert!(!layout.verified);
    assert_eq!(layout.model_path, "/root/model");
    assert_eq!(spec.bench.map(|b| b.request_rate.map(|r| r.value)), Some(Some("1.5".to_owned())));
}
