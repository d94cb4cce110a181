//! Model dimensions: what the capacity budget ([`crate::capacity`]) needs to
//! know about a model's size, one `const` per architecture family, and the
//! bytes per weight class of each quantized build.
//!
//! Every number is a field of the model's Hugging Face `config.json`. Where
//! a primary source holds it the comment names it: the defaults of
//! `DeepseekV3Config` in the `transformers` sdist
//! (`src/transformers/models/deepseek_v3/configuration_deepseek_v3.py`, 4.57.1,
//! which are DeepSeek-V3's own values), vLLM's `DeepseekV4Config`
//! (`vllm/transformers_utils/configs/deepseek_v4.py`, vllm 0.23.0 sdist). The
//! rest are third-party copies of the `config.json` ("cfg-copy"), each
//! cross-checked against a second copy (`shared/domain/model-facts.md` lists
//! them). Parameter counts are never typed: [`Architecture::params`] computes
//! them from these dimensions the way the model code lays out its weights
//! (vllm/model_executor/models/deepseek_v2.py, qwen3_moe.py), and a test
//! checks the totals against the published sizes.
//!
//! Models are looked up by model-table id ([`dims_for`]), so this module adds
//! nothing to the model table (`tables/`); a test requires every model-table entry to be
//! covered or listed in [`UNSIZED`] with the reason.

use serde::Serialize;

/// How one layer attends and what it caches, with the dimensions the KV
/// cache spec reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum AttentionDims {
    /// Multi-head latent attention. vLLM caches one latent "head" of
    /// `kv_lora_rank + qk_rope_head_dim` per token and layer
    /// (`MLAAttention.get_kv_cache_spec`, `num_kv_heads = 1`), so the cache
    /// is not split by TP.
    Mla {
        /// `num_attention_heads`.
        heads: u64,
        /// `q_lora_rank` (0: no low-rank query).
        q_lora_rank: u64,
        /// `kv_lora_rank`.
        kv_lora_rank: u64,
        /// `qk_nope_head_dim`.
        qk_nope_head_dim: u64,
        /// `qk_rope_head_dim`.
        qk_rope_head_dim: u64,
        /// `v_head_dim`.
        v_head_dim: u64,
        /// DSA lightning indexer `(index_n_heads, index_head_dim)`, cached
        /// next to the latent on every layer (vllm-ascend
        /// `AscendMLAAttentionSpec`, `sparse_head_dim`); `None` for plain MLA.
        indexer: Option<(u64, u64)>,
    },
    /// Grouped-query attention: `2 x num_key_value_heads x head_dim` per token
    /// and layer, KV heads split over TP down to one per rank
    /// (vllm/model_executor/models/qwen3_moe.py `Qwen3MoeAttention`:
    /// `num_kv_heads = max(1, total_num_kv_heads // tp_size)`).
    Gqa {
        /// `num_attention_heads`.
        heads: u64,
        /// `num_key_value_heads`.
        kv_heads: u64,
        /// `head_dim`.
        head_dim: u64,
    },
    /// DeepSeek-V4: one 512-dim KV head, a sliding window on every layer and
    /// compressed caches (`compress_ratios`) on most; CSA layers (ratio 4)
    /// also keep an indexer cache.
    V4 {
        /// `num_attention_heads`.
        heads: u64,
        /// `head_dim` (the single KV head).
        head_dim: u64,
        /// `q_lora_rank`.
        q_lora_rank: u64,
        /// `o_lora_rank`.
        o_lora_rank: u64,
        /// `o_groups`.
        o_groups: u64,
        /// `sliding_window`.
        sliding_window: u64,
        /// `index_head_dim`.
        index_head_dim: u64,
        /// Layers per compress ratio, `(ratio, layers)`; ratio 0 is
        /// sliding-window only.
        compress: &'static [(u64, u64)],
    },
}

/// One architecture family: the dimensions every build shares.
#[derive(Debug, PartialEq, Eq, Serialize)]
pub struct Architecture {
    /// Family name as published.
    pub name: &'static str,
    /// Where the dimensions come from.
    pub source: &'static str,
    /// `hidden_size`.
    pub hidden: u64,
    /// `vocab_size`.
    pub vocab: u64,
    /// `num_hidden_layers`.
    pub layers: u64,
    /// Leading dense layers (`first_k_dense_replace`; 0 when every layer is MoE).
    pub dense_layers: u64,
    /// `intermediate_size` of the dense layers' MLP.
    pub dense_intermediate: u64,
    /// `n_routed_experts` / `num_experts`.
    pub routed_experts: u64,
    /// `n_shared_experts` (0: none).
    pub shared_experts: u64,
    /// `num_experts_per_tok`.
    pub experts_per_token: u64,
    /// `moe_intermediate_size`.
    pub moe_intermediate: u64,
    /// `num_nextn_predict_layers` (the MTP layer the weights ship).
    pub mtp_layers: u64,
    /// The longest context vLLM derives from the config (`max_position_embeddings`,
    /// times the YaRN factor over `original_max_position_embeddings` where the
    /// config scales RoPE: vllm/config/model.py `_get_and_verify_max_len`).
    pub max_model_len: u64,
    /// Attention geometry.
    pub attention: AttentionDims,
}

/// Parameters by weight class (whole model, before any parallelism).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Params {
    /// Input embedding plus `lm_head` (vocab-parallel in vLLM).
    pub embedding: u64,
    /// Attention projections of every decoder layer.
    pub attention: u64,
    /// MLP of the dense layers.
    pub dense_mlp: u64,
    /// Shared experts.
    pub shared_experts: u64,
    /// Routed experts.
    pub routed_experts: u64,
    /// Router gates (replicated on every rank).
    pub router: u64,
    /// The MTP layer(s): `eh_proj`, attention, shared expert and router
    /// (its routed experts are in `mtp_routed_experts`); embedding and
    /// `lm_head` are shared with the target model (vLLM's eagle proposer
    /// "Sharing target model embedding weights with the draft model").
    pub mtp: u64,
    /// Routed experts of the MTP layer(s).
    pub mtp_routed_experts: u64,
}

impl Params {
    /// Every parameter.
    pub const fn total(&self) -> u64 {
        self.embedding
            + self.attention
            + self.dense_mlp
            + self.shared_experts
            + self.routed_experts
            + self.router
            + self.mtp
            + self.mtp_routed_experts
    }
}

impl AttentionDims {
    /// Parameters of one layer's attention projections (norms included).
    pub const fn params_per_layer(&self, hidden: u64) -> u64 {
        match *self {
            AttentionDims::Mla {
                heads,
                q_lora_rank,
                kv_lora_rank,
                qk_nope_head_dim,
                qk_rope_head_dim,
                v_head_dim,
                indexer,
            } => {
                let qk = qk_nope_head_dim + qk_rope_head_dim;
                // q_a_proj + q_a_layernorm + q_b_proj, or q_proj.
                let q = if q_lora_rank > 0 {
                    hidden * q_lora_rank + q_lora_rank + q_lora_rank * heads * qk
                } else {
                    hidden * heads * qk
                };
                // kv_a_proj_with_mqa + kv_a_layernorm + kv_b_proj + o_proj.
                let kv = hidden * (kv_lora_rank + qk_rope_head_dim)
                    + kv_lora_rank
                    + kv_lora_rank * heads * (qk_nope_head_dim + v_head_dim);
                let o = heads * v_head_dim * hidden;
                // Indexer: wq_b, wk, k_norm, weights_proj (deepseek_v2.py
                // `Indexer`).
                let ix = match indexer {
                    Some((ih, id)) => q_lora_rank * ih * id + hidden * id + 2 * id + hidden * ih,
                    None => 0,
                };
                q + kv + o + ix + 2 * hidden
            }
            AttentionDims::Gqa {
                heads,
                kv_heads,
                head_dim,
            } => {
                // q, k, v, o projections, q/k norms, layer norms.
                hidden * heads * head_dim
                    + 2 * hidden * kv_heads * head_dim
                    + heads * head_dim * hidden
                    + 2 * head_dim
                    + 2 * hidden
            }
            AttentionDims::V4 {
                heads,
                head_dim,
                q_lora_rank,
                o_lora_rank,
                o_groups,
                ..
            } => {
                // wq_a, wq_b, wkv, grouped wo_a, wo_b. The compressor and
                // indexer projections are left out (under 2 % of the layer).
                hidden * q_lora_rank
                    + q_lora_rank * heads * head_dim
                    + hidden * head_dim
                    + heads * head_dim * o_lora_rank
                    + o_groups * o_lora_rank * hidden
                    + 2 * hidden
            }
        }
    }
}

impl Architecture {
    /// Layers with routed experts.
    pub const fn moe_layers(&self) -> u64 {
        self.layers - self.dense_layers
    }

    /// Parameters of one expert (gate, up and down projections).
    pub const fn expert_params(&self) -> u64 {
        3 * self.hidden * self.moe_intermediate
    }

    /// Parameters by class, computed from the dimensions.
    pub const fn params(&self) -> Params {
        let attn = self.attention.params_per_layer(self.hidden);
        let expert = self.expert_params();
        let router = self.hidden * self.routed_experts + self.routed_experts;
        let shared = self.shared_experts * expert;
        // MTP layer: enorm, hnorm, eh_proj, one MoE decoder layer
        // (deepseek_mtp.py `DeepSeekMultiTokenPredictorLayer`).
        let mtp_layer = 2 * self.hidden + 2 * self.hidden * self.hidden + attn + shared + router;
        Params {
            embedding: 2 * self.vocab * self.hidden,
            attention: self.layers * attn,
            dense_mlp: self.dense_layers * 3 * self.hidden * self.dense_intermediate,
            shared_experts: self.moe_layers() * shared,
            routed_experts: self.moe_layers() * self.routed_experts * expert,
            router: self.moe_layers() * router,
            mtp: self.mtp_layers * mtp_layer,
            mtp_routed_experts: self.mtp_layers * self.routed_experts * expert,
        }
    }
}

/// DeepSeek-V3 / V3.1 / R1. Dimensions: `DeepseekV3Config` defaults
/// (transformers 4.57.1 sdist, configuration_deepseek_v3.py), which are V3's;
/// `max_position_embeddings` 163840 (= YaRN factor 40 x original 4096) and
/// `num_nextn_predict_layers` 1 are cfg-copy (two copies of the R1/V3
/// `config.json` agree).
pub const DEEPSEEK_V3: Architecture = Architecture {
    name: "DeepSeek-V3",
    source: "transformers configuration_deepseek_v3.py defaults; cfg-copy for max_position_embeddings and num_nextn_predict_layers",
    hidden: 7168,
    vocab: 129280,
    layers: 61,
    dense_layers: 3,
    dense_intermediate: 18432,
    routed_experts: 256,
    shared_experts: 1,
    experts_per_token: 8,
    moe_intermediate: 2048,
    mtp_layers: 1,
    max_model_len: 163840,
    attention: AttentionDims::Mla {
        heads: 128,
        q_lora_rank: 1536,
        kv_lora_rank: 512,
        qk_nope_head_dim: 128,
        qk_rope_head_dim: 64,
        v_head_dim: 128,
        indexer: None,
    },
};

/// DeepSeek-V3.2: the V3 shape plus the DSA indexer (`index_n_heads` 64,
/// `index_head_dim` 128; cfg-copy, two copies agree).
pub const DEEPSEEK_V3_2: Architecture = Architecture {
    name: "DeepSeek-V3.2",
    source: "DeepSeek-V3 dimensions; cfg-copy for the indexer",
    attention: AttentionDims::Mla {
        heads: 128,
        q_lora_rank: 1536,
        kv_lora_rank: 512,
        qk_nope_head_dim: 128,
        qk_rope_head_dim: 64,
        v_head_dim: 128,
        indexer: Some((64, 128)),
    },
    ..DEEPSEEK_V3
};

/// DeepSeek-V4-Flash (cfg-copy of `deepseek-ai/DeepSeek-V4-Flash`
/// `config.json`, two copies agree; `max_position_embeddings` 1048576 is also
/// vLLM's `DeepseekV4Config` default). 43 MoE layers; `compress_ratios`
/// counts {4: 21, 128: 20, 0: 2} over the 43 layers (the 44th entry is the
/// MTP layer).
pub const DEEPSEEK_V4_FLASH: Architecture = Architecture {
    name: "DeepSeek-V4-Flash",
    source: "cfg-copy of config.json; vllm/transformers_utils/configs/deepseek_v4.py for max_position_embeddings",
    hidden: 4096,
    vocab: 129280,
    layers: 43,
    dense_layers: 0,
    dense_intermediate: 0,
    routed_experts: 256,
    shared_experts: 1,
    experts_per_token: 6,
    moe_intermediate: 2048,
    mtp_layers: 1,
    max_model_len: 1048576,
    attention: AttentionDims::V4 {
        heads: 64,
        head_dim: 512,
        q_lora_rank: 1024,
        o_lora_rank: 1024,
        o_groups: 8,
        sliding_window: 128,
        index_head_dim: 128,
        compress: &[(4, 21), (128, 20), (0, 2)],
    },
};

/// Kimi-K2.x text decoder (the `text_config` of `KimiK25ForConditionalGeneration`,
/// DeepSeek-V3 shape; cfg-copy, two copies agree; `vocab_size` 163840 and
/// `intermediate_size` 18432 from a report of `moonshotai/Kimi-K2-Instruct-0905`'s
/// config, the vocabulary also in a second copy): 64 heads, 384 experts,
/// one dense layer, no MTP layer, `max_position_embeddings` 262144. The
/// vision tower is not counted (its size is unknown).
pub const KIMI_K2: Architecture = Architecture {
    name: "Kimi-K2",
    source: "cfg-copy of the K2.7-Code config.json text_config",
    hidden: 7168,
    vocab: 163840,
    layers: 61,
    dense_layers: 1,
    dense_intermediate: 18432,
    routed_experts: 384,
    shared_experts: 1,
    experts_per_token: 8,
    moe_intermediate: 2048,
    mtp_layers: 0,
    max_model_len: 262144,
    attention: AttentionDims::Mla {
        heads: 64,
        q_lora_rank: 1536,
        kv_lora_rank: 512,
        qk_nope_head_dim: 128,
        qk_rope_head_dim: 64,
        v_head_dim: 128,
        indexer: None,
    },
};

/// Qwen3-235B-A22B (`qwen3_moe`; cfg-copy of `Qwen/Qwen3-235B-A22B`
/// `config.json`, two copies agree; the `Qwen3MoeConfig` class is in the
/// transformers sdist): 94 MoE layers, GQA 64/4 heads of 128, 128 experts, no
/// shared expert, no MTP layer.
pub const QWEN3_235B: Architecture = Architecture {
    name: "Qwen3-235B-A22B",
    source: "cfg-copy of config.json (qwen3_moe)",
    hidden: 4096,
    vocab: 151936,
    layers: 94,
    dense_layers: 0,
    dense_intermediate: 0,
    routed_experts: 128,
    shared_experts: 0,
    experts_per_token: 8,
    moe_intermediate: 1536,
    mtp_layers: 0,
    max_model_len: 40960,
    attention: AttentionDims::Gqa {
        heads: 64,
        kv_heads: 4,
        head_dim: 128,
    },
};

/// MiniMax-M2.x (`MiniMaxM2ForCausalLM`; cfg-copy of `MiniMaxAI/MiniMax-M2.7`
/// `config.json`, M2.1 has the same dimensions): 62 MoE layers, GQA 48/8
/// heads of 128, 256 experts (`intermediate_size` 1536 per expert), no shared
/// expert, no MTP layer.
pub const MINIMAX_M2: Architecture = Architecture {
    name: "MiniMax-M2",
    source: "cfg-copy of config.json (minimax_m2)",
    hidden: 3072,
    vocab: 200064,
    layers: 62,
    dense_layers: 0,
    dense_intermediate: 0,
    routed_experts: 256,
    shared_experts: 0,
    experts_per_token: 8,
    moe_intermediate: 1536,
    mtp_layers: 0,
    max_model_len: 204800,
    attention: AttentionDims::Gqa {
        heads: 48,
        kv_heads: 8,
        head_dim: 128,
    },
};

/// Bits per 32 parameters (fractional bytes stay integers: MXFP4 is
/// 32 x 4 bits + one 8-bit shared scale = 136 bits per 32, OCP Microscaling
/// Formats v1.0 §5).
pub type BitsPer32 = u64;

/// BF16.
pub const BF16: BitsPer32 = 32 * 16;
/// int8 weights (per-channel scales not counted: under 0.1 % of a 7168-wide row).
pub const INT8: BitsPer32 = 32 * 8;
/// int4 weights (per-group scales not counted).
pub const INT4: BitsPer32 = 32 * 4;
/// MXFP8: 8-bit elements plus one 8-bit scale per 32.
pub const MXFP8: BitsPer32 = 32 * 8 + 8;
/// MXFP4: 4-bit elements plus one 8-bit scale per 32.
pub const MXFP4: BitsPer32 = 32 * 4 + 8;

/// How a build stores each weight class and its KV cache.
#[derive(Debug, PartialEq, Eq, Serialize)]
pub struct WeightFormat {
    /// Name (`w8a8`).
    pub name: &'static str,
    /// Embedding and `lm_head` (msModelSlim keeps them in BF16).
    pub embedding: BitsPer32,
    /// Attention projections.
    pub attention: BitsPer32,
    /// Dense MLP and shared experts.
    pub dense: BitsPer32,
    /// Routed experts.
    pub routed: BitsPer32,
    /// Bytes per cached KV element: 2 (BF16) or 1 ("C8": int8 on A2/A3,
    /// fp8 on 950DT, vllm_ascend/core/kv_cache_interface.py
    /// `_get_c8_k_cache_dtype`).
    pub kv_bytes: u64,
}

/// Unquantized BF16 checkpoint.
pub const FORMAT_BF16: WeightFormat = WeightFormat {
    name: "bf16",
    embedding: BF16,
    attention: BF16,
    dense: BF16,
    routed: BF16,
    kv_bytes: 2,
};
/// Ascend W8A8: int8 linear layers, BF16 embedding/`lm_head`/norms/router.
pub const FORMAT_W8A8: WeightFormat = WeightFormat {
    name: "w8a8",
    embedding: BF16,
    attention: INT8,
    dense: INT8,
    routed: INT8,
    kv_bytes: 2,
};
/// W8A8 with an int8 KV cache (C8).
pub const FORMAT_W8A8C8: WeightFormat = WeightFormat {
    name: "w8a8c8",
    kv_bytes: 1,
    ..FORMAT_W8A8
};
/// Ascend W4A8: int4 routed experts, the rest as W8A8.
pub const FORMAT_W4A8: WeightFormat = WeightFormat {
    name: "w4a8",
    routed: INT4,
    ..FORMAT_W8A8
};
/// W4A8 with C8 KV.
pub const FORMAT_W4A8C8: WeightFormat = WeightFormat {
    name: "w4a8c8",
    kv_bytes: 1,
    ..FORMAT_W4A8
};
/// MXFP4 MLP and MXFP8 attention with C8 KV (`dsk-v3.1-w4a4_mlp-w8a8c8_attn`,
/// DeepSeek-V3.1.md 950DT section).
pub const FORMAT_W4A4C8_MXFP4: WeightFormat = WeightFormat {
    name: "w4a4c8-mxfp4",
    embedding: BF16,
    attention: MXFP8,
    dense: MXFP4,
    routed: MXFP4,
    kv_bytes: 1,
};
/// MXFP8 linear layers with C8 KV.
pub const FORMAT_W8A8C8_MXFP8: WeightFormat = WeightFormat {
    name: "w8a8c8-mxfp8",
    embedding: BF16,
    attention: MXFP8,
    dense: MXFP8,
    routed: MXFP8,
    kv_bytes: 1,
};
/// MXFP8 linear layers, BF16 KV.
pub const FORMAT_W8A8_MXFP8: WeightFormat = WeightFormat {
    name: "w8a8-mxfp8",
    kv_bytes: 2,
    ..FORMAT_W8A8C8_MXFP8
};

/// A model-table entry's dimensions and weight format.
#[derive(Debug, Serialize)]
pub struct ModelDims {
    /// Model-table id.
    pub model: &'static str,
    /// Architecture family.
    pub arch: &'static Architecture,
    /// Weight format of the build.
    pub format: &'static WeightFormat,
}

macro_rules! dims {
    ($($id:literal => $arch:ident, $fmt:ident;)*) => {
        /// Every sized model-table entry.
        pub static MODEL_DIMS: &[ModelDims] = &[
            $(ModelDims { model: $id, arch: &$arch, format: &$fmt },)*
        ];
    };
}

dims! {
    "deepseek_v4_flash_w8a8_mtp" => DEEPSEEK_V4_FLASH, FORMAT_W8A8;
    "deepseek_v3_1_w8a8_mtp_quarot" => DEEPSEEK_V3, FORMAT_W8A8;
    "deepseek_v3_1" => DEEPSEEK_V3, FORMAT_BF16;
    "deepseek_v3_1_terminus_w4a8_mtp_quarot" => DEEPSEEK_V3, FORMAT_W4A8;
    "deepseek_v3_1_w4a4c8_mxfp4" => DEEPSEEK_V3, FORMAT_W4A4C8_MXFP4;
    "deepseek_v3_1_w8a8c8_mxfp8" => DEEPSEEK_V3, FORMAT_W8A8C8_MXFP8;
    "deepseek_v3_1_terminus_w8a8_mtp_quarot" => DEEPSEEK_V3, FORMAT_W8A8;
    "deepseek_v3_w8a8" => DEEPSEEK_V3, FORMAT_W8A8;
    "deepseek_r1_w8a8" => DEEPSEEK_V3, FORMAT_W8A8;
    "deepseek_r1_0528_w8a8" => DEEPSEEK_V3, FORMAT_W8A8;
    "deepseek_r1_0528_w8a8_mtp_quarot" => DEEPSEEK_V3, FORMAT_W8A8;
    "deepseek_v3_2_w8a8" => DEEPSEEK_V3_2, FORMAT_W8A8;
    "deepseek_v3_2_exp_w8a8" => DEEPSEEK_V3_2, FORMAT_W8A8;
    "kimi_k2_5_w4a8" => KIMI_K2, FORMAT_W4A8;
    "kimi_k2_6_w4a8" => KIMI_K2, FORMAT_W4A8;
    "kimi_k2_7_code_w4a8" => KIMI_K2, FORMAT_W4A8;
    "qwen3_235b_a22b" => QWEN3_235B, FORMAT_BF16;
    "qwen3_235b_a22b_w8a8" => QWEN3_235B, FORMAT_W8A8;
    "qwen3_235b_a22b_w8a8_quarot" => QWEN3_235B, FORMAT_W8A8;
    "minimax_m2_7_w8a8_quarot" => MINIMAX_M2, FORMAT_W8A8;
    "minimax_m2_7_w8a8c8_quarot" => MINIMAX_M2, FORMAT_W8A8C8;
    "minimax_m2_5_w8a8_quarot" => MINIMAX_M2, FORMAT_W8A8;
}

/// Model-table entries without dimensions, and why. The budget reports
/// them as unsized and no capacity rule runs for them.
pub static UNSIZED: &[(&str, &str)] = &[
    (
        "deepseek_v4_1_flash_w8a8",
        "DeepSeek-V4.1's CSA2 cache (FP4 main KV, Engram tables, SWA replay) has no copy of its config or cache specs outside vllm-ascend's code",
    ),
    (
        "deepseek_v4_pro_w4a8_mtp",
        "the per-layer `compress_ratios` of DeepSeek-V4-Pro are not in any copy found",
    ),
    (
        "glm_5",
        "GLM-5's dense `intermediate_size` is not in any copy found",
    ),
    ("glm_5_w4a8", "as `glm_5`"),
    ("glm_5_w8a8", "as `glm_5`"),
    ("glm_5_1", "as `glm_5`"),
    ("glm_5_1_w4a8", "as `glm_5`"),
    ("glm_5_1_w8a8", "as `glm_5`"),
    ("glm_5_1_w8a8c8", "as `glm_5`"),
    (
        "glm_5_2",
        "GLM-5.2's IndexShare layout (which layers keep an indexer cache) is not sourced",
    ),
    ("glm_5_2_w8a8", "as `glm_5_2`"),
    ("glm_5_2_w8a8c8", "as `glm_5_2`"),
    ("glm_5_2_w4a8c8", "as `glm_5_2`"),
    (
        "qwen3_235b_a22b_w8a8_mxfp0",
        "the `mxfp0` weight format is not documented",
    ),
    (
        "qwen3_vl_235b_a22b_instruct",
        "Qwen3-VL-235B's decoder and vision-tower dimensions are not sourced",
    ),
    (
        "qwen3_vl_235b_a22b_instruct_w8a8_quarot",
        "as `qwen3_vl_235b_a22b_instruct`",
    ),
    (
        "qwen3_vl_235b_a22b_instruct_w8a8_mxfp8",
        "as `qwen3_vl_235b_a22b_instruct`",
    ),
    (
        "glm_5_3_w8a8c8",
        "GLM-5.3's layer and indexer layout is not sourced",
    ),
    ("glm_4_7_w8a8c8", "GLM-4.7's dimensions are not sourced"),
    (
        "qwen3_5_397b_a17b_w8a8_mtp",
        "Qwen3.5's hybrid linear-attention layer split is not sourced",
    ),
    (
        "qwen3_5_397b_a17b_w4a8_mtp",
        "as `qwen3_5_397b_a17b_w8a8_mtp`",
    ),
    (
        "kimi_k2_instruct_w8a8",
        "Kimi-K2-Instruct's context length and int8 layout are not sourced (the `KIMI_K2` dimensions are K2.5's text model)",
    ),
    ("qwen3_5_122b_a10b_w4a8", "as `qwen3_5_397b_a17b_w8a8_mtp`"),
];

/// The dimensions and weight format of a model-table entry.
pub fn dims_for(model_id: &str) -> Option<&'static ModelDims> {
    MODEL_DIMS.iter().find(|d| d.model == model_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::MODELS;

    #[test]
    fn every_model_is_sized_or_says_why() {
        for m in MODELS {
            let sized = dims_for(m.id).is_some();
            let unsized_ = UNSIZED.iter().any(|(id, _)| *id == m.id);
            assert!(
                sized ^ unsized_,
                "`{}`: sized {sized}, unsized {unsized_}",
                m.id
            );
        }
        for d in MODEL_DIMS {
            assert!(
                MODELS.iter().any(|m| m.id == d.model),
                "{} not in MODELS",
                d.model
            );
        }
        for (id, _) in UNSIZED {
            assert!(MODELS.iter().any(|m| m.id == *id), "{id} not in MODELS");
        }
    }

    /// The attention kind of the dimensions agrees with the model table's.
    #[test]
    fn attention_kind_agrees_with_the_model_table() {
        use crate::tables::Attention;
        for d in MODEL_DIMS {
            let Some(m) = MODELS.iter().find(|m| m.id == d.model) else {
                continue;
            };
            let ok = matches!(
                (d.arch.attention, m.attention),
                (AttentionDims::Mla { indexer: None, .. }, Attention::Mla)
                    | (
                        AttentionDims::Mla {
                            indexer: Some(_),
                            ..
                        },
                        Attention::DsaSparse
                    )
                    | (AttentionDims::Gqa { .. }, Attention::Gqa)
                    | (AttentionDims::V4 { .. }, Attention::V4Hybrid)
            );
            assert!(
                ok,
                "{}: {:?} vs {:?}",
                d.model, d.arch.attention, m.attention
            );
            // Builds without the MTP layer (`deepseek_v3_w8a8`) still have
            // the architecture's; vLLM loads it only with MTP speculation.
            assert!(!m.mtp || d.arch.mtp_layers > 0, "{}: MTP layer", d.model);
            assert_eq!(d.format.kv_bytes == 1, m.kv_c8, "{}: C8 KV", d.model);
        }
    }

    /// Totals computed from the dimensions land on the published sizes:
    /// DeepSeek-V3 671B main model + 14B MTP module, of which 1.9B are its own
    /// embedding and head copy that vLLM shares (DeepSeek-V3 README),
    /// V4-Flash 284B, Kimi-K2 1T (text decoder), Qwen3-235B, MiniMax-M2 230B,
    /// (model cards, model-facts.md).
    #[test]
    fn totals_match_published_sizes() {
        let b = |a: &Architecture| {
            let p = a.params();
            (p.total() - p.mtp - p.mtp_routed_experts) as f64 / 1e9
        };
        let near = |got: f64, want: f64, tol: f64| {
            assert!(
                (got - want).abs() / want < tol,
                "got {got:.1}B, published {want}B"
            );
        };
        near(b(&DEEPSEEK_V3), 671.0, 0.01);
        let p = DEEPSEEK_V3.params();
        near(
            (p.mtp + p.mtp_routed_experts + p.embedding) as f64 / 1e9,
            14.0,
            0.05,
        );
        near(b(&DEEPSEEK_V4_FLASH), 284.0, 0.02);
        near(b(&KIMI_K2), 1000.0, 0.05);
        near(b(&QWEN3_235B), 235.0, 0.01);
        near(b(&MINIMAX_M2), 230.0, 0.02);
    }
}
