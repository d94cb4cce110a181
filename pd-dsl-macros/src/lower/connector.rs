//! The connector and what goes with it: the KV pool, ports, the proxy and
//! engine ids.

use super::Cx;
use crate::parse::{Range, Value};
use pd_dsl_core::Spanned;
use pd_dsl_core::spec::{
    ConnectorKind, ConnectorSpec, EngineId, EngineIdsSpec, KvPorts, PoolBackend, PoolSpec,
    PortsSpec, ProxyScript, ProxySpec, RolePortsSpec,
};
use std::collections::BTreeMap;

impl Cx {
    pub(super) fn connector(&mut self, v: &Value) -> Option<ConnectorSpec> {
        const KINDS: &[&str] = &["mooncake_v1", "mooncake_hybrid", "mooncake_layerwise"];
        let Value::Kinded(kind_ident, block) = v else {
            self.expected(
                v,
                "`mooncake_v1 | mooncake_hybrid | mooncake_layerwise { kv_port: { ... } }`",
                "connector",
            );
            return None;
        };
        self.errors.extend(block.errors.iter().cloned());
        self.broken.extend(block.broken.iter().cloned());
        let kind = self.keyword(
            &Value::Ident(kind_ident.clone()),
            "connector",
            KINDS,
            ConnectorKind::parse,
        );
        let fields = self.fields(&block.entries, &["kv_port", "extra", "pool"], "connector");
        let mut kv_port = KvPorts::default();
        match fields.get("kv_port") {
            Some(e) => {
                if let Some(b) = self.block(&e.value, "kv_port") {
                    let f = self.fields(&b.entries, &["prefill", "decode"], "kv_port");
                    if let Some(e) = f.get("prefill") {
                        kv_port.prefill = self.ints(&e.value, "kv_port.prefill");
                    }
                    if let Some(e) = f.get("decode") {
                        kv_port.decode = self.ints(&e.value, "kv_port.decode");
                    }
                }
            }
            None => self.missing(
                Range::of(block.span),
                "connector",
                "kv_port: { prefill: 36100, decode: 36200 }",
            ),
        }
        let extra = match fields.get("extra") {
            Some(e) => self.json_map(&e.value, "extra"),
            None => BTreeMap::new(),
        };
        let pool = match fields.get("pool") {
            Some(e) => self.pool(&e.value),
            None => None,
        };
        let kind = kind?;
        let site = self.site(Range {
            start: kind_ident.span(),
            end: block.span,
        });
        Some(ConnectorSpec {
            kind,
            kv_port,
            extra,
            pool,
            site,
        })
    }

    /// `pool: memcache { ports: { .. }, config: { .. }, extra: { .. }, prefill: { .. }, decode: { .. } }`.
    fn pool(&mut self, v: &Value) -> Option<PoolSpec> {
        const BACKENDS: &[&str] = &["memcache", "mooncake"];
        let Value::Kinded(backend_ident, block) = v else {
            self.expected(
                v,
                "`memcache | mooncake { ports: { ... }, config: { ... } }`",
                "pool",
            );
            return None;
        };
        self.errors.extend(block.errors.iter().cloned());
        self.broken.extend(block.broken.iter().cloned());
        let backend = self.keyword(
            &Value::Ident(backend_ident.clone()),
            "pool",
            BACKENDS,
            PoolBackend::parse,
        );
        let fields = self.fields(
            &block.entries,
            &["ports", "config", "extra", "prefill", "decode"],
            "pool",
        );
        let mut ports = BTreeMap::new();
        match fields.get("ports") {
            Some(e) => {
                if let Some(b) = self.block(&e.value, "pool.ports") {
                    for p in &b.entries {
                        let name = p.key.text();
                        if ports.contains_key(&name) {
                            self.err(
                                Range::of(p.key.span()),
                                format!("found `{name}` twice in `pool.ports`, expected it once: the second would silently win"),
                            );
                            continue;
                        }
                        if let Some(port) = self.int(&p.value, &format!("pool.ports.{name}")) {
                            // The rule points at the name (`kv_pool_ports`).
                            let site = self.span_site(p.key.span());
                            ports.insert(name, Spanned::new(port.value, site));
                        }
                    }
                }
            }
            None => self.missing(
                Range::of(block.span),
                "pool",
                "ports: { meta_service_port: 5000, config_store_port: 6000 }",
            ),
        }
        let mut maps = ["config", "extra", "prefill", "decode"].map(|f| match fields.get(f) {
            Some(e) => self.json_map(&e.value, &format!("pool.{f}")),
            None => BTreeMap::new(),
        });
        let backend = backend?;
        let site = self.site(Range {
            start: backend_ident.span(),
            end: block.span,
        });
        Some(PoolSpec {
            backend,
            ports,
            config: std::mem::take(&mut maps[0]),
            extra: std::mem::take(&mut maps[1]),
            prefill: std::mem::take(&mut maps[2]),
            decode: std::mem::take(&mut maps[3]),
            site,
        })
    }

    pub(super) fn ports(&mut self, v: &Value) -> PortsSpec {
        let mut ports = PortsSpec::default();
        let Some(b) = self.block(v, "ports") else {
            return ports;
        };
        ports.site = self.span_site(b.span);
        let f = self.fields(&b.entries, &["api", "dp_rpc", "prefill", "decode"], "ports");
        if let Some(e) = f.get("api") {
            ports.api = self.int(&e.value, "api");
        }
        if let Some(e) = f.get("dp_rpc") {
            ports.dp_rpc = self.int(&e.value, "dp_rpc");
        }
        if let Some(e) = f.get("prefill") {
            ports.prefill = self.role_ports(&e.value, "prefill");
        }
        if let Some(e) = f.get("decode") {
            ports.decode = self.role_ports(&e.value, "decode");
        }
        ports
    }

    /// `prefill: { api: 7100, dp_rpc: 12321 }` inside `ports`.
    fn role_ports(&mut self, v: &Value, role: &str) -> Option<RolePortsSpec> {
        let what = format!("ports.{role}");
        let b = self.block(v, &what)?;
        let f = self.fields(&b.entries, &["api", "dp_rpc"], &what);
        let mut p = RolePortsSpec {
            site: self.span_site(b.span),
            ..RolePortsSpec::default()
        };
        if let Some(e) = f.get("api") {
            p.api = self.int(&e.value, "api");
        }
        if let Some(e) = f.get("dp_rpc") {
            p.dp_rpc = self.int(&e.value, "dp_rpc");
        }
        if p.api.is_none() && p.dp_rpc.is_none() && f.is_empty() && b.errors.is_empty() {
            self.err(
                Range::of(b.span),
                format!("found an empty `{what}` block, expected `api: N` and/or `dp_rpc: N`: the {role} engines otherwise use the common ports"),
            );
        }
        Some(p)
    }

    pub(super) fn proxy(&mut self, v: &Value) -> Option<ProxySpec> {
        let b = self.block(v, "proxy")?;
        let f = self.fields(&b.entries, &["port", "script"], "proxy");
        let script = match f.get("script") {
            Some(e) => self.keyword(
                &e.value,
                "script",
                &["load_balance", "layerwise"],
                ProxyScript::parse,
            ),
            None => None,
        };
        let port = match f.get("port") {
            Some(e) => self.int(&e.value, "port")?,
            None => {
                self.missing(Range::of(b.span), "proxy", "port: 1999");
                return None;
            }
        };
        let site = self.span_site(b.span);
        Some(ProxySpec { port, script, site })
    }

    pub(super) fn engine_ids(&mut self, v: &Value) -> Option<EngineIdsSpec> {
        let b = self.block(v, "engine_ids")?;
        let f = self.fields(&b.entries, &["prefill", "decode"], "engine_ids");
        let mut ids = EngineIdsSpec {
            site: self.span_site(b.span),
            ..EngineIdsSpec::default()
        };
        if let Some(e) = f.get("prefill") {
            ids.prefill = self.engine_id_list(&e.value, "engine_ids.prefill");
        }
        if let Some(e) = f.get("decode") {
            ids.decode = self.engine_id_list(&e.value, "engine_ids.decode");
        }
        Some(ids)
    }

    /// `[a, b]` (one id per engine), `a`, or `[a, [b, c]]` (one engine's
    /// ids per node).
    fn engine_id_list(&mut self, v: &Value, field: &str) -> Vec<EngineId> {
        match v {
            Value::List(_, items) => items
                .iter()
                .filter_map(|i| match i {
                    Value::List(..) => Some(EngineId::PerNode(self.ints(i, field))),
                    _ => self.int(i, field).map(EngineId::One),
                })
                .collect(),
            Value::Int(_) => self.int(v, field).map(EngineId::One).into_iter().collect(),
            _ => {
                self.expected(
                    v,
                    "an integer, a list `[a, b]`, or per-node ids `[[a, b]]`",
                    field,
                );
                Vec::new()
            }
        }
    }
}
