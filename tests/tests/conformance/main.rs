//! Conformance to the two seed documents, asserted from the generated
//! artifacts (run.sh in `PD_DRY_RUN=1`, the launcher's `--dry-run`, the role
//! templates and `run_mixed.sh` executed with a recording `vllm` stub) against
//! values written from the seed text — never from our own output.
//!
//! Seed 001 commands are pasted verbatim below (IP placeholders such as
//! `192.xx.xx.1` included: run.sh is given those placeholders as node
//! addresses, so the strings must come out identical).

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod a3_pd;
mod a5_pd;
mod mixed;
mod v4_flash;

use pd_dsl_tests::harness::{DryRun, Served, flags, one, shell_split};
use serde_json::Value;
use std::collections::BTreeMap;

/// Parses a seed `vllm serve` command (backslash continuations, `$N`
/// placeholders substituted from `args`), returning its flags.
fn seed_serve(text: &str, args: &[String]) -> (String, BTreeMap<String, Vec<String>>) {
    let mut t = text.to_owned();
    for (i, a) in args.iter().enumerate().rev() {
        t = t.replace(&format!("${}", i + 1), a);
    }
    let argv = shell_split(&t);
    assert_eq!(
        &argv[..2],
        ["vllm", "serve"],
        "seed text is a vllm serve command"
    );
    (argv[2].clone(), flags(&argv[3..]))
}

/// Compares our `vllm serve` argv to the seed's, flag by flag; JSON values
/// compare as JSON. `ignore` lists flags the seed sets that we deliberately
/// derive differently (asserted separately by the caller).
fn assert_same_serve(
    ours: &Served,
    seed: &(String, BTreeMap<String, Vec<String>>),
    ignore: &[&str],
) {
    assert_eq!(ours.argv[0], "serve");
    assert_eq!(ours.argv[1], seed.0, "model path");
    let mine = flags(&ours.argv[2..]);
    for (flag, want) in &seed.1 {
        if ignore.contains(&flag.as_str()) {
            continue;
        }
        let got = mine
            .get(flag)
            .unwrap_or_else(|| panic!("seed flag {flag} {want:?} missing from ours: {mine:?}"));
        match (want.as_slice(), got.as_slice()) {
            ([w], [g]) if w.trim_start().starts_with('{') => {
                let w: Value =
                    serde_json::from_str(w).unwrap_or_else(|e| panic!("seed {flag} JSON: {e}"));
                let g: Value =
                    serde_json::from_str(g).unwrap_or_else(|e| panic!("our {flag} JSON: {e}"));
                assert_eq!(g, w, "{flag}");
            }
            _ => assert_eq!(got, want, "{flag}"),
        }
    }
    for flag in mine.keys() {
        assert!(
            seed.1.contains_key(flag) || ignore.contains(&flag.as_str()),
            "we pass {flag} which the seed does not"
        );
    }
}

/// `export NAME=VALUE` lines of a seed script: what our env must contain.
fn assert_seed_env(ours: &Served, seed_exports: &str, args: &[String]) {
    for line in seed_exports
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("export "))
    {
        let (name, value) = line["export ".len()..].split_once('=').expect("NAME=VALUE");
        let value = value.trim_matches('"');
        let got = ours
            .env
            .get(name)
            .unwrap_or_else(|| panic!("seed exports {name}, ours does not"));
        match value {
            // Socket settings come from run.sh (route to the DP master).
            "$local_ip" | "$nic_name" => {}
            "$1" => assert_eq!(got, &args[0], "{name}"),
            v if v.ends_with(&format!(":${name}")) => {
                let prefix = v.trim_end_matches(&format!(":${name}"));
                assert!(
                    got.starts_with(prefix),
                    "{name}={got} should start with {prefix}"
                );
            }
            v => assert_eq!(got, v, "{name}"),
        }
    }
}

fn kv_config(s: &Served) -> Value {
    let f = flags(&s.argv[2..]);
    serde_json::from_str(&one(&f, "--kv-transfer-config")).expect("kv json")
}

fn seed_launcher_lines(text: &str) -> Vec<BTreeMap<String, Vec<String>>> {
    text.lines()
        .map(str::trim)
        .filter(|l| l.starts_with("python launch_online_dp.py"))
        .map(|l| flags(&shell_split(l)[2..]))
        .collect()
}

/// Our launcher argv without the two flags upstream's launcher lacks.
fn launcher_flags(d: &DryRun) -> BTreeMap<String, Vec<String>> {
    let mut f = flags(&d.node_command[2..]);
    assert!(f.remove("--template").is_some() && f.remove("--log-dir").is_some());
    f
}
