//! The dimensions of each model-table entry, the entries not sized and why, and the lookup.

use super::*;

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
    "deepseek_v4_pro_w4a8_mtp" => DEEPSEEK_V4_PRO, FORMAT_W4A8;
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
    "glm_5" => GLM_5, FORMAT_BF16;
    "glm_5_w4a8" => GLM_5, FORMAT_W4A8;
    "glm_5_w8a8" => GLM_5, FORMAT_W8A8;
    "glm_5_1" => GLM_5, FORMAT_BF16;
    "glm_5_1_w4a8" => GLM_5, FORMAT_W4A8;
    "glm_5_1_w8a8" => GLM_5, FORMAT_W8A8;
    "kimi_k2_instruct_w8a8" => KIMI_K2_INSTRUCT, FORMAT_W8A8;
    "kimi_k2_5_w4a8" => KIMI_K2, FORMAT_W4A8;
    "kimi_k2_6_w4a8" => KIMI_K2, FORMAT_W4A8;
    "kimi_k2_7_code_w4a8" => KIMI_K2, FORMAT_W4A8;
    "qwen3_235b_a22b" => QWEN3_235B, FORMAT_BF16;
    "qwen3_235b_a22b_w8a8" => QWEN3_235B, FORMAT_W8A8;
    "qwen3_235b_a22b_w8a8_quarot" => QWEN3_235B, FORMAT_W8A8;
    "qwen3_vl_235b_a22b_instruct" => QWEN3_VL_235B, FORMAT_BF16;
    "qwen3_vl_235b_a22b_instruct_w8a8_quarot" => QWEN3_VL_235B, FORMAT_W8A8;
    "qwen3_vl_235b_a22b_instruct_w8a8_mxfp8" => QWEN3_VL_235B, FORMAT_W8A8_MXFP8;
    "minimax_m2_7_w8a8_quarot" => MINIMAX_M2, FORMAT_W8A8;
    "minimax_m2_7_w8a8c8_quarot" => MINIMAX_M2, FORMAT_W8A8C8;
    "minimax_m2_5_w8a8_quarot" => MINIMAX_M2_5, FORMAT_W8A8;
    "qwen3_5_397b_a17b_w8a8_mtp" => QWEN3_5_397B, FORMAT_W8A8;
    "qwen3_5_397b_a17b_w4a8_mtp" => QWEN3_5_397B, FORMAT_W4A8;
    "qwen3_5_122b_a10b_w4a8" => QWEN3_5_122B, FORMAT_W4A8;
}

/// Model-table entries without dimensions, and why. The budget reports
/// them as unsized and no capacity rule runs for them.
pub static UNSIZED: &[(&str, &str)] = &[
    (
        "deepseek_v4_1_flash_w8a8",
        "DeepSeek-V4.1's CSA2 cache (FP4 main KV, Engram tables, SWA replay) has no copy of its config or cache specs outside vllm-ascend's code",
    ),
    (
        "glm_5_1_w8a8c8",
        "its C8 cache depends on vllm-ascend's sparse C8 switches (`enable_sparse_li_c8` for the indexer, `enable_sparse_sfa_c8` for the main cache), which the budget does not model",
    ),
    (
        "glm_5_2",
        "GLM-5.2's IndexShare (an indexer cache on the `full` layers of its config's `indexer_types` only) is not modelled by the budget",
    ),
    ("glm_5_2_w8a8", "as `glm_5_2`"),
    ("glm_5_2_w8a8c8", "as `glm_5_2`"),
    ("glm_5_2_w4a8c8", "as `glm_5_2`"),
    (
        "qwen3_235b_a22b_w8a8_mxfp0",
        "the `mxfp0` weight format is not documented",
    ),
    (
        "glm_5_3_w8a8c8",
        "as `glm_5_2`: GLM-5.3's config has the same IndexShare `indexer_types`",
    ),
    ("glm_4_7_w8a8c8", "GLM-4.7's dimensions are not sourced"),
];

/// The dimensions and weight format of a model-table entry.
pub fn dims_for(model_id: &str) -> Option<&'static ModelDims> {
    MODEL_DIMS.iter().find(|d| d.model == model_id)
}
