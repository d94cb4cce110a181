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
            pd("glm_5_1_w8a8", "v0.23.0"),
            "decode",
            rs.clone()
        )),
        BTreeSet::new()
    );
    assert_eq!(
        broken(&with_role(mixed("glm_5_1_w8a8", "v0.23.0"), "mixed", rs)),
        BTreeSet::new()
    );
    let mut v = mixed("glm_5_1_w8a8", "v0.23.0");
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
    let lm = |size: u64, dp: u64, tp: u64| {
        let mut v = mixed("glm_5_1_w8a8", "v0.23.0");
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

#[test]
fn dsa_cp_is_flagged_without_an_indexer() {
    let cp = |model: &str, value: Value| {
        with_role(
            pd(model, "v0.23.0"),
            "prefill",
            json!({"additional_config": {"enable_dsa_cp": value}}),
        )
    };
    // Indexer models (DeepSeek-V3.2, GLM-5.x, DeepSeek-V4) read it.
    for model in [
        "deepseek_v3_2_w8a8",
        "glm_5_1_w8a8",
        "deepseek_v4_pro_w4a8_mtp",
    ] {
        assert!(
            !broken(&cp(model, json!(true))).contains("dsa_cp_needs_indexer"),
            "{model}"
        );
    }
    // MLA without an indexer and GQA ignore it.
    for (model, attention) in [
        ("deepseek_r1_0528_w8a8", "MLA"),
        ("qwen3_235b_a22b_w8a8", "GQA"),
    ] {
        let v = cp(model, json!(true));
        assert_eq!(broken(&v), only("dsa_cp_needs_indexer"), "{model}");
        let m = messages(&v, "dsa_cp_needs_indexer");
        assert!(m[0].contains(&format!("({attention} attention)")), "{m:?}");
        assert!(m[0].contains("`index_topk`"), "{m:?}");
        // Turning it off says nothing.
        assert_eq!(broken(&cp(model, json!(false))), BTreeSet::new(), "{model}");
    }
    // It is a convention: a reason acknowledges it.
    let mut v = cp("deepseek_r1_0528_w8a8", json!(true));
    v["allow"] = json!([{"rule": "dsa_cp_needs_indexer", "reason": "shared role block"}]);
    assert_eq!(broken(&v), BTreeSet::new());
}

#[test]
fn dsa_cp_needs_sequence_parallelism_where_the_image_checks_it() {
    // `enable_dsa_cp` on the prefill role of an indexer model (P is TP 8),
    // plus `extra` settings of that role.
    let cp = |model: &str, image: &str, extra: Value| {
        let mut block = json!({"additional_config": {"enable_dsa_cp": true}});
        if let Value::Object(m) = extra {
            for (k, v) in m {
                if k == "additional_config" {
                    for (ck, cv) in v.as_object().cloned().unwrap_or_default() {
                        block["additional_config"][ck] = cv;
                    }
                } else {
                    block[k] = v;
                }
            }
        }
        with_role(pd(model, image), "prefill", block)
    };
    let env =
        |value: &str| json!({"env": [{"name": "VLLM_ASCEND_ENABLE_FLASHCOMM1", "value": value}]});
    let checking = [
        "v0.20.2rc1",
        "v0.21.0rc1",
        "v0.22.1rc1",
        "v0.23.0rc1",
        "v0.23.0",
        "v0.24.0rc1",
        "v0.25.1rc1",
    ];
    for image in checking {
        for model in [
            "deepseek_v3_2_w8a8",
            "glm_5_1_w8a8",
            "deepseek_v4_pro_w4a8_mtp",
        ] {
            // What the layout breaks without `enable_dsa_cp` (DeepSeek-V4
            // through the V1 connector on early images breaks
            // `connector_hybrid_kv`, which is not this rule).
            let base = broken(&pd(model, image));
            assert!(!base.contains("dsa_cp_needs_sp"), "{model} {image}");
            let mut with_rule = base.clone();
            with_rule.insert("dsa_cp_needs_sp");
            // Without SP the engine refuses to start.
            let v = cp(model, image, json!({}));
            assert_eq!(broken(&v), with_rule, "{model} {image}");
            let m = messages(&v, "dsa_cp_needs_sp");
            assert!(
                m[0].contains(&format!("image `{image}` refuses to start")),
                "{m:?}"
            );
            assert!(m[0].contains("DSA CP requires SP to be enabled"), "{m:?}");
            assert!(m[0].contains("`VLLM_ASCEND_ENABLE_FLASHCOMM1: 1`"), "{m:?}");
            // Each way of turning SP on is accepted.
            for on in [
                json!({"additional_config": {"enable_flashcomm1": true}}),
                env("1"),
                json!({"additional_config": {"enable_shared_expert_dp": true}, "expert_parallel": true}),
            ] {
                assert_eq!(
                    broken(&cp(model, image, on.clone())),
                    base,
                    "{model} {image} {on}"
                );
            }
        }
    }
    let model = "deepseek_v3_2_w8a8";
    // The ways that look like SP but are not.
    for off in [
        // `0` is off.
        env("0"),
        json!({"additional_config": {"enable_flashcomm1": false}}),
        // The key wins over the env (utils.py `enable_sp`).
        {
            let mut v = env("1");
            v["additional_config"] = json!({"enable_flashcomm1": false});
            v
        },
    ] {
        assert_eq!(
            broken(&cp(model, "v0.23.0", off.clone())),
            only("dsa_cp_needs_sp"),
            "{off}"
        );
    }
    // Shared-expert DP needs expert parallelism (the routed experts still
    // fit without it: vLLM shards them over every rank of the DP group).
    let off =
        json!({"additional_config": {"enable_shared_expert_dp": true}, "expert_parallel": false});
    assert_eq!(broken(&cp(model, "v0.23.0", off)), only("dsa_cp_needs_sp"));
    // Shared-expert DP needs TP > 1: decode at TP 1.
    let mut v = pd(model, "v0.23.0");
    v["topology"][1]["dp"] = json!(16);
    v["topology"][1]["tp"] = json!(1);
    v["roles"] = json!({"decode": {
        "additional_config": {"enable_dsa_cp": true, "enable_shared_expert_dp": true},
        "expert_parallel": true
    }});
    assert!(broken(&v).contains("dsa_cp_needs_sp"), "{:?}", broken(&v));
    v["topology"][1]["dp"] = json!(4);
    v["topology"][1]["tp"] = json!(4);
    assert!(!broken(&v).contains("dsa_cp_needs_sp"), "{:?}", broken(&v));
    // Turning DSA CP off says nothing.
    let mut v = cp(model, "v0.23.0", json!({}));
    v["roles"]["prefill"]["additional_config"]["enable_dsa_cp"] = json!(false);
    assert_eq!(broken(&v), BTreeSet::new());
    // Images that do not check it: v0.18.0 and v0.19.1rc1 do not read the
    // key (another rule says so), and say nothing about SP.
    for image in ["v0.18.0", "v0.19.1rc1"] {
        assert!(
            !broken(&cp(model, image, json!({}))).contains("dsa_cp_needs_sp"),
            "{image}"
        );
    }
    // A model without the indexer never runs DSA CP: only the indexer rule.
    assert_eq!(
        broken(&cp("deepseek_r1_0528_w8a8", "v0.23.0", json!({}))),
        only("dsa_cp_needs_indexer")
    );
    // The engine does not start: no reason acknowledges it.
    let mut v = cp(model, "v0.23.0", json!({}));
    v["allow"] = json!([{"rule": "dsa_cp_needs_sp", "reason": "tried"}]);
    assert!(broken(&v).contains("dsa_cp_needs_sp"));
}

#[test]
fn c8_kv_of_gqa_models_moves_layerwise() {
    let mut v = pd("minimax_m2_7_w8a8c8_quarot", "v0.23.0");
    assert_eq!(broken(&v), only("c8_kv_gqa_connector"));
    v["connector"]["kind"] = json!("mooncake_layerwise");
    v["proxy"] = json!({"port": 1999, "script": "layerwise"});
    assert_eq!(broken(&v), BTreeSet::new());
    // Images before the check transfer garbage silently: still an error.
    let old = pd("minimax_m2_7_w8a8c8_quarot", "v0.22.1rc1");
    assert!(messages(&old, "c8_kv_gqa_connector")[0].contains("silent corruption"));
    // C8 weights of MLA/DSA models and plain GQA weights are fine over V1.
    assert_eq!(broken(&pd("glm_5_1_w8a8c8", "v0.23.0")), BTreeSet::new());
    assert_eq!(
        broken(&pd("minimax_m2_7_w8a8_quarot", "v0.23.0")),
        BTreeSet::new()
    );
}

/// `mlapo_decode_only` is about the MLA backend: the SFA backend of DSA
/// models takes MLAPO on every role at every image (sfa_v1.py), and 950DT
/// is decode-only only at v0.18.0 (no A5 branch in `enabling_mlapo`).
#[test]
fn mlapo_decode_only_is_for_mla_models() {
    let prefill_mlapo = |model: &str, image: &str| {
        broken(&with_role(
            pd(model, image),
            "prefill",
            json!({"additional_config": {"enable_mlapo": true}}),
        ))
    };
    assert_eq!(
        prefill_mlapo("deepseek_r1_0528_w8a8", "v0.23.0"),
        only("mlapo_decode_only")
    );
    assert_eq!(
        prefill_mlapo("deepseek_r1_0528_w8a8", "v0.30.0rc2"),
        only("mlapo_decode_only")
    );
    for image in ["v0.20.2rc1", "v0.23.0", "v0.26.0rc1", "v0.30.0rc2"] {
        assert_eq!(
            prefill_mlapo("deepseek_v3_2_w8a8", image),
            BTreeSet::new(),
            "{image}"
        );
        assert_eq!(
            prefill_mlapo("glm_5_1_w8a8", image),
            BTreeSet::new(),
            "{image}"
        );
    }
    // The key is not read before v0.20.2rc1: ignored there, not decode-only.
    assert_eq!(
        prefill_mlapo("deepseek_r1_0528_w8a8", "v0.19.1rc1"),
        only("unknown_additional_config_key")
    );
    // The env switch counts only where vllm-ascend reads it (to v0.26.0rc1).
    let env_mlapo = |image: &str| {
        broken(&with_role(
            pd("deepseek_r1_0528_w8a8", image),
            "prefill",
            json!({"env": [{"name": "VLLM_ASCEND_ENABLE_MLAPO", "value": "1"}]}),
        ))
    };
    assert_eq!(env_mlapo("v0.26.0rc1"), only("mlapo_decode_only"));
    assert_eq!(env_mlapo("v0.27.1rc1"), only("dead_env_toggle"));
}

/// `dsa_cp_needs_sp` holds where utils.py raises: v0.20.2rc1 to v0.26.0rc1.
#[test]
fn dsa_cp_needs_sp_follows_the_releases_that_raise() {
    let dsa_cp = |image: &str| {
        broken(&with_role(
            pd("deepseek_v3_2_w8a8", image),
            "prefill",
            json!({"additional_config": {"enable_dsa_cp": true},
                   "env": [{"name": "VLLM_ASCEND_ENABLE_FLASHCOMM1", "value": "0"}]}),
        ))
    };
    for image in ["v0.20.2rc1", "v0.23.0", "v0.25.1rc1", "v0.26.0rc1"] {
        assert_eq!(dsa_cp(image), only("dsa_cp_needs_sp"), "{image}");
    }
    for image in [
        "v0.27.1rc1",
        "v0.28.0rc1",
        "v0.29.0rc1",
        "v0.30.0rc1",
        "v0.30.0rc2",
    ] {
        assert_eq!(dsa_cp(image), BTreeSet::new(), "{image}");
    }
}

/// The sparse C8 keys: `enable_sparse_sfa_c8` / `enable_sparse_li_c8` where
/// the release reads them (the v0.23.0 branch and from v0.26.0rc1), and
/// `enable_sparse_c8` elsewhere; the generated key tables decide.
#[test]
fn sparse_c8_keys_follow_the_generated_tables() {
    let keys = |image: &str, cfg: Value| {
        broken(&with_role(
            pd("glm_5_2_w8a8c8", image),
            "decode",
            json!({ "additional_config": cfg }),
        ))
    };
    let split = json!({"enable_sparse_sfa_c8": true, "enable_sparse_li_c8": true});
    let joint = json!({"enable_sparse_c8": true});
    for image in ["v0.23.0rc1", "v0.23.0", "v0.26.0rc1", "v0.30.0rc2"] {
        assert_eq!(keys(image, split.clone()), BTreeSet::new(), "{image}");
        assert_eq!(
            keys(image, joint.clone()),
            only("unknown_additional_config_key"),
            "{image}"
        );
    }
    for image in ["v0.22.1rc1", "v0.24.0rc1", "v0.25.1rc1"] {
        assert_eq!(keys(image, joint.clone()), BTreeSet::new(), "{image}");
        assert_eq!(
            keys(image, split.clone()),
            only("unknown_additional_config_key"),
            "{image}"
        );
    }
    let m = messages(
        &with_role(
            pd("glm_5_2_w8a8c8", "v0.25.1rc1"),
            "decode",
            json!({"additional_config": {"enable_sparse_li_c8": true}}),
        ),
        "unknown_additional_config_key",
    );
    assert_eq!(
        m,
        [
            "found `additional_config.enable_sparse_li_c8` on image `v0.25.1rc1`, expected a key that image reads: it is read by v0.23.0rc1, v0.23.0 and v0.26.0rc1 to v0.30.0rc2; this image reads `enable_sparse_c8` instead; it is silently ignored; acknowledge it with `allow(unknown_additional_config_key, \"reason\")` if intended"
        ]
    );
}

/// Variables read outside vllm-ascend are not dead toggles.
#[test]
fn env_read_by_torch_npu_or_mooncake_is_not_dead() {
    let env = |image: &str, name: &str| {
        broken(&with_role(
            pd("deepseek_r1_0528_w8a8", image),
            "decode",
            json!({"env": [{"name": name, "value": "1"}]}),
        ))
    };
    for image in ["v0.18.0", "v0.21.0rc1", "v0.23.0", "v0.30.0rc2"] {
        assert_eq!(env(image, "ACL_OP_INIT_MODE"), BTreeSet::new(), "{image}");
        assert_eq!(env(image, "ASCEND_BUFFER_POOL"), BTreeSet::new(), "{image}");
        assert_eq!(
            env(image, "ASCEND_A3_ENABLE"),
            only("dead_env_toggle"),
            "{image}"
        );
    }
    assert_eq!(
        env("v0.20.2rc1", "VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL"),
        BTreeSet::new()
    );
    assert_eq!(
        env("v0.21.0rc1", "VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL"),
        only("dead_env_toggle")
    );
}
