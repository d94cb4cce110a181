//! What the oracle tests share: the corpus of released sources and running
//! an upstream oracle script on JSON cases.

#![allow(clippy::expect_used, clippy::panic, dead_code)]

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The unpacked sdist of `package` `version` (`scripts/upstream/corpus.py
/// path`); a missing corpus fails the test, naming how to fetch it.
pub fn corpus(package: &str, version: &str) -> PathBuf {
    let out = Command::new("python3")
        .arg(root().join("scripts/upstream/corpus.py"))
        .args(["path", &format!("{package}=={version}")])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "the {package} {version} corpus is missing (run `python3 scripts/upstream/corpus.py fetch`): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// Runs `scripts/upstream/<script> ARGS` with `cases` on stdin and returns
/// its JSON list; panics with its stderr when it fails.
pub fn oracle(script: &str, args: &[&Path], cases: &Value) -> Vec<Value> {
    let mut child = Command::new("python3")
        .arg(root().join("scripts/upstream").join(script))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(cases.to_string().as_bytes())
        .expect("write cases");
    let out = child.wait_with_output().expect("oracle ends");
    assert!(
        out.status.success(),
        "{script} failed on {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("oracle JSON")
}
