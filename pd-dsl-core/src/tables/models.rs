//! The model table's types, the family bases every build takes its shared facts from, and [`MODELS`].

use super::*;

// ---------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------

/// One set of weights.
#[derive(Debug, Serialize)]
pub struct Model {
    /// Identifier used in layouts (`model: deepseek_v4_flash_w8a8_mtp`).
    pub id: &'static str,
    /// Weight name as published.
    pub weights: &'static str,
    /// Where it is published.
    pub source: &'static str,
    /// Hub ids upstream configs and tutorials write in `model:` or
    /// `vllm serve <id>` for these weights (ModelScope / Hugging Face
    /// `org/name`). [`model_by_hub_id`] matches them case-insensitively.
    pub hub_ids: &'static [&'static str],
    /// Default path of the weights inside the container.
    pub default_path: &'static str,
    /// Default `--served-model-name`.
    pub served_name: &'static str,
    /// `--quantization` value, if quantized.
    pub quantization: Option<&'static str>,
    /// Whether the weights carry an MTP layer (speculative decoding).
    pub mtp: bool,
    /// Mixture of experts (fine-grained TP and EP apply).
    pub moe: bool,
    /// Uses a hybrid KV cache (`MooncakeHybridConnector` or, from
    /// v0.22.1rc1, the V1 connector).
    pub hybrid_kv: bool,
    /// How the model attends (the rules for MLA-only settings and block
    /// sizes read it).
    pub attention: Attention,
    /// Takes image input (vision tower); `--mm-processor-cache-gb` applies.
    pub multimodal: bool,
    /// Separate draft weights upstream runs with these weights, per
    /// speculative method (`mtp` needs none: see [`Model::mtp`]).
    pub drafts: &'static [Draft],
    /// `--tokenizer-mode` upstream passes for these weights, if any.
    pub tokenizer_mode: Option<&'static str>,
    /// The weights quantize the KV cache to int8 ("C8": the quant
    /// description sets `enable_c8_quant`); upstream names every such build
    /// `...c8...`.
    pub kv_c8: bool,
    /// The Hugging Face architecture (`architectures[0]` of the checkpoint's
    /// `config.json`), typed only where a rule reads it: vllm-ascend's
    /// start-up checks name architectures (`_validate_model_runner_config`,
    /// `_validate_engram_config`, vllm_ascend/platform.py @v0.30.0rc1), and
    /// the generated facts carry the names they test.
    pub architecture: Option<&'static str>,
    /// The Hugging Face `model_type` of the checkpoint's text config (what
    /// vLLM reads as `hf_text_config.model_type`), typed only where
    /// vllm-ascend's source names it for these weights, and read by the
    /// rules that test it (vLLM's aux-hidden-states gate,
    /// `speculative_aux_hidden_states`).
    pub model_type: Option<&'static str>,
    /// The Hugging Face id of the checkpoint these weights are made from,
    /// whose `config.json` the generated checkpoint facts copy
    /// (`crate::dims::checkpoint`; quantizing leaves the architecture, the
    /// context and the experts as they are). `None` where no copy exists.
    pub checkpoint: Option<&'static str>,
}

/// How a model attends, as vllm-ascend tells the kinds apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Attention {
    /// Multi-head latent attention (`is_deepseek_mla`, no indexer):
    /// DeepSeek-V3/V3.1/R1, Kimi-K2.x.
    Mla,
    /// MLA plus the DSA lightning indexer (sparse, "SFA" in vllm-ascend;
    /// `model_uses_sfa_sparse`): DeepSeek-V3.2, GLM-5.x.
    DsaSparse,
    /// DeepSeek-V4: sliding-window plus compressed (CSA/HCA) caches, no
    /// `kv_lora_rank` (`model_type == "deepseek_v4"`).
    V4Hybrid,
    /// DeepSeek-V4.1: causal encoder-decoder with CSA2 compressed sparse
    /// attention and its own cache layers (`model_type == "deepseek_v41"`,
    /// vllm_ascend/attention/dsa_v41.py, models/deepseek_v41/cache_config.py
    /// @v0.30.0rc1): no `refresh_block_size` branch of its own.
    V41Ced,
    /// Grouped-query attention: Qwen3, MiniMax-M2.x.
    Gqa,
}

impl Attention {
    /// The layout-facing name.
    pub fn as_str(self) -> &'static str {
        match self {
            Attention::Mla => "MLA",
            Attention::DsaSparse => "DSA-sparse MLA",
            Attention::V4Hybrid => "DeepSeek-V4 hybrid",
            Attention::V41Ced => "DeepSeek-V4.1 CSA2",
            Attention::Gqa => "GQA",
        }
    }

    /// The model carries the DSA lightning indexer: its Hugging Face config
    /// has `index_topk`, the test vllm-ascend makes for "models with
    /// indexer" (`enable_dsa_cp` in vllm_ascend/utils.py @v0.20.2rc1 L1389-1398,
    /// @v0.25.1rc1 L1374-1383; `is_ds_v32` in the same function @v0.18.0
    /// L1240-1247). DeepSeek-V3.2 and GLM-5.x (`DsaSparse`) and DeepSeek-V4
    /// have one; plain MLA and GQA models do not.
    pub fn has_indexer(self) -> bool {
        // V4.1's CSA2 keeps an indexer (`DeepseekV41IndexerMetadata`,
        // attention/dsa_v41.py @v0.30.0rc1 L161).
        matches!(
            self,
            Attention::DsaSparse | Attention::V4Hybrid | Attention::V41Ced
        )
    }
}

/// Draft weights for a speculative method that needs them.
#[derive(Debug, Serialize)]
pub struct Draft {
    /// `speculative_config.method`.
    pub method: &'static str,
    /// `speculative_config.model`: the hub id upstream writes.
    pub model: &'static str,
}

/// Speculative methods that run a separate draft model, named in
/// `speculative_config.model` (every upstream e2e config and tutorial using
/// `eagle3` or `dflash` passes one, e.g. tests/e2e/nightly/multi_node/
/// external_dp/config/Kimi-K2.6-W4A8-64k-1k-TPOT50-PD.yaml,
/// Minimax_m2.7_in128k_1k_prefix90_tpot50.yaml; speculative_decoding.md).
pub const DRAFT_METHODS: &[&str] = &["eagle", "eagle3", "dflash", "medusa", "draft_model"];

impl Model {
    /// The draft for a speculative method, if these weights have one.
    pub fn draft(&self, method: &str) -> Option<&'static Draft> {
        self.drafts.iter().find(|d| d.method == method)
    }
}

// Family bases: the facts every build of one model family shares. Each entry
// below states only what is its own (id, weights, source, hub ids, path, and
// any fact that differs) and takes the rest from its family with `..`. The
// identity fields of a base are empty on purpose: every entry sets them
// (`models_state_their_identity` checks).

/// DeepSeek-V3 / V3.1 / R1: MLA, MoE with one MTP layer, served as
/// `deepseek_v3` (R1 builds as `deepseek_r1`), quantized builds run with
/// `--quantization ascend` (DeepSeek-V3.1.md §3.1, DeepSeek-R1.md).
pub(super) const DEEPSEEK_V3: Model = Model {
    id: "",
    weights: "",
    source: "",
    hub_ids: &[],
    default_path: "",
    served_name: "deepseek_v3",
    quantization: Some("ascend"),
    mtp: true,
    moe: true,
    hybrid_kv: false,
    attention: Attention::Mla,
    multimodal: false,
    drafts: &[],
    tokenizer_mode: None,
    kv_c8: false,
    architecture: None,
    // vllm_ascend/quantization/modelslim_config.py @v0.20.2rc1 L84 (its
    // packed-module table by model type); patch/platform/patch_speculative_config.py L17.
    model_type: Some("deepseek_v3"),
    checkpoint: None,
};

/// DeepSeek-V3.2: MLA plus the DSA indexer, one MTP layer (docs/source/
/// tutorials/models/DeepSeek-V3.2.md L19-20, `--served-model-name
/// deepseek_v3_2`, `deepseek_mtp`; tests/e2e/nightly/multi_node/internal_dp/
/// config/DeepSeek-V3_2-W8A8-EP.yaml: `--tokenizer-mode deepseek_v32`, MTP 2).
pub(super) const DEEPSEEK_V3_2: Model = Model {
    id: "",
    weights: "",
    source: "",
    hub_ids: &[],
    default_path: "",
    served_name: "deepseek_v3_2",
    quantization: Some("ascend"),
    mtp: true,
    moe: true,
    hybrid_kv: false,
    attention: Attention::DsaSparse,
    multimodal: false,
    drafts: &[],
    tokenizer_mode: Some("deepseek_v32"),
    kv_c8: false,
    architecture: None,
    // vllm_ascend/quantization/modelslim_config.py @v0.20.2rc1 L103;
    // patch/platform/patch_speculative_config.py L17.
    model_type: Some("deepseek_v32"),
    checkpoint: None,
};

/// DeepSeek-V4: hybrid (sliding-window plus compressed) KV cache, one MTP
/// layer, `--served-model-name dsv4`, `--tokenizer-mode deepseek_v4`
/// (DeepSeek-V4-Flash.md @v0.21.0rc1; DeepSeek-V4-Pro.md).
pub(super) const DEEPSEEK_V4: Model = Model {
    id: "",
    weights: "",
    source: "",
    hub_ids: &[],
    default_path: "",
    served_name: "dsv4",
    quantization: Some("ascend"),
    mtp: true,
    moe: true,
    hybrid_kv: true,
    attention: Attention::V4Hybrid,
    multimodal: false,
    drafts: &[],
    tokenizer_mode: Some("deepseek_v4"),
    kv_c8: false,
    architecture: None,
    // the text config's type vllm-ascend tests (`hf_text_config.model_type ==
    // "deepseek_v4"`, vllm_ascend/worker/model_runner_v1.py @v0.20.2rc1 L3532).
    model_type: Some("deepseek_v4"),
    checkpoint: None,
};

/// GLM-5 and GLM-5.1 (docs/source/tutorials/models/GLM5.md L23-26:
/// `--quantization ascend`, `--served-model-name glm-5`, `deepseek_mtp`).
/// MLA + DSA indexer, one MTP layer (`model.layers.78`, GLM5.md L507-513).
/// Sparse attention confirmed upstream: the GLM C8 runs set
/// `enable_sparse_li_c8`, read only with it.
pub(super) const GLM_5_FAMILY: Model = Model {
    id: "",
    weights: "",
    source: "",
    hub_ids: &[],
    default_path: "",
    served_name: "glm-5",
    quantization: Some("ascend"),
    mtp: true,
    moe: true,
    hybrid_kv: false,
    attention: Attention::DsaSparse,
    multimodal: false,
    drafts: &[],
    tokenizer_mode: None,
    kv_c8: false,
    architecture: None,
    // vllm_ascend/attention/sfa_v1.py @v0.20.2rc1 L453;
    // quantization/modelslim_config.py L108.
    model_type: Some("glm_moe_dsa"),
    checkpoint: None,
};

/// GLM-5.2 (docs/source/tutorials/models/GLM5.2.md L19-21: `--quantization
/// ascend`, `--served-model-name glm-52`, `deepseek_mtp`). MLA + DSA indexer
/// with IndexShare, one MTP layer; GLM5.2.md L186 advises
/// `enable_sparse_sfa_c8`, which only sparse-attention models read.
pub(super) const GLM_5_2_FAMILY: Model = Model {
    served_name: "glm-52",
    // No upstream file names this build's model type (`glm_moe_dsa` is
    // GLM-5/5.1's): left unset rather than inherited.
    model_type: None,
    ..GLM_5_FAMILY
};

/// GLM-5.3 (docs/source/tutorials/models/GLM5.3.md @v0.29.0rc1:
/// `--served-model-name glm-5` L195, `--quantization ascend` L204,
/// `enable_dsa_cp` L208, which only models with the DSA indexer read,
/// `deepseek_mtp` L209): the GLM-5 shape.
pub(super) const GLM_5_3_FAMILY: Model = Model {
    served_name: "glm-5",
    // No upstream file names this build's model type (`glm_moe_dsa` is
    // GLM-5/5.1's): left unset rather than inherited.
    model_type: None,
    ..GLM_5_FAMILY
};

/// GLM-5.3 w8a8 with C8 KV (GLM5.3.md L29; e2e: tests/e2e/weekly/multi_node/
/// internal_dp/config/GLM5_3-W8A8-A3-dual-nodes.yaml @v0.28.0rc1).
pub static GLM_5_3_W8A8C8: Model = Model {
    id: "glm_5_3_w8a8c8",
    weights: "GLM-5.3-w8a8c8",
    source: "ModelScope Eco-Tech/GLM-5.3-w8a8c8",
    hub_ids: &["Eco-Tech/GLM-5.3-w8a8c8", "vllm-ascend/GLM-5.3-w8a8c8"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/GLM-5.3-w8a8c8",
    kv_c8: true,
    checkpoint: Some("zai-org/GLM-5.3"),
    ..GLM_5_3_FAMILY
};

/// Kimi-K2.x: the DeepSeek-V3 MLA shape (61 layers, 384 experts) with a
/// vision tower (`KimiK25ForConditionalGeneration`) and no MTP layer:
/// upstream drafts with eagle3 or dflash. MLA confirmed upstream: Kimi runs
/// the `DeepseekV2Model` (vllm_ascend/patch/worker/patch_eagle3_pp_aux.py
/// L32) and its tutorials enable MLAPO (Kimi-K2.5.md L145). Every build names
/// its own served name and drafts.
pub(super) const KIMI_K2: Model = Model {
    id: "",
    weights: "",
    source: "",
    hub_ids: &[],
    default_path: "",
    served_name: "",
    quantization: Some("ascend"),
    mtp: false,
    moe: true,
    hybrid_kv: false,
    attention: Attention::Mla,
    multimodal: true,
    drafts: &[],
    tokenizer_mode: None,
    kv_c8: false,
    architecture: None,
    model_type: None,
    checkpoint: None,
};

/// Qwen3-235B-A22B (docs/source/tutorials/models/Qwen3-235B-A22B.md,
/// `--served-model-name qwen3`). GQA: 64 query / 4 KV heads, 94 layers, 128
/// experts, no MTP layer (a third-party copy of the Hugging Face config; GQA
/// confirmed upstream: "a GQA model such as Qwen3-235B", context_parallel.md
/// L60; no upstream run uses MTP with it).
pub(super) const QWEN3_235B: Model = Model {
    id: "",
    weights: "",
    source: "",
    hub_ids: &[],
    default_path: "",
    served_name: "qwen3",
    quantization: Some("ascend"),
    mtp: false,
    moe: true,
    hybrid_kv: false,
    attention: Attention::Gqa,
    multimodal: false,
    drafts: &[],
    tokenizer_mode: None,
    kv_c8: false,
    architecture: None,
    // vllm_ascend/quantization/modelslim_config.py @v0.20.2rc1 L54.
    model_type: Some("qwen3_moe"),
    checkpoint: None,
};

/// GLM-4.7 w8a8 with C8 KV (e2e only: tests/e2e/weekly/multi_node/
/// internal_dp/config/GLM-4.7-W8A8C8-Mooncake-Layerwise.yaml @v0.29.0rc1,
/// `--kv-cache-dtype int8`; the family's tutorial docs/source/tutorials/
/// models/GLM4.x.md: `--served-model-name glm` L146, the w8a8 builds run
/// with `--quantization ascend` L150; MoE). Its attention is taken as GQA
/// (GLM-4.5/4.6/4.7 share one architecture; the head counts were not found
/// in a citable upstream file); no MTP layer is assumed for this build.
pub static GLM_4_7_W8A8C8: Model = Model {
    id: "glm_4_7_w8a8c8",
    weights: "GLM-4.7-W8A8C8",
    source: "ModelScope vllm-ascend/GLM-4.7-W8A8C8",
    hub_ids: &["vllm-ascend/GLM-4.7-W8A8C8"],
    default_path: "/root/.cache/modelscope/hub/models/vllm-ascend/GLM-4.7-W8A8C8",
    served_name: "glm",
    quantization: Some("ascend"),
    mtp: false,
    moe: true,
    hybrid_kv: false,
    attention: Attention::Gqa,
    multimodal: false,
    drafts: &[],
    tokenizer_mode: None,
    kv_c8: true,
    architecture: None,
    model_type: None,
    checkpoint: None,
};

/// Qwen3.5-397B-A17B (vllm-ascend docs/source/tutorials/models/
/// Qwen3.5-397B-A17B.md @v0.29.0rc1: a multimodal MoE model with MTP,
/// `--served-model-name qwen3.5` L207, `qwen3_5_mtp` L215, the quantized
/// builds need `--quantization ascend` L222; its linear-attention layers
/// make vLLM's hybrid KV cache manager apply, L276, L470, which is not the
/// DeepSeek-V4 layout `hybrid_kv` stands for: upstream runs it with
/// `MooncakeConnectorV1`, e.g. tests/e2e/weekly/multi_node/external_dp/config/
/// Qwen3.5-397B-w4a8_128k-1k-90-50-PD.yaml). Its full-attention layers are
/// taken as GQA (the enum has no linear-attention kind).
pub(super) const QWEN3_5_FAMILY: Model = Model {
    id: "",
    weights: "",
    source: "",
    hub_ids: &[],
    default_path: "",
    served_name: "qwen3.5",
    quantization: Some("ascend"),
    mtp: true,
    moe: true,
    hybrid_kv: false,
    attention: Attention::Gqa,
    multimodal: true,
    drafts: &[],
    tokenizer_mode: None,
    kv_c8: false,
    // vllm_ascend/spec_decode/llm_base_proposer.py @v0.23.0 L358 (the
    // multimodal target classes it names); tests/ut/test_ascend_config.py
    // @v0.30.0rc2 L1307 (a Qwen3.5 `model_config.architectures`).
    architecture: Some("Qwen3_5MoeForConditionalGeneration"),
    // vllm_ascend/quantization/modelslim_config.py @v0.20.2rc1 L72;
    // worker/pcp_utils.py L134.
    model_type: Some("qwen3_5_moe"),
    checkpoint: None,
};

/// Qwen3.5-397B-A17B w8a8 with MTP (Qwen3.5-397B-A17B.md L28; e2e:
/// tests/e2e/weekly/multi_node/external_dp/config/Qwen-3.5-397B-A17B-W8A8-PD.yaml).
pub static QWEN3_5_397B_A17B_W8A8_MTP: Model = Model {
    id: "qwen3_5_397b_a17b_w8a8_mtp",
    weights: "Qwen3.5-397B-A17B-w8a8-mtp",
    source: "ModelScope Eco-Tech/Qwen3.5-397B-A17B-w8a8-mtp",
    hub_ids: &["Eco-Tech/Qwen3.5-397B-A17B-w8a8-mtp"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/Qwen3.5-397B-A17B-w8a8-mtp",
    checkpoint: Some("Qwen/Qwen3.5-397B-A17B"),
    ..QWEN3_5_FAMILY
};

/// Qwen3.5-397B-A17B w4a8 with MTP (Qwen3.5-397B-A17B.md L29; e2e:
/// tests/e2e/weekly/multi_node/external_dp/config/Qwen3.5-397B-w4a8_128k-1k-90-50-PD.yaml).
pub static QWEN3_5_397B_A17B_W4A8_MTP: Model = Model {
    id: "qwen3_5_397b_a17b_w4a8_mtp",
    weights: "Qwen3.5-397B-A17B-w4a8-mtp",
    source: "ModelScope Eco-Tech/Qwen3.5-397B-A17B-w4a8-mtp",
    hub_ids: &["Eco-Tech/Qwen3.5-397B-A17B-w4a8-mtp"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/Qwen3.5-397B-A17B-w4a8-mtp",
    checkpoint: Some("Qwen/Qwen3.5-397B-A17B"),
    ..QWEN3_5_FAMILY
};

/// Qwen3.5-122B-A10B w4a8 (e2e only: tests/e2e/weekly/multi_node/external_dp/
/// config/Qwen3.5-122B-A10B-w4a8-128k-1k-TPOT50-90-PD.yaml @v0.27.1rc1,
/// `--quantization ascend`, `qwen3_5_mtp`); family facts: `QWEN3_5_FAMILY`.
pub static QWEN3_5_122B_A10B_W4A8: Model = Model {
    id: "qwen3_5_122b_a10b_w4a8",
    weights: "Qwen3.5-122B-A10B-w4a8",
    source: "ModelScope Eco-Tech/Qwen3.5-122B-A10B-w4a8",
    hub_ids: &["Eco-Tech/Qwen3.5-122B-A10B-w4a8"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/Qwen3.5-122B-A10B-w4a8",
    checkpoint: Some("Qwen/Qwen3.5-122B-A10B"),
    ..QWEN3_5_FAMILY
};

/// Qwen3-VL-235B-A22B-Instruct (docs/source/tutorials/models/
/// Qwen3-VL-235B-A22B-Instruct.md, `--served-model-name qwen3-vl-235b`).
/// Multimodal; its text decoder is taken as GQA like Qwen3 (the architecture
/// numbers were not found in a citable source), no MTP layer.
pub(super) const QWEN3_VL_235B: Model = Model {
    served_name: "qwen3-vl-235b",
    multimodal: true,
    // Not Qwen3's `qwen3_moe`: the checkpoint's copy gives its own
    // (`qwen3_vl_moe`, text `qwen3_vl_moe_text`; `crate::dims::text_model_type`).
    model_type: None,
    ..QWEN3_235B
};

/// MiniMax-M2.x (docs/source/tutorials/models/MiniMax-M2.md,
/// `--served-model-name minimax`). GQA (48 query / 8 KV heads, 62 layers, 256
/// experts, no shared expert) and no MTP layer per a third-party copy of the
/// Hugging Face config; GQA confirmed upstream ("MiniMax M2 C8 cache-scale
/// support in GQA `load_weights`", release_notes.md, #10461). Upstream drafts
/// with eagle3 only; each build names its own draft.
pub(super) const MINIMAX_M2: Model = Model {
    id: "",
    weights: "",
    source: "",
    hub_ids: &[],
    default_path: "",
    served_name: "minimax",
    quantization: Some("ascend"),
    mtp: false,
    moe: true,
    hybrid_kv: false,
    attention: Attention::Gqa,
    multimodal: false,
    drafts: &[],
    tokenizer_mode: None,
    kv_c8: false,
    architecture: None,
    // vllm_ascend/patch/platform/patch_minimax_m2_config.py @v0.20.2rc1 L62;
    // quantization/modelslim_config.py L204.
    model_type: Some("minimax_m2"),
    checkpoint: None,
};

/// Every model, in table order.
pub static MODELS: [&Model; 45] = [
    &DEEPSEEK_V4_FLASH_W8A8_MTP,
    &DEEPSEEK_V3_1_W8A8_MTP_QUAROT,
    &DEEPSEEK_V3_1_BF16,
    &DEEPSEEK_V3_1_TERMINUS_W4A8_MTP_QUAROT,
    &DEEPSEEK_V3_1_W4A4C8_MXFP4,
    &DEEPSEEK_V3_1_W8A8C8_MXFP8,
    &DEEPSEEK_V3_1_TERMINUS_W8A8_MTP_QUAROT,
    &DEEPSEEK_V3_W8A8,
    &DEEPSEEK_R1_W8A8,
    &DEEPSEEK_R1_0528_W8A8,
    &DEEPSEEK_R1_0528_W8A8_MTP_QUAROT,
    &DEEPSEEK_V3_2_W8A8,
    &DEEPSEEK_V3_2_EXP_W8A8,
    &DEEPSEEK_V4_PRO_W4A8_MTP,
    &GLM_5,
    &GLM_5_W4A8,
    &GLM_5_W8A8,
    &GLM_5_1,
    &GLM_5_1_W4A8,
    &GLM_5_1_W8A8,
    &GLM_5_1_W8A8C8,
    &GLM_5_2,
    &GLM_5_2_W8A8,
    &GLM_5_2_W8A8C8,
    &GLM_5_2_W4A8C8,
    &KIMI_K2_INSTRUCT_W8A8,
    &KIMI_K2_5_W4A8,
    &KIMI_K2_6_W4A8,
    &KIMI_K2_7_CODE_W4A8,
    &QWEN3_235B_A22B,
    &QWEN3_235B_A22B_W8A8,
    &QWEN3_235B_A22B_W8A8_QUAROT,
    &QWEN3_235B_A22B_W8A8_MXFP0,
    &QWEN3_VL_235B_A22B_INSTRUCT,
    &QWEN3_VL_235B_A22B_INSTRUCT_W8A8_QUAROT,
    &QWEN3_VL_235B_A22B_INSTRUCT_W8A8_MXFP8,
    &MINIMAX_M2_7_W8A8_QUAROT,
    &MINIMAX_M2_7_W8A8C8_QUAROT,
    &MINIMAX_M2_5_W8A8_QUAROT,
    &QWEN3_5_397B_A17B_W8A8_MTP,
    &QWEN3_5_397B_A17B_W4A8_MTP,
    &QWEN3_5_122B_A10B_W4A8,
    &GLM_4_7_W8A8C8,
    &GLM_5_3_W8A8C8,
    &DEEPSEEK_V4_1_FLASH_W8A8,
];

/// Looks a model up by its layout identifier.
pub fn model(id: &str) -> Option<&'static Model> {
    MODELS.iter().copied().find(|m| m.id == id)
}

/// Looks a model up by what an upstream config writes for it: a hub id
/// (`vllm-ascend/DeepSeek-R1-0528-W8A8`) or a path whose last component is
/// the weights name or the name part of a hub id
/// (`/root/.cache/weights/DeepSeek-V3.1-w8a8-mtp-QuaRot/`). Case-insensitive;
/// `None` when nothing matches.
pub fn model_by_hub_id(id: &str) -> Option<&'static Model> {
    let id = id.trim();
    let trimmed = id.trim_end_matches('/');
    if let Some(m) = MODELS
        .iter()
        .copied()
        .find(|m| m.hub_ids.iter().any(|h| h.eq_ignore_ascii_case(trimmed)))
    {
        return Some(m);
    }
    let last = trimmed.rsplit('/').next().unwrap_or(trimmed);
    if last.is_empty() {
        return None;
    }
    MODELS.iter().copied().find(|m| {
        m.weights.eq_ignore_ascii_case(last)
            || m.hub_ids.iter().any(|h| {
                h.rsplit('/')
                    .next()
                    .is_some_and(|n| n.eq_ignore_ascii_case(last))
            })
    })
}
