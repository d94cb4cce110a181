//! Embeds the generated vLLM fact tables (`upstream/facts/vllm/*.json`,
//! written by `scripts/upstream/facts.py`) into the crate, so that the rules,
//! the `catalog` binary and the stand-in `vllm` need no repository at run
//! time. Every file of the directory is listed; `crate::upstream` parses them
//! once. (The vllm-ascend tables are embedded by their `IMAGES` rows.)
//!
//! It also writes the one rule table from the rules' declarations: each
//! concern module under `src/rules/` declares its rules in a
//! `declare_rules! { .. }` block next to its checks, and the table lists the
//! blocks, in the order `src/rules/mod.rs` declares the modules, as
//! `rules! { concern { .. } .. }` (rustfmt leaves macro bodies as written,
//! so a block is its lines up to the first line that is only `}`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn files(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let path = e.path();
            if path.extension().and_then(|x| x.to_str()) != Some("json") {
                continue;
            }
            if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
                out.push((stem.to_owned(), path.clone()));
            }
        }
    }
    out.sort();
    out
}

/// The `rules! { .. }` invocation from the concern modules' declarations.
fn rule_table(rules_dir: &Path) -> Result<String, String> {
    let mod_rs = rules_dir.join("mod.rs");
    println!("cargo:rerun-if-changed={}", rules_dir.display());
    let text = std::fs::read_to_string(&mod_rs)
        .map_err(|e| format!("cannot read {}: {e}", mod_rs.display()))?;
    let concerns: Vec<&str> = text
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l
                .strip_prefix("pub(crate) mod ")
                .or_else(|| l.strip_prefix("pub mod "))
                .or_else(|| l.strip_prefix("mod "))?;
            l.strip_suffix(';')
        })
        .collect();
    let mut table = String::from("rules! {\n");
    for concern in concerns {
        let path = rules_dir.join(format!("{concern}.rs"));
        println!("cargo:rerun-if-changed={}", path.display());
        let src = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let mut lines = src.lines().skip_while(|l| *l != "declare_rules! {");
        if lines.next().is_none() {
            return Err(format!(
                "{} declares no rules: a concern module starts its rules with a line `declare_rules! {{`",
                path.display()
            ));
        }
        let mut block = String::new();
        let mut closed = false;
        for line in lines {
            if line == "}" {
                closed = true;
                break;
            }
            block.push_str(line);
            block.push('\n');
        }
        if !closed {
            return Err(format!(
                "{}: `declare_rules! {{` is not closed by a line that is only `}}`",
                path.display()
            ));
        }
        let _ = write!(table, "{concern} {{\n{block}}}\n");
    }
    table.push_str("}\n");
    Ok(table)
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let facts = manifest.join("..").join("upstream").join("facts");
    let mut code = String::new();
    for (name, sub) in [("VLLM", "vllm")] {
        let dir = facts.join(sub);
        // A directory path makes cargo rerun when any file in it changes,
        // is added or is removed.
        println!("cargo:rerun-if-changed={}", dir.display());
        let _ = writeln!(
            code,
            "/// `(file stem, text)` of every `upstream/facts/{sub}/*.json`.\npub static {name}: &[(&str, &str)] = &["
        );
        for (stem, path) in files(&dir) {
            let _ = writeln!(
                code,
                "    ({stem:?}, include_str!({:?})),",
                path.display().to_string()
            );
        }
        let _ = writeln!(code, "];");
    }
    println!("cargo:rerun-if-changed={}", facts.display());
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    let out = out_dir.join("facts_files.rs");
    if let Err(e) = std::fs::write(&out, code) {
        eprintln!("cannot write {}: {e}", out.display());
        std::process::exit(1);
    }
    let written = rule_table(&manifest.join("src").join("rules")).and_then(|table| {
        let out = out_dir.join("rules.rs");
        std::fs::write(&out, table).map_err(|e| format!("cannot write {}: {e}", out.display()))
    });
    if let Err(e) = written {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
