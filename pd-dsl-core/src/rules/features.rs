//! vllm-ascend features' preconditions, from the generated facts: fine-grained TP, EPLB and the model runner, MLAPO weights, KV pipeline parallelism and sparse KV offload (context parallelism: `context_parallel`).

use super::serve::Facts;
use super::settings::config_site;
use super::settings::config_value_site;
use super::settings::env_site;
use crate::check::Cx;
use crate::layout::Serve;
use crate::rules::Rule;
use crate::site::Site;
use crate::spec::{EnvValue, GraphMode, Json, LayoutSpec, Role, ServeSpec};
use crate::tables::{self};

declare_rules! {
    /// A fine-grained TP size beyond its bound where vllm-ascend refuses it
    /// at start (`FinegrainedTPConfig`, vllm_ascend/ascend_config.py
    /// @v0.18.0 L225, @v0.23.0 L537, @v0.30.0rc2 L1362): oproj (and olora
    /// v0.20.2rc1 to v0.27.1rc1, MLP from v0.30.0rc1) only on decode engines
    /// of a PD layout, with graphs, TP 1 (from v0.23.0rc1) and PCP 1 (from
    /// v0.30.0rc1); every size but lmhead's (`lmhead_tensor_parallel`)
    /// divides DP. Read per release from the generated facts
    /// (`finegrained_tp`), not typed.
    FinegrainedTpPreconditions = "finegrained_tp_preconditions", Hard, "fine-grained TP sizes meet vllm-ascend's preconditions";
    /// `eplb_config` fields and EPLB env switches of the other model runner:
    /// on the V2 runner (`VLLM_USE_V2_MODEL_RUNNER=1`) only its fields, and
    /// no `DYNAMIC_EPLB`/`EXPERT_MAP_RECORD`, and `load_collection_phase`
    /// off `all` only with vLLM's `--enable-eplb` (L912, L984); on the V1
    /// runner none of the V2 fields (vllm_ascend/platform.py
    /// `_validate_eplb_config` @v0.27.1rc1 L896, @v0.30.0rc2 L967). Read from
    /// the generated facts (`eplb_runner`, its `v2_fields_need_flag`).
    EplbConfigModelRunner = "eplb_config_model_runner", Hard, "EPLB settings belong to the model runner the engine runs";
    /// `mlapo_keep_prefill_weights` on a GQA model: ValueError "only
    /// supported for MLA models" (vllm_ascend/ascend_config.py `AscendConfig`
    /// @v0.27.1rc1-v0.30.0rc2, where the facts list the key).
    MlapoKeepNeedsMla = "mlapo_keep_needs_mla", Hard, "`mlapo_keep_prefill_weights` is for MLA models";
    /// `enable_kvpp` with TP x PCP above 1 against `KVPPConfig.validate`'s
    /// preconditions (generated facts `kvpp`, vllm_ascend/ascend_config.py
    /// @v0.28.0rc1-v0.30.0rc2): mixed engines only (its PD connector is
    /// `MooncakeConnectorV2`), eager or piecewise graphs, MLA, its
    /// speculative methods, no DCP.
    KvppPreconditions = "kvpp_preconditions", Hard, "KV layer parallelism runs on a mixed MLA engine with an eager (or piecewise) graph, its speculative methods and no DCP";
    /// Sparse KV offload on a model without DSA sparse attention: vllm-ascend
    /// refuses `sparse_kv_offload_config.enabled` when the config has
    /// `compress_ratios` or lacks `index_topk` (vllm_ascend/ascend_config.py
    /// `SparseKVOffloadConfig` @v0.26.0rc1-v0.30.0rc2).
    SparseKvOffloadNeedsDsa = "sparse_kv_offload_needs_dsa", Hard, "sparse KV offload needs a DSA-sparse model (DeepSeek-V3.2, GLM-5.x)";
    /// Sparse KV offload with PCP or DCP above 1: refused at start
    /// (vllm_ascend/ascend_config.py `SparseKVOffloadConfig` @v0.26.0rc1-v0.30.0rc2).
    SparseKvOffloadWithoutCp = "sparse_kv_offload_without_cp", Hard, "sparse KV offload runs without context parallelism";
    /// Hierarchy MC2 (`additional_config.mc2_comm_alg: "hierarchy"`, or
    /// `enable_mc2_hierarchy_comm: true`) on more experts than it takes: the
    /// model's routed experts plus, with `eplb_config.dynamic_eplb`,
    /// `eplb_config.num_redundant_experts` above 512 raise ValueError at start
    /// (`AscendConfig._validate_mc2_comm_alg`, vllm_ascend/ascend_config.py
    /// @v0.27.1rc1 L758 … @v0.30.0rc2 L999; the generated facts'
    /// `mc2_hierarchy_experts`). Judged for the models whose routed experts
    /// are known (`dims::routed_experts`: their dimensions, else the copy of
    /// their checkpoint's config).
    Mc2HierarchyExperts = "mc2_hierarchy_experts", Hard, "hierarchy MC2 runs on at most 512 experts, redundant EPLB experts included";
}

/// Hierarchy MC2's expert limit (rule `mc2_hierarchy_experts`, the facts'
/// `mc2_hierarchy_experts`): the routed experts of the model's dimensions,
/// plus the redundant ones when the EPLB switch is on.
pub(crate) fn check_mc2_hierarchy_experts(
    facts: &Facts<'_>,
    role: Role,
    serve: &Serve,
    cx: &mut Cx,
) {
    let (Some(img), Some(model)) = (facts.image, facts.model) else {
        return;
    };
    let Some(rel) = img.facts() else {
        return;
    };
    let Some(limit) = rel.mc2_hierarchy_experts.as_ref() else {
        return;
    };
    let Some((experts, experts_source)) = crate::dims::routed_experts(model.id) else {
        return;
    };
    let Some((key, redundant)) = mc2_hierarchy(limit, |k| serve.additional_config.get(k)) else {
        return;
    };
    if !limit.exceeds(experts, redundant) {
        return;
    }
    let total = experts.saturating_add(redundant);
    let with = if redundant > 0 {
        format!(
            " + {redundant} redundant: `eplb_config.num_redundant_experts` with `eplb_config.{}` on",
            limit.redundant_when
        )
    } else {
        String::new()
    };
    cx.report(
        Rule::Mc2HierarchyExperts,
        config_site(facts.spec, role, key),
        format!("{}.additional_config.{key}", role.as_str()),
        format!(
            "found hierarchy MC2 (`{key}`) on a {role} engine with {total} experts ({experts} routed experts of `{}` [{experts_source}]{with}), expected at most {}: vllm-ascend {} refuses more at start ({} `_validate_mc2_comm_alg`); use another `mc2_comm_alg` or fewer redundant experts",
            model.id,
            limit.max_experts,
            rel.version,
            limit.source
        ),
    );
}

/// Whether a role runs hierarchy MC2 as `limit` (the image's
/// `mc2_hierarchy_experts` fact) tests it: the key that turns it on
/// (`mc2_comm_alg` or an alias), and the redundant experts counted with the
/// model's (`eplb_config.num_redundant_experts` when the EPLB switch is on,
/// else 0), read from `--additional-config` through `config`. The rule, the
/// generated preflight and the rehearsal's stand-in vllm
/// (`crate::preflight::role_checks`) ask this.
pub(crate) fn mc2_hierarchy<'a, 'c>(
    limit: &'a crate::upstream::Mc2HierarchyExperts,
    config: impl Fn(&str) -> Option<&'c Json>,
) -> Option<(&'a str, u64)> {
    let by_alias = limit
        .aliases
        .iter()
        .find(|k| super::model::python_truthy(config(k.as_str())));
    let key = match (config("mc2_comm_alg"), by_alias) {
        (Some(Json::String(v)), _) if *v == limit.alg => "mc2_comm_alg",
        (_, Some(alias)) => alias.as_str(),
        _ => return None,
    };
    let redundant = match config("eplb_config") {
        Some(e) if super::model::python_truthy(e.get(limit.redundant_when.as_str())) => e
            .get("num_redundant_experts")
            .and_then(Json::as_u64)
            .unwrap_or(0),
        _ => 0,
    };
    Some((key, redundant))
}

/// `additional_config.finegrained_tp_config` against what the image's
/// `FinegrainedTPConfig` requires of each size (rule
/// `finegrained_tp_preconditions`, from the generated facts).
pub(crate) fn check_finegrained_tp(
    facts: &Facts<'_>,
    role: Role,
    serve: &Serve,
    dp_tp: Option<(u32, u32)>,
    pcp: u32,
    cx: &mut Cx,
) {
    let (Some(img), Some((dp, tp))) = (facts.image, dp_tp) else {
        return;
    };
    let Some(ft) = img.facts().and_then(|r| r.finegrained_tp.as_ref()) else {
        return;
    };
    let Some(cfg) = serve.additional_config.get("finegrained_tp_config") else {
        return;
    };
    let spec = facts.spec;
    let scope = role.as_str();
    let site = |key: &str| config_value_site(spec, role, &format!("finegrained_tp_config.{key}"));
    for (key, need) in &ft.sizes {
        let Some(size) = cfg.get(key).and_then(Json::as_u64) else {
            continue;
        };
        if size <= need.above {
            continue;
        }
        let mut unmet = Vec::new();
        for n in &need.needs {
            match n.as_str() {
                "decode" if !(facts.pd && role == Role::Decode) => {
                    unmet.push(format!(
                        "a decode engine of a PD layout (a kv_consumer), not a {role} engine"
                    ));
                }
                "graph" if serve.graph == Some(GraphMode::Eager) => {
                    unmet.push("graph mode, not `graph: eager`".to_owned());
                }
                "tp1" if tp > 1 => unmet.push(format!("TP 1, not TP{tp}")),
                "no_pcp" if pcp > 1 => unmet.push(format!("PCP 1, not pcp{pcp}")),
                _ => {}
            }
        }
        if !unmet.is_empty() {
            cx.report(
                Rule::FinegrainedTpPreconditions,
                site(key),
                format!("{scope}.additional_config.finegrained_tp_config.{key}"),
                format!(
                    "found `{key}` {size} on a {role} engine, expected it on {}: vllm-ascend asserts that at start on image `{}` (`FinegrainedTPConfig`, {})",
                    unmet.join(", "),
                    img.tag,
                    need.source
                ),
            );
        }
    }
    for key in &ft.divide_dp {
        // lmhead's has its own rule.
        if key == "lmhead_tensor_parallel_size" {
            continue;
        }
        if let Some(size) = cfg.get(key).and_then(Json::as_u64)
            && size > 0
            && u64::from(dp) % size != 0
        {
            cx.report(
                Rule::FinegrainedTpPreconditions,
                site(key),
                format!("{scope}.additional_config.finegrained_tp_config.{key}"),
                format!(
                    "found `{key}` {size} on a {role} engine of DP{dp}, expected a size dividing DP{dp}: vllm-ascend groups it over DP ranks and asserts that at start on image `{}` (`FinegrainedTPConfig`, {})",
                    img.tag,
                    ft.source
                ),
            );
        }
    }
}

/// An env switch read as `os.getenv(name, "false").lower() in ("true", "1")`
/// (vllm_ascend/platform.py `_validate_eplb_config`, ascend_config.py's
/// `DYNAMIC_EPLB` read).
pub(crate) fn env_is_true(serve: &Serve, name: &str) -> bool {
    matches!(serve.env_value(name), Some(EnvValue::Literal(v)) if v == "1" || v.eq_ignore_ascii_case("true"))
}

/// The site of flag `name` in the role's block, else in `serve`.
pub(crate) fn flag_site(spec: &LayoutSpec, role: Role, name: &str, value: bool) -> Option<Site> {
    let find = |b: &ServeSpec| {
        b.flags.iter().find(|f| f.name.value == name).map(|f| {
            if value {
                f.value.as_ref().map_or(f.name.site, |v| v.site)
            } else {
                f.name.site
            }
        })
    };
    spec.roles
        .get(&role)
        .and_then(find)
        .or_else(|| find(&spec.serve))
}

/// Whether the engine runs vLLM's V2 model runner: on Ascend chosen by
/// `VLLM_USE_V2_MODEL_RUNNER` alone
/// (vllm_ascend/patch/platform/patch_use_v2_model_runner.py), parsed as
/// `bool(int(value))` (vllm/envs.py `maybe_convert_bool`).
pub(crate) fn v2_runner_on(serve: &Serve) -> bool {
    match serve.env_value("VLLM_USE_V2_MODEL_RUNNER") {
        Some(EnvValue::Literal(v)) => crate::upstream::maybe_convert_bool(v) == Some(true),
        Some(_) => true,
        None => false,
    }
}

/// Whether vLLM's boolean option `flag` ends on: its last occurrence in the
/// role's flags is the flag (no value, or a true one) rather than its
/// negated form, which exists only where the image's vLLM marks the option
/// `negatable` (`BooleanOptionalAction`; generated facts `serve_flags`).
fn flag_on(serve: &Serve, flag: &str, negated: Option<&str>) -> bool {
    serve
        .flags
        .iter()
        .rev()
        .find_map(|(n, v)| {
            if n == flag {
                Some(match v {
                    None | Some(Json::Bool(true)) => true,
                    Some(Json::String(s)) => s.eq_ignore_ascii_case("true") || s == "1",
                    Some(_) => false,
                })
            } else if negated == Some(n.as_str()) {
                Some(false)
            } else {
                None
            }
        })
        .unwrap_or(false)
}

/// EPLB settings against the model runner the engine runs (rule
/// `eplb_config_model_runner`, from the facts' `eplb_runner`).
pub(crate) fn check_eplb_runner(facts: &Facts<'_>, role: Role, serve: &Serve, cx: &mut Cx) {
    let Some(img) = facts.image else {
        return;
    };
    let Some(er) = img.facts().and_then(|r| r.eplb_runner.as_ref()) else {
        return;
    };
    let spec = facts.spec;
    let scope = role.as_str();
    let v2 = v2_runner_on(serve);
    let map = serve
        .additional_config
        .get("eplb_config")
        .and_then(Json::as_object);
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_owned()
        } else {
            v.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    if v2 {
        if let Some(map) = map {
            let bad: Vec<String> = map
                .keys()
                .filter(|k| !er.v2_fields.contains(k))
                .cloned()
                .collect();
            if !bad.is_empty() {
                cx.report(
                    Rule::EplbConfigModelRunner,
                    config_site(spec, role, "eplb_config"),
                    format!("{scope}.additional_config.eplb_config"),
                    format!(
                        "found `eplb_config` {} on a {role} engine running the V2 model runner (env `VLLM_USE_V2_MODEL_RUNNER`), expected only {}: vllm-ascend refuses the V1 runner's EPLB fields there at start on image `{}` ({})",
                        list(&bad),
                        list(&er.v2_fields),
                        img.tag,
                        er.source
                    ),
                );
            }
        }
        for need in &er.v2_fields_need_flag {
            let Some(value) = map.and_then(|m| m.get(&need.field)) else {
                continue;
            };
            // `--no-<name>` where the image's vLLM accepts it.
            let negated = crate::upstream::vllm_of(img)
                .ok()
                .and_then(|v| v.flag(need.flag.trim_start_matches("--")))
                .filter(|f| f.negatable)
                .map(|f| format!("--no-{}", f.name));
            if *value == need.default || flag_on(serve, &need.flag, negated.as_deref()) {
                continue;
            }
            let path = format!("eplb_config.{}", need.field);
            cx.report(
                Rule::EplbConfigModelRunner,
                config_value_site(spec, role, &path),
                format!("{scope}.additional_config.{path}"),
                format!(
                    "found `eplb_config.{}` {value} on a {role} engine running the V2 model runner without `{}`, expected `{}` in the role's flags (or `{}` {}): vllm-ascend refuses it at start on image `{}` (\"additional_config.eplb_config.{} requires {}\", {})",
                    need.field,
                    need.flag,
                    need.flag,
                    need.field,
                    need.default,
                    img.tag,
                    need.field,
                    need.flag,
                    need.source
                ),
            );
        }
        for name in &er.v2_refused_env {
            if env_is_true(serve, name) {
                cx.report(
                    Rule::EplbConfigModelRunner,
                    env_site(spec, role, name),
                    format!("{scope}.env.{name}"),
                    format!(
                        "found env `{name}` set true on a {role} engine running the V2 model runner, expected it unset: it is a V1 runner control, and vllm-ascend refuses it with the V2 runner at start on image `{}` ({})",
                        img.tag, er.source
                    ),
                );
            }
        }
    } else if let Some(map) = map {
        let bad: Vec<String> = er
            .v1_refused_fields
            .iter()
            .filter(|k| map.contains_key(k.as_str()))
            .cloned()
            .collect();
        if !bad.is_empty() {
            cx.report(
                Rule::EplbConfigModelRunner,
                config_site(spec, role, "eplb_config"),
                format!("{scope}.additional_config.eplb_config"),
                format!(
                    "found `eplb_config` {} on a {role} engine running the V1 model runner, expected them only with env `VLLM_USE_V2_MODEL_RUNNER=1`: vllm-ascend refuses them on the V1 runner at start on image `{}` ({})",
                    list(&bad),
                    img.tag,
                    er.source
                ),
            );
        }
    }
}

/// `additional_config.mlapo_keep_prefill_weights` on a model that is not
/// DeepSeek MLA: vllm-ascend refuses it at start ("only supported for MLA
/// models", vllm_ascend/ascend_config.py `AscendConfig` @v0.27.1rc1+, on
/// every image whose facts list the key). The table's GQA models are the
/// ones `is_deepseek_mla` is false for.
pub(crate) fn check_mlapo_keep(facts: &Facts<'_>, role: Role, serve: &Serve, cx: &mut Cx) {
    const KEY: &str = "mlapo_keep_prefill_weights";
    let Facts {
        spec, model, image, ..
    } = *facts;
    let (Some(m), Some(img)) = (model, image) else {
        return;
    };
    if m.attention != tables::Attention::Gqa
        || !serve.config_flag(KEY)
        || !img.reads_config_key(KEY)
    {
        return;
    }
    cx.report(
        Rule::MlapoKeepNeedsMla,
        config_site(spec, role, KEY),
        format!("{}.additional_config.{KEY}", role.as_str()),
        format!(
            "found `{KEY}` on {role} with `{}` ({} attention), expected it only on an MLA model: vllm-ascend refuses it at start on image `{}` (\"mlapo_keep_prefill_weights=True is only supported for MLA models\", vllm_ascend/ascend_config.py `AscendConfig`)",
            m.weights,
            m.attention.as_str(),
            img.tag
        ),
    );
}

/// `additional_config.enable_kvpp` with TP x PCP above 1 turns on KV layer
/// parallelism, whose preconditions vllm-ascend checks at start
/// (`KVPPConfig.validate`, generated facts `kvpp` @v0.28.0rc1+): its own PD
/// connector (which no layout renders, so only mixed engines can use it),
/// eager (or piecewise) graphs, an MLA model, its speculative methods, no
/// DCP.
pub(crate) fn check_kvpp(
    facts: &Facts<'_>,
    role: Role,
    serve: &Serve,
    tp: u32,
    pcp: u32,
    cx: &mut Cx,
) {
    let Facts {
        spec, model, image, ..
    } = *facts;
    let Some(img) = image else { return };
    let Some(k) = img.facts().and_then(|r| r.kvpp.as_ref()) else {
        return;
    };
    if !serve.config_flag("enable_kvpp") || u64::from(tp) * u64::from(pcp) <= 1 {
        return;
    }
    let scope = role.as_str();
    let site = config_site(spec, role, "enable_kvpp");
    let field = format!("{scope}.additional_config.enable_kvpp");
    let mut refuse = |what: String, expected: String| {
        cx.report(
            Rule::KvppPreconditions,
            site,
            field.clone(),
            format!(
                "found `enable_kvpp` on {role} (TP {tp} x PCP {pcp}) with {what}, expected {expected}: vllm-ascend refuses it at start on image `{}` ({})",
                img.tag, k.source
            ),
        );
    };
    if role != Role::Mixed {
        let own = spec
            .connector
            .as_ref()
            .map_or("no connector", |c| c.kind.value.kv_connector());
        refuse(
            format!("the PD connector `{own}`"),
            format!(
                "a mixed engine: KVPP in a PD layout needs `{}`{}, which a layout does not render",
                k.connector,
                if k.decode_refused && role == Role::Decode {
                    " and never runs on a decode engine"
                } else {
                    ""
                }
            ),
        );
    }
    let graph = serve.graph.map(GraphMode::as_str);
    if !graph.is_some_and(|g| k.graphs.iter().any(|x| x == g)) {
        refuse(
            format!("graph `{}`", graph.unwrap_or("unset (a CUDA graph mode)")),
            format!("`graph: {}`", k.graphs.join("` or `graph: ")),
        );
    }
    if k.mla_only
        && let Some(m) = model
        && m.attention == tables::Attention::Gqa
    {
        refuse(
            format!("`{}` ({} attention)", m.weights, m.attention.as_str()),
            "an MLA model".into(),
        );
    }
    if let Some(s) = &serve.speculative {
        let method = if s.method.ends_with("_mtp") {
            "mtp"
        } else {
            s.method.as_str()
        };
        if !k.methods.iter().any(|m| m == method) {
            refuse(
                format!("speculative method `{}`", s.method),
                format!("one of `{}`", k.methods.join("`, `")),
            );
        }
    }
    let dcp = crate::capacity::flag_u64(serve, "--decode-context-parallel-size").unwrap_or(1);
    if k.dcp_refused && dcp > 1 {
        refuse(format!("DCP {dcp}"), "DCP 1".into());
    }
}

/// `additional_config.sparse_kv_offload_config` with `enabled`: vllm-ascend
/// refuses it at start on a model with compressed caches (`compress_ratios`:
/// DeepSeek-V4, V4.1) or without the DSA indexer (`index_topk`: every MLA
/// and GQA model but DeepSeek-V3.2 and GLM-5.x), and with context
/// parallelism (PCP from the topology, DCP from its flag)
/// (vllm_ascend/ascend_config.py `SparseKVOffloadConfig.__init__`
/// @v0.26.0rc1, `_validate_preconditions` @v0.27.1rc1-v0.30.0rc2). Only on
/// images whose vllm-ascend reads the key (generated facts); elsewhere
/// `unknown_additional_config_key` says it is ignored.
pub(crate) fn check_sparse_kv_offload(
    facts: &Facts<'_>,
    role: Role,
    serve: &Serve,
    pcp: u32,
    cx: &mut Cx,
) {
    const KEY: &str = "sparse_kv_offload_config";
    let Facts {
        spec, model, image, ..
    } = *facts;
    let (Some(m), Some(img)) = (model, image) else {
        return;
    };
    let enabled = serve
        .additional_config
        .get(KEY)
        .and_then(|c| c.get("enabled"))
        .is_some_and(|v| {
            matches!(v, Json::Bool(true)) || matches!(v, Json::String(s) if !s.is_empty())
        });
    if !enabled || !img.reads_config_key(KEY) {
        return;
    }
    let scope = role.as_str();
    let site = config_site(spec, role, KEY);
    let field = format!("{scope}.additional_config.{KEY}.enabled");
    let why = match m.attention {
        tables::Attention::DsaSparse => None,
        tables::Attention::V4Hybrid | tables::Attention::V41Ced => Some(
            "its config has `compress_ratios`, and vllm-ascend refuses sparse KV offload with compressed caches (\"Sparse KV offload don't support compress now\")",
        ),
        tables::Attention::Mla | tables::Attention::Gqa => Some(
            "its config has no `index_topk`, and vllm-ascend offloads only sparse-attention (DSA) KV (\"Sparse KV offload only support sparse attention model\")",
        ),
    };
    if let Some(why) = why {
        cx.report(
            Rule::SparseKvOffloadNeedsDsa,
            site,
            field.clone(),
            format!(
                "found sparse KV offload on {role} with `{}` ({} attention), expected a DSA-sparse model (DeepSeek-V3.2, GLM-5.x): {why} at start on image `{}` (vllm_ascend/ascend_config.py `SparseKVOffloadConfig`)",
                m.weights,
                m.attention.as_str(),
                img.tag
            ),
        );
    }
    let dcp = crate::capacity::flag_u64(serve, "--decode-context-parallel-size").unwrap_or(1);
    if u64::from(pcp) * dcp > 1 {
        cx.report(
            Rule::SparseKvOffloadWithoutCp,
            site,
            field,
            format!(
                "found sparse KV offload on {role} with context parallelism (PCP {pcp}, DCP {dcp}), expected PCP x DCP 1: vllm-ascend refuses it at start on image `{}` (\"Sparse KV offload don't support context parallel now\", vllm_ascend/ascend_config.py `SparseKVOffloadConfig`)",
                img.tag
            ),
        );
    }
}
