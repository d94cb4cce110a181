//! The memory budget of each role (`crate::capacity`) and vLLM's scheduler checks that read `max_model_len`: weights fit, one request fits the KV cache, the batch limits agree and the declared workload fits.

use super::settings::site_in;
use crate::check::Cx;
use crate::layout::{Layout, Serve};
use crate::rules::Rule;
use crate::spec::{LayoutSpec, Role};
use crate::{capacity, dims};

declare_rules! {
    /// Weights and reserves leave no memory for the KV cache.
    WeightsFit = "weights_fit", Hard, "a rank's weights and reserves fit in `gpu_memory_utilization` x its HBM";
    /// One `max_model_len` request does not fit the KV cache.
    MaxModelLenFitsKv = "max_model_len_fits_kv", Hard, "the KV cache of a rank holds one request of `max_model_len` tokens";
    /// `max_model_len` beyond the length vLLM derives from the model's config
    /// (`max_position_embeddings` with RoPE scaling; `dims::derived_len`, for
    /// every model whose length a source states).
    MaxModelLenWithinModel = "max_model_len_within_model", Hard, "`max_model_len` is within the model's `max_position_embeddings` unless `VLLM_ALLOW_LONG_MAX_MODEL_LEN` is set";
    /// `max_num_batched_tokens` below `max_num_seqs`.
    BatchedTokensCoverSeqs = "batched_tokens_cover_seqs", Hard, "`max_num_batched_tokens >= max_num_seqs`";
    /// `max_num_batched_tokens` below `max_model_len` without chunked prefill
    /// (when `max_model_len` is not set, below the length vLLM derives for the
    /// model, or a lower bound of it).
    BatchedTokensCoverModelLen = "batched_tokens_cover_model_len", Hard, "without chunked prefill `max_num_batched_tokens >= max_model_len`";
    /// A full graph on a hybrid Gated-DeltaNet model (Qwen3.5) with
    /// `max_num_seqs` above the KV cache's blocks: each decode sequence
    /// needs a Mamba block, and vLLM refuses to capture
    /// (vllm/config/compilation.py `resolve_cudagraph_mode_and_sizes`, the
    /// generated `mamba_blocks_check`, vLLM 0.20.2 to 0.30.0; the blocks are
    /// the budget's, `capacity::HybridKv`, held to the released code by
    /// `tests/hybrid_kv_oracle.rs`).
    MambaBlocksCoverSeqs = "mamba_blocks_cover_seqs", Hard, "with a full graph, a hybrid Mamba model's `max_num_seqs` is within its KV cache blocks";
    /// The declared workload runs more requests at once than the role holds.
    WorkloadConcurrency = "workload_concurrency", Convention, "the declared workload's concurrency fits `max_num_seqs` x ranks and the KV cache";
}

/// The typed `max_model_len` vLLM holds to the length it derives from the
/// checkpoint's config (vllm/config/model.py `_get_and_verify_max_len`):
/// `None` when unset (vLLM takes the derived one), or when
/// `--hf-overrides` may change the derived length or env
/// `VLLM_ALLOW_LONG_MAX_MODEL_LEN` lets a longer one through. The rule
/// `max_model_len_within_model` and the generated preflight
/// (`crate::preflight`) ask this.
pub(crate) fn judged_max_model_len(serve: &Serve) -> Option<u64> {
    let overrides = serve.flags.iter().any(|(n, _)| n == "--hf-overrides");
    serve
        .max_model_len
        .filter(|_| !overrides && !capacity::allows_long_max_model_len(serve))
}

/// The memory budget of each role (capacity.rs) and vLLM's scheduler
/// checks that read `max_model_len`: weights must fit, one `max_model_len`
/// request must fit the KV cache, `max_model_len` stays within the model,
/// the batch limits agree, and the declared workload fits.
pub(crate) fn check_capacity(spec: &LayoutSpec, layout: &Layout, cx: &mut Cx) {
    let budgets = capacity::budget(layout);
    for (role, serve) in &layout.serve {
        let role = *role;
        let scope = role.as_str();
        let len_site = site_in(spec, role, |b| b.max_model_len.as_ref());
        let mbt_site = site_in(spec, role, |b| b.max_num_batched_tokens.as_ref());
        let seqs_site = site_in(spec, role, |b| b.max_num_seqs.as_ref());
        let (default_mbt, default_seqs) = capacity::default_batching(layout.hardware);
        let mbt = serve.max_num_batched_tokens.unwrap_or(default_mbt);
        let seqs = serve.max_num_seqs.unwrap_or(default_seqs);
        let unset = |set: bool| if set { "" } else { " (vLLM's default: unset)" };
        // vllm/config/scheduler.py `verify_max_model_len`: ValueError at
        // every vLLM the images ship (0.18.0 to 0.25.1).
        if mbt < seqs {
            cx.report(
                Rule::BatchedTokensCoverSeqs,
                if serve.max_num_batched_tokens.is_some() { mbt_site } else { seqs_site },
                format!("{scope}.max_num_batched_tokens"),
                format!(
                    "found {role} `max_num_batched_tokens` {mbt}{} below `max_num_seqs` {seqs}{}, expected at least {seqs}: vLLM raises ValueError \"max_num_batched_tokens must be greater than or equal to max_num_seqs\" (vllm/config/scheduler.py `verify_max_model_len`)",
                    unset(serve.max_num_batched_tokens.is_some()),
                    unset(serve.max_num_seqs.is_some()),
                ),
            );
        }
        // The length vLLM derives from the model's config: exact, or a
        // lower bound for the entries only served at a length upstream.
        let derived_with_source = dims::derived_len(layout.model.id);
        let derived = derived_with_source.map(|(len, _)| len);
        let no_chunked = serve
            .flags
            .iter()
            .any(|(n, _)| n == "--no-enable-chunked-prefill");
        // Without `--max-model-len` vLLM schedules the derived length, which
        // `--hf-overrides` may change (so it is then not judged).
        let overrides = serve.flags.iter().any(|(n, _)| n == "--hf-overrides");
        let max_model_len = match (serve.max_model_len, derived) {
            (Some(len), _) => Some((len, format!("`max_model_len` {len}"))),
            (None, Some(d)) if !overrides => Some((
                d.at_least(),
                format!("the model's derived `max_model_len` {d} (`max_model_len` not set)"),
            )),
            (None, _) => None,
        };
        if no_chunked
            && let Some((len, what)) = max_model_len
            && mbt < len
        {
            cx.report(
                Rule::BatchedTokensCoverModelLen,
                mbt_site,
                format!("{scope}.max_num_batched_tokens"),
                format!(
                    "found {role} `max_num_batched_tokens` {mbt}{} below {what} with `--no-enable-chunked-prefill`, expected at least {len}: without chunked prefill a prompt is scheduled whole, and vLLM raises ValueError at start-up (vllm/config/scheduler.py `verify_max_model_len`)",
                    unset(serve.max_num_batched_tokens.is_some()),
                ),
            );
        }
        // vllm/config/model.py `_get_and_verify_max_len`: ValueError unless
        // VLLM_ALLOW_LONG_MAX_MODEL_LEN (vllm/envs.py); `--hf-overrides`
        // can change the derived length, so it is not judged then.
        // A lower bound (`DerivedLen::AtLeast`) cannot refuse anything.
        if let (Some(len), Some(max)) =
            (judged_max_model_len(serve), derived.and_then(|d| d.exact()))
            && len > max
        {
            cx.report(
                Rule::MaxModelLenWithinModel,
                len_site,
                format!("{scope}.max_model_len"),
                format!(
                    "found `max_model_len` {len} on {role}, expected at most {max} for `{}` (its `max_position_embeddings` with RoPE scaling; {}): vLLM raises ValueError \"User-specified max_model_len is greater than the derived max_model_len\" unless env `VLLM_ALLOW_LONG_MAX_MODEL_LEN=1` is set (vllm/config/model.py `_get_and_verify_max_len`)",
                    layout.model.weights,
                    derived_with_source.map_or("", |(_, source)| source),
                ),
            );
        }
        let Some(b) = budgets.iter().find(|b| b.role == role) else {
            continue;
        };
        let over_total = b.kv_cache_memory_bytes.is_some() && b.requested_bytes > b.total_bytes;
        if b.kv_bytes <= 0 || over_total {
            cx.report(
                Rule::WeightsFit,
                site_in(spec, role, |b| b.gpu_memory_utilization.as_ref()),
                format!("{scope}.gpu_memory_utilization"),
                format!(
                    "found {role} weights of {} GiB and reserves of {} GiB per rank, expected them within the {} GiB vLLM may use: with no memory left for the KV cache vLLM raises \"No available memory for the cache blocks\" at start-up (vllm/v1/core/kv_cache_utils.py `_check_enough_kv_cache_memory`); spread the weights over more ranks or raise `gpu_memory_utilization`; budget: {}",
                    capacity::gib(b.weights.total()),
                    capacity::gib(b.reserves.total()),
                    capacity::gib(b.requested_bytes.min(b.total_bytes)),
                    b.summary()
                ),
            );
            continue;
        }
        if b.max_len_fits < b.max_model_len {
            let need = b
                .max_model_len
                .div_ceil(b.block_size)
                .saturating_mul(b.block_bytes)
                .saturating_add(b.kv_bytes_per_request);
            cx.report(
                Rule::MaxModelLenFitsKv,
                len_site,
                format!("{scope}.max_model_len"),
                format!(
                    "found `max_model_len` {} on {role}, expected at most {}: one request of that length needs {} GiB of KV cache ({} B per token) and a rank has {} GiB, so vLLM refuses to start (vllm/v1/core/kv_cache_utils.py `_check_enough_kv_cache_memory`); budget: {}",
                    b.max_model_len,
                    b.max_len_fits,
                    capacity::gib(need),
                    b.kv_bytes_per_token,
                    capacity::gib_signed(b.kv_bytes),
                    b.summary()
                ),
            );
        }
        // vLLM refuses a full graph when `max_num_seqs` exceeds the blocks
        // of a cache with Mamba layers; only a typed full mode is judged
        // (an unset mode is the image's default).
        if let (Some(h), Some(check)) = (
            b.hybrid,
            crate::upstream::vllm_of(layout.image)
                .ok()
                .and_then(|v| v.mamba_blocks_check.as_ref()),
        ) && matches!(
            serve.graph,
            Some(crate::spec::GraphMode::Full | crate::spec::GraphMode::FullDecodeOnly)
        ) && b.max_num_seqs > b.kv_blocks
        {
            let graph = serve.graph.map_or("", |g| g.as_str());
            cx.report(
                Rule::MambaBlocksCoverSeqs,
                if serve.max_num_seqs.is_some() {
                    seqs_site
                } else {
                    site_in(spec, role, |b| b.graph.as_ref())
                },
                format!("{scope}.max_num_seqs"),
                format!(
                    "found `max_num_seqs` {}{} on a {role} engine of `{}` with graph `{graph}`, expected at most {}: each decode sequence of this hybrid model needs one Mamba cache block, and a rank's KV cache holds {} blocks, each a {} B page of {} layers ({} attention and {} Mamba groups of them, {}-token attention blocks), so vLLM {} raises ValueError \"max_num_seqs ({}) exceeds available Mamba cache blocks ({})\" before it captures the graphs ({}); lower `max_num_seqs`, raise `gpu_memory_utilization`, or spread the weights over more ranks; budget: {}",
                    b.max_num_seqs,
                    unset(serve.max_num_seqs.is_some()),
                    layout.model.id,
                    b.kv_blocks,
                    b.kv_blocks,
                    h.page,
                    h.group_size,
                    h.attn_groups,
                    h.mamba_groups,
                    h.block,
                    layout.image.vllm(),
                    b.max_num_seqs,
                    b.kv_blocks,
                    check.source,
                    b.summary()
                ),
            );
        }
        if role == Role::Prefill {
            continue;
        }
        if let (Some(w), Some(bench)) = (b.workload, spec.bench.as_ref())
            && let Some(concurrency) = capacity::workload(layout).and_then(|(_, c)| c)
        {
            let site = bench
                .max_concurrency
                .as_ref()
                .map_or(bench.num_prompts.site, |c| c.site);
            if concurrency > w.seqs_total || concurrency > w.fit_total {
                let limit = w.seqs_total.min(w.fit_total);
                cx.report(
                    Rule::WorkloadConcurrency,
                    site,
                    "bench",
                    format!(
                        "found a workload of {concurrency} concurrent requests of {} tokens, expected at most {limit} on the {} {role} ranks: they run `max_num_seqs` {} each ({} in all) and their KV caches hold {} such requests ({} per rank of {} tokens); the rest queue",
                        w.tokens_per_request,
                        w.ranks,
                        b.max_num_seqs,
                        w.seqs_total,
                        w.fit_total,
                        w.fit_per_rank,
                        b.kv_tokens
                    ),
                );
            }
        }
    }
}
