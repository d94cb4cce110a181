//! Weights, KV bytes per token and reserves of one rank: the engine's start-up arithmetic.

use super::*;

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
        // A hybrid's full-attention layers; its plan ([`HybridKv`]) is
        // what the budget uses.
        AttentionDims::Gqa {
            kv_heads, head_dim, ..
        }
        | AttentionDims::Hybrid {
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
pub(super) fn redundant_experts(serve: &Serve) -> u64 {
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
pub(super) fn utilization_milli(serve: &Serve) -> u64 {
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
    // Saturating: `mbt`, `seqs` and `HCCL_BUFFSIZE` are the layout's, any
    // size (the rules refuse what does not fit; the budget must not panic).
    let moe = if arch.routed_experts > 0 {
        mbt.saturating_mul(arch.experts_per_token)
            .saturating_mul((arch.hidden + 2 * arch.moe_intermediate) * 2)
            / u64::from(input.tp.max(1))
    } else {
        0
    };
    let activations = mbt
        .saturating_mul(ACTIVATION_HIDDEN_BUFFERS * arch.hidden * 2)
        .saturating_add(moe);
    let sampler = seqs.saturating_mul(arch.vocab * 4);
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
        hccl_mb = hccl_mb
            .saturating_add(HCCL_DEFAULT_GROUP_MB)
            .saturating_add(buffsize);
    }
    let graph_before_kv = matches!(input.image.tag, "v0.21.0rc1" | "v0.22.1rc1")
        && !matches!(arch.attention, AttentionDims::V4 { .. })
        && !matches!(serve.graph, Some(GraphMode::Eager))
        && env_u64(serve, "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS") != Some(0);
    Reserves {
        activations,
        sampler,
        hccl: hccl_mb.saturating_mul(HCCL_BUFFERS_PER_GROUP * MIB),
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
        Some(EnvValue::Literal(v)) if long_max_model_len_allowed(v))
}

/// Whether a value of `VLLM_ALLOW_LONG_MAX_MODEL_LEN` is true as vllm/envs.py
/// reads it (`.strip().lower() in ("1", "true")`); the rehearsal's stand-in
/// vllm reads its environment with this.
pub fn long_max_model_len_allowed(value: &str) -> bool {
    let v = value.trim();
    v == "1" || v.eq_ignore_ascii_case("true")
}
