//! Role restrictions and limits vllm-ascend enforces at start-up that read model facts: KV NZ, reduce-sample, `max_num_seqs`, `max_model_len`, block size.

use super::model::check_eplb_config;
use super::serve::Facts;
use super::settings::config_site;
use super::settings::site_in;
use crate::check::Cx;
use crate::layout::Serve;
use crate::rules::Rule;
use crate::spec::{Json, Role};
use crate::tables::{self};

declare_rules! {
    /// `enable_kv_nz` outside a PD decode engine: NotImplementedError unless
    /// kv_consumer (vllm_ascend/ascend_config.py @v0.18.0 L143-149, @v0.23.0
    /// L274, @v0.30.0rc2 L900).
    KvNzDecodeOnly = "kv_nz_decode_only", Hard, "`enable_kv_nz` runs only on decode engines of a PD layout";
    /// `enable_kv_nz` on a model without plain MLA: RuntimeError "only
    /// supported for mla" (same check, v0.18.0 to v0.30.0rc2).
    KvNzNeedsMla = "kv_nz_needs_mla", Hard, "`enable_kv_nz` needs an MLA model without sparse attention";
    /// `enable_reduce_sample` on prefill or with lmhead TP: ValueError at
    /// v0.23.0 (ascend_config.py L318-340) and v0.27.1rc1 to v0.29.0rc1
    /// (L729, L811, L819), silently wrong on the other images that read the
    /// key (v0.20.2rc1 to v0.29.0rc1, the facts).
    ReduceSampleDecodeOnly = "reduce_sample_decode_only", Hard, "`enable_reduce_sample` never runs on prefill engines nor with lmhead TP";
    /// `max_num_seqs` of zero (`Field(ge=1)` in vLLM's vllm/config/scheduler.py).
    MaxNumSeqsPositive = "max_num_seqs_positive", Hard, "`max_num_seqs` is at least 1";
    /// `max_model_len: 0`: vLLM refuses it from 0.23.0 ("must be a positive
    /// integer", vllm/config/model.py `validate_model_config_after` @v0.23.0
    /// L788); the vLLMs before take it and serve no request at all.
    MaxModelLenPositive = "max_model_len_positive", Hard, "`max_model_len` is at least 1";
    /// A block size the backend replaces: `refresh_block_size` in
    /// vllm_ascend/utils.py (128 with prefix caching or chunked prefill
    /// @v0.18.0 L1188 … @v0.30.0rc2 L1461; DeepSeek-V4 128 only at
    /// v0.20.2rc1, 32/64/128 from v0.21.0rc1 to v0.30.0rc2). Hybrid
    /// linear-attention models (Qwen3.5) are left to their own sizing there
    /// and are not judged.
    BlockSizeBackend = "block_size_backend", Hard, "`block_size` is one the attention backend keeps";
    /// Capture sizes (typed, or the image's defaults) none of which is a
    /// multiple of TP, on an engine of TP above 1 with a cudagraph mode (not
    /// `graph: eager`) where vllm-ascend requires TP-aligned sizes:
    /// AssertionError "... does not contain values that are multiples of
    /// tp_size" (vllm_ascend/platform.py `_setup_compile_backend`
    /// @v0.27.1rc1 L1188, @v0.30.0rc2 L1288; before, an `assert` in
    /// `check_and_update_config` under `enable_sp()` alone, @v0.18.0 L340,
    /// @v0.26.0rc1 L513). The
    /// requirement is the generated facts' `tp_aligned_capture_sizes`, each
    /// of its terms judged: `enable_shared_expert_dp`, which `AscendConfig`
    /// keeps with `--enable-expert-parallel` and TP above 1 (ascend_config.py
    /// @v0.27.1rc1 L514-518, @v0.30.0rc2 L747-751); `enable_sp()`, vLLM's
    /// `use_sequence_parallel_moe` as the generated `sp_moe` and vLLM's
    /// `sequence_parallel_moe` decide it (FlashComm1 or DSA-CP asked for,
    /// expert parallel, TP above 1, an SP all2all backend, DP above 1 at
    /// v0.28.0rc1); `enable_dsa_cp`, which `AscendConfig` keeps only with
    /// that on (ascend_config.py @v0.27.1rc1 L584, @v0.30.0rc2 L806).
    CaptureSizesTpAligned = "capture_sizes_tp_aligned", Hard, "with shared-expert DP or sequence-parallel MoE and a cudagraph mode, some capture size is a multiple of TP";
}

/// Capture sizes (typed, or the image's defaults) none of which TP divides
/// where vllm-ascend needs one (rule `capture_sizes_tp_aligned`).
pub(crate) fn check_capture_sizes_tp(
    facts: &Facts<'_>,
    role: Role,
    serve: &Serve,
    (dp, tp): (u32, u32),
    cx: &mut Cx,
) {
    let Some(img) = facts.image else {
        return;
    };
    let (Some(rel), Ok(v)) = (img.facts(), crate::upstream::vllm_of(img)) else {
        return;
    };
    let Some(sizes) =
        super::settings::effective_capture_sizes(facts.spec, role, serve, img, facts.hw)
    else {
        return;
    };
    let settings = super::model::RoleSettings {
        serve,
        dp_tp: Some((dp, tp)),
    };
    let indexer = facts.model.map(|m| m.attention.has_indexer());
    let Some((r, by)) = rel.tp_aligned_refusal(v, &settings, serve.graph, &sizes.values, indexer)
    else {
        return;
    };
    let why = match by {
        crate::upstream::TpAlignedBy::SharedExpertDp => {
            "`enable_shared_expert_dp` and `expert_parallel`".to_owned()
        }
        crate::upstream::TpAlignedBy::SequenceParallel => format!(
            "sequence-parallel MoE on ({})",
            super::model::sequence_parallel_switches(img)
        ),
    };
    cx.report(
        Rule::CaptureSizesTpAligned,
        sizes.site,
        sizes.field,
        format!(
            "found {} on a {role} engine of TP {tp} with {why}, expected at least one multiple of {tp}: vllm-ascend {} keeps only the sizes TP divides and refuses to start when none is left on image `{}` (\"does not contain values that are multiples of tp_size\", {})",
            sizes.text,
            rel.version,
            img.tag,
            r.source
        ),
    );
}

/// Role restrictions and limits vllm-ascend enforces at start-up that read
/// model facts: `enable_kv_nz`, `enable_reduce_sample`, `eplb_config`,
/// `max_num_seqs`, `block_size`, draft models.
pub(crate) fn check_role_limits(facts: &Facts<'_>, role: Role, serve: &Serve, cx: &mut Cx) {
    let Facts {
        spec, model, image, ..
    } = *facts;
    let scope = role.as_str();
    // enable_kv_nz: RuntimeError unless `is_deepseek_mla` and not sparse,
    // NotImplementedError unless kv_consumer (ascend_config.py @v0.18.0
    // L143-149, @v0.23.0 L274, @v0.26.0rc1 L280, @v0.30.0rc2 L900: the same
    // check at every release of the table).
    if serve.config_flag("enable_kv_nz") {
        let site = config_site(spec, role, "enable_kv_nz");
        let field = format!("{scope}.additional_config.enable_kv_nz");
        if role != Role::Decode {
            cx.report(
                Rule::KvNzDecodeOnly,
                site,
                field.clone(),
                format!("found `enable_kv_nz` on a {role} engine, expected it on decode engines of a PD layout only: vllm-ascend raises NotImplementedError unless the engine is a kv_consumer (ascend_config.py L251-259)"),
            );
        }
        if let Some(m) = model
            && m.attention != tables::Attention::Mla
        {
            cx.report(
                Rule::KvNzNeedsMla,
                site,
                field,
                format!(
                    "found `enable_kv_nz` with `{}` ({} attention), expected an MLA model without sparse attention: vllm-ascend raises RuntimeError \"only supported for mla\" (ascend_config.py L251-256)",
                    m.weights,
                    m.attention.as_str()
                ),
            );
        }
    }
    // enable_reduce_sample: ValueError on kv_producer and with lmhead TP
    // (ascend_config.py @v0.23.0 L318-340, @v0.27.1rc1 L729, @v0.29.0rc1
    // L819); the other images that read the key (v0.20.2rc1 to v0.29.0rc1,
    // the facts) run it unchecked, with the silent wrong results the check
    // was added for. v0.30.0rc1 no longer reads it (unknown key there).
    if serve.config_flag("enable_reduce_sample")
        && image.is_some_and(|i| i.reads_config_key("enable_reduce_sample"))
    {
        let site = config_site(spec, role, "enable_reduce_sample");
        let field = format!("{scope}.additional_config.enable_reduce_sample");
        if role == Role::Prefill {
            cx.report(
                Rule::ReduceSampleDecodeOnly,
                site,
                field.clone(),
                "found `enable_reduce_sample` on a prefill engine, expected it on decode or mixed engines only: reduce sampling is wrong on a kv_producer, which vllm-ascend rejects with ValueError (ascend_config.py L318-340 at v0.23.0)",
            );
        }
        let lmhead = serve
            .additional_config
            .get("finegrained_tp_config")
            .and_then(|f| f.get("lmhead_tensor_parallel_size"))
            .and_then(Json::as_u64)
            .is_some_and(|n| n > 0);
        if lmhead {
            cx.report(
                Rule::ReduceSampleDecodeOnly,
                site,
                field,
                format!("found `enable_reduce_sample` with `finegrained_tp_config.lmhead_tensor_parallel_size` on {role}, expected one of them: they are incompatible and vllm-ascend raises ValueError (ascend_config.py L327-332 at v0.23.0)"),
            );
        }
    }
    if let (Some(img), Some(eplb)) = (image, serve.additional_config.get("eplb_config")) {
        check_eplb_config(spec, role, img, eplb, cx);
    }
    if serve.max_model_len == Some(0) {
        cx.report(
            Rule::MaxModelLenPositive,
            site_in(spec, role, |b| b.max_model_len.as_ref()),
            format!("{scope}.max_model_len"),
            format!("found `max_model_len` 0 on {role}, expected at least 1: vLLM refuses it from 0.23.0 (vllm/config/model.py `validate_model_config_after`), and before that an engine of length 0 takes no request"),
        );
    }
    // max_num_seqs: `Field(ge=1)` in vllm/config/scheduler.py.
    if serve.max_num_seqs == Some(0) {
        cx.report(
            Rule::MaxNumSeqsPositive,
            site_in(spec, role, |b| b.max_num_seqs.as_ref()),
            format!("{scope}.max_num_seqs"),
            format!("found `max_num_seqs` 0 on {role}, expected at least 1: vLLM rejects it (`ge=1` in vllm/config/scheduler.py) and an engine must run a sequence"),
        );
    }
    if let (Some(bs), Some(m), Some(img)) = (serve.block_size, model, image) {
        let site = site_in(spec, role, |b| b.block_size.as_ref());
        let field = format!("{scope}.block_size");
        if m.attention == tables::Attention::V4Hybrid {
            let ok = tables::dsv4_block_sizes(img.tag);
            if !ok.contains(&bs) {
                cx.report(
                    Rule::BlockSizeBackend,
                    site,
                    field,
                    format!(
                        "found `block_size` {bs} for `{}` on image `{}`, expected one of {}: vllm-ascend replaces any other block size for DeepSeek-V4 with a warning (utils.py `refresh_block_size`)",
                        m.weights,
                        img.tag,
                        ok.iter().map(|b| format!("`{b}`")).collect::<Vec<_>>().join(", ")
                    ),
                );
            }
        } else if bs != 128 && !is_hybrid(m, img) {
            // Every other model but the hybrid ones (vLLM's
            // `ModelConfig.is_hybrid`: the class implements `IsHybrid`, the
            // generated `mamba_align.hybrid`, Qwen3.5 in the table), which
            // `refresh_block_size` leaves to their own sizing (utils.py
            // @v0.18.0 L1181, @v0.23.0 L1397, @v0.30.0rc2 L1454): 128 whenever
            // prefix caching or chunked prefill is on, and both are on
            // unless turned off (utils.py @v0.18.0 L1186-1189, @v0.23.0
            // L1404, @v0.30.0rc2 L1461).
            let no_chunked = serve
                .flags
                .iter()
                .any(|(n, _)| n == "--no-enable-chunked-prefill");
            if serve.prefix_caching != Some(false) || !no_chunked {
                cx.report(
                    Rule::BlockSizeBackend,
                    site,
                    field,
                    format!(
                        "found `block_size` {bs} for `{}`, expected `128`: vllm-ascend sets 128 whenever prefix caching or chunked prefill is on (utils.py `refresh_block_size`), so {bs} would never run",
                        m.weights
                    ),
                );
            }
        }
    }
    super::speculative::check_draft(facts, role, serve, cx);
}

/// Whether the image's vLLM sizes the model as hybrid, by its architecture
/// (`crate::dims::architecture`) among the generated `IsHybrid` classes. A
/// build of no known architecture (DeepSeek-V3.1-Terminus, R1-0528,
/// V3.2-Exp, GLM-4.7: families whose copied siblings are not hybrid) counts
/// as not hybrid, as the table held before; a vLLM without the classes
/// counts every model as hybrid, so that no block size is refused on a guess.
fn is_hybrid(m: &tables::Model, img: &tables::Image) -> bool {
    let Some(a) = crate::upstream::vllm_of(img)
        .ok()
        .and_then(|v| v.mamba_align.as_ref())
    else {
        return true;
    };
    crate::dims::architecture(m).is_some_and(|arch| a.is_hybrid(arch))
}
