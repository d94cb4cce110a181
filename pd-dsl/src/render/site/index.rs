//! The catalog index page and the scenario guide.

use super::filters;
use super::page::FileLink;
use super::{PAGE, TOPOLOGY_SVG, failed, href_path, xml_safe};
use crate::render::{Artifact, RenderError};
use crate::{Layout, Role};
use askama::Template;
use std::collections::BTreeSet;

/// One layout in the index page.
#[derive(Clone, Debug)]
pub struct IndexRow {
    /// Layout name.
    pub name: String,
    /// Link to its page.
    pub href: String,
    /// Link to its directory (for the scripts).
    pub dir: String,
    /// Topology notation.
    pub topology: String,
    /// Nodes.
    pub nodes: usize,
    /// NPUs used.
    pub npus: usize,
    /// Model id.
    pub model: &'static str,
    /// The weights' published name (`DeepSeek-V4-Flash-w8a8-mtp`).
    pub model_name: &'static str,
    /// The hardware's product name (`Atlas 800 A3`).
    pub hardware_name: &'static str,
    /// The shape as operators say it: `2P1D`, or `mixed x2`.
    pub shape: String,
    /// Hardware id.
    pub hardware: &'static str,
    /// Image tag.
    pub image: &'static str,
    /// Full image reference.
    pub image_ref: String,
    /// Computed verification.
    pub verified: bool,
    /// `blocked on image (needs TAG)` when its image cannot run it.
    pub blocked: Option<String>,
    /// Verification sentence.
    pub verification: String,
    /// Provenance date.
    pub recorded: String,
    /// Summary (one paragraph).
    pub summary: String,
    /// Scripts.
    pub scripts: Vec<FileLink>,
}

/// A layout's shape as operators say it: `2P1D` (prefill and decode
/// engines), `mixed x2` (mixed engines).
pub fn shape(l: &Layout) -> String {
    let count = |r: Role| l.placement.engines.iter().filter(|e| e.role == r).count();
    if l.is_pd() {
        format!("{}P{}D", count(Role::Prefill), count(Role::Decode))
    } else {
        format!("mixed x{}", count(Role::Mixed))
    }
}

/// The catalog index page.
#[derive(Clone, Debug, Template)]
#[template(path = "site/index.html")]
pub struct IndexPage {
    /// Layouts, topology first.
    pub rows: Vec<IndexRow>,
    /// Filter values: model id and the weights' name.
    pub models: Vec<(&'static str, &'static str)>,
    /// Filter values: hardware id and product name.
    pub hardware: Vec<(&'static str, &'static str)>,
    /// Filter values.
    pub images: Vec<&'static str>,
    /// The scenario guide as HTML ([`guide_html`]).
    pub guide: Option<String>,
}

/// The scenario guide (Markdown) as HTML: raw HTML in it becomes text, links
/// to a layout's `README.md` point at its page, and only relative, `http`,
/// `https` and fragment links are kept (others become `#`).
pub fn guide_html(markdown: &str) -> String {
    use pulldown_cmark::{CowStr, Event, Options, Parser, Tag};
    let fix = |dest: CowStr<'_>| -> CowStr<'static> {
        let d = dest.to_string();
        let lower = d.to_ascii_lowercase();
        let scheme = lower
            .split_once(':')
            .filter(|(s, _)| !s.contains('/') && !s.contains('#') && !s.contains('?'))
            .map(|(s, _)| s.to_owned());
        let d = match scheme.as_deref() {
            None if d.starts_with("//") => "#".to_owned(),
            None => match d.strip_suffix("README.md") {
                Some(dir) if dir.is_empty() || dir.ends_with('/') => format!("{dir}{PAGE}"),
                _ => d,
            },
            Some("http" | "https") => d,
            Some(_) => "#".to_owned(),
        };
        CowStr::from(d)
    };
    let events = Parser::new_ext(markdown, Options::ENABLE_TABLES).map(|ev| match ev {
        Event::Html(s) | Event::InlineHtml(s) => Event::Text(s),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: fix(dest_url),
            title,
            id,
        }),
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Image {
            link_type,
            dest_url: fix(dest_url),
            title,
            id,
        }),
        ev => ev,
    });
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

/// `catalog/index.html`. `layouts` are in any order; the page lists them
/// topology first, like the Markdown index.
pub fn index_html(
    layouts: &[&Layout],
    scenario_guide: Option<&str>,
) -> Result<Artifact, RenderError> {
    let mut sorted = layouts.to_vec();
    sorted.sort_by(|a, b| {
        crate::render::docs::topology_order(a).cmp(&crate::render::docs::topology_order(b))
    });
    let rows: Vec<IndexRow> = sorted
        .iter()
        .map(|l| {
            // The page links every file of the layout; the index links the
            // entry points.
            let scripts = ["README.md", "meta.yaml", "run.sh", TOPOLOGY_SVG];
            let dir = href_path(&format!("{}/", l.name()));
            IndexRow {
                name: l.name().to_owned(),
                href: format!("{dir}{PAGE}"),
                topology: l.topology_text(),
                nodes: l.node_count(),
                npus: l.npus_used(),
                model: l.model.id,
                model_name: l.model.weights,
                hardware_name: l.hardware.product,
                shape: shape(l),
                hardware: l.hardware.id,
                image: l.image.tag,
                image_ref: l.image_ref.clone(),
                verified: l.verified,
                blocked: {
                    let d = l.deploy_status();
                    (!d.is_deployable()).then(|| d.label())
                },
                verification: l.verification_text(),
                recorded: l.spec.provenance.recorded.value.clone(),
                summary: l
                    .spec
                    .summary
                    .iter()
                    .map(|p| p.trim())
                    .collect::<Vec<_>>()
                    .join(" "),
                scripts: scripts
                    .into_iter()
                    .map(|f| FileLink {
                        name: f.to_owned(),
                        href: format!("{dir}{f}"),
                    })
                    .collect(),
                dir,
            }
        })
        .collect();
    let set = |f: fn(&IndexRow) -> &'static str| -> Vec<&'static str> {
        rows.iter()
            .map(f)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    };
    let pairs = |f: fn(&IndexRow) -> (&'static str, &'static str)| {
        rows.iter()
            .map(f)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
    };
    let page = IndexPage {
        models: pairs(|r| (r.model, r.model_name)),
        hardware: pairs(|r| (r.hardware, r.hardware_name)),
        images: set(|r| r.image),
        guide: scenario_guide.map(guide_html),
        rows,
    };
    let html = page.render().map_err(|e| failed("index", PAGE, e))?;
    Ok(Artifact::new(PAGE, xml_safe(&html)))
}
