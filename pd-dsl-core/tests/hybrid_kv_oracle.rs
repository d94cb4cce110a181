//! The KV cache plan pd-dsl's budget computes for a hybrid Gated-DeltaNet
//! model (`capacity::HybridKv`: the attention block, the unified page, the
//! KV cache groups, the pool's blocks and vLLM's one-request check, from the
//! generated `hybrid_attn_block` / `hybrid_block_vllm` and
//! `kv_memory_check`), which the budget, the rules `max_model_len_fits_kv`
//! and `mamba_blocks_cover_seqs` and the README tables read, against the
//! released code of every release of the image table run from the sdists
//! (`scripts/upstream/hybrid_kv_oracle.py`: vllm-ascend's block sizing,
//! vLLM's layer specs, vLLM's `get_kv_cache_configs` with vllm-ascend's
//! patches), with prefix caching off and on (the Mamba cache in 'none' and
//! 'align' mode). A missing corpus fails the test.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl_core::capacity::{HybridKv, HybridSizing};
use pd_dsl_core::dims::{self, AttentionDims, GdnDims};
use pd_dsl_core::tables::IMAGES;
use serde_json::{Value, json};
use std::collections::BTreeMap;

mod support;

/// Every sized model-table build whose copy has Gated-DeltaNet dimensions,
/// one per architecture: its dimensions, full-attention and linear layers,
/// and MTP layers.
fn hybrid_models() -> Vec<(&'static str, GdnDims, u64, u64, u64)> {
    let mut out: Vec<(&'static str, GdnDims, u64, u64, u64)> = Vec::new();
    for d in dims::MODEL_DIMS {
        let AttentionDims::Hybrid { full_layers, .. } = d.arch.attention else {
            continue;
        };
        let m = pd_dsl_core::tables::model(d.model).unwrap();
        let g = dims::config_of(m).and_then(|c| c.gdn()).unwrap();
        if !out.iter().any(|(name, ..)| *name == d.arch.name) {
            out.push((
                d.arch.name,
                g,
                full_layers,
                d.arch.layers - full_layers,
                d.arch.mtp_layers,
            ));
        }
    }
    assert!(out.len() >= 2, "{out:?}");
    out
}

const GIB: u64 = 1 << 30;

/// KV memory: too little for a long request, a catalog-like amount, and
/// amounts that are no multiple of anything.
const AVAILABLE: &[u64] = &[2 * GIB, 20 * GIB + 12_345, 33 * GIB + 987_654_321];

#[test]
fn the_hybrid_kv_plan_is_upstreams() {
    let mut releases = BTreeMap::new();
    for img in IMAGES.iter() {
        if let Some(rel) = pd_dsl_core::upstream::release(img) {
            releases.insert(rel.version.as_str(), (img, rel));
        }
    }
    assert!(releases.len() >= 10, "{:?}", releases.keys());
    struct Case {
        model: &'static str,
        dims: GdnDims,
        tp: u64,
        spec: u64,
        typed: Option<u64>,
        full: u64,
        draft: u64,
        linear: u64,
        available: u64,
        len: u64,
        prefix: bool,
    }
    let mut cases = Vec::new();
    for (model, g, full, linear, mtp) in hybrid_models() {
        for tp in [1, 2, 3, 4, 8, 16] {
            for spec in [0, 1, 3] {
                for typed in [None, Some(128), Some(4096)] {
                    for &available in AVAILABLE {
                        for (len, prefix) in [
                            (32768, false),
                            (262144, false),
                            (32768, true),
                            (262144, true),
                        ] {
                            cases.push(Case {
                                model,
                                dims: g.clone(),
                                tp,
                                spec,
                                typed,
                                // The MTP draft's layer is a full-attention one.
                                full: full + if spec > 0 { mtp } else { 0 },
                                draft: if spec > 0 { mtp } else { 0 },
                                linear,
                                available,
                                len,
                                prefix,
                            });
                        }
                    }
                }
            }
        }
    }
    let input: Value = cases
        .iter()
        .map(|c| {
            json!({
                "tp": c.tp, "num_spec": c.spec, "block_size": c.typed, "config": c.dims,
                "full_layers": c.full, "draft_layers": c.draft,
                "mamba_layers": c.linear, "available_memory": c.available,
                "max_model_len": c.len, "kv_dtype": "bfloat16",
                // Prefix caching puts the Mamba cache in 'align' mode; a
                // batch budget above every block keeps vLLM's align-mode
                // assert (the rule `mamba_align_block_within_batch`) out.
                "prefix_caching": c.prefix, "max_num_batched_tokens": 65536,
            })
        })
        .collect();
    let (mut planned, mut refused, mut short) = (0, 0, 0);
    for (version, (img, rel)) in &releases {
        let sizing =
            HybridSizing::of(rel).unwrap_or_else(|| panic!("{version}: no hybrid sizing fact"));
        let v = pd_dsl_core::upstream::vllm_of(img).unwrap();
        let ascend = support::corpus("vllm-ascend", version);
        let vllm = support::corpus("vllm", &rel.vllm.version);
        let got = support::oracle("hybrid_kv_oracle.py", &[&ascend, &vllm], &input);
        assert_eq!(got.len(), cases.len());
        for (c, g) in cases.iter().zip(&got) {
            let at = format!(
                "vllm-ascend {version} {} TP{} spec {} typed {:?} {} B, len {}, prefix caching {}: {g}",
                c.model, c.tp, c.spec, c.typed, c.available, c.len, c.prefix
            );
            let Some(h) = HybridKv::plan(
                &c.dims,
                c.tp,
                c.spec,
                c.typed,
                sizing,
                &v.kv_memory_check,
                c.full,
                c.linear,
                c.prefix,
            ) else {
                assert!(g["refused"].is_string(), "{at}");
                assert!(g.get("attn_page_size_bytes").is_none(), "{at}");
                refused += 1;
                continue;
            };
            // Where the memory check refuses, the oracle has what was
            // decided before it; where it passes, everything.
            let enough = h.fits(c.len, c.available);
            let has = |k: &str| {
                let present = g.get(k).is_some_and(|x| !x.is_null());
                assert!(present || !enough, "{at}: no {k}");
                present
            };
            assert_eq!(g["block_size"], h.block, "{at}");
            for (k, want) in [
                ("attn_block_size", h.block),
                ("attn_page_size_bytes", h.page),
                ("mamba_page_size_bytes", h.page),
                ("group_size", h.group_size),
                ("check_available_bytes", h.check_bytes(c.available)),
            ] {
                if has(k) {
                    assert_eq!(g[k], want, "{at}: {k}");
                }
            }
            if has("groups") {
                let groups = g["groups"].as_array().unwrap();
                let kinds = |k: &str| groups.iter().filter(|x| x[0] == k).count() as u64;
                assert_eq!(kinds("FullAttentionSpec"), h.attn_groups, "{at}");
                assert_eq!(kinds("MambaSpec"), h.mamba_groups, "{at}");
            }
            if let Some(need) = g.get("max_memory_usage_bytes") {
                assert_eq!(*need, h.request_bytes(c.len), "{at}");
            }
            assert_eq!(g["enough"], enough, "{at}");
            if enough {
                assert_eq!(g["num_blocks"], h.num_blocks(c.available), "{at}");
                planned += 1;
            } else {
                short += 1;
            }
        }
    }
    eprintln!(
        "{} releases x {} cases: {planned} planned, {short} refused for memory, {refused} refused before",
        releases.len(),
        cases.len()
    );
    assert!(
        planned > 10000 && short > 1000 && refused > 1000,
        "{planned} planned, {short} short, {refused} refused"
    );
}
