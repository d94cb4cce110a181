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
mod report;
mod scripts;
pub mod shell;
mod upstream;

pub use build::PROXY_ENV;
pub use report::{
    FileReport, Finding, Level, estimate_line, estimate_unit, findings, is_layout_document, lint,
    lint_layout_file, lint_unit,
};

use crate::{AllowSpec, DeviationSpec, Spanned};
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
