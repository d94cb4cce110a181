//! One layout's page: everything its README says, plus the topology picture.

use super::topology::{self, topology_svg};
use super::{PAGE, TOPOLOGY_SVG, failed, href_path, root_of, xml_safe};
use crate::render::{Artifact, RenderError, view};
use crate::{Layout, Role, Verification};
use askama::Template;

/// One fact of the summary table.
#[derive(Clone, Debug)]
pub struct Fact {
    /// Key.
    pub key: &'static str,
    /// Value.
    pub value: String,
    /// Shown as code.
    pub code: bool,
}

/// One row of the node table.
#[derive(Clone, Debug)]
pub struct NodeRow {
    /// Node index.
    pub index: usize,
    /// Role.
    pub role: Role,
    /// `engine (dpXtpY)`.
    pub engine: String,
    /// `engine_id` or `-`.
    pub engine_id: String,
    /// `a-b of dp`.
    pub ranks: String,
    /// `--dp-size-local`.
    pub dp_size_local: u32,
    /// `--dp-rank-start`.
    pub dp_rank_start: u32,
    /// `node i`.
    pub dp_master: usize,
    /// Devices per rank, `;`-separated.
    pub devices: String,
    /// API ports.
    pub ports: String,
    /// kv span or `-`.
    pub kv: String,
}

/// One acknowledged deviation or `deviate` entry.
#[derive(Clone, Debug)]
pub struct DeviationRow {
    /// Rule name, if any.
    pub rule: Option<&'static str>,
    /// Why.
    pub why: String,
    /// What differs.
    pub what: Vec<String>,
}

/// One reference figure.
#[derive(Clone, Debug)]
pub struct FigureRow {
    /// Metric.
    pub metric: String,
    /// Value.
    pub value: String,
    /// Context.
    pub context: String,
}

/// One linked file of a layout.
#[derive(Clone, Debug)]
pub struct FileLink {
    /// File name.
    pub name: String,
    /// Relative link.
    pub href: String,
}

/// The page of one layout.
#[derive(Clone, Debug, Template)]
#[template(path = "site/layout.html")]
pub struct LayoutPage {
    /// Layout name.
    pub name: String,
    /// Relative path to the catalog root (`../../`).
    pub root: String,
    /// Summary paragraphs.
    pub summary: Vec<String>,
    /// Summary table.
    pub facts: Vec<Fact>,
    /// Computed verification.
    pub verified: bool,
    /// Verification sentence.
    pub verification: String,
    /// Whether verification is bound to an image.
    pub image_bound: bool,
    /// When to use it.
    pub workload: Option<String>,
    /// The picture (our own rendered, escaped SVG).
    pub svg: String,
    /// Node table.
    pub nodes: Vec<NodeRow>,
    /// PD layout.
    pub pd: bool,
    /// Node count.
    pub node_count: usize,
    /// Last node index.
    pub last_node: usize,
    /// Proxy sentence.
    pub proxy_note: Option<String>,
    /// `kv_connector_extra_config`.
    pub extra_config: Option<String>,
    /// Deviations.
    pub deviations: Vec<DeviationRow>,
    /// Provenance: recorded date.
    pub recorded: String,
    /// Provenance: derived from.
    pub derived_from: Option<String>,
    /// Provenance: sources.
    pub sources: Vec<String>,
    /// Provenance: refresh notes.
    pub refresh: Vec<String>,
    /// Reference figures.
    pub figures: Vec<FigureRow>,
    /// Bench sentence.
    pub bench: String,
    /// Deployment conditions.
    pub conditions: Vec<Fact>,
    /// The layout's files.
    pub files: Vec<FileLink>,
}

fn list_ports(ports: &[u32]) -> String {
    match (ports.first(), ports.last()) {
        (Some(a), Some(b)) if ports.len() > 1 && (b - a) as usize == ports.len() - 1 => {
            format!("{a}-{b}")
        }
        _ => ports
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn node_rows(layout: &Layout) -> Vec<NodeRow> {
    view::node_views(layout)
        .into_iter()
        .map(|n| {
            let ports: Vec<u32> = n.ranks.iter().filter_map(|r| r.api_port).collect();
            let kv = match (
                n.ranks.first().and_then(|r| r.kv_span),
                n.ranks.last().and_then(|r| r.kv_span),
            ) {
                (Some((a, _)), Some((_, b))) => format!("{a}-{b}"),
                _ => "-".into(),
            };
            NodeRow {
                index: n.index,
                role: n.role,
                engine: format!("{} (dp{}tp{})", n.engine, n.dp_size, n.tp_size),
                engine_id: n.engine_id.map_or("-".into(), |i| i.to_string()),
                ranks: match (n.ranks.first(), n.ranks.last()) {
                    (Some(a), Some(b)) => format!("{}-{} of {}", a.dp_rank, b.dp_rank, n.dp_size),
                    _ => "-".into(),
                },
                dp_size_local: n.dp_size_local,
                dp_rank_start: n.dp_rank_start,
                dp_master: n.dp_master,
                devices: n
                    .ranks
                    .iter()
                    .map(|r| topology::devices_text(&r.devices))
                    .collect::<Vec<_>>()
                    .join("; "),
                ports: if ports.is_empty() {
                    "- (headless)".into()
                } else {
                    list_ports(&ports)
                },
                kv,
            }
        })
        .collect()
}

fn bench_text(layout: &Layout) -> String {
    match &layout.spec.bench {
        Some(b) => format!(
            "Bench workload (bench.sh): random dataset, input {} / output {} tokens, {} prompts{}{}.",
            b.input_len.value,
            b.output_len.value,
            b.num_prompts.value,
            b.request_rate
                .as_ref()
                .map_or(String::new(), |r| format!(", request rate {}", r.value)),
            b.max_concurrency
                .as_ref()
                .map_or(String::new(), |c| format!(", max concurrency {}", c.value)),
        ),
        None => "No bench workload recorded; bench.sh uses the upstream tutorial's default (random 1024 tokens, 200 prompts, 1 req/s).".into(),
    }
}

/// The page of one layout, from the layout and the files already rendered
/// for it (linked from the page, so every link points at a real file).
pub fn layout_page(layout: &Layout, files: &[Artifact]) -> Result<LayoutPage, RenderError> {
    let name = layout.name().to_owned();
    let spec = &layout.spec;
    let svg = topology_svg(layout).map_err(|e| failed(&name, TOPOLOGY_SVG, e))?;
    let dir = std::path::Path::new(&name);
    let mut file_names: Vec<String> = files
        .iter()
        .filter_map(|a| a.path.strip_prefix(dir).ok())
        .filter_map(|p| p.to_str().map(str::to_owned))
        .chain([TOPOLOGY_SVG.to_owned()])
        .filter(|f| f != PAGE)
        .collect();
    file_names.sort();
    file_names.dedup();
    let fact = |key, value: String, code| Fact { key, value, code };
    let facts = vec![
        fact(
            "model",
            format!("{} ({})", layout.model.weights, layout.model.source),
            false,
        ),
        fact(
            "hardware",
            format!(
                "{} x {} ({} NPUs per node)",
                layout.node_count(),
                layout.hardware.product,
                layout.hardware.npus_per_node
            ),
            false,
        ),
        fact("image", layout.image_ref.clone(), true),
        fact("topology", layout.topology_text(), true),
        fact("NPUs used", layout.npus_used().to_string(), false),
        match layout.connector {
            Some(c) => fact("connector", c.kv_connector().to_owned(), true),
            None => fact("connector", "none (mixed)".into(), false),
        },
        match layout.proxy.filter(|_| layout.is_pd()) {
            Some(p) => fact(
                "proxy",
                format!("{} on node 0, port {}", p.script.file_name(), p.port),
                false,
            ),
            None => fact("proxy", "none".into(), false),
        },
    ];
    let mut deviations: Vec<DeviationRow> = layout
        .acknowledged
        .iter()
        .map(|a| DeviationRow {
            rule: Some(a.rule.name()),
            why: a.reason.clone(),
            what: a.findings.clone(),
        })
        .collect();
    deviations.extend(spec.deviations.iter().map(|d| DeviationRow {
        rule: None,
        why: d.why.value.clone(),
        what: vec![d.what.value.clone()],
    }));
    let mut conditions = vec![
        fact(
            "weights",
            format!(
                "{} inside the container ({})",
                layout.model_path, layout.model.weights
            ),
            false,
        ),
        fact(
            "image",
            format!(
                "{} (vllm {}, CANN {}, Mooncake {})",
                layout.image_ref, layout.image.vllm, layout.image.cann, layout.image.mooncake
            ),
            false,
        ),
        fact(
            "nodes",
            format!(
                "exactly {} x {}, {} NPUs each ({} used in total)",
                layout.node_count(),
                layout.hardware.product,
                layout.hardware.npus_per_node,
                layout.npus_used()
            ),
            false,
        ),
    ];
    if !layout.hardware.required_host_paths.is_empty() {
        conditions.push(fact(
            "host files",
            layout.hardware.required_host_paths.join(", "),
            true,
        ));
    }
    conditions.push(fact(
        "node order",
        layout
            .placement
            .nodes
            .iter()
            .map(|n| format!("{} {}", n.index, n.role))
            .collect::<Vec<_>>()
            .join(", "),
        false,
    ));
    conditions.push(fact(
        "served model name",
        layout.served_model_name.clone(),
        true,
    ));
    let prov = &spec.provenance;
    Ok(LayoutPage {
        root: root_of(&name),
        summary: spec.summary.iter().map(|p| p.trim().to_owned()).collect(),
        facts,
        verified: layout.verified,
        verification: layout.verification_text(),
        image_bound: matches!(
            &spec.verified.value,
            Verification::On(_) | Verification::Before(_)
        ),
        workload: spec.workload.as_ref().map(|w| w.value.trim().to_owned()),
        svg,
        nodes: node_rows(layout),
        pd: layout.is_pd(),
        node_count: layout.node_count(),
        last_node: layout.node_count().saturating_sub(1),
        proxy_note: view::proxy_view(layout).map(|p| {
            format!(
                "The proxy lists {} prefill and {} decode endpoints, every rank once in node order.",
                p.prefill.len(),
                p.decode.len()
            )
        }),
        extra_config: layout
            .is_pd()
            .then(|| layout.kv_connector_extra_config().to_string()),
        deviations,
        recorded: prov.recorded.value.clone(),
        derived_from: prov.derived_from.as_ref().map(|d| d.value.clone()),
        sources: prov.sources.iter().map(|s| s.value.clone()).collect(),
        refresh: prov.refresh.iter().map(|s| s.value.clone()).collect(),
        figures: spec
            .figures
            .iter()
            .map(|f| FigureRow {
                metric: f.metric.value.clone(),
                value: f.value.value.clone(),
                context: f.context.value.clone(),
            })
            .collect(),
        bench: bench_text(layout),
        conditions,
        files: file_names
            .into_iter()
            .map(|f| FileLink {
                href: href_path(&f),
                name: f,
            })
            .collect(),
        name,
    })
}

/// The site files of one layout: `NAME/index.html` and `NAME/topology.svg`.
/// `files` are the layout's other artifacts (linked from the page).
pub fn layout_site(layout: &Layout, files: &[Artifact]) -> Result<Vec<Artifact>, RenderError> {
    let name = layout.name();
    let dir = std::path::PathBuf::from(name);
    let svg = topology_svg(layout).map_err(|e| failed(name, TOPOLOGY_SVG, e))?;
    let page = layout_page(layout, files)?
        .render()
        .map_err(|e| failed(name, PAGE, e))?;
    Ok(vec![
        Artifact::new(dir.join(TOPOLOGY_SVG), xml_safe(&svg)),
        Artifact::new(dir.join(PAGE), xml_safe(&page)),
    ])
}
