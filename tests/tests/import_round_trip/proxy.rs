//! The proxy side of the round trip: a proxy endpoint changed, dropped,
//! moved or out of node order is a difference; the runner's host
//! placeholders, a mixed deployment without a proxy, and differences the
//! importer reports and acknowledges.

use super::*;

/// The values of `flag` in the imported proxy command.
fn proxy_values<'a>(imported: &'a mut Imported, flag: &str) -> &'a mut Vec<String> {
    let proxy = imported.proxy.as_mut().expect("the input runs a proxy");
    &mut proxy
        .options
        .iter_mut()
        .find(|(f, _)| f == flag)
        .unwrap_or_else(|| panic!("the proxy passes no {flag}"))
        .1
}

#[test]
fn a_proxy_endpoint_changed_dropped_or_moved_is_a_difference() {
    let u = unit("a3-v31-2p1d-v1");
    let at = "a3-v31-2p1d-v1/launch.sh: proxy: ";
    let has = |failures: &[String], want: &str| {
        failures.iter().any(|f| f.ends_with(&format!("{at}{want}")))
    };
    let runs = proxy_round_trip(
        &u,
        &[
            // The fixture as read agrees (the last decode node, 10.0.0.4,
            // is named only by the proxy: it stands for node 3, run.sh's
            // 10.99.0.4).
            &|_| {},
            // An endpoint dropped.
            &|i| {
                proxy_values(i, "--decoder-hosts").pop();
                proxy_values(i, "--decoder-ports").pop();
            },
            // A port read wrong.
            &|i| proxy_values(i, "--prefiller-ports")[1] = "7102".into(),
            // The same endpoints in another order route otherwise.
            &|i| proxy_values(i, "--prefiller-hosts").rotate_left(2),
            // A host list shorter than its ports.
            &|i| proxy_values(i, "--decoder-hosts").truncate(1),
            // The port, the listen address, a flag ours does not pass.
            &|i| {
                proxy_values(i, "--port")[0] = "2000".into();
                proxy_values(i, "--host")[0] = "0.0.0.0".into();
                let p = i.proxy.as_mut().expect("proxy");
                p.options.push(("--max-retries".into(), vec!["5".into()]));
            },
            // Another script.
            &|i| {
                i.proxy.as_mut().expect("proxy").script =
                    "load_balance_proxy_layerwise_server_example.py".into();
            },
            // No proxy at all.
            &|i| i.proxy = None,
        ],
    );
    let [same, dropped, port, moved, short, flags, script, none] = &runs[..] else {
        panic!("{runs:#?}");
    };
    assert!(same.is_empty(), "{same:#?}");
    let want: &[(&Vec<String>, &str)] = &[
        (
            dropped,
            "the decode endpoints (`--decoder-hosts`, `--decoder-ports`): the input lists 31, ours 32; at position 32, the input has nothing, ours `10.99.0.4:7115`",
        ),
        (
            port,
            "the prefill endpoints (`--prefiller-hosts`, `--prefiller-ports`): the input lists 4, ours 4; at position 2, the input has `10.0.0.1:7102`, ours `10.0.0.1:7101`",
        ),
        (
            moved,
            "the prefill endpoints (`--prefiller-hosts`, `--prefiller-ports`): the input lists 4, ours 4; at position 1, the input has `10.0.0.2:7100`, ours `10.0.0.1:7100`",
        ),
        (
            short,
            "the decode endpoints (`--decoder-hosts`, `--decoder-ports`): the input lists 32, ours 32; at position 2, the input has `?:7101`, ours `10.0.0.3:7101`",
        ),
        (flags, "`--port`: the input passes `2000`, ours `1999`"),
        (
            flags,
            "`--host`: the input passes `0.0.0.0`, ours `10.0.0.1`",
        ),
        (
            flags,
            "`--max-retries 5`: the input passes it, ours does not",
        ),
        (
            script,
            "the input runs `load_balance_proxy_layerwise_server_example.py`, ours `load_balance_proxy_server_example.py`",
        ),
    ];
    for (failures, message) in want {
        assert!(has(failures, message), "{message}: {failures:#?}");
    }
    assert!(
        none.iter().any(|x| x.contains(at)
            && x.contains("load_balance_proxy_server_example.py --host 10.0.0.1 --port 1999")
            && x.ends_with(", the input runs no proxy")),
        "{none:#?}"
    );
}

#[test]
fn a_config_names_proxy_hosts_by_the_runner_placeholders() {
    let u = Unit {
        files: vec![root().join("configs/a3-v31-2p1d-v1.yaml")],
        hardware: None,
    };
    let imported = input_side(&u);
    let proxy = imported
        .proxy
        .as_ref()
        .expect("the e2e runner starts a proxy");
    assert_eq!(proxy.script, "load_balance_proxy_server_example.py");
    let decoders = &proxy.options[4];
    assert_eq!(decoders.0, "--decoder-hosts");
    assert_eq!(
        (
            decoders.1.len(),
            decoders.1[0].as_str(),
            decoders.1[31].as_str()
        ),
        (32, "${NODE_2_IP}", "${NODE_3_IP}")
    );
    // `${NODE_2_IP}` is the decode DP master's placeholder, bound to
    // 10.0.100.2; `${NODE_3_IP}` is named by the proxy only: node 3.
    let runs = proxy_round_trip(
        &u,
        &[&|_| {}, &|i| {
            proxy_values(i, "--decoder-hosts")[31] = "${NODE_2_IP}".into();
        }],
    );
    assert!(runs[0].is_empty(), "{runs:#?}");
    assert!(
        runs[1].iter().any(|x| x.ends_with(
            "proxy: the decode endpoints (`--decoder-hosts`, `--decoder-ports`): the input lists 32, ours 32; at position 32, the input has `10.0.100.2:7115`, ours `10.99.0.4:7115`"
        )),
        "{runs:#?}"
    );
}

#[test]
fn a_mixed_deployment_runs_no_proxy_on_either_side() {
    let u = unit("a3-v31-mixed-1node");
    assert!(input_side(&u).proxy.is_none());
    let runs = proxy_round_trip(&u, &[&|_| {}]);
    assert!(runs[0].is_empty(), "{runs:#?}");
}

#[test]
fn a_proxy_difference_the_importer_reports_is_acknowledged_and_only_then() {
    // The e2e runner starts the load-balance proxy for a layerwise
    // connector; pd-dsl the layerwise one.
    let u = Unit {
        files: vec![root().join("configs/a3-v31-1p1d-layerwise.yaml")],
        hardware: None,
    };
    let runs = proxy_round_trip(
        &u,
        &[&|_| {}, &|i| {
            i.notes
                .retain(|n| !n.what.starts_with("the e2e runner starts"));
        }],
    );
    assert!(runs[0].is_empty(), "{runs:#?}");
    assert!(
        runs[1].iter().any(|f| f.ends_with(
            "proxy: the input runs `load_balance_proxy_server_example.py`, ours `load_balance_proxy_layerwise_server_example.py`"
        )),
        "{runs:#?}"
    );
    // One decoder host for sixteen ports: the proxy would refuse to start.
    let runs = proxy_round_trip(
        &unit("a3-v4-1p1d-hybrid"),
        &[&|_| {}, &|i| {
            i.notes.retain(|n| !n.what.starts_with("the proxy lists"));
        }],
    );
    assert!(runs[0].is_empty(), "{runs:#?}");
    assert!(
        runs[1].iter().any(|f| f.ends_with(
            "proxy: the decode endpoints (`--decoder-hosts`, `--decoder-ports`): the input lists 16, ours 16; at position 2, the input has `?:7101`, ours `10.1.0.2:7101`"
        )),
        "{runs:#?}"
    );
}

#[test]
fn a_proxy_list_out_of_node_order_is_reported_so_the_round_trip_holds() {
    // The same endpoints, prefill nodes swapped: the proxy balances over
    // them in another order, and the import must say so.
    let tmp = tempfile::tempdir().unwrap();
    let src = root().join("scripts/a3-v31-2p1d-v1");
    for f in sorted(&src) {
        let text = std::fs::read_to_string(&f).unwrap();
        let text = if f.ends_with("proxy.sh") {
            text.replace(
                "--prefiller-hosts 10.0.0.1 10.0.0.1 10.0.0.2 10.0.0.2",
                "--prefiller-hosts 10.0.0.2 10.0.0.2 10.0.0.1 10.0.0.1",
            )
        } else {
            text
        };
        std::fs::write(tmp.path().join(f.file_name().unwrap()), text).unwrap();
    }
    let u = Unit {
        files: sorted(tmp.path()),
        hardware: None,
    };
    let imported = input_side(&u);
    assert!(
        imported.notes.iter().any(|n| n.what
            == "the proxy lists the prefill endpoints out of node order (entry 1: `10.0.0.2:7100`)"
            && n.at.line == 2),
        "{:?}",
        imported.notes
    );
    let runs = proxy_round_trip(&u, &[&|_| {}, &|i| i.notes.clear()]);
    assert!(runs[0].is_empty(), "{runs:#?}");
    assert!(
        runs[1].iter().any(|f| f.ends_with(
            "proxy: the prefill endpoints (`--prefiller-hosts`, `--prefiller-ports`): the input lists 4, ours 4; at position 1, the input has `10.0.0.2:7100`, ours `10.0.0.1:7100`"
        )),
        "{runs:#?}"
    );
    // A node the input addresses only in the proxy, listed before its
    // engine's DP master.
    let proxy = tmp.path().join("proxy.sh");
    let text = std::fs::read_to_string(&proxy).unwrap();
    let d = "10.0.0.3 ".repeat(16);
    let e = "10.0.0.4 ".repeat(16);
    let swapped = text.replace(
        &format!("{d}{}", e.trim_end()),
        &format!("{e}{}", d.trim_end()),
    );
    assert_ne!(swapped, text);
    std::fs::write(&proxy, swapped).unwrap();
    let notes: Vec<String> = input_side(&u).notes.into_iter().map(|n| n.what).collect();
    assert!(
        notes.contains(
            &"the proxy lists the decode endpoints out of node order (entry 1: `10.0.0.4:7100`)"
                .to_owned()
        ),
        "{notes:?}"
    );
}
