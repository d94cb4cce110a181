//! Rendering: a checked [`Layout`] becomes every script and document a
//! deployment needs, and the catalog is written atomically.
//!
//! - [`render_layout`] / [`render_catalog`] build [`Artifact`]s in memory:
//!   deterministic (sorted by path, no timestamps, exactly one trailing
//!   newline).
//! - [`write_catalog`] swaps a fully written directory into place, so a failed
//!   run leaves the previous catalog intact; [`check_catalog`] lists what is
//!   stale.
//! - Every value interpolated into a script goes through [`shell::quote`].
//!
//! Each shell script is an askama template under `pd-dsl/templates/sh/`
//! (checked at build time) reading one view model, [`model::LayoutModel`],
//! built once per layout. In `.sh` templates every `{{ value }}` is one shell
//! word quoted by the escaper registered in `pd-dsl/askama.toml`
//! ([`shell::Shell`], which calls [`shell::quote`]); raw text needs a named
//! filter. [`artifacts::ARTIFACTS`] is the registry (path, template, when it
//! applies, executable).

pub mod artifacts;
pub mod docs;
mod filters;
pub mod k8s;
pub mod launcher;
pub mod model;
pub mod rules_doc;
pub mod scripts;
pub mod shell;
pub mod site;
pub mod view;
mod write;

pub use write::{CATALOG_MARKERS, Stale, StaleKind, check_catalog, write_catalog};

use crate::Layout;
use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::PathBuf;

/// One generated file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Artifact {
    /// Path relative to the catalog root (`<layout name>/<file>`).
    pub path: PathBuf,
    /// File contents (ends with exactly one newline).
    pub contents: String,
    /// Whether the file is written with mode 0755.
    pub executable: bool,
}

impl Artifact {
    /// A file; `.sh` and `.py` files are executable. Normalizes the trailing
    /// newline to exactly one.
    pub fn new(path: impl Into<PathBuf>, contents: impl Into<String>) -> Artifact {
        let path = path.into();
        let executable = matches!(path.extension().and_then(|e| e.to_str()), Some("sh" | "py"));
        let mut contents: String = contents.into();
        let trimmed = contents.trim_end_matches('\n').len();
        contents.truncate(trimmed);
        contents.push('\n');
        Artifact {
            path,
            contents,
            executable,
        }
    }
}

/// Why rendering or writing failed.
#[derive(Debug)]
pub enum RenderError {
    /// A layout cannot be rendered (a value the renderer cannot express).
    Layout {
        /// Layout name.
        layout: String,
        /// What is wrong.
        message: String,
    },
    /// Two layouts render to the same path.
    DuplicatePath(PathBuf),
    /// The output was not touched: writing it would replace something that
    /// is not a previous catalog, or the path is unusable.
    Refused {
        /// The output directory.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// Writing failed before the swap; the output is as it was.
    Unchanged {
        /// The output directory, left as it was.
        path: PathBuf,
        /// What failed.
        cause: Box<RenderError>,
    },
    /// File system error.
    Io {
        /// What was being done.
        action: &'static str,
        /// Path involved.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RenderError::Layout { layout, message } => write!(f, "layout `{layout}`: {message}"),
            RenderError::DuplicatePath(p) => {
                write!(f, "two layouts render to `{}`", p.display())
            }
            RenderError::Io {
                action,
                path,
                source,
            } => write!(f, "cannot {action} `{}`: {source}", path.display()),
            RenderError::Refused { path, reason } => {
                write!(f, "not writing `{}`: {reason}", path.display())
            }
            RenderError::Unchanged { path, cause } => write!(
                f,
                "{cause}; `{}` was left as it was (nothing written)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for RenderError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RenderError::Io { source, .. } => Some(source),
            RenderError::Unchanged { cause, .. } => Some(cause.as_ref()),
            _ => None,
        }
    }
}

/// Renders every file of one layout, sorted by path.
pub fn render_layout(layout: &Layout) -> Result<Vec<Artifact>, RenderError> {
    render_model(layout, &model::LayoutModel::new(layout)?)
}

/// Every file of one layout from its view model: the registry's artifacts,
/// then the Kubernetes manifests and the HTML page, which list them.
fn render_model(layout: &Layout, m: &model::LayoutModel) -> Result<Vec<Artifact>, RenderError> {
    let dir = PathBuf::from(layout.name());
    let mut out = Vec::with_capacity(artifacts::ARTIFACTS.len() + 10);
    for kind in artifacts::ARTIFACTS.iter().filter(|k| k.when.applies(m)) {
        let mut a = Artifact::new(dir.join(kind.path), (kind.render)(m)?);
        a.executable = kind.executable;
        out.push(a);
    }
    out.extend(k8s::artifacts(layout, &k8s::K8sSettings::default(), &out)?);
    out.extend(site::layout_site(layout, &m.docs, &out)?);
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// Renders every layout plus the index (`README.md`, `index.json`), sorted by
/// path. Layouts are sorted by name first, whatever order they come in.
pub fn render_catalog(layouts: &[Layout]) -> Result<Vec<Artifact>, RenderError> {
    render_catalog_with(layouts, None)
}

/// [`render_catalog`] with an optional scenario guide (markdown) placed in the
/// index between the intro and the layout list.
pub fn render_catalog_with(
    layouts: &[Layout],
    scenario_guide: Option<&str>,
) -> Result<Vec<Artifact>, RenderError> {
    let mut sorted: Vec<&Layout> = layouts.iter().collect();
    sorted.sort_by(|a, b| a.name().cmp(b.name()));
    let mut by_path: BTreeMap<PathBuf, Artifact> = BTreeMap::new();
    let mut add = |a: Artifact| -> Result<(), RenderError> {
        if by_path.contains_key(&a.path) {
            return Err(RenderError::DuplicatePath(a.path));
        }
        by_path.insert(a.path.clone(), a);
        Ok(())
    };
    // Each layout's view model is built once: its files and the index read it.
    let models = sorted
        .iter()
        .map(|l| model::LayoutModel::new(l))
        .collect::<Result<Vec<_>, _>>()?;
    for (l, m) in sorted.iter().zip(&models) {
        for a in render_model(l, m)? {
            add(a)?;
        }
    }
    let docs: Vec<(&Layout, &docs::model::DocsView)> = sorted
        .iter()
        .copied()
        .zip(models.iter().map(|m| &m.docs))
        .collect();
    add(Artifact::new(
        "README.md",
        docs::index_readme_of(&docs, scenario_guide)?,
    ))?;
    add(Artifact::new(
        "index.json",
        docs::index_json_of(models.iter().map(|m| &m.docs.index_row))?,
    ))?;
    add(site::index_html(&sorted, scenario_guide)?)?;
    for a in rules_doc::artifacts()? {
        add(a)?;
    }
    Ok(by_path.into_values().collect())
}

/// Parses a `.json` or `.yaml` artifact, so tests and tools can assert that
/// every structured file is well formed. Other files pass.
pub fn parse_check(artifact: &Artifact) -> Result<(), String> {
    match artifact.path.extension().and_then(|e| e.to_str()) {
        Some("json") => serde_json::from_str::<serde_json::Value>(&artifact.contents)
            .map(drop)
            .map_err(|e| format!("{}: {e}", artifact.path.display())),
        Some("yaml" | "yml") => serde_saphyr::from_str::<serde_json::Value>(&artifact.contents)
            .map(drop)
            .map_err(|e| format!("{}: {e}", artifact.path.display())),
        _ => Ok(()),
    }
}
