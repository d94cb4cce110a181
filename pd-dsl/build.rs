//! Embeds the compile-fail cases (`tests/ui/fail/*.rs` and the error each
//! must print, `*.stderr`) and their fixes (`tests/ui/fixed/*.rs`), so the
//! rules reference (`RULES.md`, `rules.html`) and `catalog explain RULE`
//! show a layout that breaks the rule, the compiler's message for it and
//! the fix: the same files the `ui` and `fixed` tests compile, not copies.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The `*.rs` files of `dir` as (file stem, path), sorted, each watched.
fn cases(dir: &Path) -> Vec<(String, PathBuf)> {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut found = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let path = e.path();
            if path.extension().is_some_and(|x| x == "rs") {
                let name = path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                println!("cargo:rerun-if-changed={}", path.display());
                found.push((name, path));
            }
        }
    }
    found.sort();
    found
}

fn main() -> std::process::ExitCode {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let ui = root.join("../tests/ui");
    let mut out = String::from(
        "/// Every compile-fail case: (file stem, layout source, expected compiler output).\npub const UI_CASES: &[(&str, &str, &str)] = &[\n",
    );
    for (name, rs) in cases(&ui.join("fail")) {
        let stderr = rs.with_extension("stderr");
        if stderr.is_file() {
            println!("cargo:rerun-if-changed={}", stderr.display());
            let _ = writeln!(
                out,
                "    ({name:?}, include_str!({:?}), include_str!({:?})),",
                rs.display().to_string(),
                stderr.display().to_string()
            );
        }
    }
    out.push_str("];\n");
    out.push_str(
        "/// Every fixed case: (file stem, layout source).\npub const UI_FIXES: &[(&str, &str)] = &[\n",
    );
    for (name, rs) in cases(&ui.join("fixed")) {
        let _ = writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            rs.display().to_string()
        );
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("ui_cases.rs");
    if let Err(e) = std::fs::write(&dest, out) {
        eprintln!("cannot write {}: {e}", dest.display());
        return std::process::ExitCode::FAILURE;
    }
    std::process::ExitCode::SUCCESS
}
