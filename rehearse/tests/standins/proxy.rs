//! Prefill to decode through the proxy stand-in, its balancing and its
//! answers.

use crate::{
    PROXY, VLLM, free_port, free_span, kv_config, rank_argv, run, s, spawn, tmpdir, wait_ready,
};
use pd_rehearse::http;
use serde_json::{Value as Json, json};
use std::net::TcpListener;
use std::thread;
use std::time::Duration;

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
