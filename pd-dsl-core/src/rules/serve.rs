//! One role's resolved settings against vllm-ascend's start-up refusals that are not a feature's own preconditions: scheduling, MLAPO, LM-head TP, EPLB, `additional_config` keys and env toggles.

use super::context_parallel::check_cp_interleave;
use super::context_parallel::check_dcp;
use super::context_parallel::check_pcp;
use super::features::check_eplb_runner;
use super::features::check_finegrained_tp;
use super::features::check_kvpp;
use super::features::check_mlapo_keep;
use super::features::check_sparse_kv_offload;
use super::features::env_is_true;
use super::features::v2_runner_on;
use super::limits::check_role_limits;
use super::model::check_model_settings;
use super::settings::config_site;
use super::settings::config_value_site;
use super::settings::env_site;
use super::speculative;
use crate::check::Cx;
use crate::layout::Serve;
use crate::rules::{Rule, did_you_mean};
use crate::spec::{EnvValue, Json, LayoutSpec, Role};
use crate::tables::{self, Hardware, Image, Model, RecomputeRoles};

declare_rules! {
    /// Balance scheduling in a PD layout: ValueError "only supports PD-mixed
    /// mode" (vllm_ascend/platform.py @v0.18.0 L456, @v0.23.0 L682,
    /// @v0.26.0rc1 L639, @v0.30.0rc2 L1034).
    BalanceSchedulingInPd = "balance_scheduling_in_pd", Hard, "balance scheduling is for PD-mixed only";
    /// Recompute scheduler in a mixed layout: ValueError without a
    /// kv_consumer (vllm_ascend/platform.py @v0.18.0 L461-468, @v0.23.0rc1
    /// L692, @v0.30.0rc2 L1128).
    RecomputeSchedulerMixed = "recompute_scheduler_mixed", Hard, "the recompute scheduler needs a kv_consumer";
    /// Recompute scheduler on prefill where the image ignores it (#11537;
    /// platform.py "ignored on PD-disaggregated P nodes" from v0.23.0rc1 to
    /// v0.30.0rc2; the rows' `recompute`).
    RecomputeSchedulerOnPrefill = "recompute_scheduler_on_prefill", Convention, "the recompute scheduler is decode-only from v0.23.0rc1";
    /// MLAPO on a non-decode engine of an MLA model where the MLA backend
    /// takes it only on pure decode instances (`enabling_mlapo`,
    /// vllm_ascend/attention/utils.py @v0.18.0 L327 … @v0.30.0rc2 L581; A2/A3
    /// at every release, 950DT at v0.18.0 only). DSA models are exempt: the
    /// SFA backend reads the switch on every role (attention/sfa_v1.py
    /// @v0.18.0 L412 … @v0.30.0rc2 L898).
    MlapoDecodeOnly = "mlapo_decode_only", Convention, "on A2/A3 the MLA backend takes MLAPO only on pure decode engines";
    /// LMHead TP misuse: `data_parallel_size % lmhead_tensor_parallel_size`
    /// (vllm_ascend/ascend_config.py @v0.18.0 L248, @v0.23.0 L592,
    /// @v0.30.0rc2 L1437). The `tensor_parallel_size == 1` requirement next
    /// to it is for oproj (and, from v0.30, MLP) TP only: upstream's own
    /// configs run lmhead TP 8 on TP4 decode engines.
    LmheadTensorParallel = "lmhead_tensor_parallel", Hard, "lmhead TP divides DP";
    /// Dynamic EPLB (`dynamic_eplb: true`, or an `expert_map_record_path`,
    /// which turns it on) without its env switch: `DYNAMIC_EPLB` `true`/`1`
    /// or `EXPERT_MAP_RECORD` exactly `true` (the assert in
    /// `EplbConfig._validate_config`, vllm_ascend/ascend_config.py @v0.18.0
    /// L422, @v0.23.0 L887, @v0.30.0rc2 L326).
    EplbRequiresEnv = "eplb_requires_env", Hard, "dynamic EPLB (`dynamic_eplb` or `expert_map_record_path`) needs env `DYNAMIC_EPLB=true` or `EXPERT_MAP_RECORD=true` (model runner V1)";
    /// Key not read by the image: the facts' `additional_config` (every
    /// top-level key vllm_ascend/ reads, per release v0.18.0 to v0.30.0rc2).
    UnknownAdditionalConfigKey = "unknown_additional_config_key", Convention, "`additional_config` keys are read by the image";
    /// Env toggle that does nothing on the image: `VLLM_ASCEND_*` missing
    /// from the facts' `env` of that release, or a variable of
    /// `tables::UNREAD_ENV` that no `tables::OTHER_ENV_READERS` entry
    /// (torch_npu, Mooncake) reads, or a lowercase spelling of a variable
    /// they read upper-case (names are case-sensitive).
    DeadEnvToggle = "dead_env_toggle", Convention, "env toggles have an effect on the image";
    /// `enable_dsa_cp` on a model without the DSA indexer: DSA CP needs
    /// `index_topk` (vllm_ascend/utils.py `enable_dsa_cp` @v0.20.2rc1 L1389,
    /// @v0.26.0rc1 L1386; ascend_config.py `has_indexer` @v0.27.1rc1
    /// L578-584, @v0.30.0rc2 L800-806).
    /// `enable_dsa_cp` with PCP above 1 or on the V2 model runner: from
    /// v0.30.0rc1 vllm-ascend refuses both at start (ascend_config.py
    /// `AscendConfig` @v0.30.0rc1 L703-714: "use PCP instead").
    DsaCpConflicts = "dsa_cp_conflicts", Hard, "`enable_dsa_cp` runs without PCP and on the V1 model runner (from v0.30.0rc1)";
}

/// What `check_serve` needs besides the role's settings.
#[derive(Clone, Copy)]
pub(crate) struct Facts<'a> {
    pub(crate) spec: &'a LayoutSpec,
    pub(crate) model: Option<&'static Model>,
    pub(crate) hw: Option<&'static Hardware>,
    pub(crate) image: Option<&'static Image>,
    pub(crate) pd: bool,
}

pub(crate) fn check_serve(
    facts: &Facts<'_>,
    role: Role,
    serve: &Serve,
    dp_tp: Option<(u32, u32)>,
    pcp: u32,
    cx: &mut Cx,
) {
    let Facts {
        spec,
        model,
        hw,
        image,
        pd,
    } = *facts;
    let scope = role.as_str();
    if pcp > 1 {
        check_pcp(facts, role, serve, dp_tp.map_or(1, |(dp, _)| dp), pcp, cx);
    }
    check_sparse_kv_offload(facts, role, serve, pcp, cx);
    check_mlapo_keep(facts, role, serve, cx);
    if let Some((_, tp)) = dp_tp {
        check_dcp(facts, role, serve, tp, pcp, cx);
        check_kvpp(facts, role, serve, tp, pcp, cx);
    }
    // Balance scheduling: ValueError on P and D (platform.py @v0.18.0 L456,
    // @v0.23.0 L682, @v0.26.0rc1 L639, @v0.30.0rc2 L1034).
    let env_balance = matches!(serve.env_value("VLLM_ASCEND_BALANCE_SCHEDULING"), Some(EnvValue::Literal(v)) if v == "1" || v.eq_ignore_ascii_case("true"));
    if pd && (serve.config_flag("enable_balance_scheduling") || env_balance) {
        let site = if env_balance {
            env_site(spec, role, "VLLM_ASCEND_BALANCE_SCHEDULING")
        } else if serve
            .additional_config
            .contains_key("enable_balance_scheduling")
        {
            config_site(spec, role, "enable_balance_scheduling")
        } else {
            config_site(spec, role, "scheduler_config")
        };
        cx.report(
            Rule::BalanceSchedulingInPd,
            site,
            format!("{scope}.additional_config"),
            format!("found balance scheduling on a {role} engine, expected it only in mixed layouts: vllm-ascend raises ValueError on kv_producer and kv_consumer (platform.py L815-830)"),
        );
    }
    if serve.config_flag("recompute_scheduler_enable") {
        let site = if serve
            .additional_config
            .contains_key("recompute_scheduler_enable")
        {
            config_site(spec, role, "recompute_scheduler_enable")
        } else {
            config_site(spec, role, "scheduler_config")
        };
        if role == Role::Mixed {
            cx.report(
                Rule::RecomputeSchedulerMixed,
                site,
                format!("{scope}.additional_config.recompute_scheduler_enable"),
                "found `recompute_scheduler_enable` in a mixed layout, expected it only on decode engines: without a kv_consumer it is a ValueError (platform.py L896-920)",
            );
        } else if role == Role::Prefill
            && image.is_some_and(|i| i.recompute() == RecomputeRoles::DecodeOnly)
        {
            cx.report(
                Rule::RecomputeSchedulerOnPrefill,
                site,
                format!("{scope}.additional_config.recompute_scheduler_enable"),
                format!(
                    "found `recompute_scheduler_enable` on prefill with image `{}`, expected it on decode only: from v0.23.0rc1 it is ignored on kv_producer with a warning (#11537)",
                    image.map_or("", |i| i.tag)
                ),
            );
        }
    }
    // MLAPO decode-only: `enabling_mlapo` (vllm_ascend/attention/utils.py
    // @v0.18.0 L327-333, @v0.19.1rc1 L353-360, @v0.23.0 L511-521,
    // @v0.30.0rc2 L581-591) turns it on only for a pure kv_consumer, except
    // on A5 from v0.19.1rc1. Only the MLA backend asks it (mla_v1.py
    // `self.enable_mlapo = enabling_mlapo(...)` @v0.18.0 L720 … @v0.30.0rc2
    // L910); the SFA backend of DSA models reads the raw switch on every
    // role (sfa_v1.py @v0.18.0 L412 `envs.VLLM_ASCEND_ENABLE_MLAPO`,
    // @v0.20.2rc1 L428, @v0.25.1rc1 L622, @v0.30.0rc2 L898), so the
    // restriction is for MLA models only. Each switch counts on the images
    // that read it (the facts).
    let env_mlapo = image.is_some_and(|i| i.reads_env("VLLM_ASCEND_ENABLE_MLAPO"))
        && matches!(serve.env_value("VLLM_ASCEND_ENABLE_MLAPO"), Some(EnvValue::Literal(v)) if v == "1");
    let key_mlapo = image.is_some_and(|i| i.reads_config_key("enable_mlapo"))
        && serve.config_flag("enable_mlapo");
    if let (Some(h), Some(img), Some(m)) = (hw, image, model)
        && m.attention == tables::Attention::Mla
        && tables::mlapo_decode_only(h, img)
        && role != Role::Decode
        && (key_mlapo || env_mlapo)
    {
        let site = if env_mlapo {
            env_site(spec, role, "VLLM_ASCEND_ENABLE_MLAPO")
        } else {
            config_site(spec, role, "enable_mlapo")
        };
        cx.report(
            Rule::MlapoDecodeOnly,
            site,
            format!("{scope}.additional_config.enable_mlapo"),
            format!(
                "found MLAPO enabled on a {role} engine of `{}` (MLA) on {} with image `{}`, expected it on decode engines only: the MLA backend takes it only on pure decode instances there (attention/utils.py `enabling_mlapo`)",
                m.weights, h.product, img.tag
            ),
        );
    }
    if let (Some(size), Some((dp, tp))) = (
        serve
            .additional_config
            .get("finegrained_tp_config")
            .and_then(|f| f.get("lmhead_tensor_parallel_size"))
            .and_then(Json::as_u64),
        dp_tp,
    ) && size > 0
        && u64::from(dp) % size != 0
    {
        cx.report(
                Rule::LmheadTensorParallel,
                config_value_site(spec, role, "finegrained_tp_config.lmhead_tensor_parallel_size"),
                format!("{scope}.additional_config.finegrained_tp_config"),
                format!(
                    "found `lmhead_tensor_parallel_size` {size} on a {role} engine with DP{dp} TP{tp}, expected a size dividing DP{dp}: vllm-ascend groups the lmhead over DP ranks and refuses \"finegrained tp sizes must divide by data_parallel_size\" (ascend_config.py)"
                ),
            );
    }
    check_finegrained_tp(facts, role, serve, dp_tp, pcp, cx);
    super::connector::check_finegrained_tp_connector(facts.spec, facts.image, role, serve, cx);
    check_cp_interleave(facts, role, serve, pcp, cx);
    // ascend_config.py `AscendConfig` @v0.30.0rc1 L703-714 (also rc2).
    if serve.config_flag("enable_dsa_cp")
        && let Some(img) = image
        && img.version()
            >= (tables::Version {
                major: 0,
                minor: 30,
                patch: 0,
                rc: Some(1),
            })
    {
        let with = if pcp > 1 {
            Some(format!("PCP (pcp{pcp})"))
        } else if v2_runner_on(serve) {
            Some("the V2 model runner (env `VLLM_USE_V2_MODEL_RUNNER`)".to_owned())
        } else {
            None
        };
        if let Some(with) = with {
            cx.report(
                Rule::DsaCpConflicts,
                config_site(spec, role, "enable_dsa_cp"),
                format!("{scope}.additional_config.enable_dsa_cp"),
                format!(
                    "found `enable_dsa_cp` with {with} on a {role} engine, expected one of them: vllm-ascend refuses DSA CP together with PCP or the V2 model runner at start on image `{}` (ascend_config.py `AscendConfig`); PCP replaces DSA CP there",
                    img.tag
                ),
            );
        }
    }
    // Dynamic EPLB is on with `dynamic_eplb: true` or with any
    // `expert_map_record_path`, which `EplbConfig._validate_config` turns
    // into `dynamic_eplb = True` at every release (ascend_config.py @v0.18.0
    // L408, @v0.30.0rc2 L311).
    let eplb = serve.additional_config.get("eplb_config");
    let dynamic_flag = eplb
        .and_then(|e| e.get("dynamic_eplb"))
        .is_some_and(|v| matches!(v, Json::Bool(true)));
    let record = eplb
        .and_then(|e| e.get("expert_map_record_path"))
        .is_some_and(|v| !v.is_null());
    let dynamic_eplb = dynamic_flag || record;
    // Its assert takes `DYNAMIC_EPLB` as `true` or `1` in any case, and
    // `EXPERT_MAP_RECORD` only as exactly `true` (@v0.18.0 L421-424,
    // @v0.30.0rc2 L324-328).
    let record_env =
        matches!(serve.env_value("EXPERT_MAP_RECORD"), Some(EnvValue::Literal(v)) if v == "true");
    // On the V2 runner the V1 switches are refused instead
    // (`eplb_config_model_runner`).
    let v2_eplb = v2_runner_on(serve)
        && image.is_some_and(|i| i.facts().is_some_and(|r| r.eplb_runner.is_some()));
    check_eplb_runner(facts, role, serve, cx);
    super::features::check_mc2_hierarchy_experts(facts, role, serve, cx);
    if dynamic_eplb && !v2_eplb && !env_is_true(serve, "DYNAMIC_EPLB") && !record_env {
        let what = if dynamic_flag {
            "`eplb_config.dynamic_eplb: true`"
        } else {
            "`eplb_config.expert_map_record_path`, which turns dynamic EPLB on,"
        };
        let near = if serve.env_value("EXPERT_MAP_RECORD").is_some() {
            " (`EXPERT_MAP_RECORD` counts only as exactly `true`)"
        } else {
            ""
        };
        cx.report(
            Rule::EplbRequiresEnv,
            config_site(spec, role, "eplb_config"),
            format!("{scope}.additional_config.eplb_config"),
            format!("found {what} on {role} without env `DYNAMIC_EPLB=true` (or `1`) or `EXPERT_MAP_RECORD=true`{near}, expected one of them: on model runner v1 vllm-ascend asserts it at start (vllm_ascend/ascend_config.py `EplbConfig._validate_config`)"),
        );
    }
    if let Some(img) = image {
        // The keys and variables each image reads are the generated facts
        // (upstream/facts/vllm-ascend/<release>.json: `additional_config`
        // from vllm_ascend/ascend_config.py and the other readers in the
        // package, `env` from vllm_ascend/envs.py and direct reads), so the
        // verdict holds at every release of the table.
        for key in serve.additional_config.keys() {
            let site = config_site(spec, role, key);
            let Some(why) = tables::config_key_ignored(key, img) else {
                continue;
            };
            let message = if tables::config_key_known(key) {
                format!(
                    "found `additional_config.{key}` on image `{}`, expected a key that image reads: {why}; it is silently ignored",
                    img.tag
                )
            } else {
                let known = crate::upstream::known_config_keys();
                let hint = did_you_mean(key, known.iter().copied());
                format!(
                    "found `additional_config.{key}`, expected a key vllm-ascend reads: {why}; unknown keys are silently ignored{hint}"
                )
            };
            cx.report(
                Rule::UnknownAdditionalConfigKey,
                site,
                format!("{scope}.additional_config.{key}"),
                message,
            );
        }
        for (name, _) in &serve.env {
            if let Some(why) = tables::dead_env(name, img) {
                cx.report(
                    Rule::DeadEnvToggle,
                    env_site(spec, role, name),
                    format!("{scope}.env.{name}"),
                    match tables::upper_spelling_read(name, img) {
                        Some(upper) => format!(
                            "found env `{name}` on image `{}`, expected `{upper}`: {why}",
                            img.tag
                        ),
                        None => format!(
                            "found env `{name}` on image `{}`, expected it dropped: {why}",
                            img.tag
                        ),
                    },
                );
            }
        }
    }
    speculative::check_method(facts, role, serve, cx);
    super::model::check_mamba_align_v2_runner(facts, role, serve, cx);
    check_role_limits(facts, role, serve, cx);
    check_model_settings(facts, role, serve, dp_tp, cx);
    speculative::check_batches(facts, role, serve, cx);
    super::settings::check_capture_sizes_batch(spec, role, serve, image, cx);
    speculative::check_decode_step_sizes(facts, role, serve, dp_tp, cx);
    if let Some((dp, tp)) = dp_tp {
        speculative::check_sp_alignment(facts, role, serve, (dp, tp), cx);
        super::limits::check_capture_sizes_tp(facts, role, serve, (dp, tp), cx);
        super::model::check_sequence_parallel_dropped(facts, role, serve, (dp, tp), cx);
        super::model::check_sequence_parallel_needs(facts, role, serve, (dp, tp), cx);
        super::model::check_mamba_align_block_within_batch(facts, role, serve, tp, cx);
    }
}
