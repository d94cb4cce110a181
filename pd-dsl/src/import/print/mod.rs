//! A typed printer of [`LayoutSpec`] as `layout!` source. The spec is first
//! turned into a small tree of DSL values ([`V`]); only the tree is written
//! out, and strings are written with Rust's own escaping, so any text
//! (quotes, backslashes, control characters) prints as a valid literal.

mod tokens;
mod tree;

use crate::spec::{Json, LayoutSpec};
use tokens::write;
use tree::fields;

/// One DSL value.
#[derive(Clone, Debug, PartialEq)]
pub enum V {
    /// A string literal.
    Str(String),
    /// An integer.
    Int(u64),
    /// An identifier or a number kept as written (`a3`, `0.92`, `true`).
    Word(String),
    /// A JSON value written as DSL tokens.
    Json(Json),
    /// `[a, b]`.
    List(Vec<V>),
    /// `{ key: value, ... }`; `multiline` puts one entry per line.
    Block(Vec<(String, V)>, bool),
    /// `name(args)`.
    Call(String, Vec<V>),
    /// `kind { ... }`.
    Kinded(String, Vec<(String, V)>),
    /// `"--flag" = value`.
    Assign(String, Box<V>),
}

/// The `layout! { ... }` source of a spec.
pub fn layout_source(spec: &LayoutSpec) -> String {
    let mut out = String::from("layout! {\n");
    for line in &spec.summary {
        out.push_str("    ///");
        if !line.is_empty() {
            out.push(' ');
            out.push_str(&line.replace(['\n', '\r'], " "));
        }
        out.push('\n');
    }
    for (key, v) in fields(spec) {
        out.push_str("    ");
        if !key.is_empty() {
            out.push_str(&key);
            out.push_str(": ");
        }
        write(&mut out, &v, 1);
        out.push_str(",\n");
    }
    out.push_str("}\n");
    out
}

/// A whole Rust file: a function returning the layout.
pub fn layout_file(spec: &LayoutSpec) -> String {
    let body = layout_source(spec);
    let mut out = String::from(
        "// Written by `catalog import`; every value the input set is kept, every rule it\n// breaks is acknowledged below, and what no rule covers is a `deviate`.\n\nuse pd_dsl::{LayoutSpec, layout};\n\n/// The imported layout.\npub fn imported() -> LayoutSpec {\n",
    );
    for line in body.lines() {
        out.push_str("    ");
        out.push_str(line);
        out.push('\n');
    }
    out.push_str("}\n");
    out
}
