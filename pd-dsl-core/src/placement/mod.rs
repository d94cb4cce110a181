//! Placement: every value an operator used to type by hand, derived from the
//! topology.
//!
//! Node order: prefill engines first, then decode, then mixed, each in the
//! order written; node 0 hosts the proxy. Each engine occupies its own nodes.
//! On each node the ranks of one engine take contiguous device blocks starting
//! at device 0, and API ports `api + local index`, exactly as upstream's
//! `launch_online_dp.py` computes them (@HEAD L47-64).

use crate::spec::{ConnectorKind, Role};
use serde::Serialize;
use std::collections::BTreeMap;

/// The most NPUs one rank holds: TP x PCP never spans nodes, and no node of
/// the hardware table has more (a test holds the table to it).
pub const MAX_RANK_DEVICES: usize = 16;

/// Device ids a [`Devices`] can name: every id of a node of the hardware
/// table (at most [`MAX_RANK_DEVICES`]) with room to spare for layouts the
/// topology rules refuse (a rank past its node's NPUs), which are placed
/// before they are judged.
const DEVICE_IDS: usize = 1024;

/// `0, 1, ..., DEVICE_IDS - 1`: every rank's device list is a window of it.
static IDS: [u32; DEVICE_IDS] = {
    let mut ids = [0u32; DEVICE_IDS];
    let mut i = 0;
    while i < DEVICE_IDS {
        ids[i] = i as u32;
        i += 1;
    }
    ids
};

/// A rank's `ASCEND_RT_VISIBLE_DEVICES`: a contiguous block of device ids,
/// held as its first id and length (a window of a static table) since a
/// 64-node plan places about a thousand ranks per candidate layout, and a
/// heap vector each was a tenth of `catalog plan`'s time (an inline array
/// of 16 ids, its next form, still most of a rank's bytes). Reads as a
/// slice of device ids.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Devices {
    start: u16,
    len: u8,
}

impl Devices {
    /// Devices `range`, at most [`MAX_RANK_DEVICES`] of them (placement
    /// only builds ranks the topology rules let through, which fit a node;
    /// ids past the table, which only a refused layout reaches, are cut).
    pub fn range(range: std::ops::Range<u32>) -> Devices {
        let start = (range.start as usize).min(DEVICE_IDS);
        let len = range.len().min(MAX_RANK_DEVICES).min(DEVICE_IDS - start);
        Devices {
            start: u16::try_from(start).unwrap_or(u16::MAX),
            len: u8::try_from(len).unwrap_or(0),
        }
    }
}

impl std::ops::Deref for Devices {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        let start = usize::from(self.start);
        IDS.get(start..start + usize::from(self.len)).unwrap_or(&[])
    }
}

impl std::fmt::Debug for Devices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq<Vec<u32>> for Devices {
    fn eq(&self, other: &Vec<u32>) -> bool {
        **self == other[..]
    }
}

impl Serialize for Devices {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// A node's ranks, held inline up to a node's most NPUs (a rank holds at
/// least one): a 64-node placement is then one allocation for its nodes, not
/// one more per node. Reads as a slice of ranks.
pub type NodeRanks = smallvec::SmallVec<[RankPlan; MAX_RANK_DEVICES]>;

/// One DP rank.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RankPlan {
    /// Global DP rank within the engine.
    pub dp_rank: u32,
    /// Index on its node.
    pub local_index: u32,
    /// `ASCEND_RT_VISIBLE_DEVICES` of the rank.
    pub devices: Devices,
    /// API port; a mixed engine has one API server on its first node.
    pub api_port: Option<u32>,
    /// Inclusive kv handshake port span `(first, last)` (facts §3.3).
    pub kv_span: Option<(u32, u32)>,
}

/// What one node runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodePlan {
    /// Node index in cluster order.
    pub index: usize,
    /// Role of the engine on it.
    pub role: Role,
    /// Engine index (global, in engine order).
    pub engine: usize,
    /// `--dp-size-local` / `--data-parallel-size-local`.
    pub dp_size_local: u32,
    /// `--dp-rank-start` / `--data-parallel-start-rank`.
    pub dp_rank_start: u32,
    /// Node index of the engine's DP master (`--dp-address`).
    pub dp_master: usize,
    /// A mixed engine's non-first node runs `--headless`.
    pub headless: bool,
    /// Node hosts the proxy.
    pub hosts_proxy: bool,
    /// `engine_id` of this node's ranks: the engine's, or the node's own
    /// where the layout gives one per node.
    pub engine_id: Option<u64>,
    /// The ranks on this node.
    pub ranks: NodeRanks,
}

impl NodePlan {
    /// NPUs this node uses.
    pub fn npus_used(&self) -> usize {
        self.ranks.iter().map(|r| r.devices.len()).sum()
    }
}

/// One engine (DP group).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EnginePlan {
    /// Global engine index.
    pub index: usize,
    /// Role.
    pub role: Role,
    /// Index among the engines of its role.
    pub role_index: usize,
    /// `--data-parallel-size`.
    pub dp: u32,
    /// `--tensor-parallel-size`.
    pub tp: u32,
    /// `--prefill-context-parallel-size` (1 when not used).
    pub pcp: u32,
    /// Ranks per node.
    pub ranks_per_node: u32,
    /// Nodes it occupies, in order; the first is the DP master.
    pub nodes: Vec<usize>,
    /// `engine_id`, if the engine has a connector.
    pub engine_id: Option<u64>,
    /// `kv_port` base, if the engine has a connector.
    pub kv_port: Option<u32>,
    /// API port of the first rank on each of its nodes (`--vllm-start-port`),
    /// or its single API port when mixed.
    pub api_port: u32,
    /// `--data-parallel-rpc-port` of its DP master, where the layout has one.
    pub dp_rpc_port: Option<u32>,
}

impl EnginePlan {
    /// The DP master node.
    pub fn master(&self) -> usize {
        self.nodes.first().copied().unwrap_or(0)
    }

    /// NPUs of one DP rank: `tp x pcp` (vllm/config/parallel.py `world_size`).
    pub fn rank_npus(&self) -> u32 {
        self.tp * self.pcp.max(1)
    }
}

/// One proxy backend.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Endpoint {
    /// Node index.
    pub node: usize,
    /// API port.
    pub port: u32,
}

/// The proxy's backend lists, every rank exactly once, in node order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ProxyLists {
    /// `--prefiller-hosts` / `--prefiller-ports`.
    pub prefill: Vec<Endpoint>,
    /// `--decoder-hosts` / `--decoder-ports`.
    pub decode: Vec<Endpoint>,
}

/// The shape of one engine group, as placement needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupShape {
    /// Role.
    pub role: Role,
    /// Number of engines.
    pub count: u32,
    /// DP size.
    pub dp: u32,
    /// TP size.
    pub tp: u32,
    /// PCP size (1 when not used).
    pub pcp: u32,
    /// Ranks per node.
    pub ranks_per_node: u32,
}

/// The ports one role's engines use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RolePorts {
    /// API start port.
    pub api: u32,
    /// DP RPC port.
    pub dp_rpc: Option<u32>,
}

/// Inputs of placement that are not the topology.
#[derive(Clone, Debug, Default)]
pub struct PlacementInput {
    /// API port base of roles without their own.
    pub api_port: u32,
    /// DP RPC port of roles without their own.
    pub dp_rpc_port: Option<u32>,
    /// Ports of roles that have their own.
    pub role_ports: BTreeMap<Role, RolePorts>,
    /// Connector, if PD.
    pub connector: Option<ConnectorKind>,
    /// kv port per prefill engine (one value repeats).
    pub kv_prefill: Vec<u32>,
    /// kv port per decode engine (one value repeats).
    pub kv_decode: Vec<u32>,
    /// Engine id overrides per prefill engine: one id, or one per node.
    pub ids_prefill: Option<Vec<Vec<u64>>>,
    /// Engine id overrides per decode engine: one id, or one per node.
    pub ids_decode: Option<Vec<Vec<u64>>>,
}

/// The whole derived placement.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Placement {
    /// Engines in engine order.
    pub engines: Vec<EnginePlan>,
    /// Nodes in cluster order.
    pub nodes: Vec<NodePlan>,
    /// The proxy lists (empty for mixed layouts).
    pub proxy: ProxyLists,
}

/// Ranks per node when the author did not say: as many as fit, never more
/// than the engine has. `width` is a rank's NPUs (`tp x pcp`).
pub fn default_ranks_per_node(dp: u32, width: u32, npus_per_node: u32) -> u32 {
    if width == 0 {
        return 1;
    }
    (npus_per_node / width).clamp(1, dp.max(1))
}

/// Handshake ports per DP rank: S = tp·pp·pcp for V1, tp·pp for Hybrid,
/// tp·pcp for Layerwise (mooncake_connector.py @0.23.0 L1651-1657 and
/// @HEAD L1713-1719, mooncake_hybrid_connector.py L1548-1555,
/// mooncake_layerwise_connector.py L1224-1229); pp = 1 in every layout this
/// DSL expresses. A worker listens on `S_rank + (pcp_rank·tp + tp_rank)`
/// (mooncake_connector.py @0.23.0 L298-299).
pub fn kv_ports_per_rank(kind: ConnectorKind, tp: u32, pcp: u32) -> u32 {
    let (pp, pcp) = (1, pcp.max(1));
    match kind {
        ConnectorKind::MooncakeV1 => tp * pp * pcp,
        ConnectorKind::MooncakeHybrid => tp * pp,
        ConnectorKind::MooncakeLayerwise => tp * pcp,
    }
}

/// The handshake span of DP rank `rank`: `[kv + r·S, kv + (r+1)·S − 1]`.
pub fn kv_span(kind: ConnectorKind, kv_port: u32, rank: u32, tp: u32, pcp: u32) -> (u32, u32) {
    let s = kv_ports_per_rank(kind, tp, pcp);
    (kv_port + rank * s, kv_port + (rank + 1) * s - 1)
}

/// Engine ids by the catalog's convention: prefill 0, 2, 4…; decode 1, 3, 5….
pub fn derived_engine_id(role: Role, role_index: usize) -> Option<u64> {
    match role {
        Role::Prefill => Some(2 * role_index as u64),
        Role::Decode => Some(2 * role_index as u64 + 1),
        Role::Mixed => None,
    }
}

/// Places the groups. The caller has already checked the shapes (sizes ≥ 1,
/// `ranks_per_node` divides `dp`); placement itself never fails.
pub fn place(groups: &[GroupShape], input: &PlacementInput) -> Placement {
    let mut ordered: Vec<GroupShape> = Vec::new();
    for role in [Role::Prefill, Role::Decode, Role::Mixed] {
        ordered.extend(groups.iter().copied().filter(|g| g.role == role));
    }
    let mut p = Placement::default();
    p.engines
        .reserve(ordered.iter().map(|g| g.count as usize).sum());
    p.nodes.reserve(
        ordered
            .iter()
            .map(|g| g.count as usize * g.dp.div_ceil(g.ranks_per_node.max(1)) as usize)
            .sum(),
    );
    let mut role_counts = [0usize; 3];
    for g in &ordered {
        for _ in 0..g.count {
            let slot = match g.role {
                Role::Prefill => 0,
                Role::Decode => 1,
                Role::Mixed => 2,
            };
            let role_index = role_counts[slot];
            role_counts[slot] += 1;
            let rpn = g.ranks_per_node.max(1);
            let node_count = g.dp.div_ceil(rpn) as usize;
            let first = p.nodes.len();
            let index = p.engines.len();
            let pick =
                |list: &[u32]| -> Option<u32> { list.get(role_index).or(list.first()).copied() };
            let given = |ids: &Option<Vec<Vec<u64>>>| -> Vec<u64> {
                ids.as_ref()
                    .and_then(|ids| ids.get(role_index).cloned())
                    .unwrap_or_default()
            };
            let (kv_port, node_ids) = match (input.connector, g.role) {
                (Some(_), Role::Prefill) => (pick(&input.kv_prefill), given(&input.ids_prefill)),
                (Some(_), Role::Decode) => (pick(&input.kv_decode), given(&input.ids_decode)),
                _ => (None, Vec::new()),
            };
            // The k-th node's id: its own where one per node is given, else
            // the engine's (written or derived).
            let derived = input
                .connector
                .and_then(|_| derived_engine_id(g.role, role_index));
            let id_on = |k: usize| -> Option<u64> {
                match node_ids.as_slice() {
                    [] => derived,
                    [one] => Some(*one),
                    many => many.get(k).or(many.first()).copied(),
                }
            };
            let engine_id = id_on(0);
            let ports = input.role_ports.get(&g.role).copied().unwrap_or(RolePorts {
                api: input.api_port,
                dp_rpc: input.dp_rpc_port,
            });
            let nodes: Vec<usize> = (first..first + node_count).collect();
            for (k, &node) in nodes.iter().enumerate() {
                let start = k as u32 * rpn;
                let local = rpn.min(g.dp - start);
                let width = g.tp * g.pcp.max(1);
                let ranks = (0..local)
                    .map(|i| {
                        let dp_rank = start + i;
                        let api_port = match g.role {
                            Role::Mixed if k == 0 && i == 0 => Some(ports.api),
                            Role::Mixed => None,
                            _ => Some(ports.api + i),
                        };
                        RankPlan {
                            dp_rank,
                            local_index: i,
                            devices: Devices::range(i * width..(i + 1) * width),
                            api_port,
                            kv_span: match (input.connector, kv_port) {
                                (Some(kind), Some(kv)) => {
                                    Some(kv_span(kind, kv, dp_rank, g.tp, g.pcp))
                                }
                                _ => None,
                            },
                        }
                    })
                    .collect();
                p.nodes.push(NodePlan {
                    index: node,
                    role: g.role,
                    engine: index,
                    dp_size_local: local,
                    dp_rank_start: start,
                    dp_master: first,
                    headless: g.role == Role::Mixed && k > 0,
                    hosts_proxy: node == 0 && input.connector.is_some(),
                    engine_id: id_on(k),
                    ranks,
                });
            }
            p.engines.push(EnginePlan {
                index,
                role: g.role,
                role_index,
                dp: g.dp,
                tp: g.tp,
                pcp: g.pcp.max(1),
                ranks_per_node: rpn,
                nodes,
                engine_id,
                kv_port,
                api_port: ports.api,
                dp_rpc_port: ports.dp_rpc,
            });
        }
    }
    if input.connector.is_some() {
        let listed = |role: Role| -> usize {
            p.nodes
                .iter()
                .filter(|n| n.role == role)
                .map(|n| n.ranks.iter().filter(|r| r.api_port.is_some()).count())
                .sum()
        };
        p.proxy.prefill.reserve_exact(listed(Role::Prefill));
        p.proxy.decode.reserve_exact(listed(Role::Decode));
        for node in &p.nodes {
            let list = match node.role {
                Role::Prefill => &mut p.proxy.prefill,
                Role::Decode => &mut p.proxy.decode,
                Role::Mixed => continue,
            };
            list.extend(node.ranks.iter().filter_map(|r| {
                r.api_port.map(|port| Endpoint {
                    node: node.index,
                    port,
                })
            }));
        }
    }
    p
}

#[cfg(test)]
mod tests;
