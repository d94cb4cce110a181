//! Tests of the tables.

#[test]
fn every_required_host_path_is_mounted() {
    for hw in super::HARDWARE {
        let mounts = hw.container_mounts();
        for p in hw.required_host_paths {
            assert!(
                mounts.iter().any(|m| super::covers(m, p)),
                "{}: {p} is not mounted",
                hw.id
            );
        }
    }
    assert!(super::covers("/etc/hixlep/", "/etc/hixlep"));
    assert!(!super::covers("/etc/hix", "/etc/hixlep"));
    assert_eq!(
        &super::A950DT.container_mounts()[super::A950DT.mounts.len()..],
        ["/lib/route.conf", "/etc/hccl_rootinfo.json"]
    );
}

use super::*;

#[test]
fn every_image_tag_parses_and_table_is_in_version_order() {
    let versions: Vec<Version> = IMAGES
        .iter()
        .map(|i| Version::parse(i.tag).unwrap_or_else(|| unreachable!("{}", i.tag)))
        .collect();
    assert!(versions.windows(2).all(|w| w[0] < w[1]), "{versions:?}");
}

#[test]
fn rc_sorts_before_final() {
    let rc = Version::parse("v0.23.0rc1");
    let fin = Version::parse("v0.23.0");
    assert!(rc < fin);
    assert_eq!(Version::parse("v1.2"), None);
    assert_eq!(
        Version::parse("0.9.1rc3").map(|v| v.to_string()),
        Some("v0.9.1rc3".to_owned())
    );
}

#[test]
fn image_references_follow_the_suffix_table() {
    let img = image("v0.23.0");
    assert_eq!(
        img.and_then(|i| i.reference(&A3)).as_deref(),
        Some("quay.io/ascend/vllm-ascend:v0.23.0-a3")
    );
    assert_eq!(
        img.and_then(|i| i.reference(&A2)).as_deref(),
        Some("quay.io/ascend/vllm-ascend:v0.23.0")
    );
    assert_eq!(
        img.and_then(|i| i.reference(&A950DT)).as_deref(),
        Some("quay.io/ascend/vllm-ascend:v0.23.0-a5")
    );
    assert_eq!(image("v0.25.1rc1").and_then(|i| i.reference(&A950DT)), None);
}

#[test]
fn model_by_hub_id_matches_ids_case_insensitively() {
    let id = |m: Option<&Model>| m.map(|m| m.id);
    assert_eq!(
        id(model_by_hub_id("Eco-Tech/DeepSeek-V3.1-w8a8-mtp-QuaRot")),
        Some("deepseek_v3_1_w8a8_mtp_quarot")
    );
    assert_eq!(
        id(model_by_hub_id("eco-tech/deepseek-v3.1-W8A8-MTP-quarot")),
        Some("deepseek_v3_1_w8a8_mtp_quarot")
    );
    assert_eq!(
        id(model_by_hub_id("unsloth/DeepSeek-V3.1-BF16")),
        Some("deepseek_v3_1")
    );
}

#[test]
fn model_by_hub_id_matches_a_path_by_its_last_component() {
    let id = |m: Option<&Model>| m.map(|m| m.id);
    assert_eq!(
        id(model_by_hub_id(
            "/weights/DeepSeek-V3.1-Terminus-w4a8-mtp-QuaRot/"
        )),
        Some("deepseek_v3_1_terminus_w4a8_mtp_quarot")
    );
    assert_eq!(
        id(model_by_hub_id("/mnt/cache/deepseek-v3.1-bf16")),
        Some("deepseek_v3_1")
    );
    assert_eq!(
        id(model_by_hub_id("/root/.cache/DeepSeek-V4-Flash-w8a8-mtp")),
        Some("deepseek_v4_flash_w8a8_mtp")
    );
}

#[test]
fn model_by_hub_id_rejects_unknown_and_empty() {
    assert!(model_by_hub_id("Qwen/Qwen2-7B").is_none());
    assert!(model_by_hub_id("").is_none());
    assert!(model_by_hub_id("/").is_none());
    // A prefix of a weights name is not a match.
    assert!(model_by_hub_id("/weights/DeepSeek-V3").is_none());
}

#[test]
fn every_model_has_a_hub_id_and_ids_are_unique() {
    let mut seen = std::collections::BTreeSet::new();
    for m in MODELS {
        assert!(!m.hub_ids.is_empty(), "{} has no hub id", m.id);
        for h in m.hub_ids {
            assert!(seen.insert(h.to_ascii_lowercase()), "{h} listed twice");
            assert_eq!(model_by_hub_id(h).map(|x| x.id), Some(m.id), "{h}");
        }
        assert!(seen.insert(m.id.to_owned()));
    }
}

/// The family bases leave the identity fields empty: an entry that
/// forgot one would take the empty value through `..`.
#[test]
fn models_state_their_identity() {
    for m in MODELS {
        for (field, value) in [
            ("id", m.id),
            ("weights", m.weights),
            ("source", m.source),
            ("default_path", m.default_path),
            ("served_name", m.served_name),
        ] {
            assert!(!value.is_empty(), "{} has no {field}", m.weights);
        }
    }
}

#[test]
fn speculative_methods_follow_each_images_vllm() {
    let on = |tag: &str| speculative_methods(image(tag));
    // vllm/config/speculative.py `SpeculativeMethod` @0.18.0: no
    // `custom_class`, no `DFlashModelTypes`; both @0.30.0.
    assert!(!on("v0.18.0").contains(&"dflash"));
    assert!(!on("v0.18.0").contains(&"custom_class"));
    assert!(on("v0.30.0rc2").contains(&"custom_class"));
    assert!(on("v0.30.0rc2").contains(&"dflash"));
    for img in &IMAGES {
        let m = speculative_methods(Some(img));
        for name in [
            "mtp",
            "deepseek_mtp",
            "eagle3",
            "ngram",
            "mlp_speculator",
            "ngram_gpu",
        ] {
            assert!(m.contains(&name), "{name} on {}", img.tag);
        }
        assert!(m.windows(2).all(|w| w[0] < w[1]), "{}", img.tag);
    }
    assert!(speculative_methods(None).len() >= on("v0.30.0rc2").len());
}

#[test]
fn model_facts_are_consistent() {
    for m in MODELS {
        // Hybrid KV is the V4 attention layout and nothing else.
        assert_eq!(
            m.hybrid_kv,
            matches!(m.attention, Attention::V4Hybrid | Attention::V41Ced),
            "{}",
            m.id
        );
        // The indexer (`index_topk`) is in DeepSeek-V3.2, DeepSeek-V4 and
        // GLM-5.x weights, and in no other family of the table.
        let indexer_family = ["DeepSeek-V3.2", "DeepSeek-V4", "GLM-5"]
            .iter()
            .any(|f| m.weights.starts_with(f));
        assert_eq!(m.attention.has_indexer(), indexer_family, "{}", m.id);
        for d in m.drafts {
            assert!(DRAFT_METHODS.contains(&d.method), "{}: {}", m.id, d.method);
            // A method some image's vLLM accepts (`dflash` is not in
            // vLLM 0.18.0's `SpeculativeMethod`, so not on every image).
            assert!(
                speculative_methods(None).contains(&d.method),
                "{}: {}",
                m.id,
                d.method
            );
        }
        assert!(crate::check::is_safe_path(m.default_path), "{}", m.id);
        assert!(
            m.served_name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)),
            "{}",
            m.id
        );
        assert!(
            m.weights.eq_ignore_ascii_case(
                m.default_path
                    .trim_end_matches('/')
                    .rsplit('/')
                    .next()
                    .unwrap_or("")
            ) || m.id.starts_with("deepseek_v3_1_w"),
            "{}: the default path ends in the weights name",
            m.id
        );
    }
    let m = |id: &str| model(id).unwrap_or_else(|| unreachable!("{id}"));
    assert!(!m("qwen3_235b_a22b_w8a8").mtp);
    assert_eq!(
        m("kimi_k2_6_w4a8").draft("eagle3").map(|d| d.model),
        Some("lightseekorg/kimi-k2.6-eagle3")
    );
    assert!(m("kimi_k2_6_w4a8").draft("mtp").is_none());
    assert_eq!(m("deepseek_v3_2_w8a8").attention, Attention::DsaSparse);
    assert_eq!(m("glm_5_1_w8a8c8").attention, Attention::DsaSparse);
    assert_eq!(m("deepseek_r1_w8a8").attention, Attention::Mla);
}

#[test]
fn upstream_hub_ids_resolve() {
    let id = |h: &str| model_by_hub_id(h).map(|m| m.id);
    assert_eq!(
        id("vllm-ascend/DeepSeek-R1-0528-W8A8"),
        Some("deepseek_r1_0528_w8a8")
    );
    // One weekly config spells the GLM-5.2 C8 weights in capitals.
    assert_eq!(id("Eco-Tech/GLM-5.2-W8A8C8"), Some("glm_5_2_w8a8c8"));
    // The Kimi-K2.6 tutorial link spells it `W4A8`.
    assert_eq!(id("Eco-Tech/Kimi-K2.6-W4A8"), Some("kimi_k2_6_w4a8"));
    assert_eq!(
        id("/root/.cache/modelscope/hub/models/vllm-ascend/Qwen3-235B-A22B-w8a8-mxfp0"),
        Some("qwen3_235b_a22b_w8a8_mxfp0")
    );
    assert_eq!(
        id("Modelers_Park/Qwen3-235B-A22B-w8a8"),
        Some("qwen3_235b_a22b_w8a8")
    );
}

fn img(tag: &str) -> &'static Image {
    image(tag).unwrap_or_else(|| unreachable!("{tag} is a row of IMAGES"))
}

#[test]
fn eplb_keys_follow_the_image() {
    let keys = |tag| eplb_config_keys(img(tag));
    assert!(!keys("v0.22.1rc1").contains(&"eplb_heat_collection_stage"));
    assert!(keys("v0.23.0rc1").contains(&"eplb_heat_collection_stage"));
    assert!(keys("v0.23.0").contains(&"eplb_heat_collection_stage"));
    assert_eq!(keys("v0.18.0").len(), 7);
    // `load_collection_phase` arrives in v0.27.1rc1 (ascend_config.py).
    assert!(!keys("v0.26.0rc1").contains(&"load_collection_phase"));
    assert!(keys("v0.27.1rc1").contains(&"load_collection_phase"));
    assert_eq!(dsv4_block_sizes("v0.20.2rc1"), &[128]);
    assert_eq!(dsv4_block_sizes("v0.21.0rc1"), &[32, 64, 128]);
}

/// The derived fields agree with what the hand-typed table said before
/// they were derived (each value was reviewed against the release notes
/// and the source then), and extend to the new releases.
#[test]
fn derived_image_fields_match_the_reviewed_history() {
    let from = |first: &str, f: fn(&Image) -> bool| {
        for i in &IMAGES {
            assert_eq!(f(i), i.version() >= img(first).version(), "{}", i.tag);
        }
    };
    from("v0.20.2rc1", Image::hybrid_connector);
    from("v0.21.0rc1", Image::proxy_workers);
    from("v0.25.1rc1", Image::nested_scheduler_config);
    from("v0.22.1rc1", Image::v1_hybrid_kv);
    from("v0.23.0rc1", |i| {
        i.recompute() == RecomputeRoles::DecodeOnly
    });
    // DSA CP's refusal without SP: v0.20.2rc1 to v0.26.0rc1 only.
    for i in &IMAGES {
        let v = i.version();
        assert_eq!(
            i.dsa_cp_checks_sp(),
            v >= img("v0.20.2rc1").version() && v <= img("v0.26.0rc1").version(),
            "{}",
            i.tag
        );
    }
    let cann: Vec<&str> = IMAGES.iter().map(Image::cann).collect();
    assert_eq!(
        cann,
        [
            "8.5.1", "8.5.1", "9.0.0", "9.0.0", "9.0.0", "9.0.1", "9.1.0", "9.0.1", "9.0.1",
            "9.1.0", "9.1.0", "9.1.0", "9.1.0", "9.1.0", "9.2.0"
        ]
    );
    // Each image installs the vLLM of its own version, except v0.21.0rc1,
    // whose Dockerfile.a3 builds vLLM v0.22.1 (`ARG VLLM_TAG=v0.22.1`).
    for i in &IMAGES {
        let own = format!(
            "{}.{}.{}",
            i.version().major,
            i.version().minor,
            i.version().patch
        );
        let expected = if i.tag == "v0.21.0rc1" {
            "0.22.1"
        } else {
            own.as_str()
        };
        assert_eq!(i.vllm(), expected, "{}", i.tag);
    }
}

#[test]
fn key_history_comes_from_the_facts() {
    let ignored = |key: &str, tag: &str| config_key_ignored(key, img(tag));
    assert_eq!(ignored("enable_mlapo", "v0.20.2rc1"), None);
    assert_eq!(
        ignored("enable_mlapo", "v0.19.1rc1").as_deref(),
        Some(
            "it is read by v0.20.2rc1 to v0.30.0rc2; this image reads env `VLLM_ASCEND_ENABLE_MLAPO` instead"
        )
    );
    // The C8 split lives on the v0.23.0 branch and on main from v0.26.0rc1.
    assert_eq!(
        ignored("enable_sparse_sfa_c8", "v0.25.1rc1").as_deref(),
        Some(
            "it is read by v0.23.0rc1, v0.23.0 and v0.26.0rc1 to v0.30.0rc2; this image reads `enable_sparse_c8` instead"
        )
    );
    assert_eq!(ignored("enable_sparse_li_c8", "v0.23.0rc1"), None);
    // Nested from v0.25.1rc1; a flat scheduler key there is read nested.
    assert_eq!(ignored("scheduler_config", "v0.25.1rc1"), None);
    assert!(ignored("scheduler_config", "v0.24.0rc1").is_some());
    assert_eq!(
        ignored("no_such_key", "v0.23.0").as_deref(),
        Some("no image of the table reads it")
    );
    // An `eplb_config` sub-key written at the top level.
    assert_eq!(
        ignored("dynamic_eplb", "v0.23.0").as_deref(),
        Some("no image of the table reads it; this image reads `eplb_config.dynamic_eplb`")
    );
    assert!(config_key_known("enable_cpu_binding"));
    assert!(!config_key_known("enable_cpu_bindng"));
}

#[test]
fn env_is_dead_only_when_nothing_in_the_image_reads_it() {
    let dead = |name: &str, tag: &str| dead_env(name, img(tag));
    assert!(dead("VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL", "v0.20.2rc1").is_none());
    assert_eq!(
        dead("VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL", "v0.21.0rc1").as_deref(),
        Some("vllm-ascend reads it only at v0.18.0 to v0.20.2rc1")
    );
    // Read by torch_npu and by Mooncake, never by vllm-ascend.
    for tag in ["v0.18.0", "v0.23.0", "v0.30.0rc2"] {
        assert!(dead("ACL_OP_INIT_MODE", tag).is_none(), "{tag}");
        assert!(dead("ASCEND_BUFFER_POOL", tag).is_none(), "{tag}");
        assert!(dead("ASCEND_A3_ENABLE", tag).is_some(), "{tag}");
        // CANN's HCCL variables are not ours to judge, but their
        // lowercase spelling reads nothing.
        assert!(dead("HCCL_BUFFSIZE", tag).is_none(), "{tag}");
        assert_eq!(
            dead("hccl_buffsize", tag).as_deref(),
            Some(
                "environment names are case-sensitive and what reads this one reads `HCCL_BUFFSIZE`"
            ),
            "{tag}"
        );
        assert!(dead("vllm_ascend_enable_mlapo", tag).is_some(), "{tag}");
        // Proxy variables are read lowercase (curl, Python).
        assert!(dead("http_proxy", tag).is_none(), "{tag}");
        assert!(dead("no_proxy", tag).is_none(), "{tag}");
    }
    // Balance scheduling: the env is gone, the flat key is still read.
    assert_eq!(
        dead("VLLM_ASCEND_BALANCE_SCHEDULING", "v0.30.0rc2").as_deref(),
        Some(
            "vllm-ascend reads it only at v0.18.0 to v0.26.0rc1; use `additional_config.enable_balance_scheduling`"
        )
    );
    // The env migration completed in v0.27.1rc1 for MLAPO.
    assert!(dead("VLLM_ASCEND_ENABLE_MLAPO", "v0.26.0rc1").is_none());
    assert_eq!(
        dead("VLLM_ASCEND_ENABLE_MLAPO", "v0.27.1rc1").as_deref(),
        Some(
            "vllm-ascend reads it only at v0.18.0 to v0.26.0rc1; use `additional_config.enable_mlapo`"
        )
    );
}

/// The env-to-key migration read from the releases' docs tables is the
/// table reviewed when it was typed by hand (docs/source/user_guide/
/// configuration/additional_config.md @v0.20.2rc1 L17-28), every row once,
/// though later releases drop rows.
#[test]
fn env_migration_is_the_union_of_the_docs_tables() {
    assert_eq!(
        crate::upstream::env_migration(),
        [
            (
                "enable_balance_scheduling",
                "VLLM_ASCEND_BALANCE_SCHEDULING"
            ),
            ("enable_flashcomm1", "VLLM_ASCEND_ENABLE_FLASHCOMM1"),
            (
                "enable_matmul_allreduce",
                "VLLM_ASCEND_ENABLE_MATMUL_ALLREDUCE"
            ),
            (
                "enable_flashcomm2_parallel_size",
                "VLLM_ASCEND_FLASHCOMM2_PARALLEL_SIZE"
            ),
            ("msmonitor_use_daemon", "MSMONITOR_USE_DAEMON"),
            ("enable_mlapo", "VLLM_ASCEND_ENABLE_MLAPO"),
            ("weight_nz_mode", "VLLM_ASCEND_ENABLE_NZ"),
            (
                "enable_context_parallel",
                "VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL"
            ),
            ("enable_fused_mc2", "VLLM_ASCEND_ENABLE_FUSED_MC2"),
            (
                "enable_transpose_kv_cache_by_block",
                "VLLM_ASCEND_FUSION_OP_TRANSPOSE_KV_CACHE_BY_BLOCK"
            ),
        ]
    );
    let rows = |tag: &str| {
        img(tag)
            .facts()
            .and_then(|r| r.env_migration.as_ref())
            .map(Vec::len)
    };
    assert_eq!(rows("v0.19.1rc1"), None);
    assert_eq!(rows("v0.20.2rc1"), Some(10));
    assert_eq!(rows("v0.30.0rc2"), Some(5));
}
