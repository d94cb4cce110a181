//! DSA context parallelism and C8 KV of GQA models.

use super::*;

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
    // At v0.26.0rc1 `enable_sp()` no longer reads shared-expert DP (the
    // generated `enable_sp`: utils.py @v0.26.0rc1 L861 keeps the argument
    // "for compatibility" only), so it does not turn SP on there, and the
    // message offers only what that image reads.
    let base = broken(&pd(model, "v0.26.0rc1"));
    let shared =
        json!({"additional_config": {"enable_shared_expert_dp": true}, "expert_parallel": true});
    let v = cp(model, "v0.26.0rc1", shared.clone());
    let mut with_rule = base.clone();
    with_rule.insert("dsa_cp_needs_sp");
    assert_eq!(broken(&v), with_rule);
    let m = messages(&v, "dsa_cp_needs_sp");
    assert!(
        m[0].contains("env `VLLM_ASCEND_ENABLE_FLASHCOMM1: 1`")
            && !m[0].contains("enable_shared_expert_dp"),
        "{m:?}"
    );
    assert_eq!(broken(&cp(model, "v0.26.0rc1", env("1"))), base);
    assert!(!broken(&cp(model, "v0.25.1rc1", shared)).contains("dsa_cp_needs_sp"));
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
