//! The DeepSeek builds of the model table (V3, V3.1, R1, V3.2, V4).

use super::*;

/// DeepSeek-V4-Flash w8a8 with MTP (DeepSeek-V4-Flash.md @v0.21.0rc1; family
/// facts: `DEEPSEEK_V4`).
/// Family facts: `DEEPSEEK_V4`.
pub static DEEPSEEK_V4_FLASH_W8A8_MTP: Model = Model {
    id: "deepseek_v4_flash_w8a8_mtp",
    weights: "DeepSeek-V4-Flash-w8a8-mtp",
    source: "ModelScope Eco-Tech/DeepSeek-V4-Flash-w8a8-mtp",
    hub_ids: &["Eco-Tech/DeepSeek-V4-Flash-w8a8-mtp"],
    default_path: "/root/.cache/modelscope/hub/models/vllm-ascend/DeepSeek-V4-Flash-w8a8-mtp",
    checkpoint: Some("deepseek-ai/DeepSeek-V4-Flash"),
    ..DEEPSEEK_V4
};

/// DeepSeek-V4.1-Flash w8a8 (docs/source/tutorials/models/DeepSeek-V4.1-Flash.md
/// @v0.30.0rc1; tests/e2e/cases/models/configs/DeepSeek/
/// DeepSeek-V4.1-Flash-w8a8-PD-prefix.yaml): `--quantization ascend`,
/// `--tokenizer-mode deepseek_v41`, the DSpark draft inside the checkpoint
/// (no MTP layer, no separate draft weights), a hybrid cache the PD runs
/// move with `MooncakeHybridConnector`. The served name is our choice (the
/// tutorial's is a placeholder). Dimensions are not sized
/// ([`crate::dims::UNSIZED`]).
pub static DEEPSEEK_V4_1_FLASH_W8A8: Model = Model {
    id: "deepseek_v4_1_flash_w8a8",
    weights: "DeepSeek-V4.1-Flash-w8a8",
    source: "ModelScope Eco-Tech/DeepSeek-V4.1-Flash-w8a8",
    hub_ids: &["Eco-Tech/DeepSeek-V4.1-Flash-w8a8"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/DeepSeek-V4.1-Flash-w8a8",
    served_name: "dsv41",
    quantization: Some("ascend"),
    mtp: false,
    moe: true,
    hybrid_kv: true,
    attention: Attention::V41Ced,
    multimodal: true,
    drafts: &[],
    tokenizer_mode: Some("deepseek_v41"),
    kv_c8: false,
    // vllm_ascend/models/__init__.py L39 @v0.30.0rc1 registers it; the
    // tutorial (DeepSeek-V4.1-Flash.md L379-381) maps it.
    architecture: Some("DeepseekV41ForCausalLM"),
    // Multimodal: the text config's type is not named upstream for it.
    model_type: None,
    checkpoint: None,
};

/// DeepSeek-V3.1 w8a8 with hybrid MTP, QuaRot (DeepSeek-V3.1.md §3.1).
/// Family facts: `DEEPSEEK_V3`.
pub static DEEPSEEK_V3_1_W8A8_MTP_QUAROT: Model = Model {
    id: "deepseek_v3_1_w8a8_mtp_quarot",
    weights: "DeepSeek-V3.1-w8a8-mtp-QuaRot",
    source: "ModelScope DeepSeek-V3.1-w8a8-mtp-QuaRot",
    hub_ids: &["Eco-Tech/DeepSeek-V3.1-w8a8-mtp-QuaRot"],
    default_path: "/weights/DeepSeek-V3.1-w8a8-mtp-QuaRot",
    checkpoint: Some("nvidia/DeepSeek-V3.1-NVFP4"),
    ..DEEPSEEK_V3
};

/// DeepSeek-V3.1 BF16 (DeepSeek-V3.1.md §3.1).
/// Family facts: `DEEPSEEK_V3`.
pub static DEEPSEEK_V3_1_BF16: Model = Model {
    id: "deepseek_v3_1",
    weights: "DeepSeek-V3.1",
    source: "ModelScope DeepSeek-V3.1",
    hub_ids: &["deepseek-ai/DeepSeek-V3.1", "unsloth/DeepSeek-V3.1-BF16"],
    default_path: "/weights/DeepSeek-V3.1",
    quantization: None,
    checkpoint: Some("nvidia/DeepSeek-V3.1-NVFP4"),
    ..DEEPSEEK_V3
};

/// DeepSeek-V3.1-Terminus w4a8 with hybrid MTP, QuaRot (DeepSeek-V3.1.md §3.1).
/// Family facts: `DEEPSEEK_V3`.
pub static DEEPSEEK_V3_1_TERMINUS_W4A8_MTP_QUAROT: Model = Model {
    id: "deepseek_v3_1_terminus_w4a8_mtp_quarot",
    weights: "DeepSeek-V3.1-Terminus-w4a8-mtp-QuaRot",
    source: "ModelScope DeepSeek-V3.1-Terminus-w4a8-mtp-QuaRot",
    hub_ids: &["Eco-Tech/DeepSeek-V3.1-Terminus-w4a8-mtp-QuaRot"],
    default_path: "/weights/DeepSeek-V3.1-Terminus-w4a8-mtp-QuaRot",
    ..DEEPSEEK_V3
};

/// DeepSeek-V3.1 w4a4 MLP + w8a8c8 attention, mxfp4 (DeepSeek-V3.1.md §3.1;
/// the 950DT single-node command serves it).
/// Family facts: `DEEPSEEK_V3`.
pub static DEEPSEEK_V3_1_W4A4C8_MXFP4: Model = Model {
    id: "deepseek_v3_1_w4a4c8_mxfp4",
    weights: "DeepSeek-V3.1-w4a4c8-mxfp4",
    source: "ModelScope DeepSeek-V3.1-w4a4c8-mxfp4",
    hub_ids: &["Eco-Tech/DeepSeek-V3.1-w4a4c8-mxfp4"],
    default_path: "/weight/dsk-v3.1-w4a4_mlp-w8a8c8_attn-0618-full",
    kv_c8: true,
    checkpoint: Some("nvidia/DeepSeek-V3.1-NVFP4"),
    ..DEEPSEEK_V3
};

/// DeepSeek-V3.1 w8a8c8 mxfp8 (DeepSeek-V3.1.md §3.1; the 950DT 2P1D serves
/// a Terminus w8a8c8 build of it).
/// Family facts: `DEEPSEEK_V3`.
pub static DEEPSEEK_V3_1_W8A8C8_MXFP8: Model = Model {
    id: "deepseek_v3_1_w8a8c8_mxfp8",
    weights: "DeepSeek-V3.1-w8a8c8-mxfp8",
    source: "ModelScope DeepSeek-V3.1-w8a8c8-mxfp8",
    hub_ids: &["Eco-Tech/DeepSeek-V3.1-w8a8c8-mxfp8"],
    default_path: "/weight/dsk_v3.1-T-w8a8c8_attn-0506-full/",
    served_name: "dsv3",
    kv_c8: true,
    checkpoint: Some("nvidia/DeepSeek-V3.1-NVFP4"),
    ..DEEPSEEK_V3
};

/// DeepSeek-V3.1-Terminus w8a8 with MTP, QuaRot: the weights of upstream's weekly
/// PD runs (tests/e2e/weekly/multi_node/external_dp/config/DeepSeek_V3.1T_MTP1_PD.yaml,
/// `_MTP3_PD`, `_layerwise_PD`: `--quantization ascend`, `mtp` with 1 or 3 tokens).
/// Family facts: `DEEPSEEK_V3`.
pub static DEEPSEEK_V3_1_TERMINUS_W8A8_MTP_QUAROT: Model = Model {
    id: "deepseek_v3_1_terminus_w8a8_mtp_quarot",
    weights: "DeepSeek-V3.1-Terminus-w8a8-mtp-QuaRot",
    source: "ModelScope Eco-Tech/DeepSeek-V3.1-Terminus-w8a8-mtp-QuaRot",
    hub_ids: &["Eco-Tech/DeepSeek-V3.1-Terminus-w8a8-mtp-QuaRot"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/DeepSeek-V3.1-Terminus-w8a8-mtp-QuaRot",
    ..DEEPSEEK_V3
};

/// DeepSeek-V3 w8a8 (tests/e2e/weekly/multi_node/internal_dp/config/DeepSeek-V3.yaml,
/// `--quantization ascend`, no speculative config). No upstream run uses MTP
/// with these weights, so the table does not claim an MTP layer.
/// Family facts: `DEEPSEEK_V3`.
pub static DEEPSEEK_V3_W8A8: Model = Model {
    id: "deepseek_v3_w8a8",
    weights: "DeepSeek-V3-W8A8",
    source: "ModelScope vllm-ascend/DeepSeek-V3-W8A8",
    hub_ids: &["vllm-ascend/DeepSeek-V3-W8A8"],
    default_path: "/root/.cache/modelscope/hub/models/vllm-ascend/DeepSeek-V3-W8A8",
    mtp: false,
    checkpoint: Some("deepseek-ai/DeepSeek-V3"),
    ..DEEPSEEK_V3
};

/// DeepSeek-R1 w8a8 (docs/source/tutorials/models/DeepSeek-R1.md L22: 1 A3 or
/// 2 A2 nodes; `--quantization ascend`, `--served-model-name deepseek_r1`,
/// `"method":"mtp"` in its commands).
/// Family facts: `DEEPSEEK_V3`.
pub static DEEPSEEK_R1_W8A8: Model = Model {
    id: "deepseek_r1_w8a8",
    weights: "DeepSeek-R1-W8A8",
    source: "ModelScope vllm-ascend/DeepSeek-R1-W8A8",
    hub_ids: &["vllm-ascend/DeepSeek-R1-W8A8"],
    default_path: "/root/.cache/modelscope/hub/models/vllm-ascend/DeepSeek-R1-W8A8",
    served_name: "deepseek_r1",
    checkpoint: Some("deepseek-ai/DeepSeek-R1"),
    ..DEEPSEEK_V3
};

/// DeepSeek-R1-0528 w8a8 (tests/e2e/nightly/single_node/models/configs/
/// DeepSeek-R1-0528-W8A8.yaml, MTPX-DeepSeek-R1-0528-W8A8.yaml and
/// multi_node/internal_dp/config/DeepSeek-R1-W8A8-EPLB.yaml: `mtp` 1-3 tokens).
/// Family facts: `DEEPSEEK_V3`.
pub static DEEPSEEK_R1_0528_W8A8: Model = Model {
    id: "deepseek_r1_0528_w8a8",
    weights: "DeepSeek-R1-0528-W8A8",
    source: "ModelScope vllm-ascend/DeepSeek-R1-0528-W8A8",
    hub_ids: &["vllm-ascend/DeepSeek-R1-0528-W8A8"],
    default_path: "/root/.cache/modelscope/hub/models/vllm-ascend/DeepSeek-R1-0528-W8A8",
    served_name: "deepseek_r1",
    ..DEEPSEEK_V3
};

/// DeepSeek-R1-0528 w8a8 with MTP, QuaRot (tests/e2e/nightly/single_node/models/
/// configs/Deepseek_R1_W8A8_A3.yaml: `deepseek_mtp`).
/// Family facts: `DEEPSEEK_V3`.
pub static DEEPSEEK_R1_0528_W8A8_MTP_QUAROT: Model = Model {
    id: "deepseek_r1_0528_w8a8_mtp_quarot",
    weights: "DeepSeek-R1-0528-w8a8-mtp-QuaRot",
    source: "ModelScope Eco-Tech/DeepSeek-R1-0528-w8a8-mtp-QuaRot",
    hub_ids: &["Eco-Tech/DeepSeek-R1-0528-w8a8-mtp-QuaRot"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/DeepSeek-R1-0528-w8a8-mtp-QuaRot",
    served_name: "deepseek_r1",
    ..DEEPSEEK_V3
};

/// DeepSeek-V3.2 w8a8 (docs/source/tutorials/models/DeepSeek-V3.2.md L19-20;
/// family facts: `DEEPSEEK_V3_2`).
pub static DEEPSEEK_V3_2_W8A8: Model = Model {
    id: "deepseek_v3_2_w8a8",
    weights: "DeepSeek-V3.2-W8A8",
    source: "ModelScope vllm-ascend/DeepSeek-V3.2-W8A8",
    hub_ids: &["vllm-ascend/DeepSeek-V3.2-W8A8"],
    default_path: "/root/.cache/modelscope/hub/models/vllm-ascend/DeepSeek-V3.2-W8A8",
    checkpoint: Some("deepseek-ai/DeepSeek-V3.2"),
    ..DEEPSEEK_V3_2
};

/// DeepSeek-V3.2-Exp w8a8 (docs/source/tutorials/models/DeepSeek-V3.2.md L19:
/// same hardware and commands as V3.2; family facts: `DEEPSEEK_V3_2`).
pub static DEEPSEEK_V3_2_EXP_W8A8: Model = Model {
    id: "deepseek_v3_2_exp_w8a8",
    weights: "DeepSeek-V3.2-Exp-W8A8",
    source: "ModelScope vllm-ascend/DeepSeek-V3.2-Exp-W8A8",
    hub_ids: &["vllm-ascend/DeepSeek-V3.2-Exp-W8A8"],
    default_path: "/root/.cache/modelscope/hub/models/vllm-ascend/DeepSeek-V3.2-Exp-W8A8",
    ..DEEPSEEK_V3_2
};

/// DeepSeek-V4-Pro w4a8 with MTP (docs/source/tutorials/models/DeepSeek-V4-Pro.md
/// L26: 2 A3 or 4 A2 nodes, `"method":"mtp"`; tests/e2e/nightly/multi_node/
/// external_dp/config/DeepSeek-V4-Pro-w4a8-1M-PD.yaml). Family facts:
/// `DEEPSEEK_V4`.
pub static DEEPSEEK_V4_PRO_W4A8_MTP: Model = Model {
    id: "deepseek_v4_pro_w4a8_mtp",
    weights: "DeepSeek-V4-Pro-w4a8-mtp",
    source: "ModelScope Eco-Tech/DeepSeek-V4-Pro-w4a8-mtp",
    hub_ids: &["Eco-Tech/DeepSeek-V4-Pro-w4a8-mtp"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/DeepSeek-V4-Pro-w4a8-mtp",
    checkpoint: Some("deepseek-ai/DeepSeek-V4-Pro"),
    ..DEEPSEEK_V4
};
