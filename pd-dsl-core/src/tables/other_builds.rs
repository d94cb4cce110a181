//! The GLM, Kimi, Qwen and MiniMax builds of the model table.

use super::*;

/// GLM-5 BF16 (tutorial: "require at least 2 Atlas 800 A3"; family facts: `GLM_5_FAMILY`).
pub static GLM_5: Model = Model {
    id: "glm_5",
    weights: "GLM-5",
    source: "ModelScope ZhipuAI/GLM-5",
    hub_ids: &["ZhipuAI/GLM-5"],
    default_path: "/root/.cache/modelscope/hub/models/ZhipuAI/GLM-5",
    quantization: None,
    checkpoint: Some("zai-org/GLM-5"),
    ..GLM_5_FAMILY
};

/// GLM-5 w4a8 (1 A3 or 1 A2; tests/e2e/weekly/single_node/configs/GLM-5.yaml, MTP 3;
/// family facts: `GLM_5_FAMILY`).
pub static GLM_5_W4A8: Model = Model {
    id: "glm_5_w4a8",
    weights: "GLM-5-w4a8",
    source: "ModelScope Eco-Tech/GLM-5-w4a8",
    hub_ids: &["Eco-Tech/GLM-5-w4a8"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/GLM-5-w4a8",
    checkpoint: Some("zai-org/GLM-5"),
    ..GLM_5_FAMILY
};

/// GLM-5 w8a8 (1 A3; family facts: `GLM_5_FAMILY`).
pub static GLM_5_W8A8: Model = Model {
    id: "glm_5_w8a8",
    weights: "GLM-5-w8a8",
    source: "ModelScope Eco-Tech/GLM-5-w8a8",
    hub_ids: &["Eco-Tech/GLM-5-w8a8"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/GLM-5-w8a8",
    checkpoint: Some("zai-org/GLM-5"),
    ..GLM_5_FAMILY
};

/// GLM-5.1 BF16 (Hugging Face; family facts: `GLM_5_FAMILY`).
pub static GLM_5_1: Model = Model {
    id: "glm_5_1",
    weights: "GLM-5.1",
    source: "Hugging Face zai-org/GLM-5.1",
    hub_ids: &["zai-org/GLM-5.1"],
    default_path: "/weights/GLM-5.1",
    quantization: None,
    checkpoint: Some("zai-org/GLM-5.1"),
    ..GLM_5_FAMILY
};

/// GLM-5.1 w4a8 (modelers.cn; family facts: `GLM_5_FAMILY`).
pub static GLM_5_1_W4A8: Model = Model {
    id: "glm_5_1_w4a8",
    weights: "GLM-5.1-w4a8",
    source: "Modelers Eco-Tech/GLM-5.1-w4a8",
    hub_ids: &["Eco-Tech/GLM-5.1-w4a8"],
    default_path: "/weights/GLM-5.1-w4a8",
    checkpoint: Some("zai-org/GLM-5.1"),
    ..GLM_5_FAMILY
};

/// GLM-5.1 w8a8 (modelers.cn; tests/e2e/nightly/multi_node/external_dp/config/
/// GLM5_1-W8A8-EP-external.yaml, MTP 3; family facts: `GLM_5_FAMILY`).
pub static GLM_5_1_W8A8: Model = Model {
    id: "glm_5_1_w8a8",
    weights: "GLM-5.1-w8a8",
    source: "Modelers Eco-Tech/GLM-5.1-w8a8",
    hub_ids: &["Eco-Tech/GLM-5.1-w8a8"],
    default_path: "/weights/GLM-5.1-w8a8",
    checkpoint: Some("zai-org/GLM-5.1"),
    ..GLM_5_FAMILY
};

/// GLM-5.1 w8a8 with int8 (C8) KV, run with `enable_sparse_li_c8`
/// (tests/e2e/nightly/multi_node/external_dp/config/GLM-5.1-W8A8C8-128k-1k-90-50-PD.yaml;
/// family facts: `GLM_5_FAMILY`).
pub static GLM_5_1_W8A8C8: Model = Model {
    id: "glm_5_1_w8a8c8",
    weights: "GLM-5.1-w8a8c8",
    source: "ModelScope Eco-Tech/GLM-5.1-w8a8c8",
    hub_ids: &["Eco-Tech/GLM-5.1-w8a8c8"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/GLM-5.1-w8a8c8",
    kv_c8: true,
    checkpoint: Some("zai-org/GLM-5.1"),
    ..GLM_5_FAMILY
};

/// GLM-5.2 BF16 (2 A3 or 4 A2; family facts: `GLM_5_2_FAMILY`).
pub static GLM_5_2: Model = Model {
    id: "glm_5_2",
    weights: "GLM-5.2",
    source: "ModelScope ZhipuAI/GLM-5.2",
    hub_ids: &["ZhipuAI/GLM-5.2"],
    default_path: "/root/.cache/modelscope/hub/models/ZhipuAI/GLM-5.2",
    quantization: None,
    checkpoint: Some("zai-org/GLM-5.2"),
    ..GLM_5_2_FAMILY
};

/// GLM-5.2 w8a8 (1 A3 or 2 A2; family facts: `GLM_5_2_FAMILY`).
pub static GLM_5_2_W8A8: Model = Model {
    id: "glm_5_2_w8a8",
    weights: "GLM-5.2-w8a8",
    source: "ModelScope Eco-Tech/GLM-5.2-w8a8",
    hub_ids: &["Eco-Tech/GLM-5.2-w8a8"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/GLM-5.2-w8a8",
    checkpoint: Some("zai-org/GLM-5.2"),
    ..GLM_5_2_FAMILY
};

/// GLM-5.2 w8a8 with C8 KV (e2e only: tests/e2e/nightly/multi_node/external_dp/config/
/// GLM-5.2-W8A8C8-128k-1k-90-50-PD.yaml; one weekly file spells it `W8A8C8`,
/// which the case-insensitive lookup covers; family facts: `GLM_5_2_FAMILY`).
pub static GLM_5_2_W8A8C8: Model = Model {
    id: "glm_5_2_w8a8c8",
    weights: "GLM-5.2-w8a8c8",
    source: "ModelScope Eco-Tech/GLM-5.2-w8a8c8",
    hub_ids: &["Eco-Tech/GLM-5.2-w8a8c8"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/GLM-5.2-w8a8c8",
    kv_c8: true,
    checkpoint: Some("zai-org/GLM-5.2"),
    ..GLM_5_2_FAMILY
};

/// GLM-5.2 w4a8 with C8 KV (1 A3 or 2 A2; "a single Atlas 800 A2 node cannot fit"
/// it; tests/e2e/weekly/multi_node/external_dp/config/GLM-5.2-W4A8C8-1M-PD-DCP.yaml;
/// family facts: `GLM_5_2_FAMILY`).
pub static GLM_5_2_W4A8C8: Model = Model {
    id: "glm_5_2_w4a8c8",
    weights: "GLM-5.2-w4a8c8",
    source: "ModelScope Eco-Tech/GLM-5.2-w4a8c8",
    hub_ids: &["Eco-Tech/GLM-5.2-w4a8c8"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/GLM-5.2-w4a8c8",
    kv_c8: true,
    checkpoint: Some("zai-org/GLM-5.2"),
    ..GLM_5_2_FAMILY
};

/// Kimi-K2-Instruct w8a8, the text-only first Kimi-K2
/// (`DeepseekV3ForCausalLM` shape, no vision tower):
/// tests/e2e/nightly/multi_node/config/Kimi-K2-Instruct-W8A8.yaml @v0.18.0 and
/// @v0.19.1rc1 serve `vllm-ascend/Kimi-K2-Instruct-W8A8` with
/// `--quantization ascend` and no `--served-model-name`. Family facts:
/// `KIMI_K2`.
pub static KIMI_K2_INSTRUCT_W8A8: Model = Model {
    id: "kimi_k2_instruct_w8a8",
    weights: "Kimi-K2-Instruct-W8A8",
    source: "ModelScope vllm-ascend/Kimi-K2-Instruct-W8A8",
    hub_ids: &["vllm-ascend/Kimi-K2-Instruct-W8A8"],
    default_path: "/root/.cache/modelscope/hub/models/vllm-ascend/Kimi-K2-Instruct-W8A8",
    served_name: "kimi_k2",
    multimodal: false,
    checkpoint: Some("moonshotai/Kimi-K2-Instruct"),
    ..KIMI_K2
};

/// Kimi-K2.5 w4a8 (docs/source/tutorials/models/Kimi-K2.5.md L21-22: 1 A3 or 2 A2,
/// `--quantization ascend`, `--served-model-name kimi_k25`, eagle3 draft
/// `lightseekorg/kimi-k2.5-eagle3`; tests/e2e/nightly/single_node/models/configs/
/// Kimi-K2.5.yaml passes `--mm-processor-cache-gb`). Family facts: `KIMI_K2`.
pub static KIMI_K2_5_W4A8: Model = Model {
    id: "kimi_k2_5_w4a8",
    weights: "Kimi-K2.5-W4A8",
    source: "ModelScope Eco-Tech/Kimi-K2.5-W4A8",
    hub_ids: &["Eco-Tech/Kimi-K2.5-W4A8"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/Kimi-K2.5-W4A8",
    served_name: "kimi_k25",
    drafts: &[
        Draft {
            method: "eagle3",
            model: "lightseekorg/kimi-k2.5-eagle3",
        },
        Draft {
            method: "dflash",
            model: "z-lab/Kimi-K2.5-DFlash",
        },
    ],
    checkpoint: Some("moonshotai/Kimi-K2.5"),
    ..KIMI_K2
};

/// Kimi-K2.6 w4a8 (docs/source/tutorials/models/Kimi-K2.6.md L21-23, whose link
/// spells it `Kimi-K2.6-W4A8`: eagle3 draft `lightseekorg/kimi-k2.6-eagle3`,
/// dflash draft `z-lab/Kimi-K2.5-DFlash`, `--served-model-name kimi_k26`;
/// tests/e2e/nightly/multi_node/external_dp/config/Kimi-K2.6-W4A8-64k-1k-TPOT50-PD.yaml).
/// Family facts: `KIMI_K2`.
pub static KIMI_K2_6_W4A8: Model = Model {
    id: "kimi_k2_6_w4a8",
    weights: "Kimi-K2.6-w4a8",
    source: "ModelScope Eco-Tech/Kimi-K2.6-w4a8",
    hub_ids: &["Eco-Tech/Kimi-K2.6-w4a8"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/Kimi-K2.6-w4a8",
    served_name: "kimi_k26",
    drafts: &[
        Draft {
            method: "eagle3",
            model: "lightseekorg/kimi-k2.6-eagle3",
        },
        Draft {
            method: "dflash",
            model: "z-lab/Kimi-K2.5-DFlash",
        },
    ],
    checkpoint: Some("nvidia/Kimi-K2.6-NVFP4"),
    ..KIMI_K2
};

/// Kimi-K2.7-Code w4a8 (e2e only, no tutorial: tests/e2e/weekly/multi_node/
/// external_dp/config/Kimi-K2.7-W4A8-*-PD.yaml, dflash draft
/// `z-lab/Kimi-K2.5-DFlash`). The served name follows K2.5/K2.6 (our choice).
/// Multimodal per a third-party copy of its config (`kimi_k25` wrapper), not
/// re-checked; no rule reads it. Family facts: `KIMI_K2`.
pub static KIMI_K2_7_CODE_W4A8: Model = Model {
    id: "kimi_k2_7_code_w4a8",
    weights: "Kimi-K2.7-Code-w4a8",
    source: "ModelScope Eco-Tech/Kimi-K2.7-Code-w4a8",
    hub_ids: &["Eco-Tech/Kimi-K2.7-Code-w4a8"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/Kimi-K2.7-Code-w4a8",
    served_name: "kimi_k27",
    drafts: &[Draft {
        method: "dflash",
        model: "z-lab/Kimi-K2.5-DFlash",
    }],
    checkpoint: Some("nvidia/Kimi-K2.7-Code-NVFP4"),
    ..KIMI_K2
};

/// Qwen3-235B-A22B BF16 (docs/source/tutorials/models/Qwen3-235B-A22B.md L27,
/// `--served-model-name qwen3`; tests/e2e/nightly/multi_node/internal_dp/config/
/// Qwen3-235B-A22B.yaml runs it without `--quantization`). Family facts: `QWEN3_235B`.
pub static QWEN3_235B_A22B: Model = Model {
    id: "qwen3_235b_a22b",
    weights: "Qwen3-235B-A22B",
    source: "ModelScope Qwen/Qwen3-235B-A22B",
    hub_ids: &["Qwen/Qwen3-235B-A22B"],
    default_path: "/root/.cache/modelscope/hub/models/Qwen/Qwen3-235B-A22B",
    quantization: None,
    checkpoint: Some("Qwen/Qwen3-235B-A22B"),
    ..QWEN3_235B
};

/// Qwen3-235B-A22B w8a8 (tutorial L33 links `Modelers_Park/Qwen3-235B-A22B-w8a8`;
/// the e2e runs serve `vllm-ascend/Qwen3-235B-A22B-W8A8`, e.g. tests/e2e/weekly/
/// multi_node/external_dp/config/QWEN3_235B_PD.yaml; `--quantization ascend`).
/// Family facts: `QWEN3_235B`.
pub static QWEN3_235B_A22B_W8A8: Model = Model {
    id: "qwen3_235b_a22b_w8a8",
    weights: "Qwen3-235B-A22B-W8A8",
    source: "ModelScope vllm-ascend/Qwen3-235B-A22B-W8A8",
    hub_ids: &[
        "vllm-ascend/Qwen3-235B-A22B-W8A8",
        "Modelers_Park/Qwen3-235B-A22B-w8a8",
    ],
    default_path: "/root/.cache/modelscope/hub/models/vllm-ascend/Qwen3-235B-A22B-W8A8",
    checkpoint: Some("Qwen/Qwen3-235B-A22B"),
    ..QWEN3_235B
};

/// Qwen3-235B-A22B w8a8 QuaRot (tests/e2e/weekly/single_node/configs/
/// Qwen3_235b_w8a8_A5.yaml: the 950DT run, DP4 x TP2). Family facts: `QWEN3_235B`.
pub static QWEN3_235B_A22B_W8A8_QUAROT: Model = Model {
    id: "qwen3_235b_a22b_w8a8_quarot",
    weights: "Qwen3-235B-A22B-w8a8-QuaRot",
    source: "ModelScope Eco-Tech/Qwen3-235B-A22B-w8a8-QuaRot",
    hub_ids: &["Eco-Tech/Qwen3-235B-A22B-w8a8-QuaRot"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/Qwen3-235B-A22B-w8a8-QuaRot",
    checkpoint: Some("Qwen/Qwen3-235B-A22B"),
    ..QWEN3_235B
};

/// Qwen3-235B-A22B w8a8 mxfp0 (tests/e2e/nightly/multi_node/internal_dp/config/
/// Qwen3-235B-W8A8-EPLB-mxfp0.yaml serves it from the local path
/// `/root/.cache/modelscope/hub/models/vllm-ascend/Qwen3-235B-A22B-w8a8-mxfp0`).
/// Family facts: `QWEN3_235B`.
pub static QWEN3_235B_A22B_W8A8_MXFP0: Model = Model {
    id: "qwen3_235b_a22b_w8a8_mxfp0",
    weights: "Qwen3-235B-A22B-w8a8-mxfp0",
    source: "local build vllm-ascend/Qwen3-235B-A22B-w8a8-mxfp0",
    hub_ids: &["vllm-ascend/Qwen3-235B-A22B-w8a8-mxfp0"],
    default_path: "/root/.cache/modelscope/hub/models/vllm-ascend/Qwen3-235B-A22B-w8a8-mxfp0",
    checkpoint: Some("Qwen/Qwen3-235B-A22B"),
    ..QWEN3_235B
};

/// Qwen3-VL-235B-A22B-Instruct BF16 (docs/source/tutorials/models/
/// Qwen3-VL-235B-A22B-Instruct.md L21: "remove [`--quantization`] when deploying
/// the BF16 model", `--served-model-name qwen3-vl-235b`). Family facts:
/// `QWEN3_VL_235B`.
pub static QWEN3_VL_235B_A22B_INSTRUCT: Model = Model {
    id: "qwen3_vl_235b_a22b_instruct",
    weights: "Qwen3-VL-235B-A22B-Instruct",
    source: "ModelScope Qwen/Qwen3-VL-235B-A22B-Instruct",
    hub_ids: &["Qwen/Qwen3-VL-235B-A22B-Instruct"],
    default_path: "/root/.cache/modelscope/hub/models/Qwen/Qwen3-VL-235B-A22B-Instruct",
    quantization: None,
    checkpoint: Some("Qwen/Qwen3-VL-235B-A22B-Instruct"),
    ..QWEN3_VL_235B
};

/// Qwen3-VL-235B-A22B-Instruct w8a8 QuaRot (tutorial L22: 1 A3; tests/e2e/
/// nightly/single_node/models/configs/Qwen3-VL-235B-A22B-Instruct-W8A8.yaml).
/// Family facts: `QWEN3_VL_235B`.
pub static QWEN3_VL_235B_A22B_INSTRUCT_W8A8_QUAROT: Model = Model {
    id: "qwen3_vl_235b_a22b_instruct_w8a8_quarot",
    weights: "Qwen3-VL-235B-A22B-Instruct-w8a8-QuaRot",
    source: "ModelScope Eco-Tech/Qwen3-VL-235B-A22B-Instruct-w8a8-QuaRot",
    hub_ids: &["Eco-Tech/Qwen3-VL-235B-A22B-Instruct-w8a8-QuaRot"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/Qwen3-VL-235B-A22B-Instruct-w8a8-QuaRot",
    checkpoint: Some("Qwen/Qwen3-VL-235B-A22B-Instruct"),
    ..QWEN3_VL_235B
};

/// Qwen3-VL-235B-A22B-Instruct w8a8 mxfp8 for 950DT (tutorial L23: "requires
/// 1 Ascend 950DT (96G x 8) node").
/// Family facts: `QWEN3_VL_235B`.
pub static QWEN3_VL_235B_A22B_INSTRUCT_W8A8_MXFP8: Model = Model {
    id: "qwen3_vl_235b_a22b_instruct_w8a8_mxfp8",
    weights: "Qwen3-VL-235B-A22B-Instruct-w8a8-mxfp8",
    source: "ModelScope Eco-Tech/Qwen3-VL-235B-A22B-Instruct-w8a8-mxfp8",
    hub_ids: &["Eco-Tech/Qwen3-VL-235B-A22B-Instruct-w8a8-mxfp8"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/Qwen3-VL-235B-A22B-Instruct-w8a8-mxfp8",
    checkpoint: Some("Qwen/Qwen3-VL-235B-A22B-Instruct"),
    ..QWEN3_VL_235B
};

/// MiniMax-M2.7 w8a8 QuaRot (docs/source/tutorials/models/MiniMax-M2.md L25-29:
/// 1 A3 or 1 A2, `--served-model-name minimax`, eagle3 draft
/// `Eco-Tech/MiniMax-M2.7-eagle-model-short`; tests/e2e/nightly/multi_node/
/// external_dp/config/Minimax_m2.7_in128k_1k_prefix90_tpot50.yaml). Family facts: `MINIMAX_M2`.
pub static MINIMAX_M2_7_W8A8_QUAROT: Model = Model {
    id: "minimax_m2_7_w8a8_quarot",
    weights: "MiniMax-M2.7-w8a8-QuaRot",
    source: "ModelScope vllm-ascend/MiniMax-M2.7-w8a8-QuaRot",
    hub_ids: &["vllm-ascend/MiniMax-M2.7-w8a8-QuaRot"],
    default_path: "/root/.cache/modelscope/hub/models/vllm-ascend/MiniMax-M2.7-w8a8-QuaRot",
    drafts: &[Draft {
        method: "eagle3",
        model: "Eco-Tech/MiniMax-M2.7-eagle-model-short",
    }],
    checkpoint: Some("MiniMaxAI/MiniMax-M2.7"),
    ..MINIMAX_M2
};

/// MiniMax-M2.7 w8a8 with C8 KV, QuaRot (MiniMax-M2.md L27, same hardware as
/// w8a8). No draft: "C8 quantization with EAGLE3 is currently unsupported"
/// (MiniMax-M2.md L611-613). Family facts: `MINIMAX_M2`.
pub static MINIMAX_M2_7_W8A8C8_QUAROT: Model = Model {
    id: "minimax_m2_7_w8a8c8_quarot",
    weights: "MiniMax-M2.7-w8a8c8-QuaRot",
    source: "ModelScope vllm-ascend/MiniMax-M2.7-w8a8c8-QuaRot",
    hub_ids: &["vllm-ascend/MiniMax-M2.7-w8a8c8-QuaRot"],
    default_path: "/root/.cache/modelscope/hub/models/vllm-ascend/MiniMax-M2.7-w8a8c8-QuaRot",
    kv_c8: true,
    checkpoint: Some("MiniMaxAI/MiniMax-M2.7"),
    ..MINIMAX_M2
};

/// MiniMax-M2.5 w8a8 QuaRot (MiniMax-M2.md L26; eagle3 draft
/// `vllm-ascend/MiniMax-M2.5-eagle-model-0318` in tests/e2e/nightly/
/// single_node/models/configs/MiniMax-M2.5-w8a8-QuaRot-A3.yaml). Family facts: `MINIMAX_M2`.
pub static MINIMAX_M2_5_W8A8_QUAROT: Model = Model {
    id: "minimax_m2_5_w8a8_quarot",
    weights: "MiniMax-M2.5-w8a8-QuaRot",
    source: "ModelScope Eco-Tech/MiniMax-M2.5-w8a8-QuaRot",
    hub_ids: &["Eco-Tech/MiniMax-M2.5-w8a8-QuaRot"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/MiniMax-M2.5-w8a8-QuaRot",
    drafts: &[Draft {
        method: "eagle3",
        model: "vllm-ascend/MiniMax-M2.5-eagle-model-0318",
    }],
    checkpoint: Some("MiniMaxAI/MiniMax-M2.5"),
    ..MINIMAX_M2
};
