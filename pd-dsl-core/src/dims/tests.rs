//! Tests of `dims`.

use super::*;
use crate::tables::MODELS;

#[test]
fn every_model_is_sized_or_says_why() {
    for m in MODELS {
        let sized = dims_for(m.id).is_some();
        let unsized_ = UNSIZED.iter().any(|(id, _)| *id == m.id);
        assert!(
            sized ^ unsized_,
            "`{}`: sized {sized}, unsized {unsized_}",
            m.id
        );
    }
    for d in MODEL_DIMS {
        assert!(
            MODELS.iter().any(|m| m.id == d.model),
            "{} not in MODELS",
            d.model
        );
    }
    for (id, _) in UNSIZED {
        assert!(MODELS.iter().any(|m| m.id == *id), "{id} not in MODELS");
    }
}

/// The attention kind of the dimensions agrees with the model table's.
#[test]
fn attention_kind_agrees_with_the_model_table() {
    use crate::tables::Attention;
    for d in MODEL_DIMS {
        let Some(m) = MODELS.iter().find(|m| m.id == d.model) else {
            continue;
        };
        let ok = matches!(
            (d.arch.attention, m.attention),
            (AttentionDims::Mla { indexer: None, .. }, Attention::Mla)
                | (
                    AttentionDims::Mla {
                        indexer: Some(_),
                        ..
                    },
                    Attention::DsaSparse
                )
                | (
                    AttentionDims::Gqa { .. } | AttentionDims::Hybrid { .. },
                    Attention::Gqa
                )
                | (AttentionDims::V4 { .. }, Attention::V4Hybrid)
        );
        assert!(
            ok,
            "{}: {:?} vs {:?}",
            d.model, d.arch.attention, m.attention
        );
        // Builds without the MTP layer (`deepseek_v3_w8a8`) still have
        // the architecture's; vLLM loads it only with MTP speculation.
        assert!(!m.mtp || d.arch.mtp_layers > 0, "{}: MTP layer", d.model);
        assert_eq!(d.format.kv_bytes == 1, m.kv_c8, "{}: C8 KV", d.model);
    }
}

/// Totals computed from the dimensions land on the published sizes:
/// DeepSeek-V3 671B main model + 14B MTP module, of which 1.9B are its own
/// embedding and head copy that vLLM shares (DeepSeek-V3 README),
/// V4-Flash 284B, Kimi-K2 1T (text decoder), Qwen3-235B, MiniMax-M2 230B,
/// GLM-5 744B ("744B parameters (40B active)"; upstream's e2e names GLM-5.1 744B),
/// (model cards, model-facts.md).
#[test]
fn totals_match_published_sizes() {
    let b = |a: &Architecture| {
        let p = a.params();
        (p.total() - p.mtp - p.mtp_routed_experts) as f64 / 1e9
    };
    let near = |got: f64, want: f64, tol: f64| {
        assert!(
            (got - want).abs() / want < tol,
            "got {got:.1}B, published {want}B"
        );
    };
    near(b(&DEEPSEEK_V3), 671.0, 0.01);
    let p = DEEPSEEK_V3.params();
    near(
        (p.mtp + p.mtp_routed_experts + p.embedding) as f64 / 1e9,
        14.0,
        0.05,
    );
    near(b(&DEEPSEEK_V4_FLASH), 284.0, 0.02);
    near(b(&DEEPSEEK_V4_PRO), 1600.0, 0.02);
    near(b(&KIMI_K2), 1000.0, 0.05);
    near(b(&QWEN3_235B), 235.0, 0.01);
    near(b(&MINIMAX_M2), 230.0, 0.02);
    near(b(&GLM_5), 744.0, 0.005);
    // Qwen3.5's published totals count its vision tower (about 0.4B),
    // which the text decoder's dimensions leave out.
    near(b(&QWEN3_5_397B), 397.0, 0.005);
    near(b(&QWEN3_5_122B), 122.0, 0.005);
}

/// Every model-table entry has a derived length from exactly one place:
/// its checkpoint copy, else its architecture (sized), else `CONTEXTS`.
#[test]
fn every_model_has_a_derived_length() {
    for m in MODELS {
        let copied = config_of(m)
            .and_then(CheckpointConfig::derived_len)
            .is_some();
        let sized = dims_for(m.id).is_some();
        let listed = CONTEXTS.iter().filter(|c| c.model == m.id).count();
        assert_eq!(
            listed,
            usize::from(!copied && !sized),
            "`{}`: copy {copied}, sized {sized}, listed in CONTEXTS {listed} times",
            m.id
        );
        assert!(
            derived_len(m.id).is_some_and(|(l, _)| l.at_least() > 0),
            "{}",
            m.id
        );
    }
    for c in CONTEXTS {
        assert!(
            MODELS.iter().any(|m| m.id == c.model),
            "{} not in MODELS",
            c.model
        );
        assert!(!c.source.is_empty(), "{}", c.model);
    }
}

/// The generated checkpoint table parses, and every build that names a
/// checkpoint names one the table has.
#[test]
fn every_named_checkpoint_is_copied() -> Result<(), String> {
    let parsed: serde_json::Value = serde_json::from_str(checkpoints::facts_text())
        .map_err(|e| format!("checkpoint facts are not JSON: {e}"))?;
    let n = parsed["configs"].as_object().map_or(0, |o| o.len());
    assert_eq!(load_checkpoints()?.len(), n);
    assert_eq!(
        CHECKPOINTS.len(),
        n,
        "every copy parses as a CheckpointConfig"
    );
    assert!(n >= 40, "only {n} copies");
    for m in MODELS {
        if let Some(id) = m.checkpoint {
            assert!(checkpoint(id).is_some(), "`{}`: no copy of `{id}`", m.id);
        }
    }
    Ok(())
}

/// The hand-typed dimensions of every sized build equal its checkpoint's
/// copy, field by field (the copies are third-party; two independent
/// transcriptions agreeing is the check). The context too, unless the
/// copy's own is read instead ([`derived_len`] prefers it).
#[test]
fn sized_dimensions_equal_the_checkpoint_copies() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for d in MODEL_DIMS {
        let Some(m) = crate::tables::model(d.model) else {
            continue;
        };
        let Some(c) = config_of(m) else {
            continue;
        };
        checked += 1;
        let a = d.arch;
        let mut eq = |what: &str, typed: u64, copy: Option<u64>| {
            if Some(typed) != copy {
                problems.push(format!(
                    "{} ({}): {what} typed {typed}, copy {copy:?} ({})",
                    d.model, a.name, c.source
                ));
            }
        };
        eq("hidden_size", a.hidden, c.hidden_size);
        eq("vocab_size", a.vocab, c.vocab_size);
        eq("num_hidden_layers", a.layers, c.num_hidden_layers);
        eq(
            "first_k_dense_replace",
            a.dense_layers,
            Some(c.first_k_dense_replace.unwrap_or(0)),
        );
        if a.dense_layers > 0 {
            eq(
                "intermediate_size",
                a.dense_intermediate,
                c.intermediate_size,
            );
        }
        eq("routed experts", a.routed_experts, c.routed_experts());
        // Qwen's configs give the shared expert's width
        // (`shared_expert_intermediate_size`) instead of a count: as many
        // experts of `moe_intermediate_size`.
        eq(
            "n_shared_experts",
            a.shared_experts,
            Some(c.n_shared_experts.unwrap_or_else(|| {
                match (c.shared_expert_intermediate_size, c.moe_intermediate_size) {
                    (Some(s), Some(m)) if m > 0 && s % m == 0 => s / m,
                    (Some(_), _) => u64::MAX,
                    _ => 0,
                }
            })),
        );
        eq(
            "num_experts_per_tok",
            a.experts_per_token,
            c.num_experts_per_tok,
        );
        let moe = c
            .moe_intermediate_size
            .or(if c.num_local_experts.is_some() {
                c.intermediate_size
            } else {
                None
            });
        eq("moe_intermediate_size", a.moe_intermediate, moe);
        eq(
            "MTP layers",
            a.mtp_layers,
            Some(
                c.num_nextn_predict_layers
                    .or(c.mtp_num_hidden_layers)
                    .unwrap_or(0),
            ),
        );
        eq("derived max_model_len", a.max_model_len, c.derived_len());
        match a.attention {
            AttentionDims::Mla {
                heads,
                q_lora_rank,
                kv_lora_rank,
                qk_nope_head_dim,
                qk_rope_head_dim,
                v_head_dim,
                indexer,
            } => {
                eq("num_attention_heads", heads, c.num_attention_heads);
                eq("q_lora_rank", q_lora_rank, Some(c.q_lora_rank.unwrap_or(0)));
                eq("kv_lora_rank", kv_lora_rank, c.kv_lora_rank);
                eq("qk_nope_head_dim", qk_nope_head_dim, c.qk_nope_head_dim);
                eq("qk_rope_head_dim", qk_rope_head_dim, c.qk_rope_head_dim);
                eq("v_head_dim", v_head_dim, c.v_head_dim);
                match indexer {
                    Some((h, dim)) => {
                        eq("index_n_heads", h, c.index_n_heads);
                        eq("index_head_dim", dim, c.index_head_dim);
                    }
                    None => eq(
                        "index_n_heads (none)",
                        0,
                        Some(c.index_n_heads.unwrap_or(0)),
                    ),
                }
            }
            AttentionDims::Gqa {
                heads,
                kv_heads,
                head_dim,
            } => {
                eq("num_attention_heads", heads, c.num_attention_heads);
                eq("num_key_value_heads", kv_heads, c.num_key_value_heads);
                eq("head_dim", head_dim, c.head_dim);
            }
            AttentionDims::Hybrid {
                heads,
                kv_heads,
                head_dim,
                full_layers,
                linear_key_heads,
                linear_value_heads,
                linear_key_dim,
                linear_value_dim,
                conv_kernel,
            } => {
                eq("num_attention_heads", heads, c.num_attention_heads);
                eq("num_key_value_heads", kv_heads, c.num_key_value_heads);
                eq("head_dim", head_dim, c.head_dim);
                let kinds = c.layer_types.as_ref();
                let count = |k: &str| kinds.and_then(|t| t.get(k).copied());
                eq(
                    "full_attention layers",
                    full_layers,
                    count("full_attention"),
                );
                eq(
                    "linear_attention layers",
                    a.layers - full_layers,
                    count("linear_attention"),
                );
                eq(
                    "linear_num_key_heads",
                    linear_key_heads,
                    c.linear_num_key_heads,
                );
                eq(
                    "linear_num_value_heads",
                    linear_value_heads,
                    c.linear_num_value_heads,
                );
                eq("linear_key_head_dim", linear_key_dim, c.linear_key_head_dim);
                eq(
                    "linear_value_head_dim",
                    linear_value_dim,
                    c.linear_value_head_dim,
                );
                eq(
                    "linear_conv_kernel_dim",
                    conv_kernel,
                    c.linear_conv_kernel_dim,
                );
            }
            AttentionDims::V4 {
                heads,
                head_dim,
                q_lora_rank,
                o_lora_rank,
                o_groups,
                sliding_window,
                index_head_dim,
                compress,
            } => {
                eq("num_attention_heads", heads, c.num_attention_heads);
                eq("head_dim", head_dim, c.head_dim);
                eq("q_lora_rank", q_lora_rank, c.q_lora_rank);
                eq("o_lora_rank", o_lora_rank, c.o_lora_rank);
                eq("o_groups", o_groups, c.o_groups);
                eq("sliding_window", sliding_window, c.sliding_window);
                eq("index_head_dim", index_head_dim, c.index_head_dim);
                // The decoder layers' ratios; the list's last entry is the
                // MTP layer's.
                let ratios = c.compress_ratios.as_deref().unwrap_or(&[]);
                let layers = &ratios[..ratios.len().min(a.layers as usize)];
                for &(ratio, n) in compress {
                    eq(
                        &format!("layers with compress ratio {ratio}"),
                        n,
                        Some(layers.iter().filter(|&&r| r == ratio).count() as u64),
                    );
                }
                eq(
                    "compress_ratios entries",
                    a.layers + a.mtp_layers,
                    Some(ratios.len() as u64),
                );
            }
        }
    }
    assert!(checked >= 20, "only {checked} sized builds have a copy");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A typed model type agrees with the build's copy (vLLM's text model
/// type, or the checkpoint's own where the table names that one), so the
/// copy only adds types, never changes one.
#[test]
fn typed_model_types_agree_with_the_copies() {
    for m in MODELS {
        let (Some(typed), Some(c)) = (m.model_type, config_of(m)) else {
            continue;
        };
        assert!(
            c.text_model_type.as_deref() == Some(typed) || c.model_type.as_deref() == Some(typed),
            "`{}`: typed `{typed}`, copy {:?}/{:?} ({})",
            m.id,
            c.model_type,
            c.text_model_type,
            c.source
        );
    }
}

/// A build without a copy has its typed model type judged on the node's
/// weights (preflight's `model_config`, at either level of the config, as
/// the typed field may name either): it must be a type the copies of its
/// architecture have, so the check cannot refuse the right weights for a
/// misspelt type.
#[test]
fn typed_model_types_of_builds_without_a_copy_are_their_siblings() {
    let mut judged = 0;
    for m in MODELS {
        let (Some(typed), None, Some(d)) = (m.model_type, config_of(m), dims_for(m.id)) else {
            continue;
        };
        let siblings: Vec<_> = MODELS
            .iter()
            .filter(|o| dims_for(o.id).is_some_and(|od| std::ptr::eq(od.arch, d.arch)))
            .filter_map(|o| config_of(o))
            .collect();
        assert!(
            siblings
                .iter()
                .any(|c| c.text_model_type.as_deref() == Some(typed)
                    || c.model_type.as_deref() == Some(typed)),
            "`{}`: typed `{typed}`, no copy of its architecture {} has it",
            m.id,
            d.arch.name
        );
        judged += 1;
    }
    assert!(judged >= 4, "{judged}");
}

#[test]
fn a_lower_bound_is_not_an_exact_length() {
    assert_eq!(DerivedLen::AtLeast(8192).exact(), None);
    assert_eq!(DerivedLen::AtLeast(8192).at_least(), 8192);
    assert_eq!(DerivedLen::Exact(202752).exact(), Some(202752));
    assert_eq!(DerivedLen::AtLeast(8192).to_string(), "at least 8192");
    assert_eq!(DerivedLen::Exact(202752).to_string(), "202752");
}

/// No build's checkpoint carries a DSpark draft block: vLLM 0.26.0/0.27.1
/// refuse `dspark` with fewer tokens than a config's `dspark_block_size`
/// (start-up check 28cfdc0f7b), judged unreachable because no copy has one.
/// A copy that gains one fails here, asking for the rule.
#[test]
fn no_copied_checkpoint_carries_a_dspark_block() {
    let mut copies = 0;
    for m in MODELS {
        if let Some(c) = config_of(m) {
            copies += 1;
            assert_eq!(c.dspark_block_size, None, "`{}` ({})", m.id, c.source);
        }
    }
    assert!(copies >= 30, "only {copies} builds have a copy");
}

/// vLLM's hybrid classes (the generated `mamba_align.hybrid`, `IsHybrid`)
/// and the copies agree: a build's architecture is hybrid exactly where its
/// checkpoint lists `linear_attention` layers (Qwen3.5), on every pinned
/// vLLM that has the classes.
#[test]
fn hybrid_classes_agree_with_the_copies_layer_types() {
    let mut hybrid = 0;
    let vllms = crate::tables::IMAGES
        .iter()
        .filter_map(|img| crate::upstream::vllm_of(img).ok());
    for v in vllms {
        let Some(a) = v.mamba_align.as_ref() else {
            continue;
        };
        for m in MODELS {
            let (Some(c), Some(arch)) = (config_of(m), architecture(m)) else {
                continue;
            };
            let linear = c
                .layer_types
                .as_ref()
                .is_some_and(|t| t.contains_key("linear_attention"));
            assert_eq!(
                a.is_hybrid(arch),
                linear,
                "vLLM {}: `{}` ({arch})",
                v.version,
                m.id
            );
            hybrid += usize::from(linear);
        }
    }
    assert!(hybrid > 0, "no hybrid build checked");
}

/// The model table's hand-typed kinds agree with each build's copy: the
/// attention kind (MLA: `kv_lora_rank`; DSA: MLA with `index_topk`, the test
/// vllm-ascend makes; DeepSeek-V4: `compress_ratios`; GQA otherwise),
/// mixture of experts (routed experts), and a build marked `mtp` has an MTP
/// layer in its checkpoint (`num_nextn_predict_layers` or
/// `mtp_num_hidden_layers`).
#[test]
fn table_kinds_agree_with_the_copies() {
    use crate::tables::Attention;
    let mut checked = 0;
    for m in MODELS {
        let Some(c) = config_of(m) else {
            continue;
        };
        checked += 1;
        let kind = if c.compress_ratios.is_some() {
            Attention::V4Hybrid
        } else if c.kv_lora_rank.is_some() && c.index_topk.is_some() {
            Attention::DsaSparse
        } else if c.kv_lora_rank.is_some() {
            Attention::Mla
        } else {
            Attention::Gqa
        };
        assert_eq!(m.attention, kind, "`{}` ({})", m.id, c.source);
        assert_eq!(
            m.moe,
            c.routed_experts().is_some_and(|n| n > 0),
            "`{}` MoE",
            m.id
        );
        if m.mtp {
            let layers = c
                .num_nextn_predict_layers
                .or(c.mtp_num_hidden_layers)
                .unwrap_or(0);
            assert!(
                layers > 0,
                "`{}` is marked MTP; its checkpoint has no MTP layer ({})",
                m.id,
                c.source
            );
        }
    }
    assert!(checked >= 30, "only {checked} builds have a copy");
}

/// The embedded checkpoint table is the one the lock pins.
#[test]
fn the_embedded_copies_are_the_pinned_ones() -> Result<(), String> {
    let lock = concat!(env!("CARGO_MANIFEST_DIR"), "/../upstream/corpus.lock.json");
    let text = std::fs::read_to_string(lock).map_err(|e| format!("{lock}: {e}"))?;
    let lock: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{lock}: {e}"))?;
    let (name, version) = CHECKPOINT_PACKAGE;
    let pinned: Vec<&str> = lock["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["name"] == name)
        .filter_map(|p| p["version"].as_str())
        .collect();
    assert_eq!(pinned, [version], "the lock pins {name} {pinned:?}");
    let parsed: serde_json::Value = serde_json::from_str(checkpoints::facts_text())
        .map_err(|e| format!("checkpoint facts are not JSON: {e}"))?;
    assert_eq!(
        (parsed["package"].as_str(), parsed["version"].as_str()),
        (Some(name), Some(version))
    );
    Ok(())
}

/// [`experts_key`] may take a build's key from another copy of its model
/// type only because every copy of one text model type names its routed
/// experts alike; and every table build with routed experts gets a key.
#[test]
fn copies_of_one_model_type_name_their_experts_alike() {
    let mut keys: std::collections::BTreeMap<&str, (&str, &str)> = Default::default();
    for c in CHECKPOINTS.values() {
        let (Some(t), Some((k, _))) = (c.text_model_type.as_deref(), c.experts_field()) else {
            continue;
        };
        if let Some((seen, at)) = keys.insert(t, (k, &c.source)) {
            assert_eq!(seen, k, "{t}: {at} names `{seen}`, {} `{k}`", c.source);
        }
    }
    assert!(keys.len() > 5, "{keys:?}");
    for m in MODELS {
        if routed_experts(m.id).is_some_and(|(n, _)| n > 0) {
            assert!(experts_key(m).is_some(), "`{}` has no experts key", m.id);
        }
    }
}
