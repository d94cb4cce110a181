//! The rules that read model facts and per-image limits, on both sides of
//! each boundary (the compile-fail cases in `tests/ui/fail/` show one side
//! and the message; these show what stays accepted).

use pd_dsl_core::check::check;
use pd_dsl_core::spec::LayoutSpec;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// A 1P1D layout on A3 in the upstream shape (P DP2 x TP8, D DP4 x TP4),
/// with expert parallelism and a `max_model_len` every model's budget holds.
fn pd(model: &str, image: &str) -> Value {
    json!({
        "name": "demo/a3-1p1d",
        "model": model,
        "hardware": "a3",
        "image": image,
        "topology": [
            {"role": "prefill", "count": 1, "dp": 2, "tp": 8},
            {"role": "decode", "count": 1, "dp": 4, "tp": 4}
        ],
        "connector": {"kind": "mooncake_v1", "kv_port": {"prefill": [36100], "decode": [36200]}},
        "ports": {"api": 7100, "dp_rpc": 12321},
        "proxy": {"port": 1999},
        "serve": {"expert_parallel": true, "max_model_len": 32768},
        "provenance": {"recorded": "2026-08-20"}
    })
}

/// A single-node mixed layout on A3 (DP4 x TP4), sized like [`pd`].
fn mixed(model: &str, image: &str) -> Value {
    json!({
        "name": "demo/a3-mixed",
        "model": model,
        "hardware": "a3",
        "image": image,
        "topology": [{"role": "mixed", "count": 1, "dp": 4, "tp": 4}],
        "ports": {"api": 8000},
        "serve": {"expert_parallel": true, "max_model_len": 32768},
        "provenance": {"recorded": "2026-08-20"}
    })
}

/// Sets `roles.<role>` to `block`.
fn with_role(mut v: Value, role: &str, block: Value) -> Value {
    v["roles"] = json!({ role: block });
    v
}

/// The names of the rules a layout breaks (empty when it is accepted).
fn broken(v: &Value) -> BTreeSet<&'static str> {
    let spec: LayoutSpec = serde_json::from_value(v.clone())
        .unwrap_or_else(|e| unreachable!("test layout does not parse: {e}\n{v:#}"));
    match check(&spec) {
        Ok(_) => BTreeSet::new(),
        Err(d) => d.iter().map(|d| d.rule.name()).collect(),
    }
}

/// The messages of the violations of `rule`.
fn messages(v: &Value, rule: &str) -> Vec<String> {
    let spec: LayoutSpec = serde_json::from_value(v.clone()).unwrap_or_default();
    match check(&spec) {
        Ok(_) => Vec::new(),
        Err(d) => d
            .iter()
            .filter(|d| d.rule.name() == rule)
            .map(|d| d.message.clone())
            .collect(),
    }
}

fn only(rule: &'static str) -> BTreeSet<&'static str> {
    BTreeSet::from([rule])
}

#[test]
fn base_layouts_are_accepted() {
    assert_eq!(
        broken(&pd("deepseek_r1_0528_w8a8", "v0.23.0")),
        BTreeSet::new()
    );
    assert_eq!(
        broken(&mixed("qwen3_235b_a22b", "v0.23.0")),
        BTreeSet::new()
    );
}

#[test]
fn v4_block_sizes_follow_the_image() {
    let v4 = |image: &str, bs: u64| {
        let mut v = with_role(
            mixed("deepseek_v4_pro_w4a8_mtp", image),
            "mixed",
            json!({"block_size": bs}),
        );
        v["topology"] = json!([{"role": "mixed", "count": 1, "dp": 1, "tp": 16}]);
        broken(&v)
    };
    assert_eq!(v4("v0.21.0rc1", 32), BTreeSet::new());
    assert_eq!(v4("v0.23.0", 64), BTreeSet::new());
    assert_eq!(v4("v0.23.0", 16), only("block_size_backend"));
    // v0.20.2rc1 forces 128 for V4.
    assert_eq!(v4("v0.20.2rc1", 32), only("block_size_backend"));
    assert_eq!(v4("v0.20.2rc1", 128), BTreeSet::new());
}

#[test]
fn other_block_sizes_need_prefix_caching_and_chunked_prefill_off() {
    let q = |block: Value| {
        broken(&with_role(
            mixed("qwen3_235b_a22b", "v0.23.0"),
            "mixed",
            block,
        ))
    };
    assert_eq!(q(json!({"block_size": 128})), BTreeSet::new());
    assert_eq!(q(json!({"block_size": 64})), only("block_size_backend"));
    assert_eq!(
        q(json!({"block_size": 64, "prefix_caching": false})),
        only("block_size_backend")
    );
    assert_eq!(
        q(json!({
            "block_size": 64,
            "prefix_caching": false,
            "max_num_batched_tokens": 32768,
            "flags": [{"name": "--no-enable-chunked-prefill"}]
        })),
        BTreeSet::new()
    );
    // Without chunked prefill a batch holds a whole `max_model_len` prompt
    // (vllm/config/scheduler.py `verify_max_model_len`).
    assert_eq!(
        q(json!({
            "block_size": 64,
            "prefix_caching": false,
            "flags": [{"name": "--no-enable-chunked-prefill"}]
        })),
        only("batched_tokens_cover_model_len")
    );
}

#[test]
fn kv_nz_needs_a_pd_decode_engine_of_an_mla_model() {
    let nz = json!({"additional_config": {"enable_kv_nz": true}});
    assert_eq!(
        broken(&with_role(
            pd("deepseek_r1_0528_w8a8", "v0.23.0"),
            "decode",
            nz.clone()
        )),
        BTreeSet::new()
    );
    assert_eq!(
        broken(&with_role(
            mixed("deepseek_r1_0528_w8a8", "v0.23.0"),
            "mixed",
            nz.clone()
        )),
        only("kv_nz_decode_only")
    );
    for model in ["glm_5_1_w8a8", "minimax_m2_7_w8a8_quarot"] {
        assert_eq!(
            broken(&with_role(pd(model, "v0.23.0"), "decode", nz.clone())),
            only("kv_nz_needs_mla"),
            "{model}"
        );
    }
}

#[test]
fn reduce_sample_runs_on_decode_and_mixed_without_lmhead_tp() {
    let rs = json!({"additional_config": {"enable_reduce_sample": true}});
    assert_eq!(
        broken(&with_role(
            pd("glm_5_1_w4a8", "v0.23.0"),
            "decode",
            rs.clone()
        )),
        BTreeSet::new()
    );
    assert_eq!(
        broken(&with_role(mixed("glm_5_1_w4a8", "v0.23.0"), "mixed", rs)),
        BTreeSet::new()
    );
    let mut v = mixed("glm_5_1_w4a8", "v0.23.0");
    v["topology"] = json!([{"role": "mixed", "count": 1, "dp": 16, "tp": 1}]);
    let v = with_role(
        v,
        "mixed",
        json!({"additional_config": {
            "enable_reduce_sample": true,
            "finegrained_tp_config": {"lmhead_tensor_parallel_size": 4}
        }}),
    );
    assert_eq!(broken(&v), only("reduce_sample_decode_only"));
}

/// lmhead TP needs a size dividing DP, on any TP size: upstream's own
/// DeepSeek-V3.1 configs run `lmhead_tensor_parallel_size` 8 on DP8 TP4
/// decode engines (the TP = 1 requirement in ascend_config.py is oproj's).
#[test]
fn lmhead_tensor_parallel_divides_dp_at_any_tp() {
    // w4a8: GLM-5.1's w8a8 weights do not fit one A3 node at DP8 x TP2 or
    // DP16 x TP1 (`weights_fit`), which would hide the rule under test.
    let lm = |size: u64, dp: u64, tp: u64| {
        let mut v = mixed("glm_5_1_w4a8", "v0.23.0");
        v["topology"] = json!([{"role": "mixed", "count": 1, "dp": dp, "tp": tp}]);
        broken(&with_role(
            v,
            "mixed",
            json!({"additional_config": {
                "finegrained_tp_config": {"lmhead_tensor_parallel_size": size}
            }}),
        ))
    };
    assert_eq!(lm(4, 4, 4), BTreeSet::new());
    assert_eq!(lm(2, 8, 2), BTreeSet::new());
    assert_eq!(lm(8, 4, 4), only("lmhead_tensor_parallel"));
    assert_eq!(lm(3, 16, 1), only("lmhead_tensor_parallel"));
}

#[test]
fn eplb_values_are_checked_like_eplb_config() {
    let eplb = |e: Value| {
        broken(&with_role(
            mixed("deepseek_r1_0528_w8a8", "v0.23.0"),
            "mixed",
            json!({"additional_config": {"eplb_config": e}}),
        ))
    };
    assert_eq!(
        eplb(json!({
            "eplb_policy_type": 3,
            "expert_heat_collection_interval": 2048,
            "algorithm_execution_interval": 200,
            "num_redundant_experts": 16,
            "expert_map_path": "/maps/r1.json",
            "eplb_heat_collection_stage": "decode"
        })),
        BTreeSet::new()
    );
    for bad in [
        json!({"eplb_policy_type": 4}),
        json!({"eplb_heat_collection_stage": "both"}),
        json!({"algorithm_execution_interval": -1}),
        json!({"num_redundant_experts": "16"}),
        json!({"expert_map_path": "/maps/r1.yaml"}),
        json!({"expert_heat_interval": 600}),
        json!({"dynamic_eplb": "false"}),
        json!([1, 2]),
    ] {
        assert_eq!(eplb(bad.clone()), only("eplb_config_strict"), "{bad}");
    }
    // A typo gets a suggestion.
    let v = with_role(
        mixed("deepseek_r1_0528_w8a8", "v0.23.0"),
        "mixed",
        json!({"additional_config": {"eplb_config": {"eplb_policy_typ": 2}}}),
    );
    assert!(
        messages(&v, "eplb_config_strict")
            .iter()
            .any(|m| m.contains("did you mean `eplb_policy_type`")),
        "{:?}",
        messages(&v, "eplb_config_strict")
    );
}

#[test]
fn max_num_seqs_of_one_is_accepted() {
    let v = |n: u64| {
        broken(&with_role(
            mixed("qwen3_235b_a22b", "v0.23.0"),
            "mixed",
            json!({"max_num_seqs": n}),
        ))
    };
    assert_eq!(v(1), BTreeSet::new());
    assert_eq!(v(0), only("max_num_seqs_positive"));
}

#[test]
fn draft_methods_need_a_draft_in_the_table() {
    let spec = |model: &str, method: &str| {
        with_role(
            mixed(model, "v0.23.0"),
            "mixed",
            json!({"speculative": {"method": method, "tokens": 3}}),
        )
    };
    assert_eq!(
        broken(&spec("kimi_k2_7_code_w4a8", "dflash")),
        BTreeSet::new()
    );
    assert_eq!(
        broken(&spec("minimax_m2_5_w8a8_quarot", "eagle3")),
        BTreeSet::new()
    );
    let v = spec("kimi_k2_7_code_w4a8", "eagle3");
    assert_eq!(broken(&v), only("speculative_needs_draft"));
    assert!(messages(&v, "speculative_needs_draft")[0].contains("expected one of `dflash`"));
    // MTP weights are pointed to `mtp`.
    let v = spec("deepseek_r1_w8a8", "eagle3");
    assert!(messages(&v, "speculative_needs_draft")[0].contains("expected `mtp`"));
    // C8 weights run no eagle3 (MiniMax-M2.md L611-613), unlike the w8a8 build.
    assert_eq!(
        broken(&spec("minimax_m2_7_w8a8c8_quarot", "eagle3")),
        only("speculative_needs_draft")
    );
    assert_eq!(
        broken(&spec("minimax_m2_7_w8a8_quarot", "eagle3")),
        BTreeSet::new()
    );
    // Methods without a draft model are not this rule's business.
    assert_eq!(broken(&spec("qwen3_235b_a22b", "ngram")), BTreeSet::new());
    // And Kimi has no MTP layer.
    assert_eq!(
        broken(&spec("kimi_k2_5_w4a8", "mtp")),
        only("speculative_needs_mtp")
    );
}

#[test]
fn attention_keys_are_flagged_where_ignored() {
    let key = |model: &str, k: &str| {
        broken(&with_role(
            pd(model, "v0.23.0"),
            "decode",
            json!({"additional_config": { k: true }}),
        ))
    };
    assert_eq!(
        key("glm_5_1_w8a8c8", "enable_sparse_li_c8"),
        BTreeSet::new()
    );
    assert_eq!(
        key("deepseek_r1_0528_w8a8", "enable_mlapo"),
        BTreeSet::new()
    );
    assert_eq!(key("glm_5_1_w8a8", "enable_mlapo"), BTreeSet::new());
    assert_eq!(
        key("deepseek_r1_0528_w8a8", "enable_sparse_li_c8"),
        only("config_key_attention")
    );
    assert_eq!(
        key("qwen3_235b_a22b_w8a8", "enable_mlapo"),
        only("config_key_attention")
    );
}

mod context;
mod dsa;
mod graphs;
mod per_release;
mod serve_flags;

/// An `HCCL_BUFFSIZE` near `u64::MAX` megabytes on a TP x DP x EP rank
/// leaves no room for KV and is refused as such, never an overflow in the
/// HCCL reserve (the buffer is added to the TP and DP groups' reserve).
#[test]
fn a_huge_hccl_buffsize_is_refused_not_a_panic() {
    let v = with_role(
        pd("deepseek_r1_0528_w8a8", "v0.23.0"),
        "decode",
        json!({"env": [{"name": "HCCL_BUFFSIZE", "value": u64::MAX.to_string()}]}),
    );
    let b = broken(&v);
    assert!(
        b.contains("max_model_len_fits_kv") || b.contains("weights_fit"),
        "{b:?}"
    );
}
