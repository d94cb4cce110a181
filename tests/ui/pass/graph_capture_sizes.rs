//! cudagraph capture sizes written with the graph mode; with two speculative
//! tokens each is a multiple of 3.
use pd_dsl::layout;

fn main() {
    let spec = layout! {
        name: "demo/a3-capture-sizes",
        model: deepseek_v4_flash_w8a8_mtp,
        hardware: a3,
        image: "v0.21.0rc1",
        topology: <prefill 1 x dp4tp4; decode 1 x dp16tp1;>,
        connector: mooncake_hybrid { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        prefill: { graph: eager, speculative: { method: mtp, tokens: 1 } },
        decode: {
            max_num_batched_tokens: 96,
            max_num_seqs: 32,
            graph: full_decode_only { capture_sizes: [3, 6, 9, 12] },
            speculative: { method: mtp, tokens: 2 },
        },
        provenance: { recorded: "2026-06-27" }, serve: { expert_parallel: true },
    };
    let Ok(layout) = pd_dsl::check(&spec) else {
        std::process::exit(1)
    };
    let decode = &layout.serve[&pd_dsl::Role::Decode];
    assert_eq!(decode.capture_sizes, [3, 6, 9, 12]);
    let options = decode.options(layout.model, &layout.served_model_name);
    let compilation = options
        .iter()
        .find(|(k, _)| k == "--compilation-config")
        .and_then(|(_, v)| v.clone());
    assert_eq!(
        compilation.as_deref(),
        Some(r#"{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_sizes":[3,6,9,12]}"#)
    );
}
