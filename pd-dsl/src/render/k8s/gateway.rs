//! The Gateway API Inference Extension's objects for a layout
//! (`k8s/inference/`, with `--k8s-gateway`): an `InferencePool` over the
//! pods clients reach and an `HTTPRoute` from the operator's Gateway to it.
//! Typed after the published CRDs (`inference.networking.k8s.io/v1`,
//! gateway-api-inference-extension v1.6.0
//! `config/crd/bases/inference.networking.k8s.io_inferencepools.yaml`;
//! `gateway.networking.k8s.io/v1`, gateway-api v1.6.1
//! `config/crd/standard/gateway.networking.k8s.io_httproutes.yaml`); the
//! tests validate every one against those schemas.
//!
//! What the pool holds: a PD layout's entry is its proxy (it pairs each
//! request's prefill and decode ranks), so the pool is the proxy's pods on
//! the proxy port; a mixed layout's is each engine's API server (the sets'
//! leaders) on their API ports. The extension allows at most
//! [`MAX_TARGET_PORTS`] target ports per pool: a layout whose entry pods
//! expose more is refused ([`target_ports`]), naming what to do instead.

use super::names::Names;
use super::pods::{meta, object_labels, selector_labels};
use crate::render::RenderError;
use crate::{Layout, Role};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `InferencePool.spec.targetPorts` `maxItems` (the CRD above).
pub const MAX_TARGET_PORTS: usize = 8;
/// The endpoint picker's gRPC ext-proc port, as the extension's chart
/// serves it.
pub const EPP_PORT: i32 = 9002;
/// API group of the pool.
pub const POOL_GROUP: &str = "inference.networking.k8s.io";

/// `inference.networking.k8s.io/v1` `InferencePool`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InferencePool {
    /// `inference.networking.k8s.io/v1`.
    pub api_version: String,
    /// `InferencePool`.
    pub kind: String,
    /// Name, labels, annotations.
    pub metadata: ObjectMeta,
    /// The pool.
    pub spec: InferencePoolSpec,
}

/// `InferencePool.spec`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InferencePoolSpec {
    /// The member pods (labels only, same namespace).
    pub selector: PoolSelector,
    /// Every port of a member that serves (each `podIP:port` an endpoint).
    pub target_ports: Vec<PortNumber>,
    /// The endpoint picker the Gateway asks.
    pub endpoint_picker_ref: EndpointPickerRef,
}

/// `spec.selector`: `matchLabels` only.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolSelector {
    /// Labels every member carries.
    pub match_labels: BTreeMap<String, String>,
}

/// A port by number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortNumber {
    /// The port.
    pub number: i32,
}

/// `spec.endpointPickerRef`: a Service.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointPickerRef {
    /// Service name.
    pub name: String,
    /// Its port.
    pub port: PortNumber,
    /// What the Gateway does when the picker does not answer.
    pub failure_mode: String,
}

/// `gateway.networking.k8s.io/v1` `HTTPRoute`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpRoute {
    /// `gateway.networking.k8s.io/v1`.
    pub api_version: String,
    /// `HTTPRoute`.
    pub kind: String,
    /// Name, labels, annotations.
    pub metadata: ObjectMeta,
    /// The route.
    pub spec: HttpRouteSpec,
}

/// `HTTPRoute.spec`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpRouteSpec {
    /// The Gateway.
    pub parent_refs: Vec<ParentRef>,
    /// One rule: every path to the pool.
    pub rules: Vec<RouteRule>,
}

/// `spec.parentRefs[]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParentRef {
    /// `gateway.networking.k8s.io`.
    pub group: String,
    /// `Gateway`.
    pub kind: String,
    /// The Gateway's name.
    pub name: String,
    /// Its namespace, when not the route's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// `spec.rules[]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteRule {
    /// Path matches.
    pub matches: Vec<RouteMatch>,
    /// The pool.
    pub backend_refs: Vec<BackendRef>,
    /// Request timeout.
    pub timeouts: RouteTimeouts,
}

/// `matches[]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RouteMatch {
    /// The path.
    pub path: PathMatch,
}

/// `matches[].path`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathMatch {
    /// `PathPrefix`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `/`.
    pub value: String,
}

/// `backendRefs[]`: the pool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackendRef {
    /// [`POOL_GROUP`].
    pub group: String,
    /// `InferencePool`.
    pub kind: String,
    /// The pool's name.
    pub name: String,
}

/// `timeouts`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RouteTimeouts {
    /// `0s`: no gateway timeout (a long generation streams for minutes;
    /// vLLM and the proxy bound a request).
    pub request: String,
}

/// The pool's member labels and target ports, or why the extension cannot
/// hold this layout's entry: more than [`MAX_TARGET_PORTS`] ports.
pub fn target_ports(
    layout: &Layout,
    names: &Names,
) -> Result<(BTreeMap<String, String>, Vec<i32>), String> {
    if let Some(proxy) = &layout.proxy {
        return Ok((
            selector_labels(&names.base, "proxy"),
            vec![i32::try_from(proxy.port).unwrap_or(0)],
        ));
    }
    let mut ports: Vec<i32> = names
        .sets
        .iter()
        .filter_map(|s| layout.placement.nodes.get(s.nodes[0]))
        .flat_map(|n| n.ranks.iter().filter_map(|r| r.api_port))
        .filter_map(|p| i32::try_from(p).ok())
        .collect();
    ports.sort_unstable();
    ports.dedup();
    if ports.len() > MAX_TARGET_PORTS {
        return Err(format!(
            "an InferencePool over this layout's API servers would list {} target ports ({}), expected at most {MAX_TARGET_PORTS}: the Gateway API Inference Extension's `spec.targetPorts` allows no more. Give the engines one API port each (native DP serves one per engine), or route the Gateway to the Service `{}-api` instead of a pool",
            ports.len(),
            ports
                .iter()
                .map(i32::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            names.base
        ));
    }
    let mut labels = selector_labels(&names.base, Role::Mixed.as_str());
    labels.insert(super::lws::WORKER_INDEX_LABEL.to_owned(), "0".to_owned());
    Ok((labels, ports))
}

/// The pool and the route from `gateway` (`NAME` or `NAMESPACE/NAME`).
pub fn objects(
    layout: &Layout,
    names: &Names,
    gateway: &str,
) -> Result<(InferencePool, HttpRoute), RenderError> {
    let (labels, ports) = target_ports(layout, names).map_err(|message| RenderError::Layout {
        layout: layout.name().to_owned(),
        message,
    })?;
    let name = format!("{}-pool", names.base);
    let own = object_labels(layout, &names.base, "inference");
    let pool = InferencePool {
        api_version: format!("{POOL_GROUP}/v1"),
        kind: "InferencePool".to_owned(),
        metadata: meta(layout, &name, own.clone()),
        spec: InferencePoolSpec {
            selector: PoolSelector {
                match_labels: labels,
            },
            target_ports: ports
                .into_iter()
                .map(|number| PortNumber { number })
                .collect(),
            endpoint_picker_ref: EndpointPickerRef {
                name: format!("{}-epp", names.base),
                port: PortNumber { number: EPP_PORT },
                // Every member serves every request alike (proxies, or a
                // mixed layout's equal engines): without the picker the
                // Gateway still forwards.
                failure_mode: "FailOpen".to_owned(),
            },
        },
    };
    let (namespace, gw) = match gateway.split_once('/') {
        Some((ns, n)) => (Some(ns.to_owned()), n.to_owned()),
        None => (None, gateway.to_owned()),
    };
    let route = HttpRoute {
        api_version: "gateway.networking.k8s.io/v1".to_owned(),
        kind: "HTTPRoute".to_owned(),
        metadata: meta(layout, &name, own),
        spec: HttpRouteSpec {
            parent_refs: vec![ParentRef {
                group: "gateway.networking.k8s.io".to_owned(),
                kind: "Gateway".to_owned(),
                name: gw,
                namespace,
            }],
            rules: vec![RouteRule {
                matches: vec![RouteMatch {
                    path: PathMatch {
                        kind: "PathPrefix".to_owned(),
                        value: "/".to_owned(),
                    },
                }],
                backend_refs: vec![BackendRef {
                    group: POOL_GROUP.to_owned(),
                    kind: "InferencePool".to_owned(),
                    name: name.clone(),
                }],
                timeouts: RouteTimeouts {
                    request: "0s".to_owned(),
                },
            }],
        },
    };
    Ok((pool, route))
}
