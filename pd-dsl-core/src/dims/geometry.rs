//! Attention kinds, the architecture's dimensions and the parameter count computed from them.

use super::*;

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
    /// A hybrid of gated full attention and Gated DeltaNet linear attention
    /// (Qwen3.5, `layer_types`): `full_layers` layers are GQA whose query
    /// projection also yields an output gate (`attn_output_gate`,
    /// vllm/model_executor/models/qwen3_next.py `Qwen3NextAttention`: `q_proj`
    /// of `2 x heads x head_dim`) and cache K and V per token like
    /// [`AttentionDims::Gqa`]; the others are Gated DeltaNet
    /// (`Qwen3NextGatedDeltaNet`), which keep a fixed conv and recurrent state
    /// per request instead of a per-token cache.
    Hybrid {
        /// `num_attention_heads` of the full-attention layers.
        heads: u64,
        /// `num_key_value_heads`.
        kv_heads: u64,
        /// `head_dim`.
        head_dim: u64,
        /// Layers of `layer_types` that are `full_attention`.
        full_layers: u64,
        /// `linear_num_key_heads`.
        linear_key_heads: u64,
        /// `linear_num_value_heads`.
        linear_value_heads: u64,
        /// `linear_key_head_dim`.
        linear_key_dim: u64,
        /// `linear_value_head_dim`.
        linear_value_dim: u64,
        /// `linear_conv_kernel_dim`.
        conv_kernel: u64,
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
            AttentionDims::Hybrid {
                heads,
                kv_heads,
                head_dim,
                ..
            } => {
                // A full-attention layer: the GQA projections with the
                // output gate in `q_proj`.
                2 * hidden * heads * head_dim
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

impl AttentionDims {
    /// Parameters of one Gated DeltaNet layer (norms included), 0 for the
    /// other kinds: `in_proj_qkvz` (`2 x key heads x key dim + 2 x value
    /// heads x value dim` outputs), `in_proj_ba` (`2 x value heads`), the
    /// depthwise `conv1d` over `2 x key heads x key dim + value heads x value
    /// dim` channels, `dt_bias` and `A_log` per value head, the gated norm
    /// of a value head, `out_proj` (vllm/model_executor/models/qwen3_next.py
    /// `Qwen3NextGatedDeltaNet`).
    pub const fn linear_params_per_layer(&self, hidden: u64) -> u64 {
        match *self {
            AttentionDims::Hybrid {
                linear_key_heads: kh,
                linear_value_heads: vh,
                linear_key_dim: kd,
                linear_value_dim: vd,
                conv_kernel,
                ..
            } => {
                let conv_dim = 2 * kh * kd + vh * vd;
                hidden * (2 * kh * kd + 2 * vh * vd)
                    + hidden * 2 * vh
                    + conv_dim * conv_kernel
                    + 2 * vh
                    + vd
                    + vh * vd * hidden
                    + 2 * hidden
            }
            _ => 0,
        }
    }

    /// Layers of `layers` that attend over the whole context: the
    /// full-attention ones of a hybrid, else all.
    pub const fn full_layers(&self, layers: u64) -> u64 {
        match *self {
            AttentionDims::Hybrid { full_layers, .. } => full_layers,
            _ => layers,
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
        // (deepseek_mtp.py `DeepSeekMultiTokenPredictorLayer`; Qwen3.5's
        // `pre_fc_norm_*`, `fc` and a full-attention layer, qwen3_5_mtp.py).
        let mtp_layer = 2 * self.hidden + 2 * self.hidden * self.hidden + attn + shared + router;
        Params {
            embedding: 2 * self.vocab * self.hidden,
            attention: self.attention.full_layers(self.layers) * attn
                + (self.layers - self.attention.full_layers(self.layers))
                    * self.attention.linear_params_per_layer(self.hidden),
            dense_mlp: self.dense_layers * 3 * self.hidden * self.dense_intermediate,
            shared_experts: self.moe_layers() * shared,
            routed_experts: self.moe_layers() * self.routed_experts * expert,
            router: self.moe_layers() * router,
            mtp: self.mtp_layers * mtp_layer,
            mtp_routed_experts: self.mtp_layers * self.routed_experts * expert,
        }
    }
}
