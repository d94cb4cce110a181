//! The hardware table: Atlas 800 A2/A3 and Ascend 950DT nodes, their devices and mounts.

use super::*;

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
    /// vllm-ascend's name for the device (`AscendDeviceType`,
    /// vllm_ascend/device/hardware.py @v0.30.0rc1: A2, A3, A5), the key of
    /// its hardware profile, which the generated facts name.
    pub const fn device_type(&self) -> &'static str {
        match self.family {
            HardwareFamily::Ascend950 => "A5",
            HardwareFamily::Atlas800 if self.npus_per_node == 16 => "A3",
            HardwareFamily::Atlas800 => "A2",
        }
    }

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
pub(super) fn covers(mount: &str, path: &str) -> bool {
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
