//! The rehearsal: a layout's generated scripts, **unmodified**, started on
//! this machine against the stand-ins, end to end, with a verdict.
//!
//! # How a rehearsal runs
//!
//! 1. The layout is rendered into a temp dir (`layout/`, the same files as
//!    `catalog/<name>/`). Next to it: `bin/` (symlinks `vllm`, `pd-proxy`,
//!    `npu-smi`, `hccn_tool` to one multi-call executable, see
//!    [`crate::standin::dispatch`]; put first on `PATH`), `bin/proxy_standin.py`,
//!    `model/config.json`, `expect.json` (written from the layout's placement,
//!    schema in the crate docs), `state/` (stand-in counter and pid files) and
//!    `logs/` (`node<i>.log` = each `run.sh`'s output, `node<i>/rank<r>.log` =
//!    each rank's).
//! 2. **Node addresses.** Node *i* is played by the loopback address
//!    `127.0.0.(i+1)`. Linux routes all of `127.0.0.0/8` to `lo` without any
//!    setup, so no root is needed, and binds on distinct addresses do not
//!    clash: every rank binds its API port, kv handshake span and DP RPC port
//!    on its node's address, exactly the per-host port rules of a cluster.
//!    (Network namespaces would isolate nodes further but need root; the
//!    loopback aliases are enough for every check here.)
//! 3. **The image's shell** ([`crate::image`]): every script runs as `bash
//!    SCRIPT` in a non-interactive shell with nothing of this machine's
//!    environment, the `PATH` of the layout's image (the stand-ins, links to
//!    only the tools the image has, the base system) and its `ENV`; CANN
//!    exists only after the script sources the image's `set_env.sh` (stand-ins
//!    under a fake Ascend root, `PD_ASCEND_ROOT`), and a stand-in
//!    `vllm_ascend` package is on the stand-in python path.
//!    Every node's `run.sh` starts at once, in its own process group, with
//!    `PD_NODE_INDEX`, `PD_NODE_IPS`, `PD_LOCAL_IP=127.0.0.(i+1)`, `PD_NIC=lo`,
//!    `PD_LOG_DIR`, a bounded `PD_WAIT_SECONDS`, `PD_POLL_SECONDS=0.2`,
//!    `PD_MODEL_PATH` (the temp model dir), `PD_PORT_CHECK_HOST` (the node's
//!    address: preflight's ports check binds it instead of `0.0.0.0`, since
//!    other "nodes" share the machine), `PD_PROXY_SCRIPT`, `PD_SKIP_PREFLIGHT`
//!    (below) and the `PD_STANDIN_*` contract (`NODE_IP`, `NODE`, `NPUS` = the
//!    hardware's NPUs per node, `EXPECT`, `STATE_DIR`, `MASTER_TIMEOUT`).
//! 4. Preflight runs for real: `npu-smi` and `hccn_tool` are the stand-ins,
//!    the model directory is the temp one, the ports are really bound. Skipped
//!    with `PD_SKIP_PREFLIGHT`, because they cannot apply on a machine without
//!    Ascend software: `host_paths` (`/etc/hccn.conf` and the other driver
//!    files of the hardware) and `mooncake` (the Mooncake transfer library, PD
//!    layouts only); `vllm_ascend_version` reads the stand-in package; with
//!    the stand-in proxy also `proxy_deps` (fastapi, httpx, uvicorn: the
//!    upstream proxy's packages, checked for real with `--proxy-script`).
//! 5. The progress view prints each node's ranks up as they come; the
//!    deployment is up when every rank process has started serving and the
//!    proxy (PD, started by node 0's `run.sh` once every rank answers
//!    `/health`) or the API server (mixed) answers.
//! 6. `verify.sh` runs (through the proxy, or against the API server), then
//!    3 waves of `max(prefill ranks, decode ranks)` concurrent completions go
//!    through the proxy (2 at a time to a mixed API server). Each stand-in
//!    completion takes 300 ms (`PD_STANDIN_LATENCY_MS`), so a wave overlaps
//!    at the proxy and upstream's least-loaded proxy (ties to list order)
//!    reaches every rank, as the round-robin stand-in does. The stand-ins'
//!    counter files must show that **every prefill and decode rank** (every
//!    API server) served at least one request; otherwise the failure names
//!    the ranks that got nothing and the likely causes, most likely first:
//!    missing from the running proxy's lists (read from its command line),
//!    a decode-only fallback (no prefill rank served), never picked, or the
//!    port answered by something else. `Options::proxy_policy` picks the
//!    stand-in proxy's policy (`catalog rehearse --proxy-policy`).
//! 7. Teardown: SIGTERM to every `run.sh` process group (its trap stops the
//!    launcher, which stops its ranks), SIGKILL after a grace period, then a
//!    sweep of every process that still carries this rehearsal's
//!    `PD_REHEARSAL_ID` in its environment. A process found by the sweep after
//!    a clean stop is reported as a failure ("left running"). A reaper process
//!    (`bash`, own process group, reading a pipe from the rehearsal) runs the
//!    same sweep when the rehearsal dies for any reason — Ctrl-C, SIGKILL,
//!    panic — so nothing outlives it, and then removes the temp dir (unless
//!    `--keep`).
//!
//! # Operator actions ([`Action`], `--signal`, `--stop`)
//!
//! Once the deployment is up, `--signal NODE:HUP|TERM|INT` sends that signal
//! to the node's `run.sh` process alone (as a dropped SSH session, `kill` or
//! Ctrl-C would), and `--stop NODE` runs the node's `stop.sh NODE` (with the
//! rehearsal's `PD_LOG_DIR`). Either passes only when that node's `run.sh`
//! exits within 40 s, no process of the node is left (processes carrying the
//! marker and `PD_STANDIN_NODE=NODE`), and every port of the node binds again;
//! `stop.sh` then runs a second time and must exit 0 finding nothing.
//! With `--k8s-env`, `--signal NODE:TERM` is the kubelet's: the pod's
//! `preStop` command runs first, then SIGTERM, and the bound is the pod's
//! `terminationGracePeriodSeconds` from the hook's start (`--k8s-grace-seconds`
//! replaces it), past which the node's processes are SIGKILLed and the
//! rehearsal fails naming the grace (`act.rs`).
//!
//! # Faults ([`Fault`], `--kill`)
//!
//! Each must end the rehearsal with a failure naming node and rank, in
//! bounded time, leaving nothing running:
//!
//! | fault | injected how | caught by |
//! |---|---|---|
//! | `--kill NODE:RANK` | once the deployment is up, SIGKILL to that rank's `vllm` (pid from its `.pid` file) | `launch_online_dp.py` (or `run.sh` for mixed) fails fast; the node's `run.sh` must exit non-zero within 20 s |
//! | `port-in-use` | before start, the rehearsal binds the first API port of the last node that has one, on that node's address | that node's preflight `ports` check |
//! | `missing-model` | `PD_MODEL_PATH` points at a directory that does not exist | every node's preflight `model_dir` check |
//! | `wrong-npu-count` | the last node's `npu-smi` reports half the hardware's NPUs (`PD_STANDIN_NPUS`) | that node's preflight `npu_count` (and `npu_links`) checks |
//! | `proxy-misses-rank` | the proxy shim drops the last `--decoder-hosts`/`--decoder-ports` entry, then runs the stand-in or the real proxy (`--proxy-script`) with the rest (PD layouts; with `--k8s-env` on the proxy Deployment) | the coverage check: that rank got no request, and it is missing from the running proxy's lists |
//! | `missing-proxy-script` | node 0's `PD_PROXY_SCRIPT` names a file that does not exist (PD layouts; refused with `--k8s-env`) | node 0's preflight `proxy_script` check, before any model loads |
//! | `proxy-exits` | the stand-in proxy exits with code 3 at once, every time; a real proxy (`--proxy-script`) is handed an option it does not define, so its own argparse exits with code 2; node 0 gets `PD_PROXY_RESTARTS=1` (refused with `--k8s-env`: the Deployment is not node 0's to restart) | node 0's `run.sh` restarts it once, then stops naming the cause (the proxy's last output) |
//! | `unreachable-master` | `PD_STANDIN_BLOCKED=<master>:<rpc port>` on a node whose ranks connect to a DP master (a firewall dropping the DP RPC port): the second node of an engine spanning nodes, else a node whose engine has DP > 1 | the non-master rank exits 4 after `PD_STANDIN_MASTER_TIMEOUT` (3 s in this fault); the launcher fails fast |

mod act;
mod cluster;
mod coverage;
mod diagnose;
mod inject;
mod options;
mod processes;

use crate::expect::{Expectation, ExpectedRank};
use crate::http;
pub use crate::standin::proxy::Policy;
use act::act;
use cluster::{Cluster, REAPER, WorkDir, run_bounded, wait_for_free_ports, work_dir, write_file};
use coverage::{coverage, send_requests};
use diagnose::{describe_exit, diagnose, served_count};
use inject::{PROXY_BAD_OPTION, PROXY_REAL, PROXY_SHIM, inject};
pub use options::{Action, Fault, Options, Outcome, Sig};
use pd_dsl::Layout;
use pd_dsl::render;
use processes::{marked_processes, node_label, processes, signal_pid};
use serde_json::json;
use std::fmt::Write as _;
use std::fs;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Waves of requests after verify.sh (each as many as the larger role has ranks).
const WAVES: usize = 3;
/// Milliseconds each stand-in completion takes, so that a wave overlaps at
/// the proxy.
const LATENCY_MS: u64 = 300;
/// Seconds a rank keeps trying its DP master (normal runs).
const MASTER_TIMEOUT_S: u32 = 20;
/// Seconds a rank keeps trying its DP master under `unreachable-master`.
const FAULT_MASTER_TIMEOUT_S: u32 = 3;
/// After `--kill`, the node's `run.sh` must exit within this.
const FAIL_FAST_BOUND: Duration = Duration::from_secs(20);
/// SIGTERM → SIGKILL grace at teardown.
const GRACE: Duration = Duration::from_secs(5);
/// Longest wait for the layout's ports to become bindable before start.
const PORT_WAIT: Duration = Duration::from_secs(65);
/// Checks skipped on a machine without Ascend software (see module docs).
const SKIPPED_CHECKS: &[&str] = &["host_paths", "mooncake"];
/// The HTTP proxy variables the caller's environment passes on to the
/// scripts (as a container gets them).
const PROXY_VARS: &[&str] = &[
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
];
/// The environment marker every process of one rehearsal carries.
const MARKER: &str = "PD_REHEARSAL_ID";

/// Node `i`'s address.
pub fn node_ip(i: usize) -> String {
    format!("127.0.0.{}", i + 1)
}

/// The expectation file of a layout (crate docs), with node `i` at
/// [`node_ip`]`(i)`.
pub fn expectation(layout: &Layout) -> Expectation {
    let p = &layout.placement;
    let mut ranks = Vec::new();
    for n in &p.nodes {
        let Some(e) = p.engines.get(n.engine) else {
            continue;
        };
        let uses_rpc = layout.is_pd() || e.nodes.len() > 1;
        for r in &n.ranks {
            ranks.push(ExpectedRank {
                node: n.index,
                node_ip: node_ip(n.index),
                role: n.role.to_string(),
                engine: Some(n.engine),
                // The node's own id where the layout gives one per node.
                engine_id: n.engine_id.map(|id| json!(id)),
                dp_size: e.dp,
                tp: e.tp,
                dp_rank: r.dp_rank,
                devices: r.devices.to_vec(),
                api_port: r.api_port.and_then(|p| u16::try_from(p).ok()),
                dp_master_ip: node_ip(n.dp_master),
                rpc_port: e
                    .dp_rpc_port
                    .filter(|_| uses_rpc)
                    .and_then(|p| u16::try_from(p).ok()),
                kv_port: e.kv_port.and_then(|p| u16::try_from(p).ok()),
            });
        }
    }
    Expectation {
        version: 1,
        layout: Some(layout.name().to_owned()),
        ranks,
    }
}

/// Rehearses `layout`. `Err` = the rehearsal could not run (bad option, a
/// fault that does not apply, no temp dir); `Ok` carries the verdict.
/// Progress and the verdict are written to `out`.
pub fn rehearse(layout: &Layout, opts: &Options, out: &mut dyn Write) -> Result<Outcome, String> {
    let started = Instant::now();
    let deadline = started + opts.timeout;
    let nodes = &layout.placement.nodes;
    let procs = processes(layout);
    // --kill target.
    let kill = match opts.kill {
        None => None,
        Some((node, rank)) => {
            let p = procs
                .iter()
                .find(|p| p.node == node && p.ranks.contains(&rank))
                .ok_or_else(|| {
                    format!(
                        "--kill {node}:{rank}: {} has no rank {rank}{}",
                        layout.name(),
                        if node < nodes.len() {
                            format!(" on {}", node_label(layout, node))
                        } else {
                            format!(" (it has nodes 0-{})", nodes.len().saturating_sub(1))
                        }
                    )
                })?;
            Some((p.clone(), rank))
        }
    };
    if let Some(Action::Signal(node, _) | Action::Stop(node)) = opts.action
        && node >= nodes.len()
    {
        return Err(format!(
            "--signal/--stop {node}: {} has nodes 0-{}",
            layout.name(),
            nodes.len().saturating_sub(1)
        ));
    }
    if opts.action.is_some() && opts.kill.is_some() {
        return Err("--kill and --signal/--stop do not apply together".into());
    }
    if let Some(script) = &opts.proxy_script
        && !script.is_file()
    {
        return Err(format!("--proxy-script {}: not a file", script.display()));
    }
    let standins = opts
        .standins
        .canonicalize()
        .map_err(|e| format!("stand-in executable {}: {e}", opts.standins.display()))?;
    if !opts.k8s_env
        && (opts.k8s_late_workers.is_some()
            || opts.k8s_grace_seconds.is_some()
            || opts.k8s_settings != render::k8s::K8sSettings::default())
    {
        return Err(
            "--k8s-late-workers, --k8s-grace-seconds or a --k8s-* manifest setting does not apply without --k8s-env"
                .into(),
        );
    }
    if let Some(f @ (Fault::ProxyExits | Fault::MissingProxyScript)) = opts.fault
        && opts.k8s_env
    {
        return Err(format!(
            "fault {} does not apply with --k8s-env: the proxy runs as its own Deployment, which node 0's run.sh neither checks nor restarts (Kubernetes restarts its pod)",
            f.name()
        ));
    }
    let mut inj = inject(layout, opts.fault)?;

    // The temp dir.
    let work = WorkDir {
        path: work_dir()?,
        keep: opts.keep,
    };
    let root = work.path.clone();
    let scripts = root.join("layout");
    let bin = root.join("bin");
    let model = root.join("model");
    let state = root.join("state");
    let logs = root.join("logs");
    for d in [&scripts, &bin, &state, &logs] {
        fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    let mut artifacts = render::render_layout(layout).map_err(|e| e.to_string())?;
    if opts.k8s_settings != render::k8s::K8sSettings::default() {
        artifacts = render::k8s::with_settings(artifacts, &[layout], &opts.k8s_settings)
            .map_err(|e| format!("--k8s-* settings: {e}"))?;
    }
    for a in &artifacts {
        let rel = a.path.strip_prefix(layout.name()).unwrap_or(&a.path);
        let target = scripts.join(rel);
        if let Some(dir) = target.parent() {
            fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        write_file(&target, &a.contents, a.executable)?;
    }
    for name in crate::BINARIES {
        std::os::unix::fs::symlink(&standins, bin.join(name))
            .map_err(|e| format!("cannot link {name}: {e}"))?;
    }
    let k8s = if opts.k8s_env {
        std::os::unix::fs::symlink(&standins, bin.join("getent"))
            .map_err(|e| format!("cannot link getent: {e}"))?;
        Some(crate::k8s_env::cluster(layout, &artifacts, node_ip)?)
    } else {
        None
    };
    let shim = bin.join("proxy_standin.py");
    write_file(&shim, PROXY_SHIM, true)?;
    // A proxy fault with a real proxy: the shim injects it, then runs the
    // real script (the edited lists, or an option it refuses).
    if let (Some(real), Some(f @ (Fault::ProxyMissesRank | Fault::ProxyExits))) =
        (&opts.proxy_script, opts.fault)
    {
        let real = real
            .canonicalize()
            .map_err(|e| format!("--proxy-script {}: {e}", real.display()))?;
        let env = inj.env.entry(0).or_default();
        env.push(("PD_PROXY_SCRIPT".into(), shim.display().to_string()));
        env.push((PROXY_REAL.into(), real.display().to_string()));
        if f == Fault::ProxyExits {
            inj.note = Some(format!(
                "the real proxy {} is started with {PROXY_BAD_OPTION}, an option it does not define, so its own argparse exits with code 2, every time; node 0 may restart it once (PD_PROXY_RESTARTS=1)",
                real.display()
            ));
        }
    }
    if !inj.no_model {
        fs::create_dir_all(&model).map_err(|e| e.to_string())?;
        write_file(
            &model.join("config.json"),
            "{\"model_type\": \"deepseek_v3\", \"note\": \"pd-rehearse stand-in weights\"}\n",
            false,
        )?;
    }
    let expect = root.join("expect.json");
    let exp_text = serde_json::to_string_pretty(&expectation(layout)).map_err(|e| e.to_string())?;
    write_file(&expect, &exp_text, false)?;

    let marker = format!(
        "{}-{}",
        std::process::id(),
        root.file_name().and_then(|n| n.to_str()).unwrap_or("x")
    );
    let ips: Vec<String> = (0..nodes.len()).map(node_ip).collect();
    // The image's shell: its tools only, its ENV, CANN after set_env.sh.
    let host_path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
    let shell = crate::image::build(layout, &root, &bin, &host_path)?;
    let path_env = shell.path.clone();
    let mut skip: Vec<&str> = SKIPPED_CHECKS
        .iter()
        .copied()
        .filter(|c| *c != "mooncake" || layout.is_pd())
        .collect();
    // The stand-in proxy needs none of the upstream proxy's Python packages;
    // a real proxy script (--proxy-script) does, and preflight checks them.
    if layout.is_pd() && opts.proxy_script.is_none() {
        skip.push("proxy_deps");
    }
    let wait_s = opts.timeout.as_secs().max(1);
    // The cluster's DNS, worker pods' names late where asked, counted from
    // now (the nodes start next).
    let hosts_env = k8s.as_ref().map(|k| {
        k.hosts_env(
            opts.k8s_late_workers
                .map(|late| std::time::SystemTime::now() + late),
        )
    });
    let base_env = |cmd: &mut Command| {
        // Nothing of this machine's environment: the image's only, and the
        // operator's HTTP proxy settings, which Docker (the client's
        // `proxies` config) and most pod specs hand to the container.
        cmd.env_clear();
        for (k, v) in &shell.env {
            cmd.env(k, v);
        }
        for (k, v) in std::env::vars_os() {
            if k.to_str().is_some_and(|k| PROXY_VARS.contains(&k)) {
                cmd.env(k, v);
            }
        }
        cmd.env("PATH", &path_env)
            .env(MARKER, &marker)
            .env("PD_NODE_IPS", ips.join(","))
            .env("PD_VERIFY_TIMEOUT", "30");
        if let Some(hosts) = &hosts_env {
            cmd.env(crate::k8s_env::HOSTS_ENV, hosts);
        }
    };

    let _ = writeln!(
        out,
        "rehearsal of {}: {} nodes at {}..{} (loopback aliases), {} rank process(es), work dir {}",
        layout.name(),
        nodes.len(),
        ips.first().map_or("-", String::as_str),
        ips.last().map_or("-", String::as_str),
        procs.len(),
        root.display()
    );
    if let (Some(late), Some(k)) = (opts.k8s_late_workers, &k8s) {
        let workers: Vec<String> = k
            .pods
            .iter()
            .filter(|p| {
                p.env
                    .iter()
                    .any(|(n, v)| n == "LWS_WORKER_INDEX" && v != "0")
            })
            .map(|p| p.node.to_string())
            .collect();
        let _ = writeln!(
            out,
            "worker pods (node(s) {}) are scheduled late: their names resolve {:.1}s after start",
            if workers.is_empty() {
                "none".to_owned()
            } else {
                workers.join(", ")
            },
            late.as_secs_f64()
        );
    }
    let _ = writeln!(
        out,
        "preflight skips (no Ascend software here): {}",
        skip.join(", ")
    );
    let _ = writeln!(
        out,
        "image contract (upstream/facts/vllm-ascend/{}.json, {} image): not on PATH: {}{}; CANN only after sourcing {}",
        shell.release,
        crate::facts::image_key(layout.hardware),
        match (shell.absent.is_empty(), shell.undecided.is_empty()) {
            (true, true) => "nothing".to_owned(),
            _ => [shell.absent.clone(), shell.undecided.clone()]
                .concat()
                .join(", "),
        },
        if shell.undecided.is_empty() {
            String::new()
        } else {
            format!(
                " ({} left undecided by the table, null: taken as absent)",
                shell.undecided.join(", ")
            )
        },
        if shell.set_env_scripts.is_empty() {
            "nothing (the image sources no set_env.sh)".to_owned()
        } else {
            shell.set_env_scripts.join(" and ")
        }
    );
    if let Some(n) = &inj.note {
        let _ = writeln!(out, "fault {}: {n}", opts.fault.map_or("", Fault::name));
    }

    // A port of the layout that is not bindable yet is almost always a
    // TIME_WAIT left by an earlier run's clients (on one machine every
    // node's outgoing connections use 127.0.0.1's ephemeral ports, and kv
    // spans such as 36000+ lie in that range): wait it out, bounded, rather
    // than fail preflight for a reason no cluster would have.
    let waited = wait_for_free_ports(layout, &inj, deadline.min(Instant::now() + PORT_WAIT));
    if let Err(busy) = waited {
        return Err(format!(
            "ports of {} stay in use on this machine (another process holds them): {busy}",
            layout.name()
        ));
    }
    if let Ok(Some(t)) = waited {
        let _ = writeln!(
            out,
            "waited {:.1}s for ports left in TIME_WAIT by an earlier run",
            t.as_secs_f64()
        );
    }

    // The reaper.
    let reaper = Command::new("bash")
        .arg("-c")
        .arg(REAPER)
        .arg("pd-rehearse-reaper")
        .arg(format!("{MARKER}={marker}"))
        .arg(if opts.keep {
            PathBuf::new()
        } else {
            root.clone()
        })
        .env_remove(MARKER)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()
        .and_then(|mut c| c.stdin.take().map(|s| (c, s)));
    let mut cluster = Cluster {
        runs: Vec::new(),
        exits: vec![None; nodes.len()],
        marker: marker.clone(),
        reaper,
        stopped: false,
    };

    // Start every node.
    for n in nodes {
        let i = n.index;
        let log = fs::File::create(logs.join(format!("node{i}.log"))).map_err(|e| e.to_string())?;
        let log2 = log.try_clone().map_err(|e| e.to_string())?;
        // `docker exec NAME bash run.sh`, or the pod's `bash /opt/pd-dsl/run.sh`.
        let mut cmd = Command::new(&shell.bash);
        if k8s.is_some() {
            cmd.arg(scripts.join("run.sh"));
        } else {
            cmd.arg("run.sh");
        }
        base_env(&mut cmd);
        cmd.current_dir(&scripts)
            .env("PD_NODE_INDEX", i.to_string())
            .env("PD_LOCAL_IP", node_ip(i))
            .env("PD_NIC", "lo")
            .env("PD_LOG_DIR", &logs)
            .env("PD_WAIT_SECONDS", wait_s.to_string())
            .env("PD_POLL_SECONDS", "0.2")
            .env("PD_MODEL_PATH", &model)
            .env("PD_PORT_CHECK_HOST", node_ip(i))
            .env(
                "PD_PROXY_SCRIPT",
                opts.proxy_script.as_deref().unwrap_or(&shim),
            )
            .env("PD_SKIP_PREFLIGHT", skip.join(","))
            .env("PD_STANDIN_NODE_IP", node_ip(i))
            .env("PD_STANDIN_NODE", i.to_string())
            .env("PD_STANDIN_NPUS", layout.hardware.npus_per_node.to_string())
            .env("PD_STANDIN_EXPECT", &expect)
            .env("PD_STANDIN_STATE_DIR", &state)
            .env("PD_STANDIN_MASTER_TIMEOUT", inj.master_timeout.to_string())
            .env("PD_STANDIN_IMAGE", layout.image.tag)
            .env("PD_STANDIN_LATENCY_MS", LATENCY_MS.to_string())
            .env("PD_STANDIN_PROXY_POLICY", opts.proxy_policy.name());
        for (k, v) in inj.env.get(&i).into_iter().flatten() {
            cmd.env(k, v);
        }
        if let Some(pod) = k8s.as_ref().and_then(|k| k.pods.get(i)) {
            // What the pod has: LWS's variables and the manifest's env, and
            // no hand-set node index or IP list.
            cmd.env_remove("PD_NODE_INDEX").env_remove("PD_NODE_IPS");
            for (k, v) in &pod.env {
                cmd.env(k, v);
            }
            for (k, v) in &opts.k8s_env_override {
                match v {
                    Some(v) => cmd.env(k, v),
                    None => cmd.env_remove(k),
                };
            }
        }
        let child = cmd
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start node {i}'s run.sh: {e}"))?;
        cluster.runs.push(Some(child));
    }

    // --k8s-env: the proxy Deployment's pod, at the next free address.
    let proxy_pod_ip = node_ip(nodes.len());
    if let Some(env) = k8s.as_ref().and_then(|k| k.proxy_env.as_ref()) {
        let log = fs::File::create(logs.join("proxy.log")).map_err(|e| e.to_string())?;
        let log2 = log.try_clone().map_err(|e| e.to_string())?;
        let mut cmd = Command::new(&shell.bash);
        cmd.arg(scripts.join("proxy.sh"));
        base_env(&mut cmd);
        cmd.current_dir(&scripts).env(
            "PD_PROXY_SCRIPT",
            opts.proxy_script.as_deref().unwrap_or(&shim),
        );
        for (k, v) in env {
            cmd.env(k, v);
        }
        // A proxy fault lands on the proxy, wherever it runs.
        for (k, v) in inj.env.get(&0).into_iter().flatten() {
            if k.starts_with("PD_REHEARSAL_PROXY") || k == "PD_PROXY_SCRIPT" {
                cmd.env(k, v);
            }
        }
        // The pod's own address, not every address of this machine.
        cmd.env("PD_PROXY_HOST", &proxy_pod_ip);
        let child = cmd
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start the proxy Deployment's proxy.sh: {e}"))?;
        cluster.runs.push(Some(child));
        cluster.exits.push(None);
    }

    let mut failures: Vec<String> = Vec::new();
    let mut requests = 0usize;
    let node_total: Vec<usize> = nodes.iter().map(|n| n.ranks.len()).collect();
    let ranks_up = |i: usize| -> usize {
        procs
            .iter()
            .filter(|p| p.node == i && served_count(&state, p).is_some())
            .map(|p| p.ranks.len())
            .sum()
    };
    let print_row = |out: &mut dyn Write, i: usize, up: usize, what: &str| {
        let role = nodes[i].role.to_string();
        let _ = writeln!(
            out,
            "  node {i:<2} {:<10} {role:<8} ranks {up:>2}/{:<2} {what}",
            node_ip(i),
            node_total[i]
        );
    };

    // Wait until up, a node exits, or the deadline.
    let (api_host, api_port) = match layout.proxy {
        Some(p) if k8s.is_some() => (proxy_pod_ip.clone(), p.port),
        Some(p) => (node_ip(0), p.port),
        None => (node_ip(0), layout.api_port),
    };
    let api_port = u16::try_from(api_port).map_err(|e| e.to_string())?;
    let mut last: Vec<(usize, Instant)> = vec![(usize::MAX, started); nodes.len()];
    let up_at = loop {
        cluster.poll();
        let mut all_up = true;
        for i in 0..nodes.len() {
            let up = ranks_up(i);
            all_up &= up == node_total[i];
            let changed = up != last[i].0;
            if changed && (up == node_total[i] || last[i].1.elapsed() >= Duration::from_millis(500))
            {
                print_row(
                    out,
                    i,
                    up,
                    if up == node_total[i] {
                        "up"
                    } else {
                        "starting"
                    },
                );
                last[i] = (up, Instant::now());
            }
        }
        let exited: Vec<usize> = (0..nodes.len())
            .filter(|&i| cluster.exits[i].is_some())
            .collect();
        if !exited.is_empty() {
            // Let near-simultaneous failures land, then report them all: wait
            // until no other node has exited for QUIET (at most SETTLE), so a
            // fault every node meets is seen on every node on a loaded machine.
            const QUIET: Duration = Duration::from_millis(1500);
            const SETTLE: Duration = Duration::from_secs(8);
            let first = Instant::now();
            let mut seen = exited.len();
            let mut quiet_since = Instant::now();
            while first.elapsed() < SETTLE && quiet_since.elapsed() < QUIET {
                thread::sleep(Duration::from_millis(100));
                cluster.poll();
                let now = cluster.exits.iter().filter(|e| e.is_some()).count();
                if now == nodes.len() {
                    break;
                }
                if now > seen {
                    seen = now;
                    quiet_since = Instant::now();
                }
            }
            cluster.poll();
            for i in 0..nodes.len() {
                if let Some(st) = cluster.exits[i] {
                    print_row(out, i, ranks_up(i), &describe_exit(Some(st)));
                    failures.push(diagnose(layout, &logs, i, Some(st)));
                }
            }
            break None;
        }
        if all_up {
            let ready = if layout.is_pd() {
                http::probe(&api_host, api_port, Duration::from_millis(200)).is_ok()
            } else {
                http::get(&api_host, api_port, "/health", Duration::from_secs(2))
                    .is_ok_and(|r| r.status == 200)
            };
            if ready {
                break Some(started.elapsed());
            }
        }
        if Instant::now() >= deadline {
            let mut m = format!(
                "timed out after {}s before the deployment was up:",
                opts.timeout.as_secs()
            );
            for (i, total) in node_total.iter().enumerate() {
                let _ = write!(
                    m,
                    "\n    {}: {}/{total} ranks up",
                    node_label(layout, i),
                    ranks_up(i),
                );
            }
            if layout.is_pd() {
                let _ = write!(
                    m,
                    "\n    the proxy on {api_host}:{api_port} does not answer"
                );
            }
            failures.push(m);
            break None;
        }
        thread::sleep(Duration::from_millis(100));
    };

    if let Some(t) = up_at {
        let _ = writeln!(
            out,
            "deployment up in {:.1}s: {} on {api_host}:{api_port}",
            t.as_secs_f64(),
            if layout.is_pd() {
                "proxy"
            } else {
                "API server"
            }
        );
        if let Some(action) = opts.action {
            let i = match action {
                Action::Signal(i, _) | Action::Stop(i) => i,
            };
            let env = |cmd: &mut Command| {
                base_env(cmd);
                cmd.current_dir(&scripts)
                    .env("PD_LOG_DIR", &logs)
                    .env("PD_PORT_CHECK_HOST", node_ip(i));
            };
            // What the manifest promises this pod: a drain of in-flight
            // requests on SIGTERM (its PD_DRAIN_SECONDS, where the image's
            // vLLM has --shutdown-timeout), whatever the overrides did.
            let drain = k8s
                .as_ref()
                .and_then(|k| k.pods.get(i))
                .and_then(|p| {
                    p.env
                        .iter()
                        .find(|(k, _)| k == pd_dsl::render::k8s::ENV_DRAIN_SECONDS)
                })
                .and_then(|(_, v)| v.parse::<u64>().ok())
                .filter(|&d| d > 0 && render::model::drain_flag(layout));
            // The kubelet terminates the pod as its manifest says (or with
            // the grace period asked for instead).
            let kubelet = k8s
                .as_ref()
                .and_then(|k| k.pods.get(i))
                .map(|p| act::Kubelet {
                    pre_stop: p.pre_stop.clone(),
                    grace: Duration::from_secs(
                        opts.k8s_grace_seconds
                            .or_else(|| p.grace_seconds.and_then(|g| u64::try_from(g).ok()))
                            // Kubernetes' default.
                            .unwrap_or(30),
                    ),
                });
            act(
                layout,
                action,
                drain,
                kubelet.as_ref(),
                &shell.bash,
                &mut cluster,
                &scripts,
                &logs,
                &marker,
                env,
                out,
                &mut failures,
            );
        } else if let Some((p, rank)) = &kill {
            // A rank dies after start: the node must stop loudly, bounded.
            let pid = fs::read_to_string(state.join(format!("{}-{}.pid", p.node, p.first_rank)))
                .ok()
                .and_then(|s| s.trim().parse::<u32>().ok());
            match pid {
                None => failures.push(format!(
                    "--kill {}:{rank}: no pid file for {} rank {rank}",
                    p.node,
                    node_label(layout, p.node)
                )),
                Some(pid) => {
                    let _ = writeln!(
                        out,
                        "--kill: SIGKILL to node {} ({}) rank {rank} (pid {pid})",
                        p.node,
                        node_ip(p.node)
                    );
                    let t0 = Instant::now();
                    signal_pid(pid, rustix::process::Signal::KILL);
                    let bound = t0 + FAIL_FAST_BOUND;
                    while cluster.exits[p.node].is_none() && Instant::now() < bound.min(deadline) {
                        cluster.poll();
                        thread::sleep(Duration::from_millis(50));
                    }
                    let role = nodes[p.node].role;
                    let head = format!(
                        "node {} ({}) {role} rank {rank} died after start (--kill)",
                        p.node,
                        node_ip(p.node)
                    );
                    match cluster.exits[p.node] {
                        Some(st) => {
                            print_row(out, p.node, ranks_up(p.node), &describe_exit(Some(st)));
                            failures.push(format!(
                                "{head}; the node stopped after {:.1}s\n    {}",
                                t0.elapsed().as_secs_f64(),
                                diagnose(layout, &logs, p.node, Some(st))
                            ));
                        }
                        None => failures.push(format!(
                            "{head}, but run.sh on node {} did not stop within {}s (fail-fast broken)",
                            p.node,
                            FAIL_FAST_BOUND.as_secs()
                        )),
                    }
                }
            }
        } else {
            // verify.sh, then enough requests to reach every rank.
            // Node 0 says it is ready (run.sh prints it once the proxy or
            // API server answers), and records where it listens.
            // On Kubernetes the proxy is its own Deployment: node 0's run.sh
            // leaves it alone, so only a mixed layout's node 0 says ready.
            let expect_ready = !(k8s.is_some() && layout.is_pd());
            let ready_by = Instant::now() + Duration::from_secs(10);
            let ready = loop {
                if !expect_ready {
                    break None;
                }
                let log = fs::read_to_string(logs.join("node0.log")).unwrap_or_default();
                if let Some(l) = log.lines().find(|l| l.starts_with("run.sh: ready:")) {
                    break Some(l.to_owned());
                }
                if Instant::now() >= ready_by.min(deadline) {
                    break None;
                }
                thread::sleep(Duration::from_millis(100));
            };
            match ready {
                Some(l) => {
                    let _ = writeln!(out, "node 0: {l}");
                }
                None if !expect_ready => {}
                None => failures.push(format!(
                    "{}: run.sh never printed `run.sh: ready:` although {api_host}:{api_port} answers",
                    node_label(layout, 0)
                )),
            }
            // verify.sh as in a fresh shell on node 0: no PD_NODE_IPS, only
            // the log directory run.sh used (its default on a cluster).
            let mut cmd = Command::new(&shell.bash);
            cmd.arg("verify.sh");
            base_env(&mut cmd);
            cmd.current_dir(&scripts)
                .env_remove("PD_NODE_IPS")
                .env("PD_LOG_DIR", &logs);
            if k8s.is_some() {
                // Against the proxy Service, as the README's k8s path does.
                cmd.arg(&api_host);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match run_bounded(cmd, left.min(Duration::from_secs(60))) {
                Ok((st, text)) if st.success() => {
                    for l in text.lines().filter(|l| l.starts_with("verify.sh:")) {
                        let _ = writeln!(out, "{l}");
                    }
                }
                Ok((st, text)) => failures.push(format!(
                    "verify.sh {} against {api_host}:{api_port}:\n    {}",
                    describe_exit(Some(st)),
                    text.trim().replace('\n', "\n    ")
                )),
                Err(e) => failures.push(format!("verify.sh {e}")),
            }
            // Every pod's probes, as the kubelet runs them: the manifest's
            // command, with the ConfigMap's mount played by the scripts
            // directory and the pod's loopback by its node's address.
            if let Some(k) = &k8s {
                for pod in &k.pods {
                    let mut passed = Vec::new();
                    for (kind, argv) in &pod.probes {
                        let Some((program, args)) = argv.split_first() else {
                            continue;
                        };
                        let mut cmd = Command::new(if program == "bash" {
                            shell.bash.as_os_str().to_owned()
                        } else {
                            program.into()
                        });
                        for a in args {
                            match a.strip_prefix(pd_dsl::render::k8s::SCRIPTS_DIR) {
                                Some(rest) => cmd.arg(format!("{}{rest}", scripts.display())),
                                None => cmd.arg(a),
                            };
                        }
                        base_env(&mut cmd);
                        cmd.current_dir(&scripts)
                            .env("PD_HEALTH_HOST", node_ip(pod.node));
                        let left = deadline.saturating_duration_since(Instant::now());
                        match run_bounded(cmd, left.min(Duration::from_secs(20))) {
                            Ok((st, _)) if st.success() => passed.push(*kind),
                            Ok((st, text)) => failures.push(format!(
                                "{}: its {kind} probe `{}` {}:\n    {}",
                                node_label(layout, pod.node),
                                argv.join(" "),
                                describe_exit(Some(st)),
                                text.trim().replace('\n', "\n    ")
                            )),
                            Err(e) => failures.push(format!(
                                "{}: its {kind} probe {e}",
                                node_label(layout, pod.node)
                            )),
                        }
                    }
                    if !passed.is_empty() {
                        let _ = writeln!(
                            out,
                            "node {}: the pod's {} probe(s) pass",
                            pod.node,
                            passed.join(", ")
                        );
                    }
                }
            }
            if failures.is_empty() {
                let p_ranks = layout.placement.proxy.prefill.len();
                let d_ranks = layout.placement.proxy.decode.len();
                // A least-loaded proxy (upstream's) sends requests that do
                // not overlap to the first rank of each list: as many in
                // flight as the larger role has ranks (the stand-ins hold
                // each completion LATENCY_MS), in WAVES waves.
                let concurrency = if layout.is_pd() {
                    p_ranks.max(d_ranks).max(1)
                } else {
                    2
                };
                let n = WAVES * concurrency;
                requests = n;
                let errors = send_requests(layout, &api_host, api_port, n, concurrency, deadline);
                if !errors.is_empty() {
                    failures.push(format!(
                        "{} of {n} requests through {api_host}:{api_port} failed; first: {}",
                        errors.len(),
                        errors[0]
                    ));
                }
                let coverage = coverage(layout, &procs, &state, &marker, concurrency, n);
                match coverage {
                    Ok(min) => {
                        let what = if layout.is_pd() {
                            "every prefill and decode rank"
                        } else {
                            "every API server"
                        };
                        let _ = writeln!(
                            out,
                            "{n} requests, {concurrency} at a time: {what} served (at least {min} each)"
                        );
                    }
                    Err(m) => failures.push(m),
                }
            }
        }
    }

    // Final view, then stop everything.
    cluster.poll();
    let _ = writeln!(out, "nodes:");
    for i in 0..nodes.len() {
        let served: Vec<u64> = procs
            .iter()
            .filter(|p| p.node == i && p.serves_api)
            .filter_map(|p| served_count(&state, p))
            .collect();
        let served = match (served.iter().min(), served.iter().max()) {
            (Some(a), Some(b)) if a != b => format!("served {a}-{b}"),
            (Some(a), _) => format!("served {a}"),
            _ => "served -".into(),
        };
        let st = match cluster.exits[i] {
            Some(s) => describe_exit(Some(s)),
            None => "running".into(),
        };
        print_row(out, i, ranks_up(i), &format!("{served:<14} {st}"));
    }
    let left = cluster.stop();
    if !left.is_empty() {
        let list: Vec<String> = left
            .iter()
            .take(5)
            .map(|(pid, cmd)| format!("pid {pid} ({cmd})"))
            .collect();
        failures.push(format!(
            "{} process(es) left running after every run.sh stopped (killed by the rehearsal): {}",
            left.len(),
            list.join(", ")
        ));
    }
    let strays = marked_processes(&marker);
    if !strays.is_empty() {
        failures.push(format!(
            "{} process(es) could not be stopped: {:?}",
            strays.len(),
            strays
        ));
    }
    // A tool the release table leaves undecided is absent here; when a
    // script missed it, say that the table, not the image, is the cause.
    let missed: Vec<&str> = shell
        .undecided
        .iter()
        .map(String::as_str)
        .filter(|t| {
            failures.iter().any(|f| {
                f.contains(&format!("missing {t}"))
                    || f.contains(&format!("{t}: command not found"))
            })
        })
        .collect();
    if !missed.is_empty() {
        failures.push(format!(
            "upstream/facts/vllm-ascend/{}.json leaves `{}` undecided (null) for the {} image, so the rehearsal's PATH lacks it: decide it in the table (scripts/upstream/facts.py), or make the scripts work without it",
            shell.release,
            missed.join("`, `"),
            crate::facts::image_key(layout.hardware)
        ));
    }
    drop(inj);
    let elapsed = started.elapsed();
    let passed = failures.is_empty();
    if passed {
        let checked = if opts.action.is_some() {
            "the node stopped cleanly".to_owned()
        } else {
            format!("verify.sh ok, {requests} requests, every rank served")
        };
        let _ = writeln!(
            out,
            "PASS {}: {} ranks on {} nodes, {checked}, nothing left running ({:.1}s)",
            layout.name(),
            node_total.iter().sum::<usize>(),
            nodes.len(),
            elapsed.as_secs_f64()
        );
    } else {
        let _ = writeln!(
            out,
            "FAIL {} ({:.1}s):",
            layout.name(),
            elapsed.as_secs_f64()
        );
        for f in &failures {
            let _ = writeln!(out, "  - {f}");
        }
    }
    let kept = opts.keep.then(|| root.clone());
    if let Some(k) = &kept {
        let _ = writeln!(out, "kept {}", k.display());
    }
    drop(work);
    Ok(Outcome {
        passed,
        failures,
        elapsed,
        requests,
        kept,
    })
}
