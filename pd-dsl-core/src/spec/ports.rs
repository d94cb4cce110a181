//! Ports and engine ids as written.

use super::*;

/// `ports: { api: 7100, dp_rpc: 12321 }`, optionally with per-role blocks
/// `prefill: { api, dp_rpc }` / `decode: { api, dp_rpc }` that override the
/// common values field by field (as upstream's e2e configs give prefill and
/// decode nodes their own `port_start` and `dp_rpc_port`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortsSpec {
    /// API port of the first rank on each node (`--vllm-start-port`), or the
    /// single API port of a mixed engine. May be left out when every role
    /// of the topology has its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<Spanned<u64>>,
    /// `--data-parallel-rpc-port` / `--dp-rpc-port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dp_rpc: Option<Spanned<u64>>,
    /// Prefill engines' ports, overriding the common ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill: Option<RolePortsSpec>,
    /// Decode engines' ports, overriding the common ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decode: Option<RolePortsSpec>,
    /// Where the block was written.
    #[serde(skip)]
    pub site: Site,
}

impl PortsSpec {
    /// The per-role block of `role`, if written.
    pub fn role(&self, role: Role) -> Option<&RolePortsSpec> {
        match role {
            Role::Prefill => self.prefill.as_ref(),
            Role::Decode => self.decode.as_ref(),
            Role::Mixed => None,
        }
    }

    /// The API start port of `role`'s engines as written: the role's own,
    /// else the common one.
    pub fn api_of(&self, role: Role) -> Option<&Spanned<u64>> {
        self.role(role)
            .and_then(|r| r.api.as_ref())
            .or(self.api.as_ref())
    }

    /// The DP RPC port of `role`'s engines as written: the role's own, else
    /// the common one.
    pub fn dp_rpc_of(&self, role: Role) -> Option<&Spanned<u64>> {
        self.role(role)
            .and_then(|r| r.dp_rpc.as_ref())
            .or(self.dp_rpc.as_ref())
    }
}

/// `prefill: { api: 7100, dp_rpc: 12321 }` inside `ports`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolePortsSpec {
    /// API start port of the role's engines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<Spanned<u64>>,
    /// DP RPC port of the role's engines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dp_rpc: Option<Spanned<u64>>,
    /// Where the block was written.
    #[serde(skip)]
    pub site: Site,
}

/// One engine's `engine_id`: one for all its nodes, or one per node (a
/// multi-node engine whose nodes' ranks pass different ids, as upstream's
/// e2e configs give each node of an engine its own, e.g. tests/e2e/weekly/
/// multi_node/external_dp/config/GLM_5_1_PD_in32k_bs20-90.yaml @v0.26.0rc1:
/// the prefill engine on nodes 0 and 1 runs with ids 0 and 1). Written `3`
/// or `[2, 3]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EngineId {
    /// The engine's id, on every node.
    One(Spanned<u64>),
    /// One id per node of the engine, in node order.
    PerNode(Vec<Spanned<u64>>),
}

impl EngineId {
    /// Every id written, in node order.
    pub fn ids(&self) -> &[Spanned<u64>] {
        match self {
            EngineId::One(id) => std::slice::from_ref(id),
            EngineId::PerNode(ids) => ids,
        }
    }

    /// The id of the engine's `k`-th node (the engine's id for `One`).
    pub fn on_node(&self, k: usize) -> Option<u64> {
        match self {
            EngineId::One(id) => Some(id.value),
            EngineId::PerNode(ids) => ids.get(k).map(|i| i.value),
        }
    }
}

impl From<Spanned<u64>> for EngineId {
    fn from(id: Spanned<u64>) -> EngineId {
        EngineId::One(id)
    }
}

/// Explicit engine ids overriding the derived ones.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineIdsSpec {
    /// One entry per prefill engine.
    #[serde(default)]
    pub prefill: Vec<EngineId>,
    /// One entry per decode engine.
    #[serde(default)]
    pub decode: Vec<EngineId>,
    /// Where the override was written.
    #[serde(skip)]
    pub site: Site,
}
