//! Property tests: hostile text in every user-supplied string field of a
//! layout either is rejected by a rule at check time, or renders to scripts
//! that still parse (`bash -n`) and that, when their value-handling parts
//! run (role templates and `run_mixed.sh` against a stub `vllm`, `run.sh` and
//! `proxy.sh` with `PD_DRY_RUN=1`, `verify.sh` against a stub `curl`,
//! `bench.sh` against the stub `vllm`), pass every value through exactly as
//! written and never execute any of it (a marker file is never created).
//!
//! Case counts stay moderate for CI (`PROPTEST_CASES` overrides them).

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod free_text;
mod markup;
mod plain;

use pd_dsl::LayoutSpec;
use proptest::prelude::*;
use proptest::test_runner::Config;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

const PD: &str = include_str!("../fixtures/v4_flash_a3_1p1d.json");
const MIXED: &str = include_str!("../fixtures/v3_1_a2_mixed_2node.json");

fn spec(json: &str) -> LayoutSpec {
    serde_json::from_str(json).expect("fixture parses")
}

/// A scratch directory for the whole test binary: stubs, marker, outputs.
struct Scratch {
    _dir: tempfile::TempDir,
    root: PathBuf,
    bin: PathBuf,
    marker: PathBuf,
}

static SCRATCH: LazyLock<Scratch> = LazyLock::new(|| {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().to_path_buf();
    let bin = root.join("bin");
    std::fs::create_dir(&bin).expect("mkdir");
    // Stubs record their argv NUL-separated, plus the env var the layout sets.
    let vllm = "#!/usr/bin/env bash\n\
        printf '%s\\0' \"$@\" >\"$PD_TEST_OUT/argv.$(basename \"$0\").$$\"\n\
        printf '%s' \"${PD_HOSTILE-}\" >\"$PD_TEST_OUT/env.$$\"\n";
    let curl = "#!/usr/bin/env bash\n\
        printf '%s\\0' \"$@\" >\"$PD_TEST_OUT/argv.curl.$$\"\n\
        out=\nwhile (($#)); do if [[ $1 == -o ]]; then out=$2; fi; shift; done\n\
        printf '{\"choices\": [1]}' >\"$out\"\nprintf 200\n";
    for (name, text) in [("vllm", vllm), ("curl", curl)] {
        let p = bin.join(name);
        std::fs::write(&p, text).expect("stub");
        set_exec(&p);
    }
    let marker = root.join("PWNED");
    Scratch {
        _dir: dir,
        root,
        bin,
        marker,
    }
});

#[cfg(unix)]
fn set_exec(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// Pieces of hostile text; `MARK` becomes the marker path.
const PIECES: &[&str] = &[
    "'",
    "\"",
    "\\",
    "$(touch MARK)",
    "`touch MARK`",
    "; touch MARK",
    "' ; touch MARK ; '",
    "\" ; touch MARK ; \"",
    "$(touch MARK)'\"",
    "&& touch MARK",
    "| touch MARK",
    "${IFS}touch${IFS}MARK",
    "$((1+1))",
    "${HOME}",
    "$1",
    "$@",
    "!!",
    "*",
    "?",
    "~",
    "#",
    "%s%n",
    "--",
    "-n",
    " ",
    "\t",
    "模型",
    "🚀",
    "é",
    "@KV_PORT@",
    "@ENGINE_ID@",
    "{\"a\": [1]}",
    "\\'",
    "=",
    ",",
];

fn hostile() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => proptest::sample::select(PIECES).prop_map(str::to_owned),
        1 => any::<char>()
            .prop_filter("no control characters", |c| !c.is_control())
            .prop_map(String::from),
    ];
    proptest::collection::vec(piece, 0..6).prop_map(|v| {
        v.concat()
            .replace("MARK", &SCRATCH.marker.display().to_string())
    })
}

/// Text with one control character somewhere (never allowed in text).
fn with_control() -> impl Strategy<Value = String> {
    (
        hostile(),
        proptest::sample::select(&['\n', '\r', '\0', '\u{1b}', '\u{7f}', '\u{85}'][..]),
        hostile(),
    )
        .prop_map(|(a, c, b)| format!("{a}{c}{b}"))
}

fn config(cases: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

fn rules_of(spec: &LayoutSpec) -> Result<(), BTreeSet<&'static str>> {
    pd_dsl::check(spec)
        .map(drop)
        .map_err(|d| d.iter().map(|d| d.rule.name()).collect())
}
