//! Per-role ports, which no registered layout uses: end to end, with
//! engines spanning nodes on both sides, and `stop.sh` on each node's own
//! ports.

use crate::rehearse_layout;

/// The V3.1 tutorial's A3 2P1D shape with per-role ports: every prefill
/// engine serves from 7100 with the layout-wide DP RPC port 12321, the
/// decode engine (over two nodes) from 9000 with its own 13000. Not a shipped layout: no catalog layout
/// uses per-role ports, so this is the only end-to-end run of that path of
/// `run.sh`, the proxy lists, `verify.sh` and `stop.sh`.
fn per_role_ports() -> pd_dsl::Layout {
    let spec = pd_dsl::layout! {
        name: "rehearsal/a3-2p1d-per-role-ports",
        model: deepseek_v3_1_w8a8_mtp_quarot,
        hardware: a3,
        image: "v0.23.0",
        topology: <prefill 2 x dp2tp8; decode 1 x dp32tp1;>,
        connector: mooncake_v1 { kv_port: { prefill: [36100, 36200], decode: 36300 } },
        ports: {
            dp_rpc: 12321,
            prefill: { api: 7100 },
            decode: { api: 9000, dp_rpc: 13000 },
        },
        proxy: { port: 1999 },
        serve: { expert_parallel: true, max_model_len: 32768 },
        provenance: { recorded: "2026-12-01" },
    };
    pd_dsl::check(&spec).unwrap_or_else(|e| panic!("{e}"))
}

/// Each role's engines as `(API start port, DP RPC port)`.
fn role_ports(l: &pd_dsl::Layout, role: pd_dsl::Role) -> Vec<(u32, Option<u32>)> {
    l.placement
        .engines
        .iter()
        .filter(|e| e.role == role)
        .map(|e| (e.api_port, e.dp_rpc_port))
        .collect()
}

/// `l` comes up under both stand-in proxy policies and with its pods'
/// environment, verify.sh passes and every prefill and decode rank serves
/// (so the proxy lists name every rank at its own role's port).
fn assert_rehearses_end_to_end(l: &pd_dsl::Layout) {
    use pd_rehearse::rehearsal::Policy;
    // The shape these tests are about: both roles run on several nodes.
    for role in [pd_dsl::Role::Prefill, pd_dsl::Role::Decode] {
        let nodes = l.placement.nodes.iter().filter(|n| n.role == role).count();
        assert!(nodes >= 2, "{role} runs on {nodes} node(s)");
    }
    assert!(!l.uniform_dp_rpc_port());
    for policy in Policy::ALL {
        let (outcome, out) = rehearse_layout(l, |o| o.proxy_policy = policy);
        assert!(outcome.passed, "{policy:?}:\n{out}\n{:?}", outcome.failures);
        for needle in [
            format!("PASS {}", l.name()),
            "every prefill and decode rank served".into(),
            "verify.sh: ok".into(),
            "node 0: run.sh: ready: the proxy answers on http://127.0.0.1:1999".into(),
        ] {
            assert!(
                out.contains(&needle),
                "{policy:?}: missing {needle:?} in\n{out}"
            );
        }
    }
    // The same with each pod's environment from the layout's `k8s/`
    // manifests, the proxy as its own Deployment.
    let (outcome, out) = rehearse_layout(l, |o| o.k8s_env = true);
    assert!(outcome.passed, "k8s env:\n{out}\n{:?}", outcome.failures);
    let proxy = pd_rehearse::rehearsal::node_ip(l.node_count());
    for needle in [
        format!("proxy on {proxy}:1999"),
        "every prefill and decode rank served".into(),
        "verify.sh: ok".into(),
    ] {
        assert!(
            out.contains(&needle),
            "k8s env: missing {needle:?} in\n{out}"
        );
    }
}

#[test]
fn per_role_ports_rehearse_end_to_end() {
    let l = per_role_ports();
    assert_eq!(
        role_ports(&l, pd_dsl::Role::Prefill),
        [(7100, Some(12321)), (7100, Some(12321))]
    );
    assert_eq!(role_ports(&l, pd_dsl::Role::Decode), [(9000, Some(13000))]);
    assert_eq!(l.dp_rpc_port, Some(12321));
    assert_rehearses_end_to_end(&l);
}

/// Every port per role, none layout-wide, and the prefill engine over two
/// nodes too: its second node must dial the prefill DP master at 12400.
#[test]
fn per_role_ports_with_engines_spanning_nodes_on_both_sides_rehearse() {
    let spec = pd_dsl::layout! {
        name: "rehearsal/a3-1p1d-per-role-ports",
        model: deepseek_v3_1_w8a8_mtp_quarot,
        hardware: a3,
        image: "v0.23.0",
        topology: <prefill 1 x dp4tp8; decode 1 x dp32tp1;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36300 } },
        ports: {
            prefill: { api: 7200, dp_rpc: 12400 },
            decode: { api: 9000, dp_rpc: 13000 },
        },
        proxy: { port: 1999 },
        serve: { expert_parallel: true, max_model_len: 32768 },
        provenance: { recorded: "2026-12-01" },
    };
    let l = pd_dsl::check(&spec).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(role_ports(&l, pd_dsl::Role::Prefill), [(7200, Some(12400))]);
    assert_eq!(role_ports(&l, pd_dsl::Role::Decode), [(9000, Some(13000))]);
    // With no common port, the layout-wide one is the first engine's.
    assert_eq!(l.dp_rpc_port, Some(12400));
    assert_rehearses_end_to_end(&l);
}

/// stop.sh on a per-role-ports layout checks each node's own ports: the
/// decode master's API ports from 9000 and its DP RPC port 13000, never the
/// prefill engines' 7100/12321.
#[test]
fn stop_sh_frees_each_nodes_own_per_role_ports() {
    use pd_rehearse::rehearsal::Action;
    let l = per_role_ports();
    // A node's own ports, from the placement: its API span and its engine's
    // DP RPC port.
    let own = |n: usize| -> (String, String, String) {
        let node = &l.placement.nodes[n];
        let api: Vec<u32> = node.ranks.iter().filter_map(|r| r.api_port).collect();
        let (first, last) = (api[0], api[api.len() - 1]);
        let span = if first == last {
            first.to_string()
        } else {
            format!("{first}-{last}")
        };
        let rpc = l.placement.engines[node.engine]
            .dp_rpc_port
            .expect("a PD engine has a DP RPC port");
        (span, first.to_string(), rpc.to_string())
    };
    // Node 2 is the decode master, node 1 a prefill engine's: their ports
    // differ by role.
    assert_ne!(own(2).1, own(1).1);
    assert_ne!(own(2).2, own(1).2);
    for (node, other) in [(2, 1), (1, 2)] {
        let (span, _, rpc) = own(node);
        let (_, other_api, other_rpc) = own(other);
        let (has, lacks) = ([span, rpc], [other_api, other_rpc]);
        let (outcome, out) = rehearse_layout(&l, |o| o.action = Some(Action::Stop(node)));
        assert!(
            outcome.passed,
            "node {node}:\n{out}\n{:?}",
            outcome.failures
        );
        let line = out
            .lines()
            .map(str::trim_start)
            .find(|l| l.starts_with(&format!("stop.sh: node {node} stopped; ")))
            .unwrap_or_else(|| panic!("no stop line for node {node} in\n{out}"));
        for p in &has {
            assert!(line.contains(p.as_str()), "missing {p} in {line:?}");
        }
        for p in &lacks {
            assert!(!line.contains(p.as_str()), "{p} in {line:?}");
        }
        for needle in [
            format!("no process of node {node} left, its ports are free"),
            format!("stop.sh {node} on node {node} again: stop.sh: node {node}: nothing running"),
        ] {
            assert!(out.contains(&needle), "missing {needle:?} in\n{out}");
        }
    }
}
