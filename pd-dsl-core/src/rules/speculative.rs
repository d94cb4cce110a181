//! Speculative decoding: the method the image's vLLM accepts, the MTP layer, token limits per role, graph capture sizes and the decode batch budget it needs.

use super::names::list;
use super::serve::Facts;
use super::settings::site_in;
use crate::check::Cx;
use crate::layout::Serve;
use crate::rules::{Rule, did_you_mean};
use crate::site::{Site, Spanned};
use crate::spec::{GraphMode, LayoutSpec, Role, SpeculativeSpec};
use crate::tables::{self, Image};

declare_rules! {
    /// Speculative method not known (`SpeculativeMethod` in vLLM's
    /// vllm/config/speculative.py).
    SpeculativeMethodUnknown = "speculative_method_unknown", Hard, "the speculative method is known to vLLM";
    /// Deprecated speculative method name (`deepseek_mtp`, rewritten to
    /// `mtp` in vllm/config/speculative.py; vllm-ascend keeps the alias,
    /// patch_speculative_config.py from v0.20.2rc1).
    SpeculativeMethodDeprecated = "speculative_method_deprecated", Convention, "use `mtp`, not the deprecated `deepseek_mtp`";
    /// MTP on weights without an MTP layer (vLLM's vllm/config/speculative.py
    /// `MTPModelTypes`; the model table's `mtp`).
    SpeculativeNeedsMtp = "speculative_needs_mtp", Hard, "MTP needs weights with an MTP layer";
    /// Too many speculative tokens: the FIA operator runs at most 16 tokens
    /// per decode round (documented from v0.25.1rc1, docs/source/user_guide/
    /// feature_guide/speculative_decoding.md @v0.25.1rc1 L63, @v0.30.0rc2
    /// L64; the operator limit holds at every image).
    SpeculativeTokenLimit = "speculative_token_limit", Hard, "`num_speculative_tokens` is at least 1 and `+ 1 <= 16`";
    /// Prefill with more than one speculative token: prefill emits one token
    /// per request (the multi-node PD tutorial, every release).
    SpeculativePrefillTokens = "speculative_prefill_tokens", Convention, "prefill runs `num_speculative_tokens = 1`";
    /// Full graph with several speculative tokens and capture sizes that are
    /// not multiples of tokens + 1 (speculative_decoding.md @v0.21.0rc1 L175,
    /// @v0.26.0rc1 L176, @v0.30.0rc2 L220).
    CaptureSizesSpeculative = "capture_sizes_speculative", Convention, "full-graph capture sizes are multiples of `num_speculative_tokens + 1` when speculating more than one token";
    /// `max_num_batched_tokens` used up by the slots the speculative method
    /// reserves for drafting: vLLM raises ValueError at start
    /// (`VllmConfig._set_max_num_scheduled_tokens`, vllm/config/vllm.py
    /// @0.20.2 L1392 … @0.30.0 L2144; the reserve is
    /// `SpeculativeConfig.max_num_new_slots_for_drafting`, the generated vLLM
    /// facts' `drafting_slots`). vLLM 0.20.2-0.27.1 reserve (tokens - 1) x
    /// `max_num_seqs` for `dflash` (and `dspark` from 0.25.1) and
    /// `max_num_seqs` for `draft_model`; from 0.28.0 the reserve is per
    /// request: `dflash` tokens, `dspark` tokens - 1, `draft_model` 1. vLLM
    /// 0.18.0/0.19.1 compare only a typed `--max-num-scheduled-tokens`,
    /// which the rule leaves to vLLM.
    SpeculativeDraftingSlots = "speculative_drafting_slots", Hard, "`max_num_batched_tokens` exceeds the slots the speculative method reserves for drafting";
    /// Decode batch budget below seqs x (1 + spec).
    DecodeBatchBudget = "decode_batch_budget", Convention, "decode `max_num_batched_tokens >= max_num_seqs x (1 + num_speculative_tokens)`";
    /// `async_scheduling: true` with a speculative method async scheduling
    /// does not run: ValueError "Currently, async scheduling is only
    /// supported with EAGLE/MTP/..." (`VllmConfig.__post_init__`,
    /// vllm/config/vllm.py @0.18.0 L697 … @0.30.0 L1418, every vLLM the
    /// images ship). The methods are the generated vLLM facts'
    /// `async_speculative_methods` (`dspark` from vLLM 0.25.1, `dflash` from
    /// 0.20.2); in practice `ngram` is refused.
    AsyncSchedulingSpeculativeMethod = "async_scheduling_speculative_method", Hard, "`async_scheduling` runs only with the speculative methods vLLM supports it with (EAGLE, MTP, draft model, ...)";
    /// A speculative method vLLM's V2 model runner refuses, on a role that
    /// turns that runner on with env `VLLM_USE_V2_MODEL_RUNNER` (non-zero):
    /// ValueError "VLLM_USE_V2_MODEL_RUNNER does not yet support: ..." (vLLM
    /// 0.20.2, 0.22.1), "Model Runner V2 does not yet support: ..." (from
    /// 0.23.0), the words in the generated `v2_model_runner.refusal`
    /// (vllm/config/vllm.py `_validate_v2_model_runner` @0.20.2 L1807;
    /// `_get_v2_model_runner_unsupported_features` @0.22.1 L2000 …
    /// @0.30.0 L2839). The methods are the generated vLLM facts'
    /// `v2_speculative_methods`: all but eagle, eagle3 and mtp up to vLLM
    /// 0.23.0, `dflash` allowed from 0.24.0, `dspark` from 0.25.1,
    /// `extract_hidden_states` from 0.29.0; vLLM 0.30.0 refuses ngram,
    /// ngram_gpu, draft_model, suffix, medusa, mlp_speculator and
    /// custom_class. vllm-ascend's patch of the gate
    /// (patch/platform/patch_use_v2_model_runner.py, from v0.23.0rc1) skips
    /// it only on 310P devices, which the hardware table has not.
    V2RunnerUnsupported = "v2_runner_unsupported", Hard, "a role on vLLM's V2 model runner uses only the speculative methods that runner supports";
    /// A full decode graph with speculative tokens on a TP engine with
    /// sequence parallelism (vllm-ascend's `enable_sp()`, as the generated
    /// `enable_sp` says it reads: FlashComm1 by env or key, shared-expert DP
    /// up to 0.25.1rc1; from 0.27.1rc1 vLLM's `use_sequence_parallel_moe`, as
    /// the generated `sp_moe` and vLLM's `sequence_parallel_moe` decide it:
    /// FlashComm1 or DSA-CP asked for, expert parallel, TP above 1, an SP
    /// all2all backend, and DP above 1 at 0.28.0rc1) whose decode step
    /// (`tokens + 1`) and TP are not multiples of one another, on the V1
    /// model runner: vLLM raises ValueError "Can't determine cudagraph shapes
    /// ..." (vllm/config/compilation.py `adjust_cudagraph_sizes_for_spec_decode`
    /// @0.18.0 L1157, @0.28.0 L1525), called for `full_decode_only` and, from
    /// vLLM 0.20.2, `full`. vllm-ascend hands it the TP size up to 0.26.0rc1,
    /// at 0.27.1rc1/0.28.0rc1 unless the typed capture sizes are all
    /// multiples of lcm(step, TP), and from 0.29.0rc1 never (it pre-aligns
    /// to that lcm; vllm_ascend/worker/model_runner_v1.py
    /// `_check_and_update_cudagraph_mode` @0.29.0rc1 L6129). Read from the
    /// generated facts (vLLM's `spec_decode_sp_alignment`, vllm-ascend's
    /// `sp_graph_alignment` and `enable_sp`).
    SpeculativeSpGraphAlignment = "speculative_sp_graph_alignment", Hard, "with sequence parallelism and a full decode graph, the decode step and TP are multiples of one another";
    /// Typed capture sizes all below the decode step (`tokens + 1`) with a
    /// full decode graph and speculative tokens on the V1 model runner:
    /// vLLM rounds each size up to the step (at least `tokens + 1`; with
    /// sequence parallelism the TP alignment) and raises ValueError "No
    /// valid cudagraph sizes after rounding ..." when none fits under the
    /// largest (vllm/config/compilation.py
    /// `adjust_cudagraph_sizes_for_spec_decode` @0.18.0 L1186, @0.30.0
    /// L1582), called for `full_decode_only` and, from vLLM 0.20.2, `full`.
    /// Read from the generated vLLM facts' `spec_decode_rounding`; with
    /// sequence parallelism the multiple is max(step, TP) where vllm-ascend
    /// hands vLLM the TP size and lcm(step, TP) where it pre-aligns (from
    /// v0.29.0rc1), from the generated `sp_graph_alignment` and the SP
    /// decision of `speculative_sp_graph_alignment`. vLLM's default sizes and
    /// a `max_num_batched_tokens` below the step are not judged.
    CaptureSizesCoverDecodeStep = "capture_sizes_cover_decode_step", Hard, "with speculative tokens and a full decode graph, some capture size holds a whole decode step (under sequence parallelism, its TP alignment)";
    /// A speculative method that reads the target's auxiliary hidden states
    /// on a model whose text `model_type` vLLM does not list: ValueError
    /// "<method> is only supported for [...] models" at start
    /// (`SpeculativeConfig._verify_args`, vllm/config/speculative.py
    /// @0.18.0 L794, @0.19.1 L811, @0.20.2 L921; the generated vLLM facts'
    /// `aux_hidden_states`: `eagle3` and `extract_hidden_states`, `dflash`
    /// too at 0.20.2, the list matched as substrings). vllm-ascend v0.18.0
    /// to v0.22.1rc1 lets `eagle3`/`extract_hidden_states` through on a
    /// MiniMax target (patch/platform/patch_minimax_m2_config.py L188, the
    /// generated `aux_hidden_states_exemption`). From vLLM 0.22.1 the model
    /// class's EAGLE3 interface is checked at load instead, which this rule
    /// does not judge. Only models whose `model_type` the table names are
    /// judged: DeepSeek-V4 (`deepseek_v4`) and GLM-5/5.1 (`glm_moe_dsa`) are
    /// refused.
    SpeculativeAuxHiddenStates = "speculative_aux_hidden_states", Hard, "a speculative method that reads the target's auxiliary hidden states runs on a model type vLLM lists for it";
    /// Draft-model speculative method without a draft for the weights.
    SpeculativeNeedsDraft = "speculative_needs_draft", Hard, "a speculative method that runs a draft model (eagle, eagle3, dflash, medusa, draft_model, mlp_speculator, custom_class) needs one the model table names";
}

/// The image's aux-hidden-states gate when it tests `method`: its vLLM, the
/// gate (vLLM's list of model types) and vllm-ascend's exemption where it
/// has one. The rule `speculative_aux_hidden_states` and the generated
/// preflight (`crate::preflight`) ask this.
pub(crate) fn aux_gate(
    img: &Image,
    method: &str,
) -> Option<(
    &'static crate::upstream::VllmRelease,
    &'static crate::upstream::AuxHiddenStates,
    Option<&'static crate::upstream::AuxHiddenStatesExemption>,
)> {
    let v = crate::upstream::vllm_of(img).ok()?;
    let g = v.aux_hidden_states.as_ref()?;
    if !g.methods.iter().any(|m| m == method) {
        return None;
    }
    let exempt = img
        .facts()
        .and_then(|rel| rel.aux_hidden_states_exemption.as_ref());
    Some((v, g, exempt))
}

/// Whether the image refuses `method` on a target whose text model type is
/// `model_type`: vLLM's aux-hidden-states gate, unless vllm-ascend's
/// exemption lets it through (rule `speculative_aux_hidden_states`; the
/// preflight's restatement is held to this in `crate::preflight`'s tests).
pub(crate) fn aux_refused(img: &Image, method: &str, model_type: &str) -> bool {
    aux_gate(img, method).is_some_and(|(_, g, exempt)| {
        g.refuses(method, model_type) && !exempt.is_some_and(|e| e.lets_through(method, model_type))
    })
}

pub(crate) fn check_method(facts: &Facts<'_>, role: Role, serve: &Serve, cx: &mut Cx) {
    let Facts {
        spec, model, image, ..
    } = *facts;
    let scope = role.as_str();
    if let Some(s) = &serve.speculative {
        let sp = written_speculative(spec, role);
        let (msite, tsite) = sp.map_or((Site::NONE, Site::NONE), |sp| {
            (sp.method.site, sp.tokens.site)
        });
        // `SpeculativeMethod` of vllm/config/speculative.py at the image's vLLM.
        let methods = tables::speculative_methods(image);
        if !methods.contains(&s.method.as_str()) {
            let hint = did_you_mean(&s.method, methods.iter().copied());
            let on = image.map_or(String::new(), |img| {
                format!(" on image `{}` (vLLM {})", img.tag, img.vllm())
            });
            let named = methods.iter().copied().filter(|m| !m.ends_with("_mtp"));
            cx.report(
                Rule::SpeculativeMethodUnknown,
                msite,
                format!("{scope}.speculative.method"),
                format!("found speculative method `{}`{on}, expected one of {} or an MTP model type (`deepseek_mtp`, ...): that vLLM's `SpeculativeConfig` rejects other methods (vllm/config/speculative.py `SpeculativeMethod`){hint}", s.method, list(named)),
            );
        } else if s.method != "mtp" && s.method.ends_with("_mtp") {
            cx.report(
                Rule::SpeculativeMethodDeprecated,
                msite,
                format!("{scope}.speculative.method"),
                format!("found speculative method `{}`, expected `mtp`: vLLM rewrites `*_mtp` to `mtp` with a deprecation warning (vllm/config/speculative.py)", s.method),
            );
        }
        // Every `*_mtp` model type is rewritten to `mtp` (vllm/config/
        // speculative.py), so each needs the MTP layer.
        if (s.method == "mtp" || s.method.ends_with("_mtp")) && model.is_some_and(|m| !m.mtp) {
            cx.report(
                Rule::SpeculativeNeedsMtp,
                msite,
                format!("{scope}.speculative.method"),
                format!("found `{}` with weights `{}`, expected weights with an MTP layer: the draft model is the MTP layer", s.method, model.map_or("", |m| m.weights)),
            );
        }
        if serve.async_scheduling
            && let Some(img) = image
            && let Ok(v) = crate::upstream::vllm_of(img)
            && let Some(a) = &v.async_speculative_methods
            && !a.methods.contains(&s.method)
        {
            let named = a
                .methods
                .iter()
                .map(String::as_str)
                .filter(|m| !m.ends_with("_mtp"));
            cx.report(
                Rule::AsyncSchedulingSpeculativeMethod,
                msite,
                format!("{scope}.speculative.method"),
                format!("found speculative method `{}` with `async_scheduling: true` on image `{}`, expected one of {} or an MTP model type, or async scheduling off: vLLM {} refuses other methods with async scheduling at start ({} `VllmConfig.__post_init__`)", s.method, img.tag, list(named), v.version, a.source),
            );
        }
        if super::features::v2_runner_on(serve)
            && let Some(img) = image
            && let Ok(v) = crate::upstream::vllm_of(img)
            && let Some(r) = &v.v2_speculative_methods
            && r.refused.contains(&s.method)
            && let Some(runner) = &v.v2_model_runner
        {
            let said = runner.refusal_text(r.features.get(&s.method).map(String::as_str));
            let named = v
                .speculative_methods
                .iter()
                .map(|m| m.name.as_str())
                .filter(|m| !m.ends_with("_mtp") && !r.refused.iter().any(|x| x == m));
            cx.report(
                Rule::V2RunnerUnsupported,
                msite,
                format!("{scope}.speculative.method"),
                format!("found speculative method `{}` on a {role} engine running vLLM's V2 model runner (env `VLLM_USE_V2_MODEL_RUNNER`) on image `{}`, expected one of {} or an MTP model type, or the V1 runner (no `VLLM_USE_V2_MODEL_RUNNER`): vLLM {} refuses it at start (\"{said}\", {})", s.method, img.tag, list(named), v.version, r.source),
            );
        }
        if let Some(img) = image
            && let Some(m) = model
            && let Some(model_type) = crate::dims::text_model_type(m)
            && let Some((v, g, _)) = aux_gate(img, &s.method)
            && aux_refused(img, &s.method, model_type)
        {
            cx.report(
                Rule::SpeculativeAuxHiddenStates,
                msite,
                format!("{scope}.speculative.method"),
                format!("found speculative method `{}` with `{}` (model type `{model_type}`) on image `{}`, expected a model whose model type contains one of {} or another method: vLLM {} refuses it at start (\"{} is only supported for [...] models\", {} `SpeculativeConfig._verify_args`)", s.method, m.id, img.tag, list(g.model_types.iter().map(String::as_str)), v.version, s.method, g.source),
            );
        }
        if s.tokens == 0 || s.tokens > 15 {
            cx.report(
                Rule::SpeculativeTokenLimit,
                tsite,
                format!("{scope}.speculative.tokens"),
                format!("found {} speculative tokens, expected 1 to 15: the FIA operator needs `num_speculative_tokens + 1 <= 16` (speculative_decoding.md L63-64)", s.tokens),
            );
        } else if role == Role::Prefill && s.tokens != 1 {
            cx.report(
                Rule::SpeculativePrefillTokens,
                tsite,
                format!("{scope}.speculative.tokens"),
                format!("found {} speculative tokens on prefill, expected 1: prefill emits one token per request (multi-node doc L258-260)", s.tokens),
            );
        }
    }
}

pub(crate) fn check_batches(facts: &Facts<'_>, role: Role, serve: &Serve, cx: &mut Cx) {
    let spec = facts.spec;
    let scope = role.as_str();
    // Full graphs with several speculative tokens: each capture size must be
    // a multiple of `num_speculative_tokens + 1`
    // (docs/source/user_guide/feature_guide/speculative_decoding.md
    // @182b75ea84 L220; the V3.2 decode example uses [3, 6, 9, 12] with 2).
    if let (Some(g @ (GraphMode::Full | GraphMode::FullDecodeOnly)), Some(s)) =
        (serve.graph, &serve.speculative)
        && s.tokens > 1
    {
        let step = s.tokens.saturating_add(1);
        let off: Vec<&Spanned<u64>> = super::settings::role_capture_sizes(spec, role)
            .iter()
            .filter(|c| c.value % step != 0)
            .collect();
        if let Some(first) = off.first() {
            cx.report(
                Rule::CaptureSizesSpeculative,
                first.site,
                format!("{scope}.graph.capture_sizes"),
                format!(
                    "found capture size{} {} with `{}` graphs and {} speculative tokens on {role}, expected multiples of {step} (`num_speculative_tokens + 1`): in full-graph mode every captured graph holds whole decode steps of {step} tokens per sequence (speculative_decoding.md L220)",
                    if off.len() > 1 { "s" } else { "" },
                    super::settings::sizes_text(off.iter().copied()),
                    g.as_str(),
                    s.tokens
                ),
            );
        }
    }
    check_drafting_slots(facts, role, serve, cx);
    if role == Role::Decode
        && let (Some(mbt), Some(seqs)) = (serve.max_num_batched_tokens, serve.max_num_seqs)
    {
        let spec_tokens = serve.speculative.as_ref().map_or(0, |s| s.tokens);
        let need = seqs.saturating_mul(spec_tokens.saturating_add(1));
        if mbt < need {
            cx.report(
                    Rule::DecodeBatchBudget,
                    site_in(spec, role, |b| b.max_num_batched_tokens.as_ref()),
                    "decode.max_num_batched_tokens",
                    format!(
                        "found decode `max_num_batched_tokens` {mbt}, expected at least {need} = {seqs} seqs x (1 + {spec_tokens}): every running sequence schedules its speculative tokens each step"
                    ),
                );
        }
    }
}

/// The drafting reserve of the speculative method against the batch budget
/// (vLLM's defaults where unset), as the image's vLLM computes it.
fn check_drafting_slots(facts: &Facts<'_>, role: Role, serve: &Serve, cx: &mut Cx) {
    let (Some(s), Some(img), Some(hw)) = (&serve.speculative, facts.image, facts.hw) else {
        return;
    };
    // A typed `max_num_scheduled_tokens` changes the comparison; vLLM judges it.
    if serve
        .flags
        .iter()
        .any(|(n, _)| n == "--max-num-scheduled-tokens")
    {
        return;
    }
    let Ok(v) = crate::upstream::vllm_of(img) else {
        return;
    };
    let (default_mbt, default_seqs) = crate::capacity::default_batching(hw);
    let mbt = serve.max_num_batched_tokens.unwrap_or(default_mbt);
    let seqs = serve.max_num_seqs.unwrap_or(default_seqs);
    let Some(r) = crate::upstream::drafting_refusal(&v.version, &s.method, s.tokens, mbt, seqs)
    else {
        return;
    };
    let spec = facts.spec;
    let site = if serve.max_num_batched_tokens.is_some() {
        site_in(spec, role, |b| b.max_num_batched_tokens.as_ref())
    } else {
        written_speculative(spec, role).map_or(Site::NONE, |sp| sp.tokens.site)
    };
    let unset = |set: bool| if set { "" } else { " (vLLM's default: unset)" };
    let reserve = if r.per_seq {
        format!(
            "{} slot{} per request for each of the `max_num_seqs` {seqs}{} sequences",
            r.per_request,
            if r.per_request == 1 { "" } else { "s" },
            unset(serve.max_num_seqs.is_some())
        )
    } else {
        format!(
            "{} slot{} per request",
            r.per_request,
            if r.per_request == 1 { "" } else { "s" }
        )
    };
    cx.report(
        Rule::SpeculativeDraftingSlots,
        site,
        format!("{}.max_num_batched_tokens", role.as_str()),
        format!(
            "found {role} `max_num_batched_tokens` {mbt}{} with speculative method `{}` and {} tokens on image `{}`, expected more than {}: vLLM {} reserves {reserve} for drafting and raises ValueError at start when no slot is left to schedule ({} `VllmConfig._set_max_num_scheduled_tokens`); raise `max_num_batched_tokens` or lower the speculative tokens{}",
            unset(serve.max_num_batched_tokens.is_some()),
            s.method,
            s.tokens,
            img.tag,
            r.reserve,
            v.version,
            r.source,
            if r.per_seq { " or `max_num_seqs`" } else { "" },
        ),
    );
}

/// A speculative method that needs a draft model the model table does not
/// name for these weights.
pub(crate) fn check_draft(facts: &Facts<'_>, role: Role, serve: &Serve, cx: &mut Cx) {
    let Facts {
        spec, model, image, ..
    } = *facts;
    let scope = role.as_str();
    // A method vLLM runs only with a draft `model` (generated facts: the
    // image's vLLM, vllm/config/speculative.py `__post_init__`), which
    // pd-dsl renders from the model table's drafts alone.
    let needs_model = |method: &str| {
        image
            .and_then(|img| crate::upstream::vllm_of(img).ok())
            .and_then(|r| r.speculative_methods.iter().find(|x| x.name == method))
            .map_or(tables::DRAFT_METHODS.contains(&method), |x| x.needs_model)
    };
    if let (Some(s), Some(m)) = (&serve.speculative, model)
        && needs_model(&s.method)
        && !(tables::DRAFT_METHODS.contains(&s.method.as_str()) && m.draft(&s.method).is_some())
    {
        let site = written_speculative(spec, role).map_or(Site::NONE, |sp| sp.method.site);
        let known: Vec<&str> = m.drafts.iter().map(|d| d.method).collect();
        let expected = if known.is_empty() && m.mtp {
            "`mtp` (these weights carry an MTP layer)".to_owned()
        } else if known.is_empty() {
            "a method without a draft model (`ngram`, `suffix`)".to_owned()
        } else {
            format!("one of {}", list(known.into_iter()))
        };
        let why = if tables::DRAFT_METHODS.contains(&s.method.as_str()) {
            format!(
                "`{}` runs a separate draft model and the model table names none for these weights",
                s.method
            )
        } else {
            format!(
                "vLLM refuses `{}` without a draft `model` (vllm/config/speculative.py `SpeculativeConfig.__post_init__`), and a layout renders `model` only for the table's drafts ({})",
                s.method,
                tables::DRAFT_METHODS.join(", ")
            )
        };
        cx.report(
            Rule::SpeculativeNeedsDraft,
            site,
            format!("{scope}.speculative.method"),
            format!(
                "found speculative method `{}` with `{}`, expected {expected}: {why}",
                s.method, m.weights
            ),
        );
    }
}

/// A full decode graph with speculative tokens, TP and sequence parallelism
/// whose decode step and TP are not multiples of one another (rule
/// `speculative_sp_graph_alignment`).
pub(crate) fn check_sp_alignment(
    facts: &Facts<'_>,
    role: Role,
    serve: &Serve,
    (dp, tp): (u32, u32),
    cx: &mut Cx,
) {
    let (Some(graph), Some(s), Some(img)) = (serve.graph, &serve.speculative, facts.image) else {
        return;
    };
    let (Some(rel), Ok(v)) = (img.facts(), crate::upstream::vllm_of(img)) else {
        return;
    };
    let spec = facts.spec;
    let sizes = super::settings::role_capture_sizes(spec, role);
    let values: Vec<u64> = sizes.iter().map(|c| c.value).collect();
    let sp = super::model::sequence_parallel(img, serve, Some((dp, tp)));
    let v2 = super::features::v2_runner_on(serve);
    let Some(r) = rel.sp_alignment_refusal(v, graph, s.tokens, tp, &values, v2, sp) else {
        return;
    };
    let step = s.tokens.saturating_add(1);
    let exempt = if r.unless_aligned {
        " or `capture_sizes` all multiples of their lcm"
    } else {
        ""
    };
    let written = written_speculative(spec, role);
    let site = written.map_or(Site::NONE, |w| w.tokens.site);
    cx.report(
        Rule::SpeculativeSpGraphAlignment,
        site,
        format!("{}.speculative.tokens", role.as_str()),
        format!(
            "found {} speculative tokens (decode step {step}) with `{}` graphs, TP {tp} and sequence parallelism on a {role} engine, expected a step that TP divides or that divides TP{exempt}, or sequence parallelism off: vLLM {} refuses to size the graphs at start on image `{}` (\"Can't determine cudagraph shapes ...\", {} `adjust_cudagraph_sizes_for_spec_decode`; vllm-ascend {} hands it the TP size, {})",
            s.tokens,
            graph.as_str(),
            v.version,
            img.tag,
            r.vllm.source,
            rel.version,
            r.ascend.source
        ),
    );
}

/// Capture sizes (typed, or the image's defaults) all below the decode step
/// with a full decode graph (rule `capture_sizes_cover_decode_step`).
pub(crate) fn check_decode_step_sizes(
    facts: &Facts<'_>,
    role: Role,
    serve: &Serve,
    dp_tp: Option<(u32, u32)>,
    cx: &mut Cx,
) {
    let (Some(graph), Some(s), Some(img)) = (serve.graph, &serve.speculative, facts.image) else {
        return;
    };
    let Ok(v) = crate::upstream::vllm_of(img) else {
        return;
    };
    let Some(sizes) =
        super::settings::effective_capture_sizes(facts.spec, role, serve, img, facts.hw)
    else {
        return;
    };
    let step = s.tokens.saturating_add(1);
    let multiple = match (img.facts(), dp_tp) {
        (Some(rel), Some((_, tp))) => {
            let sp = super::model::sequence_parallel(img, serve, dp_tp);
            rel.decode_graph_multiple(s.tokens, tp, &sizes.values, sp)
        }
        _ => step,
    };
    let Some(refusal) = v.decode_step_refusal(
        graph,
        s.tokens,
        &sizes.values,
        serve.max_num_batched_tokens,
        super::features::v2_runner_on(serve),
        multiple,
    ) else {
        return;
    };
    let what = if multiple > step {
        format!(
            "{multiple} (the decode step {step}, `num_speculative_tokens + 1`, aligned with TP {} under sequence parallelism)",
            dp_tp.map_or(0, |(_, tp)| tp)
        )
    } else {
        format!("{step} (the decode step, `num_speculative_tokens + 1`)")
    };
    cx.report(
        Rule::CaptureSizesCoverDecodeStep,
        sizes.site,
        sizes.field,
        format!(
            "found {} with `{}` graphs and {} speculative tokens on a {role} engine, expected one of at least {what}: vLLM {} rounds every size up to a multiple of it and refuses to start when none fits under the largest on image `{}` (\"No valid cudagraph sizes after rounding ...\", {} `adjust_cudagraph_sizes_for_spec_decode`)",
            sizes.text,
            graph.as_str(),
            s.tokens,
            v.version,
            img.tag,
            refusal.source
        ),
    );
}

/// The role's `speculative` block as written (the role's, else the common
/// one), for the sites of its values.
fn written_speculative(spec: &LayoutSpec, role: Role) -> Option<&SpeculativeSpec> {
    spec.roles
        .get(&role)
        .and_then(|b| b.speculative.as_ref())
        .or(spec.serve.speculative.as_ref())
}
