//! `catalog write`, `check` and `render`, and the exit codes of a failed
//! write and of an invalid catalog.

use crate::{P2P1D, run, run_with};

#[test]
fn write_check_and_render() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("catalog");
    let d = dir.to_str().expect("utf8 path");
    // Missing catalog: --check fails naming files.
    let (code, _, err) = run(&["--check", "--out", d]);
    assert_eq!(code, 1);
    assert!(err.contains("index.json (missing)"), "{err}");
    // Write, then it is fresh.
    let (code, out, _) = run(&["--out", d]);
    assert_eq!(code, 0);
    assert!(
        out.contains("3 layouts") && out.contains("8 nodes"),
        "{out}"
    );
    let (code, out, _) = run(&["--check", "--out", d]);
    assert_eq!(code, 0, "{out}");
    // Stale and extra files are named.
    let readme = dir.join(P2P1D).join("README.md");
    std::fs::write(&readme, "edited\n").expect("write");
    std::fs::write(dir.join("extra.txt"), "x\n").expect("write");
    let (code, _, err) = run(&["--check", "--out", d]);
    assert_eq!(code, 1);
    assert!(
        err.contains("README.md (differs)") && err.contains("extra.txt (extra)"),
        "{err}"
    );
    // `render NAME` rewrites one layout directory.
    let (code, out, _) = run(&["render", P2P1D, "--out", d]);
    assert_eq!(code, 0, "{out}");
    assert_ne!(std::fs::read_to_string(&readme).expect("read"), "edited\n");
    assert!(dir.join(P2P1D).join("run.sh").is_file());
}

#[test]
fn write_failure_and_invalid_catalog_have_their_exit_codes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("file");
    std::fs::write(&file, "x").expect("write");
    let bad = file.join("catalog");
    let (code, _, err) = run(&["--out", bad.to_str().expect("utf8")]);
    assert_eq!(code, 4, "{err}");
    let (code, _, err) = run_with(&["list"], Err("layout `x`: broken".into()));
    assert_eq!(code, 3);
    assert!(err.contains("broken"));
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("Exit codes"));
}
