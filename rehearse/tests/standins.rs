//! End-to-end tests of the stand-in binaries. Every wait is bounded and every
//! child is killed by a guard on every path.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use pd_rehearse::http;
use serde_json::{Value as Json, json};
use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;
use std::time::{Duration, Instant};

const VLLM: &str = env!("CARGO_BIN_EXE_vllm");
const PROXY: &str = env!("CARGO_BIN_EXE_pd-proxy");
const NPU_SMI: &str = env!("CARGO_BIN_EXE_npu-smi");
const HCCN: &str = env!("CARGO_BIN_EXE_hccn_tool");

/// Kills and reaps its child on drop.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Guard {
    /// Waits for exit up to `limit`; `None` if still running.
    fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Ok(Some(s)) = self.0.try_wait() {
                return Some(s);
            }
            thread::sleep(Duration::from_millis(20));
        }
        None
    }

    fn stderr(&mut self) -> String {
        let mut s = String::new();
        if let Some(e) = self.0.stderr.as_mut() {
            let _ = e.read_to_string(&mut s);
        }
        s
    }
}

/// Ports handed out by this test process: a private counter below the
/// ephemeral range, so two tests never get the same port (the OS may hand a
/// just-released ephemeral port to a concurrent test).
static NEXT_PORT: AtomicU32 = AtomicU32::new(0);

/// A base for `n` consecutive free ports.
fn free_span(n: u16) -> u16 {
    let start = 21000 + (std::process::id() % 150) * 60;
    for _ in 0..200 {
        let off = NEXT_PORT.fetch_add(u32::from(n), Ordering::Relaxed);
        let base = u16::try_from(start + off % 9000).unwrap();
        if (base..base + n).all(|p| TcpListener::bind(("0.0.0.0", p)).is_ok()) {
            return base;
        }
    }
    panic!("no free span of {n} ports");
}

fn free_port() -> u16 {
    free_span(1)
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pd-rehearse-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn spawn(bin: &str, args: &[String], env: &[(&str, String)]) -> Guard {
    let mut c = Command::new(bin);
    c.args(args)
        .env("LD_LIBRARY_PATH", cann_lib_dir())
        .env_remove("PD_STANDIN_CANN_LIBS")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .env_remove("ASCEND_RT_VISIBLE_DEVICES")
        .env_remove("PD_STANDIN_NODE_IP")
        .env_remove("PD_STANDIN_EXPECT")
        .env_remove("PD_STANDIN_STATE_DIR")
        .env_remove("PD_STANDIN_FAIL_AFTER_MS");
    for (k, v) in env {
        c.env(k, v);
    }
    Guard(c.spawn().unwrap())
}

/// A directory holding a stand-in `libascendcl.so`, as the image's CANN
/// `set_env.sh` puts one on `LD_LIBRARY_PATH`.
fn cann_lib_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let d = tmpdir("cann");
        std::fs::write(d.join("libascendcl.so"), "").unwrap();
        d
    })
    .clone()
}

/// Runs to completion (bounded): (exit code, stdout, stderr).
fn run(bin: &str, args: &[String], env: &[(&str, String)]) -> (Option<i32>, String, String) {
    let mut c = Command::new(bin);
    c.args(args)
        .env("LD_LIBRARY_PATH", cann_lib_dir())
        .env_remove("PD_STANDIN_CANN_LIBS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("ASCEND_RT_VISIBLE_DEVICES")
        .env_remove("PD_STANDIN_NODE_IP")
        .env_remove("PD_STANDIN_EXPECT");
    for (k, v) in env {
        c.env(k, v);
    }
    let mut g = Guard(c.spawn().unwrap());
    let status = g
        .wait_exit(Duration::from_secs(10))
        .expect("process did not exit");
    let mut out = String::new();
    if let Some(o) = g.0.stdout.as_mut() {
        let _ = o.read_to_string(&mut out);
    }
    (status.code(), out, g.stderr())
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// Polls `GET path` until 200 or the deadline.
fn wait_ready(host: &str, port: u16, path: &str, g: &mut Guard) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(st)) = g.0.try_wait() {
            panic!("exited early with {st}: {}", g.stderr());
        }
        if let Ok(r) = http::get(host, port, path, Duration::from_millis(500))
            && r.status == 200
        {
            return;
        }
        thread::sleep(Duration::from_millis(30));
    }
    panic!("{host}:{port}{path} never answered");
}

fn kv_config(
    connector: &str,
    role: &str,
    kv_port: u16,
    id: &str,
    p: (u32, u32),
    d: (u32, u32),
) -> String {
    json!({
        "kv_connector": connector, "kv_role": role, "kv_port": kv_port.to_string(), "engine_id": id,
        "kv_connector_extra_config": {
            "prefill": {"dp_size": p.0, "tp_size": p.1},
            "decode": {"dp_size": d.0, "tp_size": d.1},
        }
    })
    .to_string()
}

/// The argv of one external-DP rank, shaped like the generated templates
/// (no `--data-parallel-rank` at DP 1, which vLLM refuses).
fn rank_argv(port: u16, dp: u32, rank: u32, rpc: u16, tp: u32, kv: Option<String>) -> Vec<String> {
    let mut a = s(&["serve", "/models/dsv3", "--host", "0.0.0.0"]);
    a.extend(s(&[
        "--port",
        &port.to_string(),
        "--data-parallel-size",
        &dp.to_string(),
    ]));
    if dp > 1 {
        a.extend(s(&["--data-parallel-rank", &rank.to_string()]));
    }
    a.extend(s(&[
        "--data-parallel-address",
        "127.0.0.1",
        "--data-parallel-rpc-port",
        &rpc.to_string(),
        "--tensor-parallel-size",
        &tp.to_string(),
        "--enable-expert-parallel",
        "--seed",
        "1024",
        "--served-model-name",
        "dsv3",
        "--max-model-len",
        "8192",
        "--max_num_batched_tokens",
        "2048",
        "--max-num-seqs=16",
        "--gpu-memory-utilization",
        "0.9",
        "--quantization",
        "ascend",
        "--trust-remote-code",
        "--no-enable-prefix-caching",
        "--async-scheduling",
        "--speculative-config",
        r#"{"num_speculative_tokens": 1, "method": "mtp"}"#,
        "--compilation-config",
        r#"{"cudagraph_mode": "FULL_DECODE_ONLY"}"#,
        "--compilation-config.cudagraph_capture_sizes",
        "[4,8]",
        "--additional-config",
        r#"{"torchair_graph_config": {"enabled": false}}"#,
    ]));
    if let Some(kv) = kv {
        a.push("--kv-transfer-config".into());
        a.push(kv);
    }
    a
}

/// The vLLM version of the newest image (the stand-in's default image).
fn newest_vllm() -> String {
    let tag = pd_dsl::tables::IMAGES.last().map_or("", |i| i.tag);
    pd_rehearse::facts::vllm_version_of_image(tag).unwrap()
}

/// Without the CANN environment (the image's set_env.sh not sourced) the
/// stand-in does not start, as the real vllm fails to load libascendcl.so.
#[test]
fn vllm_refuses_to_start_without_the_cann_environment() {
    let argv = s(&["serve", "/m", "--port", "1"]);
    for (ld, libs, missing) in [
        ("", None, "libascendcl.so"),
        ("/nonexistent", None, "libascendcl.so"),
        ("", Some("libascendcl.so,libatb.so"), "libascendcl.so"),
    ] {
        let mut env = vec![("LD_LIBRARY_PATH", ld.to_string())];
        if let Some(l) = libs {
            env.push(("PD_STANDIN_CANN_LIBS", l.to_string()));
        }
        let (code, _, err) = run(VLLM, &argv, &env);
        assert_eq!(code, Some(7), "{err}");
        assert!(
            err.contains(&format!(
                "ImportError: {missing}: cannot open shared object file"
            )),
            "{err}"
        );
    }
    // One library found, the other not: the missing one is named.
    let (code, _, err) = run(
        VLLM,
        &argv,
        &[("PD_STANDIN_CANN_LIBS", "libascendcl.so,libatb.so".into())],
    );
    assert_eq!(code, Some(7), "{err}");
    assert!(err.contains("ImportError: libatb.so"), "{err}");
}

/// The stand-in takes its flags from the image's vLLM: a flag one image's
/// vLLM defines and another's does not is accepted under the first
/// (whatever fails later, not the argv) and refused under the second,
/// naming the flag and that version.
#[test]
fn vllm_accepts_the_flags_of_its_images_vllm_only() {
    use pd_rehearse::facts;
    use pd_rehearse::serve_flags::{Flags, Kind};
    let images: Vec<&str> = pd_dsl::tables::IMAGES.iter().map(|i| i.tag).collect();
    let mut checked = 0;
    // One flag per image that lacks some other image's flag.
    for lacks in &images {
        for has in &images {
            let (a, b) = (
                Flags::of_image(has).unwrap(),
                Flags::of_image(lacks).unwrap(),
            );
            let Some(f) = a
                .flags()
                .iter()
                .find(|f| b.lookup(&format!("--{}", f.name)).is_none())
            else {
                continue;
            };
            let mut argv = s(&["serve", "/m", &format!("--{}", f.name)]);
            match f.kind {
                Kind::Switch => {}
                Kind::Json => argv.push("{}".into()),
                _ => argv.push("1".into()),
            }
            let (code, _, err) = run(VLLM, &argv, &[("PD_STANDIN_IMAGE", lacks.to_string())]);
            let v = facts::vllm_version_of_image(lacks).unwrap();
            assert_eq!(code, Some(2), "{lacks}: {err}");
            assert!(
                err.contains(&format!(
                    "unrecognized argument --{}: vLLM {v} has no such",
                    f.name
                )),
                "{lacks}: {err}"
            );
            // Under its own image it gets past the argv: it serves, or fails
            // for another reason.
            argv.extend(s(&["--port", &free_port().to_string()]));
            let mut g = spawn(VLLM, &argv, &[("PD_STANDIN_IMAGE", has.to_string())]);
            if g.wait_exit(Duration::from_millis(1500)).is_some() {
                let err = g.stderr();
                assert!(!err.contains("unrecognized argument"), "{has}: {err}");
            }
            checked += 1;
            break;
        }
    }
    assert!(checked > 0, "every image's vLLM has the same flags");
}

#[test]
fn unknown_flag_is_rejected_and_good_argv_accepted() {
    let (code, _, err) = run(
        VLLM,
        &s(&["serve", "/m", "--port", "1", "--bogus-flag", "3"]),
        &[],
    );
    assert_eq!(code, Some(2));
    assert!(
        err.contains(&format!(
            "vllm stand-in: unrecognized argument --bogus-flag: vLLM {} has no such `vllm serve` flag",
            newest_vllm()
        )),
        "{err}"
    );
    let (code, _, err) = run(VLLM, &s(&["serve", "/m", "--port"]), &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("expected one argument"), "{err}");

    let port = free_port();
    let mut argv = rank_argv(port, 1, 0, free_port(), 2, None);
    argv.extend(s(&[
        "-O3",
        "--no-disable-hybrid-kv-cache-manager",
        "--block-size",
        "128",
    ]));
    let mut g = spawn(VLLM, &argv, &[("ASCEND_RT_VISIBLE_DEVICES", "2,3".into())]);
    wait_ready("127.0.0.1", port, "/health", &mut g);
    let models = http::get("127.0.0.1", port, "/v1/models", Duration::from_secs(2)).unwrap();
    assert!(models.text().contains("\"dsv3\""), "{}", models.text());
    let r = http::post_json(
        "127.0.0.1",
        port,
        "/v1/chat/completions",
        &json!({"model": "dsv3", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 3}),
        Duration::from_secs(2),
    )
    .unwrap();
    assert_eq!(r.status, 200);
    let v: Json = serde_json::from_slice(&r.body).unwrap();
    assert!(v["choices"][0]["message"]["content"].is_string());
}

#[test]
fn config_rules_are_checked() {
    let cases: Vec<(Vec<String>, &str)> = vec![
        // Producer whose prefill shape is not its own.
        (
            rank_argv(1, 1, 0, 2, 1, Some(kv_config("MooncakeConnectorV1", "kv_producer", 30000, "0", (2, 1), (1, 1)))),
            "check_kv_extra_config",
        ),
        // Consumer: decode shape must be its own.
        (
            rank_argv(1, 1, 0, 2, 1, Some(kv_config("MooncakeHybridConnector", "kv_consumer", 30000, "1", (1, 1), (4, 1)))),
            "kv_connector_extra_config.decode is dp_size=4",
        ),
        (
            rank_argv(1, 1, 0, 2, 1, Some(kv_config("MooncakeConnector", "kv_producer", 30000, "0", (1, 1), (1, 1)))),
            "not a registered",
        ),
        (
            rank_argv(1, 1, 0, 2, 1, Some(kv_config("MooncakeConnectorV1", "kv_both", 30000, "0", (1, 1), (1, 1)))),
            "kv_role must be",
        ),
        (
            rank_argv(1, 1, 0, 2, 1, Some(r#"{"kv_connector":"MooncakeConnectorV1","kv_role":"kv_producer","kv_port":"3x","kv_connector_extra_config":{"prefill":{"dp_size":1,"tp_size":1},"decode":{"dp_size":1,"tp_size":1}}}"#.into())),
            "kv_port",
        ),
        (
            rank_argv(1, 1, 0, 2, 1, Some(r#"{"kv_connector":"MooncakeConnectorV1","kv_role":"kv_producer","kv_port":"30000","kv_connector_extra_config":{"prefill":{"dp_size":1,"tp_size":1}}}"#.into())),
            "decode.dp_size is missing",
        ),
        (
            rank_argv(1, 1, 0, 2, 1, Some("{not json".into())),
            "invalid JSON",
        ),
    ];
    for (argv, want) in cases {
        let (code, _, err) = run(VLLM, &argv, &[]);
        assert_eq!(code, Some(2), "{want}: {err}");
        assert!(err.contains(want), "want {want:?} in {err}");
    }
    // Speculative tokens, balance scheduling in PD, recompute without kv.
    let mut a = rank_argv(1, 1, 0, 2, 1, None);
    a.extend(s(&[
        "--speculative-config",
        r#"{"num_speculative_tokens": 16, "method": "mtp"}"#,
    ]));
    let (code, _, err) = run(VLLM, &a, &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("num_speculative_tokens + 1 <= 16"), "{err}");
    let mut a = rank_argv(
        1,
        1,
        0,
        2,
        1,
        Some(kv_config(
            "MooncakeConnectorV1",
            "kv_consumer",
            30000,
            "1",
            (1, 1),
            (1, 1),
        )),
    );
    a.extend(s(&[
        "--additional-config",
        r#"{"scheduler_config": {"enable_balance_scheduling": true}}"#,
    ]));
    let (code, _, err) = run(VLLM, &a, &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("balance scheduling is not allowed"), "{err}");
    let (code, _, err) = run(
        VLLM,
        &rank_argv(
            1,
            1,
            0,
            2,
            1,
            Some(kv_config(
                "MooncakeConnectorV1",
                "kv_producer",
                30000,
                "0",
                (1, 1),
                (1, 1),
            )),
        ),
        &[("VLLM_ASCEND_BALANCE_SCHEDULING", "1".into())],
    );
    assert_eq!(code, Some(2), "{err}");
    let mut a = rank_argv(1, 1, 0, 2, 1, None);
    a.extend(s(&[
        "--additional-config",
        r#"{"recompute_scheduler_enable": true}"#,
    ]));
    let (code, _, err) = run(VLLM, &a, &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("recompute_scheduler_enable requires"), "{err}");
}

#[test]
fn device_list_is_checked() {
    let argv = rank_argv(1, 1, 0, 2, 4, None);
    let (code, _, err) = run(VLLM, &argv, &[("ASCEND_RT_VISIBLE_DEVICES", "0,1".into())]);
    assert_eq!(code, Some(6));
    assert!(err.contains("has 2 devices but TP 4"), "{err}");
    let (code, _, err) = run(
        VLLM,
        &argv,
        &[
            ("ASCEND_RT_VISIBLE_DEVICES", "6,7,8,9".into()),
            ("PD_STANDIN_NPUS", "8".into()),
        ],
    );
    assert_eq!(code, Some(6));
    assert!(err.contains("device 8 does not exist"), "{err}");
}

#[test]
fn bind_clashes_are_real() {
    let port = free_port();
    let mut first = spawn(VLLM, &rank_argv(port, 1, 0, 2, 1, None), &[]);
    wait_ready("127.0.0.1", port, "/health", &mut first);
    let (code, _, err) = run(VLLM, &rank_argv(port, 1, 0, 2, 1, None), &[]);
    assert_eq!(code, Some(5));
    assert!(err.contains(&format!(":{port} (API port)")), "{err}");

    // Two prefill ranks whose kv spans overlap (TP2 rank 0 from kv, TP2 rank 0 from kv+1).
    let kv = free_span(3);
    let (a, b) = (free_port(), free_port());
    let cfg = |k| kv_config("MooncakeConnectorV1", "kv_producer", k, "0", (1, 2), (1, 1));
    let mut p0 = spawn(
        VLLM,
        &rank_argv(a, 1, 0, 2, 2, Some(cfg(kv))),
        &[("ASCEND_RT_VISIBLE_DEVICES", "0,1".into())],
    );
    wait_ready("127.0.0.1", a, "/health", &mut p0);
    let (code, _, err) = run(
        VLLM,
        &rank_argv(b, 1, 0, 2, 2, Some(cfg(kv + 1))),
        &[("ASCEND_RT_VISIBLE_DEVICES", "2,3".into())],
    );
    assert_eq!(code, Some(5));
    assert!(
        err.contains(&format!(":{} (kv handshake port", kv + 1)),
        "{err}"
    );
}

#[test]
fn prefill_to_decode_through_the_proxy() {
    let state = tmpdir("flow");
    let kv_p = free_span(2);
    let kv_d = free_span(1);
    let (pa, da, proxy_port) = (free_port(), free_port(), free_port());
    let rpc = free_port();
    let env = |node: &str| {
        vec![
            ("PD_STANDIN_STATE_DIR", state.display().to_string()),
            ("PD_STANDIN_NODE", node.to_string()),
            ("ASCEND_RT_VISIBLE_DEVICES", "0".to_string()),
        ]
    };
    let p_cfg = kv_config(
        "MooncakeConnectorV1",
        "kv_producer",
        kv_p,
        "0",
        (1, 1),
        (1, 1),
    );
    let d_cfg = kv_config(
        "MooncakeConnectorV1",
        "kv_consumer",
        kv_d,
        "1",
        (1, 1),
        (1, 1),
    );
    let mut p = spawn(VLLM, &rank_argv(pa, 1, 0, rpc, 1, Some(p_cfg)), &env("0"));
    let mut d = spawn(VLLM, &rank_argv(da, 1, 0, rpc, 1, Some(d_cfg)), &env("1"));
    let mut proxy = spawn(
        PROXY,
        &s(&[
            "--host",
            "127.0.0.1",
            "--port",
            &proxy_port.to_string(),
            "--prefiller-hosts",
            "127.0.0.1",
            "--prefiller-port",
            &pa.to_string(),
            "--decoder-hosts",
            "localhost",
            "--decoder-ports",
            &da.to_string(),
            "--max-retries",
            "1",
            "--retry-delay",
            "0.01",
            "--workers",
            "1",
            "--log-level",
            "info",
        ]),
        &[],
    );
    wait_ready("127.0.0.1", pa, "/health", &mut p);
    wait_ready("127.0.0.1", da, "/health", &mut d);
    wait_ready("127.0.0.1", proxy_port, "/healthcheck", &mut proxy);

    // The prefill rank reports where its KV lives only when asked for
    // remote decode, in MooncakeConnectorV1's field set for the image.
    let ask = |extra: Json| {
        let mut body = json!({"prompt": "x", "max_tokens": 5});
        if let Json::Object(m) = extra {
            body.as_object_mut().unwrap().extend(m);
        }
        let r = http::post_json(
            "127.0.0.1",
            pa,
            "/v1/completions",
            &body,
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(r.status, 200, "{}", r.text());
        serde_json::from_slice::<Json>(&r.body).unwrap()
    };
    assert_eq!(ask(json!({}))["kv_transfer_params"], Json::Null);
    let v =
        ask(json!({"kv_transfer_params": {"do_remote_decode": true, "do_remote_prefill": false}}));
    let params = v["kv_transfer_params"].clone();
    assert_eq!(params["remote_port"], json!(kv_p));
    assert_eq!(params["do_remote_prefill"], json!(true));
    assert_eq!(params["remote_engine_id"], json!("0"));
    assert_eq!(params["remote_ptp_size"], json!(1));
    assert_eq!(params["remote_block_ids"], json!([[0]]));
    let mut keys: Vec<&str> = params
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    // PD_STANDIN_IMAGE unset: the newest image of the table, whose V1
    // connector also sends remote_block_size.
    assert_eq!(
        keys,
        [
            "do_remote_decode",
            "do_remote_prefill",
            "last_token_id",
            "num_prompt_blocks",
            "remote_block_ids",
            "remote_block_size",
            "remote_dcp_size",
            "remote_engine_id",
            "remote_host",
            "remote_multi_nodes_meta_mapping",
            "remote_pcp_size",
            "remote_port",
            "remote_ptp_size",
            "remote_request_id",
        ]
    );

    // Through the proxy: P then D, D answers with choices.
    for _ in 0..2 {
        let r = http::post_json(
            "127.0.0.1",
            proxy_port,
            "/v1/completions",
            &json!({"model": "dsv3", "prompt": "hello", "max_tokens": 4}),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(r.status, 200, "{}", r.text());
        let v: Json = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(v["choices"][0]["text"], json!(" t0 t1 t2 t3"));
    }

    // Decode refuses what the connector would refuse: params that point at
    // a dead port, a missing key, a flat block list, no params at all.
    let to_decode = |params: Json| {
        let r = http::post_json(
            "127.0.0.1",
            da,
            "/v1/completions",
            &json!({"prompt": "x", "kv_transfer_params": params}),
            Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(r.status, 400, "{params}: {}", r.text());
        r.text()
    };
    let mut dead = params.clone();
    dead["remote_port"] = json!(free_port());
    assert!(to_decode(dead).contains("kv_transfer_params do not point at a live prefill rank"),);
    let mut no_id = params.clone();
    no_id.as_object_mut().unwrap().remove("remote_request_id");
    let e = to_decode(no_id);
    assert!(
        e.contains("refused by MooncakeConnectorV1: kv_transfer_params lacks `remote_request_id`"),
        "{e}"
    );
    let mut flat = params.clone();
    flat["remote_block_ids"] = json!([0]);
    assert!(to_decode(flat).contains("one list of block ids per KV cache group"));
    let e = to_decode(Json::Null);
    assert!(e.contains("decode-only fallback"), "{e}");

    // Counter files: P served 4 (2 direct + 2 via proxy), D served 2.
    let read = |f: &str| {
        std::fs::read_to_string(state.join(f))
            .unwrap()
            .trim()
            .to_string()
    };
    assert_eq!(read("0-0.served"), "4");
    assert_eq!(read("1-0.served"), "2");
    let hc = http::get(
        "127.0.0.1",
        proxy_port,
        "/healthcheck",
        Duration::from_secs(2),
    )
    .unwrap();
    assert!(hc.text().contains("\"request_num\":2"), "{}", hc.text());
    let _ = std::fs::remove_dir_all(&state);
}

/// Upstream's policy: requests that do not overlap all go to the first
/// entry of each list; overlapping ones spread in list order.
#[test]
fn least_loaded_proxy_breaks_ties_by_list_order() {
    let state = tmpdir("least");
    let (kv_a, kv_b, kv_d) = (free_span(1), free_span(1), free_span(1));
    let (pa, pb, da, proxy_port) = (free_port(), free_port(), free_port(), free_port());
    let env = |node: &str| {
        vec![
            ("PD_STANDIN_STATE_DIR", state.display().to_string()),
            ("PD_STANDIN_NODE", node.to_string()),
            ("PD_STANDIN_LATENCY_MS", "400".to_string()),
            ("PD_STANDIN_IMAGE", "v0.21.0rc1".to_string()),
            ("ASCEND_RT_VISIBLE_DEVICES", "0".to_string()),
        ]
    };
    let cfg = |role: &str, kv: u16, id: &str| {
        kv_config("MooncakeConnectorV1", role, kv, id, (1, 1), (1, 1))
    };
    let mut a = spawn(
        VLLM,
        &rank_argv(pa, 1, 0, 2, 1, Some(cfg("kv_producer", kv_a, "0"))),
        &env("a"),
    );
    let mut b = spawn(
        VLLM,
        &rank_argv(pb, 1, 0, 2, 1, Some(cfg("kv_producer", kv_b, "2"))),
        &env("b"),
    );
    let mut d = spawn(
        VLLM,
        &rank_argv(da, 1, 0, 2, 1, Some(cfg("kv_consumer", kv_d, "1"))),
        &env("d"),
    );
    let mut proxy = spawn(
        PROXY,
        &s(&[
            "--port",
            &proxy_port.to_string(),
            "--prefiller-hosts",
            "127.0.0.1",
            "127.0.0.1",
            "--prefiller-ports",
            &pa.to_string(),
            &pb.to_string(),
            "--decoder-hosts",
            "127.0.0.1",
            "--decoder-ports",
            &da.to_string(),
        ]),
        &[("PD_STANDIN_PROXY_POLICY", "least-loaded".to_string())],
    );
    for (port, g) in [(pa, &mut a), (pb, &mut b), (da, &mut d)] {
        wait_ready("127.0.0.1", port, "/health", g);
    }
    wait_ready("127.0.0.1", proxy_port, "/healthcheck", &mut proxy);
    let send = || {
        let r = http::post_json(
            "127.0.0.1",
            proxy_port,
            "/v1/completions",
            &json!({"model": "dsv3", "prompt": "same length", "max_tokens": 2}),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(r.status, 200, "{}", r.text());
    };
    let read = |f: &str| {
        std::fs::read_to_string(state.join(f))
            .unwrap()
            .trim()
            .to_string()
    };
    // One at a time: the first prefill entry every time.
    send();
    send();
    assert_eq!(
        (read("a-0.served").as_str(), read("b-0.served").as_str()),
        ("2", "0")
    );
    // Two in flight: the second goes to the next entry.
    thread::scope(|sc| {
        sc.spawn(send);
        sc.spawn(send);
    });
    assert_eq!(
        (read("a-0.served").as_str(), read("b-0.served").as_str()),
        ("3", "1")
    );
    assert_eq!(read("d-0.served"), "4");
    // An unknown policy is refused at start.
    let (code, _, err) = run(
        PROXY,
        &s(&["--port", &free_port().to_string()]),
        &[("PD_STANDIN_PROXY_POLICY", "random".to_string())],
    );
    assert_eq!(code, Some(2));
    assert!(err.contains("unknown proxy policy `random`"), "{err}");
    let _ = std::fs::remove_dir_all(&state);
}

/// A fake backend answering every request with `status` and `body`.
fn fake_backend(status: u16, body: &'static str) -> u16 {
    let port = free_port();
    let listener = TcpListener::bind(("127.0.0.1", port)).unwrap();
    thread::spawn(move || {
        http::serve(
            listener,
            std::sync::Arc::new(move |_: &http::Request| http::Response {
                status,
                content_type: "text/plain".into(),
                body: body.as_bytes().to_vec(),
            }),
        )
    });
    port
}

#[test]
fn proxy_never_returns_an_empty_200() {
    let kv_p = free_span(1);
    let pa = free_port();
    let p_cfg = kv_config(
        "MooncakeConnectorV1",
        "kv_producer",
        kv_p,
        "0",
        (1, 1),
        (1, 1),
    );
    let mut p = spawn(VLLM, &rank_argv(pa, 1, 0, 2, 1, Some(p_cfg)), &[]);
    wait_ready("127.0.0.1", pa, "/health", &mut p);
    for (status, body, want) in [
        (500, "boom", "boom"),
        (200, "", "returned 200"),
        (400, "bad", "bad"),
    ] {
        let da = fake_backend(status, body);
        let proxy_port = free_port();
        let mut proxy = spawn(
            PROXY,
            &s(&[
                "--host",
                "127.0.0.1",
                "--port",
                &proxy_port.to_string(),
                "--prefiller-hosts",
                "127.0.0.1",
                "--prefiller-ports",
                &pa.to_string(),
                "--decoder-hosts",
                "127.0.0.1",
                "--decoder-ports",
                &da.to_string(),
                "--max-retries",
                "1",
                "--retry-delay",
                "0.001",
            ]),
            &[],
        );
        wait_ready("127.0.0.1", proxy_port, "/healthcheck", &mut proxy);
        let r = http::post_json(
            "127.0.0.1",
            proxy_port,
            "/v1/completions",
            &json!({"prompt": "x"}),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(r.status, 502, "{}", r.text());
        assert!(r.text().contains(want), "{}", r.text());
    }

    // Length mismatch is an argv error.
    let (code, _, err) = run(
        PROXY,
        &s(&[
            "--port",
            "1",
            "--prefiller-hosts",
            "a",
            "b",
            "--prefiller-ports",
            "1",
        ]),
        &[],
    );
    assert_eq!(code, Some(2));
    assert!(err.contains("lengths must match"), "{err}");
}

#[test]
fn layerwise_decode_needs_no_prefill_port() {
    let kv_d = free_span(1);
    let da = free_port();
    let d_cfg = kv_config(
        "MooncakeLayerwiseConnector",
        "kv_consumer",
        kv_d,
        "1",
        (1, 1),
        (1, 1),
    );
    let mut d = spawn(VLLM, &rank_argv(da, 1, 0, 2, 1, Some(d_cfg)), &[]);
    wait_ready("127.0.0.1", da, "/health", &mut d);
    // D binds its own handshake span under Layerwise.
    assert!(TcpListener::bind(("127.0.0.1", kv_d)).is_err());
    let params =
        json!({"do_remote_prefill": true, "remote_host": "127.0.0.1", "remote_port": free_port()});
    let r = http::post_json(
        "127.0.0.1",
        da,
        "/v1/completions",
        &json!({"prompt": "x", "kv_transfer_params": params}),
        Duration::from_secs(5),
    )
    .unwrap();
    assert_eq!(r.status, 200, "{}", r.text());
    let r = http::post_json(
        "127.0.0.1",
        da,
        "/v1/completions",
        &json!({"prompt": "x"}),
        Duration::from_secs(5),
    )
    .unwrap();
    assert_eq!(r.status, 400);
}

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

fn write_expect(dir: &Path, ranks: Json) -> PathBuf {
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

#[test]
fn mixed_native_dp_over_two_nodes() {
    let (api, rpc) = (free_port(), free_port());
    let common = |extra: &[&str]| {
        let mut a = s(&[
            "serve",
            "/models/dsv3",
            "--host",
            "0.0.0.0",
            "--data-parallel-size",
            "4",
            "--data-parallel-size-local",
            "2",
            "--data-parallel-address",
            "127.0.0.1",
            "--data-parallel-rpc-port",
            &rpc.to_string(),
            "--tensor-parallel-size",
            "4",
        ]);
        a.extend(s(extra));
        a
    };
    let dir = tmpdir("mixed");
    let entry = |node: usize, ip: &str, rank: u32, api_port: Option<u16>| {
        let first = (rank % 2) * 4;
        json!({"node": node, "node_ip": ip, "role": "mixed", "dp_size": 4, "tp": 4, "dp_rank": rank,
               "devices": (first..first + 4).collect::<Vec<_>>(), "api_port": api_port,
               "dp_master_ip": "127.0.0.1", "rpc_port": rpc, "kv_port": null})
    };
    let path = write_expect(
        &dir,
        json!([
            entry(0, "127.0.0.1", 0, Some(api)),
            entry(0, "127.0.0.1", 1, None),
            entry(1, "127.0.0.3", 2, None),
            entry(1, "127.0.0.3", 3, None)
        ]),
    );
    let env = |ip: &str| {
        vec![
            ("PD_STANDIN_NODE_IP", ip.to_string()),
            ("PD_STANDIN_EXPECT", path.display().to_string()),
            ("PD_STANDIN_STATE_DIR", dir.display().to_string()),
            ("ASCEND_RT_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7".to_string()),
        ]
    };
    let mut head = spawn(
        VLLM,
        &common(&["--port", &api.to_string()]),
        &env("127.0.0.1"),
    );
    let mut worker = spawn(
        VLLM,
        &common(&["--headless", "--data-parallel-start-rank", "2"]),
        &env("127.0.0.3"),
    );
    wait_ready("127.0.0.1", api, "/health", &mut head);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !dir.join("1-2.served").exists() {
        assert!(
            Instant::now() < deadline,
            "headless node never came up: {}",
            worker.stderr()
        );
        thread::sleep(Duration::from_millis(30));
    }
    assert!(worker.0.try_wait().unwrap().is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--data-parallel-rank` at DP 1 is refused as vLLM refuses it
/// (external load balancing needs DP > 1, vllm/config/parallel.py), and PCP
/// as each image's platform does (the release facts' `pcp_refusals`).
#[test]
fn vllm_refuses_external_dp_at_dp_1_and_pcp_where_the_image_does() {
    let mut argv = rank_argv(7100, 1, 0, 12321, 8, None);
    argv.extend(s(&["--data-parallel-rank", "0"]));
    let (code, _, err) = run(
        VLLM,
        &argv,
        &[("ASCEND_RT_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7".into())],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("data_parallel_external_lb can only be set when data_parallel_size > 1"),
        "{err}"
    );
    let with_pcp = |dp: u32, rank: u32| {
        let mut a = rank_argv(7100, dp, rank, 12321, 8, None);
        a.extend(s(&["--prefill-context-parallel-size", "2"]));
        a
    };
    let devices = (
        "ASCEND_RT_VISIBLE_DEVICES",
        (0..16).map(|d| d.to_string()).collect::<Vec<_>>().join(","),
    );
    // v0.23.0: PCP with DP 2 refused.
    let (code, _, err) = run(
        VLLM,
        &with_pcp(2, 0),
        &[("PD_STANDIN_IMAGE", "v0.23.0".into()), devices.clone()],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("PCP (Prefill Context Parallelism) and DP (Data Parallelism) cannot be enabled simultaneously"), "{err}");
    // v0.30.0rc2: PCP without the V2 runner refused; a bad value is int()'s error.
    let (code, _, err) = run(
        VLLM,
        &with_pcp(2, 0),
        &[("PD_STANDIN_IMAGE", "v0.30.0rc2".into()), devices.clone()],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("PCP (Prefill Context Parallelism) is not supported by vLLM Ascend"),
        "{err}"
    );
    let (code, _, err) = run(
        VLLM,
        &with_pcp(2, 0),
        &[
            ("PD_STANDIN_IMAGE", "v0.30.0rc2".into()),
            ("VLLM_USE_V2_MODEL_RUNNER", "true".into()),
            devices.clone(),
        ],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("invalid literal for int()"), "{err}");
    // v0.26.0rc1 with the V2 runner: vLLM 0.26.0's V2 runner refuses PCP.
    let (code, _, err) = run(
        VLLM,
        &with_pcp(2, 0),
        &[
            ("PD_STANDIN_IMAGE", "v0.26.0rc1".into()),
            ("VLLM_USE_V2_MODEL_RUNNER", "1".into()),
            devices,
        ],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("Model Runner V2 does not yet support: prefill context parallelism"),
        "{err}"
    );
}

/// A KV pool: the engine's `MultiConnector` chains the PD connector and
/// `AscendStoreConnector`; the stand-in starts only when the memcache
/// client's config (`MMC_LOCAL_CONFIG_PATH`) exists and names a MetaService
/// that answers, and refuses a chain it does not run.
#[test]
fn a_kv_pool_needs_its_config_and_a_live_meta_service() {
    let dir = tmpdir("pool");
    let (kv_p, api, meta) = (free_span(1), free_port(), free_port());
    let pd: Json = serde_json::from_str(&kv_config(
        "MooncakeConnectorV1",
        "kv_producer",
        kv_p,
        "0",
        (1, 1),
        (1, 1),
    ))
    .unwrap();
    let multi = |second: &str, role: &str| {
        json!({
            "kv_connector": "MultiConnector", "kv_role": "kv_producer",
            "kv_connector_extra_config": {"connectors": [pd.clone(), {
                "kv_connector": second, "kv_role": role,
                "kv_connector_extra_config": {"backend": "memcache"},
            }]},
        })
        .to_string()
    };
    let argv = |kv: String| rank_argv(api, 1, 0, free_port(), 1, Some(kv));
    let conf = dir.join("mmc-local.conf");
    let env = |path: &Path| vec![("MMC_LOCAL_CONFIG_PATH", path.to_string_lossy().into_owned())];

    // No config: the client cannot find the pool.
    let (code, _, err) = run(
        VLLM,
        &argv(multi("AscendStoreConnector", "kv_producer")),
        &[],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("MMC_LOCAL_CONFIG_PATH is not set"), "{err}");

    // A config whose MetaService does not answer.
    std::fs::write(
        &conf,
        format!("ock.mmc.meta_service_url = tcp://127.0.0.1:{meta}\nock.mmc.local_service.config_store_url = tcp://127.0.0.1:1\n"),
    )
    .unwrap();
    let (code, _, err) = run(
        VLLM,
        &argv(multi("AscendStoreConnector", "kv_producer")),
        &env(&conf),
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(&format!("does not answer at 127.0.0.1:{meta}")),
        "{err}"
    );

    // Chains the image does not run, or whose roles differ.
    let (code, _, err) = run(
        VLLM,
        &argv(multi("LMCacheConnectorV1", "kv_producer")),
        &env(&conf),
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("expected AscendStoreConnector"), "{err}");
    let (code, _, err) = run(
        VLLM,
        &argv(multi("AscendStoreConnector", "kv_consumer")),
        &env(&conf),
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("differs from AscendStoreConnector's"), "{err}");

    // With the MetaService listening, the engine starts.
    let listener = TcpListener::bind(("127.0.0.1", meta)).unwrap();
    let mut g = spawn(
        VLLM,
        &argv(multi("AscendStoreConnector", "kv_producer")),
        &env(&conf),
    );
    wait_ready("127.0.0.1", api, "/health", &mut g);
    drop(listener);
}
