//! What the fuzz targets call.
//!
//! A proc-macro crate can export only macros, so the `layout!` pipeline
//! (parse → lower → check → expand) cannot be called from outside it. This
//! library compiles **the macro crate's own source files** (not a copy) as
//! ordinary modules — the pattern `serde_derive_internals` uses — where
//! `proc_macro2` runs in its fallback mode, so `expand::layout` takes any
//! `proc_macro2::TokenStream` built from a string.

#![allow(dead_code, unreachable_pub)]

#[path = "../../pd-dsl-macros/src/expand.rs"]
pub mod expand;
#[path = "../../pd-dsl-macros/src/lower/mod.rs"]
mod lower;
#[path = "../../pd-dsl-macros/src/parse.rs"]
mod parse;

use proc_macro2::TokenStream;
use std::str::FromStr;

/// Inputs above this size are skipped: the macro's input is a layout of a
/// few hundred tokens, and deeper nesting only measures the stack.
pub const MAX_INPUT: usize = 8 * 1024;

/// Runs `layout! { <text> }` on `text`, if it lexes as Rust tokens. The
/// result is either the checked spec or `compile_error!`s plus a typed
/// fallback; anything else (a panic, an empty expansion) is a bug.
pub fn run_macro(text: &str) -> Option<TokenStream> {
    let tokens = TokenStream::from_str(text).ok()?;
    let out = expand::layout(tokens);
    let rendered = out.to_string();
    assert!(
        rendered.contains("compile_error") || rendered.contains("from_str"),
        "expansion is neither a spec nor an error: {rendered}"
    );
    Some(out)
}

/// Loads `text` as a YAML and as a JSON layout; a layout that passes the
/// rules is rendered. Every rejection must be a normal error value whose
/// message names the file.
pub fn run_loader(text: &str) {
    for result in [
        pd_dsl::load::from_yaml("fuzz.yaml", text),
        pd_dsl::load::from_json("fuzz.json", text),
    ] {
        match result {
            Ok(layout) => {
                // A checked layout always renders.
                if let Err(e) = pd_dsl::render::render_layout(&layout) {
                    panic!("checked layout does not render: {e}");
                }
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.starts_with("fuzz."), "error without the file: {msg}");
            }
        }
    }
}

/// Separates the files of a script set in an `import` input: the bytes
/// before the first separator are the first script, and so on (1-3 files).
pub const SCRIPT_SEPARATOR: char = '\0';

/// Feeds `text` to both importer front ends through the lint path: as one
/// e2e config (`fuzz.yaml`, through [`pd_dsl::import::lint_unit`], which
/// also routes layout documents to the loader) and as a set of up to three
/// shell scripts split on [`SCRIPT_SEPARATOR`]. Every finding must name one
/// of the inputs and lie inside it; an import that succeeds is finished and
/// printed.
pub fn run_import(text: &str) {
    use pd_dsl::import::{Input, Options, finish, findings, import, lint_unit, print};

    let yaml = [Input::new("fuzz.yaml", text)];
    let scripts: Vec<Input> = text
        .splitn(3, SCRIPT_SEPARATOR)
        .enumerate()
        .map(|(i, t)| Input::new(format!("fuzz-{i}.sh"), t))
        .collect();
    let opts = Options::default();
    for inputs in [&yaml[..], &scripts[..]] {
        let report = lint_unit(inputs, &opts);
        for f in &report.findings {
            assert_inside(inputs, f);
        }
        if let Ok(imported) = import(inputs, &opts) {
            for f in findings(&imported) {
                assert_inside(inputs, &f);
            }
            if let Ok(spec) = finish(&imported) {
                let src = print::layout_source(&spec);
                assert!(src.contains("layout!"), "printed source is no layout: {src}");
            }
        }
    }
}

/// A finding's position is `0:0` (the whole file) or a line of the file it
/// names and a column within that line, or just after its end.
fn assert_inside(inputs: &[pd_dsl::import::Input], f: &pd_dsl::import::Finding) {
    let Some(input) = inputs.iter().find(|i| i.name == f.file) else {
        panic!("finding names no input: {f}");
    };
    if f.line == 0 {
        assert_eq!(f.column, 0, "a column without a line: {f}");
        return;
    }
    // Lines as an editor counts them: split on `\n`; a final line without
    // a newline counts, and the empty line after a final newline too (end
    // of input).
    let lines: Vec<&str> = input.text.split('\n').collect();
    let Some(line) = usize::try_from(f.line - 1)
        .ok()
        .and_then(|i| lines.get(i))
    else {
        panic!(
            "line {} is past the end of `{}` ({} lines): {f}",
            f.line,
            f.file,
            lines.len()
        );
    };
    let width = line.trim_end_matches('\r').chars().count() as u64;
    assert!(
        (1..=width + 1).contains(&f.column),
        "column {} is outside line {} of `{}` ({width} characters): {f}",
        f.column,
        f.line,
        f.file
    );
}
