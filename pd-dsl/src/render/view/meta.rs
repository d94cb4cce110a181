//! The machine-readable `meta.yaml` ([`Meta`]).

use super::*;

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
    /// PCP size, when above 1.
    #[serde(skip_serializing_if = "is_one")]
    pub pcp_size: u32,
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
    /// The node whose own settings these are (the layout's `nodes:`);
    /// absent for the role's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<usize>,
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
            vllm: img.vllm(),
            cann: img.cann(),
            mooncake: img.mooncake(),
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
                pcp_size: e.pcp,
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
            .map(|(role, s)| (*role, None, s))
            .chain(layout.node_serve.iter().filter_map(|(n, s)| {
                let role = layout.placement.nodes.get(*n)?.role;
                Some((role, Some(*n), s))
            }))
            .map(|(role, node, s)| MetaServe {
                role,
                node,
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

/// `skip_serializing_if` for sizes that default to 1.
fn is_one(n: &u32) -> bool {
    *n == 1
}
