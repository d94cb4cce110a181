//! The topology picture: an SVG drawn from the placement.
//!
//! Geometry is computed here as typed shapes ([`Picture`]); the markup comes
//! from the checked template `templates/site/topology.svg`, which escapes every
//! text by construction. Text is laid out on a monospace grid: every box is
//! sized from the longest line it holds ([`text_width`] over-estimates wide
//! characters), so no label can overflow its box or overlap another, for one
//! node or for sixty-four.
//!
//! Reading the picture, top to bottom: the proxy (PD) with a bus on the left
//! that branches into every node whose ranks it lists; the prefill band;
//! the KV arrow (prefill -> decode, the connector); the decode band (or one
//! mixed band); a legend. Nodes are grouped in their engine's box, in cluster
//! order; each node lists its ranks (DP rank, NPUs, API port, kv span) and
//! marks the DP master. More ranks than [`MAX_RANK_ROWS`] are summarised.

mod place;

pub use place::picture;

use crate::{Layout, Role};
use askama::Template;

/// Advance of one monospace cell, px, at the picture's 12 px font (DejaVu
/// Sans Mono is 0.602 em = 7.2 px; rounded up so every common monospace face
/// fits).
const CELL: f64 = 7.6;
/// Line height, px.
const LINE: f64 = 18.0;
/// Padding inside a node box.
const PAD: f64 = 10.0;
/// Left margin: the proxy bus runs at [`BUS_X`] inside it.
const LEFT: f64 = 32.0;
const BUS_X: f64 = 14.0;
const RIGHT: f64 = 20.0;
/// Gutter above each row of nodes: the proxy branch runs in it.
const GUTTER: f64 = 20.0;
/// Engine box: header height (two lines) and inner padding.
const ENGINE_HEAD: f64 = 44.0;
const ENGINE_PAD: f64 = 8.0;
/// Gap between nodes of one engine, and between engines in a row.
const NODE_GAP: f64 = 10.0;
const ENGINE_GAP: f64 = 14.0;
/// Rows of ranks shown per node before summarising.
pub const MAX_RANK_ROWS: usize = 8;
/// Nodes per row at most (an engine wider than this wraps inside its box).
const MAX_COLUMNS: usize = 8;
/// Nodes per row at least, so small layouts stay compact but not thin.
const MIN_COLUMNS: usize = 4;

/// Display width of `s` in monospace cells: wide (CJK, emoji) characters take
/// two; every non-ASCII character is counted as two so estimates never fall
/// short.
pub fn text_width(s: &str) -> usize {
    s.chars().map(|c| if c.is_ascii() { 1 } else { 2 }).sum()
}

fn px(cells: usize) -> f64 {
    cells as f64 * CELL
}

/// One line of text at an absolute position.
#[derive(Clone, Debug)]
pub struct Label {
    /// Left edge.
    pub x: f64,
    /// Baseline.
    pub y: f64,
    /// CSS class (`head`, `rank`, `note`, ...).
    pub class: &'static str,
    /// The text (escaped by the template).
    pub text: String,
}

/// One node box.
#[derive(Clone, Debug)]
pub struct NodeBox {
    /// Node index.
    pub index: usize,
    /// Role (CSS class).
    pub role: Role,
    /// Box.
    pub x: f64,
    /// Box.
    pub y: f64,
    /// Box.
    pub w: f64,
    /// Box.
    pub h: f64,
    /// Tooltip and accessible name.
    pub title: String,
    /// Its lines.
    pub labels: Vec<Label>,
}

/// One engine box around its nodes.
#[derive(Clone, Debug)]
pub struct EngineBox {
    /// Engine index.
    pub index: usize,
    /// Role (CSS class).
    pub role: Role,
    /// Box.
    pub x: f64,
    /// Box.
    pub y: f64,
    /// Box.
    pub w: f64,
    /// Box.
    pub h: f64,
    /// Tooltip.
    pub title: String,
    /// Header lines.
    pub labels: Vec<Label>,
}

/// A line or arrow (SVG path data).
#[derive(Clone, Debug)]
pub struct Wire {
    /// Path data.
    pub d: String,
    /// CSS class (`proxy` or `kv`).
    pub class: &'static str,
    /// Whether it ends in an arrow head.
    pub arrow: bool,
    /// Tooltip.
    pub title: String,
}

/// The whole picture.
#[derive(Clone, Debug, Template)]
#[template(path = "site/topology.svg")]
pub struct Picture {
    /// Layout name (`data-layout`).
    pub layout: String,
    /// Number of nodes drawn (`data-nodes`).
    pub node_count: usize,
    /// Canvas.
    pub width: f64,
    /// Canvas.
    pub height: f64,
    /// `<title>`.
    pub title: String,
    /// `<desc>`.
    pub desc: String,
    /// Free text (title, band labels, KV label, legend).
    pub labels: Vec<Label>,
    /// Engines, drawn first.
    pub engines: Vec<EngineBox>,
    /// Nodes.
    pub nodes: Vec<NodeBox>,
    /// The proxy box, if any.
    pub proxy: Option<NodeBox>,
    /// Wires, drawn last.
    pub wires: Vec<Wire>,
}

/// `0-3` for a contiguous list, `0,2,5` otherwise.
pub fn devices_text(devices: &[u32]) -> String {
    crate::render::view::span_text(devices, ",")
}

fn rank_line(r: &crate::RankPlan) -> String {
    let mut s = format!("r{} NPU {}", r.dp_rank, devices_text(&r.devices));
    match r.api_port {
        Some(p) => s.push_str(&format!(" :{p}")),
        None => s.push_str(" headless"),
    }
    match r.kv_span {
        Some((a, b)) if a == b => s.push_str(&format!(" kv {a}")),
        Some((a, b)) => s.push_str(&format!(" kv {a}-{b}")),
        None => {}
    }
    s
}

/// The text lines of one node, before placement.
fn node_lines(layout: &Layout, n: &crate::NodePlan) -> Vec<(&'static str, String)> {
    let e = layout.placement.engines.get(n.engine);
    let dp = e.map_or(0, |e| e.dp);
    let mut lines = vec![("head", format!("node {} · {}", n.index, n.role))];
    let ranks = match (n.ranks.first(), n.ranks.last()) {
        (Some(a), Some(b)) => format!("ranks {}-{} of {dp}", a.dp_rank, b.dp_rank),
        _ => "no ranks".to_owned(),
    };
    if n.dp_master == n.index {
        lines.push(("master", format!("★ DP master · {ranks}")));
    } else {
        lines.push(("note", format!("{ranks} · master node {}", n.dp_master)));
    }
    if n.hosts_proxy
        && let Some(p) = layout.proxy
    {
        lines.push(("note", format!("hosts the proxy :{}", p.port)));
    }
    let rows = &n.ranks;
    if rows.len() <= MAX_RANK_ROWS {
        lines.extend(rows.iter().map(|r| ("rank", rank_line(r))));
    } else {
        // First ranks, one summary row, the last rank: MAX_RANK_ROWS rows.
        let head = MAX_RANK_ROWS - 2;
        lines.extend(rows[..head].iter().map(|r| ("rank", rank_line(r))));
        let hidden = &rows[head..rows.len() - 1];
        if let (Some(a), Some(b)) = (hidden.first(), hidden.last()) {
            let ports: Vec<u32> = hidden.iter().filter_map(|r| r.api_port).collect();
            let ports = match (ports.first(), ports.last()) {
                (Some(p), Some(q)) => format!(" :{p}-{q}"),
                _ => String::new(),
            };
            lines.push((
                "more",
                format!(
                    "… {} more: r{}-r{}{ports}",
                    hidden.len(),
                    a.dp_rank,
                    b.dp_rank
                ),
            ));
        }
        if let Some(r) = rows.last() {
            lines.push(("rank", rank_line(r)));
        }
    }
    lines
}

/// The engine header: what it is, then its ids (two lines keep it narrower
/// than one node).
fn engine_label(e: &crate::EnginePlan) -> [String; 2] {
    let head = if e.pcp > 1 {
        format!(
            "engine {} · {} · DP{} x TP{} x PCP{}",
            e.index, e.role, e.dp, e.tp, e.pcp
        )
    } else {
        format!("engine {} · {} · DP{} x TP{}", e.index, e.role, e.dp, e.tp)
    };
    let mut ids = Vec::new();
    if let Some(id) = e.engine_id {
        ids.push(format!("engine_id {id}"));
    }
    if let Some(k) = e.kv_port {
        ids.push(format!("kv_port {k}"));
    }
    let ids = if ids.is_empty() {
        format!("{} node(s)", e.nodes.len())
    } else {
        ids.join(" · ")
    };
    [head, ids]
}

fn list_summary(ids: &[String]) -> String {
    if ids.len() <= 6 {
        ids.join(", ")
    } else {
        format!(
            "{}, … {}",
            ids[..3].join(", "),
            ids.last().map_or("", String::as_str)
        )
    }
}

/// The standalone `topology.svg` (also inlined in the layout's page).
pub fn topology_svg(layout: &Layout) -> Result<String, askama::Error> {
    picture(layout).render()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_ranges() {
        assert_eq!(devices_text(&[0, 1, 2, 3]), "0-3");
        assert_eq!(devices_text(&[4]), "4");
        assert_eq!(devices_text(&[0, 2, 3]), "0,2,3");
        assert_eq!(devices_text(&[]), "");
    }

    #[test]
    fn wide_characters_count_double() {
        assert_eq!(text_width("ab"), 2);
        assert_eq!(text_width("模型"), 4);
        assert_eq!(text_width("→"), 2);
    }
}
