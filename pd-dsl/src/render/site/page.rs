//! One layout's page: everything its README says, plus the topology picture.

use super::filters;
use super::topology::{self, topology_svg};
use super::{PAGE, TOPOLOGY_SVG, failed, href_path, root_of, xml_safe};
use crate::render::docs::model::DocsView;
use crate::render::{Artifact, RenderError};
use crate::{Layout, Role};
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
pub struct LayoutPage<'a> {
    /// Layout name.
    pub name: String,
    /// Relative path to the catalog root (`../../`).
    pub root: String,
    /// What the layout's README says: the page reads its prose and figures
    /// from the same view.
    pub docs: &'a DocsView,
    /// Summary table.
    pub facts: Vec<Fact>,
    /// The picture (our own rendered, escaped SVG).
    pub svg: String,
    /// Node table.
    pub nodes: Vec<NodeRow>,
    /// Deployment conditions.
    pub conditions: Vec<Fact>,
    /// The layout's files.
    pub files: Vec<FileLink>,
}

/// The node table: the README's topology rows, with the devices of each rank.
fn node_rows(docs: &DocsView) -> Vec<NodeRow> {
    docs.topology
        .rows
        .iter()
        .map(|r| {
            let n = &r.node;
            NodeRow {
                index: n.index,
                role: n.role,
                engine: format!(
                    "{} ({})",
                    n.engine,
                    pd_dsl_core::spec::shape_text(
                        u64::from(n.dp_size),
                        u64::from(n.tp_size),
                        u64::from(n.pcp_size)
                    )
                ),
                engine_id: r.engine_id.clone(),
                ranks: r.ranks.clone(),
                dp_size_local: n.dp_size_local,
                dp_rank_start: n.dp_rank_start,
                dp_master: n.dp_master,
                devices: n
                    .ranks
                    .iter()
                    .map(|r| topology::devices_text(&r.devices))
                    .collect::<Vec<_>>()
                    .join("; "),
                ports: r.ports.clone(),
                kv: r.kv.clone(),
            }
        })
        .collect()
}

/// The page of one layout, from its documents view, its picture and the
/// files already rendered for it (linked from the page, so every link points
/// at a real file).
pub fn layout_page<'a>(
    layout: &Layout,
    docs: &'a DocsView,
    svg: String,
    files: &[Artifact],
) -> LayoutPage<'a> {
    let name = layout.name().to_owned();
    let meta = &docs.meta;
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
            format!("{} ({})", meta.model.weights, docs.model_source),
            false,
        ),
        fact(
            "hardware",
            format!(
                "{} x {} ({} NPUs per node)",
                meta.node_count, meta.hardware.product, meta.hardware.npus_per_node
            ),
            false,
        ),
        fact("image", meta.image.reference.clone(), true),
        fact("topology", meta.topology.clone(), true),
        fact("NPUs used", meta.npus.to_string(), false),
        match meta.connector {
            Some(c) => fact("connector", c.to_owned(), true),
            None => fact("connector", "none (mixed)".into(), false),
        },
        match docs.proxy.as_ref().filter(|_| docs.pd) {
            Some(p) => fact(
                "proxy",
                format!("{} on node 0, port {}", p.script, p.port),
                false,
            ),
            None => fact("proxy", "none".into(), false),
        },
    ];
    let mut conditions = vec![
        fact(
            "weights",
            format!(
                "{} inside the container ({})",
                meta.model.path, meta.model.weights
            ),
            false,
        ),
        fact(
            "image",
            format!(
                "{} (vllm {}, CANN {}, Mooncake {})",
                meta.image.reference, meta.image.vllm, meta.image.cann, meta.image.mooncake
            ),
            false,
        ),
        fact(
            "nodes",
            format!(
                "exactly {} x {}, {} NPUs each ({} used in total)",
                meta.node_count, meta.hardware.product, meta.hardware.npus_per_node, meta.npus
            ),
            false,
        ),
    ];
    if !meta.hardware.required_host_paths.is_empty() {
        conditions.push(fact(
            "host files",
            meta.hardware.required_host_paths.join(", "),
            true,
        ));
    }
    conditions.push(fact(
        "node order",
        meta.nodes
            .iter()
            .map(|n| format!("{} {}", n.index, n.role))
            .collect::<Vec<_>>()
            .join(", "),
        false,
    ));
    conditions.push(fact(
        "served model name",
        meta.model.served_name.clone(),
        true,
    ));
    LayoutPage {
        root: root_of(&name),
        facts,
        svg,
        nodes: node_rows(docs),
        conditions,
        files: file_names
            .into_iter()
            .map(|f| FileLink {
                href: href_path(&f),
                name: f,
            })
            .collect(),
        docs,
        name,
    }
}

/// The site files of one layout: `NAME/index.html` and `NAME/topology.svg`.
/// `docs` is its documents view (as its README reads it) and `files` its
/// other artifacts (linked from the page).
pub fn layout_site(
    layout: &Layout,
    docs: &DocsView,
    files: &[Artifact],
) -> Result<Vec<Artifact>, RenderError> {
    let name = layout.name();
    let dir = std::path::PathBuf::from(name);
    let svg = topology_svg(layout).map_err(|e| failed(name, TOPOLOGY_SVG, e))?;
    let svg = xml_safe(&svg);
    let page = layout_page(layout, docs, svg.clone(), files)
        .render()
        .map_err(|e| failed(name, PAGE, e))?;
    Ok(vec![
        Artifact::new(dir.join(TOPOLOGY_SVG), svg),
        Artifact::new(dir.join(PAGE), xml_safe(&page)),
    ])
}
