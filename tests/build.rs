//! Lists the fixed cases (`ui/fixed/<rule>.rs`) for `tests/fixed.rs`, which
//! compiles them all into one test binary: each becomes a module by
//! `#[path]`, so the macro runs on the file itself and an error points into
//! it. (As trybuild pass cases they would link one binary per rule.)

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let dir = root.join("ui/fixed");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut cases: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .filter_map(|p| {
            let stem = p.file_stem()?.to_str()?.to_owned();
            // A module name: the rule names are snake_case identifiers.
            stem.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                .then_some((stem, p))
        })
        .collect();
    cases.sort();
    let mut out = String::new();
    for (name, path) in &cases {
        println!("cargo:rerun-if-changed={}", path.display());
        let _ = writeln!(
            out,
            "#[path = {:?}]\n#[allow(dead_code)]\nmod {name};",
            path.display().to_string()
        );
    }
    out.push_str("/// Every fixed case compiled above, by rule.\nconst FIXED: &[&str] = &[\n");
    for (name, _) in &cases {
        let _ = writeln!(out, "    {name:?},");
    }
    out.push_str("];\n");
    let dest =
        PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("fixed_cases.rs");
    if let Err(e) = std::fs::write(&dest, out) {
        println!("cargo:warning=cannot write {}: {e}", dest.display());
        std::process::exit(1);
    }
}
