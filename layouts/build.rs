//! Embeds the compile-fail cases (`tests/ui/fail/*.rs` and the error each
//! must print, `*.stderr`) so `catalog explain RULE` shows a layout that
//! breaks the rule and the compiler's message for it: the same files the
//! `ui` test compiles, not copies.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() -> std::process::ExitCode {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let dir = root.join("../tests/ui/fail");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut cases: Vec<(String, PathBuf, PathBuf)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let path = e.path();
            if path.extension().is_some_and(|x| x == "rs") {
                let stderr = path.with_extension("stderr");
                if stderr.is_file() {
                    let name = path
                        .file_stem()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    println!("cargo:rerun-if-changed={}", path.display());
                    println!("cargo:rerun-if-changed={}", stderr.display());
                    cases.push((name, path, stderr));
                }
            }
        }
    }
    cases.sort();
    let mut out = String::from(
        "/// Every compile-fail case: (file stem, layout source, expected compiler output).\npub const UI_CASES: &[(&str, &str, &str)] = &[\n",
    );
    for (name, rs, stderr) in &cases {
        let _ = writeln!(
            out,
            "    ({name:?}, include_str!({:?}), include_str!({:?})),",
            rs.display().to_string(),
            stderr.display().to_string()
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
