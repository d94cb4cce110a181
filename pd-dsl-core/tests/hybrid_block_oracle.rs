//! The attention block pd-dsl computes for a hybrid Gated-DeltaNet model
//! (`dims::gdn_attn_block` with the generated `hybrid_attn_block`, which the
//! rule `mamba_align_block_within_batch` and the rehearsal's stand-in `vllm`
//! read) against vllm-ascend's own `verify_and_update_config`
//! (vllm_ascend/patch/platform/patch_mamba_config.py), run with vLLM's Mamba
//! state shapes from the released source distributions of every release of
//! the image table (`scripts/upstream/hybrid_block_oracle.py`). A missing
//! corpus fails the test.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl_core::dims::{self, GdnDims};
use pd_dsl_core::tables::IMAGES;
use serde_json::{Value, json};
use std::collections::BTreeMap;

mod support;

/// Every checkpoint of the model table whose copy has Gated-DeltaNet
/// dimensions (the Qwen3.5 builds), with them.
fn gdn_checkpoints() -> Vec<(&'static str, GdnDims)> {
    let mut out: Vec<(&'static str, GdnDims)> = Vec::new();
    for m in pd_dsl_core::tables::MODELS {
        if let (Some(id), Some(d)) = (m.checkpoint, dims::config_of(m).and_then(|c| c.gdn()))
            && !out.iter().any(|(seen, _)| *seen == id)
        {
            out.push((id, d));
        }
    }
    assert!(out.len() >= 2, "{out:?}");
    out
}

/// TP sizes, the table's (1 to 16) and one that divides no head count.
const TP: &[u64] = &[1, 2, 3, 4, 8, 16];

/// Speculative tokens: none, the catalog's MTP 1, and more.
const SPEC: &[u64] = &[0, 1, 3, 15];

/// Typed block sizes: unset, below every raised block, above every one.
const TYPED: &[Option<u64>] = &[None, Some(128), Some(16384)];

struct Case {
    checkpoint: &'static str,
    dims: GdnDims,
    tp: u64,
    num_spec: u64,
    typed: Option<u64>,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for (checkpoint, dims) in gdn_checkpoints() {
        for &tp in TP {
            for &num_spec in SPEC {
                for &typed in TYPED {
                    out.push(Case {
                        checkpoint,
                        dims: dims.clone(),
                        tp,
                        num_spec,
                        typed,
                    });
                }
            }
        }
    }
    out
}

/// For every vllm-ascend release of the images: where the facts say it sizes
/// the block by the formula (`hybrid_attn_block`), the block vllm-ascend sets
/// is `dims::gdn_attn_block`'s (or the larger typed one), and it asserts
/// exactly where that is `None`; where the facts say it does not, it leaves
/// the block as typed.
#[test]
fn the_hybrid_attention_block_is_vllm_ascends() {
    let mut releases = BTreeMap::new();
    for img in IMAGES.iter() {
        if let Some(rel) = pd_dsl_core::upstream::release(img) {
            releases.insert(rel.version.as_str(), rel);
        }
    }
    assert!(releases.len() >= 10, "{:?}", releases.keys());
    let cases = cases();
    let input: Value = cases
        .iter()
        .map(|c| {
            json!({
                "tp": c.tp, "num_spec": c.num_spec, "block_size": c.typed,
                "config": c.dims,
            })
        })
        .collect();
    let (mut sized, mut unsized_, mut refused) = (0, 0, 0);
    for (version, rel) in &releases {
        let ascend = support::corpus("vllm-ascend", version);
        let vllm = support::corpus("vllm", &rel.vllm.version);
        let got = support::oracle("hybrid_block_oracle.py", &[&ascend, &vllm], &input);
        assert_eq!(got.len(), cases.len());
        for (c, g) in cases.iter().zip(&got) {
            let at = format!(
                "vllm-ascend {version} {} TP{} spec {} typed {:?}: {g}",
                c.checkpoint, c.tp, c.num_spec, c.typed
            );
            match &rel.hybrid_attn_block {
                Some(sizing) => {
                    match dims::gdn_attn_block(&c.dims, c.tp, c.num_spec, sizing.kernel_block_size)
                    {
                        Some(b) => {
                            let want = c.typed.map_or(b.block, |t| t.max(b.block));
                            assert_eq!(g["block_size"], want, "{at}");
                            sized += 1;
                        }
                        None => {
                            assert!(g["refused"].is_string(), "{at}");
                            refused += 1;
                        }
                    }
                }
                None => {
                    // The block stays as typed; only vLLM's own shape
                    // arithmetic may refuse, on a TP that divides no head
                    // count, where a release still asks for the shapes.
                    if g["refused"].is_string() {
                        assert_ne!(c.dims.linear_num_value_heads % c.tp, 0, "{at}");
                        refused += 1;
                    } else {
                        assert_eq!(g["block_size"], json!(c.typed), "{at}");
                        unsized_ += 1;
                    }
                }
            }
        }
    }
    eprintln!(
        "{} releases x {} cases: {sized} sized as computed, {unsized_} left as typed, {refused} refused",
        releases.len(),
        cases.len()
    );
    assert!(
        sized > 500 && unsized_ > 50 && refused > 50,
        "{sized} sized, {unsized_} left, {refused} refused"
    );
}
