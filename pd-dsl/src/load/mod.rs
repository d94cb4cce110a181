//! Layouts kept in files: YAML or JSON, validated by the same rules as
//! `layout!`, with errors pointing at `file:line:column`.
//!
//! The document is read twice: once into a [`LayoutSpec`] (serde), once into
//! a small position tree (every mapping key, mapping value and sequence item
//! with its line and column). Every [`Spanned`] value of the spec then gets a
//! [`Site`] whose position is recorded in a table, so a rule's diagnostic maps
//! back to the exact value it is about — the same mechanism the macro uses
//! with token spans. JSON positions come from the same YAML reader (JSON is
//! YAML's flow style); where the two readers disagree on a document, its
//! diagnostics fall back to the field path.
//!
//! ```
//! let text = r#"{ "name": "x" }"#;
//! let err = pd_dsl::load::from_json("l.json", text).unwrap_err();
//! assert!(err.to_string().starts_with("l.json:1:"), "{err}");
//! ```
//!
//! [`Spanned`]: crate::Spanned
//! [`Site`]: crate::Site

mod sites;
mod tree;

use crate::{Diagnostics, Layout, LayoutSpec, check};
use sites::{Sites, by_field};
use std::fmt;
use tree::position_tree;

/// A 1-based line and column in a layout file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    /// Line, from 1.
    pub line: u64,
    /// Column (in characters), from 1.
    pub column: u64,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// Why a layout file could not be used.
#[derive(Debug)]
pub enum LoadError {
    /// The text is not a well-formed layout document.
    Parse {
        /// File name (or `<input>`).
        file: String,
        /// Where the parser stopped, when it says.
        position: Option<Position>,
        /// What the parser said.
        message: String,
    },
    /// The layout parsed but breaks rules.
    Rules {
        /// File name (or `<input>`).
        file: String,
        /// Every violation.
        diagnostics: Diagnostics,
        /// Where each violation points, in the order of `diagnostics`.
        positions: Vec<Option<Position>>,
    },
}

impl LoadError {
    /// Every error as `file:line:col: message`, one per line item.
    pub fn lines(&self) -> Vec<String> {
        match self {
            LoadError::Parse {
                file,
                position,
                message,
            } => vec![match position {
                Some(p) => format!("{file}:{p}: {message}"),
                None => format!("{file}: {message}"),
            }],
            LoadError::Rules {
                file,
                diagnostics,
                positions,
            } => diagnostics
                .iter()
                .enumerate()
                .map(|(i, d)| match positions.get(i).copied().flatten() {
                    Some(p) => format!("{file}:{p}: {d}"),
                    None => format!("{file}: {}: {d}", d.field),
                })
                .collect(),
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.lines().join("\n"))
    }
}

impl std::error::Error for LoadError {}

/// Parses a YAML layout document (JSON is YAML too) without checking rules.
/// Values carry no sites; [`from_yaml`] adds them. A carriage return without
/// a line feed is refused where it is ([`lone_carriage_return`]).
pub fn parse_yaml(file: &str, text: &str) -> Result<LayoutSpec, LoadError> {
    if let Some(position) = lone_carriage_return(text) {
        return Err(LoadError::Parse {
            file: file.to_owned(),
            position: Some(position),
            message: LONE_CR.to_owned(),
        });
    }
    serde_saphyr::from_str(text).map_err(|e| {
        let position = e.location().and_then(position_of);
        LoadError::Parse {
            file: file.to_owned(),
            position,
            message: first_line(&e.to_string()),
        }
    })
}

/// Parses a JSON layout document without checking rules.
pub fn parse_json(file: &str, text: &str) -> Result<LayoutSpec, LoadError> {
    serde_json::from_str(text).map_err(|e| {
        let position = (e.line() > 0).then(|| Position {
            line: e.line() as u64,
            column: e.column() as u64,
        });
        LoadError::Parse {
            file: file.to_owned(),
            position,
            message: strip_json_position(&e.to_string()),
        }
    })
}

/// Parses and checks a YAML (or JSON) layout document.
pub fn from_yaml(file: &str, text: &str) -> Result<Layout, LoadError> {
    checked(file, text, parse_yaml(file, text)?)
}

/// Parses and checks a JSON layout document.
pub fn from_json(file: &str, text: &str) -> Result<Layout, LoadError> {
    checked(file, text, parse_json(file, text)?)
}

fn checked(file: &str, text: &str, mut spec: LayoutSpec) -> Result<Layout, LoadError> {
    // The position tree is read as YAML, which counts a lone `\r` as a line
    // break. A YAML document with one was refused above; in JSON it is
    // whitespace (serde_json counts lines on `\n`), so it reads as a space:
    // same meaning, same columns.
    let blanked;
    let text = if lone_carriage_return(text).is_some() {
        blanked = blank_lone_carriage_returns(text);
        blanked.as_str()
    } else {
        text
    };
    let tree = position_tree(text);
    let mut table = Sites::default();
    if let Some(root) = &tree {
        table.layout(&mut spec, root);
    }
    check(&spec).map_err(|diagnostics| {
        let positions = diagnostics
            .iter()
            .map(|d| table.position(d).or_else(|| by_field(tree.as_ref(), d)))
            .collect();
        LoadError::Rules {
            file: file.to_owned(),
            diagnostics,
            positions,
        }
    })
}

/// Why a lone `\r` is refused (the loader's and the importer's message).
pub(crate) const LONE_CR: &str = "found a carriage return (`\\r`) without a line feed, expected `\\n` or `\\r\\n` line ends: YAML reads a lone `\\r` as a line break where editors and shells do not, so every position after it would be wrong";

/// The first carriage return not followed by a line feed, if any. YAML 1.2
/// counts one as a line break (spec §5.4, production `b-break`), editors,
/// `grep -n` and every position here count lines on `\n`: after it, every
/// reported position would be on the wrong line. `\r\n` is one line end.
pub(crate) fn lone_carriage_return(text: &str) -> Option<Position> {
    let mut lines = text.split('\n').peekable();
    let mut line = 0;
    while let Some(l) = lines.next() {
        line += 1;
        let body = match lines.peek() {
            Some(_) => l.strip_suffix('\r').unwrap_or(l),
            None => l,
        };
        if let Some(k) = body.find('\r') {
            return Some(Position {
                line,
                column: body[..k].chars().count() as u64 + 1,
            });
        }
    }
    None
}

/// `text` with every lone `\r` (see [`lone_carriage_return`]) replaced by a
/// space, `\r\n` kept.
fn blank_lone_carriage_returns(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() != Some(&'\n') {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

fn position_of(l: serde_saphyr::Location) -> Option<Position> {
    (l.line() > 0).then(|| Position {
        line: l.line(),
        column: l.column(),
    })
}

/// saphyr renders a source snippet after the message; the message is the
/// first line, minus any position it repeats. The importer reads YAML
/// errors through it too.
pub(crate) fn first_line(s: &str) -> String {
    let line = s
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or(s);
    let line = line.trim_start_matches("error: ");
    match line.split_once(": ") {
        Some((at, rest)) if at.starts_with("line ") && at.contains(" column ") => rest.to_owned(),
        _ => line.to_owned(),
    }
}

/// serde_json appends " at line L column C", which the prefix already says.
fn strip_json_position(s: &str) -> String {
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_owned(),
        None => s.to_owned(),
    }
}
