//! What a node's stand-ins enforce and report: the DP master's reachability,
//! the expectation file, fault injection and bench, npu-smi and hccn_tool,
//! and where the binaries are.

use crate::{
    HCCN, NPU_SMI, VLLM, free_port, free_span, kv_config, rank_argv, run, s, spawn, tmpdir,
    wait_ready,
};
use pd_rehearse::http;
use serde_json::{Value as Json, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[test]
fn dp_master_must_be_reachable() {
    let rpc = free_port();
    let port = free_port();
    let started = Instant::now();
    let (code, _, err) = run(
        VLLM,
        &rank_argv(port, 2, 1, rpc, 1, None),
        &[("PD_STANDIN_MASTER_TIMEOUT", "0.5".into())],
    );
    assert_eq!(code, Some(4), "{err}");
    assert!(
        err.contains(&format!("DP master 127.0.0.1:{rpc} unreachable")),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));

    // With rank 0 up, rank 1 comes up.
    let (p0, p1) = (free_port(), free_port());
    let mut r0 = spawn(
        VLLM,
        &rank_argv(p0, 2, 0, rpc, 1, None),
        &[("ASCEND_RT_VISIBLE_DEVICES", "0".into())],
    );
    let mut r1 = spawn(
        VLLM,
        &rank_argv(p1, 2, 1, rpc, 1, None),
        &[
            ("ASCEND_RT_VISIBLE_DEVICES", "1".into()),
            ("PD_STANDIN_MASTER_TIMEOUT", "5".into()),
        ],
    );
    wait_ready("127.0.0.1", p0, "/health", &mut r0);
    wait_ready("127.0.0.1", p1, "/health", &mut r1);
}

pub(crate) fn write_expect(dir: &Path, ranks: Json) -> PathBuf {
    let path = dir.join("expect.json");
    std::fs::write(
        &path,
        json!({"version": 1, "layout": "test/1p1d", "ranks": ranks}).to_string(),
    )
    .unwrap();
    path
}

#[test]
fn expectation_file_is_enforced() {
    let dir = tmpdir("expect");
    let (api, rpc, kv) = (free_port(), free_port(), free_span(2));
    let ip = "127.0.0.2";
    let entry = |rank: u32, devs: Vec<u32>, api_port: Option<u16>| {
        json!({"node": 1, "node_ip": ip, "role": "prefill", "engine": 0, "engine_id": 0,
               "dp_size": 2, "tp": 1, "dp_rank": rank, "devices": devs, "api_port": api_port,
               "dp_master_ip": ip, "rpc_port": rpc, "kv_port": kv})
    };
    let path = write_expect(
        &dir,
        json!([
            entry(0, vec![0], Some(api)),
            entry(1, vec![1], Some(api + 1))
        ]),
    );
    let cfg = kv_config(
        "MooncakeHybridConnector",
        "kv_producer",
        kv,
        "0",
        (2, 1),
        (1, 1),
    );
    let mut argv = rank_argv(api, 2, 0, rpc, 1, Some(cfg));
    let addr = argv
        .iter()
        .position(|a| a == "--data-parallel-address")
        .unwrap();
    argv[addr + 1] = ip.into();
    let env = |devs: &str| {
        vec![
            ("PD_STANDIN_EXPECT", path.display().to_string()),
            ("PD_STANDIN_NODE_IP", ip.to_string()),
            ("PD_STANDIN_STATE_DIR", dir.display().to_string()),
            ("ASCEND_RT_VISIBLE_DEVICES", devs.to_string()),
        ]
    };
    // Wrong devices: exit 3 naming node and rank.
    let (code, _, err) = run(VLLM, &argv, &env("1"));
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("node 1 (127.0.0.2) rank 0"), "{err}");
    // Wrong rank for this node.
    let mut bad = argv.clone();
    let r = bad
        .iter()
        .position(|a| a == "--data-parallel-rank")
        .unwrap();
    bad[r + 1] = "1".into();
    let (code, _, err) = run(VLLM, &bad, &env("0"));
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("API port"), "{err}");
    // Matching: serves on the node IP, writes <node>-<rank>.served from the file's node index.
    let mut g = spawn(VLLM, &argv, &env("0"));
    wait_ready(ip, api, "/health", &mut g);
    let r = http::post_json(
        ip,
        api,
        "/v1/completions",
        &json!({"prompt": "x", "kv_transfer_params": {"do_remote_decode": true}}),
        Duration::from_secs(5),
    )
    .unwrap();
    let v: Json = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(v["kv_transfer_params"]["remote_host"], json!(ip));
    assert_eq!(
        std::fs::read_to_string(dir.join("1-0.served"))
            .unwrap()
            .trim(),
        "1"
    );
    drop(g);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fault_injection_and_bench() {
    let port = free_port();
    let mut g = spawn(
        VLLM,
        &rank_argv(port, 1, 0, 2, 1, None),
        &[("PD_STANDIN_FAIL_AFTER_MS", "200".into())],
    );
    let st = g.wait_exit(Duration::from_secs(5)).expect("did not fail");
    assert_eq!(st.code(), Some(9));

    let port = free_port();
    let mut m = spawn(VLLM, &rank_argv(port, 1, 0, 2, 1, None), &[]);
    wait_ready("127.0.0.1", port, "/health", &mut m);
    let (code, out, err) = run(
        VLLM,
        &s(&[
            "bench",
            "serve",
            "--backend",
            "vllm",
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--model",
            "dsv3",
            "--dataset-name",
            "random",
            "--num-prompts",
            "200",
            "--random-input-len",
            "1024",
        ]),
        &[],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("Serving Benchmark Result"), "{out}");
    // `--save-result` with bench.sh's metadata: the result file vLLM writes,
    // with the keys `catalog calibrate` reads.
    let dir = tmpdir("bench-results");
    let (code, _, err) = run(
        VLLM,
        &s(&[
            "bench",
            "serve",
            "--base-url",
            &format!("http://127.0.0.1:{port}"),
            "--model",
            "dsv3",
            "--random-input-len",
            "1024",
            "--random-output-len",
            "64",
            "--max-concurrency",
            "8",
            "--metadata",
            "pd_dsl_layout=demo/a3-1p1d",
            "pd_dsl_image=0.30.0rc2",
            "--save-result",
            "--result-dir",
            dir.to_str().unwrap(),
        ]),
        &[],
    );
    assert_eq!(code, Some(0), "{err}");
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert_eq!(files.len(), 1);
    let result: Json =
        serde_json::from_str(&std::fs::read_to_string(files[0].path()).unwrap()).unwrap();
    assert_eq!(result["pd_dsl_layout"], "demo/a3-1p1d");
    assert_eq!(result["max_concurrency"], 8);
    assert_eq!(result["request_rate"], "inf");
    for key in pd_dsl::estimate::BENCH_RESULT_KEYS {
        assert!(result[key].is_number(), "{key}: {result}");
    }
    let (code, _, err) = run(VLLM, &s(&["bench", "serve", "--metadata", "novalue"]), &[]);
    assert_eq!(code, Some(2), "{err}");
    let (code, _, _) = run(
        VLLM,
        &s(&["bench", "serve", "--port", &free_port().to_string()]),
        &[],
    );
    assert_eq!(code, Some(1));
}

#[test]
fn npu_smi_and_hccn_tool() {
    let (code, out, _) = run(
        NPU_SMI,
        &s(&["info", "-l"]),
        &[("PD_STANDIN_NPUS", "8".into())],
    );
    assert_eq!(code, Some(0));
    assert!(out.contains("Total Count                    : 8"), "{out}");
    assert_eq!(out.matches("NPU ID").count(), 8);
    let (code, out, _) = run(NPU_SMI, &s(&["info"]), &[]);
    assert_eq!(code, Some(0));
    assert!(out.contains("npu-smi"));
    let (_, out, _) = run(HCCN, &s(&["-i", "3", "-link", "-g"]), &[]);
    assert_eq!(out.trim(), "link status: UP");
    let (_, out, _) = run(
        HCCN,
        &s(&["-i", "3", "-link", "-g"]),
        &[("PD_STANDIN_LINK_DOWN", "1,3".into())],
    );
    assert_eq!(out.trim(), "link status: DOWN");
    let (_, out, _) = run(HCCN, &s(&["-i", "0", "-net_health", "-g"]), &[]);
    assert_eq!(out.trim(), "net health status: Success");
    for q in ["-ip", "-lldp", "-gateway", "-netdetect"] {
        let (code, out, _) = run(HCCN, &s(&["-i", "0", q, "-g"]), &[]);
        assert_eq!(code, Some(0), "{q}");
        assert!(!out.is_empty());
    }
    let (code, _, _) = run(HCCN, &s(&["-i", "0", "-bogus", "-g"]), &[]);
    assert_eq!(code, Some(1));
}

#[test]
fn binaries_are_located_next_to_the_test() {
    let dir = pd_rehearse::locate().expect("stand-ins not found");
    for p in pd_rehearse::binary_paths(&dir) {
        assert!(p.is_file(), "{}", p.display());
    }
}
