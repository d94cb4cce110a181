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
    rehearse_env(args, &[])
}

/// [`rehearse`] with `dir` first on `PATH` (a venv's `bin/`).
fn rehearse_with_path(args: &[&str], dir: &Path) -> Run {
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    rehearse_env(args, &[("PATH", &path)])
}

/// [`rehearse`] with `env` added to the rehearsal's environment.
fn rehearse_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let started = Instant::now();
    let mut child = Command::new(CATALOG)
        .arg("rehearse")
        .args(args)
        .arg("--timeout")
        .arg("90")
        .envs(env.iter().copied())
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
    // On Kubernetes the proxy is its own Deployment: node 0's run.sh neither
    // checks its script nor restarts it.
    for fault in ["proxy-exits", "missing-proxy-script"] {
        let out = Command::new(CATALOG)
            .args(["rehearse", PD, "--fault", fault, "--k8s-env"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{fault}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("fault {fault} does not apply with --k8s-env")),
            "{fault}: {err}"
        );
    }
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
    // The vLLM version of the newest image (PD_STANDIN_IMAGE unset).
    let newest = pd_dsl::tables::IMAGES.last().map_or("", |i| i.tag);
    let vllm = pd_rehearse::facts::vllm_version_of_image(newest).unwrap();
    assert_eq!(
        run("vllm", &["--version"]).1.trim(),
        format!("{vllm}+standin")
    );
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

/// Prefill context parallelism: each prefill rank is TP8 x PCP2 = 16 NPUs
/// and 16 handshake ports, with DP 1 (so no `--data-parallel-rank`, which
/// vLLM refuses at DP 1), as upstream's longseq configs run it at v0.23.0.
/// The stand-in checks each rank's `ASCEND_RT_VISIBLE_DEVICES` against
/// `world = tp x pcp` and its kv binds against the layout, and refuses what
/// the image's platform refuses.
#[test]
fn a_pcp_layout_rehearses_end_to_end() {
    use pd_rehearse::rehearsal::Policy;
    let spec = pd_dsl::layout! {
        name: "rehearsal/a3-longseq-pcp",
        model: deepseek_r1_0528_w8a8,
        hardware: a3,
        image: "v0.23.0",
        topology: <prefill 2 x dp1tp8pcp2; decode 1 x dp4tp8;>,
        connector: mooncake_v1 { kv_port: { prefill: [36100, 36200], decode: 36300 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        serve: { expert_parallel: true, trust_remote_code: true, max_model_len: 32768 },
        prefill: { flags: ["--decode-context-parallel-size" = 8, "--cp-kv-cache-interleave-size" = 128] },
        provenance: { recorded: "2026-12-01" },
    };
    let l = pd_dsl::check(&spec).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(l.placement.nodes[0].ranks[0].devices.len(), 16);
    assert_eq!(l.placement.nodes[1].ranks[0].kv_span, Some((36200, 36215)));
    let (outcome, out) = rehearse_layout(&l, |o| o.proxy_policy = Policy::ALL[0]);
    assert!(outcome.passed, "{out}\n{:?}", outcome.failures);
    for needle in [
        format!("PASS {}", l.name()),
        "every prefill and decode rank served".into(),
        "verify.sh: ok".into(),
    ] {
        assert!(out.contains(&needle), "missing {needle:?} in\n{out}");
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

/// The upstream proxy's Python packages, pinned: fastapi below 0.124 as
/// vllm-ascend's `requirements.txt` and `pyproject.toml` require
/// (`fastapi<0.124.0`), httpx and uvicorn as the proxy imports them.
const PROXY_PACKAGES: [&str; 3] = ["fastapi==0.123.10", "httpx==0.28.1", "uvicorn==0.32.1"];

/// The unpacked source of vllm-ascend `release` (without `v`), from the
/// upstream corpus (`scripts/upstream/corpus.py`, which fetches and
/// verifies it on first use); fails naming the cause.
fn corpus_tree(release: &str) -> std::path::PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new("python3")
        .arg(root.join("scripts/upstream/corpus.py"))
        .args(["path", &format!("vllm-ascend=={release}")])
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 scripts/upstream/corpus.py: {e}"));
    assert!(
        out.status.success(),
        "the upstream corpus has no vllm-ascend=={release} (scripts/upstream/corpus.py path failed): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(
        tree.is_dir(),
        "corpus.py printed {}, not a directory",
        tree.display()
    );
    tree
}

/// A venv with [`PROXY_PACKAGES`], created once under the corpus cache and
/// reused (`<cache>/venv/proxy-<pins>/`); fails with the pip output when it
/// cannot be made.
fn proxy_venv(tree: &Path) -> std::path::PathBuf {
    // `<cache>/src/vllm-ascend-X` → `<cache>`.
    let cache = tree
        .parent()
        .and_then(Path::parent)
        .unwrap_or_else(|| panic!("{} is not in a corpus cache", tree.display()));
    let name: String = PROXY_PACKAGES
        .iter()
        .map(|p| p.replace("==", ""))
        .collect::<Vec<_>>()
        .join("-");
    let venv = cache.join("venv").join(format!("proxy-{name}"));
    let python = venv.join("bin/python3");
    let ok = || {
        Command::new(&python)
            .args(["-c", "import fastapi, httpx, uvicorn"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    // Tests of this binary and of others make it concurrently on a fresh
    // machine: one at a time, under an exclusive lock on the cache's venv
    // directory (the loser finds it made).
    let root = cache.join("venv");
    std::fs::create_dir_all(&root)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", root.display()));
    let lock = std::fs::File::create(root.join(".lock"))
        .unwrap_or_else(|e| panic!("cannot create {}/.lock: {e}", root.display()));
    lock.lock()
        .unwrap_or_else(|e| panic!("cannot lock {}/.lock: {e}", root.display()));
    if !ok() {
        let _ = std::fs::remove_dir_all(&venv);
        let out = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .output()
            .unwrap_or_else(|e| panic!("cannot run python3 -m venv: {e}"));
        assert!(
            out.status.success(),
            "python3 -m venv {} failed (install python3-venv): {}",
            venv.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let out = Command::new(&python)
            .args(["-m", "pip", "install", "-q"])
            .args(PROXY_PACKAGES)
            .output()
            .unwrap_or_else(|e| panic!("cannot run pip: {e}"));
        assert!(
            out.status.success() && ok(),
            "cannot install the upstream proxy's packages {PROXY_PACKAGES:?} into {} (PyPI must be reachable): {}{}",
            venv.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    drop(lock);
    venv.join("bin")
}

/// The proxy upstream ships for `l`'s image and connector: the layerwise
/// one for `MooncakeLayerwiseConnector` (push mode), else the load-balance
/// proxy, from the release's `examples/disaggregated_prefill_v1/`.
fn real_proxy(l: &pd_dsl::Layout) -> (std::path::PathBuf, std::path::PathBuf) {
    let release = l.image.tag.strip_prefix('v').unwrap_or(l.image.tag);
    let tree = corpus_tree(release);
    let file = match l.connector {
        Some(pd_dsl::ConnectorKind::MooncakeLayerwise) => {
            "load_balance_proxy_layerwise_server_example.py"
        }
        _ => "load_balance_proxy_server_example.py",
    };
    let script = tree.join("examples/disaggregated_prefill_v1").join(file);
    assert!(
        script.is_file(),
        "vllm-ascend {release} has no {}",
        script.display()
    );
    let venv = proxy_venv(&tree);
    (script, venv)
}

/// Every PD layout with the real proxy of its image's release: up,
/// verify.sh through it, every prefill and decode rank served. A proxy that
/// imports vLLM at the top (the layerwise one from 0.26.0rc1) needs torch
/// and runs inside the image only; such layouts are named in the output and
/// rehearse with the stand-in proxy in `every_registered_layout_rehearses_end_to_end`.
#[test]
fn every_pd_layout_rehearses_with_its_releases_real_proxy() {
    let started = Instant::now();
    let mut times = Vec::new();
    let mut needs_vllm = Vec::new();
    for l in layouts::catalog().unwrap().iter().filter(|l| l.is_pd()) {
        let (script, venv) = real_proxy(l);
        // The layerwise proxy of later releases imports vLLM and vllm-ascend
        // modules at the top (`from vllm.logger import init_logger`, ...),
        // which import torch: it runs inside the image only. Read from the
        // script itself, so a release that drops the import is run here.
        let text = std::fs::read_to_string(&script).unwrap();
        if text
            .lines()
            .any(|line| line.starts_with("from vllm") || line.starts_with("import vllm"))
        {
            needs_vllm.push(format!("{} ({})", l.name(), script.display()));
            assert_eq!(
                l.connector,
                Some(pd_dsl::ConnectorKind::MooncakeLayerwise),
                "{}: its proxy imports vLLM",
                l.name()
            );
            continue;
        }
        let script_arg = script.display().to_string();
        let run = rehearse_with_path(&[l.name(), "--proxy-script", &script_arg], &venv);
        assert_eq!(run.code, Some(0), "{}", run.out);
        for needle in [
            format!("PASS {}", l.name()),
            "every prefill and decode rank served".into(),
            "verify.sh: ok".into(),
        ] {
            assert!(
                run.out.contains(&needle),
                "missing {needle:?} in\n{}",
                run.out
            );
        }
        // Preflight checked the real proxy's packages rather than skip them.
        let skips = run
            .out
            .lines()
            .find(|l| l.starts_with("preflight skips"))
            .unwrap_or_default();
        assert!(!skips.contains("proxy_deps"), "{skips}");
        times.push(format!("{} {:.1}s", l.name(), run.took.as_secs_f64()));
    }
    eprintln!(
        "{}\nreal proxies: {:.1}s in all; not run here, their proxy imports vLLM (torch): {}",
        times.join("\n"),
        started.elapsed().as_secs_f64(),
        if needs_vllm.is_empty() {
            "none".to_owned()
        } else {
            needs_vllm.join(", ")
        }
    );
    assert!(times.len() > needs_vllm.len(), "{needs_vllm:?}");
}

/// Every fault injects with a real proxy (none is refused, none passes):
/// the proxy faults go through the shim, which injects and then runs the
/// real script. The layout is a V1 one with prefill and decode on several
/// nodes; what each failure names is read from its placement.
#[test]
fn every_fault_injects_with_a_real_proxy() {
    use pd_rehearse::rehearsal::{Fault, node_ip};
    const LAYOUT: &str = "deepseek-v4-flash-w8a8-mtp/a3-2p2d";
    let l = layouts::catalog()
        .unwrap()
        .iter()
        .find(|l| l.name() == LAYOUT)
        .expect("the layout");
    let (script, venv) = real_proxy(l);
    let script_arg = script.display().to_string();
    let nodes = &l.placement.nodes;
    // port-in-use holds the first API port of the last node that has one.
    let held = nodes
        .iter()
        .rev()
        .find_map(|n| n.ranks.iter().find_map(|r| r.api_port))
        .expect("an API port");
    let npus = l.hardware.npus_per_node / 2;
    let last = l.placement.proxy.decode.last().expect("a decode rank");
    let served = l
        .placement
        .nodes
        .iter()
        .flat_map(|n| &n.ranks)
        .filter(|r| r.api_port.is_some())
        .count();
    for fault in Fault::ALL {
        let run = rehearse_with_path(
            &[
                LAYOUT,
                "--fault",
                fault.name(),
                "--proxy-script",
                &script_arg,
            ],
            &venv,
        );
        let needles: Vec<String> = match fault {
            Fault::PortInUse => vec![format!("preflight: FAIL ports: already in use: {held}")],
            Fault::MissingModel => vec!["preflight: FAIL model_dir: weights directory".into()],
            Fault::WrongNpuCount => vec![format!(
                "preflight: FAIL npu_count: npu-smi info -l reports {npus} NPUs"
            )],
            Fault::UnreachableMaster => vec![
                "exited with code 4".into(),
                "unreachable after 3s".into(),
            ],
            Fault::ProxyMissesRank => vec![
                format!("1 of {served} rank(s) got no request"),
                format!(
                    "1. the running proxy's lists miss {}:{}",
                    node_ip(last.node),
                    last.port
                ),
            ],
            Fault::MissingProxyScript => vec![
                "preflight: FAIL proxy_script: /nonexistent/load_balance_proxy_server_example.py not found".into(),
            ],
            // The real proxy's own argparse refuses the option and exits 2.
            Fault::ProxyExits => vec![
                "an option it does not define".into(),
                "run.sh: error: the proxy exited with code 2, restarted 1 time(s); stopping node 0. Its last output:".into(),
                "load_balance_proxy_server_example.py: erro".into(),
            ],
        };
        let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
        assert_fails(&run, &needles);
    }
}

/// `prefill N x dp4tp4; decode N x dp16tp1` on A3 (each engine one node):
/// `2N` nodes, `80N` ranks, from the V4-Flash 1P1D layout. `N = 64` is the
/// 128-node, 1,280-rank layout whose request waves (1,024 at once) the
/// stand-in proxy's accept backlog must take like uvicorn's.
fn synthetic_pd(n: u64) -> pd_dsl::Layout {
    use pd_dsl::{EngineGroup, Role, Spanned};
    let group = |role: Role, count: u64, dp: u64, tp: u64| EngineGroup {
        role: Spanned::bare(role),
        count: Spanned::bare(count),
        dp: Spanned::bare(dp),
        tp: Spanned::bare(tp),
        ..EngineGroup::default()
    };
    let mut spec = layouts::deepseek_v4_flash::a3_1p1d();
    spec.name = Spanned::bare(format!("synthetic/a3-{n}p{n}d"));
    spec.provenance.derived_from = None;
    spec.topology = vec![group(Role::Prefill, n, 4, 4), group(Role::Decode, n, 16, 1)];
    pd_dsl::check(&spec).unwrap_or_else(|e| panic!("{e}"))
}

/// A large layout comes up and serves every wave without a reset: the
/// stand-ins listen with uvicorn's backlog (2048), not `std`'s 128. The
/// size is `PD_REHEARSE_LARGE_N` engines per role, default 32: 64 nodes,
/// 640 ranks, waves of 512 requests at once, about 50 s; with a backlog of
/// 128 it loses about 90 of its 1,536 requests to resets. `64` is the
/// 128-node, 1,280-rank layout (about 110 s and 9 GB here; 312 of 3,072
/// requests reset with a backlog of 128).
#[test]
fn a_large_synthetic_layout_rehearses_green() {
    let n: u64 = std::env::var("PD_REHEARSE_LARGE_N")
        .ok()
        .map(|v| v.parse().expect("PD_REHEARSE_LARGE_N must be a number"))
        .unwrap_or(32);
    let l = synthetic_pd(n);
    assert_eq!(l.node_count() as u64, 2 * n);
    let (outcome, out) = rehearse_layout(&l, |o| o.timeout = Duration::from_secs(240));
    assert!(outcome.passed, "{out}\n{:?}", outcome.failures);
    assert!(
        out.contains("every prefill and decode rank served"),
        "{out}"
    );
    assert_eq!(outcome.requests, 3 * 16 * n as usize, "{out}");
}

/// An HTTP proxy in the environment (a dead one here) must not sit between
/// the deployment's own parts: run.sh's health polls and verify.sh go
/// straight to the ranks and the proxy.
#[test]
fn a_dead_http_proxy_in_the_environment_changes_nothing() {
    let dead = "http://127.0.0.1:9";
    let r = rehearse_env(
        &[PD],
        &[
            ("http_proxy", dead),
            ("https_proxy", dead),
            ("HTTP_PROXY", dead),
            ("HTTPS_PROXY", dead),
            ("all_proxy", dead),
            ("NO_PROXY", ""),
            ("no_proxy", ""),
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.out);
    assert!(r.out.contains(&format!("PASS {PD}:")), "{}", r.out);
}
