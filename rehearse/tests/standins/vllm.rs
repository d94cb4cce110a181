//! The vllm stand-in's start-up checks and refusals, native DP over two
//! nodes, and the KV pool.

use crate::node::write_expect;
use crate::{
    VLLM, free_port, free_span, kv_config, newest_vllm, rank_argv, run, s, spawn, tmpdir,
    wait_ready,
};
use pd_rehearse::http;
use serde_json::{Value as Json, json};
use std::net::TcpListener;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

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
fn mixed_native_dp_over_two_nodes() {
    let (api, rpc) = (free_port(), free_port());
    let weights = crate::dsv3_weights();
    let common = |extra: &[&str]| {
        let mut a = s(&[
            "serve",
            &weights,
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

/// A producer's `--kv-transfer-config` for a KV pool: vLLM's MultiConnector
/// over the PD connector `pd` and `second` (with `role`) on memcache.
fn pool_chain(pd: &Json, second: &str, role: &str) -> String {
    json!({
        "kv_connector": "MultiConnector", "kv_role": "kv_producer",
        "kv_connector_extra_config": {"connectors": [pd, {
            "kv_connector": second, "kv_role": role,
            "kv_connector_extra_config": {"backend": "memcache"},
        }]},
    })
    .to_string()
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
    let multi = |second: &str, role: &str| pool_chain(&pd, second, role);
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

/// `/metrics` carries vLLM's gauges of the requests a server holds
/// (`vllm:num_requests_running`, `vllm:num_requests_waiting`): a completion
/// counts as running while it is served, the scrape itself does not.
#[test]
fn metrics_count_the_requests_running() {
    let port = free_port();
    let mut g = spawn(
        VLLM,
        &rank_argv(port, 1, 0, 2, 1, None),
        &[("PD_STANDIN_LATENCY_MS", "1500".into())],
    );
    wait_ready("127.0.0.1", port, "/health", &mut g);
    let running = || {
        let r = http::get("127.0.0.1", port, "/metrics", Duration::from_secs(2)).unwrap();
        assert_eq!(r.status, 200);
        let text = r.text();
        assert!(
            text.contains("\nvllm:num_requests_waiting{model_name=\"") && text.contains("} 0\n"),
            "{text}"
        );
        text.lines()
            .find_map(|l| l.strip_prefix("vllm:num_requests_running"))
            .and_then(|rest| rest.rsplit(' ').next())
            .and_then(|n| n.trim().parse::<u64>().ok())
            .unwrap_or_else(|| panic!("no running gauge in {text}"))
    };
    assert_eq!(running(), 0);
    let request = thread::spawn(move || {
        http::post_json(
            "127.0.0.1",
            port,
            "/v1/completions",
            &json!({"prompt": "x", "max_tokens": 1}),
            Duration::from_secs(10),
        )
        .map(|r| r.status)
    });
    let deadline = Instant::now() + Duration::from_secs(1);
    while running() == 0 {
        assert!(
            Instant::now() < deadline,
            "the completion never counted as running"
        );
        thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(running(), 1);
    assert_eq!(request.join().unwrap().unwrap(), 200);
    assert_eq!(running(), 0);
}

/// On v0.30.0rc2 `--kv-cache-dtype nvfp4_ds_mla` passes argparse (vLLM
/// 0.30.0's choice) and is refused when vLLM builds its `CacheConfig`:
/// vllm-ascend's platform patch narrows the field to its own `Literal`
/// (`Flags::field_refusal`); `int8`, which only the patch adds, gets past
/// both (the stand-in then fails later, at its expectation file).
#[test]
fn vllm_refuses_a_kv_cache_dtype_the_patched_field_lacks() {
    let env = [
        ("PD_STANDIN_IMAGE", "v0.30.0rc2".to_string()),
        ("PD_STANDIN_EXPECT", "/nonexistent/expect".to_string()),
    ];
    let (code, _, err) = run(
        VLLM,
        &s(&["serve", "/m", "--kv-cache-dtype", "nvfp4_ds_mla"]),
        &env,
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("ValidationError") && err.contains("literal_error"),
        "{err}"
    );
    let (_, _, err) = run(VLLM, &s(&["serve", "/m", "--kv-cache-dtype", "int8"]), &env);
    assert!(
        !err.contains("literal_error") && !err.contains("invalid choice"),
        "{err}"
    );
}

/// A KV pool puts a hybrid model's Mamba cache in 'align' mode with prefix
/// caching off (vllm-ascend's `KvStoreAlign`, from v0.21.0rc1): the stand-in
/// then refuses a Qwen3.5 decode batch below the 2048-token attention block
/// at TP4, as vLLM 0.23.0's `validate_block_size` does, and starts with
/// `--disable-hybrid-kv-cache-manager`, which turns the switch off.
#[test]
fn a_kv_pool_puts_the_stand_ins_mamba_cache_in_align_mode() {
    let dir = tmpdir("pool_qwen3_5");
    let model = dir.join("model");
    crate::qwen3_5_weights(&model);
    let (kv_p, api, meta) = (free_span(1), free_port(), free_port());
    let pd: Json = serde_json::from_str(&kv_config(
        "MooncakeConnectorV1",
        "kv_producer",
        kv_p,
        "0",
        (1, 4),
        (1, 4),
    ))
    .unwrap();
    let multi = pool_chain(&pd, "AscendStoreConnector", "kv_producer");
    let argv = |extra: &[&str]| {
        let mut a = rank_argv(api, 1, 0, free_port(), 4, Some(multi.clone()));
        a[1] = model.display().to_string();
        let at = a
            .iter()
            .position(|x| x == "--max_num_batched_tokens")
            .unwrap();
        a[at + 1] = "1024".to_owned();
        a.extend(extra.iter().map(|x| (*x).to_owned()));
        a
    };
    let conf = dir.join("mmc-local.conf");
    std::fs::write(
        &conf,
        format!("ock.mmc.meta_service_url = tcp://127.0.0.1:{meta}\nock.mmc.local_service.config_store_url = tcp://127.0.0.1:1\n"),
    )
    .unwrap();
    let _listener = TcpListener::bind(("127.0.0.1", meta)).unwrap();
    let env = vec![
        ("MMC_LOCAL_CONFIG_PATH", conf.to_string_lossy().into_owned()),
        ("PD_STANDIN_IMAGE", "v0.23.0".to_owned()),
        ("ASCEND_RT_VISIBLE_DEVICES", "0,1,2,3".to_owned()),
        ("PD_STANDIN_EXPECT", "/nonexistent/expect".to_owned()),
    ];
    let env: Vec<(&str, String)> = env.into_iter().collect();
    let (code, _, err) = run(VLLM, &argv(&[]), &env);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(
            "In Mamba cache align mode, block_size (2048) must be <= max_num_batched_tokens (1024)"
        ),
        "{err}"
    );
    let (_, _, err) = run(VLLM, &argv(&["--disable-hybrid-kv-cache-manager"]), &env);
    assert!(err.contains("cannot read PD_STANDIN_EXPECT"), "{err}");
}
