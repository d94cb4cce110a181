//! One architecture per model family, each number with its source.

use super::*;

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

/// GLM-5 and GLM-5.1 (`glm_moe_dsa`): the defaults of `GlmMoeDsaConfig`,
/// which are the `zai-org/GLM-5` checkpoint's (transformers 5.25.0 sdist,
/// models/glm_moe_dsa/configuration_glm_moe_dsa.py,
/// `@auto_docstring(checkpoint="zai-org/GLM-5")`): 78 layers, the first 3
/// dense (`intermediate_size` 12288), 256 routed experts and one shared of
/// 2048, MLA (64 heads, `q_lora_rank` 2048, nope 192 + rope 64, v 256)
/// with the DSA indexer (32 heads of 128), 202752 positions. One MTP layer,
/// stored as `model.layers.78` (vllm-ascend docs/source/tutorials/models/
/// GLM5.md @v0.18.0 L510-516). These dimensions give 743.9B parameters
/// without the MTP layer, GLM-5's published 744B.
pub const GLM_5: Architecture = Architecture {
    name: "GLM-5",
    source: "transformers configuration_glm_moe_dsa.py defaults (checkpoint zai-org/GLM-5); GLM5.md for the MTP layer",
    hidden: 6144,
    vocab: 154880,
    layers: 78,
    dense_layers: 3,
    dense_intermediate: 12288,
    routed_experts: 256,
    shared_experts: 1,
    experts_per_token: 8,
    moe_intermediate: 2048,
    mtp_layers: 1,
    max_model_len: 202752,
    attention: AttentionDims::Mla {
        heads: 64,
        q_lora_rank: 2048,
        kv_lora_rank: 512,
        qk_nope_head_dim: 192,
        qk_rope_head_dim: 64,
        v_head_dim: 256,
        indexer: Some((32, 128)),
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

/// MiniMax-M2.5: the M2.x dimensions with a shorter context,
/// `max_position_embeddings` 196608 (cfg-copy of `MiniMaxAI/MiniMax-M2.5`
/// `config.json`, the generated checkpoint facts; the sized-dimensions test
/// holds every field equal to it).
pub const MINIMAX_M2_5: Architecture = Architecture {
    name: "MiniMax-M2.5",
    source: "cfg-copy of config.json (minimax_m2, MiniMax-M2.5)",
    max_model_len: 196608,
    ..MINIMAX_M2
};

/// DeepSeek-V4-Pro: the V4 shape at 1.6T (the generated checkpoint facts'
/// copy of `deepseek-ai/DeepSeek-V4-Pro` `config.json`, which the
/// sized-dimensions test holds every field equal to): 61 MoE layers of 384
/// routed experts (`moe_intermediate_size` 3072) and one shared, 128 heads,
/// `compress_ratios` 128 on 31 layers and 4 on 30 (the 62nd entry is the
/// MTP layer's), no sliding-window-only layer.
pub const DEEPSEEK_V4_PRO: Architecture = Architecture {
    name: "DeepSeek-V4-Pro",
    source: "cfg-copy of config.json (aiconfigurator_core/model_configs/deepseek-ai--DeepSeek-V4-Pro_config.json)",
    hidden: 7168,
    vocab: 129280,
    layers: 61,
    dense_layers: 0,
    dense_intermediate: 0,
    routed_experts: 384,
    shared_experts: 1,
    experts_per_token: 6,
    moe_intermediate: 3072,
    mtp_layers: 1,
    max_model_len: 1048576,
    attention: AttentionDims::V4 {
        heads: 128,
        head_dim: 512,
        q_lora_rank: 1536,
        o_lora_rank: 1024,
        o_groups: 16,
        sliding_window: 128,
        index_head_dim: 128,
        compress: &[(4, 30), (128, 31), (0, 0)],
    },
};

/// Kimi-K2-Instruct: the Kimi-K2 text decoder (`kimi_k2`, read with vLLM's
/// `DeepseekV3Config`) with no vision tower and a 131072-token context
/// (YaRN 32 x 4096; the generated checkpoint facts' copy of
/// `moonshotai/Kimi-K2-Instruct` `config.json`, which the sized-dimensions
/// test holds every field equal to).
pub const KIMI_K2_INSTRUCT: Architecture = Architecture {
    name: "Kimi-K2-Instruct",
    source: "cfg-copy of config.json (aiconfigurator_core/model_configs/moonshotai--Kimi-K2-Instruct_config.json)",
    max_model_len: 131072,
    ..KIMI_K2
};

/// Qwen3-VL-235B-A22B: the Qwen3-235B decoder (its `text_config`,
/// `qwen3_vl_moe_text`: 94 MoE layers, GQA 64/4 heads of 128, 128 experts)
/// with a 262144-token context (the generated checkpoint facts' copy of
/// `Qwen/Qwen3-VL-235B-A22B-Instruct` `config.json`, which the
/// sized-dimensions test holds every field equal to). As for Kimi-K2, the
/// vision tower is not counted: 27 blocks of width 1152 (MLP 4304) and four
/// 4608-wide mergers in the copy's `vision_config`, about 0.6B parameters,
/// under 0.3% of the model.
pub const QWEN3_VL_235B: Architecture = Architecture {
    name: "Qwen3-VL-235B-A22B",
    source: "cfg-copy of config.json text_config (aiconfigurator_core/model_configs/Qwen--Qwen3-VL-235B-A22B-Instruct_config.json)",
    max_model_len: 262144,
    ..QWEN3_235B
};

/// Qwen3.5-397B-A17B (`qwen3_5_moe_text`, the `text_config` of
/// `Qwen3_5MoeForConditionalGeneration`; the generated checkpoint facts'
/// copy of `Qwen/Qwen3.5-397B-A17B` `config.json`, which the sized-dimensions
/// test holds every field equal to): 60 MoE layers, `layer_types` 15
/// `full_attention` (gated GQA, 32 heads, 2 KV heads of 256) and 45
/// `linear_attention` (Gated DeltaNet: 16 key heads and 64 value heads of
/// 128, conv kernel 4), 512 routed experts of 1024 and one shared expert of
/// 1024 (`shared_expert_intermediate_size`), 10 per token, one MTP layer,
/// untied embeddings (they give the published 397B; tied they would give
/// 395B). As for Qwen3-VL, the vision tower (`vision_config`, about 0.4B)
/// is not counted.
pub const QWEN3_5_397B: Architecture = Architecture {
    name: "Qwen3.5-397B-A17B",
    source: "cfg-copy of config.json text_config (aiconfigurator_core/model_configs/Qwen--Qwen3.5-397B-A17B_config.json)",
    hidden: 4096,
    vocab: 248320,
    layers: 60,
    dense_layers: 0,
    dense_intermediate: 0,
    routed_experts: 512,
    shared_experts: 1,
    experts_per_token: 10,
    moe_intermediate: 1024,
    mtp_layers: 1,
    max_model_len: 262144,
    attention: AttentionDims::Hybrid {
        heads: 32,
        kv_heads: 2,
        head_dim: 256,
        full_layers: 15,
        linear_key_heads: 16,
        linear_value_heads: 64,
        linear_key_dim: 128,
        linear_value_dim: 128,
        conv_kernel: 4,
    },
};

/// Qwen3.5-122B-A10B: the Qwen3.5 shape at 48 layers (12 full, 36 linear),
/// hidden 3072, 256 routed experts of 1024 and one shared of 1024, 8 per
/// token (the generated checkpoint facts' copy of `Qwen/Qwen3.5-122B-A10B`
/// `config.json`, held equal by the sized-dimensions test).
pub const QWEN3_5_122B: Architecture = Architecture {
    name: "Qwen3.5-122B-A10B",
    source: "cfg-copy of config.json text_config (aiconfigurator_core/model_configs/Qwen--Qwen3.5-122B-A10B_config.json)",
    hidden: 3072,
    layers: 48,
    routed_experts: 256,
    experts_per_token: 8,
    attention: AttentionDims::Hybrid {
        heads: 32,
        kv_heads: 2,
        head_dim: 256,
        full_layers: 12,
        linear_key_heads: 16,
        linear_value_heads: 64,
        linear_key_dim: 128,
        linear_value_dim: 128,
        conv_kernel: 4,
    },
    ..QWEN3_5_397B
};
