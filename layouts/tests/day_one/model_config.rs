//! Preflight's `model_config` check run for real on a node's `config.json`:
//! the start-up checks that read the checkpoint's config (its derived
//! context length, its text `model_type`, its routed experts), judged on the
//! weights themselves where the compiler had no copy of the build's config
//! (GLM-4.7) or the node holds other weights.

use crate::preflight::skip_all_but;
use crate::{render, run};
use std::path::{Path, PathBuf};

const GLM: &str = "glm-4.7-w8a8c8/a3-1p1d-upstream";

/// Renders `spec` (a catalog layout's spec as JSON, changed by the test)
/// through the runtime loader, as `catalog lint` and `render` of a layout
/// file do.
fn render_spec(spec: &serde_json::Value) -> (tempfile::TempDir, PathBuf) {
    let text = serde_json::to_string(spec).unwrap();
    let layout = pd_dsl::load::from_json("changed.json", &text)
        .unwrap_or_else(|e| panic!("the changed layout does not load: {e}"));
    crate::render_layout(&layout)
}

fn spec_of(name: &str) -> serde_json::Value {
    let layout = layouts::catalog()
        .unwrap()
        .iter()
        .find(|l| l.name() == name)
        .unwrap();
    serde_json::to_value(&layout.spec).unwrap()
}

/// The ModelSlim description file every image's vllm-ascend reads.
const DESCRIPTION: &str = "quant_model_description.json";

/// Runs only `model_config` of `dir`'s preflight on weights whose
/// `config.json` is `config`, with a ModelSlim description next to it.
fn model_config(dir: &Path, config: &str) -> (i32, String) {
    model_config_files(dir, &[("config.json", config), (DESCRIPTION, "{}")])
}

/// Runs only `model_config` of `dir`'s preflight on weights holding `files`.
fn model_config_files(dir: &Path, files: &[(&str, &str)]) -> (i32, String) {
    let weights = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(weights.path().join(name), text).unwrap();
    }
    let skip = skip_all_but(dir, &["model_config"]);
    run(
        dir,
        "preflight.sh",
        &["0"],
        &[
            ("PD_MODEL_PATH", weights.path().to_str().unwrap()),
            ("PD_SKIP_PREFLIGHT", skip.as_str()),
        ],
    )
}

#[test]
fn a_max_model_len_above_what_the_weights_derive_fails_before_the_load() {
    // GLM-4.7: no copy of the build's config exists, so the compiler refuses
    // no length; the node's file decides. The layout types 8192 on both roles.
    let (_tmp, dir) = render(GLM);
    let (code, out) = model_config(
        &dir,
        r#"{"model_type": "glm4_moe", "max_position_embeddings": 202752, "n_routed_experts": 160}"#,
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("ok   model_config: model_type glm4_moe, derived max_model_len 202752"),
        "{out}"
    );
    // 4096 scaled by a linear factor 1.5 (vLLM 0.30 scales linear RoPE):
    // 6144 < 8192 on both roles.
    let (code, out) = model_config(
        &dir,
        r#"{"model_type": "glm4_moe", "max_position_embeddings": 4096, "rope_scaling": {"type": "linear", "factor": 1.5}}"#,
    );
    assert_eq!(code, 1, "{out}");
    for role in ["prefill", "decode"] {
        assert!(
            out.contains(&format!("{role} max_model_len 8192 is above the 6144 vLLM 0.30.0 derives from this config.json")),
            "{out}"
        );
    }
    assert!(
        out.contains("VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (vllm/config/model.py:"),
        "{out}"
    );
    // Exactly the layout's length passes; YaRN on vLLM 0.30 is not scaled.
    let (code, out) = model_config(
        &dir,
        r#"{"model_type": "glm4_moe", "max_position_embeddings": 8192, "rope_scaling": {"type": "yarn", "factor": 4, "original_max_position_embeddings": 1024}}"#,
    );
    assert_eq!(code, 0, "{out}");
    // A missing or broken file fails with the reason.
    let (code, out) = model_config(&dir, "not json");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL model_config:") && out.contains("cannot read it: Expecting value"),
        "{out}"
    );
}

#[test]
fn the_weights_of_another_model_fail_where_the_table_knows_the_model_type() {
    // DeepSeek-V3.1's build has a copy: model type deepseek_v3.
    let (_tmp, dir) = render(crate::PD);
    let ok = r#"{"model_type": "deepseek_v3", "max_position_embeddings": 163840, "n_routed_experts": 256}"#;
    let (code, out) = model_config(&dir, ok);
    assert_eq!(code, 0, "{out}");
    let (code, out) = model_config(
        &dir,
        r#"{"model_type": "qwen3_moe", "max_position_embeddings": 262144}"#,
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("the text model_type is 'qwen3_moe', the layout's model DeepSeek-V3.1-w8a8-mtp-QuaRot has 'deepseek_v3'"),
        "{out}"
    );
}

/// A build without a copy of its config (DeepSeek-R1-0528) is held to the
/// model table's type for its family, which names the text or the top-level
/// type: either level of the file may have it. A build with a copy
/// (Qwen3.5) is held to its copy's text type exactly, and the message says
/// where each expected type comes from.
#[test]
fn the_model_type_is_judged_where_its_source_puts_it() {
    let (_tmp, dir) = render("deepseek-r1-0528-w8a8/a3-2p1d-upstream");
    for ok in [
        r#"{"model_type": "deepseek_v3", "max_position_embeddings": 163840}"#,
        r#"{"model_type": "deepseek_v3", "text_config": {"model_type": "deepseek_v3_text", "max_position_embeddings": 163840}}"#,
    ] {
        let (code, out) = model_config(&dir, ok);
        assert_eq!(code, 0, "{ok}: {out}");
    }
    let (code, out) = model_config(
        &dir,
        r#"{"model_type": "kimi_k2", "text_config": {"model_type": "deepseek_v2"}}"#,
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("the text model_type is 'deepseek_v2', the top-level 'kimi_k2', the layout's model DeepSeek-R1-0528-W8A8 has 'deepseek_v3' (the model table's type for the family, at either level of config.json)"),
        "{out}"
    );
    let (_tmp, dir) = render("qwen3.5-397b-a17b-w4a8-mtp/a3-1p1d-upstream");
    let (code, out) = model_config(
        &dir,
        r#"{"model_type": "qwen3_5_moe", "text_config": {"model_type": "qwen3_5_moe"}}"#,
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("has 'qwen3_5_moe_text' (its text model_type in the copy aiconfigurator_core/model_configs/"),
        "{out}"
    );
    let (code, out) = model_config(
        &dir,
        r#"{"model_type": "qwen3_5_moe", "text_config": {"model_type": "qwen3_5_moe_text"}}"#,
    );
    assert_eq!(code, 0, "{out}");
}

#[test]
fn hierarchy_mc2_counts_the_experts_the_weights_have() {
    // vllm-ascend refuses hierarchy MC2 on more than 512 experts, the
    // redundant ones included with dynamic EPLB.
    let mut spec = spec_of(GLM);
    spec["roles"]["decode"]["additional_config"] = serde_json::json!({
        "mc2_comm_alg": "hierarchy",
        "eplb_config": {"dynamic_eplb": true, "num_redundant_experts": 32}
    });
    // vllm-ascend asserts dynamic EPLB's env (rule `eplb_requires_env`).
    spec["roles"]["decode"]["env"] = serde_json::json!([{"name": "DYNAMIC_EPLB", "value": "true"}]);
    let (_tmp, dir) = render_spec(&spec);
    let (code, out) = model_config(
        &dir,
        r#"{"model_type": "glm4_moe", "max_position_embeddings": 202752, "n_routed_experts": 480}"#,
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("480 routed experts"), "{out}");
    let (code, out) = model_config(
        &dir,
        r#"{"model_type": "glm4_moe", "max_position_embeddings": 202752, "n_routed_experts": 481}"#,
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("decode runs hierarchy MC2 (mc2_comm_alg) on 513 experts (481 routed in config.json + 32 redundant), above its 512"),
        "{out}"
    );
    // The prefill role does not run it.
    assert!(!out.contains("prefill runs hierarchy"), "{out}");
}

#[test]
fn a_speculative_method_outside_vllms_model_type_list_fails_on_the_weights() {
    // vLLM 0.20.2 (image v0.20.2rc1) refuses extract_hidden_states unless
    // the target's text model type contains an entry of its list; the
    // compiler cannot judge GLM-4.7, whose build names no model type.
    let mut spec = spec_of(GLM);
    spec["image"] = serde_json::json!("v0.20.2rc1");
    spec["serve"]["speculative"] =
        serde_json::json!({"method": "extract_hidden_states", "tokens": 1});
    // vLLM 0.20.2 has no `--kv-cache-dtype int8` (rule `serve_flag_accepted`).
    spec["serve"]["flags"] = serde_json::json!([]);
    let (_tmp, dir) = render_spec(&spec);
    let (code, out) = model_config(
        &dir,
        r#"{"model_type": "glm4_moe", "max_position_embeddings": 202752}"#,
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "prefill speculative method extract_hidden_states needs a model type containing one of"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "'glm4_moe' has none, so vLLM 0.20.2 refuses to start (vllm/config/speculative.py:"
        ),
        "{out}"
    );
    // A listed type (vLLM's list has `qwen3`) starts.
    let (code, out) = model_config(
        &dir,
        r#"{"model_type": "qwen3_moe", "max_position_embeddings": 202752}"#,
    );
    assert_eq!(code, 0, "{out}");
}

/// Every catalog layout whose build has a copy of its checkpoint's
/// `config.json` (the pinned aiconfigurator-core wheel of the upstream
/// corpus, fetched and sha256-checked at test time) passes its own
/// preflight's `model_config` on that real file: the check refuses nothing
/// the compiler accepted, on the real config, with the reading of each
/// layout's image. And each such copy with the layout's longest typed
/// `max_model_len` cut below it fails: the check is live on real files.
#[test]
fn every_catalog_layout_passes_model_config_on_the_real_config_of_its_build() {
    let (package, version) = pd_dsl::dims::CHECKPOINT_PACKAGE;
    let wheel = crate::preflight::corpus_tree(&format!("{package}=={version}"));
    let catalog = layouts::catalog().unwrap();
    let mut judged = 0;
    let mut cut = 0;
    for layout in catalog.iter() {
        let Some(copy) = pd_dsl::dims::config_of(layout.model) else {
            continue;
        };
        let text = std::fs::read_to_string(wheel.join(&copy.source))
            .unwrap_or_else(|e| panic!("{}: {e}", copy.source));
        let (_tmp, dir) = crate::render_layout(layout);
        let dir = dir.as_path();
        let (code, out) = model_config(dir, &text);
        assert_eq!(code, 0, "{} on {}: {out}", layout.name(), copy.source);
        judged += 1;
        // The same file with its length keys cut below the layout's
        // longest typed max_model_len (where one is judged) must fail.
        let checks = pd_dsl::preflight::checkpoint_checks(layout).unwrap();
        if let Some(len) = checks.roles.iter().filter_map(|r| r.max_model_len).max() {
            let mut cfg: serde_json::Value = serde_json::from_str(&text).unwrap();
            let target = if cfg.get("text_config").is_some_and(|t| t.is_object()) {
                &mut cfg["text_config"]
            } else {
                &mut cfg
            };
            for key in &checks.reads.max_len_keys {
                if target.get(key).is_some() {
                    target[key.as_str()] = (len - 1).into();
                }
            }
            if let Some(obj) = target.as_object_mut() {
                obj.remove("rope_scaling");
                obj.remove("rope_parameters");
            }
            let (code, out) = model_config(dir, &cfg.to_string());
            assert_eq!(code, 1, "{} with length {}: {out}", layout.name(), len - 1);
            assert!(
                out.contains(&format!("max_model_len {len} is above the {}", len - 1)),
                "{out}"
            );
            cut += 1;
        }
    }
    // The catalog's sized and copied builds (DeepSeek, Kimi, Qwen3,
    // MiniMax, GLM-5): a count well past a handful says the walk ran.
    assert!(judged >= 20 && cut >= 10, "judged {judged}, cut {cut}");
    eprintln!(
        "model_config: {judged} catalog layouts pass on their build's real config, {cut} fail when cut"
    );
}
