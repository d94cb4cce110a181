//! The layout as written: what the `layout!` macro lowers to and what a
//! YAML/JSON layout file deserializes into. Nothing here is derived; see
//! [`crate::placement`] and [`crate::layout`] for what is computed from it.

use crate::site::{Site, Spanned};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// A JSON value (additional_config entries, flag values, connector extras).
pub type Json = serde_json::Value;

/// What an engine does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(Default)]
pub enum Role {
    /// Prefill engine (`kv_producer`).
    Prefill,
    /// Decode engine (`kv_consumer`).
    Decode,
    /// No PD: one engine does both.
    #[default]
    Mixed,
}

impl Role {
    /// The DSL keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Prefill => "prefill",
            Role::Decode => "decode",
            Role::Mixed => "mixed",
        }
    }

    /// The `kv_role` of the connector config, if any.
    pub fn kv_role(self) -> Option<&'static str> {
        match self {
            Role::Prefill => Some("kv_producer"),
            Role::Decode => Some("kv_consumer"),
            Role::Mixed => None,
        }
    }

    /// Parses the DSL keyword.
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "prefill" => Some(Role::Prefill),
            "decode" => Some(Role::Decode),
            "mixed" => Some(Role::Mixed),
            _ => None,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `prefill 3 x dp4tp4` (optionally `/ 2` ranks per node).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineGroup {
    /// Role of every engine in the group.
    pub role: Spanned<Role>,
    /// Number of independent engines.
    pub count: Spanned<u64>,
    /// `--data-parallel-size` of each engine.
    pub dp: Spanned<u64>,
    /// `--tensor-parallel-size` of each rank.
    pub tp: Spanned<u64>,
    /// `--prefill-context-parallel-size` of each rank (`pcp<N>` after the
    /// TP size), when above 1: a rank then spans `tp x pcp` NPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcp: Option<Spanned<u64>>,
    /// Ranks per node, when not packed as densely as the node allows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks_per_node: Option<Spanned<u64>>,
    /// Where the whole `dpXtpY` shape was written.
    #[serde(skip)]
    pub shape_site: Site,
}

impl EngineGroup {
    /// The PCP size (1 unless written).
    pub fn pcp(&self) -> u64 {
        self.pcp.as_ref().map_or(1, |p| p.value)
    }

    /// The shape as written: `dp4tp4`, `dp1tp8pcp2`.
    pub fn shape(&self) -> String {
        shape_text(self.dp.value, self.tp.value, self.pcp())
    }
}

/// `dp{dp}tp{tp}`, with `pcp{pcp}` when above 1.
pub fn shape_text(dp: u64, tp: u64, pcp: u64) -> String {
    if pcp > 1 {
        format!("dp{dp}tp{tp}pcp{pcp}")
    } else {
        format!("dp{dp}tp{tp}")
    }
}

/// The Mooncake connector family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnectorKind {
    /// `MooncakeConnectorV1` (pull; D pulls KV after prefill).
    MooncakeV1,
    /// `MooncakeHybridConnector` (pull; hybrid/compressed KV, DeepSeek-V4).
    MooncakeHybrid,
    /// `MooncakeLayerwiseConnector` (push; P pushes KV per layer).
    MooncakeLayerwise,
}

impl ConnectorKind {
    /// The registered `kv_connector` name (kv_transfer/__init__.py @HEAD).
    pub fn kv_connector(self) -> &'static str {
        match self {
            ConnectorKind::MooncakeV1 => "MooncakeConnectorV1",
            ConnectorKind::MooncakeHybrid => "MooncakeHybridConnector",
            ConnectorKind::MooncakeLayerwise => "MooncakeLayerwiseConnector",
        }
    }

    /// Every connector family.
    pub const ALL: [ConnectorKind; 3] = [
        ConnectorKind::MooncakeV1,
        ConnectorKind::MooncakeHybrid,
        ConnectorKind::MooncakeLayerwise,
    ];

    /// The family registered under a `kv_connector` name, if any.
    pub fn from_kv_connector(name: &str) -> Option<ConnectorKind> {
        Self::ALL.into_iter().find(|k| k.kv_connector() == name)
    }

    /// The DSL keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            ConnectorKind::MooncakeV1 => "mooncake_v1",
            ConnectorKind::MooncakeHybrid => "mooncake_hybrid",
            ConnectorKind::MooncakeLayerwise => "mooncake_layerwise",
        }
    }

    /// Parses the DSL keyword.
    pub fn parse(s: &str) -> Option<ConnectorKind> {
        match s {
            "mooncake_v1" => Some(ConnectorKind::MooncakeV1),
            "mooncake_hybrid" => Some(ConnectorKind::MooncakeHybrid),
            "mooncake_layerwise" => Some(ConnectorKind::MooncakeLayerwise),
            _ => None,
        }
    }

    /// The proxy script this connector pairs with (facts §10.10).
    pub fn proxy_script(self) -> ProxyScript {
        match self {
            ConnectorKind::MooncakeV1 | ConnectorKind::MooncakeHybrid => ProxyScript::LoadBalance,
            ConnectorKind::MooncakeLayerwise => ProxyScript::Layerwise,
        }
    }

    /// Which role binds the handshake ports (facts §3.3).
    pub fn binding_role(self) -> Role {
        match self {
            ConnectorKind::MooncakeLayerwise => Role::Decode,
            _ => Role::Prefill,
        }
    }
}

/// The kv ports: one per role, or one per engine of the role.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KvPorts {
    /// Prefill engines' `kv_port`: one value for all, or one per engine.
    pub prefill: Vec<Spanned<u64>>,
    /// Decode engines' `kv_port`: one value for all, or one per engine.
    pub decode: Vec<Spanned<u64>>,
}

/// `connector: mooncake_hybrid { kv_port: { prefill: 36000, decode: 36100 } }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectorSpec {
    /// Connector family.
    pub kind: Spanned<ConnectorKind>,
    /// kv ports.
    pub kv_port: KvPorts,
    /// Extra `kv_connector_extra_config` entries beyond the derived
    /// `prefill`/`decode` shapes (e.g. `ascend_local_comm_res_path`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Spanned<Json>>,
    /// A KV pool next to the PD connector: the engines then run vLLM's
    /// `MultiConnector` chaining this connector and vllm-ascend's
    /// `AscendStoreConnector` on the pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<PoolSpec>,
    /// Where the connector was written.
    #[serde(skip)]
    pub site: Site,
}

/// The store a KV pool keeps blocks in (`AscendStoreConnector`'s
/// `backend`; vllm-ascend `distributed/kv_transfer/kv_pool/ascend_store/backend/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PoolBackend {
    /// Memcache (`memcache_hybrid`): a MetaService on node 0, a local
    /// config per node (`MMC_LOCAL_CONFIG_PATH`).
    Memcache,
    /// Mooncake store: `mooncake_master` on node 0, a store config per node
    /// (`MOONCAKE_CONFIG_PATH`).
    Mooncake,
}

impl PoolBackend {
    /// Every backend, in DSL order.
    pub const ALL: [PoolBackend; 2] = [PoolBackend::Memcache, PoolBackend::Mooncake];

    /// The DSL keyword, also `AscendStoreConnector`'s `backend` value.
    pub fn as_str(self) -> &'static str {
        match self {
            PoolBackend::Memcache => "memcache",
            PoolBackend::Mooncake => "mooncake",
        }
    }

    /// Parses the DSL keyword.
    pub fn parse(s: &str) -> Option<PoolBackend> {
        PoolBackend::ALL.into_iter().find(|b| b.as_str() == s)
    }

    /// The env variable holding the per-node config file's path. The
    /// backend's library reads it (memcache_hybrid; vllm-ascend's docs
    /// docs/source/user_guide/feature_guide/kv_pool.md `export
    /// MMC_LOCAL_CONFIG_PATH=...` @v0.22.1rc1); vllm-ascend reads it too
    /// where the generated facts' `kv_pool_backends` say so, and a test
    /// holds the two equal.
    pub fn config_env(self) -> &'static str {
        match self {
            PoolBackend::Memcache => "MMC_LOCAL_CONFIG_PATH",
            PoolBackend::Mooncake => "MOONCAKE_CONFIG_PATH",
        }
    }

    /// The two service ports the backend needs, as upstream's e2e runner
    /// names them (tests/e2e/common/kv_pool/config.py @0.27.1rc1+):
    /// the one the engines reach first, then the second.
    pub fn port_names(self) -> [&'static str; 2] {
        match self {
            PoolBackend::Memcache => ["meta_service_port", "config_store_port"],
            PoolBackend::Mooncake => ["master_port", "metrics_port"],
        }
    }
}

impl fmt::Display for PoolBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `pool: memcache { meta_service_port: 5000, config_store_port: 6000,
/// config: { meta: { .. }, local: { .. } }, prefill: { use_layerwise: true } }`
/// inside `connector`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolSpec {
    /// The store.
    pub backend: Spanned<PoolBackend>,
    /// Service ports by name (the backend's [`PoolBackend::port_names`]),
    /// all on node 0.
    pub ports: BTreeMap<String, Spanned<u64>>,
    /// The backend's own configuration, as upstream's e2e `kv_pool.config`:
    /// memcache `{ meta: {..}, local: {..} }` (`key = value` files), mooncake
    /// the store's JSON. `${MASTER_IP}`, `${LOCAL_IP}`, `${NODE_<k>_IP}` are
    /// filled per node at start.
    #[serde(default)]
    pub config: BTreeMap<String, Spanned<Json>>,
    /// `AscendStoreConnector`'s `kv_connector_extra_config` on every engine
    /// (`backend` is derived).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Spanned<Json>>,
    /// Entries over `extra` on prefill engines.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub prefill: BTreeMap<String, Spanned<Json>>,
    /// Entries over `extra` on decode engines.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub decode: BTreeMap<String, Spanned<Json>>,
    /// Where the pool was written.
    #[serde(skip)]
    pub site: Site,
}

impl PoolSpec {
    /// A service port by name.
    pub fn port(&self, name: &str) -> Option<u64> {
        self.ports.get(name).map(|p| p.value)
    }

    /// `AscendStoreConnector`'s extra config on `role`'s engines: `backend`,
    /// then `extra`, then the role's entries.
    pub fn store_extra(&self, role: Role) -> Json {
        let mut m = serde_json::Map::new();
        m.insert("backend".into(), Json::from(self.backend.value.as_str()));
        let own = match role {
            Role::Prefill => &self.prefill,
            Role::Decode => &self.decode,
            Role::Mixed => &self.extra,
        };
        for (k, v) in self.extra.iter().chain(own) {
            if k != "backend" {
                m.insert(k.clone(), v.value.clone());
            }
        }
        Json::Object(m)
    }
}

/// Which upstream proxy script runs in front.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProxyScript {
    /// `load_balance_proxy_server_example.py` (pull mode: P first, then D).
    LoadBalance,
    /// `load_balance_proxy_layerwise_server_example.py` (push mode).
    Layerwise,
}

impl ProxyScript {
    /// The script's file name under `examples/disaggregated_prefill_v1/`.
    pub fn file_name(self) -> &'static str {
        match self {
            ProxyScript::LoadBalance => "load_balance_proxy_server_example.py",
            ProxyScript::Layerwise => "load_balance_proxy_layerwise_server_example.py",
        }
    }

    /// The DSL keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            ProxyScript::LoadBalance => "load_balance",
            ProxyScript::Layerwise => "layerwise",
        }
    }

    /// Parses the DSL keyword.
    pub fn parse(s: &str) -> Option<ProxyScript> {
        match s {
            "load_balance" => Some(ProxyScript::LoadBalance),
            "layerwise" => Some(ProxyScript::Layerwise),
            _ => None,
        }
    }
}

/// `proxy: { port: 1999, script: load_balance }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProxySpec {
    /// Listen port on node 0.
    pub port: Spanned<u64>,
    /// Script; derived from the connector when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<Spanned<ProxyScript>>,
    /// Where the proxy was written.
    #[serde(skip)]
    pub site: Site,
}

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

/// How the compute graph runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GraphMode {
    /// `--enforce-eager`.
    Eager,
    /// `--compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}'`.
    FullDecodeOnly,
    /// `--compilation-config '{"cudagraph_mode": "FULL"}'`.
    Full,
    /// `--compilation-config '{"cudagraph_mode": "PIECEWISE"}'`.
    Piecewise,
}

impl GraphMode {
    /// The DSL keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            GraphMode::Eager => "eager",
            GraphMode::FullDecodeOnly => "full_decode_only",
            GraphMode::Full => "full",
            GraphMode::Piecewise => "piecewise",
        }
    }

    /// Parses the DSL keyword.
    pub fn parse(s: &str) -> Option<GraphMode> {
        match s {
            "eager" => Some(GraphMode::Eager),
            "full_decode_only" => Some(GraphMode::FullDecodeOnly),
            "full" => Some(GraphMode::Full),
            "piecewise" => Some(GraphMode::Piecewise),
            _ => None,
        }
    }

    /// The `cudagraph_mode` value, or `None` for eager.
    pub fn cudagraph_mode(self) -> Option<&'static str> {
        match self {
            GraphMode::Eager => None,
            GraphMode::FullDecodeOnly => Some("FULL_DECODE_ONLY"),
            GraphMode::Full => Some("FULL"),
            GraphMode::Piecewise => Some("PIECEWISE"),
        }
    }
}

/// `speculative: { method: mtp, tokens: 1, enforce_eager: true }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpeculativeSpec {
    /// Method name (`mtp`, `deepseek_mtp`, ...).
    pub method: Spanned<String>,
    /// `num_speculative_tokens`.
    pub tokens: Spanned<u64>,
    /// `enforce_eager` inside the speculative config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enforce_eager: Option<Spanned<bool>>,
    /// Where the block was written.
    #[serde(skip)]
    pub site: Site,
}

/// An environment value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EnvValue {
    /// `NAME=value`.
    Literal(String),
    /// `NAME=value${NAME:+:$NAME}`: put `dir` in front of a path list.
    Prepend {
        /// Directory (or file) to put first.
        prepend: String,
    },
}

impl EnvValue {
    /// The literal text or prepended entry.
    pub fn text(&self) -> &str {
        match self {
            EnvValue::Literal(s) => s,
            EnvValue::Prepend { prepend } => prepend,
        }
    }
}

/// One environment entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvEntry {
    /// Variable name.
    pub name: Spanned<String>,
    /// Value.
    pub value: Spanned<EnvValue>,
}

/// One extra `vllm serve` flag.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlagEntry {
    /// Flag with its dashes, e.g. `--tokenizer-mode`.
    pub name: Spanned<String>,
    /// Value; `None` for a switch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Spanned<Json>>,
}

/// Serve settings for all roles (`serve`) or one role (`prefill`, `decode`,
/// `mixed`). Role settings override common ones field by field; env, flags and
/// `additional_config` merge by name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServeSpec {
    /// `--max-model-len`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_model_len: Option<Spanned<u64>>,
    /// `--max-num-batched-tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_num_batched_tokens: Option<Spanned<u64>>,
    /// `--max-num-seqs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_num_seqs: Option<Spanned<u64>>,
    /// `--gpu-memory-utilization`, kept as written (`0.92`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_memory_utilization: Option<Spanned<String>>,
    /// `--block-size`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_size: Option<Spanned<u64>>,
    /// `--seed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<Spanned<u64>>,
    /// `--enable-expert-parallel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expert_parallel: Option<Spanned<bool>>,
    /// `--trust-remote-code`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust_remote_code: Option<Spanned<bool>>,
    /// `--async-scheduling`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub async_scheduling: Option<Spanned<bool>>,
    /// `false` renders `--no-enable-prefix-caching`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_caching: Option<Spanned<bool>>,
    /// Eager or a cudagraph mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph: Option<Spanned<GraphMode>>,
    /// `cudagraph_capture_sizes` of the graph mode written in the same
    /// block (`graph: full_decode_only { capture_sizes: [4, 8] }`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capture_sizes: Vec<Spanned<u64>>,
    /// `--speculative-config`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speculative: Option<SpeculativeSpec>,
    /// `--additional-config` entries.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub additional_config: BTreeMap<String, Spanned<Json>>,
    /// Where nested `additional_config` values were written, by dotted
    /// path (`finegrained_tp_config.lmhead_tensor_parallel_size`), so a
    /// rule about an inner value points at it rather than at its top key.
    #[serde(skip)]
    pub additional_config_sites: BTreeMap<String, Site>,
    /// Further flags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<FlagEntry>,
    /// Environment exported before `vllm serve`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvEntry>,
    /// Where the block was written.
    #[serde(skip)]
    pub site: Site,
}

impl ServeSpec {
    /// Whether the block sets nothing (its site aside).
    pub fn is_empty(&self) -> bool {
        let mut bare = self.clone();
        bare.site = Site::NONE;
        bare.additional_config_sites.clear();
        bare == ServeSpec::default()
    }

    /// This block with `over` written on top (each setting `over` has wins,
    /// `additional_config` keys, flags and env by name), keeping every
    /// setting's site: the one block a node's ranks run, for the rules.
    pub fn overlay(&self, over: &ServeSpec) -> ServeSpec {
        let mut out = self.clone();
        macro_rules! take {
            ($($f:ident),*) => {$(
                if over.$f.is_some() {
                    out.$f = over.$f.clone();
                }
            )*};
        }
        take!(
            max_model_len,
            max_num_batched_tokens,
            max_num_seqs,
            gpu_memory_utilization,
            block_size,
            seed,
            expert_parallel,
            trust_remote_code,
            async_scheduling,
            prefix_caching,
            speculative
        );
        if over.graph.is_some() {
            out.graph = over.graph.clone();
            out.capture_sizes = over.capture_sizes.clone();
        }
        for (k, v) in &over.additional_config {
            out.additional_config.insert(k.clone(), v.clone());
        }
        for (k, v) in &over.additional_config_sites {
            out.additional_config_sites.insert(k.clone(), *v);
        }
        for f in &over.flags {
            match out.flags.iter_mut().find(|x| x.name.value == f.name.value) {
                Some(slot) => *slot = f.clone(),
                None => out.flags.push(f.clone()),
            }
        }
        for e in &over.env {
            match out.env.iter_mut().find(|x| x.name.value == e.name.value) {
                Some(slot) => *slot = e.clone(),
                None => out.env.push(e.clone()),
            }
        }
        if out.site == Site::NONE {
            out.site = over.site;
        }
        out
    }
}

/// Hardware of the layout: one kind, or one per role.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum HardwareSpec {
    /// Every node is this kind.
    All(Spanned<String>),
    /// Per role (must still be one family).
    PerRole(BTreeMap<Role, Spanned<String>>),
}

impl Default for HardwareSpec {
    fn default() -> Self {
        HardwareSpec::All(Spanned::default())
    }
}

/// When the layout was last verified on hardware.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(Default)]
pub enum Verification {
    /// Never verified on hardware.
    #[default]
    Never,
    /// Verified on this image tag.
    On(Spanned<String>),
    /// Verified on an image earlier than this tag; which one was not recorded.
    Before(Spanned<String>),
}

/// Provenance of the layout.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProvenanceSpec {
    /// Date the layout was recorded (`YYYY-MM-DD`).
    pub recorded: Spanned<String>,
    /// Name of the layout this one was derived from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derived_from: Option<Spanned<String>>,
    /// Upstream sources (path @ref).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<Spanned<String>>,
    /// What the last refresh changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refresh: Vec<Spanned<String>>,
}

/// `allow(rule, "reason")`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllowSpec {
    /// Rule name.
    pub rule: Spanned<String>,
    /// Why the layout breaks it.
    pub reason: Spanned<String>,
}

/// `deviate("what", "why")`: a difference from upstream that no rule covers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviationSpec {
    /// What differs.
    pub what: Spanned<String>,
    /// Why.
    pub why: Spanned<String>,
}

/// The benchmark workload `bench.sh` runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchSpec {
    /// `--random-input-len`.
    pub input_len: Spanned<u64>,
    /// `--random-output-len`.
    pub output_len: Spanned<u64>,
    /// `--num-prompts`.
    pub num_prompts: Spanned<u64>,
    /// `--request-rate` (requests/s, as written) or `inf`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_rate: Option<Spanned<String>>,
    /// `--max-concurrency`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<Spanned<u64>>,
}

/// A published figure, kept as reference data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureSpec {
    /// Metric (`TTFT`).
    pub metric: Spanned<String>,
    /// Value with unit (`6.16 s`).
    pub value: Spanned<String>,
    /// Hardware, image and workload it came from.
    pub context: Spanned<String>,
}

/// A whole layout as written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayoutSpec {
    /// Doc comment: what the layout is and when to use it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub summary: Vec<String>,
    /// `family/variant` name, unique in the catalog.
    pub name: Spanned<String>,
    /// Model table id.
    pub model: Spanned<String>,
    /// Hardware table id(s).
    pub hardware: HardwareSpec,
    /// Image tag without hardware suffix.
    pub image: Spanned<String>,
    /// Engines by role.
    pub topology: Vec<EngineGroup>,
    /// Where the topology was written.
    #[serde(skip)]
    pub topology_site: Site,
    /// KV connector (PD layouts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connector: Option<ConnectorSpec>,
    /// Port bases.
    pub ports: PortsSpec,
    /// Proxy (PD layouts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<ProxySpec>,
    /// Engine ids overriding the derived ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_ids: Option<EngineIdsSpec>,
    /// Weights path inside the container (default: the model table's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_path: Option<Spanned<String>>,
    /// `--served-model-name` (default: the model table's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served_model_name: Option<Spanned<String>>,
    /// Settings for every role.
    #[serde(default)]
    pub serve: ServeSpec,
    /// Settings per role.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub roles: BTreeMap<Role, ServeSpec>,
    /// Settings per node over its role's (cluster node index, as `catalog
    /// show` numbers nodes): for the nodes of one role, or of one engine,
    /// that run different settings, as upstream's per-node `vllm serve`
    /// commands may.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub nodes: BTreeMap<u32, ServeSpec>,
    /// Provenance.
    pub provenance: ProvenanceSpec,
    /// Hardware verification.
    #[serde(default)]
    pub verified: Spanned<Verification>,
    /// Acknowledged rule deviations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<AllowSpec>,
    /// Differences from upstream no rule covers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deviations: Vec<DeviationSpec>,
    /// Workload guidance (when to use this layout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<Spanned<String>>,
    /// Benchmark workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bench: Option<BenchSpec>,
    /// Published reference figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<FigureSpec>,
}
