//! The KV connector and the proxy: the connector the image ships, its role on each side, its extra config, kv port counts and engine ids.

use super::pool;
use super::ports::check_port_bases;
use super::ports::port_of;
use super::text::find_placeholder;
use super::text::is_safe_path;
use super::text::json_control_text;
use crate::check::Cx;
use crate::layout::Proxy;
use crate::placement::{GroupShape, PlacementInput};
use crate::rules::Rule;
use crate::site::Spanned;
use crate::spec::{ConnectorKind, Json, LayoutSpec, Role};
use crate::tables::{self, Hardware, Image, Model};
use std::collections::{BTreeMap, BTreeSet};

declare_rules! {
    /// Connector or proxy present/absent for the layout's roles.
    ConnectorRoleMismatch = "connector_role_mismatch", Hard, "PD layouts have a connector and a proxy; mixed layouts have neither";
    /// Connector not available on the image: the facts' `kv_connectors`
    /// (`MooncakeHybridConnector` registered from v0.20.2rc1,
    /// vllm_ascend/distributed/kv_transfer/__init__.py).
    ConnectorUnavailable = "connector_unavailable", Hard, "the connector is registered in the image";
    /// Proxy script does not pair with the connector: the multi-node PD
    /// tutorial pairs Layerwise with load_balance_proxy_layerwise_server_example.py
    /// (docs/source/tutorials/.../pd_disaggregation_mooncake_multi_node.md
    /// @v0.18.0 L754, @v0.23.0 L770, @v0.30.0rc2 L784); both proxies ship in
    /// every release (the facts' `scripts`).
    ConnectorProxyPairing = "connector_proxy_pairing", Hard, "V1 and Hybrid pair with the load-balance proxy, Layerwise with the layerwise proxy";
    /// V1 connector carrying a hybrid KV cache before it supported one
    /// (#10342: `self.use_hybrid` in kv_p2p/mooncake_connector.py from
    /// v0.22.1rc1 to v0.30.0rc2; the facts' `v1_hybrid_kv`).
    ConnectorHybridKv = "connector_hybrid_kv", Convention, "`MooncakeConnectorV1` carries hybrid-KV models (DeepSeek-V4) from v0.22.1rc1";
    /// A 950-only connector setting on other hardware
    /// (`ascend_local_comm_res_path`, vllm_ascend/utils.py @v0.21.0rc1 L532,
    /// @v0.23.0 L584, @v0.30.0rc2 L700; not read before v0.21.0rc1).
    CommResPathHardware = "comm_res_path_hardware", Hard, "`ascend_local_comm_res_path` is for 950DT only";
    /// A fine-grained TP size split (above 1) where the platform requires a
    /// kv connector pd-dsl does not derive: AssertionError
    /// "oproj_tensor_parallel_size / mlp_tensor_parallel_size require
    /// PreemptOffloadConnector (via MultiConnector)" (vllm_ascend/platform.py
    /// @v0.30.0rc1 and @v0.30.0rc2 L1146, on PD and mixed engines alike).
    /// Read from the generated facts (`finegrained_tp_connector`); the
    /// derived `kv_transfer_config` holds the layout's Mooncake connector and
    /// a KV pool's `AscendStoreConnector`, never that one.
    FinegrainedTpConnector = "finegrained_tp_connector", Hard, "fine-grained TP sizes that need a kv connector pd-dsl does not derive stay at 1";
    /// A connector extra key that is derived.
    ConnectorExtraDerived = "connector_extra_derived", Hard, "the `prefill`/`decode` shapes of `kv_connector_extra_config` are derived";
    /// Wrong number of kv ports.
    KvPortCount = "kv_port_count", Hard, "one kv port per role, or one per engine of the role";
    /// Wrong number of engine ids.
    EngineIdCount = "engine_id_count", Hard, "an engine id override names every engine of the role";
    /// Two engines share an id.
    EngineIdUnique = "engine_id_unique", Convention, "engine ids are unique";
    /// Prefill ids not even / decode ids not odd.
    EngineIdParity = "engine_id_parity", Convention, "prefill engine ids are even and decode engine ids odd (ids given per node are not held to it)";
}

pub(crate) struct Wiring {
    pub(crate) input: PlacementInput,
    pub(crate) proxy: Option<Proxy>,
    pub(crate) dp_rpc: Option<u32>,
}

pub(crate) fn check_wiring(
    spec: &LayoutSpec,
    spec_model: Option<&Model>,
    shapes: Option<&[GroupShape]>,
    hw: Option<&Hardware>,
    image: Option<&Image>,
    cx: &mut Cx,
) -> Option<Wiring> {
    let mut ok = true;
    let pd = spec.topology.iter().any(|g| g.role.value != Role::Mixed);
    let count_of = |role: Role| -> usize {
        spec.topology
            .iter()
            .filter(|g| g.role.value == role)
            .map(|g| usize::try_from(g.count.value).unwrap_or(0))
            .sum()
    };
    let present: BTreeSet<Role> = spec.topology.iter().map(|g| g.role.value).collect();
    let (api, dp_rpc, role_ports, ports_ok) = check_port_bases(spec, &present, pd, shapes, cx);
    ok &= ports_ok;
    let mut input = PlacementInput {
        api_port: api.unwrap_or(0),
        dp_rpc_port: dp_rpc,
        role_ports,
        ..PlacementInput::default()
    };
    let mut proxy = None;
    match (&spec.connector, pd) {
        (None, true) => {
            cx.report(
                Rule::ConnectorRoleMismatch,
                spec.topology_site,
                "connector",
                "found a PD topology without `connector`, expected `connector: mooncake_v1 | mooncake_hybrid | mooncake_layerwise { ... }`: prefill and decode exchange KV through it",
            );
            ok = false;
        }
        (Some(c), false) => {
            cx.report(
                Rule::ConnectorRoleMismatch,
                c.kind.site,
                "connector",
                "found a `connector` in a mixed layout, expected none: a mixed engine keeps its KV local",
            );
            ok = false;
        }
        (Some(c), true) => {
            let kind = c.kind.value;
            input.connector = Some(kind);
            if let Some(img) = image
                && kind == ConnectorKind::MooncakeHybrid
                && !img.hybrid_connector()
            {
                cx.report(
                        Rule::ConnectorUnavailable,
                        c.kind.site,
                        "connector",
                        format!(
                            "found `mooncake_hybrid` on image `{}`, expected `mooncake_v1` or an image that registers `MooncakeHybridConnector` ({}, #9270)",
                            img.tag,
                            crate::upstream::describe(&tables::IMAGES.iter().filter(|i| i.hybrid_connector()).collect::<Vec<_>>())
                        ),
                    );
            }
            // #10342 (first in v0.22.1rc1): "the Mooncake connector supports
            // DeepSeek-V4 and hybrid KV"; before that only the Hybrid connector did.
            if let (Some(img), Some(m)) = (image, spec_model)
                && kind == ConnectorKind::MooncakeV1
                && m.hybrid_kv
                && !img.v1_hybrid_kv()
            {
                cx.report(
                    Rule::ConnectorHybridKv,
                    c.kind.site,
                    "connector",
                    format!(
                        "found `mooncake_v1` carrying `{}` (hybrid KV) on image `{}`, expected `mooncake_hybrid` or an image from v0.22.1rc1: V1 supports DeepSeek-V4 hybrid KV from v0.22.1rc1 (#10342)",
                        m.weights, img.tag
                    ),
                );
            }
            for (role, ports, field) in [
                (Role::Prefill, &c.kv_port.prefill, "prefill"),
                (Role::Decode, &c.kv_port.decode, "decode"),
            ] {
                let n = count_of(role);
                if ports.is_empty() || (ports.len() != 1 && ports.len() != n) {
                    cx.report(
                        Rule::KvPortCount,
                        ports.get(n.min(ports.len().saturating_sub(1))).map_or(c.kind.site, |p| p.site),
                        format!("connector.kv_port.{field}"),
                        format!(
                            "found {} {field} kv ports for {n} {field} engines, expected one for all or one per engine: each engine needs a kv port",
                            ports.len()
                        ),
                    );
                    ok = false;
                }
                let mut values = Vec::new();
                for (i, p) in ports.iter().enumerate() {
                    match port_of(cx, p, &format!("connector.kv_port.{field}[{i}]"), "kv port") {
                        Some(v) => values.push(v),
                        None => ok = false,
                    }
                }
                match role {
                    Role::Prefill => input.kv_prefill = values,
                    _ => input.kv_decode = values,
                }
            }
            for (k, v) in &c.extra {
                match k.as_str() {
                    "prefill" | "decode" => {
                        cx.report(
                            Rule::ConnectorExtraDerived,
                            v.site,
                            format!("connector.extra.{k}"),
                            format!("found `{k}` in the connector extras, expected it left out: the `{k}` shape is derived from the topology so it always matches the engines"),
                        );
                        ok = false;
                    }
                    "ascend_local_comm_res_path" => {
                        if hw.is_some_and(|h| h.family != tables::HardwareFamily::Ascend950) {
                            cx.report(
                                Rule::CommResPathHardware,
                                v.site,
                                format!("connector.extra.{k}"),
                                format!(
                                    "found `ascend_local_comm_res_path` on {}, expected it only on Ascend 950DT: it loads `ub_endpoint_npu_<id>.json` files that exist only there (utils.py L536-571)",
                                    hw.map_or("", |h| h.product)
                                ),
                            );
                        }
                        let ok_path = matches!(&v.value, Json::String(s) if is_safe_path(s));
                        if !ok_path {
                            cx.report(
                                Rule::PathFormat,
                                v.site,
                                format!("connector.extra.{k}"),
                                format!(
                                    "found {}, expected an absolute directory path string of `[A-Za-z0-9/._+@=,:-]`: vllm-ascend loads `ub_endpoint_npu_<id>.json` from that directory",
                                    v.value
                                ),
                            );
                        }
                    }
                    _ => {}
                }
                if let Some(t) = json_control_text(k, &v.value) {
                    cx.report(
                        Rule::TextFormat,
                        v.site,
                        format!("connector.extra.{k}"),
                        format!("found {t:?} in the connector extras, expected text without control characters: generated docs and scripts must show exactly what was written"),
                    );
                }
                if let Some(p) = find_placeholder(k, &v.value) {
                    cx.report(
                        Rule::TextFormat,
                        v.site,
                        format!("connector.extra.{k}"),
                        format!("found `{p}` in the connector extras, expected text without it: the role templates fill `{p}` in at run time, so the value would be rewritten"),
                    );
                    ok = false;
                }
            }
            if let Some(pool) = &c.pool {
                ok &= pool::check_pool(pool, cx);
            }
            match &spec.proxy {
                None => {
                    cx.report(
                        Rule::ConnectorRoleMismatch,
                        c.kind.site,
                        "proxy",
                        "found a PD layout without `proxy`, expected `proxy: { port: N }`: clients reach prefill and decode through it",
                    );
                    ok = false;
                }
                Some(p) => {
                    let script = p.script.as_ref().map_or(kind.proxy_script(), |s| s.value);
                    if let Some(s) = &p.script
                        && s.value != kind.proxy_script()
                    {
                        cx.report(
                                Rule::ConnectorProxyPairing,
                                s.site,
                                "proxy.script",
                                format!(
                                    "found proxy `{}` with `{}`, expected `{}`: {} is {} and needs `{}` (multi-node doc L720-730)",
                                    s.value.as_str(),
                                    kind.as_str(),
                                    kind.proxy_script().as_str(),
                                    kind.kv_connector(),
                                    if kind == ConnectorKind::MooncakeLayerwise { "push mode" } else { "pull mode" },
                                    kind.proxy_script().file_name()
                                ),
                            );
                        ok = false;
                    }
                    match port_of(cx, &p.port, "proxy.port", "proxy port") {
                        Some(port) => proxy = Some(Proxy { port, script }),
                        None => ok = false,
                    }
                }
            }
            if let Some(ids) = &spec.engine_ids {
                let mut all: Vec<(Role, &Spanned<u64>, bool)> = Vec::new();
                for (role, list, field) in [
                    (Role::Prefill, &ids.prefill, "prefill"),
                    (Role::Decode, &ids.decode, "decode"),
                ] {
                    let n = count_of(role);
                    if list.len() != n {
                        cx.report(
                            Rule::EngineIdCount,
                            list.last()
                                .and_then(|l| l.ids().last())
                                .map_or(ids.site, |l| l.site),
                            format!("engine_ids.{field}"),
                            format!("found {} {field} engine ids for {n} {field} engines, expected {n}: every engine gets its own id (one, or one per node `[a, b]`)", list.len()),
                        );
                        ok = false;
                    }
                    all.extend(list.iter().flat_map(|v| {
                        let per_node = matches!(v, crate::spec::EngineId::PerNode(_));
                        v.ids().iter().map(move |id| (role, id, per_node))
                    }));
                }
                let mut seen: BTreeMap<u64, Role> = BTreeMap::new();
                for &(role, id, per_node) in &all {
                    if let Some(prev) = seen.get(&id.value) {
                        cx.report(
                            Rule::EngineIdUnique,
                            id.site,
                            format!("engine_ids.{role}"),
                            format!(
                                "found engine id {} on a {role} engine and a {prev} engine, expected unique ids: the docs ask for unique ids and releases before v0.12.0rc1 need them",
                                id.value
                            ),
                        );
                    } else {
                        seen.insert(id.value, role);
                    }
                    // The parity is the catalog's numbering of engines; ids
                    // given per node number nodes the way upstream's docs
                    // ask (one id per node of a multi-node engine) and are
                    // not held to it.
                    let even = id.value % 2 == 0;
                    if !per_node && (role == Role::Prefill) != even {
                        cx.report(
                            Rule::EngineIdParity,
                            id.site,
                            format!("engine_ids.{role}"),
                            format!(
                                "found {role} engine id {}, expected an {} id: the catalog's convention is prefill even (0, 2, 4), decode odd (1, 3, 5)",
                                id.value,
                                if role == Role::Prefill { "even" } else { "odd" }
                            ),
                        );
                    }
                }
                let values = |l: &[crate::spec::EngineId]| -> Vec<Vec<u64>> {
                    l.iter()
                        .map(|e| e.ids().iter().map(|v| v.value).collect())
                        .collect()
                };
                input.ids_prefill = Some(values(&ids.prefill));
                input.ids_decode = Some(values(&ids.decode));
            }
        }
        (None, false) => {
            if let Some(p) = &spec.proxy {
                cx.report(
                    Rule::ConnectorRoleMismatch,
                    p.port.site,
                    "proxy",
                    "found a `proxy` in a mixed layout, expected none: the PD proxy needs prefill and decode backends",
                );
                ok = false;
            }
            if let Some(ids) = &spec.engine_ids {
                cx.report(
                    Rule::EngineIdCount,
                    ids.site,
                    "engine_ids",
                    "found `engine_ids` in a mixed layout, expected none: engine ids belong to the kv connector",
                );
                ok = false;
            }
        }
    }
    (ok && api.is_some()).then_some(Wiring {
        input,
        proxy,
        dp_rpc,
    })
}

/// A split fine-grained TP size against the connector the platform then
/// requires (rule `finegrained_tp_connector`, from the facts'
/// `finegrained_tp_connector`).
pub(crate) fn check_finegrained_tp_connector(
    spec: &LayoutSpec,
    image: Option<&Image>,
    role: Role,
    serve: &crate::layout::Serve,
    cx: &mut Cx,
) {
    let Some(img) = image else { return };
    let Some(need) = img
        .facts()
        .and_then(|r| r.finegrained_tp_connector.as_ref())
    else {
        return;
    };
    let Some(cfg) = serve.additional_config.get("finegrained_tp_config") else {
        return;
    };
    let derived = spec
        .connector
        .as_ref()
        .map_or_else(Vec::new, |c| c.kv_connectors());
    if derived.contains(&need.connector.as_str()) {
        return;
    }
    for key in &need.sizes {
        let Some(size) = cfg.get(key).and_then(Json::as_u64).filter(|s| *s > 1) else {
            continue;
        };
        let held = if derived.is_empty() {
            "no kv connector (a mixed engine)".to_owned()
        } else {
            format!(
                "only {}",
                derived
                    .iter()
                    .map(|d| format!("`{d}`"))
                    .collect::<Vec<_>>()
                    .join(" and ")
            )
        };
        cx.report(
            Rule::FinegrainedTpConnector,
            super::settings::config_value_site(spec, role, &format!("finegrained_tp_config.{key}")),
            format!("{role}.additional_config.finegrained_tp_config.{key}"),
            format!(
                "found `{key}` {size} on a {role} engine on image `{}`, expected 1 (or the key left out): vllm-ascend requires `{}` in the kv_transfer_config for it ({}), and the derived kv_transfer_config holds {held}",
                img.tag, need.connector, need.source
            ),
        );
    }
}
