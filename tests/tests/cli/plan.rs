//! `catalog plan` and `catalog calibrate`: the layout the estimate ranks
//! best, and a bench result set against the estimate.

use crate::{P2P1D, run, samples};

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
