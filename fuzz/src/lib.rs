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
#[path = "../../pd-dsl-macros/src/lower.rs"]
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
