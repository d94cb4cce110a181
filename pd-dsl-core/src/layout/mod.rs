//! A checked layout: the spec plus everything derived from it. Only
//! [`crate::check::check`] builds one, so holding a `Layout` means every rule
//! passed or was acknowledged.

mod serve;

pub use serve::{Serve, Speculative};

use crate::placement::{EnginePlan, Placement};
use crate::rules::Rule;
use crate::spec::{ConnectorKind, Json, LayoutSpec, PoolSpec, ProxyScript, Role, Verification};
use crate::tables::{Hardware, Image, Model};
use serde::Serialize;
use serde_json::json;
use std::collections::BTreeMap;

/// A rule the layout breaks on purpose, with its reason and what was found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Acknowledged {
    /// The rule.
    pub rule: Rule,
    /// The author's reason.
    pub reason: String,
    /// Each violation it covers, as the checker worded it.
    pub findings: Vec<String>,
}

/// What listens on a port (range) of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SocketKind {
    /// A rank's API server.
    Api {
        /// Global DP rank.
        dp_rank: u32,
    },
    /// A rank's kv handshake span. Both roles compute it; only the
    /// connector's binding role listens on it (facts §3.3).
    Kv {
        /// Global DP rank.
        dp_rank: u32,
        /// Whether this role binds the span.
        binds: bool,
    },
    /// The DP RPC port on an engine's DP master.
    DpRpc,
    /// The proxy on node 0.
    Proxy,
    /// A KV pool service port on node 0 (`meta_service_port`, ...).
    Pool {
        /// The port's name in `pool.ports`.
        name: &'static str,
    },
}

/// An inclusive port range a node uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Socket {
    /// First port.
    pub first: u32,
    /// Last port (inclusive).
    pub last: u32,
    /// What it is.
    pub kind: SocketKind,
}

/// The proxy as resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Proxy {
    /// Listen port on node 0.
    pub port: u32,
    /// Script.
    pub script: ProxyScript,
}

/// A checked layout with everything derived.
#[derive(Clone, Debug, Serialize)]
pub struct Layout {
    /// The layout as written.
    pub spec: LayoutSpec,
    /// Model table entry.
    pub model: &'static Model,
    /// Hardware table entry.
    pub hardware: &'static Hardware,
    /// Image table entry.
    pub image: &'static Image,
    /// Full image reference for the hardware.
    pub image_ref: String,
    /// Derived placement.
    pub placement: Placement,
    /// Connector (PD layouts).
    pub connector: Option<ConnectorKind>,
    /// Proxy (PD layouts).
    pub proxy: Option<Proxy>,
    /// API port base: the common `ports.api`, else the first engine's (each
    /// engine's own is [`EnginePlan::api_port`]).
    pub api_port: u32,
    /// DP RPC port, where used: the common `ports.dp_rpc`, else the first
    /// engine's (each engine's own is [`EnginePlan::dp_rpc_port`]).
    pub dp_rpc_port: Option<u32>,
    /// Weights path.
    pub model_path: String,
    /// `--served-model-name`.
    pub served_model_name: String,
    /// Serve settings per role present in the topology.
    pub serve: BTreeMap<Role, Serve>,
    /// Serve settings of the nodes with their own block (`nodes:`), by
    /// node index: what their ranks run instead of their role's.
    pub node_serve: BTreeMap<usize, Serve>,
    /// Rules broken on purpose.
    pub acknowledged: Vec<Acknowledged>,
    /// True only when the layout was verified on exactly its image.
    pub verified: bool,
}

impl Layout {
    /// The layout's name.
    pub fn name(&self) -> &str {
        &self.spec.name.value
    }

    /// True for PD layouts.
    pub fn is_pd(&self) -> bool {
        self.connector.is_some()
    }

    /// Roles present, in node order.
    pub fn roles(&self) -> Vec<Role> {
        self.serve.keys().copied().collect()
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.placement.nodes.len()
    }

    /// NPUs used over all nodes.
    pub fn npus_used(&self) -> usize {
        self.placement.nodes.iter().map(|n| n.npus_used()).sum()
    }

    /// The topology in the card's notation, `<prefill 3 x dp4tp4; decode 1 x dp16tp1;>`.
    pub fn topology_text(&self) -> String {
        let mut s = String::from("<");
        for g in &self.spec.topology {
            s.push_str(&format!(
                "{} {} x {}",
                g.role.value,
                g.count.value,
                g.shape()
            ));
            if let Some(r) = &g.ranks_per_node {
                s.push_str(&format!(" / {}", r.value));
            }
            s.push_str("; ");
        }
        if s.ends_with(' ') {
            s.pop();
        }
        s.push('>');
        s
    }

    /// The engine whose shape a role's `kv_connector_extra_config` block
    /// describes (all engines of a role share one shape).
    pub fn role_shape(&self, role: Role) -> Option<(u32, u32)> {
        self.placement
            .engines
            .iter()
            .find(|e| e.role == role)
            .map(|e| (e.dp, e.tp))
    }

    /// `kv_connector_extra_config`: identical on every engine.
    pub fn kv_connector_extra_config(&self) -> Json {
        let mut m = serde_json::Map::new();
        for role in [Role::Prefill, Role::Decode] {
            if let Some((dp, tp)) = self.role_shape(role) {
                m.insert(
                    role.as_str().into(),
                    json!({ "dp_size": dp, "tp_size": tp }),
                );
            }
        }
        if let Some(c) = &self.spec.connector {
            for (k, v) in &c.extra {
                m.insert(k.clone(), v.value.clone());
            }
        }
        Json::Object(m)
    }

    /// The `--kv-transfer-config` of an engine. `kv_port` and `engine_id` are
    /// strings, as every upstream example writes them.
    pub fn kv_transfer_config(&self, engine: &EnginePlan) -> Option<Json> {
        let kind = self.connector?;
        let mut m = serde_json::Map::new();
        m.insert("kv_connector".into(), json!(kind.kv_connector()));
        m.insert("kv_role".into(), json!(engine.role.kv_role()?));
        m.insert("kv_port".into(), json!(engine.kv_port?.to_string()));
        if let Some(id) = engine.engine_id {
            m.insert("engine_id".into(), json!(id.to_string()));
        }
        m.insert(
            "kv_connector_extra_config".into(),
            self.kv_connector_extra_config(),
        );
        let Some(pool) = self.pool() else {
            return Some(Json::Object(m));
        };
        // A KV pool: vLLM's MultiConnector over the PD connector and
        // vllm-ascend's AscendStoreConnector, every child with its own
        // role; the PD connector keeps its own kv_port and engine_id
        // (vllm distributed/kv_transfer/kv_connector/v1/multi_connector.py
        // `_get_connector_classes_and_configs`: a child's `engine_id` wins
        // over the outer one, @0.26.0+).
        let role = engine.role.kv_role()?;
        let store = json!({
            "kv_connector": crate::spec::STORE_CONNECTOR,
            "kv_role": role,
            "kv_connector_extra_config": pool.store_extra(engine.role),
        });
        Some(json!({
            "kv_connector": crate::spec::MULTI_CONNECTOR,
            "kv_role": role,
            "kv_connector_extra_config": { "connectors": [Json::Object(m), store] },
        }))
    }

    /// The KV pool next to the PD connector, if any.
    pub fn pool(&self) -> Option<&PoolSpec> {
        self.spec.connector.as_ref()?.pool.as_ref()
    }

    /// Every port (range) node `index` uses, in rank order then DP RPC and
    /// proxy. The one place that says which sockets a node has: the
    /// collision rule, preflight's free-port check and docs all read it.
    pub fn node_sockets(&self, index: usize) -> Vec<Socket> {
        let mut out = Vec::new();
        self.node_sockets_into(index, &mut out);
        out
    }

    /// [`Layout::node_sockets`] into `out` (cleared first), so a caller
    /// walking every node reuses one buffer.
    pub fn node_sockets_into(&self, index: usize, out: &mut Vec<Socket>) {
        out.clear();
        let Some(node) = self.placement.nodes.get(index) else {
            return;
        };
        out.reserve(2 * node.ranks.len() + 2);
        let binding = self.connector.map(ConnectorKind::binding_role);
        for r in &node.ranks {
            if let Some(p) = r.api_port {
                out.push(Socket {
                    first: p,
                    last: p,
                    kind: SocketKind::Api { dp_rank: r.dp_rank },
                });
            }
            if let Some((first, last)) = r.kv_span {
                out.push(Socket {
                    first,
                    last,
                    kind: SocketKind::Kv {
                        dp_rank: r.dp_rank,
                        binds: binding == Some(node.role),
                    },
                });
            }
        }
        // The DP master listens on the RPC port when ranks talk to it over
        // the network: every external-DP (PD) engine, and native DP across
        // nodes; a single-node mixed engine keeps it internal.
        let engine = self.placement.engines.get(node.engine);
        let spans_nodes = engine.is_some_and(|e| e.nodes.len() > 1);
        if let Some(rpc) = engine.and_then(|e| e.dp_rpc_port)
            && node.dp_master == node.index
            && (self.is_pd() || spans_nodes)
        {
            out.push(Socket {
                first: rpc,
                last: rpc,
                kind: SocketKind::DpRpc,
            });
        }
        if node.index == 0
            && let Some(pool) = self.pool()
        {
            for name in pool.backend.value.port_names() {
                if let Some(p) = pool
                    .port(name)
                    .map(|p| u32::try_from(p).unwrap_or(u32::MAX))
                {
                    out.push(Socket {
                        first: p,
                        last: p,
                        kind: SocketKind::Pool { name },
                    });
                }
            }
        }
        if node.hosts_proxy
            && let Some(p) = self.proxy
        {
            out.push(Socket {
                first: p.port,
                last: p.port,
                kind: SocketKind::Proxy,
            });
        }
    }

    /// True when every engine uses the layout's one DP RPC port
    /// ([`Layout::dp_rpc_port`]), so scripts may state it once.
    pub fn uniform_dp_rpc_port(&self) -> bool {
        self.placement
            .engines
            .iter()
            .all(|e| e.dp_rpc_port == self.dp_rpc_port)
    }

    /// Whether the layout names an upstream "verified" image at all.
    pub fn verified_on(&self) -> Option<&str> {
        match &self.spec.verified.value {
            Verification::On(t) => Some(&t.value),
            _ => None,
        }
    }

    /// One line on verification for docs.
    pub fn verification_text(&self) -> String {
        match &self.spec.verified.value {
            Verification::On(t) if self.verified => format!("verified on {}", t.value),
            Verification::On(t) => format!(
                "not verified on {}: last hardware-verified on {}; flipped to false until re-run",
                self.image.tag, t.value
            ),
            Verification::Before(t) => format!(
                "not verified on {}: hardware-verified on an earlier image (before {}); flipped to false until re-run",
                self.image.tag, t.value
            ),
            Verification::Never if self.spec.provenance.derived_from.is_some() => format!(
                "not verified on {}: derived from {}, not separately validated",
                self.image.tag,
                self.spec
                    .provenance
                    .derived_from
                    .as_ref()
                    .map(|d| d.value.as_str())
                    .unwrap_or_default()
            ),
            Verification::Never => format!(
                "not verified on {}: never hardware-verified",
                self.image.tag
            ),
        }
    }
}
