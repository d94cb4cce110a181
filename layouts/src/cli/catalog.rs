//! Commands that write or check the catalog: the whole catalog, `--check`
//! and `render`, and finding a layout by name.

use super::views::table;
use super::{CliResult, EXIT_OK, EXIT_RENDER, EXIT_STALE, EXIT_USAGE};
use pd_dsl::render::k8s::K8sSettings;
use pd_dsl::{Layout, render};
use std::io::Write;
use std::path::Path;

/// The catalog's artifacts with the `k8s/` manifests made with `settings`.
fn with_k8s(
    artifacts: Vec<render::Artifact>,
    layouts: &[&Layout],
    settings: &K8sSettings,
) -> Result<Vec<render::Artifact>, (u8, String)> {
    if *settings == K8sSettings::default() {
        return Ok(artifacts);
    }
    render::k8s::with_settings(artifacts, layouts, settings).map_err(render_failed)
}

pub(super) fn render_failed(e: impl std::fmt::Display) -> (u8, String) {
    (EXIT_RENDER, e.to_string())
}

/// A layout by its name, or by a suffix of it after a `/` or `-` that one
/// layout alone ends with (`a3-1p3d`, `v4-flash-w8a8-mtp/a3-1p3d`).
pub(super) fn find<'a>(layouts: &'a [Layout], name: &str) -> Result<&'a Layout, (u8, String)> {
    if let Some(l) = layouts.iter().find(|l| l.name() == name) {
        return Ok(l);
    }
    let ends = |l: &&Layout| {
        let full = l.name();
        full.len() > name.len()
            && full.ends_with(name)
            && matches!(full.as_bytes()[full.len() - name.len() - 1], b'/' | b'-')
    };
    let hits: Vec<&Layout> = layouts.iter().filter(ends).collect();
    match hits.as_slice() {
        [one] => return Ok(one),
        [] => {}
        many => {
            return Err((
                EXIT_USAGE,
                format!(
                    "`{name}` ends {} layout names: {}; give more of the name",
                    many.len(),
                    many.iter()
                        .map(|l| format!("`{}`", l.name()))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    layouts.iter().find(|l| l.name() == name).ok_or_else(|| {
        let hint = pd_dsl::rules::did_you_mean(name, layouts.iter().map(|l| l.name()));
        (
            EXIT_USAGE,
            format!("no layout named `{name}`{hint}\nrun `catalog list` to see every layout"),
        )
    })
}

pub(super) fn write_all(
    dir: &Path,
    layouts: &[Layout],
    guide: Option<&str>,
    k8s: &K8sSettings,
    out: &mut dyn Write,
) -> CliResult {
    let artifacts = render::render_catalog_with(layouts, guide).map_err(render_failed)?;
    let artifacts = with_k8s(artifacts, &layouts.iter().collect::<Vec<_>>(), k8s)?;
    render::write_catalog(dir, &artifacts).map_err(render_failed)?;
    let nodes: usize = layouts.iter().map(Layout::node_count).sum();
    let npus: usize = layouts.iter().map(Layout::npus_used).sum();
    let verified = layouts.iter().filter(|l| l.verified).count();
    let _ = writeln!(
        out,
        "wrote {} files to {}: {} layouts, {nodes} nodes, {npus} NPUs, {verified} verified on their image",
        artifacts.len(),
        dir.display(),
        layouts.len(),
    );
    let rows: Vec<Vec<String>> = layouts
        .iter()
        .map(|l| {
            vec![
                format!("  {}", l.name()),
                l.topology_text(),
                format!("{} nodes", l.node_count()),
                format!("{} NPUs", l.npus_used()),
                match l.deploy_status() {
                    s if !s.is_deployable() => s.label(),
                    _ if l.verified => "verified".into(),
                    _ => "not verified".into(),
                },
            ]
        })
        .collect();
    let _ = write!(out, "{}", table(&rows));
    Ok(EXIT_OK)
}

pub(super) fn check(
    dir: &Path,
    layouts: &[Layout],
    guide: Option<&str>,
    k8s: &K8sSettings,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> CliResult {
    let artifacts = render::render_catalog_with(layouts, guide).map_err(render_failed)?;
    let artifacts = with_k8s(artifacts, &layouts.iter().collect::<Vec<_>>(), k8s)?;
    let stale = render::check_catalog(dir, &artifacts);
    if stale.is_empty() {
        let _ = writeln!(
            out,
            "{} is fresh ({} files)",
            dir.display(),
            artifacts.len()
        );
        return Ok(EXIT_OK);
    }
    for s in &stale {
        let _ = writeln!(err, "stale: {} ({})", dir.join(&s.path).display(), s.kind);
    }
    let _ = writeln!(
        err,
        "error: {} is stale: {} file(s) missing, different or extra; run `cargo run --bin catalog` to refresh it",
        dir.display(),
        stale.len()
    );
    Ok(EXIT_STALE)
}

pub(super) fn render_one(
    layout: &Layout,
    dir: &Path,
    k8s: &K8sSettings,
    out: &mut dyn Write,
) -> CliResult {
    let artifacts = render::render_layout(layout).map_err(render_failed)?;
    let artifacts = with_k8s(artifacts, &[layout], k8s)?;
    let prefix = Path::new(layout.name());
    let local: Vec<render::Artifact> = artifacts
        .into_iter()
        .map(|mut a| {
            if let Ok(rest) = a.path.strip_prefix(prefix) {
                a.path = rest.to_path_buf();
            }
            a
        })
        .collect();
    let target = dir.join(layout.name());
    render::write_catalog(&target, &local).map_err(render_failed)?;
    let _ = writeln!(out, "wrote {} files to {}", local.len(), target.display());
    Ok(EXIT_OK)
}
