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
    // `newer_images`: every later image of the table with an A3 build, in
    // version order, each with every documented field.
    let layout = samples().into_iter().find(|l| l.name() == P2P1D).unwrap();
    let want: Vec<&str> = pd_dsl::tables::IMAGES
        .iter()
        .filter(|i| i.version() > layout.image.version() && i.reference(layout.hardware).is_some())
        .map(|i| i.tag)
        .collect();
    let newer = v["newer_images"].as_array().expect("newer_images");
    let tags: Vec<&str> = newer.iter().filter_map(|n| n["tag"].as_str()).collect();
    let mut sorted = tags.clone();
    sorted.sort_by_key(|t| pd_dsl::tables::image(t).map(|i| i.version()));
    assert_eq!(tags, sorted);
    let mut want_sorted = want.clone();
    want_sorted.sort_by_key(|t| pd_dsl::tables::image(t).map(|i| i.version()));
    assert_eq!(tags, want_sorted);
    for n in newer {
        for key in [
            "tag",
            "vllm",
            "findings_added",
            "findings_removed",
            "flags_unaccepted",
            "config_keys_unread",
            "env_unread",
            "connector_unregistered",
            "proxy_flags_removed",
        ] {
            assert!(
                n.get(key).is_some(),
                "newer_images entry without `{key}`: {n}"
            );
        }
    }
}

/// One change of a release diff, as a comparable value: `(title, item)`
/// for the `  + x` / `  - x` / `  ~ x` lines under a `title:` line, and
/// `(title, old, new)` with the JSON values parsed for `title: OLD -> NEW`.
fn diff_entries(text: &str) -> std::collections::BTreeSet<(String, String, String, String)> {
    let mut out = std::collections::BTreeSet::new();
    let mut title = String::new();
    for line in text.lines() {
        if let Some(item) = line.strip_prefix("  ") {
            let item = item
                .split_once(": ")
                .map_or(item.to_owned(), |(name, rest)| {
                    // `~ name: {..} -> {..}`: the JSON values, normalized.
                    let norm = rest.split_once(" -> ").map_or(rest.to_owned(), |(a, b)| {
                        let p = |x: &str| {
                            serde_json::from_str::<serde_json::Value>(x)
                                .map_or(x.to_owned(), |v| v.to_string())
                        };
                        format!("{} -> {}", p(a), p(b))
                    });
                    format!("{name}: {norm}")
                });
            out.insert((title.clone(), item, String::new(), String::new()));
        } else if let Some(t) = line.strip_suffix(':') {
            title = t.to_owned();
        } else if let Some((t, rest)) = line.split_once(": ")
            && let Some((a, b)) = rest.split_once(" -> ")
            && let (Ok(a), Ok(b)) = (
                serde_json::from_str::<serde_json::Value>(a),
                serde_json::from_str::<serde_json::Value>(b),
            )
        {
            out.insert((t.to_owned(), String::new(), a.to_string(), b.to_string()));
        } else {
            out.insert((line.to_owned(), String::new(), String::new(), String::new()));
        }
    }
    out
}

/// `catalog upstream diff` says what `scripts/upstream/facts.py diff` says
/// from the corpus (run here on the cached sdists), as sets of changes.
#[test]
fn upstream_diff_agrees_with_facts_py() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for (a, b) in [
        ("0.22.1rc1", "0.23.0"),
        ("0.25.1rc1", "0.30.0rc2"),
        ("0.20.2rc1", "0.21.0rc1"),
    ] {
        let py = std::process::Command::new("python3")
            .arg(root.join("scripts/upstream/facts.py"))
            .args(["diff", a, b])
            .output()
            .unwrap_or_else(|e| panic!("cannot run python3 scripts/upstream/facts.py: {e}"));
        assert!(
            py.status.success(),
            "`python3 scripts/upstream/facts.py diff {a} {b}` failed ({}); fill the corpus with \
             `python3 scripts/upstream/corpus.py fetch --all`:\n{}",
            py.status,
            String::from_utf8_lossy(&py.stderr)
        );
        let py = String::from_utf8(py.stdout).expect("utf8");
        let (code, rs, err) = run(&["upstream", "diff", &format!("v{a}"), b]);
        assert_eq!(code, 0, "{err}");
        let (pe, re) = (diff_entries(&py), diff_entries(&rs));
        assert!(
            pe.len() > 10,
            "{a} -> {b}: facts.py names only {} changes:\n{py}",
            pe.len()
        );
        let only_py: Vec<_> = pe.difference(&re).collect();
        let only_rs: Vec<_> = re.difference(&pe).collect();
        assert!(
            only_py.is_empty() && only_rs.is_empty(),
            "{a} -> {b}: only facts.py: {only_py:#?}\nonly catalog: {only_rs:#?}"
        );
    }
    let (code, _, err) = run(&["upstream", "diff", "v0.23.0", "v0.99.0"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("found release `v0.99.0`, expected an image of the table"),
        "{err}"
    );
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

/// `catalog plan`: a ranked table with the best layout as a file that
/// renders, JSON with the documented fields, exit 1 when nothing meets the
/// limits and 2 for a bad request.
#[test]
fn plan_ranks_and_prints_a_layout_that_renders() {
    let base = [
        "plan",
        "--model",
        "deepseek_v3_1_w8a8_mtp_quarot",
        "--hardware",
        "a3",
        "--max-nodes",
        "4",
        "--input-len",
        "3500",
        "--output-len",
        "1500",
        "--concurrency",
        "700",
    ];
    let (code, out, err) = run(&base);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("pass every rule; refused by"), "{out}");
    assert!(out.contains("rank meets topology"), "{out}");
    let yaml = out.split_once("(rename it first):\n").expect("a layout").1;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("planned.yaml");
    std::fs::write(&file, yaml.replacen("name: plan/", "name: planned/", 1)).unwrap();
    let out_dir = dir.path().join("out");
    let (code, out, err) = run(&[
        "render",
        file.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");

    let mut json_args = base.to_vec();
    json_args.extend(["--format", "json"]);
    let (code, out, _) = run(&json_args);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let first = &v["candidates"][0];
    for key in ["kind", "topology", "nodes", "npus", "meets", "estimate"] {
        assert!(first.get(key).is_some(), "{key} missing: {first}");
    }
    assert!(v["enumerated"].as_u64().unwrap() > v["candidates"].as_array().unwrap().len() as u64);

    let mut strict = base.to_vec();
    strict.extend(["--tpot", "1"]);
    let (code, out, _) = run(&strict);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.lines().nth(2).is_some_and(|l| l.contains(" no ")),
        "{out}"
    );

    let mut bad = base.to_vec();
    bad.extend(["--prefix-rate", "1.5"]);
    let (code, _, err) = run(&bad);
    assert_eq!(code, 2);
    assert!(err.contains("found --prefix-rate 1.5"), "{err}");
}

/// `catalog calibrate`: a `vllm bench serve` result against the estimate at
/// its own workload, recorded next to the layout; the keys it reads are the
/// ones every pinned vLLM's `--save-result` writes.
#[test]
fn calibrate_sets_a_bench_result_against_the_estimate_and_records_it() {
    let dir = tempfile::tempdir().unwrap();
    // A rendered layout directory with bench.sh's result directory.
    let results = dir.path().join("bench-results");
    std::fs::create_dir_all(&results).unwrap();
    std::fs::write(dir.path().join("meta.yaml"), "name: x\n").unwrap();
    let result = results.join("vllm-infqps-concurrency64-dsv3.json");
    let doc = serde_json::json!({
        "date": "20261202-101010", "backend": "vllm", "num_prompts": 256,
        "pd_dsl_layout": P2P1D, "pd_dsl_image": "0.23.0",
        "request_rate": "inf", "max_concurrency": 64,
        "completed": 256, "total_input_tokens": 256 * 3500, "total_output_tokens": 256 * 1500,
        "output_throughput": 3000.0, "mean_ttft_ms": 900.0, "mean_tpot_ms": 40.0,
    });
    std::fs::write(&result, doc.to_string()).unwrap();
    let (code, out, err) = run(&["calibrate", result.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("3500-token prompts, 1500 output tokens, 64 at once"),
        "{out}"
    );
    assert!(out.contains("measured 3000.0"), "{out}");
    // The ratio is measured over the estimate at that workload.
    let layout = samples().into_iter().find(|l| l.name() == P2P1D).unwrap();
    let w = pd_dsl::estimate::Workload {
        input_len: 3500,
        output_len: 1500,
        prefix_rate: 0.0,
        concurrency: Some(64),
        request_rate: None,
    };
    let e = pd_dsl::estimate::estimate_with(&layout, &w, &pd_dsl::estimate::CALIBRATION).unwrap();
    let ledger: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("calibration.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(ledger.as_array().unwrap().len(), 1);
    let ratio = ledger[0]["ratio"].as_f64().unwrap();
    assert!(
        (ratio - 3000.0 / e.output_tokens_per_s).abs() < 1e-9,
        "{ledger}"
    );
    // Again: the entry for the same result is replaced, not added.
    let (code, _, _) = run(&["calibrate", result.to_str().unwrap()]);
    assert_eq!(code, 0);
    let ledger: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("calibration.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(ledger.as_array().unwrap().len(), 1);

    // A file that is no result, and a result naming no layout.
    let bad = results.join("bad.json");
    std::fs::write(&bad, "{\"x\": 1}").unwrap();
    let (code, _, err) = run(&["calibrate", bad.to_str().unwrap(), "--no-record"]);
    assert_eq!(code, 1);
    assert!(err.contains("found no number `completed`"), "{err}");
    let mut anon = doc.clone();
    anon.as_object_mut().unwrap().remove("pd_dsl_layout");
    std::fs::write(&bad, anon.to_string()).unwrap();
    let (code, _, err) = run(&["calibrate", bad.to_str().unwrap(), "--no-record"]);
    assert_eq!(code, 2);
    assert!(err.contains("expected --layout NAME"), "{err}");

    // Every pinned vLLM's `vllm bench serve --save-result` writes the keys.
    let lock: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../upstream/corpus.lock.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let versions: Vec<String> = lock["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["name"] == "vllm")
        .filter_map(|p| p["version"].as_str().map(str::to_owned))
        .collect();
    assert!(versions.len() >= 10, "{lock}");
    for v in versions {
        let out = std::process::Command::new("python3")
            .args(["scripts/upstream/corpus.py", "path", &format!("vllm=={v}")])
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let tree = String::from_utf8(out.stdout).unwrap();
        let serve = std::fs::read_to_string(
            std::path::Path::new(tree.trim()).join("vllm/benchmarks/serve.py"),
        )
        .unwrap();
        for key in layouts::calibrate_cmd::RESULT_KEYS.iter().chain(&[
            "max_concurrency",
            "request_rate",
            "mean_ttft_ms",
            "mean_tpot_ms",
        ]) {
            assert!(
                serve.contains(&format!("\"{key}\"")),
                "vLLM {v} writes no `{key}`"
            );
        }
        assert!(
            serve.contains("\"--metadata\""),
            "vLLM {v} has no --metadata"
        );
    }
}

/// `--version`, and a layout named by a unique suffix of its name.
#[test]
fn version_and_unique_suffix_names() {
    let (code, out, _) = run(&["--version"]);
    assert_eq!(code, 0);
    assert_eq!(out.trim(), format!("catalog {}", env!("CARGO_PKG_VERSION")));
    // `a3-2p1d` ends one sample's name only.
    let (code, out, err) = run(&["show", "a3-2p1d", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["name"], P2P1D);
    // `1p1d` is no whole part of a name's end: not found, with a hint.
    let (code, _, err) = run(&["show", "p1d"]);
    assert_eq!(code, 2);
    assert!(err.contains("no layout named `p1d`"), "{err}");
    // A suffix several names end with names them all.
    let catalog = layouts::catalog().expect("catalog").to_vec();
    let (code, _, err) = run_with(&["show", "a3-1p1d-upstream"], Ok(catalog));
    assert_eq!(code, 2);
    assert!(
        err.contains("layout names: `") && err.contains("give more of the name"),
        "{err}"
    );
}

/// `catalog completions SHELL` prints a script the shell accepts, offering
/// every subcommand; `catalog man` prints a man page naming them; `catalog
/// rules` and `catalog explain` list and explain the rules, an unknown rule
/// is a usage error.
#[test]
fn completions_man_page_rules_and_explain() {
    let (code, bash, err) = run(&["completions", "bash"]);
    assert_eq!(code, 0, "{err}");
    let script =
        std::env::temp_dir().join(format!("catalog-completion-{}.bash", std::process::id()));
    std::fs::write(&script, &bash).expect("write");
    let st = std::process::Command::new("bash")
        .arg("-n")
        .arg(&script)
        .status()
        .expect("bash runs");
    let _ = std::fs::remove_file(&script);
    assert!(st.success(), "bash refuses the completion script");
    let (code, man, err) = run(&["man"]);
    assert_eq!(code, 0, "{err}");
    assert!(man.contains(".TH catalog 1"), "{man}");
    for sub in [
        "render",
        "rehearse",
        "plan",
        "rules",
        "explain",
        "completions",
    ] {
        assert!(bash.contains(sub), "completions lack `{sub}`");
        assert!(man.contains(sub), "the man page lacks `{sub}`");
    }
    let (code, rules, _) = run(&["rules"]);
    assert_eq!(code, 0);
    assert_eq!(
        rules
            .lines()
            .filter(|l| l.contains("  hard  ") || l.contains("  convention  "))
            .count(),
        pd_dsl::rules::Rule::ALL.len()
    );
    let (code, text, _) = run(&["explain", "port_collision"]);
    assert_eq!(code, 0);
    assert!(text.contains("[rule `port_collision`]"), "{text}");
    let (code, _, err) = run(&["explain", "port_colision"]);
    assert_eq!(code, 2);
    assert!(err.contains("did you mean port_collision"), "{err}");
}

/// `catalog list` filters by model, hardware and node count, and its
/// default table leaves out what the name says.
#[test]
fn list_filters_and_a_narrow_default() {
    let all = samples();
    let (code, out, _) = run(&["list", "--format", "json", "--max-nodes", "2"]);
    assert_eq!(code, 0);
    let rows: serde_json::Value = serde_json::from_str(&out).expect("json");
    let want = all.iter().filter(|l| l.node_count() <= 2).count();
    assert!(want > 0 && want < all.len(), "the samples cover both sides");
    assert_eq!(rows.as_array().unwrap().len(), want);
    for r in rows.as_array().unwrap() {
        assert!(r["nodes"].as_u64().unwrap() <= 2, "{r}");
    }
    let hw = all[0].hardware.id;
    let (code, out, _) = run(&["list", "--format", "json", "--hardware", hw]);
    assert_eq!(code, 0);
    let rows: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        rows.as_array().unwrap().len(),
        all.iter().filter(|l| l.hardware.id == hw).count()
    );
    let (code, out, _) = run(&["list", "--model", "no-such-model"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("no layout matches the filters (3 registered)"),
        "{out}"
    );
    let (code, _, err) = run(&["list", "--hardware", "h100"]);
    assert_eq!(code, 2);
    assert!(err.contains("found --hardware `h100`"), "{err}");
    let (_, narrow, _) = run(&["list"]);
    let (_, wide, _) = run(&["list", "--wide"]);
    assert!(!narrow.contains("RECORDED") && wide.contains("RECORDED"));
    let widest = |t: &str| t.lines().map(str::len).max().unwrap_or(0);
    assert!(widest(&narrow) < widest(&wide), "{narrow}\n{wide}");
}

/// `catalog diff A B`: exit 0 and "no differences" for a layout against
/// itself; exit 1 with every differing key otherwise, the topology and the
/// derived ranks among them, in text and JSON; `--image TAG` compares a
/// layout with itself on another image, and an image that cannot run it is
/// refused with the findings.
#[test]
fn diff_two_layouts_and_one_layout_on_two_images() {
    let all = samples();
    let (a, b) = (all[0].name(), all[1].name());
    let (code, out, err) = run(&["diff", a, a]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("no differences"), "{out}");
    let (code, out, err) = run(&["diff", a, b]);
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains(&format!(
            "~ layout.topology: {} -> {}",
            all[0].topology_text(),
            all[1].topology_text()
        )),
        "{out}"
    );
    let (code, json, _) = run(&["diff", a, b, "--format", "json"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    let changes = v["changes"].as_array().expect("changes");
    let lines = out.lines().filter(|l| l.starts_with("  ")).count();
    assert_eq!(
        changes.len(),
        lines,
        "the text and the JSON list the same keys"
    );
    assert!(
        changes
            .iter()
            .any(|c| c["key"].as_str().unwrap().starts_with("node["))
    );
    let (code, _, err) = run(&["diff", a, "--image", "v9.9.9"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("on image v9.9.9 does not check") && err.contains("unknown_image"),
        "{err}"
    );
    let (code, _, err) = run(&["diff", a]);
    assert_eq!(code, 2, "{err}");
}

/// `catalog lint` shows a finding as rustc shows an error: the rule, the
/// file and position, the offending line and a caret under the token; plain
/// with `--color never` (or in a pipe, or under NO_COLOR), coloured with
/// `--color always`.
#[test]
fn lint_findings_show_the_line_and_a_caret() {
    let example = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/layouts/a3-1p1d.yaml"),
    )
    .expect("the example layout");
    let bad = example.replacen("tp: 4", "tp: 3", 1);
    assert_ne!(bad, example);
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("bad.yaml");
    std::fs::write(&file, &bad).expect("write");
    let path = file.to_str().unwrap();
    let (code, out, _) = run(&["lint", path, "--color", "never"]);
    assert_eq!(code, 1, "{out}");
    let line_no = bad.lines().position(|l| l.contains("tp: 3")).unwrap() + 1;
    assert!(out.contains("error[tp_divides_node]: found `tp3`"), "{out}");
    let source = out
        .lines()
        .find(|l| l.starts_with(&format!("{line_no} |")))
        .unwrap_or_else(|| panic!("no source line {line_no}:\n{out}"));
    let caret = out
        .lines()
        .find(|l| l.trim_start_matches([' ', '|']).starts_with('^'))
        .expect("a caret");
    assert_eq!(
        caret.find('^'),
        source.rfind("3 }").or(source.rfind('3')),
        "{out}"
    );
    assert!(!out.contains('\u{1b}'), "{out}");
    let (_, colored, _) = run(&["lint", path, "--color", "always"]);
    assert!(colored.contains('\u{1b}'), "{colored}");
}
