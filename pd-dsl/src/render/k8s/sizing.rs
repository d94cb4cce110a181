//! What an engine pod requests, derived from the layout and the hardware
//! table; every amount can be replaced by a `--k8s-*` flag
//! ([`super::ResourceOverrides`]).
//!
//! - **NPUs**: the node's, whole (upstream CI requests `npu_per_node`): the
//!   ranks' device lists count from 0 over the node's NPUs, as on bare metal.
//! - **CPU** (request only, no limit: a CFS quota throttles the ranks'
//!   busy-polling threads and vllm-ascend's CPU binding pins them itself):
//!   [`CPU_PER_NPU`] per NPU the node's ranks use (its worker process) plus
//!   [`CPU_PER_RANK`] per DP rank (API server and engine core) plus
//!   [`CPU_NODE`] (run.sh, the launcher, the pool service or proxy on node 0).
//!   Upstream CI requests 125 on a 16-NPU A3 node; 16 ranks of TP1 here
//!   derive 4 × 16 + 2 × 16 + 2 = 98.
//! - **Memory**: the request is what the processes hold,
//!   [`HOST_GIB_PER_NPU`] per NPU used (the runtime, torch and the CANN
//!   libraries of one worker). The limit adds the weights those NPUs load,
//!   which pass through host memory while they load (the memory budget's
//!   per-rank weights, [`crate::capacity::budget`]; the NPUs' HBM when the
//!   model has no dimensions), and the memory-backed `/dev/shm`, whose pages
//!   count against the container's memory: both are bursts, not
//!   reservations, so the request stays schedulable.
//! - **`/dev/shm`**: the size the upstream docker commands give
//!   ([`crate::render::model::shm_gib`]).
//! - **Ephemeral storage**: [`EPHEMERAL_GIB`], upstream CI's request and
//!   limit (`lws.yaml.jinja2`: `ephemeral-storage: 100Gi`): graph and
//!   kernel compile caches live in the container.

use super::settings::ResourceOverrides;
use crate::Layout;
use crate::render::model::shm_gib;

/// CPUs per NPU a node's ranks use.
pub const CPU_PER_NPU: u64 = 4;
/// CPUs per DP rank.
pub const CPU_PER_RANK: u64 = 2;
/// CPUs per node for the scripts and node 0's services.
pub const CPU_NODE: u64 = 2;
/// Host memory per NPU used, GiB, besides the weights.
pub const HOST_GIB_PER_NPU: u64 = 8;
/// Ephemeral storage per engine pod, GiB (upstream CI's figure).
pub const EPHEMERAL_GIB: u64 = 100;

const GIB: u64 = 1 << 30;

/// One engine pod's requests and limits, as Kubernetes quantities.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodSizing {
    /// NPUs (the node's, whole).
    pub npus: u32,
    /// CPU request.
    pub cpu: String,
    /// Memory request.
    pub memory_request: String,
    /// Memory limit (the request, the weights loaded and `/dev/shm`).
    pub memory_limit: String,
    /// Ephemeral-storage request and limit.
    pub ephemeral_storage: String,
    /// `/dev/shm` size limit.
    pub shm: String,
    /// How the derived amounts were reached (for the README).
    pub why: SizingWhy,
}

/// The derivation's inputs for one pod, shown in the Kubernetes README.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizingWhy {
    /// NPUs the node's ranks use.
    pub npus_used: u64,
    /// DP ranks on the node.
    pub ranks: u64,
    /// GiB of weights those NPUs load (rounded up).
    pub weights_gib: u64,
    /// Whether the weights come from the memory budget (else the NPUs' HBM).
    pub weights_from_budget: bool,
}

/// The sizing of the pod that plays node `node`.
pub fn pod_sizing(layout: &Layout, node: usize, overrides: &ResourceOverrides) -> PodSizing {
    let plan = layout.placement.nodes.get(node);
    let npus_used: u64 = plan.map_or(0, |n| n.ranks.iter().map(|r| r.devices.len() as u64).sum());
    let ranks: u64 = plan.map_or(0, |n| n.ranks.len() as u64);
    let budget = crate::capacity::budget(layout);
    let per_npu = plan
        .and_then(|n| budget.iter().find(|b| b.role == n.role))
        .map(|b| b.weights.total());
    let weights_from_budget = per_npu.is_some();
    let weights_bytes = per_npu
        .unwrap_or_else(|| u64::from(layout.hardware.hbm_gb_per_npu).saturating_mul(1_000_000_000));
    let weights_gib = weights_bytes.saturating_mul(npus_used).div_ceil(GIB);
    let cpu = CPU_PER_NPU * npus_used + CPU_PER_RANK * ranks + CPU_NODE;
    let memory_gib = HOST_GIB_PER_NPU * npus_used;
    let burst_gib = memory_gib + weights_gib;
    let shm = overrides
        .shm
        .clone()
        .unwrap_or_else(|| format!("{}Gi", shm_gib(layout)));
    let memory_request = overrides
        .memory
        .clone()
        .unwrap_or_else(|| format!("{memory_gib}Gi"));
    let memory_limit = match (&overrides.memory, &overrides.shm) {
        // An explicit memory amount is the request and the limit.
        (Some(m), _) => m.clone(),
        (None, None) => format!("{}Gi", burst_gib + shm_gib(layout)),
        // A /dev/shm size given in Gi adds up; in another unit the limit
        // leaves it out rather than mix units.
        (None, Some(s)) => match s.strip_suffix("Gi").and_then(|g| g.parse::<u64>().ok()) {
            Some(g) => format!("{}Gi", burst_gib + g),
            None => format!("{burst_gib}Gi"),
        },
    };
    PodSizing {
        npus: layout.hardware.npus_per_node,
        cpu: overrides.cpu.clone().unwrap_or_else(|| cpu.to_string()),
        memory_request,
        memory_limit,
        ephemeral_storage: overrides
            .ephemeral_storage
            .clone()
            .unwrap_or_else(|| format!("{EPHEMERAL_GIB}Gi")),
        shm,
        why: SizingWhy {
            npus_used,
            ranks,
            weights_gib,
            weights_from_budget,
        },
    }
}
