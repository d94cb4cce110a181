//! The connector, the KV pool and the proxy as written.

use super::*;

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

/// vllm-ascend's connector that keeps a KV pool (registered in
/// vllm_ascend/distributed/kv_transfer/__init__.py).
pub const STORE_CONNECTOR: &str = "AscendStoreConnector";
/// vLLM's connector chaining several (vllm/distributed/kv_transfer/
/// kv_connector/v1/multi_connector.py).
pub const MULTI_CONNECTOR: &str = "MultiConnector";

impl ConnectorSpec {
    /// The connector classes the derived `kv_transfer_config` holds: the
    /// layout's Mooncake connector and, with a KV pool, the store connector
    /// (both inside a [`MULTI_CONNECTOR`]). `Layout::kv_transfer_config`
    /// builds it from the same parts.
    pub fn kv_connectors(&self) -> Vec<&'static str> {
        let mut out = vec![self.kind.value.kv_connector()];
        if self.pool.is_some() {
            out.push(STORE_CONNECTOR);
        }
        out
    }
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
