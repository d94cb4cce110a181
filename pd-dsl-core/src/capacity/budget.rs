//! The budget of one role's ranks and of a whole layout, and GiB formatting.

use super::*;

/// The budget of one role's ranks, or `None` for a model without
/// dimensions ([`dims::UNSIZED`]).
pub fn role_budget(input: &RoleInput<'_>) -> Option<RoleBudget> {
    let ModelDims { arch, format, .. } = dims::dims_for(input.model.id)?;
    let serve = input.serve;
    // Routed experts are split over every rank of the DP group with or
    // without `--enable-expert-parallel`: without it vLLM flattens TP across
    // DP (`FusedMoEParallelConfig.make` -> `flatten_tp_across_dp_and_pcp`,
    // vllm/model_executor/layers/fused_moe/config.py, every vLLM of the
    // image table) and shards each expert dp x tp ways; with it each rank
    // holds whole experts. The bytes per rank are the same. PCP multiplies
    // in like DP (`flatten_tp_across_dp_and_pcp`: tp x dp x pcp).
    let ep = if arch.routed_experts > 0 {
        input
            .dp
            .saturating_mul(input.tp)
            .saturating_mul(input.pcp.max(1))
    } else {
        input.tp
    };
    let redundant = redundant_experts(serve);
    // Every MTP method (`mtp`, `deepseek_mtp`, `qwen3_5_mtp`, ...) drafts
    // with the checkpoint's MTP layer.
    let mtp = serve
        .speculative
        .as_ref()
        .is_some_and(|s| s.method == "mtp" || s.method.ends_with("_mtp"));
    let w = weights(arch, format, input.tp, ep, redundant, mtp);
    let (default_mbt, default_seqs) = default_batching(input.hardware);
    let mbt = serve.max_num_batched_tokens.unwrap_or(default_mbt);
    let seqs = serve.max_num_seqs.unwrap_or(default_seqs);
    let r = reserves(arch, input, ep, mbt, seqs);
    let total = total_bytes(input.hardware);
    let util = utilization_milli(serve);
    let kv_override = flag_u64(serve, "--kv-cache-memory-bytes");
    let non_kv = w.total().saturating_add(r.total());
    let requested = match kv_override {
        Some(kv) => kv.saturating_add(non_kv),
        None => (total as u128 * util as u128 / 1000) as u64,
    };
    let kv_bytes = match kv_override {
        Some(kv) => i64::try_from(kv).unwrap_or(i64::MAX),
        None => i64::try_from(requested)
            .unwrap_or(i64::MAX)
            .saturating_sub(i64::try_from(non_kv).unwrap_or(i64::MAX)),
    };
    let available = kv_bytes.max(0) as u64;
    let vllm = crate::upstream::vllm_of(input.image).ok();
    let reserves_block = vllm.is_some_and(|v| v.kv_memory_check.reserves_pool_block);
    // The MTP draft layer caches KV like a decoder layer (a full-attention
    // one in a hybrid model).
    let mtp_layers = arch.mtp_layers * u64::from(mtp);
    let hybrid = match arch.attention {
        AttentionDims::Hybrid { full_layers, .. } => {
            // Prefix caching, or a KV store where the image forces it, puts
            // the Mamba cache in 'align' mode (vLLM's
            // `MambaModelConfig.verify_and_update_config`: Qwen3.5 does not
            // support 'all').
            let align = serve.prefix_caching == Some(true)
                || crate::rules::model::store_forces_align(input.image, input.kv_pool, serve)
                    .is_some();
            let d = dims::config_of(input.model).and_then(|c| c.gdn())?;
            let sizing = input.image.facts().and_then(HybridSizing::of)?;
            Some(HybridKv::plan(
                &d,
                u64::from(input.tp),
                serve.speculative.as_ref().map_or(0, |s| s.tokens),
                serve.block_size,
                sizing,
                &vllm?.kv_memory_check,
                full_layers + mtp_layers,
                arch.layers - full_layers,
                align,
            )?)
        }
        _ => None,
    };
    let (block_size, block_bytes, kv_per_token_all, kv_per_request, blocks, reserve) = match &hybrid
    {
        Some(h) => {
            let block_bytes = if h.first_group_only {
                h.pool_block()
            } else {
                h.attn_groups.saturating_mul(h.pool_block())
            };
            let per_request = if h.first_group_only {
                0
            } else {
                h.mamba_groups
                    .saturating_mul(h.mamba_blocks_per_request)
                    .saturating_mul(h.pool_block())
            };
            (
                h.block,
                block_bytes,
                block_bytes / h.block,
                per_request,
                h.num_blocks(available),
                if h.reserves_pool_block {
                    h.pool_block()
                } else {
                    0
                },
            )
        }
        None => {
            let (per_layer_token, per_layer_request) =
                kv_per_token(arch, format, serve, input.hardware, input.tp);
            let layers = arch.layers + mtp_layers;
            // A block size of 0 is refused by its own rule; here it reads as 1.
            let block_size = serve.block_size.unwrap_or(DEFAULT_BLOCK_SIZE).max(1);
            let page = per_layer_token.saturating_mul(block_size);
            let block_bytes = page.saturating_mul(layers);
            (
                block_size,
                block_bytes,
                per_layer_token.saturating_mul(layers),
                per_layer_request.saturating_mul(layers),
                kv_blocks(available, page, layers),
                // A uniform cache's pool block is one page per layer.
                if reserves_block { block_bytes } else { 0 },
            )
        }
    };
    // What vLLM's one-request check compares with.
    let check_available = available.saturating_sub(reserve);
    let model_max_len = arch.max_model_len;
    let max_model_len = serve.max_model_len.unwrap_or(model_max_len);
    // Decode context parallelism shards each request's tokens over the DCP
    // ranks of its TP group, and PCP over its PCP ranks: a rank keeps
    // cdiv(len, dcp x pcp) of them (`AttentionSpec.max_memory_usage_bytes`,
    // vllm/v1/kv_cache_interface.py).
    let dcp = flag_u64(serve, "--decode-context-parallel-size")
        .unwrap_or(1)
        .max(1)
        * u64::from(input.pcp.max(1));
    let local = |len: u64| len.div_ceil(dcp);
    // One request needs cdiv(len, block) blocks of every layer.
    // Saturating: a length or block size far past any real one must read
    // as "does not fit", never overflow.
    let fits = |len: u64| {
        check_available > 0
            && local(len)
                .div_ceil(block_size)
                .saturating_mul(block_bytes)
                .saturating_add(kv_per_request)
                <= check_available
    };
    let max_len_fits = if fits(1) {
        let (mut lo, mut hi) = (1u64, max_model_len.max(model_max_len).max(1));
        if fits(hi) {
            lo = hi;
        }
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    } else {
        0
    };
    // Requests of `len` tokens the cache holds at once: whole blocks of
    // every group each (`get_max_concurrency_for_kv_cache_config`).
    let requests_at = |len: u64| {
        let need = local(len)
            .div_ceil(block_size)
            .saturating_mul(block_bytes)
            .saturating_add(kv_per_request);
        available.checked_div(need).unwrap_or(0)
    };
    // What vLLM logs as "GPU KV cache size": the requests of
    // `max_model_len` the blocks hold, in tokens; for one uniform group,
    // every block's tokens.
    let kv_tokens = match &hybrid {
        Some(h) => {
            let per = h.blocks_per_request(local(max_model_len)).max(1);
            (u128::from(blocks) * u128::from(max_model_len) / u128::from(per)) as u64
        }
        None => blocks.saturating_mul(block_size),
    };
    let ranks = u64::from(input.dp) * u64::from(input.engines);
    let workload = input.workload.map(|(tokens, concurrency)| {
        let fit_per_rank = requests_at(tokens.min(max_model_len));
        WorkloadFit {
            tokens_per_request: tokens,
            concurrency,
            fit_per_rank,
            fit_total: fit_per_rank.saturating_mul(ranks),
            seqs_total: seqs.saturating_mul(ranks),
            ranks,
        }
    });
    Some(RoleBudget {
        role: input.role,
        dp: input.dp,
        tp: input.tp,
        pcp: input.pcp.max(1),
        ep,
        redundant_experts: redundant,
        total_bytes: total,
        utilization_milli: util,
        requested_bytes: requested,
        kv_cache_memory_bytes: kv_override,
        weights: w,
        reserves: r,
        kv_bytes,
        kv_bytes_per_token: kv_per_token_all,
        kv_bytes_per_request: kv_per_request,
        block_size,
        block_bytes,
        kv_blocks: blocks,
        kv_tokens,
        max_model_len,
        model_max_len,
        max_len_fits,
        requests_at_max_len: requests_at(max_model_len),
        max_num_batched_tokens: mbt,
        max_num_seqs: seqs,
        workload,
        estimate: matches!(arch.attention, AttentionDims::V4 { .. }),
        hybrid,
        check_reserve_bytes: reserve,
    })
}

/// The layout's declared workload: tokens per request (input + output) and,
/// when the benchmark runs them together, how many at once: its
/// `max_concurrency`, else all `num_prompts` when it sends them without a
/// rate (`--request-rate inf`, vLLM bench's default); `None` for a paced
/// workload, whose concurrency depends on latency.
pub fn workload(layout: &Layout) -> Option<(u64, Option<u64>)> {
    layout.spec.bench.as_ref().map(|b| {
        let paced = b
            .request_rate
            .as_ref()
            .is_some_and(|r| r.value.trim() != "inf");
        let concurrency = match &b.max_concurrency {
            Some(c) => Some(c.value),
            None if paced => None,
            None => Some(b.num_prompts.value),
        };
        (
            b.input_len.value.saturating_add(b.output_len.value),
            concurrency,
        )
    })
}

/// The budget of every role of a checked layout, in node order; empty for
/// a model without dimensions.
pub fn budget(layout: &Layout) -> Vec<RoleBudget> {
    let mut out = Vec::new();
    for (role, serve) in &layout.serve {
        let engines: Vec<_> = layout
            .placement
            .engines
            .iter()
            .filter(|e| e.role == *role)
            .collect();
        let Some(first) = engines.first() else {
            continue;
        };
        let input = RoleInput {
            model: layout.model,
            hardware: layout.hardware,
            image: layout.image,
            role: *role,
            serve,
            dp: first.dp,
            tp: first.tp,
            pcp: first.pcp,
            engines: engines.len() as u32,
            workload: workload(layout),
            kv_pool: layout.spec.runs_kv_pool(),
        };
        if let Some(b) = role_budget(&input) {
            out.push(b);
        }
    }
    out
}

/// Why a checked layout's roles have no budget, where some has none: its
/// model has no dimensions ([`dims::UNSIZED`], with the reason), or a
/// hybrid Gated-DeltaNet role has no [`HybridKv`] plan (the release's block
/// sizing refuses its TP size, or the image has no sizing fact). `None`
/// when every role has one.
pub fn not_planned(layout: &Layout) -> Option<String> {
    if let Some((_, why)) = dims::UNSIZED.iter().find(|(id, _)| *id == layout.model.id) {
        return Some(format!(
            "`{}` has no dimensions in pd-dsl: {why}",
            layout.model.id
        ));
    }
    let planned = budget(layout);
    let missing: Vec<&str> = layout
        .serve
        .keys()
        .filter(|r| !planned.iter().any(|b| b.role == **r))
        .map(|r| r.as_str())
        .collect();
    if missing.is_empty() {
        return None;
    }
    Some(format!(
        "the {} role(s) of `{}` have no KV cache plan on image {}: the release sizes this hybrid model's cache only where the TP size divides its linear-attention heads and an attention block carries the Mamba state exactly (vllm-ascend asserts \"Cannot align\" otherwise), and only from a generated `hybrid_attn_block` or `hybrid_block_vllm` fact",
        missing.join(" and "),
        layout.model.id,
        layout.image.tag
    ))
}

/// Bytes as GiB with two decimals (`45.67`), for messages and tables.
pub fn gib(bytes: u64) -> String {
    let hundredths = (bytes as u128 * 100 + u128::from(GIB) / 2) / u128::from(GIB);
    format!("{}.{:02}", hundredths / 100, hundredths % 100)
}

/// Signed [`gib`].
pub fn gib_signed(bytes: i64) -> String {
    if bytes < 0 {
        format!("-{}", gib(bytes.unsigned_abs()))
    } else {
        gib(bytes as u64)
    }
}

impl RoleBudget {
    /// One line with the numbers, for rule messages.
    pub fn summary(&self) -> String {
        format!(
            "{role} rank ({shape}, experts over {ep} ranks): {req} GiB usable = {util}‰ of {total} GiB; weights {w} GiB, reserves {r} GiB (activations {act}, sampler {smp}, HCCL {hccl}, graphs {graph}, runtime {rt}); KV {kv} GiB at {bpt} B/token = {tokens} tokens",
            role = self.role,
            shape = crate::spec::shape_text(
                u64::from(self.dp),
                u64::from(self.tp),
                u64::from(self.pcp)
            ),
            ep = self.ep,
            req = gib(self.requested_bytes),
            util = self.utilization_milli,
            total = gib(self.total_bytes),
            w = gib(self.weights.total()),
            r = gib(self.reserves.total()),
            act = gib(self.reserves.activations),
            smp = gib(self.reserves.sampler),
            hccl = gib(self.reserves.hccl),
            graph = gib(self.reserves.graph),
            rt = gib(self.reserves.runtime),
            kv = gib_signed(self.kv_bytes),
            bpt = self.kv_bytes_per_token,
            tokens = self.kv_tokens,
        )
    }
}
