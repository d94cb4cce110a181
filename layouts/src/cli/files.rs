//! Commands that read files: a layout from a file (`render FILE`),
//! `import`, `upstream diff` and `lint`.

use super::args::{ImportFormat, LintFormat};
use super::catalog::render_failed;
use super::{CliResult, EXIT_OK, EXIT_RENDER, EXIT_STALE, EXIT_USAGE};
use pd_dsl::Layout;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A layout from a file, as `render FILE` reads it: a pd-dsl YAML/JSON
/// layout through the loader (every rule runs), an upstream e2e config
/// through the importer (`import` then `finish`, what `catalog import
/// --format yaml` prints, loaded back). Findings go to `err`; exit 1 when
/// the file does not make a layout.
pub(super) fn load_file(path: &Path, err: &mut dyn Write) -> Result<Layout, (u8, String)> {
    use pd_dsl::import;
    let inputs = read_inputs(&[path.to_path_buf()])?;
    let input = &inputs[0];
    let lower = input.name.to_ascii_lowercase();
    let failed = |what: String| (EXIT_STALE, what);
    if lower.ends_with(".json") {
        return pd_dsl::load::from_json(&input.name, &input.text)
            .map_err(|e| failed(e.to_string()));
    }
    if import::is_layout_document(&input.text) {
        return pd_dsl::load::from_yaml(&input.name, &input.text)
            .map_err(|e| failed(e.to_string()));
    }
    let imported = import::import(&inputs, &import::Options::default())
        .map_err(|e| failed(import::Finding::from(e).to_string()))?;
    let spec = import::finish(&imported).map_err(|findings| {
        for f in &findings {
            let _ = writeln!(err, "{f}");
        }
        failed(format!(
            "the deployment in `{}` breaks {} hard rule(s); no `allow` can excuse them",
            input.name,
            findings.len()
        ))
    })?;
    let yaml = serde_saphyr::to_string(&spec).map_err(render_failed)?;
    pd_dsl::load::from_yaml(&input.name, &yaml).map_err(|e| failed(e.to_string()))
}

fn read_inputs(files: &[PathBuf]) -> Result<Vec<pd_dsl::import::Input>, (u8, String)> {
    files
        .iter()
        .map(|f| {
            std::fs::read_to_string(f)
                .map(|text| pd_dsl::import::Input::new(f.display().to_string(), text))
                .map_err(|e| (EXIT_USAGE, format!("cannot read `{}`: {e}", f.display())))
        })
        .collect()
}

pub(super) fn import(
    files: &[PathBuf],
    format: ImportFormat,
    dest: Option<&Path>,
    opts: &pd_dsl::import::Options,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> CliResult {
    use pd_dsl::import;
    let inputs = read_inputs(files)?;
    let imported = match import::import(&inputs, opts) {
        Ok(i) => i,
        Err(e) => {
            let _ = writeln!(err, "{}", import::Finding::from(e));
            return Ok(EXIT_STALE);
        }
    };
    let spec = match import::finish(&imported) {
        Ok(s) => s,
        Err(findings) => {
            for f in &findings {
                let _ = writeln!(err, "{f}");
            }
            let _ = writeln!(
                err,
                "error: the deployment breaks {} hard rule(s); no `allow` can excuse them",
                findings.len()
            );
            return Ok(EXIT_STALE);
        }
    };
    let text = match format {
        ImportFormat::Rust => import::print::layout_file(&spec),
        ImportFormat::Yaml => serde_saphyr::to_string(&spec).map_err(render_failed)?,
        ImportFormat::Json => {
            let mut t = serde_json::to_string_pretty(&spec).map_err(render_failed)?;
            t.push('\n');
            t
        }
    };
    match dest {
        Some(path) => {
            std::fs::write(path, &text).map_err(|e| {
                (
                    EXIT_RENDER,
                    format!("cannot write `{}`: {e}", path.display()),
                )
            })?;
            let _ = writeln!(
                out,
                "wrote {} ({} acknowledged rule(s), {} deviation(s))",
                path.display(),
                spec.allow.len(),
                spec.deviations.len()
            );
        }
        None => {
            out.write_all(text.as_bytes()).map_err(render_failed)?;
        }
    }
    Ok(EXIT_OK)
}

/// Expands directories into lint units: each YAML/JSON file alone, the
/// `.sh` files of one directory (or of the command line) together.
/// `catalog upstream diff OLD NEW`.
pub(super) fn upstream_diff(old: &str, new: &str, out: &mut dyn Write) -> Result<u8, (u8, String)> {
    let a = pd_dsl::upstream::release_of(old).map_err(|e| (EXIT_USAGE, e))?;
    let b = pd_dsl::upstream::release_of(new).map_err(|e| (EXIT_USAGE, e))?;
    for line in pd_dsl::upstream::diff_releases(a, b) {
        writeln!(out, "{line}").map_err(|e| (EXIT_RENDER, format!("cannot write: {e}")))?;
    }
    Ok(EXIT_OK)
}

fn lint_units(paths: &[PathBuf]) -> Result<Vec<Vec<PathBuf>>, (u8, String)> {
    let mut units: Vec<Vec<PathBuf>> = Vec::new();
    let mut loose_scripts: Vec<PathBuf> = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| (EXIT_USAGE, format!("cannot read `{}`: {e}", p.display())))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .collect();
            entries.sort();
            let scripts: Vec<PathBuf> = entries
                .iter()
                .filter(|e| e.extension().is_some_and(|x| x == "sh"))
                .cloned()
                .collect();
            for e in &entries {
                if e.is_dir() {
                    units.extend(lint_units(std::slice::from_ref(e))?);
                } else if e
                    .extension()
                    .is_some_and(|x| x == "yaml" || x == "yml" || x == "json")
                {
                    units.push(vec![e.clone()]);
                }
            }
            if !scripts.is_empty() {
                units.push(scripts);
            }
        } else if p.extension().is_some_and(|x| x == "sh") {
            loose_scripts.push(p.clone());
        } else {
            units.push(vec![p.clone()]);
        }
    }
    if !loose_scripts.is_empty() {
        units.push(loose_scripts);
    }
    Ok(units)
}

pub(super) fn lint(
    paths: &[PathBuf],
    format: LintFormat,
    color: bool,
    opts: &pd_dsl::import::Options,
    out: &mut dyn Write,
) -> CliResult {
    let units = lint_units(paths)?;
    let mut reports = Vec::new();
    let mut texts: Vec<pd_dsl::import::Input> = Vec::new();
    for unit in &units {
        let inputs = read_inputs(unit)?;
        let mut report = pd_dsl::import::lint_unit(&inputs, opts);
        if report.errors == 0 {
            report.estimate = pd_dsl::import::estimate_unit(&inputs, opts);
        }
        reports.push(report);
        texts.extend(inputs);
    }
    let failed = reports.iter().any(|r| r.errors > 0);
    match format {
        LintFormat::Text => {
            for r in &reports {
                for f in &r.findings {
                    // The offending line, when the finding names a file read.
                    let text = texts
                        .iter()
                        .find(|i| i.name == f.file)
                        .map(|i| i.text.as_str());
                    let _ = writeln!(out, "{}\n", crate::snippets::render(f, text, color));
                }
            }
            for r in &reports {
                let _ = writeln!(out, "{}", r.summary());
                if let Some(e) = &r.estimate {
                    let _ = writeln!(out, "{}", pd_dsl::import::estimate_line(&r.file, e));
                }
            }
        }
        LintFormat::Json => {
            let doc = serde_json::json!({ "files": reports });
            let text = serde_json::to_string_pretty(&doc).map_err(render_failed)?;
            let _ = writeln!(out, "{text}");
        }
    }
    Ok(if failed { EXIT_STALE } else { EXIT_OK })
}
