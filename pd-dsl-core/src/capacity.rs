//! The memory budget of one rank: what its weights, reserves and KV cache
//! take out of the NPU's HBM, and what is left for requests.
//!
//! It follows what vllm-ascend does at start-up (`NPUWorker.determine_available_memory`,
//! vllm_ascend/worker/worker.py at every image): the KV cache gets
//! `gpu_memory_utilization x total memory - (weights + peak activations +
//! non-torch memory)` (or `--kv-cache-memory-bytes` as given), vLLM divides
//! it into blocks of `block_size` tokens per layer
//! (vllm/v1/core/kv_cache_utils.py `get_num_blocks`) and refuses to start
//! unless one `max_model_len` request fits (`_check_enough_kv_cache_memory`).
//! Weights and KV bytes per token are computed from [`crate::dims`]; the
//! activation, HCCL and runtime reserves are estimates whose constants below
//! each say where they come from or that they are a fit.
//!
//! Pure functions of the checked layout: no I/O.

use crate::dims::{self, Architecture, AttentionDims, ModelDims, WeightFormat};
use crate::layout::{Layout, Serve};
use crate::spec::{EnvValue, GraphMode, Json, Role};
use crate::tables::{Hardware, HardwareFamily, Image, Model};
use serde::Serialize;

/// Bytes in a GiB.
pub const GIB: u64 = 1 << 30;
/// Bytes in a MiB (`HCCL_BUFFSIZE` is in MB = MiB).
pub const MIB: u64 = 1 << 20;

/// Total memory the runtime reports for a "64GB" Atlas 800 A2/A3 NPU
/// (`torch.npu.mem_get_info` as vllm-ascend's worker logs it, "total memory:
/// 65452113920", in public vllm-ascend startup logs of A2 and A3 runs): 60.96
/// GiB, not 64. vLLM multiplies this by `gpu_memory_utilization`.
pub const TOTAL_BYTES_64GB: u64 = 65_452_113_920;

/// Total memory per NPU: the reported figure for 64 GB parts; for other
/// sizes (the 950DT's 96 GB) the same ratio to the nominal size, an estimate.
pub const fn total_bytes(hw: &Hardware) -> u64 {
    if hw.hbm_gb_per_npu == 64 {
        TOTAL_BYTES_64GB
    } else {
        TOTAL_BYTES_64GB / 64 * hw.hbm_gb_per_npu as u64
    }
}

/// Runtime memory outside torch that the profile run sees besides HCCL
/// buffers: the ACL context, ATB/op workspaces and allocator slack. A fit:
/// 1 GiB matches the public start-up logs of 8-rank MoE runs (weights
/// 27.49 GiB, 28.14 GB left for KV at utilization 0.9 on 60.96 GiB: 1.16 GiB
/// besides weights for activations and runtime), and vllm-ascend itself keeps
/// a 150 MiB margin because profiling underestimates these allocations
/// (worker.py `compile_or_warm_up_model`, `redundancy_buffer`).
pub const RUNTIME_OVERHEAD_BYTES: u64 = GIB;

/// HCCL buffer per process group that vllm-ascend creates with
/// `hccl_buffer_size` (`_DEFAULT_BUFFER_SIZE` = 200 MB, vllm_ascend/utils.py).
pub const HCCL_DEFAULT_GROUP_MB: u64 = 200;
/// HCCL buffer of the DP group (`_MIN_DP_BUFFER_SIZE` = 50 MB,
/// vllm_ascend/utils.py `calculate_dp_buffer_size`).
pub const HCCL_DP_GROUP_MB: u64 = 50;
/// `HCCL_BUFFSIZE` when unset: 200 MB (CANN's default; the MC2 group of the
/// MoE dispatch/combine uses it, vllm_ascend/utils.py
/// `get_hccl_config_for_pg_options`: "mc2 operators only perform communication
/// space partitioning based on HCCL_BUFFSIZE").
pub const HCCL_BUFFSIZE_DEFAULT_MB: u64 = 200;
/// Each HCCL communicator holds an input and an output buffer of its size
/// (CANN HCCL environment-variable reference for `HCCL_BUFFSIZE`; not in the
/// corpus, stated as the assumption).
pub const HCCL_BUFFERS_PER_GROUP: u64 = 2;

/// Activation bytes per batched token besides the MoE: hidden-sized BF16
/// buffers alive at the peak of the profile run (residual, norm output,
/// attention output, MoE input and output, the TP all-gather/reduce-scatter
/// pair, one spare). A fit: 8 buffers. The catalog's tightest layout
/// (`deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d-64k` prefill) fits its
/// `max_model_len` with up to 15.
pub const ACTIVATION_HIDDEN_BUFFERS: u64 = 8;

/// Graph memory vLLM's memory profiler reserves before the KV cache where
/// the image estimates it (`profile_cudagraph_memory`, applied when
/// `VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS` is on, its default, in
/// vllm-ascend v0.21.0rc1 and v0.22.1rc1; skipped for DeepSeek-V4; the other
/// images capture after the KV cache is allocated). A fit: 0.5 GiB (a public
/// log of an 8-rank full-decode capture: "took 0.29 GiB").
pub const GRAPH_RESERVE_BYTES: u64 = GIB / 2;

/// vLLM's `max_num_batched_tokens` and `max_num_seqs` for `vllm serve` when
/// unset (vllm/engine/arg_utils.py `_set_default_args`): 8192 / 1024 on
/// devices with at least 70 GiB, else 2048 / 256.
pub const fn default_batching(hw: &Hardware) -> (u64, u64) {
    if total_bytes(hw) >= 70 * GIB {
        (8192, 1024)
    } else {
        (2048, 256)
    }
}

/// vLLM's `block_size` when unset: vllm-ascend sets 128 (utils.py
/// `refresh_block_size`).
pub const DEFAULT_BLOCK_SIZE: u64 = 128;

/// Weight bytes held by one rank, by class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Weights {
    /// Embedding and `lm_head`, vocab-parallel over TP.
    pub embedding: u64,
    /// Attention, dense MLP and shared experts, split over TP.
    pub dense: u64,
    /// Routed experts over the expert-parallel group, with redundant experts.
    pub routed: u64,
    /// Router gates, replicated.
    pub router: u64,
    /// The MTP layer (its routed experts over EP like the others).
    pub mtp: u64,
}

impl Weights {
    /// All of them.
    pub const fn total(&self) -> u64 {
        self.embedding + self.dense + self.routed + self.router + self.mtp
    }
}

/// Memory one rank keeps besides weights and KV.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Reserves {
    /// Peak activations of the profile run over `max_num_batched_tokens`.
    pub activations: u64,
    /// The sampler's float32 logits for `max_num_seqs` requests
    /// (vLLM's `_dummy_sampler_run` in the profile run).
    pub sampler: u64,
    /// HCCL buffers.
    pub hccl: u64,
    /// Graph memory reserved before the KV cache (0 where captured after).
    pub graph: u64,
    /// [`RUNTIME_OVERHEAD_BYTES`].
    pub runtime: u64,
}

impl Reserves {
    /// All of them.
    pub const fn total(&self) -> u64 {
        self.activations + self.sampler + self.hccl + self.graph + self.runtime
    }
}

/// One role's budget per rank (every rank of a role has the same shape).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RoleBudget {
    /// The role.
    pub role: Role,
    /// DP size of each engine.
    pub dp: u32,
    /// TP size.
    pub tp: u32,
    /// PCP size (1 when not used).
    pub pcp: u32,
    /// Ranks that split the routed experts (DP x TP with expert parallelism,
    /// else TP).
    pub ep: u32,
    /// EPLB redundant experts per layer.
    pub redundant_experts: u64,
    /// Total memory per NPU as the runtime reports it.
    pub total_bytes: u64,
    /// `gpu_memory_utilization` in thousandths.
    pub utilization_milli: u64,
    /// What vLLM may use: utilization x total, or `--kv-cache-memory-bytes`
    /// plus the non-KV memory when that is given.
    pub requested_bytes: u64,
    /// `--kv-cache-memory-bytes`, when set.
    pub kv_cache_memory_bytes: Option<u64>,
    /// Weights per rank.
    pub weights: Weights,
    /// Reserves per rank.
    pub reserves: Reserves,
    /// Bytes left for the KV cache (negative: the weights and reserves alone
    /// exceed the budget).
    pub kv_bytes: i64,
    /// KV bytes per token on this rank over every layer (MTP included).
    pub kv_bytes_per_token: u64,
    /// KV bytes per request that do not grow with its length (DeepSeek-V4's
    /// sliding-window caches).
    pub kv_bytes_per_request: u64,
    /// `block_size`.
    pub block_size: u64,
    /// Bytes of one block over every layer.
    pub block_bytes: u64,
    /// Blocks per layer (`available // page_size // num_layers`).
    pub kv_blocks: u64,
    /// Tokens the cache holds (`blocks x block_size`).
    pub kv_tokens: u64,
    /// `max_model_len` as configured (or the model's when unset).
    pub max_model_len: u64,
    /// The model's own limit (`max_position_embeddings` with RoPE scaling).
    pub model_max_len: u64,
    /// The largest `max_model_len` one request of which fits the cache.
    pub max_len_fits: u64,
    /// `max_model_len` requests the cache holds at once.
    pub requests_at_max_len: u64,
    /// `max_num_batched_tokens` (configured or vLLM's default).
    pub max_num_batched_tokens: u64,
    /// `max_num_seqs` (configured or vLLM's default).
    pub max_num_seqs: u64,
    /// The declared workload, if any.
    pub workload: Option<WorkloadFit>,
    /// True when the DeepSeek-V4 hybrid cache is estimated rather than
    /// reproduced (see [`kv_per_token`]).
    pub estimate: bool,
}

/// How the layout's declared workload (`bench`) fits one role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct WorkloadFit {
    /// Tokens one request holds at its end (input + output).
    pub tokens_per_request: u64,
    /// Requests the layout runs at once, if it says ([`workload`]).
    pub concurrency: Option<u64>,
    /// Requests of that size one rank's KV cache holds.
    pub fit_per_rank: u64,
    /// Over all ranks of the role (DP ranks x engines).
    pub fit_total: u64,
    /// `max_num_seqs` x DP ranks of the role.
    pub seqs_total: u64,
    /// DP ranks of the role (engines x DP).
    pub ranks: u64,
}

/// The inputs the budget reads for one role.
#[derive(Clone, Copy, Debug)]
pub struct RoleInput<'a> {
    /// Model-table entry.
    pub model: &'a Model,
    /// Hardware.
    pub hardware: &'a Hardware,
    /// Image.
    pub image: &'a Image,
    /// The role.
    pub role: Role,
    /// Resolved serve settings.
    pub serve: &'a Serve,
    /// DP size.
    pub dp: u32,
    /// TP size.
    pub tp: u32,
    /// PCP size (1 when not used): each of a rank's `tp x pcp` NPUs holds
    /// a TP shard of the dense weights.
    pub pcp: u32,
    /// Engines of the role.
    pub engines: u32,
    /// The declared workload `(input_len + output_len, concurrency)`.
    pub workload: Option<(u64, Option<u64>)>,
}

/// KV bytes of one token and layer on one rank, by attention kind, and
/// bytes per request that do not grow with length.
///
/// - MLA: one latent head of `kv_lora_rank + qk_rope_head_dim` elements
///   (vLLM `MLAAttention.get_kv_cache_spec`, `MLAAttentionSpec` page size
///   `block x heads x head_size x dtype`), not divided by TP. With a C8
///   checkpoint the layer is `fa_quant_layer`: head size
///   `kv_lora_rank + 2 x qk_rope_head_dim` in int8/fp8, i.e. an int8
///   latent plus a BF16 rope part (vllm_ascend/worker/model_runner_v1.py
///   `get_kv_cache_spec`).
/// - DSA (MLA + indexer): `AscendMLAAttentionSpec` with
///   `sparse_head_dim = (kv_lora_rank, qk_rope_head_dim, index_head_dim)`
///   in BF16; `enable_sparse_li_c8` stores the indexer key in int8/fp8 plus
///   one fp16 (fp32 on 950DT) scale; `enable_sparse_sfa_c8` packs the
///   latent, rope and per-128 fp32 tile scales in int8/fp8
///   (vllm_ascend/core/kv_cache_interface.py `page_size_bytes`).
/// - GQA: K and V of `max(1, kv_heads / tp)` heads (`FullAttentionSpec`).
/// - DeepSeek-V4: an estimate from the config: compressed rows of
///   `head_dim` per `ratio` tokens on every compressed layer, the indexer
///   key (plus its fp16 scale) per 4 tokens on CSA layers, BF16, and the
///   sliding window of every layer per request. vllm-ascend pads these
///   pages (`DSV4_BLOCK_SIZES`); the padding is not reproduced.
pub fn kv_per_token(
    arch: &Architecture,
    format: &WeightFormat,
    serve: &Serve,
    hw: &Hardware,
    tp: u32,
) -> (u64, u64) {
    let a5 = hw.family == HardwareFamily::Ascend950;
    let c8_scale = if a5 { 4 } else { 2 };
    match arch.attention {
        AttentionDims::Mla {
            kv_lora_rank,
            qk_rope_head_dim,
            indexer: None,
            ..
        } => {
            if format.kv_bytes == 1 {
                (kv_lora_rank + 2 * qk_rope_head_dim, 0)
            } else {
                ((kv_lora_rank + qk_rope_head_dim) * format.kv_bytes, 0)
            }
        }
        AttentionDims::Mla {
            kv_lora_rank,
            qk_rope_head_dim,
            indexer: Some((_, index_dim)),
            ..
        } => {
            let sfa_c8 = serve.config_flag("enable_sparse_sfa_c8");
            let li_c8 = serve.config_flag("enable_sparse_li_c8");
            let latent = if sfa_c8 {
                // get_sfa_qsfa_packed_head_dim: int8 latent, BF16 rope as
                // two bytes each, one fp32 scale per 128 latent elements.
                kv_lora_rank + 2 * qk_rope_head_dim + kv_lora_rank / 128 * 4
            } else {
                (kv_lora_rank + qk_rope_head_dim) * 2
            };
            let index = if li_c8 {
                index_dim + c8_scale
            } else {
                index_dim * 2
            };
            (latent + index, 0)
        }
        AttentionDims::Gqa {
            kv_heads, head_dim, ..
        } => {
            let heads = (kv_heads / u64::from(tp.max(1))).max(1);
            (2 * heads * head_dim * format.kv_bytes, 0)
        }
        AttentionDims::V4 {
            head_dim,
            sliding_window,
            index_head_dim,
            compress,
            ..
        } => {
            // The whole model's per-token bytes, returned per layer (the
            // caller multiplies by the layer count).
            let mut per_token_all = 0u64;
            let mut layers = 0u64;
            for &(ratio, n) in compress {
                layers += n;
                per_token_all += (n * head_dim * 2).checked_div(ratio).unwrap_or(0);
                if ratio == 4 {
                    per_token_all += n * (index_head_dim + 2) / 4;
                }
            }
            let per_request = layers * sliding_window * head_dim * 2;
            (
                per_token_all.div_ceil(layers.max(1)),
                per_request / layers.max(1),
            )
        }
    }
}

fn bytes_of(params: u64, bits_per_32: u64) -> u64 {
    // params x bits / 32 / 8, rounded up.
    (params as u128 * bits_per_32 as u128).div_ceil(256) as u64
}

/// EPLB redundant experts: `eplb_config.num_redundant_experts` (v0.23.0+)
/// or the older top-level `num_redundant_experts`.
fn redundant_experts(serve: &Serve) -> u64 {
    serve
        .additional_config
        .get("eplb_config")
        .and_then(|e| e.get("num_redundant_experts"))
        .or_else(|| serve.additional_config.get("num_redundant_experts"))
        .and_then(|v| match v {
            Json::Number(n) => n.as_u64(),
            Json::String(s) => s.parse().ok(),
            _ => None,
        })
        .unwrap_or(0)
}

/// Weights on one rank. Attention, dense MLP, shared experts, embedding and
/// `lm_head` are TP-sharded and replicated over DP; routed experts are split
/// over the EP group (DP x TP with `--enable-expert-parallel`, vLLM's
/// `FusedMoE`: `ep_size = dp_size x tp_size`), else TP-sharded; EPLB adds
/// `num_redundant_experts` physical experts per layer over the same group;
/// the router gate is replicated (`ReplicatedLinear`). MLA's `kv_a_proj` is
/// replicated in vLLM; it is counted as sharded (0.4 % of attention).
///
/// The MTP layer is loaded only with MTP speculation (`mtp`); vLLM's draft
/// model shares the target's embedding and `lm_head`.
pub fn weights(
    arch: &Architecture,
    format: &WeightFormat,
    tp: u32,
    ep: u32,
    redundant: u64,
    mtp: bool,
) -> Weights {
    let p = arch.params();
    let tp = u64::from(tp.max(1));
    let ep = u64::from(ep.max(1));
    let per_expert = arch.expert_params();
    let physical = arch.routed_experts + redundant;
    let routed_all = arch.moe_layers() * physical * per_expert;
    let mtp_routed = arch.mtp_layers * physical * per_expert;
    Weights {
        embedding: bytes_of(p.embedding, format.embedding).div_ceil(tp),
        dense: (bytes_of(p.attention, format.attention)
            + bytes_of(p.dense_mlp + p.shared_experts, format.dense))
        .div_ceil(tp),
        routed: bytes_of(routed_all, format.routed).div_ceil(ep),
        router: bytes_of(p.router, dims::BF16),
        mtp: if mtp {
            bytes_of(p.mtp, format.attention).div_ceil(tp)
                + bytes_of(mtp_routed, format.routed).div_ceil(ep)
        } else {
            0
        },
    }
}

fn env_u64(serve: &Serve, name: &str) -> Option<u64> {
    match serve.env_value(name) {
        Some(EnvValue::Literal(v)) => v.trim().parse().ok(),
        _ => None,
    }
}

pub(crate) fn flag_u64(serve: &Serve, name: &str) -> Option<u64> {
    serve
        .flags
        .iter()
        .find(|(n, _)| n == name)
        .and_then(|(_, v)| match v {
            Some(Json::Number(n)) => n.as_u64(),
            Some(Json::String(s)) => s.trim().parse().ok(),
            _ => None,
        })
}

/// `gpu_memory_utilization` in thousandths (vLLM's default 0.9).
fn utilization_milli(serve: &Serve) -> u64 {
    let Some(text) = &serve.gpu_memory_utilization else {
        return 900;
    };
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let int: u64 = int.parse().unwrap_or(0);
    let mut f = frac.chars().take(3).collect::<String>();
    while f.len() < 3 {
        f.push('0');
    }
    int * 1000 + f.parse::<u64>().unwrap_or(0)
}

/// The reserves of one rank.
pub fn reserves(
    arch: &Architecture,
    input: &RoleInput<'_>,
    ep: u32,
    mbt: u64,
    seqs: u64,
) -> Reserves {
    let serve = input.serve;
    // MoE: the engine's DP ranks each batch `mbt` tokens and every token
    // takes top-k routes; all-to-all spreads the group's `dp x mbt x top-k`
    // routes over its `dp x tp` ranks (TP ranks of one DP rank hold the same
    // tokens), so a rank computes `mbt x top-k / tp` routes, each a BF16
    // hidden copy plus the BF16 gate/up intermediate (2 x moe_intermediate).
    let moe = if arch.routed_experts > 0 {
        mbt * arch.experts_per_token * (arch.hidden + 2 * arch.moe_intermediate) * 2
            / u64::from(input.tp.max(1))
    } else {
        0
    };
    let activations = mbt * ACTIVATION_HIDDEN_BUFFERS * arch.hidden * 2 + moe;
    let sampler = seqs * arch.vocab * 4;
    let buffsize = env_u64(serve, "HCCL_BUFFSIZE").unwrap_or(HCCL_BUFFSIZE_DEFAULT_MB);
    let mut hccl_mb = 0;
    if input.tp > 1 {
        hccl_mb += HCCL_DEFAULT_GROUP_MB;
    }
    if input.dp > 1 {
        hccl_mb += HCCL_DP_GROUP_MB;
    }
    if ep > 1 {
        // The EP group and the MC2 dispatch/combine group.
        hccl_mb += HCCL_DEFAULT_GROUP_MB + buffsize;
    }
    let graph_before_kv = matches!(input.image.tag, "v0.21.0rc1" | "v0.22.1rc1")
        && !matches!(arch.attention, AttentionDims::V4 { .. })
        && !matches!(serve.graph, Some(GraphMode::Eager))
        && env_u64(serve, "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS") != Some(0);
    Reserves {
        activations,
        sampler,
        hccl: hccl_mb * HCCL_BUFFERS_PER_GROUP * MIB,
        graph: if graph_before_kv {
            GRAPH_RESERVE_BYTES
        } else {
            0
        },
        runtime: RUNTIME_OVERHEAD_BYTES,
    }
}

/// Blocks per layer the KV cache holds: `available // page_size //
/// num_layers` (vllm/v1/core/kv_cache_utils.py `get_num_blocks`).
pub const fn kv_blocks(available: u64, page_per_layer: u64, layers: u64) -> u64 {
    if page_per_layer == 0 || layers == 0 {
        0
    } else {
        available / page_per_layer / layers
    }
}

/// KV bytes one request of `len` tokens needs over `layers` layers:
/// `cdiv(len, block_size) x page_size` per layer
/// (`FullAttentionSpec.max_memory_usage_bytes`, which `MLAAttentionSpec`
/// inherits), the sum `_check_enough_kv_cache_memory` compares.
pub const fn request_bytes(len: u64, block_size: u64, page_per_layer: u64, layers: u64) -> u64 {
    len.div_ceil(block_size) * page_per_layer * layers
}

/// `VLLM_ALLOW_LONG_MAX_MODEL_LEN` is set to a true value on the role
/// (vllm/envs.py: `"1"` or `"true"`, case-insensitive).
pub fn allows_long_max_model_len(serve: &Serve) -> bool {
    matches!(serve.env_value("VLLM_ALLOW_LONG_MAX_MODEL_LEN"),
        Some(EnvValue::Literal(v)) if v.trim() == "1" || v.trim().eq_ignore_ascii_case("true"))
}

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
    let mtp = serve
        .speculative
        .as_ref()
        .is_some_and(|s| s.method == "mtp" || s.method == "deepseek_mtp");
    let w = weights(arch, format, input.tp, ep, redundant, mtp);
    let (default_mbt, default_seqs) = default_batching(input.hardware);
    let mbt = serve.max_num_batched_tokens.unwrap_or(default_mbt);
    let seqs = serve.max_num_seqs.unwrap_or(default_seqs);
    let r = reserves(arch, input, ep, mbt, seqs);
    let total = total_bytes(input.hardware);
    let util = utilization_milli(serve);
    let kv_override = flag_u64(serve, "--kv-cache-memory-bytes");
    let non_kv = w.total() + r.total();
    let requested = match kv_override {
        Some(kv) => kv.saturating_add(non_kv),
        None => (total as u128 * util as u128 / 1000) as u64,
    };
    let kv_bytes = match kv_override {
        Some(kv) => kv as i64,
        None => requested as i64 - non_kv as i64,
    };
    let (per_layer_token, per_layer_request) =
        kv_per_token(arch, format, serve, input.hardware, input.tp);
    // The MTP draft layer caches KV like a decoder layer.
    let layers = arch.layers + arch.mtp_layers * u64::from(mtp);
    // A block size of 0 is refused by its own rule; here it reads as 1.
    let block_size = serve.block_size.unwrap_or(DEFAULT_BLOCK_SIZE).max(1);
    let page = per_layer_token.saturating_mul(block_size);
    let kv_per_token_all = per_layer_token.saturating_mul(layers);
    let kv_per_request = per_layer_request.saturating_mul(layers);
    let available = kv_bytes.max(0) as u64;
    let blocks = kv_blocks(available, page, layers);
    let kv_tokens = blocks.saturating_mul(block_size);
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
        local(len)
            .div_ceil(block_size)
            .saturating_mul(page)
            .saturating_mul(layers)
            .saturating_add(kv_per_request)
            <= available
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
    let per_request = |len: u64| local(len).div_ceil(block_size).saturating_mul(block_size);
    let requests_at = |len: u64| {
        let need = per_request(len)
            .saturating_mul(kv_per_token_all)
            .saturating_add(kv_per_request);
        available.checked_div(need).unwrap_or(0)
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
        block_bytes: page.saturating_mul(layers),
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
        };
        if let Some(b) = role_budget(&input) {
            out.push(b);
        }
    }
    out
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

#[cfg(test)]
#[allow(clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::tables::{self, A3};

    fn input<'a>(model: &'a Model, serve: &'a Serve, dp: u32, tp: u32) -> RoleInput<'a> {
        RoleInput {
            model,
            hardware: &A3,
            image: tables::image("v0.23.0").expect("image"),
            role: Role::Mixed,
            serve,
            dp,
            tp,
            pcp: 1,
            engines: 1,
            workload: None,
        }
    }

    fn model(id: &str) -> &'static Model {
        tables::MODELS
            .iter()
            .copied()
            .find(|m| m.id == id)
            .expect("model")
    }

    /// Routed experts are split over all `dp x tp` ranks whether or not
    /// expert parallelism is on (vLLM flattens TP across DP for the MoE
    /// layers): MiniMax-M2.7 w8a8 at DP4 TP4 holds a sixteenth of its
    /// 224.7B int8 expert parameters per rank either way, and only the
    /// dense part is split over TP alone.
    #[test]
    fn experts_over_every_rank_with_or_without_ep() {
        let m = model("minimax_m2_7_w8a8_quarot");
        let serve = Serve {
            gpu_memory_utilization: Some("0.5".into()),
            ..Serve::default()
        };
        let flat = role_budget(&input(m, &serve, 4, 4)).expect("sized");
        assert_eq!(flat.ep, 16);
        assert!(
            flat.weights.routed < 15 * GIB,
            "{}",
            gib(flat.weights.routed)
        );
        assert!(flat.kv_bytes > 0, "{}", flat.summary());
        let ep = Serve {
            expert_parallel: true,
            ..serve.clone()
        };
        let b = role_budget(&input(m, &ep, 4, 4)).expect("sized");
        assert_eq!(b.ep, 16);
        assert_eq!(b.weights.routed, flat.weights.routed);
        // One DP rank alone: the experts go over its TP ranks only.
        let one = role_budget(&input(m, &serve, 1, 4)).expect("sized");
        assert_eq!(one.ep, 4);
        assert!(one.weights.routed > 52 * GIB, "{}", gib(one.weights.routed));
        assert!(one.kv_bytes < 0, "{}", one.summary());
    }

    /// MLA caches one latent head per layer whatever the TP size; GQA
    /// splits KV heads over TP down to one per rank.
    #[test]
    fn kv_per_token_by_attention_kind() {
        let serve = Serve::default();
        let v3 = dims::dims_for("deepseek_v3_1_w8a8_mtp_quarot").expect("dims");
        for tp in [1, 4, 8, 16] {
            assert_eq!(kv_per_token(v3.arch, v3.format, &serve, &A3, tp), (1152, 0));
        }
        let c8 = dims::dims_for("deepseek_v3_1_w8a8c8_mxfp8").expect("dims");
        assert_eq!(kv_per_token(c8.arch, c8.format, &serve, &A3, 4).0, 640);
        let q = dims::dims_for("qwen3_235b_a22b_w8a8").expect("dims");
        let per = |tp| kv_per_token(q.arch, q.format, &serve, &A3, tp).0;
        assert_eq!((per(1), per(2), per(4), per(8)), (2048, 1024, 512, 512));
        let ds = dims::dims_for("deepseek_v3_2_w8a8").expect("dims");
        assert_eq!(kv_per_token(ds.arch, ds.format, &serve, &A3, 8).0, 1408);
        let mut li = Serve::default();
        li.additional_config
            .insert("enable_sparse_li_c8".into(), Json::Bool(true));
        assert_eq!(kv_per_token(ds.arch, ds.format, &li, &A3, 8).0, 1152 + 130);
        li.additional_config
            .insert("enable_sparse_sfa_c8".into(), Json::Bool(true));
        assert_eq!(kv_per_token(ds.arch, ds.format, &li, &A3, 8).0, 656 + 130);
    }

    /// EPLB redundant experts add physical experts over the EP group.
    #[test]
    fn redundant_experts_add_weight() {
        let m = model("deepseek_v3_1_w8a8_mtp_quarot");
        let plain = Serve {
            expert_parallel: true,
            ..Serve::default()
        };
        let mut eplb = plain.clone();
        eplb.additional_config.insert(
            "eplb_config".into(),
            serde_json::json!({ "num_redundant_experts": 16 }),
        );
        let a = role_budget(&input(m, &plain, 4, 4)).expect("sized");
        let b = role_budget(&input(m, &eplb, 4, 4)).expect("sized");
        assert_eq!(b.redundant_experts, 16);
        // 16 more experts of 44.04M int8 parameters over 58 layers, over 16 ranks.
        let per_expert = dims::DEEPSEEK_V3.expert_params();
        assert_eq!(
            b.weights.routed - a.weights.routed,
            (58 * 272 * per_expert).div_ceil(16) - (58 * 256 * per_expert).div_ceil(16)
        );
    }

    /// The largest `max_model_len` that fits is the last one whose blocks
    /// fit, and the block count follows vLLM's integer division.
    #[test]
    fn block_math() {
        let m = model("deepseek_v3_1_w8a8_mtp_quarot");
        let serve = Serve {
            expert_parallel: true,
            max_model_len: Some(16384),
            ..Serve::default()
        };
        let b = role_budget(&input(m, &serve, 4, 4)).expect("sized");
        let page = 1152 * 128;
        assert_eq!(b.kv_blocks, b.kv_bytes as u64 / page / 61);
        assert_eq!(b.kv_tokens, b.kv_blocks * 128);
        let fits = |len: u64| len.div_ceil(128) * page * 61 <= b.kv_bytes as u64;
        assert!(fits(b.max_len_fits));
        assert!(b.max_len_fits == 163840 || !fits(b.max_len_fits + 1));
        assert_eq!(
            b.requests_at_max_len,
            b.kv_bytes as u64 / (16384 * 1152 * 61)
        );
    }

    /// Decode context parallelism: a rank keeps cdiv(len, dcp) tokens of a
    /// request, so at DCP 4 four times the requests of a length fit and a
    /// request may be four times longer (up to the model's context).
    #[test]
    fn decode_context_parallel_shards_a_request() {
        let m = model("deepseek_v3_1_w8a8_mtp_quarot");
        let serve = Serve {
            expert_parallel: true,
            max_model_len: Some(16384),
            ..Serve::default()
        };
        let one = role_budget(&input(m, &serve, 4, 4)).expect("sized");
        let mut sharded = serve.clone();
        sharded
            .flags
            .push(("--decode-context-parallel-size".into(), Some(Json::from(4))));
        let four = role_budget(&input(m, &sharded, 4, 4)).expect("sized");
        assert_eq!(four.kv_bytes, one.kv_bytes);
        let page = 1152 * 128 * 61;
        assert_eq!(
            four.requests_at_max_len,
            four.kv_bytes as u64 / (4096 / 128 * page)
        );
        assert!(four.requests_at_max_len >= 4 * one.requests_at_max_len);
        assert!(
            four.max_len_fits == 163840 || four.max_len_fits >= 4 * one.max_len_fits,
            "{} vs {}",
            four.max_len_fits,
            one.max_len_fits
        );
    }

    fn on<'a>(
        hw: &'static Hardware,
        model: &'a Model,
        serve: &'a Serve,
        dp: u32,
        tp: u32,
    ) -> RoleBudget {
        let input = RoleInput {
            hardware: hw,
            ..input(model, serve, dp, tp)
        };
        role_budget(&input).expect("sized")
    }

    fn ep(len: u64, util: &str, mtp: bool) -> Serve {
        Serve {
            expert_parallel: true,
            max_model_len: Some(len),
            gpu_memory_utilization: Some(util.into()),
            speculative: mtp.then(|| crate::layout::Speculative {
                method: "mtp".into(),
                tokens: 1,
                enforce_eager: None,
            }),
            ..Serve::default()
        }
    }

    /// The budget against the sizing statements of the vllm-ascend
    /// tutorials (docs/source/tutorials/models/*.md at v0.23.0; the figures
    /// are in BENCHMARKS.md, "Capacity"). Each assertion is one statement.
    #[test]
    fn published_sizing_statements() {
        use crate::tables::{A2, A950DT};
        let show = |what: &str, b: &RoleBudget| {
            eprintln!(
                "{what}: weights {} GiB, KV {} GiB, {} tokens, fits {}",
                gib(b.weights.total()),
                gib_signed(b.kv_bytes),
                b.kv_tokens,
                b.max_len_fits
            )
        };
        let v31 = model("deepseek_v3_1_w8a8_mtp_quarot");
        // DeepSeek-V3.1.md: "`DeepSeek-V3.1-w8a8-mtp-QuaRot`: require at
        // least 2 Atlas 800 A2 (64GB x 8)".
        let s = ep(16384, "0.92", true);
        let one_a2 = on(&A2, v31, &s, 1, 8);
        show("V3.1 w8a8 1xA2 dp1tp8", &one_a2);
        assert!(one_a2.kv_bytes < 0);
        let two_a2 = on(&A2, v31, &s, 4, 4);
        show("V3.1 w8a8 2xA2 dp4tp4", &two_a2);
        assert!(two_a2.max_len_fits >= 16384);
        // Table 2 (A3, one machine): TP4 DP4 up to 39K, TP8 DP2 up to 132K.
        let s = ep(39936, "0.92", true);
        let b = on(&A3, v31, &s, 4, 4);
        show("V3.1 w8a8 A3 dp4tp4", &b);
        assert!(b.max_len_fits >= 39936);
        let s = ep(135168, "0.92", true);
        let b = on(&A3, v31, &s, 2, 8);
        show("V3.1 w8a8 A3 dp2tp8", &b);
        assert!(b.max_len_fits >= 135168);
        // "we recommend to deploy 2P1D (4 nodes) rather than 1P1D (2 nodes),
        // because there is no enough NPU memory to serve high concurrency in
        // 1P1D": one decode node holds far fewer tokens than two.
        let s = ep(65536, "0.92", true);
        let one_node = on(&A3, v31, &s, 16, 1);
        show("V3.1 w8a8 A3 decode dp16tp1", &one_node);
        assert!(
            one_node.kv_bytes < 0,
            "dp16tp1 on one node does not even load"
        );
        let four = on(&A3, v31, &s, 4, 4);
        let two_nodes = on(&A3, v31, &s, 32, 1);
        show("V3.1 w8a8 A3 decode dp4tp4", &four);
        show("V3.1 w8a8 A3 decode dp32tp1", &two_nodes);
        assert!(32 * two_nodes.kv_tokens > 8 * 4 * four.kv_tokens);
        // 950DT: table 4, one machine TP8 with 132K on the w4a4 MLP / w8a8c8
        // attention weights.
        let mx = model("deepseek_v3_1_w4a4c8_mxfp4");
        let s = ep(135168, "0.9", true);
        let b = on(&A950DT, mx, &s, 1, 8);
        show("V3.1 mxfp4 950DT dp1tp8", &b);
        assert!(b.max_len_fits >= 135168);
        // DeepSeek-V4-Flash.md: w8a8-mtp "requires ... 1 Atlas 800 A2 (64GB
        // x 8) node", max-model-len up to 1048576.
        let v4 = model("deepseek_v4_flash_w8a8_mtp");
        let s = ep(1_048_576, "0.9", true);
        let b = on(&A2, v4, &s, 1, 8);
        show("V4-Flash w8a8 1xA2 dp1tp8", &b);
        assert!(b.max_len_fits >= 1_048_576);
        // Kimi-K2.5.md: w4a8 "requires 1 Atlas 800 A3 (64G x 16) node or 2
        // Atlas 800 A2 (64G x 8) nodes".
        let kimi = model("kimi_k2_5_w4a8");
        let s = ep(32768, "0.9", false);
        let a3 = on(&A3, kimi, &s, 1, 16);
        let a2 = on(&A2, kimi, &s, 1, 8);
        show("Kimi-K2.5 w4a8 1xA3 dp1tp16", &a3);
        show("Kimi-K2.5 w4a8 1xA2 dp1tp8", &a2);
        assert!(a3.max_len_fits >= 32768);
        assert!(a2.kv_bytes < 0);
        // MiniMax-M2.md: M2.7 w8a8 "1x Atlas 800 A3 (64GB x 16) or 1x Atlas
        // 800I A2 (64GB x 8)", max-model-len 40690 at 0.85.
        let mm = model("minimax_m2_7_w8a8_quarot");
        let s = ep(40690, "0.85", false);
        let b = on(&A2, mm, &s, 1, 8);
        show("MiniMax-M2.7 w8a8 1xA2 dp1tp8", &b);
        assert!(b.max_len_fits >= 40690);
        // Qwen3-235B-A22B.md: BF16 on "1 Atlas 800I A2 (64GB x 8)". The
        // budget disagrees at the e2e's 0.9: 470 GB of BF16 weights leave
        // no KV room on 8 x 60.96 GiB (recorded in BENCHMARKS.md).
        let q = model("qwen3_235b_a22b");
        let s = ep(40960, "0.9", false);
        let b = on(&A2, q, &s, 1, 8);
        show("Qwen3-235B BF16 1xA2 dp1tp8", &b);
        assert!(b.kv_bytes < 0);
    }
}
