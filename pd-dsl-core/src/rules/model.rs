//! Model facts against a role's settings: attention-specific keys, DSA context parallelism, C8 KV with GQA and the V1 connector, and `eplb_config`'s strict schema.

use super::names::list;
use super::serve::Facts;
use super::settings::{config_site, env_site};
use crate::check::Cx;
use crate::layout::Serve;
use crate::rules::{Rule, did_you_mean};
use crate::site::Site;
use crate::spec::{ConnectorKind, EnvValue, Json, LayoutSpec, Role};
use crate::tables::{self, Image};

declare_rules! {
    /// An attention-specific `additional_config` key on a model whose backend
    /// ignores it (`tables::ATTENTION_CONFIG_KEYS`: MLAPO read by the MLA and
    /// SFA backends, the sparse C8 keys ANDed with `use_sparse` in
    /// ascend_config.py, v0.18.0 to v0.30.0rc2).
    ConfigKeyAttention = "config_key_attention", Convention, "attention-specific `additional_config` keys are set only for models whose backend reads them";
    /// `enable_dsa_cp` on a model without the DSA indexer: vllm-ascend turns
    /// DSA context parallelism on only when the model config has
    /// `index_topk` (vllm_ascend/utils.py `enable_dsa_cp`, every release
    /// v0.18.0 to v0.30.0rc2), so the setting is silently ignored.
    DsaCpNeedsIndexer = "dsa_cp_needs_indexer", Convention, "`enable_dsa_cp` is set only for models with the DSA indexer (DeepSeek-V3.2, GLM-5.x, DeepSeek-V4)";
    /// `enable_dsa_cp` on an indexer model without sequence parallelism, on
    /// an image that refuses it: ValueError "DSA CP requires SP to be
    /// enabled" in vllm_ascend/utils.py from v0.20.2rc1 (L1407) to v0.26.0rc1
    /// (L1404); from v0.27.1rc1 DSA CP turns SP on itself (ascend_config.py
    /// L524-529). The rows' `dsa_cp_checks_sp`; sequence parallelism as the
    /// image's `enable_sp()` reads it (generated `enable_sp`: FlashComm1 by
    /// key or env, and shared-expert DP up to v0.25.1rc1 only).
    DsaCpNeedsSp = "dsa_cp_needs_sp", Hard, "`enable_dsa_cp` on an indexer model comes with sequence parallelism (FlashComm1, or shared-expert DP up to v0.25.1rc1) on v0.20.2rc1 to v0.26.0rc1";
    /// C8 KV weights on a GQA model through `MooncakeConnectorV1`:
    /// `_check_mooncake_c8_kv_cache_quant` raises from v0.23.0rc1
    /// (ascend_config.py @v0.23.0rc1 L35 … @v0.30.0rc2 L715); earlier images corrupt the
    /// transfer silently.
    C8KvGqaConnector = "c8_kv_gqa_connector", Hard, "C8 KV weights of GQA models move KV with the Layerwise connector, not V1";
    /// `eplb_config` sub-key or value the image rejects: `EplbConfig` in
    /// vllm_ascend/ascend_config.py ("Config has no attribute" @v0.18.0 L391
    /// … @v0.26.0rc1 L884, pydantic `extra="forbid"` from v0.27.1rc1); the
    /// sub-keys are the facts' `eplb_config` entry.
    EplbConfigStrict = "eplb_config_strict", Hard, "`eplb_config` holds only the sub-keys and values the image accepts";
    /// A model the platform starts only on the V2 model runner on this
    /// hardware, on an engine without env `VLLM_USE_V2_MODEL_RUNNER=1`:
    /// ValueError "DeepSeek V4.1 on Ascend A5 requires Model Runner V2"
    /// (vllm_ascend/platform.py `_validate_model_runner_config`,
    /// v0.30.0rc1 and v0.30.0rc2 L952). Read from the generated facts
    /// (`v2_runner_required`: the architectures, and the devices whose
    /// hardware profile has the capability the check tests); the model
    /// table's `architecture` names the model.
    ModelRunnerRequired = "model_runner_required", Hard, "a model the platform starts only on the V2 model runner on this hardware gets env `VLLM_USE_V2_MODEL_RUNNER=1`";
    /// An engine of a model with Engram tables at a TP size Ascend Engram
    /// refuses: ValueError "Ascend Engram requires TP=1/2/4/8 with PP=DCP=1"
    /// (vllm_ascend/platform.py `_validate_engram_config`, v0.30.0rc1 and
    /// v0.30.0rc2 L1615). Read from the generated facts (`engram_tp`). The
    /// platform builds the Engram config itself when the checkpoint's config
    /// has `engram_layer_ids`, which the DeepSeek-V4.1 weights carry (INT8
    /// Engram tables, DeepSeek-V4.1-Flash.md L34, L51).
    EngramTpSupported = "engram_tp_supported", Hard, "a model with Engram tables runs at a TP size Ascend Engram takes (1, 2, 4 or 8)";
}

/// Model-fact rules on one role's settings that are not about limits:
/// attention-specific keys, `enable_dsa_cp` without an indexer or without
/// sequence parallelism and the C8 KV + GQA + V1 transfer corruption.
pub(crate) fn check_model_settings(
    facts: &Facts<'_>,
    role: Role,
    serve: &Serve,
    dp_tp: Option<(u32, u32)>,
    cx: &mut Cx,
) {
    let Facts {
        spec, model, image, ..
    } = *facts;
    let Some(m) = model else { return };
    let scope = role.as_str();
    for k in tables::ATTENTION_CONFIG_KEYS {
        if serve.config_flag(k.name) && !k.attention.contains(&m.attention) {
            cx.report(
                Rule::ConfigKeyAttention,
                config_site(spec, role, k.name),
                format!("{scope}.additional_config.{}", k.name),
                format!(
                    "found `{}` with `{}` ({} attention), expected it only for {} models: {}, so here it is silently ignored",
                    k.name,
                    m.weights,
                    m.attention.as_str(),
                    k.attention
                        .iter()
                        .map(|a| a.as_str())
                        .collect::<Vec<_>>()
                        .join(" or "),
                    k.source
                ),
            );
        }
    }
    // enable_dsa_cp: `utils.enable_dsa_cp()` returns False before it reads
    // the key unless the model config has `index_topk` (vllm_ascend/utils.py
    // @v0.20.2rc1 L1389-1409, @v0.25.1rc1 L1374-1394, @v0.26.0rc1 L1386);
    // from v0.27.1rc1 `AscendConfig` ANDs the key with `has_indexer`
    // (ascend_config.py @v0.27.1rc1 L578-584, @v0.30.0rc2 L800-806), so on
    // any other model DSA context parallel never runs. (platform.py
    // @v0.30.0rc2 L531, L1279 also passes the key on, but only to round
    // capture sizes to TP multiples, not to turn context parallel on.)
    if serve.config_flag("enable_dsa_cp") && !m.attention.has_indexer() {
        cx.report(
            Rule::DsaCpNeedsIndexer,
            config_site(spec, role, "enable_dsa_cp"),
            format!("{scope}.additional_config.enable_dsa_cp"),
            format!(
                "found `enable_dsa_cp` with `{}` ({} attention), expected it only for models with the DSA indexer (DeepSeek-V3.2, GLM-5.x, DeepSeek-V4): vllm-ascend turns DSA context parallel on only when the model config has `index_topk` (utils.py `enable_dsa_cp`), so here it is silently ignored",
                m.weights,
                m.attention.as_str()
            ),
        );
    }
    // DSA CP needs SP: on the images whose row says `dsa_cp_checks_sp`
    // (v0.20.2rc1 to v0.26.0rc1, utils.py `enable_dsa_cp`; see the field),
    // `utils.enable_dsa_cp()` raises a ValueError when an indexer model sets
    // the key and `enable_sp()` is false, and the engine never starts.
    if python_truthy(serve.additional_config.get("enable_dsa_cp"))
        && m.attention.has_indexer()
        && let Some(img) = image.filter(|i| i.dsa_cp_checks_sp())
        && sequence_parallel(img, serve, dp_tp.map(|(_, tp)| tp)) == Some(false)
    {
        cx.report(
            Rule::DsaCpNeedsSp,
            config_site(spec, role, "enable_dsa_cp"),
            format!("{scope}.additional_config.enable_dsa_cp"),
            format!(
                "found `enable_dsa_cp` on {scope} with `{}` and sequence parallelism off, expected SP on: {}: image `{}` refuses to start with \"DSA CP requires SP to be enabled\" (utils.py `enable_dsa_cp`)",
                m.weights,
                sequence_parallel_switches(img),
                img.tag
            ),
        );
    }
    check_model_runner(facts, role, serve, dp_tp, cx);
    // ascend_config.py `_check_mooncake_c8_kv_cache_quant` (@v0.23.0rc1 L35,
    // @v0.26.0rc1 L64, @v0.30.0rc2 L715; from v0.23.0rc1): the producer keeps bf16 KV while the consumer
    // allocates int8, and V1 moves raw bytes. Earlier images have no check
    // and transfer garbage, so this holds on every image.
    if role == Role::Decode
        && m.kv_c8
        && m.attention == tables::Attention::Gqa
        && let Some(c) = &spec.connector
        && c.kind.value == ConnectorKind::MooncakeV1
    {
        cx.report(
            Rule::C8KvGqaConnector,
            c.kind.site,
            "connector",
            format!(
                "found `mooncake_v1` moving the int8 (C8) KV cache of `{}`, a GQA model, expected `mooncake_layerwise`: the producer keeps bf16 KV and V1 copies raw bytes into the consumer's int8 cache{}",
                m.weights,
                if image.is_some_and(|i| i.version() >= tables::Version { major: 0, minor: 23, patch: 0, rc: Some(1) }) {
                    " (ValueError at start-up, ascend_config.py L374-398)"
                } else {
                    " (silent corruption: this image does not check it)"
                }
            ),
        );
    }
}

/// Python's `bool()` of a JSON value as vllm-ascend reads `additional_config`
/// (`bool(additional_config[key])`): absent, `false`, `null`, `0`, `""`, `[]`
/// and `{}` are false.
pub(crate) fn python_truthy(v: Option<&Json>) -> bool {
    match v {
        None | Some(Json::Null) | Some(Json::Bool(false)) => false,
        Some(Json::Bool(true)) => true,
        Some(Json::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Json::String(s)) => !s.is_empty(),
        Some(Json::Array(a)) => !a.is_empty(),
        Some(Json::Object(o)) => !o.is_empty(),
    }
}

/// Whether vllm-ascend's `enable_sp()` (vllm_ascend/utils.py) is true for a
/// role of TP `tp`, from what the image's generated facts say it reads
/// (`enable_sp`): `additional_config.enable_flashcomm1` when the key is
/// present (even `false` wins over the env), else the env variables it reads
/// as integers (`VLLM_ASCEND_ENABLE_FLASHCOMM` and `..._FLASHCOMM1` at
/// v0.18.0/v0.19.1rc1, `..._FLASHCOMM1` from v0.20.2rc1); and forced on by
/// `enable_shared_expert_dp` where it reads `shared_expert_dp` (up to
/// v0.25.1rc1), which `AscendConfig` keeps only with `--enable-expert-parallel`
/// and TP > 1 (ascend_config.py @v0.20.2rc1 L106-114, @v0.25.1rc1 L101-109).
/// `None` where the image has no such fact or it reads what pd-dsl does not
/// model (vLLM's `use_sequence_parallel_moe`, from v0.27.1rc1).
pub(crate) fn sequence_parallel(img: &Image, serve: &Serve, tp: Option<u32>) -> Option<bool> {
    let f = img.facts()?.enable_sp.as_ref()?;
    let mut key = false;
    let mut forced = false;
    let mut envs = Vec::new();
    for r in &f.reads {
        match r.as_str() {
            "additional_config.enable_flashcomm1" => key = true,
            "shared_expert_dp" => forced = true,
            _ => envs.push(r.strip_prefix("env.")?),
        }
    }
    let switched = match serve.additional_config.get("enable_flashcomm1") {
        Some(v) if key => python_truthy(Some(v)),
        _ => envs.iter().any(|name| {
            matches!(serve.env_value(name), Some(EnvValue::Literal(s)) if s.trim().parse::<i64>().is_ok_and(|n| n != 0))
        }),
    };
    let shared = forced
        && python_truthy(serve.additional_config.get("enable_shared_expert_dp"))
        && serve.expert_parallel
        && tp.is_some_and(|tp| tp > 1);
    Some(switched || shared)
}

/// How a layout turns [`sequence_parallel`] on at an image, for messages:
/// what the image's `enable_sp()` reads, in words.
pub(crate) fn sequence_parallel_switches(img: &Image) -> String {
    let Some(f) = img.facts().and_then(|r| r.enable_sp.as_ref()) else {
        return "FlashComm1".to_owned();
    };
    let key = f
        .reads
        .iter()
        .any(|r| r == "additional_config.enable_flashcomm1");
    let envs: Vec<String> = f
        .reads
        .iter()
        .filter_map(|r| r.strip_prefix("env."))
        .map(|e| format!("env `{e}: 1`"))
        .collect();
    let mut ways = Vec::new();
    if key {
        ways.push("`additional_config.enable_flashcomm1: true`".to_owned());
    }
    if !envs.is_empty() {
        let when = if key { " (when the key is absent)" } else { "" };
        ways.push(format!("{}{when}", envs.join(" or ")));
    }
    if f.reads.iter().any(|r| r == "shared_expert_dp") {
        ways.push("`enable_shared_expert_dp` with `expert_parallel` and TP > 1".to_owned());
    }
    match ways.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{}, or {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => "FlashComm1".to_owned(),
    }
}

/// `eplb_config` is validated strictly by `EplbConfig` in
/// vllm_ascend/ascend_config.py: unknown sub-keys raise (`Config has no
/// attribute` @v0.18.0 L391 … @v0.26.0rc1 L884; a pydantic model with
/// `extra="forbid"` from @v0.27.1rc1 L110), and so do bad values. The
/// accepted sub-keys and `strict` are the facts' `eplb_config` entry.
pub(crate) fn check_eplb_config(
    spec: &LayoutSpec,
    role: Role,
    img: &Image,
    eplb: &Json,
    cx: &mut Cx,
) {
    let scope = role.as_str();
    let site = config_site(spec, role, "eplb_config");
    let field = format!("{scope}.additional_config.eplb_config");
    let Some(map) = eplb.as_object() else {
        cx.report(
            Rule::EplbConfigStrict,
            site,
            field,
            format!("found `eplb_config` {eplb}, expected a mapping of EPLB settings: vllm-ascend reads it as a dict (ascend_config.py `EplbConfig`)"),
        );
        return;
    };
    let known: Vec<&str> = tables::eplb_config_keys(img);
    // `strict` in the facts: `EplbConfig` raises for an unknown sub-key.
    let strict = img
        .facts()
        .and_then(|r| r.config_key("eplb_config"))
        .is_some_and(|k| k.strict);
    for (k, v) in map {
        if strict && !known.contains(&k.as_str()) {
            let hint = did_you_mean(k, known.iter().copied());
            let readers = tables::eplb_config_key_readers(k);
            let note = if readers.is_empty() {
                String::new()
            } else {
                format!(" (read by {})", crate::upstream::describe(&readers))
            };
            cx.report(
                Rule::EplbConfigStrict,
                site,
                format!("{field}.{k}"),
                format!(
                    "found `eplb_config.{k}` on image `{}`{note}, expected one of {}: vllm-ascend rejects any other key (`EplbConfig`: ValueError \"Config has no attribute\" to v0.26.0rc1, pydantic `extra=\"forbid\"` from v0.27.1rc1){hint}",
                    img.tag,
                    list(known.iter().copied())
                ),
            );
            continue;
        }
        let bad = match k.as_str() {
            "expert_heat_collection_interval"
            | "algorithm_execution_interval"
            | "num_redundant_experts" => {
                (!v.is_u64()).then_some("a non-negative integer (TypeError/ValueError otherwise)")
            }
            "eplb_policy_type" => v
                .as_u64()
                .is_none_or(|n| n > 3)
                .then_some("one of `0`, `1`, `2`, `3` (ValueError otherwise)"),
            "eplb_heat_collection_stage" => {
                (!matches!(v.as_str(), Some("all" | "prefill" | "decode"))).then_some(
                    "one of `\"all\"`, `\"prefill\"`, `\"decode\"` (ValueError otherwise)",
                )
            }
            "expert_map_path" | "expert_map_record_path" => (!v.is_null()
                && !v.as_str().is_some_and(|p| p.ends_with(".json")))
            .then_some("a path ending in `.json` (TypeError otherwise)"),
            // Not type-checked upstream: any non-empty string is truthy
            // there, so `"false"` would switch dynamic EPLB on.
            "dynamic_eplb" => (!v.is_boolean())
                .then_some("`true` or `false` (vllm-ascend reads it as a Python truth value, so `\"false\"` is on)"),
            _ => None,
        };
        if let Some(expected) = bad {
            cx.report(
                Rule::EplbConfigStrict,
                site,
                format!("{field}.{k}"),
                format!("found `eplb_config.{k}: {v}`, expected {expected}: `EplbConfig` checks its values at start-up (ascend_config.py L1028-1056)"),
            );
        }
    }
}

/// The platform's model-specific refusals that read the architecture:
/// the V2 model runner where the facts' `v2_runner_required` asks for it,
/// and Engram's TP sizes (`engram_tp`).
fn check_model_runner(
    facts: &Facts<'_>,
    role: Role,
    serve: &Serve,
    dp_tp: Option<(u32, u32)>,
    cx: &mut Cx,
) {
    let Facts {
        spec,
        model,
        hw,
        image,
        ..
    } = *facts;
    let (Some(m), Some(arch), Some(img)) = (model, model.and_then(|m| m.architecture), image)
    else {
        return;
    };
    let Some(rel) = img.facts() else { return };
    if let Some(hw) = hw
        && !super::features::v2_runner_on(serve)
        && let Some(r) = rel.v2_runner_required.iter().find(|r| {
            r.architectures.iter().any(|a| a == arch)
                && r.devices.iter().any(|d| d == hw.device_type())
        })
    {
        let env = env_site(spec, role, "VLLM_USE_V2_MODEL_RUNNER");
        let site = if env == Site::NONE {
            spec.model.site
        } else {
            env
        };
        cx.report(
            Rule::ModelRunnerRequired,
            site,
            format!("{role}.env.VLLM_USE_V2_MODEL_RUNNER"),
            format!(
                "found `{}` ({arch}) on a {role} engine on {} ({}) without env `VLLM_USE_V2_MODEL_RUNNER=1`, expected that env: vllm-ascend {} starts it only on the V2 model runner on hardware with `{}` ({} `_validate_model_runner_config`)",
                m.id, hw.product, hw.device_type(), rel.version, r.capability, r.source
            ),
        );
    }
    if let Some(e) = &rel.engram_tp
        && e.architecture == arch
        && let Some((_, tp)) = dp_tp
        && !e.tp_sizes.contains(&tp)
        && let Some(g) = spec.topology.iter().find(|g| g.role.value == role)
    {
        cx.report(
            Rule::EngramTpSupported,
            g.shape_site,
            "topology",
            format!(
                "found `{}` (TP{tp}) for `{}`, a model with Engram tables, expected TP {}: vllm-ascend {} refuses other sizes at start ({} `_validate_engram_config`)",
                g.shape(),
                m.id,
                one_of(&e.tp_sizes),
                rel.version,
                e.source
            ),
        );
    }
}

/// `1, 2, 4 or 8`.
fn one_of(sizes: &[u32]) -> String {
    let words: Vec<String> = sizes.iter().map(u32::to_string).collect();
    match words.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => words.join(""),
    }
}
