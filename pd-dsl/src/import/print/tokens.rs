//! The tree written out as tokens: blocks, lists and calls, strings as
//! Rust literals, JSON as DSL tokens.

use super::V;
use crate::spec::Json;

/// A Rust string literal (Debug escaping is valid Rust).
pub(super) fn quoted(s: &str) -> String {
    format!("{s:?}")
}

pub(super) fn write(out: &mut String, v: &V, depth: usize) {
    match v {
        V::Str(s) => out.push_str(&quoted(s)),
        V::Int(n) => out.push_str(&n.to_string()),
        V::Word(w) => out.push_str(w),
        V::Json(j) => json(out, j),
        V::List(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write(out, x, depth);
            }
            out.push(']');
        }
        V::Block(entries, multiline) => block(out, entries, *multiline, depth),
        V::Call(name, args) => {
            out.push_str(name);
            out.push('(');
            for (i, x) in args.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write(out, x, depth);
            }
            out.push(')');
        }
        V::Kinded(kind, entries) => {
            out.push_str(kind);
            out.push(' ');
            block(out, entries, false, depth);
        }
        V::Assign(name, value) => {
            out.push_str(&quoted(name));
            out.push_str(" = ");
            write(out, value, depth);
        }
    }
}

fn block(out: &mut String, entries: &[(String, V)], multiline: bool, depth: usize) {
    if entries.is_empty() {
        out.push_str("{}");
        return;
    }
    if !multiline {
        out.push_str("{ ");
        for (i, (k, v)) in entries.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(k);
            out.push_str(": ");
            write(out, v, depth);
        }
        out.push_str(" }");
        return;
    }
    out.push_str("{\n");
    for (k, v) in entries {
        out.push_str(&"    ".repeat(depth + 1));
        out.push_str(k);
        out.push_str(": ");
        write(out, v, depth + 1);
        out.push_str(",\n");
    }
    out.push_str(&"    ".repeat(depth));
    out.push('}');
}

/// JSON as DSL tokens: `{ "k": v }`, `[..]`, Rust string literals, numbers,
/// `true`/`false`/`null`.
fn json(out: &mut String, j: &Json) {
    match j {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(n) => out.push_str(&n.to_string()),
        Json::String(s) => out.push_str(&quoted(s)),
        Json::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                json(out, x);
            }
            out.push(']');
        }
        Json::Object(o) => {
            if o.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push_str("{ ");
            for (i, (k, x)) in o.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&quoted(k));
                out.push_str(": ");
                json(out, x);
            }
            out.push_str(" }");
        }
    }
}
