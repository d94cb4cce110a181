//! The KV arithmetic of the budget against vLLM's own: the page sizes of
//! `vllm/v1/kv_cache_interface.py` and the block count of
//! `vllm/v1/core/kv_cache_utils.py`, run from the released vLLM source
//! distributions of the images (`scripts/upstream/kv_oracle.py`, through
//! `scripts/upstream/corpus.py`). A missing corpus fails the test.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl_core::capacity::{kv_blocks, kv_per_token, request_bytes};
use pd_dsl_core::dims::{self, AttentionDims};
use pd_dsl_core::layout::Serve;
use pd_dsl_core::tables::A3;
use serde_json::{Value, json};

/// The vLLM releases the images ship whose KV code differs in imports or
/// layout (0.18.0 has no `from __future__ import annotations`, 0.22.1 and
/// 0.23.0 are the catalog's images, 0.25.1 the newest image).
const VLLM: &[&str] = &["0.18.0", "0.22.1", "0.23.0", "0.25.1"];

mod support;

fn oracle(src: &std::path::Path, cases: &Value) -> Vec<Value> {
    support::oracle("kv_oracle.py", &[src], cases)
}

fn corpus(version: &str) -> std::path::PathBuf {
    support::corpus("vllm", version)
}

/// One budget case: a model build, TP size, block size and memory.
struct Case {
    model: &'static str,
    tp: u32,
    block_size: u64,
    available: u64,
    max_model_len: u64,
}

/// What vLLM is given for that case, read from the dimensions the way
/// vLLM's model code builds its spec (not through `kv_per_token`).
fn vllm_spec(c: &Case) -> Value {
    let d = dims::dims_for(c.model).expect("sized model");
    let (spec, heads, head_size, dtype) = match d.arch.attention {
        AttentionDims::Mla {
            kv_lora_rank,
            qk_rope_head_dim,
            indexer,
            ..
        } => {
            // MLAAttention.get_kv_cache_spec; vllm-ascend's
            // AscendMLAAttentionSpec without C8 keeps the same page; a C8
            // `fa_quant_layer` caches `head_size + qk_rope_head_dim` int8.
            let index = indexer.map_or(0, |(_, i)| i);
            if d.format.kv_bytes == 1 {
                ("mla", 1, kv_lora_rank + 2 * qk_rope_head_dim, "int8")
            } else {
                (
                    "mla",
                    1,
                    kv_lora_rank + qk_rope_head_dim + index,
                    "bfloat16",
                )
            }
        }
        AttentionDims::Gqa {
            kv_heads, head_dim, ..
        } => (
            "full",
            (kv_heads / u64::from(c.tp)).max(1),
            head_dim,
            "bfloat16",
        ),
        AttentionDims::V4 { .. } => panic!("DeepSeek-V4 is estimated, not oracled"),
        AttentionDims::Hybrid { .. } => {
            panic!("hybrid models are oracled by tests/hybrid_kv_oracle.rs")
        }
    };
    json!({
        "spec": spec, "block_size": c.block_size, "num_kv_heads": heads,
        "head_size": head_size, "dtype": dtype, "num_layers": d.arch.layers,
        "available_memory": c.available, "max_model_len": c.max_model_len,
    })
}

#[test]
fn budget_kv_arithmetic_is_vllms() {
    let cases = [
        (
            "deepseek_v3_1_w8a8_mtp_quarot",
            1,
            128,
            9_876_543_210,
            135_168,
        ),
        (
            "deepseek_v3_1_w8a8_mtp_quarot",
            16,
            128,
            11_000_000_000,
            65_536,
        ),
        (
            "deepseek_v3_1_w8a8_mtp_quarot",
            4,
            64,
            7_000_000_001,
            16_385,
        ),
        (
            "deepseek_v3_1_w8a8c8_mxfp8",
            1,
            128,
            43_000_000_000,
            135_168,
        ),
        ("deepseek_v3_2_w8a8", 8, 128, 12_500_000_000, 90_000),
        ("qwen3_235b_a22b_w8a8", 1, 128, 5_000_000_000, 40_960),
        ("qwen3_235b_a22b_w8a8", 2, 128, 5_000_000_000, 40_960),
        ("qwen3_235b_a22b_w8a8", 4, 128, 5_000_000_000, 40_960),
        ("qwen3_235b_a22b_w8a8", 8, 16, 5_000_000_000, 36_864),
        ("minimax_m2_7_w8a8_quarot", 8, 128, 20_000_000_000, 204_800),
        ("minimax_m2_7_w8a8_quarot", 16, 128, 20_000_000_000, 199_608),
        ("minimax_m2_7_w8a8_quarot", 2, 32, 3_333_333_333, 70_000),
    ]
    .map(|(model, tp, block_size, available, max_model_len)| Case {
        model,
        tp,
        block_size,
        available,
        max_model_len,
    });
    let specs = Value::Array(cases.iter().map(vllm_spec).collect());
    let serve = Serve::default();
    for version in VLLM {
        let got = oracle(&corpus(version), &specs);
        assert_eq!(got.len(), cases.len());
        for (c, v) in cases.iter().zip(&got) {
            let d = dims::dims_for(c.model).expect("sized model");
            let layers = d.arch.layers;
            let (per_token, _) = kv_per_token(d.arch, d.format, &serve, &A3, c.tp);
            let page = per_token * c.block_size;
            let what = format!(
                "{} tp{} block {} on vLLM {version}",
                c.model, c.tp, c.block_size
            );
            assert_eq!(v["page_size_bytes"], json!(page), "page size of {what}");
            assert_eq!(
                v["max_memory_usage_bytes"],
                json!(request_bytes(c.max_model_len, c.block_size, page, 1)),
                "one request of {} tokens per layer, {what}",
                c.max_model_len
            );
            let blocks = kv_blocks(c.available, page, layers);
            assert_eq!(v["num_blocks"], json!(blocks), "blocks of {what}");
            assert_eq!(
                v["num_tokens"],
                json!(blocks * c.block_size),
                "tokens of {what}"
            );
        }
    }
    // The oracle is not a mirror: a spec one byte off per token is caught.
    let mut off = specs.as_array().expect("array")[0].clone();
    off["head_size"] = json!(577);
    let got = oracle(&corpus(VLLM[0]), &Value::Array(vec![off]));
    assert_ne!(got[0]["page_size_bytes"], json!(1152 * 128));
}
