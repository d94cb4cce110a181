//! Rules whose answer follows the release: MLAPO's backends, DSA CP's SP check, the sparse C8 keys, env read outside vllm-ascend.

use super::*;

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

/// DeepSeek-V4.1 at v0.30.0rc1/rc2: on 950DT (A5, the only profile with the
/// packed V4.1 cache) every engine needs the V2 model runner, on A3 it does
/// not; and Engram takes TP 1, 2, 4 or 8 on any hardware. The releases
/// before have neither check (the facts' `v2_runner_required` is empty and
/// `engram_tp` null at v0.29.0rc1).
#[test]
fn v41_needs_the_v2_runner_on_a5_and_an_engram_tp_size() {
    let v41 = |hardware: &str, image: &str, prefill_tp: u32| {
        let mut v = pd("deepseek_v4_1_flash_w8a8", image);
        v["hardware"] = json!(hardware);
        // kv ports above the ADXL range: 20000 + 1000 x NPUs per node
        let kv = if hardware == "a3" { 36100 } else { 30000 };
        v["connector"] =
            json!({"kind": "mooncake_hybrid", "kv_port": {"prefill": [kv], "decode": [kv + 100]}});
        let (ptp, dtp) = if hardware == "a3" {
            (prefill_tp, 4)
        } else {
            (prefill_tp, 2)
        };
        let per_node = if hardware == "a3" { 16 } else { 8 };
        v["topology"] = json!([
            {"role": "prefill", "count": 1, "dp": per_node / ptp, "tp": ptp},
            {"role": "decode", "count": 1, "dp": per_node / dtp, "tp": dtp}
        ]);
        v
    };
    let a5 = v41("ascend_950dt", "v0.30.0rc2", 4);
    assert_eq!(
        broken(&a5),
        only("model_runner_required"),
        "{:?}",
        messages(&a5, "model_runner_required")
    );
    let m = messages(&a5, "model_runner_required");
    assert_eq!(m.len(), 2, "one per role: {m:?}");
    assert!(
        m[0].contains("DeepseekV41ForCausalLM") && m[0].contains("platform.py:952"),
        "{m:?}"
    );
    let mut on = a5.clone();
    on["serve"]["env"] = json!([{"name": "VLLM_USE_V2_MODEL_RUNNER", "value": "1"}]);
    assert_eq!(broken(&on), BTreeSet::new());
    let mut off = a5.clone();
    off["serve"]["env"] = json!([{"name": "VLLM_USE_V2_MODEL_RUNNER", "value": "0"}]);
    assert_eq!(broken(&off), only("model_runner_required"));
    assert_eq!(broken(&v41("a3", "v0.30.0rc2", 4)), BTreeSet::new());
    assert_eq!(
        broken(&v41("ascend_950dt", "v0.29.0rc1", 4)),
        BTreeSet::new()
    );

    let tp16 = v41("a3", "v0.30.0rc1", 16);
    assert_eq!(
        broken(&tp16),
        only("engram_tp_supported"),
        "{:?}",
        messages(&tp16, "engram_tp_supported")
    );
    assert!(messages(&tp16, "engram_tp_supported")[0].contains("expected TP 1, 2, 4 or 8"));
    assert_eq!(broken(&v41("a3", "v0.30.0rc1", 8)), BTreeSet::new());
    assert_eq!(broken(&v41("a3", "v0.29.0rc1", 16)), BTreeSet::new());
}

/// `async_scheduling` runs only with the methods vLLM's
/// `VllmConfig.__post_init__` lists (the generated `async_speculative_methods`):
/// `ngram` is refused at every image, MTP accepted, and `ngram` without
/// async scheduling is accepted.
#[test]
fn async_scheduling_takes_only_the_methods_vllm_lists() {
    for image in ["v0.18.0", "v0.23.0", "v0.30.0rc2"] {
        let with = |method: &str, on: bool| {
            let mut v = pd("deepseek_v3_1_w8a8_mtp_quarot", image);
            v["serve"]["speculative"] = json!({"method": method, "tokens": 1});
            v["serve"]["async_scheduling"] = json!(on);
            v
        };
        let ngram = with("ngram", true);
        assert_eq!(
            broken(&ngram),
            only("async_scheduling_speculative_method"),
            "{image}"
        );
        let m = messages(&ngram, "async_scheduling_speculative_method");
        assert!(
            m.len() == 2 && m[0].contains("vllm/config/vllm.py:") && m[0].contains("`eagle3`"),
            "{m:?}"
        );
        assert_eq!(broken(&with("ngram", false)), BTreeSet::new(), "{image}");
        assert_eq!(broken(&with("mtp", true)), BTreeSet::new(), "{image}");
    }
}

/// A split oproj TP (size above 1) on v0.30.0rc1/rc2 needs
/// `PreemptOffloadConnector` in the kv_transfer_config, which pd-dsl never
/// derives: refused on a decode engine that meets every
/// `FinegrainedTPConfig` precondition; accepted at v0.29.0rc1 and at size 1.
#[test]
fn split_finegrained_tp_needs_a_connector_pd_dsl_does_not_derive() {
    let oproj = |image: &str, size: u32| {
        let mut v = with_role(
            pd("deepseek_v4_flash_w8a8_mtp", image),
            "decode",
            json!({"additional_config": {"finegrained_tp_config": {"oproj_tensor_parallel_size": size}}}),
        );
        v["topology"][1] = json!({"role": "decode", "count": 1, "dp": 16, "tp": 1});
        v
    };
    let split = oproj("v0.30.0rc2", 2);
    assert_eq!(broken(&split), only("finegrained_tp_connector"));
    let m = messages(&split, "finegrained_tp_connector");
    assert!(
        m[0].contains("PreemptOffloadConnector") && m[0].contains("`MooncakeConnectorV1`"),
        "{m:?}"
    );
    assert_eq!(broken(&oproj("v0.30.0rc2", 1)), BTreeSet::new());
    assert_eq!(broken(&oproj("v0.29.0rc1", 2)), BTreeSet::new());
}

/// PCP with DP above 1, V2 runner on: vLLM 0.28.0 refuses it and
/// vllm-ascend 0.28.0rc1 does not patch it out; 0.29.0rc1 replaces vLLM
/// 0.29.0's validator without the refusal; vLLM 0.30.0 has none. At DP1 all
/// three start it.
#[test]
fn pcp_with_dp_follows_vllm_and_the_packages_patch() {
    let with = |image: &str, dp: u64| {
        let mut v = pd("deepseek_r1_0528_w8a8", image);
        v["topology"][0] = json!({"role": "prefill", "count": 1, "dp": dp, "tp": 8, "pcp": 2});
        with_role(
            v,
            "prefill",
            json!({
                "env": [{"name": "VLLM_USE_V2_MODEL_RUNNER", "value": "1"}],
                "flags": [{"name": "--cp-kv-cache-interleave-size", "value": 128}]
            }),
        )
    };
    let refused = with("v0.28.0rc1", 2);
    assert_eq!(broken(&refused), only("prefill_context_parallel_supported"));
    let m = messages(&refused, "prefill_context_parallel_supported");
    assert!(
        m[0].contains("vllm/config/parallel.py:527")
            && m[0].contains("PCP does not support data parallelism"),
        "{m:?}"
    );
    for image in ["v0.29.0rc1", "v0.30.0rc1"] {
        assert_eq!(broken(&with(image, 2)), BTreeSet::new(), "{image}");
    }
    for image in ["v0.28.0rc1", "v0.29.0rc1", "v0.30.0rc1"] {
        assert_eq!(broken(&with(image, 1)), BTreeSet::new(), "{image}");
    }
}

/// `--decode-context-parallel-size` divides TP without PCP (every vLLM),
/// and with PCP2 on TP8 is 1, 2 or 16 (vLLM 0.26.0+).
#[test]
fn dcp_fits_tp_and_with_pcp_spans_it() {
    let dcp = |image: &str, role: &str, size: u64, pcp: bool| {
        let mut v = pd("deepseek_r1_0528_w8a8", image);
        if pcp {
            v["topology"][0] = json!({"role": "prefill", "count": 1, "dp": 1, "tp": 8, "pcp": 2});
        }
        let mut block = json!({
            "flags": [
                {"name": "--decode-context-parallel-size", "value": size},
                {"name": "--cp-kv-cache-interleave-size", "value": 128}
            ]
        });
        if pcp {
            block["env"] = json!([{"name": "VLLM_USE_V2_MODEL_RUNNER", "value": "1"}]);
        }
        with_role(v, role, block)
    };
    // The decode engine is TP4.
    for image in ["v0.18.0", "v0.23.0", "v0.30.0rc2"] {
        assert_eq!(
            broken(&dcp(image, "decode", 3, false)),
            only("dcp_fits_tp"),
            "{image}"
        );
        assert_eq!(
            broken(&dcp(image, "decode", 2, false)),
            BTreeSet::new(),
            "{image}"
        );
    }
    let m = messages(&dcp("v0.23.0", "decode", 3, false), "dcp_fits_tp");
    assert!(
        m[0].contains("a divisor of TP 4") && m[0].contains("vllm/config/parallel.py:487"),
        "{m:?}"
    );
    // Prefill TP8 PCP2: 4 divides TP but is not 1, 2 or 16.
    let four = dcp("v0.29.0rc1", "prefill", 4, true);
    assert_eq!(broken(&four), only("dcp_fits_tp"));
    let m = messages(&four, "dcp_fits_tp");
    assert!(m[0].contains("one of 1, 2, 16 with PCP2"), "{m:?}");
    for ok in [1, 2, 16] {
        assert_eq!(
            broken(&dcp("v0.29.0rc1", "prefill", ok, true)),
            BTreeSet::new(),
            "{ok}"
        );
    }
}

/// With env `VLLM_USE_V2_MODEL_RUNNER` non-zero, vLLM's V2 model runner
/// refuses the speculative methods of the generated
/// `v2_speculative_methods`: `suffix` on every image from v0.20.2rc1,
/// `dflash` up to vLLM 0.23.0 (image v0.23.0) but not from 0.24.0
/// (v0.24.0rc1); `mtp` never. Without the env, or with it `0`, or before
/// the V2 runner (v0.19.1rc1), nothing.
#[test]
fn the_v2_runner_takes_only_the_speculative_methods_vllm_lists() {
    let with = |image: &str, method: &str, env: Option<&str>| {
        let mut v = pd("deepseek_v3_1_w8a8_mtp_quarot", image);
        v["serve"]["speculative"] = json!({"method": method, "tokens": 1});
        match env {
            Some(e) => with_role(
                v,
                "decode",
                json!({"env": [{"name": "VLLM_USE_V2_MODEL_RUNNER", "value": e}]}),
            ),
            None => v,
        }
    };
    // vLLM's words (vllm/config/vllm.py, read by hand): the raise
    // "VLLM_USE_V2_MODEL_RUNNER does not yet support: " @0.20.2 L1835, "Model
    // Runner V2 does not yet support: " @0.23.0 L2069 and @0.30.0 L3086, with
    // the runner's f"speculative method '{...method}'" (@0.20.2 L1811, @0.30.0
    // L2850).
    for (image, said) in [
        (
            "v0.20.2rc1",
            "VLLM_USE_V2_MODEL_RUNNER does not yet support: speculative method 'suffix'",
        ),
        (
            "v0.23.0",
            "Model Runner V2 does not yet support: speculative method 'suffix'",
        ),
        (
            "v0.30.0rc2",
            "Model Runner V2 does not yet support: speculative method 'suffix'",
        ),
    ] {
        let suffix = with(image, "suffix", Some("1"));
        assert_eq!(broken(&suffix), only("v2_runner_unsupported"), "{image}");
        let m = messages(&suffix, "v2_runner_unsupported");
        assert!(
            m.len() == 1
                && m[0].contains("decode engine")
                && m[0].contains(&format!("(\"{said}\", vllm/config/vllm.py:"))
                && m[0].contains("`mtp`"),
            "{image}: {m:?}"
        );
        assert_eq!(
            broken(&with(image, "suffix", None)),
            BTreeSet::new(),
            "{image}"
        );
        assert_eq!(
            broken(&with(image, "suffix", Some("0"))),
            BTreeSet::new(),
            "{image}"
        );
        assert_eq!(
            broken(&with(image, "mtp", Some("1"))),
            BTreeSet::new(),
            "{image}"
        );
    }
    assert_eq!(
        broken(&with("v0.19.1rc1", "suffix", Some("1"))),
        BTreeSet::new()
    );
    let m = messages(
        &with("v0.20.2rc1", "suffix", Some("1")),
        "v2_runner_unsupported",
    );
    assert!(m[0].contains("vllm/config/vllm.py:1807"), "{m:?}");
}

/// PCP at DP1 with the V2 runner on images whose vllm-ascend runs PCP on
/// the V1 runner (no V1-runner refusal, up to v0.24.0rc1): vLLM 0.20.2 to
/// 0.24.0's V2 runner refuses it, so `prefill_context_parallel_supported`
/// does; without the env those images start it.
#[test]
fn pcp_on_the_v2_runner_before_vllm_ascend_refuses_the_v1_runner() {
    let with = |image: &str, v2: bool| {
        let mut v = pd("deepseek_r1_0528_w8a8", image);
        v["topology"][0] = json!({"role": "prefill", "count": 1, "dp": 1, "tp": 8, "pcp": 2});
        let mut block = json!({"flags": [{"name": "--cp-kv-cache-interleave-size", "value": 128}]});
        if v2 {
            block["env"] = json!([{"name": "VLLM_USE_V2_MODEL_RUNNER", "value": "1"}]);
        }
        with_role(v, "prefill", block)
    };
    // vLLM's words, read by hand (vllm/config/vllm.py `_validate_v2_model_runner`):
    // "VLLM_USE_V2_MODEL_RUNNER does not yet support: " + ... @0.20.2 L1835, @0.22.1
    // L2064; f"Model Runner V2 does not yet support: {...}" @0.23.0 L2069, @0.24.0.
    let old = "VLLM_USE_V2_MODEL_RUNNER does not yet support: prefill context parallelism";
    let new = "Model Runner V2 does not yet support: prefill context parallelism";
    for (image, said) in [
        ("v0.20.2rc1", old),
        ("v0.22.1rc1", old),
        ("v0.23.0", new),
        ("v0.24.0rc1", new),
    ] {
        let refused = with(image, true);
        assert_eq!(
            broken(&refused),
            only("prefill_context_parallel_supported"),
            "{image}"
        );
        let m = messages(&refused, "prefill_context_parallel_supported");
        assert!(
            m[0].contains("V1 model runner (no `VLLM_USE_V2_MODEL_RUNNER`)")
                && m[0].contains(&format!("(\"{said}\", vllm/config/vllm.py:")),
            "{image}: {m:?}"
        );
        assert_eq!(broken(&with(image, false)), BTreeSet::new(), "{image}");
    }
}

/// The methods that read the target's auxiliary hidden states run only on
/// the model types vLLM lists (the generated `aux_hidden_states`, matched as
/// substrings of the table's `model_type`): `extract_hidden_states` on
/// DeepSeek-V4 (`deepseek_v4`) and GLM-5 (`glm_moe_dsa`) is refused on
/// vLLM 0.18.0 to 0.20.2 (images v0.18.0 to v0.20.2rc1), `dflash` only from
/// 0.20.2; DeepSeek-V3.1 (`deepseek_v3`) passes; MiniMax passes on vLLM
/// 0.18.0, whose list lacks `minimax_m2`, through vllm-ascend's patch (the
/// generated `aux_hidden_states_exemption`); from vLLM 0.22.1 (image
/// v0.22.1rc1) there is no such gate.
#[test]
fn aux_hidden_states_methods_need_a_model_type_vllm_lists() {
    // One mixed node: DeepSeek-V4's hybrid KV cache has no connector on
    // the oldest images, and the gate is the same for every role.
    let with = |model: &str, image: &str, method: &str| {
        let mut v = mixed(model, image);
        v["serve"]["speculative"] = json!({"method": method, "tokens": 1});
        v
    };
    // vLLM's list and gate, read by hand: vllm/config/speculative.py
    // `_verify_args` @0.18.0 L780-L806 (the `if` at L794), @0.19.1 L811,
    // @0.20.2 L921 with "dflash".
    for (image, line) in [("v0.18.0", 794), ("v0.19.1rc1", 811), ("v0.20.2rc1", 921)] {
        for model in ["deepseek_v4_flash_w8a8_mtp", "glm_5_w8a8"] {
            let l = with(model, image, "extract_hidden_states");
            assert_eq!(
                broken(&l),
                only("speculative_aux_hidden_states"),
                "{model} {image}"
            );
            let m = messages(&l, "speculative_aux_hidden_states");
            assert!(
                m.len() == 1
                    && m[0].contains(&format!("vllm/config/speculative.py:{line}"))
                    && m[0].contains("`deepseek_v3`")
                    && m[0].contains("is only supported for"),
                "{model} {image}: {m:?}"
            );
        }
        assert_eq!(
            broken(&with(
                "deepseek_v3_1_w8a8_mtp_quarot",
                image,
                "extract_hidden_states"
            )),
            BTreeSet::new(),
            "{image}"
        );
        assert_eq!(
            broken(&with(
                "minimax_m2_7_w8a8_quarot",
                image,
                "extract_hidden_states"
            )),
            BTreeSet::new(),
            "{image}"
        );
        // GLM-5.2 and 5.3: no upstream file names their model type; the
        // copies of their configs do (`glm_moe_dsa`), so they are judged as
        // GLM-5. GLM-4.7 has no copy: not judged.
        for model in ["glm_5_2_w8a8", "glm_5_3_w8a8c8"] {
            let m = messages(
                &with(model, image, "extract_hidden_states"),
                "speculative_aux_hidden_states",
            );
            assert!(
                m.len() == 1 && m[0].contains("(model type `glm_moe_dsa`)"),
                "{model} {image}: {m:?}"
            );
        }
        assert!(
            !broken(&with("glm_4_7_w8a8c8", image, "extract_hidden_states"))
                .contains("speculative_aux_hidden_states"),
            "{image}"
        );
    }
    for image in ["v0.22.1rc1", "v0.30.0rc2"] {
        assert_eq!(
            broken(&with(
                "deepseek_v4_flash_w8a8_mtp",
                image,
                "extract_hidden_states"
            )),
            BTreeSet::new(),
            "{image}"
        );
    }
}

/// Hierarchy MC2 takes at most 512 experts, redundant EPLB experts
/// included (the generated `mc2_hierarchy_experts`, read by hand in
/// vllm_ascend/ascend_config.py `_validate_mc2_comm_alg` @v0.27.1rc1
/// L749-L758: `if num_experts > 512` with `num_redundant_experts` counted
/// only `if self.eplb_config.dynamic_eplb`; `enable_mc2_hierarchy_comm`
/// sets the algorithm at L460). Kimi-K2.5's 384 routed experts: 129
/// redundant refused, 128 accepted, 129 without dynamic EPLB accepted; the
/// deprecated key too; v0.26.0rc1 has no limit.
#[test]
fn hierarchy_mc2_takes_at_most_512_experts() {
    let with = |image: &str, key: Value, redundant: u64, dynamic: bool| {
        let mut v = pd("kimi_k2_5_w4a8", image);
        v["serve"]["speculative"] = Value::Null;
        let mut config =
            json!({"eplb_config": {"dynamic_eplb": dynamic, "num_redundant_experts": redundant}});
        for (k, val) in key.as_object().into_iter().flatten() {
            config[k] = val.clone();
        }
        with_role(
            v,
            "decode",
            json!({
                "additional_config": config,
                "env": [{"name": "DYNAMIC_EPLB", "value": "true"}]
            }),
        )
    };
    let alg = json!({"mc2_comm_alg": "hierarchy"});
    for (image, line) in [("v0.27.1rc1", 758), ("v0.30.0rc2", 999)] {
        let l = with(image, alg.clone(), 129, true);
        assert_eq!(broken(&l), only("mc2_hierarchy_experts"), "{image}");
        let m = messages(&l, "mc2_hierarchy_experts");
        assert!(
            m.len() == 1
                && m[0].contains("513 experts (384 routed experts of `kimi_k2_5_w4a8` [")
                && m[0].contains(" + 129 redundant:")
                && m[0].contains(&format!("vllm_ascend/ascend_config.py:{line}")),
            "{image}: {m:?}"
        );
        assert_eq!(
            broken(&with(image, alg.clone(), 128, true)),
            BTreeSet::new(),
            "{image}"
        );
        assert_eq!(
            broken(&with(image, alg.clone(), 129, false)),
            BTreeSet::new(),
            "{image}"
        );
        assert_eq!(
            broken(&with(
                image,
                json!({"enable_mc2_hierarchy_comm": true}),
                129,
                true
            )),
            only("mc2_hierarchy_experts"),
            "{image}"
        );
        assert_eq!(
            broken(&with(image, json!({"mc2_comm_alg": "fullmesh"}), 129, true)),
            BTreeSet::new(),
            "{image}"
        );
    }
    assert_eq!(broken(&with("v0.26.0rc1", alg, 129, true)), BTreeSet::new());
    // Qwen3.5-397B's 512 routed experts (`num_experts` of its config's
    // text_config) take no redundant expert under hierarchy MC2.
    let qwen = |redundant: u64| {
        let mut v = pd("qwen3_5_397b_a17b_w8a8_mtp", "v0.30.0rc2");
        v["serve"]["speculative"] = Value::Null;
        with_role(
            v,
            "decode",
            json!({
                "additional_config": {
                    "mc2_comm_alg": "hierarchy",
                    "eplb_config": {"dynamic_eplb": true, "num_redundant_experts": redundant}
                },
                "env": [{"name": "DYNAMIC_EPLB", "value": "true"}]
            }),
        )
    };
    let m = messages(&qwen(1), "mc2_hierarchy_experts");
    assert!(
        m.len() == 1
            && m[0].contains("513 experts (512 routed experts of `qwen3_5_397b_a17b_w8a8_mtp` [")
            && m[0].contains("Qwen--Qwen3.5-397B-A17B_config.json)] + 1 redundant"),
        "{m:?}"
    );
    assert!(!broken(&qwen(0)).contains("mc2_hierarchy_experts"));
}

/// Dynamic EPLB on the V1 runner needs env `DYNAMIC_EPLB` (`true` or `1`)
/// or `EXPERT_MAP_RECORD` exactly `true` (`eplb_requires_env`, the assert
/// in `EplbConfig._validate_config`): `dynamic_eplb: true` or an
/// `expert_map_record_path` (which turns it on) without either is refused,
/// and so is `EXPERT_MAP_RECORD: "1"`, which the assert does not take.
#[test]
fn dynamic_eplb_needs_its_env() {
    let rule = "eplb_requires_env";
    let with = |image: &str, eplb: serde_json::Value, env: &[(&str, &str)]| {
        let env: Vec<_> = env
            .iter()
            .map(|(n, v)| json!({"name": n, "value": v}))
            .collect();
        with_role(
            pd("deepseek_r1_0528_w8a8", image),
            "decode",
            json!({"additional_config": {"eplb_config": eplb}, "env": env}),
        )
    };
    let dynamic = json!({"dynamic_eplb": true});
    let record = json!({"expert_map_record_path": "/tmp/eplb/map.json"});
    for image in ["v0.18.0", "v0.23.0", "v0.30.0rc2"] {
        for eplb in [&dynamic, &record] {
            let v = with(image, eplb.clone(), &[]);
            assert!(broken(&v).contains(rule), "{image} {eplb}");
            let m = messages(&v, rule);
            assert!(
                m[0].contains("EplbConfig._validate_config")
                    && m[0].contains(if eplb == &record {
                        "expert_map_record_path"
                    } else {
                        "dynamic_eplb: true"
                    }),
                "{m:?}"
            );
            let one = with(image, eplb.clone(), &[("EXPERT_MAP_RECORD", "1")]);
            assert!(
                messages(&one, rule)
                    .first()
                    .is_some_and(|m| m.contains("exactly `true`")),
                "{image}: {:?}",
                messages(&one, rule)
            );
            for env in [
                ("DYNAMIC_EPLB", "1"),
                ("DYNAMIC_EPLB", "True"),
                ("EXPERT_MAP_RECORD", "true"),
            ] {
                assert!(
                    !broken(&with(image, eplb.clone(), &[env])).contains(rule),
                    "{image} {env:?}"
                );
            }
        }
    }
}

/// `refresh_block_size` forces 128 with prefix caching or chunked prefill,
/// but leaves hybrid linear-attention models (vLLM's `is_hybrid`: the
/// Qwen3.5 family) to their own sizing, so `block_size_backend` refuses 64
/// for Qwen3 and says nothing for Qwen3.5.
#[test]
fn block_size_backend_leaves_linear_attention_models_alone() {
    let rule = "block_size_backend";
    let with = |model: &str| {
        let mut v = mixed(model, "v0.30.0rc2");
        v["serve"]["block_size"] = json!(64);
        v
    };
    assert!(broken(&with("qwen3_235b_a22b_w8a8")).contains(rule));
    for model in ["qwen3_5_397b_a17b_w8a8_mtp", "qwen3_5_122b_a10b_w4a8"] {
        let v = with(model);
        assert!(
            !broken(&v).contains(rule),
            "{model}: {:?}",
            messages(&v, rule)
        );
    }
}

/// Qwen3.5 (hybrid linear attention, a class without Mamba prefix caching)
/// with `prefix_caching: true` runs its Mamba cache in 'align' mode, where
/// vLLM 0.22.1 to 0.24.0 assert the V2 runner off (`mamba_align_v2_runner`):
/// refused with env `VLLM_USE_V2_MODEL_RUNNER=1` on images v0.21.0rc1 to
/// v0.24.0rc1, not on v0.20.2rc1 (vLLM 0.20.2) nor v0.25.1rc1, not with the
/// env `0` or prefix caching off, and never for Qwen3 (no linear attention).
#[test]
fn mamba_align_refuses_the_v2_runner() {
    let rule = "mamba_align_v2_runner";
    let with = |model: &str, image: &str, v2: &str, prefix: bool| {
        with_role(
            pd(model, image),
            "decode",
            json!({"prefix_caching": prefix, "env": [{"name": "VLLM_USE_V2_MODEL_RUNNER", "value": v2}]}),
        )
    };
    let qwen = "qwen3_5_397b_a17b_w8a8_mtp";
    for image in ["v0.21.0rc1", "v0.22.1rc1", "v0.23.0", "v0.24.0rc1"] {
        let v = with(qwen, image, "1", true);
        let m = messages(&v, rule);
        assert_eq!(m.len(), 1, "{image}: {m:?}");
        assert!(
            m[0].contains("Qwen3_5MoeForConditionalGeneration")
                && m[0].contains("vllm/config/vllm.py:")
                && m[0].contains("'align'"),
            "{m:?}"
        );
        assert!(
            !broken(&with(qwen, image, "0", true)).contains(rule),
            "{image}"
        );
        assert!(
            !broken(&with(qwen, image, "1", false)).contains(rule),
            "{image}"
        );
        assert!(
            !broken(&with("qwen3_235b_a22b_w8a8", image, "1", true)).contains(rule),
            "{image}"
        );
    }
    for image in ["v0.20.2rc1", "v0.25.1rc1", "v0.30.0rc2"] {
        assert!(
            !broken(&with(qwen, image, "1", true)).contains(rule),
            "{image}"
        );
    }
}

/// Qwen3.5 with `prefix_caching: true` runs its Mamba cache in 'align' mode,
/// where vLLM 0.18.0 to 0.26.0 assert `block_size <= max_num_batched_tokens`
/// and vllm-ascend has raised the block to carry one request's GDN state
/// (`mamba_align_block_within_batch`). By hand, from the Qwen3.5-397B
/// config (64 value heads of 128 x 128 key dims, float32 state; 2 KV heads
/// of 256) and vllm_ascend/patch/platform/patch_mamba_config.py: at TP4 the
/// state is 16 x 128 x 128 x 4 = 1048576 B, the K page 256 x 1 x 2 = 512 B,
/// so the block is 128 x cdiv(1048576, 128 x 512) = 2048; at TP2 4096.
#[test]
fn mamba_align_block_fits_the_batch() {
    let rule = "mamba_align_block_within_batch";
    let qwen = "qwen3_5_397b_a17b_w8a8_mtp";
    let with =
        |model: &str, image: &str, decode: Value| with_role(pd(model, image), "decode", decode);
    for (image, line) in [("v0.18.0", 58), ("v0.23.0", 94), ("v0.26.0rc1", 94)] {
        let v = with(
            qwen,
            image,
            json!({"prefix_caching": true, "max_num_batched_tokens": 2047}),
        );
        let m = messages(&v, rule);
        assert!(
            m.len() == 1
                && m[0].contains("found `max_num_batched_tokens` 2047 on a decode engine")
                && m[0].contains("at TP4")
                && m[0].contains("expected at least 2048")
                && m[0].contains("(1048576 B per rank = 2048 x 512 B per token; vllm_ascend/patch/platform/patch_mamba_config.py:")
                && m[0].contains(&format!("patch_mamba_config.py:{line})"))
                && m[0].contains("vllm/config/vllm.py:"),
            "{image}: {m:?}"
        );
        let at = |decode: Value| broken(&with(qwen, image, decode)).contains(rule);
        assert!(
            !at(json!({"prefix_caching": true, "max_num_batched_tokens": 2048})),
            "{image}"
        );
        assert!(
            !at(json!({"prefix_caching": false, "max_num_batched_tokens": 512})),
            "{image}"
        );
        assert!(!at(json!({"max_num_batched_tokens": 512})), "{image}");
        // A typed block above vllm-ascend's stays, and must fit too.
        assert!(
            at(json!({"prefix_caching": true, "max_num_batched_tokens": 2048, "block_size": 4096})),
            "{image}"
        );
        // A typed cache mode is another case: left to vLLM.
        assert!(
            !at(json!({
                "prefix_caching": true,
                "max_num_batched_tokens": 512,
                "flags": [{"name": "--mamba-cache-mode", "value": "all"}]
            })),
            "{image}"
        );
        // No linear attention, no such block.
        assert!(
            !broken(&with(
                "qwen3_235b_a22b_w8a8",
                image,
                json!({"prefix_caching": true, "max_num_batched_tokens": 512})
            ))
            .contains(rule),
            "{image}"
        );
        // TP2: a 4096-token block, above A3's unset default of 2048.
        let mut tp2 = with(qwen, image, json!({"prefix_caching": true}));
        tp2["topology"][1]["dp"] = json!(8);
        tp2["topology"][1]["tp"] = json!(2);
        let m = messages(&tp2, rule);
        assert!(
            m.len() == 1
                && m[0].contains("2048 (vLLM's default: unset)")
                && m[0].contains("expected at least 4096"),
            "{image}: {m:?}"
        );
    }
    // vLLM 0.27.1 on have no such assert.
    for image in ["v0.27.1rc1", "v0.30.0rc2"] {
        assert!(
            !broken(&with(
                qwen,
                image,
                json!({"prefix_caching": true, "max_num_batched_tokens": 512})
            ))
            .contains(rule),
            "{image}"
        );
    }
}

/// The flags `mamba_align_block_within_batch` leaves to vLLM are spelled as
/// the `vllm serve` of every image the rule judges spells them (the
/// generated `serve_flags`): a misspelt name would never match a layout's
/// flag and the rule would judge a case it means to leave alone.
#[test]
fn mamba_align_unjudged_flags_are_vllms_own() {
    let mut judged = 0;
    for img in &pd_dsl_core::tables::IMAGES {
        let Ok(v) = pd_dsl_core::upstream::vllm_of(img) else {
            continue;
        };
        if v.mamba_align
            .as_ref()
            .and_then(|a| a.block_within_batch.as_ref())
            .is_none()
        {
            continue;
        }
        judged += 1;
        for flag in pd_dsl_core::upstream::MambaAlign::UNJUDGED_FLAGS {
            let found = v.lookup(flag);
            assert!(
                found.is_some_and(|(_, negated)| negated == flag.starts_with("--no-")),
                "vLLM {} (image `{}`) has no `{flag}`",
                v.version,
                img.tag
            );
        }
    }
    assert!(judged >= 8, "only {judged} images judged");
}

/// A KV pool puts Qwen3.5's Mamba cache in 'align' mode with prefix caching
/// off: from v0.21.0rc1 vllm-ascend sets it when an `AscendStoreConnector`
/// runs (generated `kv_store_align`; patch_mamba_config.py @0.21.0rc1 L127,
/// @0.22.1rc1 L138), unless `--disable-hybrid-kv-cache-manager` or, from
/// v0.22.1rc1, speculative method `extract_hidden_states`. So a 1024-token
/// decode batch at TP4 (block 2048) with a pool is refused on v0.21.0rc1 to
/// v0.26.0rc1, and the V2 runner with a pool on v0.21.0rc1 to v0.24.0rc1;
/// not without the pool, not on v0.20.2rc1 (no such switch), not on
/// v0.27.1rc1 (no such assert).
#[test]
fn a_kv_pool_puts_the_mamba_cache_in_align_mode() {
    let rule = "mamba_align_block_within_batch";
    let qwen = "qwen3_5_397b_a17b_w8a8_mtp";
    let pooled = |image: &str, decode: Value| {
        let mut v = with_role(pd(qwen, image), "decode", decode);
        v["connector"]["pool"] = json!({
            "backend": "memcache",
            "ports": {"meta_service_port": 5000, "config_store_port": 6000},
            "config": {"meta": {}, "local": {}}
        });
        v
    };
    let small = json!({"max_num_batched_tokens": 1024});
    for (image, line) in [("v0.21.0rc1", 127), ("v0.23.0", 138), ("v0.26.0rc1", 138)] {
        let m = messages(&pooled(image, small.clone()), rule);
        assert!(
            m.len() == 1
                && m[0].contains("with the layout's KV pool (`AscendStoreConnector`)")
                && m[0].contains(&format!("'align' mode when a KV store runs (vllm_ascend/patch/platform/patch_mamba_config.py:{line})"))
                && m[0].contains("expected at least 2048")
                && m[0].contains("or run with no KV pool"),
            "{image}: {m:?}"
        );
        assert!(
            !broken(&with_role(pd(qwen, image), "decode", small.clone())).contains(rule),
            "{image}: no pool"
        );
        let disabled = json!({
            "max_num_batched_tokens": 1024,
            "flags": [{"name": "--disable-hybrid-kv-cache-manager"}]
        });
        assert!(
            !broken(&pooled(image, disabled)).contains(rule),
            "{image}: disabled"
        );
        assert!(
            !broken(&pooled(image, json!({"max_num_batched_tokens": 2048}))).contains(rule),
            "{image}: fits"
        );
    }
    for image in ["v0.20.2rc1", "v0.27.1rc1"] {
        assert!(
            !broken(&pooled(image, small.clone())).contains(rule),
            "{image}"
        );
    }
    let v2 = json!({"max_num_batched_tokens": 4096, "env": [{"name": "VLLM_USE_V2_MODEL_RUNNER", "value": "1"}]});
    for image in ["v0.21.0rc1", "v0.24.0rc1"] {
        let m = messages(&pooled(image, v2.clone()), "mamba_align_v2_runner");
        assert!(
            m.len() == 1 && m[0].contains("expected the V2 runner off or no KV pool"),
            "{image}: {m:?}"
        );
    }
    assert!(!broken(&pooled("v0.25.1rc1", v2)).contains("mamba_align_v2_runner"));
}
