//! The closed tables: hardware, models and vllm-ascend images.
//!
//! A layout names entries of these tables by identifier; the macro checks the
//! names at compile time. A new model, image or hardware kind is one entry here.

use serde::Serialize;
use std::cmp::Ordering;
use std::fmt;

// ---------------------------------------------------------------------------
// Hardware
// ---------------------------------------------------------------------------

/// The hardware family of a node. P and D must share one (facts §10.21,
/// `Design_Documents/disaggregated_prefill.md` Limitations).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HardwareFamily {
    /// Atlas 800 A2 / A3 (Ascend 910 generation).
    Atlas800,
    /// Ascend 950DT (A5).
    Ascend950,
}

/// One kind of node.
#[derive(Debug, Serialize)]
pub struct Hardware {
    /// Identifier used in layouts (`hardware: a3`).
    pub id: &'static str,
    /// Product name.
    pub product: &'static str,
    /// Family for the P/D homogeneity rule.
    pub family: HardwareFamily,
    /// NPUs per node as the runtime counts them (`/dev/davinciN`).
    pub npus_per_node: u32,
    /// HBM per NPU in GB as the docs state it.
    pub hbm_gb_per_npu: u32,
    /// `SOC_VERSION` of the chip.
    pub soc_version: &'static str,
    /// Extra device nodes the container needs besides `/dev/davinciN`.
    pub extra_devices: &'static [&'static str],
    /// Host paths mounted into the container (host:container are equal).
    pub mounts: &'static [&'static str],
    /// Whether the upstream docker command runs `--privileged=true`.
    pub privileged: bool,
    /// Host files/directories that must exist before start (preflight).
    pub required_host_paths: &'static [&'static str],
    /// True when MLAPO only takes effect on pure decode instances
    /// (A2/A3; `vllm_ascend/attention/utils.py` @HEAD L520-530).
    pub mlapo_decode_only: bool,
}

/// Device nodes the A2/A3 docker commands add besides `/dev/davinciN`.
const ATLAS_800_DEVICES: &[&str] = &["/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"];

/// Host paths the A2/A3 docker commands mount (PD and V4 docs add
/// `/etc/hccn.conf`; facts §7).
const ATLAS_800_MOUNTS: &[&str] = &[
    "/usr/local/dcmi",
    "/usr/local/Ascend/driver/tools/hccn_tool",
    "/usr/local/bin/npu-smi",
    "/usr/local/Ascend/driver/lib64/",
    "/usr/local/Ascend/driver/version.info",
    "/etc/ascend_install.info",
    "/etc/hccn.conf",
    "/root/.cache",
];

/// Atlas 800 A2: 8 NPUs x 64 GB (installation.md @HEAD L305-308).
pub static A2: Hardware = Hardware {
    id: "a2",
    product: "Atlas 800 A2",
    family: HardwareFamily::Atlas800,
    npus_per_node: 8,
    hbm_gb_per_npu: 64,
    soc_version: "ascend910b1",
    extra_devices: ATLAS_800_DEVICES,
    mounts: ATLAS_800_MOUNTS,
    privileged: true,
    required_host_paths: &["/etc/hccn.conf"],
    mlapo_decode_only: true,
};

/// Atlas 800 A3: 16 NPUs = 8 cards x 2 dies, 64 GB each (Dots3-Note.md @HEAD L42).
pub static A3: Hardware = Hardware {
    id: "a3",
    product: "Atlas 800 A3",
    family: HardwareFamily::Atlas800,
    npus_per_node: 16,
    hbm_gb_per_npu: 64,
    soc_version: "ascend910_9391",
    extra_devices: ATLAS_800_DEVICES,
    mounts: ATLAS_800_MOUNTS,
    privileged: true,
    required_host_paths: &["/etc/hccn.conf"],
    mlapo_decode_only: true,
};

/// Ascend 950DT (A5): 8 NPUs x 96 GB; needs `/dev/ummu`, `/dev/uburma` and
/// `/etc/hixlep` (DeepSeek-V3.1.md @HEAD L52-80; installation.md L606-612).
pub static A950DT: Hardware = Hardware {
    id: "ascend_950dt",
    product: "Ascend 950DT",
    family: HardwareFamily::Ascend950,
    npus_per_node: 8,
    hbm_gb_per_npu: 96,
    soc_version: "ascend950dt_9582",
    extra_devices: &[
        "/dev/davinci_manager",
        "/dev/hisi_hdc",
        "/dev/ummu",
        "/dev/uburma",
    ],
    mounts: &[
        "/usr/local/Ascend/driver",
        "/etc/ascend_install.info",
        "/etc/hixlep/",
        "/root/.cache",
        "/usr/local/sbin",
        "/usr/local/dcmi",
        "/usr/local/bin/npu-smi",
        "/usr/local/sbin/npu-smi",
        "/usr/lib64",
    ],
    privileged: false,
    required_host_paths: &["/lib/route.conf", "/etc/hccl_rootinfo.json", "/etc/hixlep"],
    mlapo_decode_only: false,
};

impl Hardware {
    /// Host paths the node's container mounts (same path inside): the
    /// upstream docker command's mounts, then every path preflight requires
    /// (`required_host_paths`) that none of them covers, so a check preflight
    /// runs inside the container can pass (installation.md L606-612 lists
    /// `/lib/route.conf` and `/etc/hccl_rootinfo.json` for 950DT, which the
    /// tutorial's docker command does not mount).
    pub fn container_mounts(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = self.mounts.to_vec();
        for p in self.required_host_paths {
            if !self.mounts.iter().any(|m| covers(m, p)) {
                out.push(p);
            }
        }
        out
    }
}

/// Whether mounting `mount` makes `path` visible at the same place.
fn covers(mount: &str, path: &str) -> bool {
    let m = mount.trim_end_matches('/');
    let p = path.trim_end_matches('/');
    p == m || p.strip_prefix(m).is_some_and(|rest| rest.starts_with('/'))
}

/// Every hardware kind, in table order.
pub static HARDWARE: [&Hardware; 3] = [&A2, &A3, &A950DT];

/// Looks a hardware kind up by its layout identifier.
pub fn hardware(id: &str) -> Option<&'static Hardware> {
    HARDWARE.iter().copied().find(|h| h.id == id)
}

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
        matches!(self, Attention::DsaSparse | Attention::V4Hybrid)
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
const DEEPSEEK_V3: Model = Model {
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
};

/// DeepSeek-V3.2: MLA plus the DSA indexer, one MTP layer (docs/source/
/// tutorials/models/DeepSeek-V3.2.md L19-20, `--served-model-name
/// deepseek_v3_2`, `deepseek_mtp`; tests/e2e/nightly/multi_node/internal_dp/
/// config/DeepSeek-V3_2-W8A8-EP.yaml: `--tokenizer-mode deepseek_v32`, MTP 2).
const DEEPSEEK_V3_2: Model = Model {
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
};

/// DeepSeek-V4: hybrid (sliding-window plus compressed) KV cache, one MTP
/// layer, `--served-model-name dsv4`, `--tokenizer-mode deepseek_v4`
/// (DeepSeek-V4-Flash.md @v0.21.0rc1; DeepSeek-V4-Pro.md).
const DEEPSEEK_V4: Model = Model {
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
};

/// GLM-5 and GLM-5.1 (docs/source/tutorials/models/GLM5.md L23-26:
/// `--quantization ascend`, `--served-model-name glm-5`, `deepseek_mtp`).
/// MLA + DSA indexer, one MTP layer (`model.layers.78`, GLM5.md L507-513).
/// Sparse attention confirmed upstream: the GLM C8 runs set
/// `enable_sparse_li_c8`, read only with it.
const GLM_5_FAMILY: Model = Model {
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
};

/// GLM-5.2 (docs/source/tutorials/models/GLM5.2.md L19-21: `--quantization
/// ascend`, `--served-model-name glm-52`, `deepseek_mtp`). MLA + DSA indexer
/// with IndexShare, one MTP layer; GLM5.2.md L186 advises
/// `enable_sparse_sfa_c8`, which only sparse-attention models read.
const GLM_5_2_FAMILY: Model = Model {
    served_name: "glm-52",
    ..GLM_5_FAMILY
};

/// GLM-5.3 (docs/source/tutorials/models/GLM5.3.md @v0.29.0rc1:
/// `--served-model-name glm-5` L195, `--quantization ascend` L204,
/// `enable_dsa_cp` L208, which only models with the DSA indexer read,
/// `deepseek_mtp` L209): the GLM-5 shape.
const GLM_5_3_FAMILY: Model = Model {
    served_name: "glm-5",
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
    ..GLM_5_3_FAMILY
};

/// Kimi-K2.x: the DeepSeek-V3 MLA shape (61 layers, 384 experts) with a
/// vision tower (`KimiK25ForConditionalGeneration`) and no MTP layer:
/// upstream drafts with eagle3 or dflash. MLA confirmed upstream: Kimi runs
/// the `DeepseekV2Model` (vllm_ascend/patch/worker/patch_eagle3_pp_aux.py
/// L32) and its tutorials enable MLAPO (Kimi-K2.5.md L145). Every build names
/// its own served name and drafts.
const KIMI_K2: Model = Model {
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
};

/// Qwen3-235B-A22B (docs/source/tutorials/models/Qwen3-235B-A22B.md,
/// `--served-model-name qwen3`). GQA: 64 query / 4 KV heads, 94 layers, 128
/// experts, no MTP layer (a third-party copy of the Hugging Face config; GQA
/// confirmed upstream: "a GQA model such as Qwen3-235B", context_parallel.md
/// L60; no upstream run uses MTP with it).
const QWEN3_235B: Model = Model {
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
const QWEN3_5_FAMILY: Model = Model {
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
};

/// Qwen3.5-397B-A17B w8a8 with MTP (Qwen3.5-397B-A17B.md L28; e2e:
/// tests/e2e/weekly/multi_node/external_dp/config/Qwen-3.5-397B-A17B-W8A8-PD.yaml).
pub static QWEN3_5_397B_A17B_W8A8_MTP: Model = Model {
    id: "qwen3_5_397b_a17b_w8a8_mtp",
    weights: "Qwen3.5-397B-A17B-w8a8-mtp",
    source: "ModelScope Eco-Tech/Qwen3.5-397B-A17B-w8a8-mtp",
    hub_ids: &["Eco-Tech/Qwen3.5-397B-A17B-w8a8-mtp"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/Qwen3.5-397B-A17B-w8a8-mtp",
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
    ..QWEN3_5_FAMILY
};

/// Qwen3-VL-235B-A22B-Instruct (docs/source/tutorials/models/
/// Qwen3-VL-235B-A22B-Instruct.md, `--served-model-name qwen3-vl-235b`).
/// Multimodal; its text decoder is taken as GQA like Qwen3 (the architecture
/// numbers were not found in a citable source), no MTP layer.
const QWEN3_VL_235B: Model = Model {
    served_name: "qwen3-vl-235b",
    multimodal: true,
    ..QWEN3_235B
};

/// MiniMax-M2.x (docs/source/tutorials/models/MiniMax-M2.md,
/// `--served-model-name minimax`). GQA (48 query / 8 KV heads, 62 layers, 256
/// experts, no shared expert) and no MTP layer per a third-party copy of the
/// Hugging Face config; GQA confirmed upstream ("MiniMax M2 C8 cache-scale
/// support in GQA `load_weights`", release_notes.md, #10461). Upstream drafts
/// with eagle3 only; each build names its own draft.
const MINIMAX_M2: Model = Model {
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
};

/// DeepSeek-V4-Flash w8a8 with MTP (DeepSeek-V4-Flash.md @v0.21.0rc1; family
/// facts: `DEEPSEEK_V4`).
/// Family facts: `DEEPSEEK_V4`.
pub static DEEPSEEK_V4_FLASH_W8A8_MTP: Model = Model {
    id: "deepseek_v4_flash_w8a8_mtp",
    weights: "DeepSeek-V4-Flash-w8a8-mtp",
    source: "ModelScope Eco-Tech/DeepSeek-V4-Flash-w8a8-mtp",
    hub_ids: &["Eco-Tech/DeepSeek-V4-Flash-w8a8-mtp"],
    default_path: "/root/.cache/modelscope/hub/models/vllm-ascend/DeepSeek-V4-Flash-w8a8-mtp",
    ..DEEPSEEK_V4
};

/// DeepSeek-V3.1 w8a8 with hybrid MTP, QuaRot (DeepSeek-V3.1.md §3.1).
/// Family facts: `DEEPSEEK_V3`.
pub static DEEPSEEK_V3_1_W8A8_MTP_QUAROT: Model = Model {
    id: "deepseek_v3_1_w8a8_mtp_quarot",
    weights: "DeepSeek-V3.1-w8a8-mtp-QuaRot",
    source: "ModelScope DeepSeek-V3.1-w8a8-mtp-QuaRot",
    hub_ids: &["Eco-Tech/DeepSeek-V3.1-w8a8-mtp-QuaRot"],
    default_path: "/weights/DeepSeek-V3.1-w8a8-mtp-QuaRot",
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
    ..DEEPSEEK_V4
};

/// GLM-5 BF16 (tutorial: "require at least 2 Atlas 800 A3"; family facts: `GLM_5_FAMILY`).
pub static GLM_5: Model = Model {
    id: "glm_5",
    weights: "GLM-5",
    source: "ModelScope ZhipuAI/GLM-5",
    hub_ids: &["ZhipuAI/GLM-5"],
    default_path: "/root/.cache/modelscope/hub/models/ZhipuAI/GLM-5",
    quantization: None,
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
    ..GLM_5_FAMILY
};

/// GLM-5 w8a8 (1 A3; family facts: `GLM_5_FAMILY`).
pub static GLM_5_W8A8: Model = Model {
    id: "glm_5_w8a8",
    weights: "GLM-5-w8a8",
    source: "ModelScope Eco-Tech/GLM-5-w8a8",
    hub_ids: &["Eco-Tech/GLM-5-w8a8"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/GLM-5-w8a8",
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
    ..GLM_5_FAMILY
};

/// GLM-5.1 w4a8 (modelers.cn; family facts: `GLM_5_FAMILY`).
pub static GLM_5_1_W4A8: Model = Model {
    id: "glm_5_1_w4a8",
    weights: "GLM-5.1-w4a8",
    source: "Modelers Eco-Tech/GLM-5.1-w4a8",
    hub_ids: &["Eco-Tech/GLM-5.1-w4a8"],
    default_path: "/weights/GLM-5.1-w4a8",
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
    ..GLM_5_2_FAMILY
};

/// GLM-5.2 w8a8 (1 A3 or 2 A2; family facts: `GLM_5_2_FAMILY`).
pub static GLM_5_2_W8A8: Model = Model {
    id: "glm_5_2_w8a8",
    weights: "GLM-5.2-w8a8",
    source: "ModelScope Eco-Tech/GLM-5.2-w8a8",
    hub_ids: &["Eco-Tech/GLM-5.2-w8a8"],
    default_path: "/root/.cache/modelscope/hub/models/Eco-Tech/GLM-5.2-w8a8",
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
    ..GLM_5_2_FAMILY
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
    ..MINIMAX_M2
};

/// Every model, in table order.
pub static MODELS: [&Model; 43] = [
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

// ---------------------------------------------------------------------------
// Versions and images
// ---------------------------------------------------------------------------

/// A vllm-ascend version `vMAJOR.MINOR.PATCH[rcN]`, ordered so that an rc
/// sorts before its final release.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Version {
    /// Major.
    pub major: u32,
    /// Minor.
    pub minor: u32,
    /// Patch.
    pub patch: u32,
    /// Release candidate number; `None` for a final release.
    pub rc: Option<u32>,
}

impl Version {
    /// Parses `v0.21.0rc1`, `v0.23.0`, `0.9.1rc3`.
    pub fn parse(text: &str) -> Option<Version> {
        let t = text.strip_prefix('v').unwrap_or(text);
        let (nums, rc) = match t.find("rc") {
            Some(i) => (&t[..i], Some(t[i + 2..].parse().ok()?)),
            None => (t, None),
        };
        let mut it = nums.split('.');
        let major = it.next()?.parse().ok()?;
        let minor = it.next()?.parse().ok()?;
        let patch = it.next()?.parse().ok()?;
        if it.next().is_some() {
            return None;
        }
        Some(Version {
            major,
            minor,
            patch,
            rc,
        })
    }
}

impl Ord for Version {
    fn cmp(&self, o: &Self) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(o.major, o.minor, o.patch))
            .then(match (self.rc, o.rc) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
                (Some(a), Some(b)) => a.cmp(&b),
            })
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}.{}.{}", self.major, self.minor, self.patch)?;
        if let Some(rc) = self.rc {
            write!(f, "rc{rc}")?;
        }
        Ok(())
    }
}

/// Where `recompute_scheduler_enable` may be set (facts §4.2, §4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecomputeRoles {
    /// v0.18.0 – v0.22.1rc1: P or D; a ValueError in PD-mixed mode
    /// (platform.py @v0.18.0 L461-468).
    PrefillOrDecode,
    /// v0.23.0rc1 and later: D only; ignored on P, ValueError when mixed
    /// (#11265, #11537; platform.py @HEAD L896-920).
    DecodeOnly,
}

/// One vllm-ascend image release with the differences the rules need.
#[derive(Debug, Serialize)]
pub struct Image {
    /// The tag without hardware suffix, as layouts write it.
    pub tag: &'static str,
    /// Commit date of the tag.
    pub date: &'static str,
    /// vLLM version.
    pub vllm: &'static str,
    /// CANN version.
    pub cann: &'static str,
    /// Mooncake version.
    pub mooncake: &'static str,
    /// Image tag suffix on 950DT; `None` when the release ships no 950DT
    /// image (facts §7: v0.24.0rc1 and v0.25.1rc1 have none).
    pub suffix_950dt: Option<&'static str>,
    /// `MooncakeHybridConnector` registered (first tag v0.20.2rc1, #9270).
    pub hybrid_connector: bool,
    /// `MooncakeConnectorV1` supports DeepSeek-V4 and hybrid KV (#10342,
    /// first in v0.22.1rc1).
    pub v1_hybrid_kv: bool,
    /// Where the recompute scheduler may run.
    pub recompute: RecomputeRoles,
    /// `additional_config.scheduler_config` is read (nested since #12177,
    /// first in v0.25.1rc1).
    pub nested_scheduler_config: bool,
    /// The proxy has `--workers` and `/reset_prefix_cache` (#9645, v0.21.0rc1).
    pub proxy_workers: bool,
}

macro_rules! image {
    ($tag:literal, $date:literal, $vllm:literal, $cann:literal, $mc:literal, $s950:expr,
     hybrid: $hy:literal, v1_hybrid_kv: $v1h:literal, recompute: $rc:ident, nested: $n:literal, workers: $w:literal) => {
        Image {
            tag: $tag,
            date: $date,
            vllm: $vllm,
            cann: $cann,
            mooncake: $mc,
            suffix_950dt: $s950,
            hybrid_connector: $hy,
            v1_hybrid_kv: $v1h,
            recompute: RecomputeRoles::$rc,
            nested_scheduler_config: $n,
            proxy_workers: $w,
        }
    };
}

/// Every supported image, in version order (facts §7 dependency table, §9
/// release table). Release branches mean a later tag is not a superset of an
/// earlier one, so every feature is a field, never "tag >= x".
pub static IMAGES: [Image; 9] = [
    image!("v0.18.0", "2026-04-30", "0.18.0", "8.5.1", "0.3.9", Some("-a5"),
        hybrid: false, v1_hybrid_kv: false, recompute: PrefillOrDecode, nested: false, workers: false),
    image!("v0.19.1rc1", "2026-04-30", "0.19.1", "8.5.1", "0.3.8.post1", Some("-a5"),
        hybrid: false, v1_hybrid_kv: false, recompute: PrefillOrDecode, nested: false, workers: false),
    image!("v0.20.2rc1", "2026-06-03", "0.20.2", "9.0.0", "0.3.8.post1", Some("-a5"),
        hybrid: true, v1_hybrid_kv: false, recompute: PrefillOrDecode, nested: false, workers: false),
    image!("v0.21.0rc1", "2026-06-12", "0.21.0", "9.0.0", "0.3.9", Some("-a5"),
        hybrid: true, v1_hybrid_kv: false, recompute: PrefillOrDecode, nested: false, workers: true),
    image!("v0.22.1rc1", "2026-06-30", "0.22.1", "9.0.0", "0.3.9", Some("-a5"),
        hybrid: true, v1_hybrid_kv: true, recompute: PrefillOrDecode, nested: false, workers: true),
    image!("v0.23.0rc1", "2026-07-19", "0.23.0", "9.0.1", "0.3.11.post1", Some("-a5"),
        hybrid: true, v1_hybrid_kv: true, recompute: DecodeOnly, nested: false, workers: true),
    image!("v0.23.0", "2026-08-17", "0.23.0", "9.1.0", "0.3.11.post1", Some("-a5"),
        hybrid: true, v1_hybrid_kv: true, recompute: DecodeOnly, nested: false, workers: true),
    image!("v0.24.0rc1", "2026-08-04", "0.24.0", "9.0.1", "0.3.11.post1", None,
        hybrid: true, v1_hybrid_kv: true, recompute: DecodeOnly, nested: false, workers: true),
    image!("v0.25.1rc1", "2026-08-19", "0.25.1", "9.0.1", "0.3.11.post1", None,
        hybrid: true, v1_hybrid_kv: true, recompute: DecodeOnly, nested: true, workers: true),
];

/// Looks an image up by tag (without hardware suffix).
pub fn image(tag: &str) -> Option<&'static Image> {
    IMAGES.iter().find(|i| i.tag == tag)
}

impl Image {
    /// The parsed version of this image.
    pub fn version(&self) -> Version {
        // Every tag in IMAGES is a well-formed version; a test guards it.
        Version::parse(self.tag).unwrap_or(Version {
            major: 0,
            minor: 0,
            patch: 0,
            rc: None,
        })
    }

    /// The full image reference for a hardware kind, or `None` when this
    /// release ships no image for it (installation.md @HEAD L321-330:
    /// A2 no suffix, A3 `-a3`, 950DT `-a5` in CI and at v0.23.0).
    pub fn reference(&self, hw: &Hardware) -> Option<String> {
        let suffix = match hw.family {
            HardwareFamily::Ascend950 => self.suffix_950dt?,
            HardwareFamily::Atlas800 if hw.npus_per_node == 16 => "-a3",
            HardwareFamily::Atlas800 => "",
        };
        Some(format!("quay.io/ascend/vllm-ascend:{}{}", self.tag, suffix))
    }

    /// Whether `enable_dsa_cp` on an indexer model without sequence
    /// parallelism is a `ValueError` at start-up ([`DSA_CP_CHECKS_SP`]).
    pub fn dsa_cp_checks_sp(&self) -> bool {
        DSA_CP_CHECKS_SP.contains(&self.tag)
    }
}

/// Images whose `utils.enable_dsa_cp()` raises `ValueError("DSA CP requires
/// SP to be enabled")` when the model has the indexer, `enable_dsa_cp` is set
/// and `enable_sp()` is false (vllm_ascend/utils.py @v0.20.2rc1 L1405-1408,
/// @v0.21.0rc1 and @v0.22.1rc1 L1361-1364, @v0.23.0rc1 and @v0.23.0
/// L1531-1534, @v0.24.0rc1 L1458-1461, @v0.25.1rc1 L1390-1393). v0.18.0 and
/// v0.19.1rc1 do not read the key (DSA CP follows SP alone, utils.py @v0.18.0
/// L1240-1247) and HEAD dropped the check (@HEAD L1308-1328).
pub const DSA_CP_CHECKS_SP: &[&str] = FROM_V0_20_2;

// ---------------------------------------------------------------------------
// additional_config keys per version (facts §4.1, §4.3)
// ---------------------------------------------------------------------------

/// A top-level `additional_config` key and the images that read it.
#[derive(Debug)]
pub struct ConfigKey {
    /// Key name.
    pub name: &'static str,
    /// Images that read it; `None` means every image in the table.
    pub images: Option<&'static [&'static str]>,
    /// What replaced it, for the message when it is missing.
    pub note: &'static str,
}

const FROM_V0_20_2: &[&str] = &[
    "v0.20.2rc1",
    "v0.21.0rc1",
    "v0.22.1rc1",
    "v0.23.0rc1",
    "v0.23.0",
    "v0.24.0rc1",
    "v0.25.1rc1",
];
const UNTIL_V0_23_0: &[&str] = &[
    "v0.18.0",
    "v0.19.1rc1",
    "v0.20.2rc1",
    "v0.21.0rc1",
    "v0.22.1rc1",
    "v0.23.0rc1",
    "v0.23.0",
];
const UNTIL_V0_24_0: &[&str] = &[
    "v0.18.0",
    "v0.19.1rc1",
    "v0.20.2rc1",
    "v0.21.0rc1",
    "v0.22.1rc1",
    "v0.23.0rc1",
    "v0.23.0",
    "v0.24.0rc1",
];

macro_rules! key {
    ($name:literal) => {
        ConfigKey {
            name: $name,
            images: None,
            note: "",
        }
    };
    ($name:literal, $images:expr, $note:literal) => {
        ConfigKey {
            name: $name,
            images: Some($images),
            note: $note,
        }
    };
}

/// Top-level `additional_config` keys read by `vllm_ascend/ascend_config.py`
/// (and the few readers elsewhere), with the images that read them. Keys whose
/// first release is not recorded in the facts are treated as read everywhere,
/// so the rule never rejects a key that works.
pub static ADDITIONAL_CONFIG_KEYS: &[ConfigKey] = &[
    key!("refresh"),
    key!("dump_config"),
    key!("dump_config_path"),
    key!("ascend_log_path"),
    key!("xlite_graph_config"),
    key!("finegrained_tp_config"),
    key!("ascend_compilation_config"),
    key!("ascend_fusion_config"),
    key!("eplb_config"),
    key!("rejection_sampler_config"),
    key!("sparse_kv_offload_config"),
    key!("rl_config"),
    key!("dynamic_spec_config"),
    key!("enable_shared_expert_dp"),
    key!("multistream_overlap_shared_expert"),
    key!("enable_cpu_binding"),
    key!("multistream_dsv4_dsa_overlap"),
    key!("enable_prefill_mc2"),
    key!("pa_shape_list"),
    key!("enable_kv_nz"),
    key!("c8_enable_reshape_optim"),
    key!("enable_mc2_hierarchy_comm"),
    // Read from v0.20.2rc1 (absent from ascend_config.py at v0.18.0 and
    // v0.19.1rc1).
    key!("enable_reduce_sample", FROM_V0_20_2, "added in v0.20.2rc1"),
    key!("mix_placement"),
    key!("mega_moe_max_tokens"),
    key!("draft_window_size"),
    key!("recompute_scheduler_enable"),
    key!("short_request_first_config"),
    key!("profiling_chunk_config"),
    // env -> additional_config migration #9064, first in v0.20.2rc1.
    key!(
        "enable_fused_mc2",
        FROM_V0_20_2,
        "before v0.20.2rc1 use env `VLLM_ASCEND_ENABLE_FUSED_MC2`"
    ),
    key!(
        "enable_mlapo",
        FROM_V0_20_2,
        "before v0.20.2rc1 use env `VLLM_ASCEND_ENABLE_MLAPO`"
    ),
    key!(
        "weight_nz_mode",
        FROM_V0_20_2,
        "before v0.20.2rc1 use env `VLLM_ASCEND_ENABLE_NZ`"
    ),
    key!(
        "msmonitor_use_daemon",
        FROM_V0_20_2,
        "before v0.20.2rc1 use env `MSMONITOR_USE_DAEMON`"
    ),
    key!(
        "enable_transpose_kv_cache_by_block",
        FROM_V0_20_2,
        "before v0.20.2rc1 use env `VLLM_ASCEND_FUSION_OP_TRANSPOSE_KV_CACHE_BY_BLOCK`"
    ),
    key!(
        "enable_balance_scheduling",
        FROM_V0_20_2,
        "before v0.20.2rc1 use env `VLLM_ASCEND_BALANCE_SCHEDULING`"
    ),
    key!("enable_dsa_cp", FROM_V0_20_2, "added in v0.20.2rc1 (#9878)"),
    key!(
        "enable_flashcomm1",
        &[
            "v0.20.2rc1",
            "v0.21.0rc1",
            "v0.22.1rc1",
            "v0.23.0rc1",
            "v0.23.0",
            "v0.24.0rc1",
            "v0.25.1rc1"
        ],
        "FlashComm v1 was removed (#13946)"
    ),
    // Removed in v0.24.0rc1 (release notes); v0.23.0 final still reads them.
    key!("layer_sharding", UNTIL_V0_23_0, "removed in v0.24.0rc1"),
    key!(
        "multistream_overlap_gate",
        UNTIL_V0_23_0,
        "removed in v0.24.0rc1"
    ),
    key!(
        "weight_prefetch_config",
        UNTIL_V0_23_0,
        "removed in v0.24.0rc1"
    ),
    // Removed in v0.25.1rc1.
    key!(
        "enable_async_exponential",
        UNTIL_V0_24_0,
        "removed in v0.25.1rc1"
    ),
    key!("hamming_sparse", UNTIL_V0_24_0, "removed in v0.25.1rc1"),
    key!(
        "dp_allreduce_on_npu",
        UNTIL_V0_24_0,
        "removed in v0.25.1rc1"
    ),
    key!(
        "enable_flashcomm2_parallel_size",
        UNTIL_V0_24_0,
        "removed in v0.25.1rc1"
    ),
    key!(
        "enable_matmul_allreduce",
        UNTIL_V0_24_0,
        "removed in v0.25.1rc1"
    ),
    // enable_sparse_c8 was split into two keys at v0.23.0 only (release branches).
    key!(
        "enable_sparse_c8",
        &[
            "v0.18.0",
            "v0.19.1rc1",
            "v0.20.2rc1",
            "v0.21.0rc1",
            "v0.22.1rc1",
            "v0.23.0rc1",
            "v0.24.0rc1",
            "v0.25.1rc1"
        ],
        "split into `enable_sparse_sfa_c8` and `enable_sparse_li_c8` at v0.23.0"
    ),
    key!(
        "enable_sparse_sfa_c8",
        &["v0.23.0"],
        "before the split use `enable_sparse_c8`"
    ),
    key!(
        "enable_sparse_li_c8",
        &["v0.23.0"],
        "before the split use `enable_sparse_c8`"
    ),
    key!(
        "enable_sleep_mode_extra_cleanup",
        &["v0.23.0rc1", "v0.23.0", "v0.24.0rc1", "v0.25.1rc1"],
        "moved to `rl_config.sleep_mode_extra_cleanup`"
    ),
    // Nested scheduler_config, #12177, first in v0.25.1rc1; read as unknown
    // (silently ignored) before that.
    key!(
        "scheduler_config",
        &["v0.25.1rc1"],
        "nested `scheduler_config` is read from v0.25.1rc1 (#12177); earlier images ignore it"
    ),
];

/// `additional_config.eplb_config` sub-keys: `EplbConfig._defaults` in
/// vllm_ascend/ascend_config.py, which raises `ValueError("Config has no
/// attribute ...")` for any other key at every tag (@v0.18.0 L367-391,
/// @v0.23.0 L831-856, @HEAD L990-1019). `load_collection_phase` exists only
/// after v0.25.1rc1, so no image in the table reads it.
pub static EPLB_CONFIG_KEYS: &[ConfigKey] = &[
    key!("dynamic_eplb"),
    key!("expert_map_path"),
    key!("expert_heat_collection_interval"),
    key!("algorithm_execution_interval"),
    key!("expert_map_record_path"),
    key!("num_redundant_experts"),
    key!("eplb_policy_type"),
    key!(
        "eplb_heat_collection_stage",
        &["v0.23.0rc1", "v0.23.0", "v0.24.0rc1", "v0.25.1rc1"],
        "added in v0.23.0rc1"
    ),
];

/// The `eplb_config` sub-keys `image` accepts.
pub fn eplb_config_keys(image: &str) -> impl Iterator<Item = &'static str> + '_ {
    EPLB_CONFIG_KEYS
        .iter()
        .filter(move |k| k.images.is_none_or(|imgs| imgs.contains(&image)))
        .map(|k| k.name)
}

/// Block sizes vllm-ascend keeps for DeepSeek-V4 on `image`; any other value
/// is replaced with a warning. `refresh_block_size` in vllm_ascend/utils.py:
/// v0.20.2rc1 forces 128 (L1319-1321); from v0.21.0rc1 it keeps 32, 64 or 128
/// and rewrites anything else to 32 (@v0.21.0rc1 L1263-1270, @HEAD
/// L1179-1188). Before v0.20.2rc1 there is no V4 branch and the generic 128
/// rule applies.
pub fn dsv4_block_sizes(image: &str) -> &'static [u64] {
    match image {
        "v0.18.0" | "v0.19.1rc1" | "v0.20.2rc1" => &[128],
        _ => &[32, 64, 128],
    }
}

/// An `additional_config` key only some attention backends read; on other
/// models it is silently ignored.
#[derive(Debug)]
pub struct AttentionKey {
    /// Key name.
    pub name: &'static str,
    /// Attention kinds whose backend reads it.
    pub attention: &'static [Attention],
    /// Where it is read.
    pub source: &'static str,
}

/// Keys read only by some attention backends (`enable_kv_nz` is a hard
/// error elsewhere and has its own rule).
pub static ATTENTION_CONFIG_KEYS: &[AttentionKey] = &[
    AttentionKey {
        name: "enable_mlapo",
        attention: &[Attention::Mla, Attention::DsaSparse],
        source: "only the MLA and SFA backends read it (attention/mla_v1.py L741, attention/sfa_v1.py L559)",
    },
    // `... and use_sparse` (ascend_config.py @HEAD L262-263); V4 counted as
    // sparse up to v0.22.1rc1 (`hasattr(index_topk)`, @v0.21.0rc1 L232-236),
    // so it is not flagged for V4.
    AttentionKey {
        name: "enable_sparse_c8",
        attention: &[Attention::DsaSparse, Attention::V4Hybrid],
        source: "it is ANDed with sparse attention (ascend_config.py `use_sparse`)",
    },
    AttentionKey {
        name: "enable_sparse_sfa_c8",
        attention: &[Attention::DsaSparse, Attention::V4Hybrid],
        source: "it is ANDed with sparse attention (ascend_config.py L262)",
    },
    AttentionKey {
        name: "enable_sparse_li_c8",
        attention: &[Attention::DsaSparse, Attention::V4Hybrid],
        source: "it is ANDed with sparse attention (ascend_config.py L263)",
    },
];

/// Looks a top-level `additional_config` key up.
pub fn config_key(name: &str) -> Option<&'static ConfigKey> {
    ADDITIONAL_CONFIG_KEYS.iter().find(|k| k.name == name)
}

/// An environment toggle that does nothing on some images (facts §5.2, §10.28).
#[derive(Debug)]
pub struct DeadEnv {
    /// Variable name.
    pub name: &'static str,
    /// Images on which it is dead; `None` means all.
    pub images: Option<&'static [&'static str]>,
    /// Why it is dead.
    pub why: &'static str,
}

/// Environment toggles that have no effect (never read, or removed).
pub static DEAD_ENV: &[DeadEnv] = &[
    DeadEnv {
        name: "ACL_OP_INIT_MODE",
        images: None,
        why: "a CANN runtime variable that vllm-ascend never reads at any checked tag",
    },
    DeadEnv {
        name: "ASCEND_A3_ENABLE",
        images: None,
        why: "CANN-side; vllm-ascend never reads it",
    },
    DeadEnv {
        name: "USE_MULTI_BLOCK_POOL",
        images: None,
        why: "not an env var: it was a Python constant, removed in v0.14.0rc1",
    },
    DeadEnv {
        name: "USE_MULTI_GROUPS_KV_CACHE",
        images: None,
        why: "not an env var: a Python constant in patch_kv_cache_coordinator.py",
    },
    DeadEnv {
        name: "VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL",
        images: Some(&[
            "v0.21.0rc1",
            "v0.22.1rc1",
            "v0.23.0rc1",
            "v0.23.0",
            "v0.24.0rc1",
            "v0.25.1rc1",
        ]),
        why: "removed in v0.21.0rc1 (#9668); use `additional_config.enable_dsa_cp`",
    },
    DeadEnv {
        name: "VLLM_ASCEND_ENABLE_MATMUL_ALLREDUCE",
        images: Some(&["v0.25.1rc1"]),
        why: "removed in v0.25.1rc1",
    },
    DeadEnv {
        name: "VLLM_ASCEND_FLASHCOMM2_PARALLEL_SIZE",
        images: Some(&["v0.25.1rc1"]),
        why: "removed in v0.25.1rc1",
    },
    DeadEnv {
        name: "VLLM_ASCEND_ENABLE_PREFETCH_MLP",
        images: None,
        why: "gone by v0.18.0",
    },
    DeadEnv {
        name: "ASCEND_BUFFER_POOL",
        images: Some(&["v0.23.0"]),
        why: "removed (v0.23.0 notes); use `ASCEND_ENABLE_USE_FABRIC_MEM=1` or `HCCL_INTRA_ROCE_ENABLE=1`",
    },
];

/// The dead-toggle entry for `name` on `image`, if any.
pub fn dead_env(name: &str, image: &str) -> Option<&'static DeadEnv> {
    DEAD_ENV
        .iter()
        .find(|d| d.name == name && d.images.is_none_or(|imgs| imgs.contains(&image)))
}

/// Speculative methods known to vLLM (speculative_decoding.md @HEAD L12-24)
/// plus the deprecated alias `deepseek_mtp` (rewritten to `mtp` upstream).
pub static SPECULATIVE_METHODS: &[&str] = &[
    "ngram",
    "suffix",
    "medusa",
    "eagle",
    "eagle3",
    "mtp",
    "dflash",
    "dspark",
    "draft_model",
    "extract_hidden_states",
    "deepseek_mtp",
    // Qwen3.5's MTP head (vllm `vllm/config/speculative.py` `MTPModelTypes`
    // @v0.23.0 L46; vllm-ascend Qwen3.5-397B-A17B.md @v0.29.0rc1 L215).
    "qwen3_5_mtp",
];

#[cfg(test)]
mod tests {
    #[test]
    fn every_required_host_path_is_mounted() {
        for hw in super::HARDWARE {
            let mounts = hw.container_mounts();
            for p in hw.required_host_paths {
                assert!(
                    mounts.iter().any(|m| super::covers(m, p)),
                    "{}: {p} is not mounted",
                    hw.id
                );
            }
        }
        assert!(super::covers("/etc/hixlep/", "/etc/hixlep"));
        assert!(!super::covers("/etc/hix", "/etc/hixlep"));
        assert_eq!(
            &super::A950DT.container_mounts()[super::A950DT.mounts.len()..],
            ["/lib/route.conf", "/etc/hccl_rootinfo.json"]
        );
    }

    use super::*;

    #[test]
    fn every_image_tag_parses_and_table_is_in_version_order() {
        let versions: Vec<Version> = IMAGES
            .iter()
            .map(|i| Version::parse(i.tag).unwrap_or_else(|| unreachable!("{}", i.tag)))
            .collect();
        assert!(versions.windows(2).all(|w| w[0] < w[1]), "{versions:?}");
    }

    #[test]
    fn rc_sorts_before_final() {
        let rc = Version::parse("v0.23.0rc1");
        let fin = Version::parse("v0.23.0");
        assert!(rc < fin);
        assert_eq!(Version::parse("v1.2"), None);
        assert_eq!(
            Version::parse("0.9.1rc3").map(|v| v.to_string()),
            Some("v0.9.1rc3".to_owned())
        );
    }

    #[test]
    fn image_references_follow_the_suffix_table() {
        let img = image("v0.23.0");
        assert_eq!(
            img.and_then(|i| i.reference(&A3)).as_deref(),
            Some("quay.io/ascend/vllm-ascend:v0.23.0-a3")
        );
        assert_eq!(
            img.and_then(|i| i.reference(&A2)).as_deref(),
            Some("quay.io/ascend/vllm-ascend:v0.23.0")
        );
        assert_eq!(
            img.and_then(|i| i.reference(&A950DT)).as_deref(),
            Some("quay.io/ascend/vllm-ascend:v0.23.0-a5")
        );
        assert_eq!(image("v0.25.1rc1").and_then(|i| i.reference(&A950DT)), None);
    }

    #[test]
    fn model_by_hub_id_matches_ids_case_insensitively() {
        let id = |m: Option<&Model>| m.map(|m| m.id);
        assert_eq!(
            id(model_by_hub_id("Eco-Tech/DeepSeek-V3.1-w8a8-mtp-QuaRot")),
            Some("deepseek_v3_1_w8a8_mtp_quarot")
        );
        assert_eq!(
            id(model_by_hub_id("eco-tech/deepseek-v3.1-W8A8-MTP-quarot")),
            Some("deepseek_v3_1_w8a8_mtp_quarot")
        );
        assert_eq!(
            id(model_by_hub_id("unsloth/DeepSeek-V3.1-BF16")),
            Some("deepseek_v3_1")
        );
    }

    #[test]
    fn model_by_hub_id_matches_a_path_by_its_last_component() {
        let id = |m: Option<&Model>| m.map(|m| m.id);
        assert_eq!(
            id(model_by_hub_id(
                "/weights/DeepSeek-V3.1-Terminus-w4a8-mtp-QuaRot/"
            )),
            Some("deepseek_v3_1_terminus_w4a8_mtp_quarot")
        );
        assert_eq!(
            id(model_by_hub_id("/mnt/cache/deepseek-v3.1-bf16")),
            Some("deepseek_v3_1")
        );
        assert_eq!(
            id(model_by_hub_id("/root/.cache/DeepSeek-V4-Flash-w8a8-mtp")),
            Some("deepseek_v4_flash_w8a8_mtp")
        );
    }

    #[test]
    fn model_by_hub_id_rejects_unknown_and_empty() {
        assert!(model_by_hub_id("Qwen/Qwen2-7B").is_none());
        assert!(model_by_hub_id("").is_none());
        assert!(model_by_hub_id("/").is_none());
        // A prefix of a weights name is not a match.
        assert!(model_by_hub_id("/weights/DeepSeek-V3").is_none());
    }

    #[test]
    fn every_model_has_a_hub_id_and_ids_are_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for m in MODELS {
            assert!(!m.hub_ids.is_empty(), "{} has no hub id", m.id);
            for h in m.hub_ids {
                assert!(seen.insert(h.to_ascii_lowercase()), "{h} listed twice");
                assert_eq!(model_by_hub_id(h).map(|x| x.id), Some(m.id), "{h}");
            }
            assert!(seen.insert(m.id.to_owned()));
        }
    }

    /// The family bases leave the identity fields empty: an entry that
    /// forgot one would take the empty value through `..`.
    #[test]
    fn models_state_their_identity() {
        for m in MODELS {
            for (field, value) in [
                ("id", m.id),
                ("weights", m.weights),
                ("source", m.source),
                ("default_path", m.default_path),
                ("served_name", m.served_name),
            ] {
                assert!(!value.is_empty(), "{} has no {field}", m.weights);
            }
        }
    }

    #[test]
    fn model_facts_are_consistent() {
        for m in MODELS {
            // Hybrid KV is the V4 attention layout and nothing else.
            assert_eq!(m.hybrid_kv, m.attention == Attention::V4Hybrid, "{}", m.id);
            // The indexer (`index_topk`) is in DeepSeek-V3.2, DeepSeek-V4 and
            // GLM-5.x weights, and in no other family of the table.
            let indexer_family = ["DeepSeek-V3.2", "DeepSeek-V4", "GLM-5"]
                .iter()
                .any(|f| m.weights.starts_with(f));
            assert_eq!(m.attention.has_indexer(), indexer_family, "{}", m.id);
            for d in m.drafts {
                assert!(DRAFT_METHODS.contains(&d.method), "{}: {}", m.id, d.method);
                assert!(SPECULATIVE_METHODS.contains(&d.method), "{}", m.id);
            }
            assert!(crate::check::is_safe_path(m.default_path), "{}", m.id);
            assert!(
                m.served_name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)),
                "{}",
                m.id
            );
            assert!(
                m.weights.eq_ignore_ascii_case(
                    m.default_path
                        .trim_end_matches('/')
                        .rsplit('/')
                        .next()
                        .unwrap_or("")
                ) || m.id.starts_with("deepseek_v3_1_w"),
                "{}: the default path ends in the weights name",
                m.id
            );
        }
        let m = |id: &str| model(id).unwrap_or_else(|| unreachable!("{id}"));
        assert!(!m("qwen3_235b_a22b_w8a8").mtp);
        assert_eq!(
            m("kimi_k2_6_w4a8").draft("eagle3").map(|d| d.model),
            Some("lightseekorg/kimi-k2.6-eagle3")
        );
        assert!(m("kimi_k2_6_w4a8").draft("mtp").is_none());
        assert_eq!(m("deepseek_v3_2_w8a8").attention, Attention::DsaSparse);
        assert_eq!(m("glm_5_1_w8a8c8").attention, Attention::DsaSparse);
        assert_eq!(m("deepseek_r1_w8a8").attention, Attention::Mla);
    }

    #[test]
    fn upstream_hub_ids_resolve() {
        let id = |h: &str| model_by_hub_id(h).map(|m| m.id);
        assert_eq!(
            id("vllm-ascend/DeepSeek-R1-0528-W8A8"),
            Some("deepseek_r1_0528_w8a8")
        );
        // One weekly config spells the GLM-5.2 C8 weights in capitals.
        assert_eq!(id("Eco-Tech/GLM-5.2-W8A8C8"), Some("glm_5_2_w8a8c8"));
        // The Kimi-K2.6 tutorial link spells it `W4A8`.
        assert_eq!(id("Eco-Tech/Kimi-K2.6-W4A8"), Some("kimi_k2_6_w4a8"));
        assert_eq!(
            id("/root/.cache/modelscope/hub/models/vllm-ascend/Qwen3-235B-A22B-w8a8-mxfp0"),
            Some("qwen3_235b_a22b_w8a8_mxfp0")
        );
        assert_eq!(
            id("Modelers_Park/Qwen3-235B-A22B-w8a8"),
            Some("qwen3_235b_a22b_w8a8")
        );
    }

    #[test]
    fn eplb_keys_follow_the_image() {
        let keys = |img| eplb_config_keys(img).collect::<Vec<_>>();
        assert!(!keys("v0.22.1rc1").contains(&"eplb_heat_collection_stage"));
        assert!(keys("v0.23.0").contains(&"eplb_heat_collection_stage"));
        assert_eq!(keys("v0.18.0").len(), 7);
        assert_eq!(dsv4_block_sizes("v0.20.2rc1"), &[128]);
        assert_eq!(dsv4_block_sizes("v0.21.0rc1"), &[32, 64, 128]);
    }

    #[test]
    fn key_and_env_history() {
        let sc = config_key("scheduler_config");
        assert!(sc.is_some_and(|k| k.images == Some(&["v0.25.1rc1"][..])));
        assert!(dead_env("VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL", "v0.20.2rc1").is_none());
        assert!(dead_env("VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL", "v0.21.0rc1").is_some());
        assert!(dead_env("ASCEND_A3_ENABLE", "v0.18.0").is_some());
    }
}
