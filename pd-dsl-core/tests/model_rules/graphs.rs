//! Rules on graph capture sizes with speculative decoding and sequence parallelism, whose answer follows the release's generated facts.

use super::*;

/// MTP 2 (decode step 3) on the TP4 decode engine with a full decode graph
/// and sequence parallelism (env `VLLM_ASCEND_ENABLE_FLASHCOMM1`): vLLM
/// cannot size graphs for both 3 and 4 where vllm-ascend hands it the TP
/// size (generated `sp_graph_alignment` `always`, SP read as the generated
/// `enable_sp` says), and not from v0.29.0rc1 (`never`); MTP 1 (step 2
/// divides 4), no SP, the V2 runner, or `full` on vLLM 0.18.0 (no separate
/// decode routine) start. Shared-expert DP turns SP on up to v0.25.1rc1,
/// not at v0.26.0rc1.
#[test]
fn speculative_steps_and_tp_align_under_sequence_parallelism() {
    let with =
        |image: &str, graph: &str, tokens: u64, env: &[(&str, &str)], config: serde_json::Value| {
            let mut v = pd("deepseek_v3_1_w8a8_mtp_quarot", image);
            v["serve"]["speculative"] = json!({"method": "mtp", "tokens": 1});
            let env: Vec<_> = env
                .iter()
                .map(|(n, x)| json!({"name": n, "value": x}))
                .collect();
            with_role(
                v,
                "decode",
                json!({
                    "graph": graph,
                    "speculative": {"method": "mtp", "tokens": tokens},
                    "env": env,
                    "additional_config": config,
                    "max_num_batched_tokens": 256, "max_num_seqs": 64
                }),
            )
        };
    let sp = [("VLLM_ASCEND_ENABLE_FLASHCOMM1", "1")];
    for image in ["v0.18.0", "v0.23.0", "v0.26.0rc1"] {
        let refused = with(image, "full_decode_only", 2, &sp, json!({}));
        assert_eq!(
            broken(&refused),
            only("speculative_sp_graph_alignment"),
            "{image}"
        );
        let m = messages(&refused, "speculative_sp_graph_alignment");
        assert!(
            m[0].contains("decode step 3")
                && m[0].contains("TP 4")
                && m[0].contains("vllm/config/compilation.py:"),
            "{m:?}"
        );
        assert_eq!(
            broken(&with(image, "full_decode_only", 1, &sp, json!({}))),
            BTreeSet::new(),
            "{image}"
        );
        assert_eq!(
            broken(&with(image, "full_decode_only", 2, &[], json!({}))),
            BTreeSet::new(),
            "{image}"
        );
        let v2 = [sp[0], ("VLLM_USE_V2_MODEL_RUNNER", "1")];
        assert!(
            !broken(&with(image, "full_decode_only", 2, &v2, json!({})))
                .contains("speculative_sp_graph_alignment"),
            "{image}"
        );
    }
    assert_eq!(
        broken(&with("v0.18.0", "full", 2, &sp, json!({}))),
        BTreeSet::new()
    );
    assert_eq!(
        broken(&with("v0.23.0", "full", 2, &sp, json!({}))),
        only("speculative_sp_graph_alignment")
    );
    assert_eq!(
        broken(&with("v0.29.0rc1", "full_decode_only", 2, &sp, json!({}))),
        BTreeSet::new()
    );
    let shared = json!({"enable_shared_expert_dp": true});
    assert_eq!(
        broken(&with("v0.23.0", "full_decode_only", 2, &[], shared.clone())),
        only("speculative_sp_graph_alignment")
    );
    assert_eq!(
        broken(&with("v0.26.0rc1", "full_decode_only", 2, &[], shared)),
        BTreeSet::new()
    );
}

/// Shared-expert DP with `expert_parallel` on the TP4 decode engine and a
/// full decode graph: typed capture sizes none of which 4 divides are
/// refused where the generated `tp_aligned_capture_sizes` lists the
/// requirement (v0.27.1rc1 on), not before; one multiple of 4, or no
/// shared-expert DP, starts.
#[test]
fn shared_expert_dp_needs_a_tp_aligned_capture_size() {
    let with = |image: &str, sizes: serde_json::Value, shared: bool| {
        let v = pd("deepseek_v3_1_w8a8_mtp_quarot", image);
        with_role(
            v,
            "decode",
            json!({
                "graph": "full_decode_only",
                "capture_sizes": sizes,
                "additional_config": {"enable_shared_expert_dp": shared}
            }),
        )
    };
    for image in ["v0.27.1rc1", "v0.30.0rc2"] {
        let refused = with(image, json!([3, 6, 9]), true);
        assert_eq!(
            broken(&refused),
            only("capture_sizes_tp_aligned"),
            "{image}"
        );
        let m = messages(&refused, "capture_sizes_tp_aligned");
        assert!(
            m[0].contains("3, 6, 9")
                && m[0].contains("TP 4")
                && m[0].contains("vllm_ascend/platform.py:"),
            "{m:?}"
        );
        assert_eq!(
            broken(&with(image, json!([3, 8]), true)),
            BTreeSet::new(),
            "{image}"
        );
        assert_eq!(
            broken(&with(image, json!([3, 6, 9]), false)),
            BTreeSet::new(),
            "{image}"
        );
    }
    assert_eq!(
        broken(&with("v0.26.0rc1", json!([3, 6, 9]), true)),
        BTreeSet::new()
    );
}

/// Capture sizes all below the decode step with a full decode graph: MTP 1
/// (step 2) and `capture_sizes: [1]` are refused on every image (vLLM's
/// `spec_decode_rounding`), `full` only from vLLM 0.20.2; a size of 2, the
/// V2 runner, or a `max_num_batched_tokens` below every size are not judged.
#[test]
fn a_capture_size_covers_the_decode_step() {
    let with = |image: &str, graph: &str, sizes: serde_json::Value, extra: serde_json::Value| {
        let mut block = json!({
            "graph": graph,
            "capture_sizes": sizes,
            "speculative": {"method": "mtp", "tokens": 1}
        });
        if let (Some(b), Some(e)) = (block.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        with_role(pd("deepseek_v3_1_w8a8_mtp_quarot", image), "decode", block)
    };
    for image in ["v0.18.0", "v0.23.0", "v0.30.0rc2"] {
        let refused = with(image, "full_decode_only", json!([1]), json!({}));
        assert_eq!(
            broken(&refused),
            only("capture_sizes_cover_decode_step"),
            "{image}"
        );
        let m = messages(&refused, "capture_sizes_cover_decode_step");
        assert!(
            m[0].contains("at least 2") && m[0].contains("vllm/config/compilation.py:"),
            "{m:?}"
        );
        assert_eq!(
            broken(&with(image, "full_decode_only", json!([1, 2]), json!({}))),
            BTreeSet::new(),
            "{image}"
        );
        let v2 = json!({"env": [{"name": "VLLM_USE_V2_MODEL_RUNNER", "value": "1"}]});
        assert!(
            !broken(&with(image, "full_decode_only", json!([1]), v2))
                .contains("capture_sizes_cover_decode_step"),
            "{image}"
        );
    }
    assert_eq!(
        broken(&with("v0.18.0", "full", json!([1]), json!({}))),
        BTreeSet::new()
    );
    assert_eq!(
        broken(&with("v0.23.0", "full", json!([1]), json!({}))),
        only("capture_sizes_cover_decode_step")
    );
    assert_eq!(
        broken(&with("v0.23.0", "piecewise", json!([1]), json!({}))),
        BTreeSet::new()
    );
}

/// Without typed capture sizes the engine lists the image's defaults
/// (`Release::default_capture_sizes`, checked against the released code by
/// tests/graph_sizes_oracle.rs): with `max_num_seqs` 1 and MTP 2 the
/// platform caps them at 1 x 3 = 3, vLLM's grid below 3 is 1, 2, and the
/// decode step 3 fits none, so every image up to v0.29.0rc1 refuses to
/// start; v0.30.0rc1 adds the cap itself (3) and starts. `max_num_seqs` 2
/// (cap 6: 1, 2, 4) starts everywhere, and so does MTP 1 (cap 2: 1, 2).
/// The message names the defaults, where they come from, and points at
/// `max_num_seqs`.
#[test]
fn default_capture_sizes_cover_the_decode_step() {
    let with = |image: &str, seqs: u64, tokens: u64| {
        let v = with_role(
            pd("deepseek_v3_1_w8a8_mtp_quarot", image),
            "decode",
            json!({
                "graph": "full_decode_only",
                "max_num_seqs": seqs,
                "speculative": {"method": "mtp", "tokens": tokens}
            }),
        );
        (broken(&v), messages(&v, "capture_sizes_cover_decode_step"))
    };
    for image in ["v0.18.0", "v0.23.0", "v0.27.1rc1", "v0.29.0rc1"] {
        let (rules, m) = with(image, 1, 2);
        assert_eq!(rules, only("capture_sizes_cover_decode_step"), "{image}");
        assert!(
            m[0].contains("no capture sizes, so the image's defaults 1, 2 ")
                && m[0].contains("`max_num_seqs` 1,")
                && m[0].contains("at least 3")
                && m[0].contains("vllm_ascend/platform.py:")
                && m[0].contains("vllm/config/vllm.py:"),
            "{image}: {m:?}"
        );
        assert_eq!(with(image, 2, 2).0, BTreeSet::new(), "{image}");
        assert_eq!(with(image, 1, 1).0, BTreeSet::new(), "{image}");
    }
    for image in ["v0.30.0rc1", "v0.30.0rc2"] {
        assert_eq!(with(image, 1, 2).0, BTreeSet::new(), "{image}");
    }
}

/// Typed capture sizes are what vLLM keeps of them: those at most a typed
/// `max_num_batched_tokens`. All above it (4096 with a batch of 2048) and
/// every image refuses to start (`capture_sizes_within_batched_tokens`:
/// vLLM's assert on the largest size when vllm-ascend sizes the graphs
/// again); one at most the batch starts. With MTP 1, sizes 1 and 100 and a
/// batch of 50 keep only 1, below the decode step 2
/// (`capture_sizes_cover_decode_step`, the message naming what is kept).
#[test]
fn typed_capture_sizes_are_those_within_the_batch() {
    let with = |image: &str, sizes: serde_json::Value, batch: u64, tokens: u64| {
        let mut block = json!({
            "graph": "full_decode_only",
            "capture_sizes": sizes,
            "max_num_seqs": 4,
            "max_num_batched_tokens": batch,
        });
        if tokens > 0 {
            block["speculative"] = json!({"method": "mtp", "tokens": tokens});
        }
        with_role(pd("deepseek_v3_1_w8a8_mtp_quarot", image), "decode", block)
    };
    let rule = "capture_sizes_within_batched_tokens";
    for image in ["v0.18.0", "v0.23.0", "v0.27.1rc1", "v0.30.0rc2"] {
        let refused = with(image, json!([4096]), 2048, 0);
        assert_eq!(broken(&refused), only(rule), "{image}");
        let m = messages(&refused, rule);
        assert!(
            m[0].contains("found capture sizes 4096 on decode with `max_num_batched_tokens` 2048")
                && m[0].contains("vllm/config/vllm.py:")
                && m[0].contains("Maximum cudagraph size"),
            "{image}: {m:?}"
        );
        assert_eq!(
            broken(&with(image, json!([1024, 4096]), 2048, 0)),
            BTreeSet::new(),
            "{image}"
        );
        let step = with(image, json!([1, 100]), 50, 1);
        assert_eq!(
            broken(&step),
            only("capture_sizes_cover_decode_step"),
            "{image}"
        );
        let m = messages(&step, "capture_sizes_cover_decode_step");
        assert!(
            m[0].contains(
                "capture sizes 1, 100 (vLLM keeps those at most `max_num_batched_tokens` 50: 1)"
            ),
            "{image}: {m:?}"
        );
        assert_eq!(
            broken(&with(image, json!([2, 100]), 50, 1)),
            BTreeSet::new(),
            "{image}"
        );
    }
}

/// Shared-expert DP on the TP4 decode engine without typed capture sizes:
/// with `max_num_seqs` 2 and no speculation the defaults are 1, 2, none of
/// which 4 divides, and v0.27.1rc1 on refuses to start; `max_num_seqs` 4
/// (defaults 1, 2, 4) starts.
#[test]
fn default_capture_sizes_hold_a_tp_multiple_under_shared_expert_dp() {
    let with = |image: &str, seqs: u64| {
        let v = with_role(
            pd("deepseek_v3_1_w8a8_mtp_quarot", image),
            "decode",
            json!({
                "graph": "full_decode_only",
                "max_num_seqs": seqs,
                "additional_config": {"enable_shared_expert_dp": true}
            }),
        );
        (broken(&v), messages(&v, "capture_sizes_tp_aligned"))
    };
    for image in ["v0.27.1rc1", "v0.30.0rc2"] {
        let (rules, m) = with(image, 2);
        assert_eq!(rules, only("capture_sizes_tp_aligned"), "{image}");
        assert!(
            m[0].contains("the image's defaults 1, 2 ") && m[0].contains("multiple of 4"),
            "{image}: {m:?}"
        );
        assert_eq!(with(image, 4).0, BTreeSet::new(), "{image}");
    }
    assert_eq!(with("v0.26.0rc1", 2).0, BTreeSet::new());
}

/// From v0.27.1rc1 `enable_sp()` is vLLM's `use_sequence_parallel_moe`, as
/// the generated `sp_moe` (vllm-ascend) and `sequence_parallel_moe` (vLLM)
/// decide it: MTP 2 on the TP4 decode engine with a full decode graph is
/// refused with FlashComm1 (env or key) or `enable_dsa_cp`, which
/// `AscendConfig` reads before it drops the key on a model without the
/// indexer, with `expert_parallel` and an SP all2all backend (the default,
/// or `naive`, which vLLM swaps for it); it starts without the switch,
/// without expert parallelism, with `--all2all-backend flashinfer_all2allv`,
/// or with capture sizes all multiples of lcm(3, 4) (`unless_sizes_aligned`).
/// DP 1 turns it off only at v0.28.0rc1, the release without vllm-ascend's
/// patch dropping vLLM's `data_parallel_size > 1`.
#[test]
fn sequence_parallel_moe_decides_the_graph_alignment_from_v0_27_1rc1() {
    let with = |image: &str, dp: u64, block: serde_json::Value| {
        let mut v = pd("deepseek_v3_1_w8a8_mtp_quarot", image);
        v["topology"][1]["dp"] = json!(dp);
        let mut b = json!({
            "graph": "full_decode_only",
            "speculative": {"method": "mtp", "tokens": 2},
            "max_num_batched_tokens": 256, "max_num_seqs": 64
        });
        for (k, x) in block.as_object().into_iter().flatten() {
            b[k] = x.clone();
        }
        with_role(v, "decode", b)
    };
    let env = json!({"env": [{"name": "VLLM_ASCEND_ENABLE_FLASHCOMM1", "value": "1"}]});
    let rule = "speculative_sp_graph_alignment";
    for image in ["v0.27.1rc1", "v0.28.0rc1"] {
        let refused = with(image, 4, env.clone());
        assert_eq!(broken(&refused), only(rule), "{image}");
        let m = messages(&refused, rule);
        assert!(
            m[0].contains("decode step 3") && m[0].contains("TP 4"),
            "{m:?}"
        );
        for on in [
            json!({"env": [{"name": "VLLM_ASCEND_ENABLE_FLASHCOMM1", "value": " True "}]}),
            json!({"additional_config": {"enable_flashcomm1": true}}),
            json!({"additional_config": {"enable_flashcomm1": "yes"}}),
            json!({"env": env["env"], "flags": [{"name": "--all2all-backend", "value": "naive"}]}),
        ] {
            assert_eq!(
                broken(&with(image, 4, on.clone())),
                only(rule),
                "{image} {on}"
            );
        }
        let dsa = broken(&with(
            image,
            4,
            json!({"additional_config": {"enable_dsa_cp": true}}),
        ));
        assert!(
            dsa.contains(rule) && dsa.contains("dsa_cp_needs_indexer"),
            "{image} {dsa:?}"
        );
        for off in [
            json!({}),
            json!({"env": [{"name": "VLLM_ASCEND_ENABLE_FLASHCOMM1", "value": "2"}]}),
            json!({"additional_config": {"enable_flashcomm1": false}}),
            json!({"env": env["env"], "flags": [{"name": "--all2all-backend", "value": "flashinfer_all2allv"}]}),
            json!({"env": env["env"], "capture_sizes": [12, 24]}),
        ] {
            // (FlashComm1 with a backend outside the property's is also
            // `sequence_parallel_dropped`, a convention.)
            let want = if off.get("flags").is_some() {
                only("sequence_parallel_dropped")
            } else {
                BTreeSet::new()
            };
            assert_eq!(broken(&with(image, 4, off.clone())), want, "{image} {off}");
        }
        let mut no_ep = with(image, 4, env.clone());
        no_ep["serve"]["expert_parallel"] = json!(false);
        assert!(!broken(&no_ep).contains(rule), "{image}");
    }
    // (DP 1 puts the experts on 4 NPUs, which `weights_fit` refuses too.)
    assert!(broken(&with("v0.27.1rc1", 1, env.clone())).contains(rule));
    assert!(!broken(&with("v0.28.0rc1", 1, env.clone())).contains(rule));
}

/// The `enable_sp()` and `enable_dsa_cp` terms of the TP-aligned capture
/// size requirement (v0.27.1rc1 on; `enable_sp()` alone before): FlashComm1 with `expert_parallel` on
/// the TP4 decode engine refuses capture sizes none of which 4 divides,
/// saying sequence-parallel MoE and how it is on; without FlashComm1 or with
/// a backend outside the property's, it starts.
#[test]
fn sequence_parallel_moe_needs_a_tp_aligned_capture_size() {
    let with = |image: &str, block: serde_json::Value| {
        let v = pd("deepseek_v3_1_w8a8_mtp_quarot", image);
        let mut b = json!({"graph": "full_decode_only", "capture_sizes": [3, 6, 9]});
        for (k, x) in block.as_object().into_iter().flatten() {
            b[k] = x.clone();
        }
        with_role(v, "decode", b)
    };
    let rule = "capture_sizes_tp_aligned";
    let fc = json!({"additional_config": {"enable_flashcomm1": true}});
    for image in ["v0.27.1rc1", "v0.28.0rc1", "v0.30.0rc2"] {
        let refused = with(image, fc.clone());
        assert_eq!(broken(&refused), only(rule), "{image}");
        let m = messages(&refused, rule);
        assert!(
            m[0].contains("sequence-parallel MoE on")
                && m[0].contains("additional_config.enable_flashcomm1: true")
                && m[0].contains("patch_parallel_config.py") == (image != "v0.28.0rc1"),
            "{m:?}"
        );
        assert_eq!(broken(&with(image, json!({}))), BTreeSet::new(), "{image}");
        let other = json!({"additional_config": {"enable_flashcomm1": true}, "flags": [{"name": "--all2all-backend", "value": "flashinfer_all2allv"}]});
        assert_eq!(
            broken(&with(image, other)),
            only("sequence_parallel_dropped"),
            "{image}"
        );
    }
    // Up to v0.26.0rc1 `check_and_update_config` asserts the same under
    // `enable_sp()`, which reads the key there.
    let refused = with("v0.26.0rc1", fc);
    assert_eq!(broken(&refused), only(rule));
    assert!(
        messages(&refused, rule)[0].contains("vllm_ascend/platform.py:513"),
        "{:?}",
        messages(&refused, rule)
    );
}

/// FlashComm1 asked for where sequence-parallel MoE cannot run is a
/// convention finding from v0.27.1rc1 (`sequence_parallel_dropped`): on a
/// TP1 decode engine, without `expert_parallel`, with a backend outside the
/// property's, or (at v0.28.0rc1 only) at DP 1; the message names what is
/// unmet. Where it runs, or before v0.27.1rc1, nothing is said.
#[test]
fn flashcomm1_where_sequence_parallel_moe_cannot_run_is_named() {
    let with = |image: &str, dp: u64, tp: u64, ep: bool, block: serde_json::Value| {
        let mut v = pd("qwen3_235b_a22b_w8a8", image);
        v["topology"][1]["dp"] = json!(dp);
        v["topology"][1]["tp"] = json!(tp);
        v["serve"]["expert_parallel"] = json!(ep);
        with_role(v, "decode", block)
    };
    let rule = "sequence_parallel_dropped";
    let fc = json!({"env": [{"name": "VLLM_ASCEND_ENABLE_FLASHCOMM1", "value": "1"}]});
    for image in ["v0.27.1rc1", "v0.28.0rc1", "v0.30.0rc2"] {
        let tp1 = with(image, 16, 1, true, fc.clone());
        assert!(broken(&tp1).contains(rule), "{image}");
        let m = messages(&tp1, rule);
        assert!(
            m[0].contains("env `VLLM_ASCEND_ENABLE_FLASHCOMM1`")
                && m[0].contains("TP 1 (needs TP > 1)"),
            "{m:?}"
        );
        let no_ep = messages(&with(image, 4, 4, false, fc.clone()), rule);
        assert!(
            no_ep
                .first()
                .is_some_and(|m| m.contains("`expert_parallel`")),
            "{image} {no_ep:?}"
        );
        let mut other = fc.clone();
        other["flags"] = json!([{"name": "--all2all-backend", "value": "flashinfer_all2allv"}]);
        let backend = messages(&with(image, 4, 4, true, other), rule);
        assert!(
            backend
                .first()
                .is_some_and(|m| m.contains("all2all backend `flashinfer_all2allv`")),
            "{image} {backend:?}"
        );
        assert!(
            !broken(&with(image, 4, 4, true, fc.clone())).contains(rule),
            "{image}"
        );
        assert!(
            !broken(&with(image, 16, 1, true, json!({}))).contains(rule),
            "{image}"
        );
    }
    // DSA-CP asked for on an indexer model without expert parallelism: both
    // are dropped, and the message says so.
    let mut dsa = pd("deepseek_v3_2_w8a8", "v0.30.0rc2");
    dsa["serve"]["expert_parallel"] = json!(false);
    let dsa = with_role(
        dsa,
        "prefill",
        json!({"additional_config": {"enable_dsa_cp": true}}),
    );
    let m = messages(&dsa, rule);
    assert!(
        m.first()
            .is_some_and(|m| m.contains("drops DSA-CP") && m.contains("`expert_parallel`")),
        "{m:?}"
    );
    let m = messages(&with("v0.30.0rc2", 16, 1, true, fc.clone()), rule);
    assert!(m.first().is_some_and(|m| !m.contains("DSA-CP")), "{m:?}");
    let dp1 = messages(&with("v0.28.0rc1", 1, 4, true, fc.clone()), rule);
    assert!(
        dp1.first()
            .is_some_and(|m| m.contains("DP 1 (needs DP > 1)")),
        "{dp1:?}"
    );
    assert!(messages(&with("v0.27.1rc1", 1, 4, true, fc.clone()), rule).is_empty());
    assert!(!broken(&with("v0.26.0rc1", 16, 1, true, fc)).contains(rule));
}

/// From v0.29.0rc1 vllm-ascend pre-aligns a full decode graph's capture
/// sizes to lcm(decode step, TP) under sequence parallelism (generated
/// `sp_graph_alignment` `never`): MTP 2 (step 3) at TP4 with FlashComm1 and
/// sizes [4, 8], which hold a step and a multiple of TP, rounds to 12 and
/// is refused (`capture_sizes_cover_decode_step`, the message naming 12);
/// a size of 12, no FlashComm1, or no expert parallelism (SP MoE off)
/// starts.
#[test]
fn sequence_parallel_rounds_capture_sizes_to_the_lcm_from_v0_29_0rc1() {
    let with = |image: &str, sizes: serde_json::Value, fc: bool, ep: bool| {
        let mut v = pd("deepseek_v3_1_w8a8_mtp_quarot", image);
        v["serve"]["expert_parallel"] = json!(ep);
        let env: Vec<_> = fc
            .then(|| json!({"name": "VLLM_ASCEND_ENABLE_FLASHCOMM1", "value": "1"}))
            .into_iter()
            .collect();
        with_role(
            v,
            "decode",
            json!({
                "graph": "full_decode_only",
                "capture_sizes": sizes,
                "speculative": {"method": "mtp", "tokens": 2},
                "env": env,
                "max_num_batched_tokens": 256, "max_num_seqs": 64
            }),
        )
    };
    let rule = "capture_sizes_cover_decode_step";
    for image in ["v0.29.0rc1", "v0.30.0rc2"] {
        // (Sizes below 12 that hold a multiple of 4 cannot all be multiples
        // of 3, so the convention `capture_sizes_speculative` speaks too.)
        let refused = with(image, json!([4, 8]), true, true);
        assert_eq!(
            broken(&refused),
            BTreeSet::from([rule, "capture_sizes_speculative"]),
            "{image}"
        );
        let m = messages(&refused, rule);
        assert!(
            m[0].contains("at least 12 (the decode step 3") && m[0].contains("TP 4"),
            "{m:?}"
        );
        assert!(
            !broken(&with(image, json!([4, 12]), true, true)).contains(rule),
            "{image}"
        );
        assert!(
            !broken(&with(image, json!([4, 8]), false, true)).contains(rule),
            "{image}"
        );
        assert!(
            !broken(&with(image, json!([4, 8]), true, false)).contains(rule),
            "{image}"
        );
    }
    // Up to v0.28.0rc1 the runner hands vLLM the TP size, which refuses the
    // misaligned step first (`speculative_sp_graph_alignment`).
    let older = broken(&with("v0.27.1rc1", json!([4, 8]), true, true));
    assert!(
        older.contains("speculative_sp_graph_alignment") && !older.contains(rule),
        "{older:?}"
    );
}

/// A huge token count under sequence parallelism is refused by the token
/// limit, never an overflow in the graph sizing (a fuzz find: lcm(step, TP)
/// of `u64::MAX` tokens).
#[test]
fn a_huge_token_count_under_sequence_parallelism_is_refused_not_a_panic() {
    for image in ["v0.27.1rc1", "v0.30.0rc2"] {
        let v = pd("deepseek_v3_1_w8a8_mtp_quarot", image);
        let v = with_role(
            v,
            "decode",
            json!({
                "graph": "full_decode_only",
                "capture_sizes": [4, 8],
                "speculative": {"method": "mtp", "tokens": u64::MAX},
                "env": [{"name": "VLLM_ASCEND_ENABLE_FLASHCOMM1", "value": "1"}]
            }),
        );
        assert!(broken(&v).contains("speculative_token_limit"), "{image}");
    }
}

/// Up to v0.26.0rc1 vllm-ascend asserts TP above 1 and expert parallelism
/// on every engine `enable_sp()` turns on (`sequence_parallel_needs_tp_ep`,
/// the generated `sp_asserts`): FlashComm1 by env on a TP1 decode engine,
/// or on the TP4 one without `expert_parallel`, is refused, naming what is
/// missing; the TP4 engine with expert parallelism starts. From v0.27.1rc1
/// the same layouts only lose FlashComm1 (`sequence_parallel_dropped`).
#[test]
fn sequence_parallel_needs_tp_and_expert_parallelism_up_to_v0_26_0rc1() {
    let rule = "sequence_parallel_needs_tp_ep";
    let with = |image: &str, tp: u32, ep: bool| {
        let mut v = with_role(
            pd("deepseek_r1_0528_w8a8", image),
            "decode",
            json!({"env": [{"name": "VLLM_ASCEND_ENABLE_FLASHCOMM1", "value": "1"}]}),
        );
        v["topology"][1] = json!({"role": "decode", "count": 1, "dp": 16 / tp, "tp": tp});
        v["serve"]["expert_parallel"] = json!(ep);
        v
    };
    for image in ["v0.20.2rc1", "v0.23.0", "v0.26.0rc1"] {
        let tp1 = with(image, 1, true);
        assert!(broken(&tp1).contains(rule), "{image}: {:?}", broken(&tp1));
        let m = messages(&tp1, rule);
        assert!(
            m[0].contains("TP above 1 (this engine is TP 1; vllm_ascend/platform.py:")
                && !m[0].contains("expert_parallel: true"),
            "{m:?}"
        );
        let no_ep = messages(&with(image, 4, false), rule);
        assert!(
            no_ep.len() == 1 && no_ep[0].contains("`expert_parallel: true` on this MoE model"),
            "{image}: {no_ep:?}"
        );
        assert!(!broken(&with(image, 4, true)).contains(rule), "{image}");
    }
    for image in ["v0.27.1rc1", "v0.30.0rc2"] {
        assert!(!broken(&with(image, 1, true)).contains(rule), "{image}");
    }
}
