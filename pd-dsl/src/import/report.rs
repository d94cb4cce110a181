//! Findings: what `catalog lint` reports for an imported deployment, a
//! pd-dsl layout file or a whole unit, with the unit's report and the
//! estimate of what it serves.

use super::{ImportError, Imported, Input, Options, finish, import, is_yaml, read_and_build};
use crate::{Severity, Site, check};
use serde::Serialize;
use std::fmt;

/// How serious a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// The deployment fails, collides, or cannot be read: exit 1.
    Error,
    /// A convention or a difference from the derived value: the import
    /// acknowledges it.
    Warning,
}

/// One lint finding. The JSON form (`catalog lint --format json`) is this
/// struct: `{file, line, column, level, rule, message}`; `rule` is `null`
/// for read errors and for differences no rule covers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// File name.
    pub file: String,
    /// Line, from 1 (0: not tied to a line).
    pub line: u64,
    /// Column, from 1 (0: not tied to a column).
    pub column: u64,
    /// Error or warning.
    pub level: Level,
    /// The rule's stable name, when a rule found it.
    pub rule: Option<String>,
    /// What was found, what was expected, and why.
    pub message: String,
}

impl fmt::Display for Finding {
    /// rustc style: `error[rule]: message` then `  --> file:line:col`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.level {
            Level::Error => "error",
            Level::Warning => "warning",
        };
        match &self.rule {
            Some(r) => write!(f, "{level}[{r}]: {}", self.message)?,
            None => write!(f, "{level}: {}", self.message)?,
        }
        if self.line == 0 {
            write!(f, "\n  --> {}", self.file)
        } else {
            write!(f, "\n  --> {}:{}:{}", self.file, self.line, self.column)
        }
    }
}

impl From<ImportError> for Finding {
    fn from(e: ImportError) -> Finding {
        Finding {
            file: e.file,
            line: e.line,
            column: e.column,
            level: Level::Error,
            rule: None,
            message: e.message,
        }
    }
}

/// Every finding of an imported deployment: the rules on the spec as read
/// (nothing acknowledged), then the differences no rule covers.
pub fn findings(imported: &Imported) -> Vec<Finding> {
    let map = &imported.map;
    let at = |site: Site| map.loc(site);
    let mut out: Vec<Finding> = Vec::new();
    if let Err(diags) = check(&imported.spec) {
        for d in diags.iter() {
            let loc = at(d.site);
            out.push(Finding {
                file: loc.map_or_else(|| map.file(0).to_owned(), |l| map.file(l.file).to_owned()),
                line: loc.map_or(0, |l| l.line),
                column: loc.map_or(0, |l| l.column),
                level: match d.rule.severity() {
                    Severity::Hard => Level::Error,
                    Severity::Convention => Level::Warning,
                },
                rule: Some(d.rule.name().to_owned()),
                message: d.message.clone(),
            });
        }
    }
    for n in &imported.notes {
        out.push(Finding {
            file: map.file(n.at.file).to_owned(),
            line: n.at.line,
            column: n.at.column,
            level: Level::Warning,
            rule: None,
            message: format!("{}: {}", n.what, n.why),
        });
    }
    out.sort_by(|a, b| {
        (&a.file, a.line, a.column, a.level).cmp(&(&b.file, b.line, b.column, b.level))
    });
    out
}

/// Imports and reports every finding. A setting pd-dsl cannot state (two
/// nodes of one role set differently) is an error, and every rule still
/// runs on the rest (the role's first node standing for it); an input that
/// cannot be read at all has that read error as its only finding.
pub fn lint(inputs: &[Input], opts: &Options) -> Vec<Finding> {
    match read_and_build(inputs, opts) {
        Ok((imported, errors)) => {
            let mut out: Vec<Finding> = errors.into_iter().map(Finding::from).collect();
            out.extend(findings(&imported));
            out.sort_by(|a, b| {
                (&a.file, a.line, a.column, a.level).cmp(&(&b.file, b.line, b.column, b.level))
            });
            out
        }
        Err(e) => vec![e.into()],
    }
}

/// Lints a pd-dsl layout file (YAML or JSON) through the loader
/// ([`crate::load`]), with the same finding shape as an import.
pub fn lint_layout_file(name: &str, text: &str) -> Vec<Finding> {
    let json = name.to_ascii_lowercase().ends_with(".json");
    let result = if json {
        crate::load::from_json(name, text)
    } else {
        crate::load::from_yaml(name, text)
    };
    match result {
        Ok(_) => Vec::new(),
        Err(crate::load::LoadError::Parse {
            file,
            position,
            message,
        }) => vec![Finding {
            file,
            line: position.map_or(0, |p| p.line),
            column: position.map_or(0, |p| p.column),
            level: Level::Error,
            rule: None,
            message,
        }],
        Err(crate::load::LoadError::Rules {
            file,
            diagnostics,
            positions,
        }) => diagnostics
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let p = positions.get(i).copied().flatten();
                Finding {
                    file: file.clone(),
                    line: p.map_or(0, |p| p.line),
                    column: p.map_or(0, |p| p.column),
                    // Unacknowledged conventions do not compile either.
                    level: Level::Error,
                    rule: Some(d.rule.name().to_owned()),
                    message: d.message.clone(),
                }
            })
            .collect(),
    }
}

/// Whether a YAML/JSON text is a pd-dsl layout (it has `topology` and
/// `name` at the top) rather than an upstream e2e config.
pub fn is_layout_document(text: &str) -> bool {
    let top = |k: &str| {
        text.lines().any(|l| {
            l.starts_with(&format!("{k}:")) || l.trim_start().starts_with(&format!("\"{k}\""))
        })
    };
    top("topology") && top("name")
}

/// The findings of one linted unit (a config, a layout file, or a set of
/// scripts named by its first file), with counts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FileReport {
    /// The file (or the first script of a set).
    pub file: String,
    /// Findings at error level.
    pub errors: usize,
    /// Findings at warning level.
    pub warnings: usize,
    /// Every finding, in file order.
    pub findings: Vec<Finding>,
    /// What the deployment serves at its declared workload, when it reads
    /// without errors and states one (`catalog lint` fills it in with
    /// [`estimate_unit`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimate: Option<crate::estimate::Estimate>,
}

impl FileReport {
    /// A report over `findings`.
    pub fn new(file: impl Into<String>, findings: Vec<Finding>) -> FileReport {
        let errors = findings.iter().filter(|f| f.level == Level::Error).count();
        FileReport {
            file: file.into(),
            errors,
            warnings: findings.len() - errors,
            findings,
            estimate: None,
        }
    }

    /// `FILE: ok` or `FILE: 2 errors, 1 warning`.
    pub fn summary(&self) -> String {
        if self.findings.is_empty() {
            return format!("{}: ok", self.file);
        }
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        format!(
            "{}: {}, {}",
            self.file,
            plural(self.errors, "error"),
            plural(self.warnings, "warning")
        )
    }
}

/// What one unit serves at its declared workload (an e2e config's largest
/// baseline case, a layout's `bench`), when it reads and passes the rules.
pub fn estimate_unit(inputs: &[Input], opts: &Options) -> Option<crate::estimate::Estimate> {
    let layout = match inputs {
        [one] if one.name.to_ascii_lowercase().ends_with(".json") => {
            crate::load::from_json(&one.name, &one.text).ok()?
        }
        [one] if is_yaml(one) && is_layout_document(&one.text) => {
            crate::load::from_yaml(&one.name, &one.text).ok()?
        }
        _ => crate::check(&finish(&import(inputs, opts).ok()?).ok()?).ok()?,
    };
    crate::estimate::estimate(&layout)
}

/// One line for `catalog lint`: what the unit serves, and its P:D balance.
pub fn estimate_line(file: &str, e: &crate::estimate::Estimate) -> String {
    let mut line = format!(
        "{file}: serves ~{:.0} output tokens/s ({:.1} per NPU, TTFT {}, TPOT {:.1} ms, bound by {}; within about {:.0}%) at its workload",
        e.output_tokens_per_s,
        e.output_tokens_per_s_per_npu,
        e.ttft_text(),
        e.tpot_ms,
        e.bound,
        e.band * 100.0
    );
    if let Some(b) = &e.balance {
        line.push_str("; P:D balance: ");
        line.push_str(&b.summary());
    }
    line
}

/// Lints one unit: YAML/JSON layout files through the loader, an e2e config
/// or a script set through the importer.
pub fn lint_unit(inputs: &[Input], opts: &Options) -> FileReport {
    let name = inputs.first().map_or("<input>", |i| i.name.as_str());
    let findings = match inputs {
        [one] if one.name.to_ascii_lowercase().ends_with(".json") => {
            lint_layout_file(&one.name, &one.text)
        }
        [one] if is_yaml(one) && is_layout_document(&one.text) => {
            lint_layout_file(&one.name, &one.text)
        }
        _ => lint(inputs, opts),
    };
    FileReport::new(name, findings)
}
