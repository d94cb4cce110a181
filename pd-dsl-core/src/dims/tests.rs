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
                | (AttentionDims::Gqa { .. }, Attention::Gqa)
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
    near(b(&KIMI_K2), 1000.0, 0.05);
    near(b(&QWEN3_235B), 235.0, 0.01);
    near(b(&MINIMAX_M2), 230.0, 0.02);
    near(b(&GLM_5), 744.0, 0.005);
}

/// Every model-table entry has a derived length: sized entries from their
/// architecture, unsized ones from `CONTEXTS`, never both.
#[test]
fn every_model_has_a_derived_length() {
    for m in MODELS {
        let sized = dims_for(m.id).is_some();
        let listed = CONTEXTS.iter().filter(|c| c.model == m.id).count();
        assert_eq!(
            (sized, listed),
            (sized, usize::from(!sized)),
            "`{}`: sized {sized}, listed in CONTEXTS {listed} times",
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

#[test]
fn a_lower_bound_is_not_an_exact_length() {
    assert_eq!(DerivedLen::AtLeast(8192).exact(), None);
    assert_eq!(DerivedLen::AtLeast(8192).at_least(), 8192);
    assert_eq!(DerivedLen::Exact(202752).exact(), Some(202752));
    assert_eq!(DerivedLen::AtLeast(8192).to_string(), "at least 8192");
    assert_eq!(DerivedLen::Exact(202752).to_string(), "202752");
}
