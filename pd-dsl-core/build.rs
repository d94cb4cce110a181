//! Embeds the generated vLLM fact tables (`upstream/facts/vllm/*.json`,
//! written by `scripts/upstream/facts.py`) into the crate, so that the rules,
//! the `catalog` binary and the stand-in `vllm` need no repository at run
//! time. Every file of the directory is listed; `crate::upstream` parses them
//! once. (The vllm-ascend tables are embedded by their `IMAGES` rows.)

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
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("facts_files.rs");
    if let Err(e) = std::fs::write(&out, code) {
        eprintln!("cannot write {}: {e}", out.display());
        std::process::exit(1);
    }
}
