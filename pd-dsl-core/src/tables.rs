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
}

/// DeepSeek-V4-Flash w8a8 with MTP (DeepSeek-V4-Flash.md @v0.21.0rc1).
pub static DEEPSEEK_V4_FLASH_W8A8_MTP: Model = Model {
    id: "deepseek_v4_flash_w8a8_mtp",
    weights: "DeepSeek-V4-Flash-w8a8-mtp",
    source: "ModelScope Eco-Tech/DeepSeek-V4-Flash-w8a8-mtp",
    default_path: "/root/.cache/modelscope/hub/models/vllm-ascend/DeepSeek-V4-Flash-w8a8-mtp",
    served_name: "dsv4",
    quantization: Some("ascend"),
    mtp: true,
    moe: true,
    hybrid_kv: true,
};

/// DeepSeek-V3.1 w8a8 with hybrid MTP, QuaRot (DeepSeek-V3.1.md §3.1).
pub static DEEPSEEK_V3_1_W8A8_MTP_QUAROT: Model = Model {
    id: "deepseek_v3_1_w8a8_mtp_quarot",
    weights: "DeepSeek-V3.1-w8a8-mtp-QuaRot",
    source: "ModelScope DeepSeek-V3.1-w8a8-mtp-QuaRot",
    default_path: "/weights/DeepSeek-V3.1-w8a8-mtp-QuaRot",
    served_name: "deepseek_v3",
    quantization: Some("ascend"),
    mtp: true,
    moe: true,
    hybrid_kv: false,
};

/// DeepSeek-V3.1 BF16 (DeepSeek-V3.1.md §3.1).
pub static DEEPSEEK_V3_1_BF16: Model = Model {
    id: "deepseek_v3_1",
    weights: "DeepSeek-V3.1",
    source: "ModelScope DeepSeek-V3.1",
    default_path: "/weights/DeepSeek-V3.1",
    served_name: "deepseek_v3",
    quantization: None,
    mtp: true,
    moe: true,
    hybrid_kv: false,
};

/// DeepSeek-V3.1-Terminus w4a8 with hybrid MTP, QuaRot (DeepSeek-V3.1.md §3.1).
pub static DEEPSEEK_V3_1_TERMINUS_W4A8_MTP_QUAROT: Model = Model {
    id: "deepseek_v3_1_terminus_w4a8_mtp_quarot",
    weights: "DeepSeek-V3.1-Terminus-w4a8-mtp-QuaRot",
    source: "ModelScope DeepSeek-V3.1-Terminus-w4a8-mtp-QuaRot",
    default_path: "/weights/DeepSeek-V3.1-Terminus-w4a8-mtp-QuaRot",
    served_name: "deepseek_v3",
    quantization: Some("ascend"),
    mtp: true,
    moe: true,
    hybrid_kv: false,
};

/// DeepSeek-V3.1 w4a4 MLP + w8a8c8 attention, mxfp4 (DeepSeek-V3.1.md §3.1;
/// the 950DT single-node command serves it).
pub static DEEPSEEK_V3_1_W4A4C8_MXFP4: Model = Model {
    id: "deepseek_v3_1_w4a4c8_mxfp4",
    weights: "DeepSeek-V3.1-w4a4c8-mxfp4",
    source: "ModelScope DeepSeek-V3.1-w4a4c8-mxfp4",
    default_path: "/weight/dsk-v3.1-w4a4_mlp-w8a8c8_attn-0618-full",
    served_name: "deepseek_v3",
    quantization: Some("ascend"),
    mtp: true,
    moe: true,
    hybrid_kv: false,
};

/// DeepSeek-V3.1 w8a8c8 mxfp8 (DeepSeek-V3.1.md §3.1; the 950DT 2P1D serves
/// a Terminus w8a8c8 build of it).
pub static DEEPSEEK_V3_1_W8A8C8_MXFP8: Model = Model {
    id: "deepseek_v3_1_w8a8c8_mxfp8",
    weights: "DeepSeek-V3.1-w8a8c8-mxfp8",
    source: "ModelScope DeepSeek-V3.1-w8a8c8-mxfp8",
    default_path: "/weight/dsk_v3.1-T-w8a8c8_attn-0506-full/",
    served_name: "dsv3",
    quantization: Some("ascend"),
    mtp: true,
    moe: true,
    hybrid_kv: false,
};

/// Every model, in table order.
pub static MODELS: [&Model; 6] = [
    &DEEPSEEK_V4_FLASH_W8A8_MTP,
    &DEEPSEEK_V3_1_W8A8_MTP_QUAROT,
    &DEEPSEEK_V3_1_BF16,
    &DEEPSEEK_V3_1_TERMINUS_W4A8_MTP_QUAROT,
    &DEEPSEEK_V3_1_W4A4C8_MXFP4,
    &DEEPSEEK_V3_1_W8A8C8_MXFP8,
];

/// Looks a model up by its layout identifier.
pub fn model(id: &str) -> Option<&'static Model> {
    MODELS.iter().copied().find(|m| m.id == id)
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
}

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
    key!("enable_reduce_sample"),
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
    fn key_and_env_history() {
        let sc = config_key("scheduler_config");
        assert!(sc.is_some_and(|k| k.images == Some(&["v0.25.1rc1"][..])));
        assert!(dead_env("VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL", "v0.20.2rc1").is_none());
        assert!(dead_env("VLLM_ASCEND_ENABLE_CONTEXT_PARALLEL", "v0.21.0rc1").is_some());
        assert!(dead_env("ASCEND_A3_ENABLE", "v0.18.0").is_some());
    }
}
