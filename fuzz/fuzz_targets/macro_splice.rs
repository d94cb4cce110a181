//! Structure-aware: layouts spliced from the fields of valid ones, with
//! values swapped for edge cases (huge and negative numbers, hostile strings,
//! near-miss keywords, broken topologies). Reaches lowering and every rule
//! far more often than raw bytes do.
#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;

/// `key: value` fields of valid layouts (PD, mixed, every grammar feature).
const FIELDS: &[&str] = &[
    "/// A demo layout.",
    r#"name: "demo/a3-1p1d""#,
    "model: deepseek_v4_flash_w8a8_mtp",
    "model: deepseek_v3_1_w8a8_mtp_quarot",
    "hardware: a3",
    "hardware: a2",
    "hardware: { prefill: a3, decode: a3 }",
    r#"image: "v0.21.0rc1""#,
    "topology: <prefill 1 x dp4tp4; decode 1 x dp16tp1;>",
    "topology: <prefill 2 x dp2tp8; decode 1 x dp32tp1;>",
    "topology: <mixed 1 x dp4tp4;>",
    "topology: <mixed 1 x dp8tp4 / 4;>",
    "connector: mooncake_hybrid { kv_port: { prefill: 36100, decode: 36200 } }",
    "connector: mooncake_v1 { kv_port: { prefill: [30000, 30100], decode: 30200 } }",
    "connector: mooncake_layerwise { kv_port: { prefill: 36100, decode: 36200 } }",
    "ports: { api: 7100, dp_rpc: 12321 }",
    "ports: { api: 7100 }",
    "proxy: { port: 1999 }",
    "proxy: { port: 1999, script: layerwise }",
    "engine_ids: { prefill: [0], decode: [1] }",
    r#"model_path: "/root/model""#,
    r#"served_model_name: "dsv4""#,
    "serve: { expert_parallel: true, speculative: { method: mtp, tokens: 1, enforce_eager: true } }",
    r#"serve: { additional_config: { "enable_cpu_binding": true, "eplb_config": { "x": [1, -2, 0.9, null] } }, flags: ["--tokenizer-mode" = "slow"], env: { HCCL_BUFFSIZE: 1024, LD_LIBRARY_PATH: prepend("/opt/lib") } }"#,
    "prefill: { max_num_batched_tokens: 8192, max_num_seqs: 16, graph: eager, gpu_memory_utilization: 0.92 }",
    "decode: { max_num_batched_tokens: 120, max_num_seqs: 60, graph: full_decode_only }",
    "mixed: { max_num_seqs: 16, graph: full }",
    r#"provenance: { recorded: "2026-06-27", derived_from: "demo/a3-2p1d", sources: ["x.md @v1"] }"#,
    r#"verified: before("v0.21.0rc1")"#,
    r#"verified: on("v0.21.0rc1")"#,
    "verified: never",
    r#"allow(kv_port_in_adxl_range, "upstream ports preserved")"#,
    r#"deviate("weights at /root/model", "site path")"#,
    r#"workload: "chat""#,
    "bench: { input_len: 3500, output_len: 1500, num_prompts: 200, request_rate: inf }",
    r#"figures: [{ metric: "TTFT", value: "6.16 s", context: "A3, v0.21.0rc1" }]"#,
];

/// Values spliced in place of a field's value (or any token).
const VALUES: &[&str] = &[
    "0",
    "1",
    "-1",
    "65535",
    "65536",
    "4294967296",
    "18446744073709551615",
    "99999999999999999999999999",
    "0u8",
    "1e400",
    "-0.0",
    "0.92f32",
    "true",
    "null",
    "inf",
    r#""""#,
    r#""$(touch /tmp/pd-dsl-pwned)""#,
    r#""a'b\"c`d`\n;e""#,
    r#""\u{0}""#,
    r#""模型""#,
    r#"b"bytes""#,
    "'c'",
    "{}",
    "[]",
    "[[[[]]]]",
    "{ a: { b: { c: {} } } }",
    "<>",
    "<prefill 0 x dp0tp0;>",
    "<prefill 1 x dp4294967296tp1; decode 1 x dp1tp4294967296;>",
    "<decode 1 x dp16tp1;>",
    "<prefill 1 x dp4tp4 / 0; decode 1 x dp16tp1;>",
    "before()",
    r#"before("v9.9.9")"#,
    "prepend(1)",
    "mooncake_v2 {}",
    "r#raw",
    "self",
    "_",
    "#[doc = 1]",
    ",",
    ":",
    ";",
];

fn splice(u: &mut Unstructured) -> Result<String> {
    let mut out = String::new();
    let n = u.int_in_range(0..=24)?;
    for _ in 0..n {
        let field = *u.choose(FIELDS)?;
        let text = match u.int_in_range(0..=5)? {
            // Replace the value after the first `:`.
            0 => match field.split_once(':') {
                Some((k, _)) => format!("{k}: {}", u.choose(VALUES)?),
                None => field.to_owned(),
            },
            // Replace one whitespace-separated word.
            1 => {
                let words: Vec<&str> = field.split(' ').collect();
                let at = u.choose_index(words.len())?;
                let v = *u.choose(VALUES)?;
                words
                    .iter()
                    .enumerate()
                    .map(|(i, w)| if i == at { v } else { w })
                    .collect::<Vec<_>>()
                    .join(" ")
            }
            // Cut the field short.
            2 => {
                let cut = u.int_in_range(0..=field.len())?;
                field.get(..cut).unwrap_or(field).to_owned()
            }
            _ => field.to_owned(),
        };
        out.push_str(&text);
        // Usually a comma; sometimes none, two, or a semicolon.
        out.push_str(u.choose(&[",\n", ",\n", ",\n", ",\n", "\n", ",,\n", ";\n"])?);
    }
    Ok(out)
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    if let Ok(text) = splice(&mut u) {
        let _ = pd_dsl_fuzz::run_macro(&text);
    }
});
