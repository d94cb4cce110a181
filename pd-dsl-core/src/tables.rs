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
    /// True when the MLA backend takes MLAPO only on pure decode instances
    /// at every image (A2/A3; see [`mlapo_decode_only`] for A5).
    pub mlapo_decode_only: bool,
}

/// Images on which `enabling_mlapo` has no A5 branch, so MLAPO is decode-only
/// on 950DT too (vllm_ascend/attention/utils.py @v0.18.0 L327-333; the A5
/// branch is there from @v0.19.1rc1 L353-354, and from @v0.27.1rc1 as the
/// `UNRESTRICTED_MLAPO` capability of the A5 profile, device/hardware_profile.py).
pub const MLAPO_A5_DECODE_ONLY: &[&str] = &["v0.18.0"];

/// Whether the MLA backend takes MLAPO only on pure decode instances on `hw`
/// with `image` (`enabling_mlapo` in vllm_ascend/attention/utils.py).
pub fn mlapo_decode_only(hw: &Hardware, image: &Image) -> bool {
    hw.mlapo_decode_only || MLAPO_A5_DECODE_ONLY.contains(&image.tag)
}

/// Device nodes the A2/A3 docker commands add besides `/dev/davinciN`; the
/// Ascend device plugin mounts the same ones with an NPU.
pub const ATLAS_800_DEVICES: &[&str] = &["/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"];

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
    /// v0.23.0rc1 and later: D only; ignored on P with a warning, ValueError
    /// when mixed (#11265, #11537; vllm_ascend/platform.py @v0.23.0rc1
    /// L679-692, @v0.26.0rc1 L676-694, @v0.27.1rc1 L1030-1047, @v0.30.0rc2
    /// L1108-1125).
    DecodeOnly,
}

/// One vllm-ascend image release: the facts the sdist cannot give, typed by
/// hand and reviewed against the release's source (the comment on each row
/// names the paths), plus the release's generated facts
/// ([`crate::upstream::Release`]), from which the rest is derived
/// ([`Image::vllm`], [`Image::cann`], [`Image::mooncake`],
/// [`Image::suffix`], [`Image::hybrid_connector`],
/// [`Image::nested_scheduler_config`], [`Image::proxy_workers`], the
/// `additional_config` keys and env variables it reads).
///
/// `pd-dsl-core/tests/image_rows.rs` re-reads every row's hand-typed fields
/// from the corpus where the sdist states them.
#[derive(Debug)]
pub struct Image {
    /// The tag without hardware suffix, as layouts write it.
    pub tag: &'static str,
    /// Commit date of the tag.
    pub date: &'static str,
    /// `MooncakeConnectorV1` supports DeepSeek-V4 and hybrid KV (#10342,
    /// first in v0.22.1rc1: `self.use_hybrid` in
    /// vllm_ascend/distributed/kv_transfer/kv_p2p/mooncake_connector.py).
    pub v1_hybrid_kv: bool,
    /// Where the recompute scheduler may run.
    pub recompute: RecomputeRoles,
    /// `utils.enable_dsa_cp()` raises `ValueError("DSA CP requires SP to be
    /// enabled")` when an indexer model sets `enable_dsa_cp` without sequence
    /// parallelism (vllm_ascend/utils.py @v0.20.2rc1 L1405-1408, @v0.21.0rc1
    /// and @v0.22.1rc1 L1361-1364, @v0.23.0rc1 and @v0.23.0 L1531-1534,
    /// @v0.24.0rc1 L1458-1461, @v0.25.1rc1 L1390-1393, @v0.26.0rc1
    /// L1402-1405). v0.18.0 and v0.19.1rc1 do not read the key (DSA CP
    /// follows SP alone, utils.py @v0.18.0 L1240-1247); from v0.27.1rc1 the
    /// check is gone.
    pub dsa_cp_checks_sp: bool,
    /// The release's generated facts (`upstream/facts/vllm-ascend/`), parsed
    /// once by [`crate::upstream`].
    pub facts_json: &'static str,
}

impl Serialize for Image {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Image", 11)?;
        st.serialize_field("tag", self.tag)?;
        st.serialize_field("date", self.date)?;
        st.serialize_field("vllm", self.vllm())?;
        st.serialize_field("cann", self.cann())?;
        st.serialize_field("mooncake", self.mooncake())?;
        st.serialize_field("suffix_950dt", &self.suffix("950dt"))?;
        st.serialize_field("hybrid_connector", &self.hybrid_connector())?;
        st.serialize_field("v1_hybrid_kv", &self.v1_hybrid_kv)?;
        st.serialize_field("recompute", &self.recompute)?;
        st.serialize_field("nested_scheduler_config", &self.nested_scheduler_config())?;
        st.serialize_field("proxy_workers", &self.proxy_workers())?;
        st.end()
    }
}

/// One row of [`IMAGES`]: the release version once (the tag is `v` plus it,
/// and it names the facts file the row embeds), then the hand-typed fields.
macro_rules! image {
    ($ver:literal, $date:literal,
     v1_hybrid_kv: $v1h:literal, recompute: $rc:ident, dsa_cp_checks_sp: $dsa:literal) => {
        Image {
            tag: concat!("v", $ver),
            date: $date,
            v1_hybrid_kv: $v1h,
            recompute: RecomputeRoles::$rc,
            dsa_cp_checks_sp: $dsa,
            facts_json: include_str!(concat!("../../upstream/facts/vllm-ascend/", $ver, ".json")),
        }
    };
}

/// Every supported image, in version order (facts §7 dependency table, §9
/// release table). Release branches mean a later tag is not a superset of an
/// earlier one, so every feature is a field or a fact, never "tag >= x".
///
/// Adding a release: pin it in `upstream/corpus.lock.json`, run
/// `scripts/upstream/facts.py write` and add its row here, reviewed against the
/// paths the rows below cite; `pd-dsl-core/tests/image_rows.rs` fails until
/// the lock, the facts and this table name the same releases.
///
/// Dates up to v0.25.1rc1 are the tags' commit dates; from v0.26.0rc1 the
/// heading date of the release's entry in docs/source/user_guide/
/// release_notes.md, or, for a release without an entry (v0.28.0rc1,
/// v0.29.0rc1), the build date of its sdist's `PKG-INFO`.
pub static IMAGES: [Image; 15] = [
    image!("0.18.0", "2026-04-30",
        v1_hybrid_kv: false, recompute: PrefillOrDecode, dsa_cp_checks_sp: false),
    image!("0.19.1rc1", "2026-04-30",
        v1_hybrid_kv: false, recompute: PrefillOrDecode, dsa_cp_checks_sp: false),
    image!("0.20.2rc1", "2026-06-03",
        v1_hybrid_kv: false, recompute: PrefillOrDecode, dsa_cp_checks_sp: true),
    image!("0.21.0rc1", "2026-06-12",
        v1_hybrid_kv: false, recompute: PrefillOrDecode, dsa_cp_checks_sp: true),
    image!("0.22.1rc1", "2026-06-30",
        v1_hybrid_kv: true, recompute: PrefillOrDecode, dsa_cp_checks_sp: true),
    image!("0.23.0rc1", "2026-07-19",
        v1_hybrid_kv: true, recompute: DecodeOnly, dsa_cp_checks_sp: true),
    image!("0.23.0", "2026-08-17",
        v1_hybrid_kv: true, recompute: DecodeOnly, dsa_cp_checks_sp: true),
    image!("0.24.0rc1", "2026-08-04",
        v1_hybrid_kv: true, recompute: DecodeOnly, dsa_cp_checks_sp: true),
    image!("0.25.1rc1", "2026-08-19",
        v1_hybrid_kv: true, recompute: DecodeOnly, dsa_cp_checks_sp: true),
    // release_notes.md "## v0.26.0rc1 - 2026.09.03"; mooncake_connector.py
    // `self.use_hybrid` L2104; platform.py L676-694; utils.py L1402-1405
    // still raises.
    image!("0.26.0rc1", "2026-09-03",
        v1_hybrid_kv: true, recompute: DecodeOnly, dsa_cp_checks_sp: true),
    // release_notes.md "## v0.27.1rc1 - 2026.09.24"; mooncake_connector.py
    // L2156; platform.py L1030-1047; utils.py `enable_dsa_cp` no longer
    // raises.
    image!("0.27.1rc1", "2026-09-24",
        v1_hybrid_kv: true, recompute: DecodeOnly, dsa_cp_checks_sp: false),
    // No release_notes.md entry; PKG-INFO built 2026-10-09.
    // mooncake_connector.py L2166; platform.py L1010-1027.
    image!("0.28.0rc1", "2026-10-09",
        v1_hybrid_kv: true, recompute: DecodeOnly, dsa_cp_checks_sp: false),
    // No release_notes.md entry; PKG-INFO built 2026-10-09.
    // mooncake_connector.py L2166; platform.py L1014-1031.
    image!("0.29.0rc1", "2026-10-09",
        v1_hybrid_kv: true, recompute: DecodeOnly, dsa_cp_checks_sp: false),
    // release_notes.md "## v0.30.0rc1 - 2026.10.11"; mooncake_connector.py L2174;
    // platform.py L1108-1125.
    image!("0.30.0rc1", "2026-10-11",
        v1_hybrid_kv: true, recompute: DecodeOnly, dsa_cp_checks_sp: false),
    // release_notes.md "## v0.30.0rc2 - 2026.10.13"; mooncake_connector.py L2174;
    // platform.py L1108-1125.
    image!("0.30.0rc2", "2026-10-13",
        v1_hybrid_kv: true, recompute: DecodeOnly, dsa_cp_checks_sp: false),
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
    /// release pushes no image for it: the suffix the release's image
    /// workflow gives the hardware's Dockerfile (`image_suffixes` of the
    /// facts, from .github/workflows/schedule_image_build_and_push.yaml: A2
    /// none, A3 `-a3`, 950DT `-a5` where it is built at all).
    pub fn reference(&self, hw: &Hardware) -> Option<String> {
        let suffix = self.suffix(crate::upstream::image_key(hw))?;
        Some(format!("quay.io/ascend/vllm-ascend:{}{}", self.tag, suffix))
    }

    /// The tag suffix of the image pushed for hardware key `key` (`a2`, `a3`,
    /// `950dt`; the facts' `image_suffixes`), `None` when none is pushed.
    pub fn suffix(&self, key: &str) -> Option<&'static str> {
        self.facts()?.image_suffixes.get(key)
    }

    /// Mooncake version the A3 image installs (`ARG MOONCAKE_TAG` of
    /// Dockerfile.a3, in the facts).
    pub fn mooncake(&self) -> &'static str {
        self.facts()
            .and_then(|r| r.images.get("a3")?.as_ref()?.mooncake.as_deref())
            .unwrap_or("")
    }

    /// The release's generated facts (every row has them: a test guards it).
    pub fn facts(&self) -> Option<&'static crate::upstream::Release> {
        crate::upstream::release(self)
    }

    /// vLLM version the image installs (`ARG VLLM_TAG` of Dockerfile.a3, in
    /// the facts).
    pub fn vllm(&self) -> &'static str {
        self.facts().map_or("", |r| r.vllm.version.as_str())
    }

    /// CANN version of the image's base (the A3 Dockerfile's `FROM`, in the
    /// facts).
    pub fn cann(&self) -> &'static str {
        self.facts().and_then(|r| r.cann()).unwrap_or("")
    }

    /// `MooncakeHybridConnector` is registered (first in v0.20.2rc1, #9270;
    /// `kv_connectors` of the facts).
    pub fn hybrid_connector(&self) -> bool {
        self.facts()
            .is_some_and(|r| r.registers("MooncakeHybridConnector"))
    }

    /// `additional_config.scheduler_config` is read as a nested mapping
    /// (#12177, first in v0.25.1rc1; its `sub_keys` in the facts).
    pub fn nested_scheduler_config(&self) -> bool {
        self.facts()
            .and_then(|r| r.config_key("scheduler_config"))
            .is_some_and(|k| k.sub_keys.is_some())
    }

    /// The load-balance proxy has `--workers` (and `/reset_prefix_cache`,
    /// #9645, first in v0.21.0rc1; the script's flags in the facts).
    pub fn proxy_workers(&self) -> bool {
        self.facts()
            .is_some_and(|r| r.script_has_flag("load_balance_proxy_server_example.py", "--workers"))
    }

    /// Whether `enable_dsa_cp` on an indexer model without sequence
    /// parallelism is a `ValueError` at start-up ([`Image::dsa_cp_checks_sp`]
    /// field).
    pub fn dsa_cp_checks_sp(&self) -> bool {
        self.dsa_cp_checks_sp
    }

    /// Whether this image reads top-level `additional_config` key `key`.
    pub fn reads_config_key(&self, key: &str) -> bool {
        self.facts().is_some_and(|r| r.config_key(key).is_some())
    }

    /// Whether vllm-ascend on this image reads environment variable `name`.
    pub fn reads_env(&self, name: &str) -> bool {
        self.facts().is_some_and(|r| r.reads_env(name))
    }
}

// ---------------------------------------------------------------------------
// additional_config keys per version: the generated facts (`additional_config`)
// ---------------------------------------------------------------------------

/// Environment variables that moved to `additional_config` keys (#9064, first
/// in v0.20.2rc1): the "Quick Reference" table of docs/source/user_guide/
/// configuration/additional_config.md @v0.20.2rc1 L17-28. A key an image
/// does not read gets the variable as a hint when that image reads it.
pub const ENV_MIGRATION: &[(&str, &str)] = &[
    (
        "enable_balance_scheduling",
        "VLLM_ASCEND_BALANCE_SCHEDULING",
    ),
    ("enable_flashcomm1", "VLLM_ASCEND_ENABLE_FLASHCOMM1"),
    (
        "enable_matmul_allreduce",
        "VLLM_ASCEND_ENABLE_MATMUL_ALLREDUCE",
    ),
    (
        "enable_flashcomm2_parallel_size",
        "VLLM_ASCEND_FLASHCOMM2_PARALLEL_SIZE",
    ),
    ("msmonitor_use_daemon", "MSMONITOR_USE_DAEMON"),
    ("enable_mlapo", "VLLM_ASCEND_ENABLE_MLAPO"),
    ("weight_nz_mode", "VLLM_ASCEND_ENABLE_NZ"),
    (
        "enable_context_parallel",
        "VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL",
    ),
    ("enable_fused_mc2", "VLLM_ASCEND_ENABLE_FUSED_MC2"),
    (
        "enable_transpose_kv_cache_by_block",
        "VLLM_ASCEND_FUSION_OP_TRANSPOSE_KV_CACHE_BY_BLOCK",
    ),
];

/// Keys renamed or split (the old and the new names); a key an image does not
/// read gets its counterpart as a hint when that image reads it
/// (`enable_sparse_c8` is read @v0.18.0 to @v0.22.1rc1, @v0.24.0rc1 and
/// @v0.25.1rc1; `enable_sparse_sfa_c8` and `enable_sparse_li_c8` @v0.23.0rc1,
/// @v0.23.0 and from @v0.26.0rc1: the release branches; ascend_config.py).
pub const KEY_RENAMES: &[(&str, &str)] = &[
    ("enable_sparse_c8", "enable_sparse_sfa_c8"),
    ("enable_sparse_c8", "enable_sparse_li_c8"),
];

/// Why `image` ignores top-level `additional_config` key `key`, or `None`
/// when it reads it. Everything in the answer is computed from the facts:
/// the images that read the key, and what this image reads instead (the same
/// key nested under another one, a renamed key, the environment variable it
/// replaced).
pub fn config_key_ignored(key: &str, image: &Image) -> Option<String> {
    if image.reads_config_key(key) {
        return None;
    }
    let readers = crate::upstream::config_key_readers(key);
    let mut why = if readers.is_empty() {
        "no image of the table reads it".to_owned()
    } else {
        format!("it is read by {}", crate::upstream::describe(&readers))
    };
    if let Some(r) = image.facts() {
        let nested: Vec<String> = r
            .additional_config
            .iter()
            .filter(|k| {
                k.sub_keys
                    .as_ref()
                    .is_some_and(|s| s.iter().any(|s| s == key))
            })
            .map(|k| format!("`{}.{key}`", k.key))
            .collect();
        if !nested.is_empty() {
            why.push_str(&format!("; this image reads {}", nested.join(" and ")));
        }
        let renamed: Vec<String> = KEY_RENAMES
            .iter()
            .filter_map(|&(a, b)| match key {
                k if k == a => Some(b),
                k if k == b => Some(a),
                _ => None,
            })
            .filter(|k| r.config_key(k).is_some())
            .map(|k| format!("`{k}`"))
            .collect();
        if !renamed.is_empty() {
            why.push_str(&format!(
                "; this image reads {} instead",
                renamed.join(" and ")
            ));
        }
        if let Some((_, env)) = ENV_MIGRATION.iter().find(|(k, _)| *k == key)
            && r.reads_env(env)
        {
            why.push_str(&format!("; this image reads env `{env}` instead"));
        }
    }
    Some(why)
}

/// The `eplb_config` sub-keys `image` accepts: `EplbConfig` in
/// vllm_ascend/ascend_config.py raises `ValueError("Config has no attribute
/// ...")` for any other key at every tag (@v0.18.0 L367-391, @v0.23.0
/// L831-856); the list is the `sub_keys` of `eplb_config` in the facts
/// (`strict` there).
pub fn eplb_config_keys(image: &Image) -> Vec<&'static str> {
    image
        .facts()
        .and_then(|r| r.config_key("eplb_config"))
        .and_then(|k| k.sub_keys.as_ref())
        .map_or_else(Vec::new, |s| s.iter().map(String::as_str).collect())
}

/// The images whose `eplb_config` accepts sub-key `key`, for the message.
pub fn eplb_config_key_readers(key: &str) -> Vec<&'static Image> {
    IMAGES
        .iter()
        .filter(|img| eplb_config_keys(img).contains(&key))
        .collect()
}

/// Block sizes vllm-ascend keeps for DeepSeek-V4 on `image`; any other value
/// is replaced with a warning. `refresh_block_size` in vllm_ascend/utils.py:
/// v0.20.2rc1 forces 128 (L1319-1321); from v0.21.0rc1 it keeps 32, 64 or 128
/// and rewrites anything else to 32 (@v0.21.0rc1 L1263-1270, @v0.25.1rc1
/// L1245-1253, @v0.27.1rc1 L1201-1209, the same to @v0.30.0rc2). Before
/// v0.20.2rc1 there is no V4 branch and the generic 128 rule applies.
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
        source: "only the MLA and SFA backends read it (attention/mla_v1.py and attention/sfa_v1.py at every release, e.g. L910 and L898 at v0.30.0rc2)",
    },
    // `... and use_sparse` (ascend_config.py @v0.21.0rc1 L256, @v0.23.0
    // L280-281, @v0.25.1rc1 L241, @v0.30.0rc2 L920-921); V4 counted as
    // sparse up to v0.22.1rc1 (`hasattr(index_topk)`, @v0.21.0rc1 L232-236),
    // so it is not flagged for V4. Which images read which of the keys is
    // the facts' business (`unknown_additional_config_key`).
    AttentionKey {
        name: "enable_sparse_c8",
        attention: &[Attention::DsaSparse, Attention::V4Hybrid],
        source: "it is ANDed with sparse attention (ascend_config.py `use_sparse`, L256 at v0.21.0rc1, L241 at v0.25.1rc1)",
    },
    AttentionKey {
        name: "enable_sparse_sfa_c8",
        attention: &[Attention::DsaSparse, Attention::V4Hybrid],
        source: "it is ANDed with sparse attention (ascend_config.py `use_sparse`, L280 at v0.23.0, L920 at v0.30.0rc2)",
    },
    AttentionKey {
        name: "enable_sparse_li_c8",
        attention: &[Attention::DsaSparse, Attention::V4Hybrid],
        source: "it is ANDed with sparse attention (ascend_config.py `use_sparse`, L281 at v0.23.0, L921 at v0.30.0rc2)",
    },
];

/// Looks a top-level `additional_config` key up: whether any image of the
/// table reads it (the facts' `additional_config`).
pub fn config_key_known(name: &str) -> bool {
    crate::upstream::known_config_keys().contains(&name)
}

/// A reader of environment variables that is not vllm-ascend but runs in
/// every image of the table: a variable it reads is not dead even though the
/// generated `env` table (vllm-ascend's own reads) lacks it. This cannot come
/// from the vllm-ascend sdist; each entry cites the reader's source and the
/// build checked.
#[derive(Debug)]
pub struct OtherReader {
    /// Variable name.
    pub name: &'static str,
    /// Who reads it.
    pub reader: &'static str,
    /// Where.
    pub source: &'static str,
}

/// Variables read by CANN-side libraries or Mooncake in every image.
pub static OTHER_ENV_READERS: &[OtherReader] = &[
    // torch_npu is pinned by every release's requirements.txt (2.9.0 at
    // v0.18.0 … 2.10.0.post4 at v0.30.0rc2); `libtorch_npu.so` of the
    // torch-npu 2.9.0 and 2.10.0.post4 wheels holds the read and its warning.
    OtherReader {
        name: "ACL_OP_INIT_MODE",
        reader: "torch_npu (the ACL op init mode, 0/1/2)",
        source: "Ascend/pytorch torch_npu/csrc/core/npu/register/OptionsManager.cpp `GetAclOpInitMode`",
    },
    // Mooncake's ADXL transport, at every MOONCAKE_TAG the images install.
    OtherReader {
        name: "ASCEND_BUFFER_POOL",
        reader: "Mooncake's Ascend direct transport (buffer pool mode)",
        source: "kvcache-ai/Mooncake mooncake-transfer-engine/src/transport/ascend_transport/ascend_direct_transport/ascend_direct_transport.cpp @v0.3.8.post1 L237, @v0.3.9 L259; transfer_executor_base.cpp @v0.3.11.post1 L105-108",
    },
];

/// Variables upstream configs export that nothing in the images reads.
/// Checked against vllm-ascend (the generated `env` tables, every release),
/// torch_npu (`libtorch_npu.so` of torch-npu 2.9.0 and 2.10.0.post4) and
/// Mooncake (source at v0.3.8.post1, v0.3.9 and v0.3.11.post1, and the
/// mooncake-transfer-engine-npu 0.3.11.post1 wheel's libraries).
pub static UNREAD_ENV: &[(&str, &str)] = &[
    (
        "ASCEND_A3_ENABLE",
        "nothing in the image reads it: not vllm-ascend, not torch_npu, and not the Mooncake it installs (kvcache-ai/Mooncake v0.3.8.post1, v0.3.9, v0.3.11.post1)",
    ),
    (
        "USE_MULTI_BLOCK_POOL",
        "not an env var: it was a Python constant, removed in v0.14.0rc1",
    ),
    (
        "USE_MULTI_GROUPS_KV_CACHE",
        "not an env var: a Python constant in patch_kv_cache_coordinator.py",
    ),
];

/// The upper-case name something in `image` reads, when `name` is a
/// lowercase spelling of it (the case [`dead_env`] reports as "names are
/// case-sensitive").
pub fn upper_spelling_read(name: &str, image: &Image) -> Option<String> {
    // The namespaces of CANN, HCCL, torch(_npu), OpenMP, Mooncake and vLLM
    // spell every variable upper-case.
    const UPPER_ONLY: &[&str] = &[
        "VLLM_",
        "ASCEND_",
        "HCCL_",
        "ACL_",
        "PYTORCH_",
        "TORCH_",
        "OMP_",
        "MOONCAKE_",
        "GLOO_",
        "TASK_QUEUE_",
    ];
    let upper = name.to_ascii_uppercase();
    let read = image.reads_env(&upper) || OTHER_ENV_READERS.iter().any(|r| r.name == upper);
    (upper != name
        && (read
            || UNREAD_ENV.iter().any(|(n, _)| *n == upper)
            || UPPER_ONLY.iter().any(|p| upper.starts_with(p))))
    .then_some(upper)
}

/// Why `name` does nothing on `image`, or `None` when something in the image
/// reads it or it is not ours to judge. A `VLLM_ASCEND_*` variable is
/// vllm-ascend's own: dead on an image whose generated `env` table lacks it
/// (the answer names the images that read it). Other names are dead only when
/// [`UNREAD_ENV`] lists them and no [`OTHER_ENV_READERS`] entry reads them.
pub fn dead_env(name: &str, image: &Image) -> Option<String> {
    let read = |n: &str| image.reads_env(n) || OTHER_ENV_READERS.iter().any(|r| r.name == n);
    if read(name) {
        return None;
    }
    if name.bytes().any(|b| b.is_ascii_lowercase()) {
        return upper_spelling_read(name, image).map(|upper| {
            format!("environment names are case-sensitive and what reads this one reads `{upper}`")
        });
    }
    if name.starts_with("VLLM_ASCEND_") {
        let readers: Vec<&Image> = IMAGES.iter().filter(|i| i.reads_env(name)).collect();
        let mut why = if readers.is_empty() {
            "vllm-ascend reads no such variable at any image of the table".to_owned()
        } else {
            format!(
                "vllm-ascend reads it only at {}",
                crate::upstream::describe(&readers)
            )
        };
        if let Some((key, _)) = ENV_MIGRATION.iter().find(|(_, e)| *e == name)
            && image.reads_config_key(key)
        {
            why.push_str(&format!("; use `additional_config.{key}`"));
        }
        return Some(why);
    }
    UNREAD_ENV
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, why)| (*why).to_owned())
}

/// The `speculative_config.method` values the vLLM of `image` accepts: the
/// `SpeculativeMethod` Literal of vllm/config/speculative.py at that vLLM
/// (`speculative_methods` of the vLLM facts), sorted; every MTP model type
/// (`deepseek_mtp`, ...) is among them, rewritten to `mtp` upstream. With no
/// image (an unknown tag, reported on its own), every method some image's
/// vLLM accepts.
pub fn speculative_methods(image: Option<&Image>) -> Vec<&'static str> {
    let releases: Vec<&'static crate::upstream::VllmRelease> = match image {
        Some(img) => crate::upstream::vllm_of(img).into_iter().collect(),
        None => IMAGES
            .iter()
            .filter_map(|i| crate::upstream::vllm_of(i).ok())
            .collect(),
    };
    let mut out: Vec<&'static str> = releases
        .iter()
        .flat_map(|r| r.speculative_methods.iter().map(|m| m.name.as_str()))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

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
    fn speculative_methods_follow_each_images_vllm() {
        let on = |tag: &str| speculative_methods(image(tag));
        // vllm/config/speculative.py `SpeculativeMethod` @0.18.0: no
        // `custom_class`, no `DFlashModelTypes`; both @0.30.0.
        assert!(!on("v0.18.0").contains(&"dflash"));
        assert!(!on("v0.18.0").contains(&"custom_class"));
        assert!(on("v0.30.0rc2").contains(&"custom_class"));
        assert!(on("v0.30.0rc2").contains(&"dflash"));
        for img in &IMAGES {
            let m = speculative_methods(Some(img));
            for name in [
                "mtp",
                "deepseek_mtp",
                "eagle3",
                "ngram",
                "mlp_speculator",
                "ngram_gpu",
            ] {
                assert!(m.contains(&name), "{name} on {}", img.tag);
            }
            assert!(m.windows(2).all(|w| w[0] < w[1]), "{}", img.tag);
        }
        assert!(speculative_methods(None).len() >= on("v0.30.0rc2").len());
    }

    #[test]
    fn model_facts_are_consistent() {
        for m in MODELS {
            // Hybrid KV is the V4 attention layout and nothing else.
            assert_eq!(
                m.hybrid_kv,
                matches!(m.attention, Attention::V4Hybrid | Attention::V41Ced),
                "{}",
                m.id
            );
            // The indexer (`index_topk`) is in DeepSeek-V3.2, DeepSeek-V4 and
            // GLM-5.x weights, and in no other family of the table.
            let indexer_family = ["DeepSeek-V3.2", "DeepSeek-V4", "GLM-5"]
                .iter()
                .any(|f| m.weights.starts_with(f));
            assert_eq!(m.attention.has_indexer(), indexer_family, "{}", m.id);
            for d in m.drafts {
                assert!(DRAFT_METHODS.contains(&d.method), "{}: {}", m.id, d.method);
                // A method some image's vLLM accepts (`dflash` is not in
                // vLLM 0.18.0's `SpeculativeMethod`, so not on every image).
                assert!(
                    speculative_methods(None).contains(&d.method),
                    "{}: {}",
                    m.id,
                    d.method
                );
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

    fn img(tag: &str) -> &'static Image {
        image(tag).unwrap_or_else(|| unreachable!("{tag} is a row of IMAGES"))
    }

    #[test]
    fn eplb_keys_follow_the_image() {
        let keys = |tag| eplb_config_keys(img(tag));
        assert!(!keys("v0.22.1rc1").contains(&"eplb_heat_collection_stage"));
        assert!(keys("v0.23.0rc1").contains(&"eplb_heat_collection_stage"));
        assert!(keys("v0.23.0").contains(&"eplb_heat_collection_stage"));
        assert_eq!(keys("v0.18.0").len(), 7);
        // `load_collection_phase` arrives in v0.27.1rc1 (ascend_config.py).
        assert!(!keys("v0.26.0rc1").contains(&"load_collection_phase"));
        assert!(keys("v0.27.1rc1").contains(&"load_collection_phase"));
        assert_eq!(dsv4_block_sizes("v0.20.2rc1"), &[128]);
        assert_eq!(dsv4_block_sizes("v0.21.0rc1"), &[32, 64, 128]);
    }

    /// The derived fields agree with what the hand-typed table said before
    /// they were derived (each value was reviewed against the release notes
    /// and the source then), and extend to the new releases.
    #[test]
    fn derived_image_fields_match_the_reviewed_history() {
        let from = |first: &str, f: fn(&Image) -> bool| {
            for i in &IMAGES {
                assert_eq!(f(i), i.version() >= img(first).version(), "{}", i.tag);
            }
        };
        from("v0.20.2rc1", Image::hybrid_connector);
        from("v0.21.0rc1", Image::proxy_workers);
        from("v0.25.1rc1", Image::nested_scheduler_config);
        let cann: Vec<&str> = IMAGES.iter().map(Image::cann).collect();
        assert_eq!(
            cann,
            [
                "8.5.1", "8.5.1", "9.0.0", "9.0.0", "9.0.0", "9.0.1", "9.1.0", "9.0.1", "9.0.1",
                "9.1.0", "9.1.0", "9.1.0", "9.1.0", "9.1.0", "9.2.0"
            ]
        );
        // Each image installs the vLLM of its own version, except v0.21.0rc1,
        // whose Dockerfile.a3 builds vLLM v0.22.1 (`ARG VLLM_TAG=v0.22.1`).
        for i in &IMAGES {
            let own = format!(
                "{}.{}.{}",
                i.version().major,
                i.version().minor,
                i.version().patch
            );
            let expected = if i.tag == "v0.21.0rc1" {
                "0.22.1"
            } else {
                own.as_str()
            };
            assert_eq!(i.vllm(), expected, "{}", i.tag);
        }
    }

    #[test]
    fn key_history_comes_from_the_facts() {
        let ignored = |key: &str, tag: &str| config_key_ignored(key, img(tag));
        assert_eq!(ignored("enable_mlapo", "v0.20.2rc1"), None);
        assert_eq!(
            ignored("enable_mlapo", "v0.19.1rc1").as_deref(),
            Some(
                "it is read by v0.20.2rc1 to v0.30.0rc2; this image reads env `VLLM_ASCEND_ENABLE_MLAPO` instead"
            )
        );
        // The C8 split lives on the v0.23.0 branch and on main from v0.26.0rc1.
        assert_eq!(
            ignored("enable_sparse_sfa_c8", "v0.25.1rc1").as_deref(),
            Some(
                "it is read by v0.23.0rc1, v0.23.0 and v0.26.0rc1 to v0.30.0rc2; this image reads `enable_sparse_c8` instead"
            )
        );
        assert_eq!(ignored("enable_sparse_li_c8", "v0.23.0rc1"), None);
        // Nested from v0.25.1rc1; a flat scheduler key there is read nested.
        assert_eq!(ignored("scheduler_config", "v0.25.1rc1"), None);
        assert!(ignored("scheduler_config", "v0.24.0rc1").is_some());
        assert_eq!(
            ignored("no_such_key", "v0.23.0").as_deref(),
            Some("no image of the table reads it")
        );
        // An `eplb_config` sub-key written at the top level.
        assert_eq!(
            ignored("dynamic_eplb", "v0.23.0").as_deref(),
            Some("no image of the table reads it; this image reads `eplb_config.dynamic_eplb`")
        );
        assert!(config_key_known("enable_cpu_binding"));
        assert!(!config_key_known("enable_cpu_bindng"));
    }

    #[test]
    fn env_is_dead_only_when_nothing_in_the_image_reads_it() {
        let dead = |name: &str, tag: &str| dead_env(name, img(tag));
        assert!(dead("VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL", "v0.20.2rc1").is_none());
        assert_eq!(
            dead("VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL", "v0.21.0rc1").as_deref(),
            Some("vllm-ascend reads it only at v0.18.0 to v0.20.2rc1")
        );
        // Read by torch_npu and by Mooncake, never by vllm-ascend.
        for tag in ["v0.18.0", "v0.23.0", "v0.30.0rc2"] {
            assert!(dead("ACL_OP_INIT_MODE", tag).is_none(), "{tag}");
            assert!(dead("ASCEND_BUFFER_POOL", tag).is_none(), "{tag}");
            assert!(dead("ASCEND_A3_ENABLE", tag).is_some(), "{tag}");
            // CANN's HCCL variables are not ours to judge, but their
            // lowercase spelling reads nothing.
            assert!(dead("HCCL_BUFFSIZE", tag).is_none(), "{tag}");
            assert_eq!(
                dead("hccl_buffsize", tag).as_deref(),
                Some(
                    "environment names are case-sensitive and what reads this one reads `HCCL_BUFFSIZE`"
                ),
                "{tag}"
            );
            assert!(dead("vllm_ascend_enable_mlapo", tag).is_some(), "{tag}");
            // Proxy variables are read lowercase (curl, Python).
            assert!(dead("http_proxy", tag).is_none(), "{tag}");
            assert!(dead("no_proxy", tag).is_none(), "{tag}");
        }
        // Balance scheduling: the env is gone, the flat key is still read.
        assert_eq!(
            dead("VLLM_ASCEND_BALANCE_SCHEDULING", "v0.30.0rc2").as_deref(),
            Some(
                "vllm-ascend reads it only at v0.18.0 to v0.26.0rc1; use `additional_config.enable_balance_scheduling`"
            )
        );
        // The env migration completed in v0.27.1rc1 for MLAPO.
        assert!(dead("VLLM_ASCEND_ENABLE_MLAPO", "v0.26.0rc1").is_none());
        assert_eq!(
            dead("VLLM_ASCEND_ENABLE_MLAPO", "v0.27.1rc1").as_deref(),
            Some(
                "vllm-ascend reads it only at v0.18.0 to v0.26.0rc1; use `additional_config.enable_mlapo`"
            )
        );
    }
}
