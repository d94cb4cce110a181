//! `catalog rehearse`: every registered layout end to end, and every fault.
//! Rehearsals share the loopback addresses and the layouts' ports, so they
//! run one at a time (a process-wide lock); each is bounded by a timeout and
//! must leave no process and no temp dir behind.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

const CATALOG: &str = env!("CARGO_BIN_EXE_catalog");
const PD: &str = "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d";
const MIXED: &str = "deepseek-v3.1-w8a8-mtp-quarot/a2x2-mixed-dp4tp4";
const LIMIT: Duration = Duration::from_secs(150);

static SERIAL: Mutex<()> = Mutex::new(());

struct Run {
    code: Option<i32>,
    out: String,
    took: Duration,
}

/// `catalog rehearse ARGS...`, bounded; checks nothing of it is left.
fn rehearse(args: &[&str]) -> Run {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let started = Instant::now();
    let mut child = Command::new(CATALOG)
        .arg("rehearse")
        .args(args)
        .arg("--timeout")
        .arg("90")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("catalog rehearse {args:?} did not finish within {LIMIT:?}");
        }
        thread::sleep(Duration::from_millis(50));
    };
    let out = reader.join().unwrap();
    let took = started.elapsed();
    assert_nothing_left(&out);
    eprintln!("rehearse {args:?}: {:.1}s", took.as_secs_f64());
    Run {
        code: status.code(),
        out,
        took,
    }
}

/// Nothing of a rehearsal is left: its temp dir (named in `out`) is gone and
/// no process mentions it.
fn assert_nothing_left(out: &str) {
    let dir = out
        .lines()
        .find_map(|l| l.split("work dir ").nth(1))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no work dir in output:\n{out}"));
    // The reaper removes the dir right after the rehearsal exits.
    let deadline = Instant::now() + Duration::from_secs(10);
    while Path::new(dir).exists() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(50));
    }
    assert!(!Path::new(dir).exists(), "{dir} left behind\n{out}");
    let strays = processes_mentioning(dir);
    assert!(
        strays.is_empty(),
        "processes left running: {strays:?}\n{out}"
    );
}

/// Processes whose command line or environment mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.parse::<u32>().is_err() {
            continue;
        }
        for f in ["cmdline", "environ"] {
            if let Ok(b) = std::fs::read(e.path().join(f))
                && String::from_utf8_lossy(&b).contains(needle)
            {
                out.push(format!("{name}: {}", String::from_utf8_lossy(&b)));
                break;
            }
        }
    }
    out
}

fn assert_fails(run: &Run, needles: &[&str]) {
    assert_eq!(run.code, Some(5), "exit code\n{}", run.out);
    assert!(run.out.contains("\nFAIL "), "{}", run.out);
    for n in needles {
        assert!(run.out.contains(n), "missing {n:?} in\n{}", run.out);
    }
}

#[test]
fn every_registered_layout_rehearses_end_to_end() {
    let layouts = layouts::catalog().unwrap();
    let mut times = Vec::new();
    // Every PD layout under both stand-in proxy policies: upstream's
    // least-loaded policy reaches every rank only when requests overlap.
    let runs = layouts.iter().flat_map(|l| {
        let policies: &[&str] = if l.is_pd() {
            &["round-robin", "least-loaded"]
        } else {
            &["round-robin"]
        };
        policies.iter().map(move |p| (l, *p))
    });
    for (l, policy) in runs {
        let run = rehearse(&[l.name(), "--proxy-policy", policy]);
        assert_eq!(run.code, Some(0), "{}", run.out);
        assert!(
            run.out.contains(&format!("PASS {}", l.name())),
            "{}",
            run.out
        );
        let what = if l.is_pd() {
            "every prefill and decode rank served"
        } else {
            "every API server served"
        };
        assert!(run.out.contains(what), "{}", run.out);
        assert!(run.out.contains("verify.sh: ok"), "{}", run.out);
        // Node 0 says it is ready, and verify.sh finds it in a fresh shell
        // (no PD_NODE_IPS) through the URL run.sh recorded.
        let front = if l.is_pd() {
            "the proxy"
        } else {
            "the API server"
        };
        assert!(
            run.out.contains(&format!(
                "node 0: run.sh: ready: {front} answers on http://127.0.0.1:"
            )),
            "{}",
            run.out
        );
        assert!(
            run.out
                .contains("/endpoint.url, recorded by run.sh on node 0)"),
            "{}",
            run.out
        );
        times.push(format!(
            "{} {policy} {:.1}s",
            l.name(),
            run.took.as_secs_f64()
        ));
    }
    eprintln!("{}", times.join("\n"));
}

#[test]
fn a_rank_killed_after_start_stops_its_node_loudly() {
    let run = rehearse(&[PD, "--kill", "2:5"]);
    assert_fails(
        &run,
        &[
            "node 2 (127.0.0.3) decode rank 5 died after start",
            "launch_online_dp.py: error: rank 5 was killed by signal 9",
            "run.sh exited with code 137",
        ],
    );
    let run = rehearse(&[MIXED, "--kill", "1:2"]);
    assert_fails(
        &run,
        &[
            "node 1 (127.0.0.2) mixed rank 2 died after start",
            "run.sh exited with code 137",
        ],
    );
}

#[test]
fn a_port_in_use_fails_that_nodes_preflight() {
    let run = rehearse(&[PD, "--fault", "port-in-use"]);
    assert_fails(
        &run,
        &[
            "node 3 (127.0.0.4, decode ranks 16-31): run.sh exited with code 1",
            "preflight: FAIL ports: already in use: 7100",
            "7100 = decode rank 16's API port",
        ],
    );
}

#[test]
fn a_missing_model_fails_every_preflight() {
    let run = rehearse(&[PD, "--fault", "missing-model"]);
    assert_fails(
        &run,
        &[
            "node 0 (127.0.0.1, prefill ranks 0-1): run.sh exited with code 1",
            "node 3 (127.0.0.4, decode ranks 16-31): run.sh exited with code 1",
            "preflight: FAIL model_dir: weights directory",
        ],
    );
}

#[test]
fn a_wrong_npu_count_fails_that_nodes_preflight() {
    let run = rehearse(&[PD, "--fault", "wrong-npu-count"]);
    assert_fails(
        &run,
        &[
            "node 3 (127.0.0.4, decode ranks 16-31): run.sh exited with code 1",
            "preflight: FAIL npu_count: npu-smi info -l reports 8 NPUs, the layout's hardware has 16",
        ],
    );
}

#[test]
fn an_unreachable_dp_master_fails_the_non_master_ranks() {
    let run = rehearse(&[PD, "--fault", "unreachable-master"]);
    assert_fails(
        &run,
        &[
            "launch_online_dp.py: error: rank 16 exited with code 4",
            "node 3 (127.0.0.4) decode rank 16: vllm stand-in: DP master 127.0.0.3:12321 unreachable after 3s",
        ],
    );
    let run = rehearse(&[MIXED, "--fault", "unreachable-master"]);
    assert_fails(
        &run,
        &["node 1 (127.0.0.2) mixed rank 2: vllm stand-in: DP master 127.0.0.1:13389 unreachable"],
    );
}

#[test]
fn a_rank_missing_from_the_proxy_lists_fails_naming_it() {
    for policy in ["round-robin", "least-loaded"] {
        let run = rehearse(&[PD, "--fault", "proxy-misses-rank", "--proxy-policy", policy]);
        assert_fails(
            &run,
            &[
                "1 of 36 rank(s) got no request",
                "node 3 decode rank 31 (127.0.0.4:7115)",
                "likely causes, most likely first:\n    1. the running proxy's lists miss 127.0.0.4:7115 (its command line has 4 prefill and 31 decode entries; the layout has 4 and 32)",
            ],
        );
        assert!(!run.out.contains("decode-only fallback"), "{}", run.out);
    }
}

/// HUP (a dropped SSH session), TERM and INT on one node's run.sh stop every
/// rank of that node: nothing is left holding NPUs or ports.
#[test]
fn a_signal_to_run_sh_stops_every_rank_of_its_node() {
    for (layout, node, sig, code) in [
        (PD, "3", "HUP", 129),
        (PD, "0", "HUP", 129),
        (PD, "3", "TERM", 143),
        (PD, "3", "INT", 130),
        (MIXED, "0", "HUP", 129),
        (MIXED, "1", "HUP", 129),
    ] {
        let run = rehearse(&[layout, "--signal", &format!("{node}:{sig}")]);
        assert_eq!(run.code, Some(0), "{}", run.out);
        assert!(
            run.out.contains(&format!(
                "SIG{sig} to node {node}'s run.sh: run.sh exited with code {code} after"
            )),
            "{}",
            run.out
        );
        assert!(
            run.out.contains(&format!(
                "no process of node {node} left, its ports are free"
            )),
            "{}",
            run.out
        );
    }
}

/// stop.sh stops one node by its records, frees its ports, and is idempotent.
#[test]
fn stop_sh_stops_one_node_and_is_idempotent() {
    for (layout, node, ports) in [
        (PD, "0", "ports 1999 7100-7101 12321 30000-30015 are free"),
        (PD, "2", "are free"),
        (MIXED, "0", "are free"),
        (MIXED, "1", "it binds no port"),
    ] {
        let run = rehearse(&[layout, "--stop", node]);
        assert_eq!(run.code, Some(0), "{}", run.out);
        assert!(
            run.out.lines().any(|l| l
                .trim_start()
                .starts_with(&format!("stop.sh: node {node} stopped; "))
                && l.ends_with(ports)),
            "missing {ports:?} in\n{}",
            run.out
        );
        for needle in [
            format!("stop.sh {node} on node {node}: run.sh exited with code 143 after"),
            format!("no process of node {node} left, its ports are free"),
            format!("stop.sh: node {node} stopped; "),
            format!("stop.sh {node} on node {node} again: stop.sh: node {node}: nothing running"),
        ] {
            assert!(
                run.out.contains(&needle),
                "missing {needle:?} in\n{}",
                run.out
            );
        }
    }
}

/// A proxy that cannot start is caught by preflight before any model loads;
/// one that exits is restarted a bounded number of times, then node 0 stops
/// naming the cause.
#[test]
fn a_failing_proxy_stops_node_0_naming_the_cause() {
    let run = rehearse(&[PD, "--fault", "missing-proxy-script"]);
    assert_fails(
        &run,
        &[
            "node 0 (127.0.0.1, prefill ranks 0-1): run.sh exited with code 1",
            "preflight: FAIL proxy_script: /nonexistent/load_balance_proxy_server_example.py not found",
        ],
    );
    let run = rehearse(&[PD, "--fault", "proxy-exits"]);
    assert_fails(
        &run,
        &[
            "node 0 (127.0.0.1, prefill ranks 0-1): run.sh exited with code 1",
            "run.sh: error: the proxy exited with code 3, restarted 1 time(s); stopping node 0. Its last output: proxy stand-in: exiting with code 3 on purpose (fault proxy-exits)  (log: ",
        ],
    );
    // Node 0 says the other nodes keep running, and how to stop them.
    assert!(
        run.out.contains("run.sh: the other nodes of deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d keep running; stop them with ./stop.sh on each"),
        "{}",
        run.out
    );
}

#[test]
fn options_that_do_not_apply_are_usage_errors() {
    let out = Command::new(CATALOG)
        .args([
            "rehearse",
            "deepseek-v4-flash-w8a8-mtp/a3-1node-dp4tp4",
            "--fault",
            "unreachable-master",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not apply"));
    for kill in ["9:0", "1:9", "x"] {
        let out = Command::new(CATALOG)
            .args(["rehearse", MIXED, "--kill", kill])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--kill {kill}");
    }
    let out = Command::new(CATALOG)
        .args(["rehearse", MIXED, "--fault", "proxy-misses-rank"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no proxy (mixed layout)"));
    let out = Command::new(CATALOG)
        .args([
            "rehearse",
            PD,
            "--fault",
            "proxy-misses-rank",
            "--proxy-script",
            CATALOG,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(CATALOG)
        .args(["rehearse", PD, "--proxy-policy", "random"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(CATALOG)
        .args(["rehearse", PD, "--fault", "bogus"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_catalog_binary_is_every_stand_in_by_name() {
    let dir = std::env::temp_dir().join(format!("pd-multicall-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for name in pd_rehearse::BINARIES {
        std::os::unix::fs::symlink(CATALOG, dir.join(name)).unwrap();
    }
    let run = |name: &str, args: &[&str]| {
        let out = Command::new(dir.join(name))
            .args(args)
            .env("PD_STANDIN_NPUS", "8")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    assert_eq!(run("vllm", &["--version"]).1.trim(), "0.21.0+standin");
    assert!(
        run("npu-smi", &["info", "-l"])
            .1
            .contains("Total Count                    : 8")
    );
    assert!(
        run("hccn_tool", &["-i", "0", "-link", "-g"])
            .1
            .contains("UP")
    );
    assert_eq!(run("pd-proxy", &["--bogus"]).0, Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

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

/// [`rehearse`] for a layout built here rather than registered: the same
/// rehearsal, in process, with the options `configure` sets; checks nothing
/// of it is left.
fn rehearse_layout(
    layout: &pd_dsl::Layout,
    configure: impl FnOnce(&mut pd_rehearse::rehearsal::Options),
) -> (pd_rehearse::rehearsal::Outcome, String) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut opts = pd_rehearse::rehearsal::Options::new(CATALOG);
    opts.timeout = Duration::from_secs(90);
    configure(&mut opts);
    let mut out = Vec::new();
    let outcome = pd_rehearse::rehearsal::rehearse(layout, &opts, &mut out)
        .unwrap_or_else(|e| panic!("{}: rehearsal could not run: {e}", layout.name()));
    let out = String::from_utf8_lossy(&out).into_owned();
    assert_nothing_left(&out);
    eprintln!(
        "rehearse {} ({:?}, {:?}, k8s env {}): {:.1}s",
        layout.name(),
        opts.proxy_policy,
        opts.action,
        opts.k8s_env,
        outcome.elapsed.as_secs_f64()
    );
    (outcome, out)
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
