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
use crate::upstream::{EngineSettings, EnvRead};

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
    /// L524-529). The facts' `dsa_cp_needs_sp`; sequence parallelism as the
    /// image's `enable_sp()` reads it (generated `enable_sp`: FlashComm1 by
    /// key or env, and shared-expert DP up to v0.25.1rc1 only).
    DsaCpNeedsSp = "dsa_cp_needs_sp", Hard, "`enable_dsa_cp` on an indexer model comes with sequence parallelism (FlashComm1, or shared-expert DP up to v0.25.1rc1) on v0.20.2rc1 to v0.26.0rc1";
    /// Sequence parallelism (`enable_sp()`: FlashComm1 by key or env, or
    /// shared-expert DP up to v0.25.1rc1, as the generated `enable_sp`
    /// reads it) on an engine of TP 1, or on a MoE model without expert
    /// parallelism: up to v0.26.0rc1 `check_and_update_config` asserts both
    /// (vllm_ascend/platform.py @v0.18.0 L510/L514, @v0.26.0rc1 L759/L763;
    /// the generated `sp_asserts`). From v0.27.1rc1 sequence-parallel MoE
    /// is off there instead (`sequence_parallel_dropped`).
    SequenceParallelNeedsTpEp = "sequence_parallel_needs_tp_ep", Hard, "up to v0.26.0rc1, FlashComm1 (or shared-expert DP) runs only at TP above 1 with expert parallelism";
    /// Env `VLLM_USE_V2_MODEL_RUNNER` true on an engine of a hybrid model
    /// (its architecture among vLLM's `IsHybrid` classes, generated
    /// `mamba_align.hybrid`: the Qwen3.5 family) with `prefix_caching:
    /// true`: its class does not support Mamba prefix caching, so vLLM runs
    /// the Mamba cache in 'align' mode (`MambaModelConfig`,
    /// vllm/model_executor/models/config.py @0.22.1 L350), and
    /// `validate_block_size` asserts the V2 runner off in that mode at start,
    /// in EngineCore (vllm/config/vllm.py @0.22.1 L2116, @0.24.0 L2156;
    /// generated `mamba_align`), on vLLM 0.22.1 to 0.24.0 (images v0.21.0rc1
    /// to v0.24.0rc1), although vllm-ascend's worker falls back to the V1
    /// runner there.
    MambaAlignV2Runner = "mamba_align_v2_runner", Hard, "a hybrid linear-attention model with prefix caching on does not take env `VLLM_USE_V2_MODEL_RUNNER=1` on vLLM 0.22.1 to 0.24.0";
    /// A hybrid Gated-DeltaNet model (the Qwen3.5 family: its architecture
    /// among vLLM's `IsHybrid` classes without Mamba prefix caching,
    /// generated `mamba_align`) with `prefix_caching: true` runs its Mamba
    /// cache in 'align' mode, where `VllmConfig.validate_block_size` asserts
    /// `block_size <= max_num_batched_tokens` at start (vllm/config/vllm.py
    /// @0.18.0 L1664 to @0.26.0 L2266, the generated
    /// `mamba_align.block_within_batch`; vLLM 0.27.1 on have no such
    /// assert). vllm-ascend raises that block to one that carries a
    /// request's whole linear-attention state (`dims::gdn_attn_block`, from
    /// the copy of the checkpoint's config and the release's generated
    /// `hybrid_attn_block`: 4096 tokens for Qwen3.5-397B at TP1/2, 2048 at
    /// TP4, 1024 at TP8, 512 at TP16), so a smaller batch budget, typed or
    /// vLLM's default, refuses to start.
    MambaAlignBlockWithinBatch = "mamba_align_block_within_batch", Hard, "a hybrid linear-attention model in Mamba 'align' mode batches at least its attention block per step (vLLM 0.18.0 to 0.26.0)";
    /// FlashComm1 (`additional_config.enable_flashcomm1`, env
    /// `VLLM_ASCEND_ENABLE_FLASHCOMM1`) or `enable_dsa_cp` asked for on an
    /// engine where sequence-parallel MoE cannot run: from v0.27.1rc1
    /// `AscendConfig` only steers vLLM's `use_sequence_parallel_moe`
    /// (ascend_config.py @v0.27.1rc1 L540, @v0.30.0rc2 L764), which also
    /// needs expert parallelism, TP above 1, an SP all2all backend and, at
    /// v0.28.0rc1 (no vllm-ascend patch of the property), DP above 1; without
    /// them it logs and runs without FlashComm1, and drops DSA-CP (L584,
    /// L806). Read from the generated facts (`sp_moe`, vLLM's
    /// `sequence_parallel_moe`).
    SequenceParallelDropped = "sequence_parallel_dropped", Convention, "FlashComm1 and DSA-CP are asked for only where sequence-parallel MoE can run (expert parallel, TP > 1, an SP all2all backend)";
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
    // DSA CP needs SP: on the images whose facts have `dsa_cp_needs_sp`
    // (v0.20.2rc1 to v0.26.0rc1, utils.py `enable_dsa_cp`; see the field),
    // `utils.enable_dsa_cp()` raises a ValueError when an indexer model sets
    // the key and `enable_sp()` is false, and the engine never starts.
    if python_truthy(serve.additional_config.get("enable_dsa_cp"))
        && m.attention.has_indexer()
        && let Some(img) = image.filter(|i| i.dsa_cp_checks_sp())
        && sequence_parallel(img, serve, dp_tp) == Some(false)
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

pub(crate) use crate::upstream::python_truthy;

/// One role's settings as [`crate::upstream::EngineSettings`]: what
/// `enable_sp()` reads of them.
pub(crate) struct RoleSettings<'a> {
    pub(crate) serve: &'a Serve,
    pub(crate) dp_tp: Option<(u32, u32)>,
}

impl EngineSettings for RoleSettings<'_> {
    fn config(&self, key: &str) -> Option<&Json> {
        self.serve.additional_config.get(key)
    }
    fn env(&self, name: &str) -> EnvRead<'_> {
        match self.serve.env_value(name) {
            None => EnvRead::Unset,
            Some(EnvValue::Literal(s)) => EnvRead::Value(s),
            Some(_) => EnvRead::Unknown,
        }
    }
    fn all2all_backend(&self) -> Option<&Json> {
        match self
            .serve
            .flags
            .iter()
            .find(|(n, _)| n == "--all2all-backend")
        {
            Some((_, Some(v))) => Some(v),
            Some((_, None)) => Some(&Json::Null),
            None => None,
        }
    }
    fn expert_parallel(&self) -> bool {
        self.serve.expert_parallel
    }
    fn dp_tp(&self) -> Option<(u32, u32)> {
        self.dp_tp
    }
}

/// Whether vllm-ascend's `enable_sp()` is true for a role of `dp_tp` (DP,
/// TP) on an image ([`crate::upstream::Release::sequence_parallel`]).
pub(crate) fn sequence_parallel(
    img: &Image,
    serve: &Serve,
    dp_tp: Option<(u32, u32)>,
) -> Option<bool> {
    let v = crate::upstream::vllm_of(img).ok()?;
    img.facts()?
        .sequence_parallel(v, &RoleSettings { serve, dp_tp })
}

/// How a layout turns [`sequence_parallel`] on at an image, for messages.
pub(crate) fn sequence_parallel_switches(img: &Image) -> String {
    img.facts().map_or_else(
        || "FlashComm1".to_owned(),
        |r| r.sequence_parallel_switches(crate::upstream::vllm_of(img).ok()),
    )
}

/// Sequence parallelism on at TP 1 or without expert parallelism where the
/// platform asserts both (rule `sequence_parallel_needs_tp_ep`).
pub(crate) fn check_sequence_parallel_needs(
    facts: &Facts<'_>,
    role: Role,
    serve: &Serve,
    (dp, tp): (u32, u32),
    cx: &mut Cx,
) {
    let Some(img) = facts.image else { return };
    let Some(rel) = img.facts() else { return };
    let (Some(asserts), Some(reads)) = (rel.sp_asserts.as_ref(), rel.enable_sp.as_ref()) else {
        return;
    };
    if sequence_parallel(img, serve, Some((dp, tp))) != Some(true) {
        return;
    }
    let moe = facts.model.is_none_or(|m| m.moe);
    let mut unmet = Vec::new();
    if let (Some(src), true) = (&asserts.tp_above_1, tp <= 1) {
        unmet.push(format!("TP above 1 (this engine is TP {tp}; {src})"));
    }
    if let (Some(src), true) = (&asserts.expert_parallel, moe && !serve.expert_parallel) {
        unmet.push(format!("`expert_parallel: true` on this MoE model ({src})"));
    }
    if unmet.is_empty() {
        return;
    }
    // Where the layout turns it on: the first switch `enable_sp()` reads
    // that the role sets.
    let spec = facts.spec;
    let (site, field) = reads
        .reads
        .iter()
        .find_map(|r| match r.strip_prefix("env.") {
            Some(name) => serve
                .env_value(name)
                .is_some()
                .then(|| (env_site(spec, role, name), format!("{role}.env.{name}"))),
            None => {
                let key =
                    r.strip_prefix("additional_config.")
                        .unwrap_or(if r == "shared_expert_dp" {
                            "enable_shared_expert_dp"
                        } else {
                            r
                        });
                serve.additional_config.contains_key(key).then(|| {
                    (
                        config_site(spec, role, key),
                        format!("{role}.additional_config.{key}"),
                    )
                })
            }
        })
        .unwrap_or((Site::NONE, format!("{role}")));
    cx.report(
        Rule::SequenceParallelNeedsTpEp,
        site,
        field,
        format!(
            "found sequence parallelism on ({}) on a {role} engine of image `{}` without {}, expected it only where both hold: vllm-ascend {} asserts them at start (`check_and_update_config`); turn it off here or give the engine TP above 1 and expert parallelism",
            sequence_parallel_switches(img),
            img.tag,
            unmet.join(" or "),
            rel.version
        ),
    );
}

/// The V2 runner on a hybrid model in Mamba 'align' mode (rule
/// `mamba_align_v2_runner`).
pub(crate) fn check_mamba_align_v2_runner(
    facts: &Facts<'_>,
    role: Role,
    serve: &Serve,
    cx: &mut Cx,
) {
    let (Some(m), Some(img)) = (facts.model, facts.image) else {
        return;
    };
    let Ok(v) = crate::upstream::vllm_of(img) else {
        return;
    };
    let (Some(a), Some(arch)) = (&v.mamba_align, crate::dims::architecture(m)) else {
        return;
    };
    let forced = store_forced(facts, serve);
    let Some(assert) = a.v2_runner_refusal(
        arch,
        serve.prefix_caching,
        forced.is_some(),
        super::features::v2_runner_on(serve),
    ) else {
        return;
    };
    let (with, cause, turn_off) = align_cause(a, serve, forced);
    cx.report(
        Rule::MambaAlignV2Runner,
        env_site(facts.spec, role, "VLLM_USE_V2_MODEL_RUNNER"),
        format!("{role}.env.VLLM_USE_V2_MODEL_RUNNER"),
        format!(
            "found env `VLLM_USE_V2_MODEL_RUNNER` on with {with} on a {role} engine of `{}` ({arch}, hybrid linear attention) on image `{}`, expected the V2 runner off or {turn_off}: {cause}, where vLLM {} asserts the V2 runner off at start (\"Model Runner V2 has not yet supported mamba_cache_mode='align'\", {} `validate_block_size`)",
            m.id, img.tag, v.version, assert
        ),
    );
}

/// The image's KV-store 'align' switch when it applies to a role: the
/// layout runs a KV pool (`AscendStoreConnector` under vLLM's
/// MultiConnector), and neither `--disable-hybrid-kv-cache-manager` nor an
/// exempt speculative method turns it off (`KvStoreAlign::forces`).
fn store_forced(
    facts: &Facts<'_>,
    serve: &Serve,
) -> Option<&'static crate::upstream::KvStoreAlign> {
    store_forces_align(facts.image?, facts.spec.runs_kv_pool(), serve)
}

/// [`store_forced`] for a role of a layout that runs a KV pool (`pool`) on
/// `img`; the capacity budget asks it too (the Mamba cache's mode).
pub(crate) fn store_forces_align(
    img: &crate::tables::Image,
    pool: bool,
    serve: &Serve,
) -> Option<&'static crate::upstream::KvStoreAlign> {
    let k = img.facts()?.kv_store_align.as_ref()?;
    let disabled = serve
        .flags
        .iter()
        .any(|(n, _)| n == "--disable-hybrid-kv-cache-manager");
    let method = serve.speculative.as_ref().map(|s| s.method.as_str());
    (pool && k.forces(method, disabled)).then_some(k)
}

/// What puts a role's Mamba cache in 'align' mode, for messages: the
/// setting (`with`), the cause with its source, and what turns it off.
fn align_cause(
    a: &crate::upstream::MambaAlign,
    serve: &Serve,
    forced: Option<&crate::upstream::KvStoreAlign>,
) -> (String, String, &'static str) {
    match forced {
        Some(k) if serve.prefix_caching != Some(true) => (
            format!("the layout's KV pool (`{}`)", k.connector),
            format!(
                "vllm-ascend puts a hybrid model's Mamba cache in 'align' mode when a KV store runs ({})",
                k.source
            ),
            "no KV pool",
        ),
        _ => (
            "`prefix_caching: true`".to_owned(),
            format!(
                "prefix caching puts its Mamba cache in 'align' mode ({})",
                a.prefix_caching
            ),
            "prefix caching off",
        ),
    }
}

/// The attention block of a hybrid model in Mamba 'align' mode against
/// the batch budget (rule `mamba_align_block_within_batch`).
pub(crate) fn check_mamba_align_block_within_batch(
    facts: &Facts<'_>,
    role: Role,
    serve: &Serve,
    tp: u32,
    cx: &mut Cx,
) {
    let (Some(m), Some(img), Some(hw)) = (facts.model, facts.image, facts.hw) else {
        return;
    };
    let (Ok(v), Some(rel)) = (crate::upstream::vllm_of(img), img.facts()) else {
        return;
    };
    let (Some(a), Some(sizing), Some(arch)) = (
        &v.mamba_align,
        &rel.hybrid_attn_block,
        crate::dims::architecture(m),
    ) else {
        return;
    };
    if crate::upstream::MambaAlign::UNJUDGED_FLAGS
        .iter()
        .any(|name| serve.flags.iter().any(|(n, _)| n == name))
    {
        return;
    }
    let num_spec = serve.speculative.as_ref().map_or(0, |s| s.tokens);
    let Some(b) = crate::dims::config_of(m)
        .and_then(|c| c.gdn())
        .and_then(|d| {
            crate::dims::gdn_attn_block(&d, u64::from(tp), num_spec, sizing.kernel_block_size)
        })
    else {
        return;
    };
    let block = serve.block_size.map_or(b.block, |typed| typed.max(b.block));
    let (default_mbt, _) = crate::capacity::default_batching(hw);
    let mbt = serve.max_num_batched_tokens.unwrap_or(default_mbt);
    // Prefix caching typed on (hybrid models default it off), or the
    // layout's KV pool, puts the Mamba cache in 'align' mode.
    let forced = store_forced(facts, serve);
    let Some(assert) = a.block_refusal(arch, serve.prefix_caching, forced.is_some(), block, mbt)
    else {
        return;
    };
    let (with, cause, turn_off) = align_cause(a, serve, forced);
    let mbt_site =
        super::settings::site_in(facts.spec, role, |s| s.max_num_batched_tokens.as_ref());
    let site = match (mbt_site, forced) {
        (s, _) if s != Site::NONE => s,
        // Unset batch: at what puts the cache in 'align' mode.
        (_, Some(_)) if serve.prefix_caching != Some(true) => facts
            .spec
            .connector
            .as_ref()
            .and_then(|c| c.pool.as_ref())
            .map_or(Site::NONE, |p| p.backend.site),
        _ => super::settings::site_in(facts.spec, role, |s| s.prefix_caching.as_ref()),
    };
    cx.report(
        Rule::MambaAlignBlockWithinBatch,
        site,
        format!("{role}.max_num_batched_tokens"),
        format!(
            "found `max_num_batched_tokens` {mbt}{} on a {role} engine of `{}` ({arch}, hybrid linear attention) at TP{tp} with {with} on image `{}`, expected at least {block}: {cause}, vllm-ascend {} raises the attention block to {} tokens so that one block carries a request's linear-attention state ({} B per rank = {} x {} B per token; {}), and vLLM {} asserts \"In Mamba cache align mode, block_size ({block}) must be <= max_num_batched_tokens ({mbt})\" at start ({} `validate_block_size`); raise `max_num_batched_tokens` or run with {turn_off}",
            if serve.max_num_batched_tokens.is_some() { "" } else { " (vLLM's default: unset)" },
            m.id,
            img.tag,
            rel.version,
            b.block,
            b.state_page,
            b.block,
            b.k_page,
            sizing.source,
            v.version,
            assert
        ),
    );
}

/// FlashComm1 or DSA-CP asked for where sequence-parallel MoE cannot run
/// (rule `sequence_parallel_dropped`).
pub(crate) fn check_sequence_parallel_dropped(
    facts: &Facts<'_>,
    role: Role,
    serve: &Serve,
    (dp, tp): (u32, u32),
    cx: &mut Cx,
) {
    let Some(img) = facts.image else { return };
    let (Some(rel), Ok(v)) = (img.facts(), crate::upstream::vllm_of(img)) else {
        return;
    };
    let Some(s) = rel.sp_moe.as_ref().and_then(|m| m.switch.as_ref()) else {
        return;
    };
    let settings = RoleSettings {
        serve,
        dp_tp: Some((dp, tp)),
    };
    let Some(asked) = s.asked(&settings) else {
        return;
    };
    let Some(first) = asked.first() else { return };
    if rel.sequence_parallel(v, &settings) != Some(false) {
        return;
    }
    let spec = facts.spec;
    let (site, field) = match first.strip_prefix("env.") {
        Some(name) => (env_site(spec, role, name), format!("{role}.env.{name}")),
        None => {
            let key = first.trim_start_matches("additional_config.");
            (config_site(spec, role, key), format!("{role}.{first}"))
        }
    };
    let unmet = rel.sequence_parallel_unmet(v, &settings);
    let named: Vec<String> = asked
        .iter()
        .map(|r| match r.strip_prefix("env.") {
            Some(e) => format!("env `{e}`"),
            None => format!("`{r}`"),
        })
        .collect();
    cx.report(
        Rule::SequenceParallelDropped,
        site,
        field,
        format!(
            "found {} on a {role} engine of image `{}` where sequence-parallel MoE cannot run: {}; expected it only on engines where it runs: vllm-ascend {} runs this one without {}, saying so only in its log ({}; {})",
            named.join(" and "),
            img.tag,
            if unmet.is_empty() { "a term pd-dsl reads from the facts is unmet".to_owned() } else { unmet.join(", ") },
            rel.version,
            if asked.contains(&"additional_config.enable_dsa_cp") { "FlashComm1 and drops DSA-CP" } else { "FlashComm1" },
            s.source,
            rel.sequence_parallel_property_source(v)
        ),
    );
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
    let (Some(m), Some(arch), Some(img)) =
        (model, model.and_then(crate::dims::architecture), image)
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
