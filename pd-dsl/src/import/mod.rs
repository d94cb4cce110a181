//! Bring your own deployment: front ends that turn what exists today into
//! the same [`LayoutSpec`] the `layout!` macro and the YAML/JSON loader
//! produce, so the one rule engine ([`crate::check`]) judges it.
//!
//! Two inputs are read:
//! - an upstream e2e multi-node config (YAML with anchors and merge keys;
//!   `config` + `templates` for external DP, `deployment` for internal DP);
//! - a set of hand-written shell scripts for one deployment (role templates
//!   taking `$1..$7`, `launch_online_dp.py` lines, per-node `vllm serve`
//!   commands, the proxy line, `export` lines).
//!
//! Every value keeps the file, line and column it was read from
//! ([`SourceMap`]), so a rule's finding points into the user's file.
//! [`import`] builds the spec; [`lint`] reports every finding;
//! [`finish`] acknowledges each convention the input breaks with
//! `allow(rule, "imported from FILE:LINE")` and records what no rule covers
//! as `deviate(...)`, so the printed layout compiles and says what upstream
//! does differently ([`print::layout_source`]).
//!
//! ```
//! use pd_dsl::import::{Input, Options, import, finish, print};
//! let yaml = "\
//! model: Eco-Tech/DeepSeek-V3.1-w8a8-mtp-QuaRot
//! num_nodes: 1
//! npu_per_node: 16
//! deployment:
//!   - server_cmd: vllm serve Eco-Tech/DeepSeek-V3.1-w8a8-mtp-QuaRot --port 8015 --tensor-parallel-size 4 --data-parallel-size 4 --max-num-seqs 16 --max-model-len 32768
//! ";
//! let imported = import(&[Input::new("one.yaml", yaml)], &Options::default()).unwrap();
//! let spec = finish(&imported).unwrap();
//! assert_eq!(spec.topology[0].dp.value, 4);
//! assert!(print::layout_source(&spec).contains("topology: <mixed 1 x dp4tp4;>"));
//! ```

mod build;
pub mod print;
mod scripts;
pub mod shell;
mod upstream;

pub use build::PROXY_ENV;

use crate::{AllowSpec, DeviationSpec, Severity, Spanned};
use crate::{LayoutSpec, Site, check};
use serde::Serialize;
use std::fmt;

/// One input file.
#[derive(Clone, Debug)]
pub struct Input {
    /// The name findings use (a path as given).
    pub name: String,
    /// Its text.
    pub text: String,
}

impl Input {
    /// An input named `name` holding `text`.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Input {
        Input {
            name: name.into(),
            text: text.into(),
        }
    }
}

/// What the inputs cannot say. Every field has a documented default.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Layout name (default `imported/<first file's stem>`).
    pub name: Option<String>,
    /// Hardware id (default: from `npu_per_node` or the NPUs a node uses).
    pub hardware: Option<String>,
    /// Image tag (default: the newest image of the table).
    pub image: Option<String>,
    /// Recorded date (default: the image's date, which keeps output
    /// deterministic).
    pub recorded: Option<String>,
}

/// A position in one of the inputs: file index, 1-based line and column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Loc {
    /// Index into the inputs.
    pub file: usize,
    /// Line, from 1.
    pub line: u64,
    /// Column in characters, from 1.
    pub column: u64,
}

/// The positions of every value of an imported spec: `Site(i + 1)` is
/// `sites[i]`.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<String>,
    sites: Vec<Loc>,
}

impl SourceMap {
    fn new(inputs: &[Input]) -> SourceMap {
        SourceMap {
            files: inputs.iter().map(|i| i.name.clone()).collect(),
            sites: Vec::new(),
        }
    }

    /// A new site for a value read at `at`.
    pub fn site(&mut self, at: Loc) -> Site {
        self.sites.push(at);
        u32::try_from(self.sites.len()).map_or(Site::NONE, Site)
    }

    /// Where a site's value was read.
    pub fn loc(&self, site: Site) -> Option<Loc> {
        let i = usize::try_from(site.0).ok()?.checked_sub(1)?;
        self.sites.get(i).copied()
    }

    /// The name of input `file`.
    pub fn file(&self, file: usize) -> &str {
        self.files.get(file).map_or("<input>", String::as_str)
    }

    /// `FILE:LINE:COL`.
    pub fn show(&self, at: Loc) -> String {
        format!("{}:{}:{}", self.file(at.file), at.line, at.column)
    }

    /// `FILE:LINE`.
    pub fn show_line(&self, at: Loc) -> String {
        format!("{}:{}", self.file(at.file), at.line)
    }
}

/// Why the inputs could not be imported at all.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ImportError {
    /// File name.
    pub file: String,
    /// Line, from 1 (0 when the error is about the whole input set).
    pub line: u64,
    /// Column, from 1 (0 likewise).
    pub column: u64,
    /// What was found, what was expected, and why.
    pub message: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file, self.line, self.column, self.message
            )
        }
    }
}

impl std::error::Error for ImportError {}

/// A difference from what pd-dsl derives that no rule covers: becomes a
/// `deviate(what, why)` and a lint warning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// Where the differing value was read.
    pub at: Loc,
    /// What the input does.
    pub what: String,
    /// Why pd-dsl does otherwise.
    pub why: String,
}

/// An imported deployment: the spec (no `allow`s yet), the position of
/// every value, and what differs from the derived model.
#[derive(Clone, Debug)]
pub struct Imported {
    /// The layout as read.
    pub spec: LayoutSpec,
    /// Positions of its values.
    pub map: SourceMap,
    /// Differences no rule covers.
    pub notes: Vec<Note>,
    /// What each input rank runs, as read (for round-trip checks).
    pub ranks: Vec<InputRank>,
    /// The proxy command the input runs, as read (PD deployments; `None`
    /// for a mixed one, or a script set without a proxy line).
    pub proxy: Option<InputProxy>,
}

/// The proxy command of the input as the importer read it, values as
/// written (placeholders such as `${NODE_0_IP}` kept, as in [`InputRank`]).
/// A script set's proxy line; for an e2e config, the command the e2e runner
/// builds from it (upstream
/// `tests/e2e/nightly/multi_node/external_dp/scripts/external_dp_config.py`,
/// `build_proxy_server_cmd`): `load_balance_proxy_server_example.py
/// --host ${NODE_0_IP} --port 1999`, then every rank of every
/// `routing.groups` node, in `config` order, as `${NODE_k_IP}` and
/// `port_start` + local rank.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct InputProxy {
    /// The proxy script's file name (`load_balance_proxy_server_example.py`).
    pub script: String,
    /// Options in input order, flags spelled with dashes (see
    /// `normalise_flag`); a list flag (`--prefiller-hosts`) keeps every
    /// value in order, a switch none.
    pub options: Vec<(String, Vec<String>)>,
}

/// One rank of the input as the importer read it: the `vllm serve` options
/// (placeholders resolved), env and kv-transfer-config.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InputRank {
    /// Index of the node in pd-dsl's node order.
    pub node: usize,
    /// Index of the node in the input: an e2e config's `node_index` (the
    /// `config` entry's, or the `deployment` entry's place), or the node's
    /// place in a script set (launcher lines, then `vllm serve` commands,
    /// in file order).
    pub input_node: usize,
    /// Global DP rank.
    pub dp_rank: u64,
    /// The model path or hub id `vllm serve` gets.
    pub model: String,
    /// Options after the model, `--flag` → values, as the input gives them:
    /// the per-rank flags first (`--port`, `--data-parallel-*`,
    /// `--tensor-parallel-size`, `--host`, `--headless`; launcher and
    /// harness placeholders substituted with what they pass this rank),
    /// then the others in input order. Flags are spelled with dashes,
    /// `--flag=value` split (see `normalise_flag`).
    pub options: Vec<(String, Option<String>)>,
    /// Env the rank gets from the input, values as written (`dir:$NAME` for
    /// a prepend), without what pd-dsl derives per node or rank
    /// (`ASCEND_RT_VISIBLE_DEVICES`, `HCCL_IF_IP`, the socket names,
    /// `ENGINE_ID`, `KV_PORT`, the e2e runner's `SERVER_PORT`).
    pub env: Vec<(String, String)>,
}

/// Reads the inputs: one e2e config (`.yaml`/`.yml`), or any number of
/// shell scripts for one deployment.
pub fn import(inputs: &[Input], opts: &Options) -> Result<Imported, ImportError> {
    let (imported, errors) = read_and_build(inputs, opts)?;
    match errors.into_iter().next() {
        None => Ok(imported),
        Some(e) => Err(e),
    }
}

/// The deployment as far as it can be built, and the errors the build went
/// on after (a setting pd-dsl cannot state); `Err` when nothing could be
/// built.
fn read_and_build(
    inputs: &[Input],
    opts: &Options,
) -> Result<(Imported, Vec<ImportError>), ImportError> {
    let Some(first) = inputs.first() else {
        return Err(ImportError {
            file: "<input>".into(),
            line: 0,
            column: 0,
            message: "found no input files, expected an e2e config or a set of scripts".into(),
        });
    };
    let map = SourceMap::new(inputs);
    let fail = |(at, message): (Loc, String)| ImportError {
        file: map.file(at.file).to_owned(),
        line: at.line,
        column: at.column,
        message,
    };
    let deployment = if is_yaml(first) {
        if inputs.len() > 1 {
            return Err(fail((
                Loc {
                    file: 1,
                    line: 0,
                    column: 0,
                },
                "found a second input after an e2e config, expected one config per import: each config is one deployment".into(),
            )));
        }
        if let Some(at) = lone_carriage_return(0, &first.text) {
            return Err(fail((at, crate::load::LONE_CR.into())));
        }
        upstream::read(0, &first.text).map_err(fail)?
    } else {
        scripts::read(inputs).map_err(fail)?
    };
    let (imported, errors) =
        build::build(deployment, map, inputs, opts).map_err(|(map, at, message)| ImportError {
            file: map.file(at.file).to_owned(),
            line: at.line,
            column: at.column,
            message,
        })?;
    let errors = errors
        .into_iter()
        .map(|(at, message)| ImportError {
            file: imported.map.file(at.file).to_owned(),
            line: at.line,
            column: at.column,
            message,
        })
        .collect();
    Ok((imported, errors))
}

/// The loader's check ([`crate::load`]), as a position in input `file`.
fn lone_carriage_return(file: usize, text: &str) -> Option<Loc> {
    crate::load::lone_carriage_return(text).map(|p| Loc {
        file,
        line: p.line,
        column: p.column,
    })
}

fn is_yaml(i: &Input) -> bool {
    let n = i.name.to_ascii_lowercase();
    n.ends_with(".yaml") || n.ends_with(".yml")
}

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

/// The spec to print: every convention the input breaks acknowledged with
/// `allow(rule, "imported from FILE:LINE")`, every note a `deviate(...)`.
/// Fails with the findings when a hard rule is broken (the deployment
/// cannot start as written; no `allow` can excuse it).
pub fn finish(imported: &Imported) -> Result<LayoutSpec, Vec<Finding>> {
    let mut spec = imported.spec.clone();
    let map = &imported.map;
    if let Err(diags) = check(&spec) {
        let hard: Vec<Finding> = findings(imported)
            .into_iter()
            .filter(|f| f.level == Level::Error)
            .collect();
        if !hard.is_empty() {
            return Err(hard);
        }
        // One allow per rule, naming every place it is broken.
        let mut by_rule: Vec<(crate::Rule, Vec<String>)> = Vec::new();
        for d in diags.iter() {
            let place = map
                .loc(d.site)
                .map_or_else(|| map.file(0).to_owned(), |l| map.show_line(l));
            match by_rule.iter_mut().find(|(r, _)| *r == d.rule) {
                Some((_, places)) => {
                    if !places.contains(&place) {
                        places.push(place);
                    }
                }
                None => by_rule.push((d.rule, vec![place])),
            }
        }
        for (rule, places) in by_rule {
            spec.allow.push(AllowSpec {
                rule: Spanned::bare(rule.name().to_owned()),
                reason: Spanned::bare(format!("imported from {}", places.join(", "))),
            });
        }
    }
    for n in &imported.notes {
        spec.deviations.push(DeviationSpec {
            what: Spanned::bare(format!("{} ({})", n.what, map.show_line(n.at))),
            why: Spanned::bare(n.why.clone()),
        });
    }
    match check(&spec) {
        Ok(_) => Ok(spec),
        Err(diags) => Err(diags
            .iter()
            .map(|d| Finding {
                file: map.file(0).to_owned(),
                line: 0,
                column: 0,
                level: Level::Error,
                rule: Some(d.rule.name().to_owned()),
                message: d.message.clone(),
            })
            .collect()),
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
        "{file}: serves ~{:.0} output tokens/s ({:.1} per NPU, TTFT {:.2} s, TPOT {:.1} ms, bound by {}; within about {:.0}%) at its workload",
        e.output_tokens_per_s,
        e.output_tokens_per_s_per_npu,
        e.ttft_s,
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
