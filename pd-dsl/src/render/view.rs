//! Serializable views of a layout: the stable `catalog show --format json`
//! interface ([`LayoutView`]), the catalog index row ([`IndexEntry`]) and the
//! machine-readable `meta.yaml` ([`Meta`]).
//!
//! # `catalog show NAME --format json` (stable interface)
//!
//! ```text
//! {
//!   "name": "family/variant",            layout name
//!   "model": "deepseek_v3_1_w8a8_mtp_quarot",   model table id
//!   "hardware": "a3",                     hardware table id
//!   "image": "quay.io/ascend/vllm-ascend:v0.21.0rc1-a3",
//!   "verified": false,                    true only when verified on exactly this image
//!   "deploy": {"status": "deployable"}    or {"status": "blocked_on_image", "rule": "connector_hybrid_kv",
//!                                         "first_image": "v0.22.1rc1"} (null when no image can run it yet)
//!   "connector": "MooncakeConnectorV1",   registered kv_connector name, null for mixed
//!   "nodes": [{
//!     "index": 0, "role": "prefill", "engine": 0, "engine_id": 0,
//!     "dp_size": 2, "tp_size": 8, "dp_size_local": 2, "dp_rank_start": 0,
//!     "dp_master": 0,                     node index of the engine's DP master
//!     "kv_port": 30000,                   engine kv_port base (null for mixed)
//!     "headless": false,
//!     "ranks": [{"dp_rank": 0, "devices": [0,..,7], "api_port": 7100, "kv_span": [30000, 30007]}]
//!   }],
//!   "proxy": {"node": 0, "port": 1999, "script": "load_balance_proxy_server_example.py",
//!             "prefill": [[0, 7100], ...], "decode": [[2, 7100], ...]}   null for mixed
//! }
//! ```
//! Fields are only ever added, never renamed or removed.

use crate::{DeployStatus, Layout, Role};
use serde::Serialize;
use serde_json::Value as Json;

/// One DP rank in the views.
#[derive(Clone, Debug, Serialize)]
pub struct RankView {
    /// Global DP rank within the engine.
    pub dp_rank: u32,
    /// `ASCEND_RT_VISIBLE_DEVICES`.
    pub devices: Vec<u32>,
    /// API port (`null` on a headless mixed node).
    pub api_port: Option<u32>,
    /// Inclusive kv handshake port span.
    pub kv_span: Option<(u32, u32)>,
}

/// One node in the views.
#[derive(Clone, Debug, Serialize)]
pub struct NodeView {
    /// Node index in cluster order.
    pub index: usize,
    /// Role.
    pub role: Role,
    /// Engine index.
    pub engine: usize,
    /// `engine_id` of the engine (PD only).
    pub engine_id: Option<u64>,
    /// `--data-parallel-size`.
    pub dp_size: u32,
    /// `--tensor-parallel-size`.
    pub tp_size: u32,
    /// `--dp-size-local`.
    pub dp_size_local: u32,
    /// `--dp-rank-start`.
    pub dp_rank_start: u32,
    /// Node index of the DP master.
    pub dp_master: usize,
    /// `kv_port` base of the engine (PD only).
    pub kv_port: Option<u32>,
    /// Mixed engine, non-first node.
    pub headless: bool,
    /// Ranks on this node.
    pub ranks: Vec<RankView>,
}

/// The proxy in the views.
#[derive(Clone, Debug, Serialize)]
pub struct ProxyView {
    /// Node that runs it (always 0).
    pub node: usize,
    /// Listen port.
    pub port: u32,
    /// Script file name.
    pub script: &'static str,
    /// Prefill backends as (node index, port), proxy order.
    pub prefill: Vec<(usize, u32)>,
    /// Decode backends as (node index, port), proxy order.
    pub decode: Vec<(usize, u32)>,
}

/// The stable `show --format json` document (see the module docs).
#[derive(Clone, Debug, Serialize)]
pub struct LayoutView {
    /// Layout name.
    pub name: String,
    /// Model id.
    pub model: &'static str,
    /// Hardware id.
    pub hardware: &'static str,
    /// Full image reference.
    pub image: String,
    /// Computed verification.
    pub verified: bool,
    /// Computed deployment status.
    pub deploy: DeployStatus,
    /// `kv_connector` name (PD).
    pub connector: Option<&'static str>,
    /// Every node.
    pub nodes: Vec<NodeView>,
    /// The proxy (PD).
    pub proxy: Option<ProxyView>,
}

/// One row of `index.json` and of `catalog list --format json`.
#[derive(Clone, Debug, Serialize)]
pub struct IndexEntry {
    /// Layout name.
    pub name: String,
    /// Model id.
    pub model: &'static str,
    /// Hardware id.
    pub hardware: &'static str,
    /// Topology in the card's notation.
    pub topology: String,
    /// Node count.
    pub nodes: usize,
    /// NPUs used.
    pub npus: usize,
    /// Full image reference.
    pub image: String,
    /// Computed verification.
    pub verified: bool,
    /// Computed deployment status.
    pub deploy: DeployStatus,
    /// Provenance date.
    pub recorded: String,
    /// Directory of the layout inside the catalog.
    pub path: String,
}

/// The node views of a layout.
pub fn node_views(layout: &Layout) -> Vec<NodeView> {
    let p = &layout.placement;
    p.nodes
        .iter()
        .map(|n| {
            let e = p.engines.get(n.engine);
            NodeView {
                index: n.index,
                role: n.role,
                engine: n.engine,
                engine_id: e.and_then(|e| e.engine_id),
                dp_size: e.map_or(0, |e| e.dp),
                tp_size: e.map_or(0, |e| e.tp),
                dp_size_local: n.dp_size_local,
                dp_rank_start: n.dp_rank_start,
                dp_master: n.dp_master,
                kv_port: e.and_then(|e| e.kv_port),
                headless: n.headless,
                ranks: n
                    .ranks
                    .iter()
                    .map(|r| RankView {
                        dp_rank: r.dp_rank,
                        devices: r.devices.clone(),
                        api_port: r.api_port,
                        kv_span: r.kv_span,
                    })
                    .collect(),
            }
        })
        .collect()
}

/// The proxy view of a PD layout.
pub fn proxy_view(layout: &Layout) -> Option<ProxyView> {
    let proxy = layout.proxy?;
    let pairs = |l: &[crate::Endpoint]| l.iter().map(|e| (e.node, e.port)).collect();
    Some(ProxyView {
        node: 0,
        port: proxy.port,
        script: proxy.script.file_name(),
        prefill: pairs(&layout.placement.proxy.prefill),
        decode: pairs(&layout.placement.proxy.decode),
    })
}

/// The stable `show --format json` view.
pub fn layout_view(layout: &Layout) -> LayoutView {
    LayoutView {
        name: layout.name().to_owned(),
        model: layout.model.id,
        hardware: layout.hardware.id,
        image: layout.image_ref.clone(),
        verified: layout.verified,
        deploy: layout.deploy_status(),
        connector: layout.connector.map(|c| c.kv_connector()),
        nodes: node_views(layout),
        proxy: proxy_view(layout),
    }
}

/// The index row of a layout.
pub fn index_entry(layout: &Layout) -> IndexEntry {
    IndexEntry {
        name: layout.name().to_owned(),
        model: layout.model.id,
        hardware: layout.hardware.id,
        topology: layout.topology_text(),
        nodes: layout.node_count(),
        npus: layout.npus_used(),
        image: layout.image_ref.clone(),
        verified: layout.verified,
        deploy: layout.deploy_status(),
        recorded: layout.spec.provenance.recorded.value.clone(),
        path: format!("{}/", layout.name()),
    }
}

/// Model facts in `meta.yaml`.
#[derive(Clone, Debug, Serialize)]
pub struct MetaModel {
    /// Table id.
    pub id: &'static str,
    /// Published weights.
    pub weights: &'static str,
    /// Where they are published.
    pub source: &'static str,
    /// Weights path in the container.
    pub path: String,
    /// `--served-model-name`.
    pub served_name: String,
}

/// Hardware facts in `meta.yaml`.
#[derive(Clone, Debug, Serialize)]
pub struct MetaHardware {
    /// Table id.
    pub id: &'static str,
    /// Product.
    pub product: &'static str,
    /// NPUs per node.
    pub npus_per_node: u32,
    /// Host paths preflight requires.
    pub required_host_paths: Vec<&'static str>,
}

/// Image facts in `meta.yaml`.
#[derive(Clone, Debug, Serialize)]
pub struct MetaImage {
    /// Tag.
    pub tag: &'static str,
    /// Full reference.
    pub reference: String,
    /// vLLM version.
    pub vllm: &'static str,
    /// CANN version.
    pub cann: &'static str,
    /// Mooncake version.
    pub mooncake: &'static str,
}

/// One engine in `meta.yaml`.
#[derive(Clone, Debug, Serialize)]
pub struct MetaEngine {
    /// Engine index.
    pub index: usize,
    /// Role.
    pub role: Role,
    /// Index among its role.
    pub role_index: usize,
    /// DP size.
    pub dp_size: u32,
    /// TP size.
    pub tp_size: u32,
    /// Ranks per node.
    pub ranks_per_node: u32,
    /// Nodes, the first is the DP master.
    pub nodes: Vec<usize>,
    /// `engine_id`.
    pub engine_id: Option<u64>,
    /// `kv_port`.
    pub kv_port: Option<u32>,
    /// The full `--kv-transfer-config`.
    pub kv_transfer_config: Option<Json>,
}

/// One role's serve settings in `meta.yaml`.
#[derive(Clone, Debug, Serialize)]
pub struct MetaServe {
    /// Role.
    pub role: Role,
    /// `vllm serve` options after the derived ones, raw values.
    pub options: Vec<(String, Option<String>)>,
    /// Env exported before `vllm serve` (`NAME`, rendered value).
    pub env: Vec<(String, String)>,
}

/// An acknowledged deviation in `meta.yaml`.
#[derive(Clone, Debug, Serialize)]
pub struct MetaDeviation {
    /// Rule name, or `null` for a `deviate(...)` entry.
    pub rule: Option<&'static str>,
    /// What differs (findings for a rule).
    pub what: Vec<String>,
    /// Why.
    pub why: String,
}

/// The whole `meta.yaml` document.
#[derive(Clone, Debug, Serialize)]
pub struct Meta {
    /// Layout name.
    pub name: String,
    /// Summary paragraphs.
    pub summary: Vec<String>,
    /// When to use it.
    pub workload: Option<String>,
    /// Topology notation.
    pub topology: String,
    /// Node count.
    pub node_count: usize,
    /// NPUs used.
    pub npus: usize,
    /// Model.
    pub model: MetaModel,
    /// Hardware.
    pub hardware: MetaHardware,
    /// Image.
    pub image: MetaImage,
    /// Computed verification.
    pub verified: bool,
    /// Verification sentence.
    pub verification: String,
    /// Computed deployment status.
    pub deploy: DeployStatus,
    /// `kv_connector` name.
    pub connector: Option<&'static str>,
    /// `kv_connector_extra_config` (identical on every engine).
    pub kv_connector_extra_config: Option<Json>,
    /// API port base.
    pub api_port: u32,
    /// DP RPC port.
    pub dp_rpc_port: Option<u32>,
    /// Engines.
    pub engines: Vec<MetaEngine>,
    /// Nodes.
    pub nodes: Vec<NodeView>,
    /// Proxy.
    pub proxy: Option<ProxyView>,
    /// Serve settings per role.
    pub serve: Vec<MetaServe>,
    /// Provenance as written.
    pub provenance: crate::ProvenanceSpec,
    /// Deviations (acknowledged rules, then `deviate` entries).
    pub deviations: Vec<MetaDeviation>,
    /// Bench workload.
    pub bench: Option<crate::BenchSpec>,
    /// Reference figures.
    pub figures: Vec<crate::FigureSpec>,
}

/// The rendered value of an env entry, as the template writes it.
pub fn env_text(name: &str, value: &crate::EnvValue) -> String {
    match value {
        crate::EnvValue::Literal(s) => s.clone(),
        crate::EnvValue::Prepend { prepend } => format!("{prepend}${{{name}:+:${name}}}"),
    }
}

/// Builds the `meta.yaml` document.
pub fn meta(layout: &Layout) -> Meta {
    let img = layout.image;
    let mut deviations: Vec<MetaDeviation> = layout
        .acknowledged
        .iter()
        .map(|a| MetaDeviation {
            rule: Some(a.rule.name()),
            what: a.findings.clone(),
            why: a.reason.clone(),
        })
        .collect();
    deviations.extend(layout.spec.deviations.iter().map(|d| MetaDeviation {
        rule: None,
        what: vec![d.what.value.clone()],
        why: d.why.value.clone(),
    }));
    Meta {
        name: layout.name().to_owned(),
        summary: layout.spec.summary.clone(),
        workload: layout.spec.workload.as_ref().map(|w| w.value.clone()),
        topology: layout.topology_text(),
        node_count: layout.node_count(),
        npus: layout.npus_used(),
        model: MetaModel {
            id: layout.model.id,
            weights: layout.model.weights,
            source: layout.model.source,
            path: layout.model_path.clone(),
            served_name: layout.served_model_name.clone(),
        },
        hardware: MetaHardware {
            id: layout.hardware.id,
            product: layout.hardware.product,
            npus_per_node: layout.hardware.npus_per_node,
            required_host_paths: layout.hardware.required_host_paths.to_vec(),
        },
        image: MetaImage {
            tag: img.tag,
            reference: layout.image_ref.clone(),
            vllm: img.vllm,
            cann: img.cann,
            mooncake: img.mooncake,
        },
        verified: layout.verified,
        verification: layout.verification_text(),
        deploy: layout.deploy_status(),
        connector: layout.connector.map(|c| c.kv_connector()),
        kv_connector_extra_config: layout.is_pd().then(|| layout.kv_connector_extra_config()),
        api_port: layout.api_port,
        dp_rpc_port: layout.dp_rpc_port,
        engines: layout
            .placement
            .engines
            .iter()
            .map(|e| MetaEngine {
                index: e.index,
                role: e.role,
                role_index: e.role_index,
                dp_size: e.dp,
                tp_size: e.tp,
                ranks_per_node: e.ranks_per_node,
                nodes: e.nodes.clone(),
                engine_id: e.engine_id,
                kv_port: e.kv_port,
                kv_transfer_config: layout.kv_transfer_config(e),
            })
            .collect(),
        nodes: node_views(layout),
        proxy: proxy_view(layout),
        serve: layout
            .serve
            .iter()
            .map(|(role, s)| MetaServe {
                role: *role,
                options: s.options(layout.model, &layout.served_model_name),
                env: s
                    .env
                    .iter()
                    .map(|(n, v)| (n.clone(), env_text(n, v)))
                    .collect(),
            })
            .collect(),
        provenance: layout.spec.provenance.clone(),
        deviations,
        bench: layout.spec.bench.clone(),
        figures: layout.spec.figures.clone(),
    }
}
