//! `PD_DRY_RUN=1 ./run.sh` shows, per rank of the node, the env the role
//! template (or `run_mixed.sh`) exports and the `vllm serve` argv it would
//! exec; both are checked against what the same script passes to a
//! recording `vllm` when it runs for real, rank by rank, on every node.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl_tests::harness::{Rendered, ranks, render, render_layout, serve, shell_split};
use std::collections::BTreeMap;
use std::process::Command;

/// Words of a line printed with bash's `${x@Q}`, split by bash itself.
fn bash_words(text: &str) -> Vec<String> {
    let out = Command::new("bash")
        .args(["-c", "eval \"w=($1)\" && printf '%s\\0' \"${w[@]}\"", "-"])
        .arg(text)
        .output()
        .expect("bash runs");
    assert!(out.status.success(), "bash cannot read {text:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .split_terminator('\0')
        .map(str::to_owned)
        .collect()
}

/// One rank's dry-run lines: who, its env, its argv.
#[derive(Debug)]
struct RankDry {
    script: String,
    who: String,
    env: BTreeMap<String, String>,
    argv: Vec<String>,
}

fn dry_run_text(r: &Rendered, node: usize, ips: &[&str]) -> String {
    let out = Command::new("bash")
        .arg(r.root.join("run.sh"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("PD_NODE_INDEX", node.to_string())
        .env("PD_NODE_IPS", ips.join(","))
        .env("PD_LOCAL_IP", ips[node])
        .env("PD_NIC", "eth7")
        .env("PD_FORCE_NODE_INDEX", "1")
        .env("PD_DRY_RUN", "1")
        .output()
        .expect("bash runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "dry run of node {node}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

fn rank_lines(text: &str) -> Vec<RankDry> {
    let mut out: Vec<RankDry> = Vec::new();
    for line in text.lines() {
        let Some((script, rest)) = line.split_once(": ") else {
            continue;
        };
        if script == "run.sh" || script == "proxy.sh" {
            continue;
        }
        if let Some((who, env)) = rest.split_once(" env:") {
            let env = bash_words(env)
                .into_iter()
                .map(|kv| {
                    let (k, v) = kv.split_once('=').unwrap_or_else(|| panic!("{kv}"));
                    (k.to_owned(), v.to_owned())
                })
                .collect();
            out.push(RankDry {
                script: script.to_owned(),
                who: who.to_owned(),
                env,
                argv: Vec::new(),
            });
        } else if let Some((who, argv)) = rest.split_once(" would run:") {
            let last = out
                .last_mut()
                .unwrap_or_else(|| panic!("argv before env: {line}"));
            assert_eq!(last.who, who, "{line}");
            last.argv = bash_words(argv);
        } else {
            panic!("unexpected line {line:?}");
        }
    }
    out
}

/// The launcher line run.sh printed.
fn launcher(text: &str, node: usize) -> Vec<String> {
    let prefix = format!("run.sh: node {node} would run:");
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no node command in {text}"));
    shell_split(line)
}

fn check_layout(name: &str) {
    let catalog = layouts::catalog().unwrap();
    let layout = catalog.iter().find(|l| l.name() == name).unwrap();
    check_rendered(&render(name), layout);
}

/// Every node's dry run against what its scripts start, rank by rank.
fn check_rendered(r: &Rendered, layout: &pd_dsl::Layout) {
    let name = layout.name();
    let ips: Vec<String> = (0..layout.node_count())
        .map(|i| format!("10.0.0.{}", i + 1))
        .collect();
    let ips: Vec<&str> = ips.iter().map(String::as_str).collect();
    for n in &layout.placement.nodes {
        let text = dry_run_text(r, n.index, &ips);
        let dry = rank_lines(&text);
        let node_cmd = launcher(&text, n.index);
        // What the node's ranks are started with: the launcher's rank lines
        // (PD) or run_mixed.sh's arguments, one process per node (mixed).
        let (runs, expected): (Vec<(String, Vec<String>)>, usize) = if layout.is_pd() {
            let template = node_cmd
                .iter()
                .skip_while(|a| *a != "--template")
                .nth(1)
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap()
                .to_owned();
            let rows = ranks(r, &node_cmd);
            (
                rows.into_iter().map(|a| (template.clone(), a)).collect(),
                n.ranks.len(),
            )
        } else {
            (vec![("run_mixed.sh".to_owned(), node_cmd[1..].to_vec())], 1)
        };
        assert_eq!(dry.len(), expected, "{name} node {n}: {text}", n = n.index);
        assert_eq!(runs.len(), dry.len(), "{name} node {}", n.index);
        for ((script, args), d) in runs.iter().zip(&dry) {
            assert_eq!(&d.script, script, "{name} node {}", n.index);
            // run.sh's exports as the dry run printed them, the rest from the template.
            let inherited: Vec<(&str, &str)> = [
                "ENGINE_ID",
                "KV_PORT",
                "HCCL_IF_IP",
                "GLOO_SOCKET_IFNAME",
                "TP_SOCKET_IFNAME",
                "HCCL_SOCKET_IFNAME",
                "NO_PROXY",
            ]
            .iter()
            .filter_map(|k| d.env.get(*k).map(|v| (*k, v.as_str())))
            .collect();
            // run.sh exports the node index where some node has its own
            // settings (the templates pick them by it).
            let index = n.index.to_string();
            let mut inherited = inherited;
            if !layout.node_serve.is_empty() {
                inherited.push(("PD_NODE", index.as_str()));
            }
            assert_eq!(
                d.env.get("HCCL_IF_IP").map(String::as_str),
                Some(ips[n.index]),
                "{d:?}"
            );
            assert_eq!(
                d.env.get("GLOO_SOCKET_IFNAME").map(String::as_str),
                Some("eth7")
            );
            let served = serve(r, script, args, &inherited);
            assert_eq!(d.argv[0], "vllm", "{d:?}");
            assert_eq!(
                d.argv[1..],
                served.argv[..],
                "{name} node {} {}",
                n.index,
                d.who
            );
            for (k, v) in &d.env {
                assert_eq!(
                    served.env.get(k),
                    Some(v),
                    "{name} node {} {}: {k}",
                    n.index,
                    d.who
                );
            }
            // Every variable the script exports is shown, with the value
            // of this node's settings (its own block's, else its role's).
            assert!(d.env.contains_key("ASCEND_RT_VISIBLE_DEVICES"), "{d:?}");
            let own = layout
                .node_serve
                .get(&n.index)
                .or_else(|| layout.serve.get(&n.role))
                .unwrap();
            for (k, v) in &own.env {
                assert_eq!(
                    d.env.get(k).map(String::as_str),
                    Some(v.text()),
                    "{name} node {}: {k}",
                    n.index
                );
            }
            // And every option of those settings, in order.
            let options: Vec<String> = own
                .options(layout.model, &layout.served_model_name)
                .into_iter()
                .flat_map(|(f, v)| std::iter::once(f).chain(v))
                .collect();
            assert!(
                d.argv
                    .windows(options.len())
                    .any(|w| w == options.as_slice()),
                "{name} node {}: {options:?} not in {:?}",
                n.index,
                d.argv
            );
        }
    }
}

#[test]
fn pd_dry_run_shows_every_ranks_env_and_command() {
    check_layout("deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d");
    check_layout("deepseek-v4-flash-w8a8-mtp/a3-1p3d");
}

#[test]
fn mixed_dry_run_shows_each_nodes_env_and_command() {
    check_layout("deepseek-v3.1-w8a8-mtp-quarot/a2x2-mixed-dp4tp4");
}

/// A layout whose nodes run their own settings (`nodes:`): each node's dry
/// run shows its own env and options, the others their role's.
#[test]
fn per_node_settings_reach_only_their_node() {
    for (json, node, own, role) in [
        (
            include_str!("../../pd-dsl/tests/fixtures/v3_1_a3_2p1d_node_settings.json"),
            1,
            "0.88",
            "0.9",
        ),
        (
            include_str!("../../pd-dsl/tests/fixtures/v3_1_a2_mixed_2node_node_settings.json"),
            1,
            "0.88",
            "0.92",
        ),
    ] {
        let spec: pd_dsl::LayoutSpec = serde_json::from_str(json).expect("fixture");
        let layout = pd_dsl::check(&spec).unwrap_or_else(|d| panic!("{d}"));
        assert!(layout.node_serve.contains_key(&node));
        let r = render_layout(&layout);
        check_rendered(&r, &layout);
        // The node's memory share differs from the node before it, which
        // runs the role's.
        let ips: Vec<String> = (0..layout.node_count())
            .map(|i| format!("10.0.0.{}", i + 1))
            .collect();
        let ips: Vec<&str> = ips.iter().map(String::as_str).collect();
        let share = |n: usize| {
            let dry = rank_lines(&dry_run_text(&r, n, &ips));
            let argv = &dry[0].argv;
            let i = argv
                .iter()
                .position(|a| a == "--gpu-memory-utilization")
                .expect("a memory share");
            argv[i + 1].clone()
        };
        assert_eq!(share(node), own, "{}", layout.name());
        assert_eq!(share(node - 1), role, "{}", layout.name());
    }
}

/// A single-node layout runs with `./run.sh` alone: this host is node 0, at
/// `PD_LOCAL_IP` or its first address that is not loopback or link-local;
/// a multi-node layout still asks for the node addresses.
#[test]
fn a_single_node_layout_needs_no_node_ips() {
    let catalog = layouts::catalog().expect("catalog");
    let one = catalog
        .iter()
        .find(|l| l.node_count() == 1)
        .expect("a single-node layout");
    let r = render_layout(one);
    let run = |envs: &[(&str, &str)]| {
        let mut cmd = Command::new("bash");
        cmd.arg(r.root.join("run.sh"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("PD_NIC", "eth7")
            .env("PD_DRY_RUN", "1");
        for (k, v) in envs {
            cmd.env(k, v);
        }
        cmd.output().expect("bash runs")
    };
    let out = run(&[("PD_LOCAL_IP", "192.0.2.77"), ("PD_FORCE_NODE_INDEX", "1")]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    // Node 0 is this host at its address: the DP master and HCCL_IF_IP.
    assert!(text.contains("run.sh: node 0 would run:"), "{text}");
    assert!(text.contains("HCCL_IF_IP='192.0.2.77'"), "{text}");
    let multi = catalog
        .iter()
        .find(|l| l.node_count() > 1)
        .expect("a multi-node layout");
    let r = render_layout(multi);
    let out = Command::new("bash")
        .arg(r.root.join("run.sh"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("PD_DRY_RUN", "1")
        .output()
        .expect("bash runs");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("set PD_NODE_INDEX and PD_NODE_IPS"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What a node says of the others when it stops on an error fits what
/// happened: a dry run started nothing anywhere (nothing said), a node that
/// failed before starting anything leaves the others waiting for it.
#[test]
fn the_error_tail_fits_the_situation() {
    let catalog = layouts::catalog().expect("catalog");
    let multi = catalog
        .iter()
        .find(|l| l.node_count() > 1)
        .expect("multi-node");
    let r = render_layout(multi);
    let ips: Vec<String> = (0..multi.node_count() + 1)
        .map(|i| format!("192.0.2.{}", i + 10))
        .collect();
    let run = |dry: bool| {
        let mut cmd = Command::new("bash");
        cmd.arg(r.root.join("run.sh"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("PD_NODE_INDEX", "0")
            // One address too many: refused before anything starts.
            .env("PD_NODE_IPS", ips.join(","));
        if dry {
            cmd.env("PD_DRY_RUN", "1");
        }
        let out = cmd.output().expect("bash runs");
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let dry = run(true);
    assert!(
        dry.contains("runs on")
            && !dry.contains("keep running")
            && !dry.contains("started nothing"),
        "{dry}"
    );
    let real = run(false);
    assert!(
        real.contains("this node started nothing") && !real.contains("keep running"),
        "{real}"
    );
}

/// A rank whose template refuses its dry run stops the node's dry run:
/// run.sh exits non-zero, naming the rank, its command and its exit code.
#[test]
fn a_rank_that_fails_its_dry_run_fails_the_nodes() {
    let r = render("deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d");
    let catalog = layouts::catalog().unwrap();
    let layout = catalog
        .iter()
        .find(|l| l.name() == "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d")
        .unwrap();
    let decode = layout
        .placement
        .nodes
        .iter()
        .find(|n| n.role == pd_dsl::Role::Decode)
        .expect("a decode node");
    std::fs::write(
        r.root.join("run_dp_template_decode.sh"),
        "echo 'the template refuses' >&2\nexit 3\n",
    )
    .unwrap();
    let ips: Vec<String> = (0..layout.node_count())
        .map(|i| format!("10.0.0.{}", i + 1))
        .collect();
    let out = Command::new("bash")
        .arg(r.root.join("run.sh"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("PD_NODE_INDEX", decode.index.to_string())
        .env("PD_NODE_IPS", ips.join(","))
        .env("PD_LOCAL_IP", &ips[decode.index])
        .env("PD_NIC", "eth7")
        .env("PD_FORCE_NODE_INDEX", "1")
        .env("PD_DRY_RUN", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let first = decode.ranks[0].dp_rank;
    for want in [
        "the template refuses".to_owned(),
        format!("the dry run of rank {first} (bash "),
        "run_dp_template_decode.sh 0".to_owned(),
        "exited with code 3".to_owned(),
        format!("the dry run of node {}'s ranks failed", decode.index),
    ] {
        assert!(stderr.contains(&want), "{want:?} not in {stderr}");
    }
    // The first failing rank stops it: no later rank ran.
    assert_eq!(
        stderr.matches("the template refuses").count(),
        1,
        "{stderr}"
    );
}
