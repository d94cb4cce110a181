//! The `catalog` command line, driven in-process through `layouts::cli::run`
//! with sample layouts (the binary itself is a one-line `main`).

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use layouts::cli;
use pd_dsl::Layout;

const SAMPLES: [&str; 3] = [
    include_str!("../../pd-dsl/tests/fixtures/v3_1_a3_2p1d.json"),
    include_str!("../../pd-dsl/tests/fixtures/v4_flash_a3_1p1d.json"),
    include_str!("../../pd-dsl/tests/fixtures/v3_1_a2_mixed_2node.json"),
];

fn samples() -> Vec<Layout> {
    SAMPLES
        .iter()
        .map(|j| {
            let spec: pd_dsl::LayoutSpec = serde_json::from_str(j).expect("parses");
            pd_dsl::check(&spec).unwrap_or_else(|d| panic!("{d}"))
        })
        .collect()
}

fn run(args: &[&str]) -> (u8, String, String) {
    run_with(args, Ok(samples()))
}

fn run_with(args: &[&str], layouts: Result<Vec<Layout>, String>) -> (u8, String, String) {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let mut argv = vec!["catalog"];
    argv.extend_from_slice(args);
    let code = cli::run(argv, layouts, None, &mut out, &mut err);
    (
        code,
        String::from_utf8(out).expect("utf8"),
        String::from_utf8(err).expect("utf8"),
    )
}

const P2P1D: &str = "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d";

#[test]
fn list_table_and_json() {
    let (code, out, _) = run(&["list"]);
    assert_eq!(code, 0);
    assert!(
        out.contains(P2P1D) && out.contains("<prefill 2 x dp2tp8; decode 1 x dp32tp1;>"),
        "{out}"
    );
    let (code, out, _) = run(&["list", "--format", "json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let rows = v.as_array().expect("array");
    assert_eq!(rows.len(), 3);
    for key in [
        "name", "model", "hardware", "topology", "nodes", "npus", "image", "verified", "recorded",
    ] {
        assert!(rows[0].get(key).is_some(), "missing {key}");
    }
}

#[test]
fn show_table_and_stable_json() {
    let (code, out, _) = run(&["show", P2P1D]);
    assert_eq!(code, 0);
    assert!(
        out.contains("DP MASTER") && out.contains("16-31 of 32"),
        "{out}"
    );
    let (code, out, _) = run(&["show", P2P1D, "--format", "json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["name"], P2P1D);
    assert_eq!(v["connector"], "MooncakeConnectorV1");
    assert_eq!(v["nodes"].as_array().map(Vec::len), Some(4));
    let node3 = &v["nodes"][3];
    assert_eq!(node3["dp_rank_start"], 16);
    assert_eq!(node3["dp_master"], 2);
    assert_eq!(node3["engine_id"], 1);
    assert_eq!(node3["kv_port"], 30200);
    assert_eq!(node3["ranks"][0]["dp_rank"], 16);
    assert_eq!(
        node3["ranks"][0]["kv_span"],
        serde_json::json!([30216, 30216])
    );
    assert_eq!(v["proxy"]["port"], 1999);
    assert_eq!(v["proxy"]["prefill"].as_array().map(Vec::len), Some(4));
    assert_eq!(v["proxy"]["decode"][16], serde_json::json!([3, 7100]));
}

#[test]
fn unknown_name_suggests_and_exits_2() {
    let (code, _, err) = run(&["show", "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1"]);
    assert_eq!(code, 2);
    assert!(err.contains(&format!("did you mean `{P2P1D}`")), "{err}");
    let (code, _, _) = run(&["render", "nope/nothing"]);
    assert_eq!(code, 2);
    let (code, _, err) = run(&["frobnicate"]);
    assert_eq!(code, 2, "{err}");
}

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
