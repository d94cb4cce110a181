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

use crate::expect::{Expectation, ExpectedRank};
use crate::http;
pub use crate::standin::proxy::Policy;
use pd_dsl::render;
use pd_dsl::{Layout, Role};
use serde_json::json;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::Write;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// An injected fault (besides `--kill`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// One of the layout's ports is held before start.
    PortInUse,
    /// The model directory does not exist.
    MissingModel,
    /// One node reports the wrong number of NPUs.
    WrongNpuCount,
    /// A non-master DP rank cannot reach its DP master.
    UnreachableMaster,
    /// The proxy's decoder lists miss the last decode rank.
    ProxyMissesRank,
    /// The proxy script does not exist on node 0.
    MissingProxyScript,
    /// The proxy exits right after start, every time.
    ProxyExits,
}

impl Fault {
    /// Every fault, in documentation order.
    pub const ALL: [Fault; 7] = [
        Fault::PortInUse,
        Fault::MissingModel,
        Fault::WrongNpuCount,
        Fault::UnreachableMaster,
        Fault::ProxyMissesRank,
        Fault::MissingProxyScript,
        Fault::ProxyExits,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Fault::PortInUse => "port-in-use",
            Fault::MissingModel => "missing-model",
            Fault::WrongNpuCount => "wrong-npu-count",
            Fault::UnreachableMaster => "unreachable-master",
            Fault::ProxyMissesRank => "proxy-misses-rank",
            Fault::MissingProxyScript => "missing-proxy-script",
            Fault::ProxyExits => "proxy-exits",
        }
    }

    /// Parses a command-line name.
    pub fn parse(s: &str) -> Result<Fault, String> {
        Fault::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Fault::ALL.iter().map(|f| f.name()).collect();
                format!("unknown fault `{s}`, expected one of {}", names.join(", "))
            })
    }
}

/// A signal an operator's session sends to `run.sh`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sig {
    /// A dropped SSH session or `docker exec -it`.
    Hup,
    /// `kill`, systemd, `docker stop`.
    Term,
    /// Ctrl-C.
    Int,
}

impl Sig {
    /// Every signal, in documentation order.
    pub const ALL: [Sig; 3] = [Sig::Hup, Sig::Term, Sig::Int];

    /// `HUP`, `TERM`, `INT`.
    pub fn name(self) -> &'static str {
        match self {
            Sig::Hup => "HUP",
            Sig::Term => "TERM",
            Sig::Int => "INT",
        }
    }

    /// Parses `HUP`, `SIGHUP`, `hup`, ….
    pub fn parse(s: &str) -> Result<Sig, String> {
        let up = s.to_ascii_uppercase();
        let name = up.strip_prefix("SIG").unwrap_or(&up);
        Sig::ALL
            .into_iter()
            .find(|g| g.name() == name)
            .ok_or_else(|| format!("unknown signal `{s}`, expected HUP, TERM or INT"))
    }

    fn raw(self) -> rustix::process::Signal {
        use rustix::process::Signal;
        match self {
            Sig::Hup => Signal::HUP,
            Sig::Term => Signal::TERM,
            Sig::Int => Signal::INT,
        }
    }
}

/// An operator action on one node once the deployment is up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// The signal to that node's `run.sh` process (not its group): every
    /// rank of the node must stop, nothing of the node may be left.
    Signal(usize, Sig),
    /// That node's `stop.sh`, twice: the first stops every rank and frees
    /// the node's ports, the second finds nothing to stop; both exit 0.
    Stop(usize),
}

/// What to rehearse and how.
#[derive(Clone, Debug)]
pub struct Options {
    /// The multi-call executable that plays every stand-in when invoked
    /// under its name (the `catalog` binary; `std::env::current_exe()`).
    pub standins: PathBuf,
    /// `--kill NODE:RANK`: that rank dies once the deployment is up.
    pub kill: Option<(usize, u32)>,
    /// `--signal NODE:SIG` / `--stop NODE`: an operator action once the
    /// deployment is up, which must stop that node cleanly.
    pub action: Option<Action>,
    /// An injected fault.
    pub fault: Option<Fault>,
    /// Run this proxy script (e.g. upstream's
    /// `load_balance_proxy_server_example.py`) instead of the stand-in.
    pub proxy_script: Option<PathBuf>,
    /// The stand-in proxy's selection policy (ignored with `proxy_script`).
    pub proxy_policy: Policy,
    /// Keep the temp dir (scripts, logs, state) after the rehearsal.
    pub keep: bool,
    /// Global bound on the whole rehearsal.
    pub timeout: Duration,
    /// `--k8s-env`: each node's `run.sh` gets the environment its pod of the
    /// layout's `k8s/` manifests would have (no `PD_NODE_INDEX`/`PD_NODE_IPS`)
    /// and the proxy runs as its Deployment, at its own address
    /// ([`crate::k8s_env`]).
    pub k8s_env: bool,
    /// With `k8s_env`: variables to set (`Some`) or remove (`None`) in every
    /// pod's environment, to rehearse a broken manifest.
    pub k8s_env_override: Vec<(String, Option<String>)>,
}

impl Options {
    /// Defaults: no fault, stand-in proxy, temp dir removed, 120 s timeout.
    pub fn new(standins: impl Into<PathBuf>) -> Options {
        Options {
            standins: standins.into(),
            kill: None,
            action: None,
            fault: None,
            proxy_script: None,
            proxy_policy: Policy::RoundRobin,
            keep: false,
            timeout: Duration::from_secs(120),
            k8s_env: false,
            k8s_env_override: Vec::new(),
        }
    }
}

/// The result of a rehearsal that could run.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// `true` when the deployment came up, verified, every rank served and
    /// nothing was left running.
    pub passed: bool,
    /// What went wrong, each naming node and rank where one applies.
    pub failures: Vec<String>,
    /// Wall time.
    pub elapsed: Duration,
    /// Completions sent (verify.sh excluded).
    pub requests: usize,
    /// The temp dir, when kept.
    pub kept: Option<PathBuf>,
}

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
                devices: r.devices.clone(),
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

/// One `vllm serve` process the layout starts: PD = one per rank; mixed =
/// one per node (native DP), keyed by its first rank.
#[derive(Clone, Debug)]
struct Process {
    node: usize,
    first_rank: u32,
    ranks: Vec<u32>,
    serves_api: bool,
}

fn processes(layout: &Layout) -> Vec<Process> {
    let mut out = Vec::new();
    for n in &layout.placement.nodes {
        if layout.is_pd() {
            for r in &n.ranks {
                out.push(Process {
                    node: n.index,
                    first_rank: r.dp_rank,
                    ranks: vec![r.dp_rank],
                    serves_api: r.api_port.is_some(),
                });
            }
        } else if let Some(first) = n.ranks.first() {
            out.push(Process {
                node: n.index,
                first_rank: first.dp_rank,
                ranks: n.ranks.iter().map(|r| r.dp_rank).collect(),
                serves_api: !n.headless,
            });
        }
    }
    out
}

/// `node 2 (127.0.0.3, decode ranks 0-15)`.
fn node_label(layout: &Layout, i: usize) -> String {
    let Some(n) = layout.placement.nodes.get(i) else {
        return format!("node {i} ({})", node_ip(i));
    };
    let ranks = match (n.ranks.first(), n.ranks.last()) {
        (Some(a), Some(b)) if a.dp_rank != b.dp_rank => {
            format!("ranks {}-{}", a.dp_rank, b.dp_rank)
        }
        (Some(a), _) => format!("rank {}", a.dp_rank),
        _ => "no ranks".into(),
    };
    format!("node {i} ({}, {} {ranks})", node_ip(i), n.role)
}

/// What uses `port` on node `i`, for messages.
fn port_owner(layout: &Layout, i: usize, port: u32) -> Option<String> {
    let n = layout.placement.nodes.get(i)?;
    for r in &n.ranks {
        if r.api_port == Some(port) {
            return Some(format!("{} rank {}'s API port", n.role, r.dp_rank));
        }
        if let Some((a, b)) = r.kv_span
            && (a..=b).contains(&port)
        {
            return Some(format!("{} rank {}'s kv handshake port", n.role, r.dp_rank));
        }
    }
    // Each engine's own DP RPC port (per-role ports differ by engine).
    let rpc = layout
        .placement
        .engines
        .get(n.engine)
        .and_then(|e| e.dp_rpc_port);
    if rpc == Some(port) && n.dp_master == i {
        return Some("the DP master's RPC port".into());
    }
    if n.hosts_proxy && layout.proxy.is_some_and(|p| p.port == port) {
        return Some("the proxy port".into());
    }
    None
}

/// Where a fault lands, and what the rehearsal holds for it.
#[derive(Debug, Default)]
struct Injection {
    /// Extra environment per node.
    env: BTreeMap<usize, Vec<(String, String)>>,
    /// A port held until teardown.
    held: Option<TcpListener>,
    /// Printed before start.
    note: Option<String>,
    /// Model dir is not created.
    no_model: bool,
    /// DP master timeout for the stand-ins.
    master_timeout: u32,
}

fn inject(layout: &Layout, fault: Option<Fault>) -> Result<Injection, String> {
    let mut inj = Injection {
        master_timeout: MASTER_TIMEOUT_S,
        ..Injection::default()
    };
    let nodes = &layout.placement.nodes;
    match fault {
        None => {}
        Some(Fault::MissingModel) => {
            inj.no_model = true;
            inj.note = Some("the model directory (PD_MODEL_PATH) does not exist".into());
        }
        Some(Fault::WrongNpuCount) => {
            let i = nodes.len().saturating_sub(1);
            let npus = layout.hardware.npus_per_node / 2;
            inj.env
                .entry(i)
                .or_default()
                .push(("PD_STANDIN_NPUS".into(), npus.to_string()));
            inj.note = Some(format!(
                "{}'s npu-smi reports {npus} NPUs (the hardware has {})",
                node_label(layout, i),
                layout.hardware.npus_per_node
            ));
        }
        Some(Fault::PortInUse) => {
            let (i, port) = nodes
                .iter()
                .rev()
                .find_map(|n| {
                    n.ranks
                        .iter()
                        .find_map(|r| r.api_port)
                        .map(|p| (n.index, p))
                })
                .ok_or("the layout has no API port to occupy")?;
            let port16 = u16::try_from(port).map_err(|e| e.to_string())?;
            let l = TcpListener::bind((node_ip(i).as_str(), port16))
                .map_err(|e| format!("cannot occupy {}:{port}: {e}", node_ip(i)))?;
            inj.held = Some(l);
            inj.note = Some(format!(
                "{}:{port} ({} on node {i}) is held before start",
                node_ip(i),
                port_owner(layout, i, port).unwrap_or_else(|| "a layout port".into())
            ));
        }
        Some(Fault::ProxyMissesRank) => {
            let last = layout.placement.proxy.decode.last().ok_or_else(|| {
                format!(
                    "fault proxy-misses-rank does not apply to {}: it has no proxy (mixed layout)",
                    layout.name()
                )
            })?;
            inj.env
                .entry(0)
                .or_default()
                .push((PROXY_DROP.into(), "decode".into()));
            inj.note = Some(format!(
                "the proxy's decoder lists leave out their last entry ({})",
                endpoint_text(last)
            ));
        }
        Some(f @ (Fault::MissingProxyScript | Fault::ProxyExits)) => {
            if !layout.is_pd() {
                return Err(format!(
                    "fault {} does not apply to {}: it has no proxy (mixed layout)",
                    f.name(),
                    layout.name()
                ));
            }
            let env = inj.env.entry(0).or_default();
            if f == Fault::MissingProxyScript {
                let missing = "/nonexistent/load_balance_proxy_server_example.py";
                env.push(("PD_PROXY_SCRIPT".into(), missing.into()));
                inj.note = Some(format!("node 0's PD_PROXY_SCRIPT is {missing}"));
            } else {
                env.push((PROXY_EXIT.into(), "3".into()));
                env.push(("PD_PROXY_RESTARTS".into(), "1".into()));
                inj.note = Some(
                    "the proxy exits with code 3 right after start; node 0 may restart it once (PD_PROXY_RESTARTS=1)"
                        .into(),
                );
            }
        }
        Some(Fault::UnreachableMaster) => {
            let p = &layout.placement;
            let spanning = p
                .engines
                .iter()
                .find(|e| e.dp > 1 && e.nodes.len() > 1)
                .and_then(|e| e.nodes.get(1).map(|&n| (e, n)));
            let single = || {
                p.engines
                    .iter()
                    .find(|e| e.dp > 1 && layout.is_pd())
                    .map(|e| (e, e.master()))
            };
            let (engine, target) = spanning.or_else(single).ok_or_else(|| {
                format!(
                    "fault unreachable-master does not apply to {}: no rank connects to a DP master \
                     (every engine has DP 1 or is one native-DP process)",
                    layout.name()
                )
            })?;
            let rpc = engine.dp_rpc_port.unwrap_or(29550);
            let master = format!("{}:{rpc}", node_ip(engine.master()));
            inj.env
                .entry(target)
                .or_default()
                .push(("PD_STANDIN_BLOCKED".into(), master.clone()));
            inj.master_timeout = FAULT_MASTER_TIMEOUT_S;
            inj.note = Some(format!(
                "{} cannot reach its DP master {master} (the DP RPC port is blocked)",
                node_label(layout, target)
            ));
        }
    }
    Ok(inj)
}

/// Every process (pid, command line) whose environment holds `marker`.
fn marked_processes(marker: &str) -> Vec<(u32, String)> {
    let want = format!("{MARKER}={marker}");
    let me = std::process::id();
    let mut out = Vec::new();
    let Ok(dir) = fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(env) = fs::read(entry.path().join("environ")) else {
            continue;
        };
        if env.split(|b| *b == 0).any(|v| v == want.as_bytes()) {
            let cmd = fs::read(entry.path().join("cmdline"))
                .map(|c| {
                    String::from_utf8_lossy(&c)
                        .split('\0')
                        .filter(|s| !s.is_empty())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_default();
            out.push((pid, cmd));
        }
    }
    out
}

fn signal_pid(pid: u32, sig: rustix::process::Signal) {
    if let Some(p) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process(p, sig);
    }
}

fn signal_group(pgid: u32, sig: rustix::process::Signal) {
    if let Some(p) = i32::try_from(pgid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(p, sig);
    }
}

/// Runs the sweep when the rehearsal's end of its stdin closes, whatever
/// ends the rehearsal; then removes the work dir `$2` (empty: kept).
const REAPER: &str = r#"while IFS= read -r _; do :; done
for _ in 1 2 3 4 5; do
    found=0
    for f in /proc/[0-9]*/environ; do
        if grep -qzxF "$1" "$f" 2>/dev/null; then
            pid=${f#/proc/}
            kill -KILL "${pid%/environ}" 2>/dev/null && found=1
        fi
    done
    ((found)) || break
    sleep 0.2
done
if [[ -n $2 && -d $2 ]]; then rm -rf -- "$2"; fi"#;

/// The running cluster; stops everything on drop.
struct Cluster {
    runs: Vec<Option<Child>>,
    exits: Vec<Option<ExitStatus>>,
    marker: String,
    reaper: Option<(Child, ChildStdin)>,
    stopped: bool,
}

impl Cluster {
    fn poll(&mut self) {
        for (i, run) in self.runs.iter_mut().enumerate() {
            if self.exits[i].is_none()
                && let Some(child) = run.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                self.exits[i] = Some(status);
            }
        }
    }

    /// Stops everything; returns processes a clean stop left behind.
    fn stop(&mut self) -> Vec<(u32, String)> {
        if self.stopped {
            return Vec::new();
        }
        self.stopped = true;
        use rustix::process::Signal;
        self.poll();
        for (i, run) in self.runs.iter().enumerate() {
            if let (Some(child), None) = (run, self.exits[i]) {
                signal_group(child.id(), Signal::TERM);
            }
        }
        let deadline = Instant::now() + GRACE;
        while Instant::now() < deadline && self.exits.iter().any(Option::is_none) {
            self.poll();
            thread::sleep(Duration::from_millis(50));
        }
        let clean = self.exits.iter().all(Option::is_some);
        for (i, run) in self.runs.iter_mut().enumerate() {
            if let Some(child) = run.as_mut() {
                if self.exits[i].is_none() {
                    signal_group(child.id(), Signal::KILL);
                }
                // Reap, and kill anything left in the group.
                if let Ok(status) = child.wait() {
                    self.exits[i].get_or_insert(status);
                }
                signal_group(child.id(), Signal::KILL);
            }
        }
        // Ranks run in their own sessions (the launcher's start_new_session):
        // give a clean stop a moment, then sweep by the environment marker.
        let mut left = Vec::new();
        for attempt in 0..40 {
            let found = marked_processes(&self.marker);
            if found.is_empty() {
                break;
            }
            if attempt == 10 && clean {
                left = found.clone();
            }
            if attempt >= 10 {
                for (pid, _) in &found {
                    signal_pid(*pid, Signal::KILL);
                }
            }
            thread::sleep(Duration::from_millis(50));
        }
        if let Some((mut child, stdin)) = self.reaper.take() {
            drop(stdin);
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        left
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// The temp dir; removed on drop unless kept.
struct WorkDir {
    path: PathBuf,
    keep: bool,
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

fn work_dir() -> Result<PathBuf, String> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let path = std::env::temp_dir().join(format!("pd-rehearse-{}-{nanos:09}", std::process::id()));
    fs::create_dir_all(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    Ok(path)
}

fn write_file(path: &Path, text: &str, executable: bool) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let mode = if executable { 0o755 } else { 0o644 };
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(|e| format!("cannot chmod {}: {e}", path.display()))
}

/// The environment variable (set on node 0 by the `proxy-misses-rank`
/// fault) that makes the proxy shim drop the last entry of a list.
const PROXY_DROP: &str = "PD_REHEARSAL_PROXY_DROP";

/// The environment variable (set on node 0 by the `proxy-exits` fault) that
/// makes the proxy shim exit with that code at once.
const PROXY_EXIT: &str = "PD_REHEARSAL_PROXY_EXIT";

/// The environment variable (set on node 0 by a proxy fault with
/// `--proxy-script`) naming the real proxy the shim runs after injecting.
const PROXY_REAL: &str = "PD_REHEARSAL_PROXY_REAL";

/// The option (in [`PROXY_SHIM`]) no upstream proxy defines: the
/// `proxy-exits` fault hands it to a real proxy, whose own argparse then
/// exits with code 2, every time.
const PROXY_BAD_OPTION: &str = "--pd-rehearsal-fault-proxy-exits";

const PROXY_SHIM: &str = r#"#!/usr/bin/env python3
"""Rehearsal stand-in for load_balance_proxy_server_example.py: proxy.sh runs
`python3 "$PD_PROXY_SCRIPT" ARGS...`; this replaces itself with `pd-proxy ARGS...`
(first on PATH), which takes the upstream proxy's command line, or with
`python3 "$PD_REHEARSAL_PROXY_REAL" ARGS...` (a real proxy, --proxy-script).
PD_REHEARSAL_PROXY_DROP=prefill|decode (the proxy-misses-rank fault) drops the
last entry of that role's host and port lists first; PD_REHEARSAL_PROXY_EXIT=N
(the proxy-exits fault) exits with code N at once, or, with a real proxy, hands
it an option it does not define, so that its own argparse exits."""
import os
import sys

real = os.environ.get("PD_REHEARSAL_PROXY_REAL")
code = os.environ.get("PD_REHEARSAL_PROXY_EXIT")
if code and not real:
    print("proxy stand-in: exiting with code %s on purpose (fault proxy-exits)" % code, file=sys.stderr)
    sys.exit(int(code))
args = sys.argv[1:]
role = {"prefill": "--prefiller-", "decode": "--decoder-"}.get(
    os.environ.get("PD_REHEARSAL_PROXY_DROP", ""))
if role:
    for flag in (role + "hosts", role + "ports"):
        if flag in args:
            end = args.index(flag) + 1
            while end < len(args) and not args[end].startswith("--"):
                end += 1
            if end > args.index(flag) + 1:
                del args[end - 1]
if real:
    if code:
        args.append("--pd-rehearsal-fault-proxy-exits")
    os.execv(sys.executable, [sys.executable, real] + args)
os.execvp("pd-proxy", ["pd-proxy"] + args)
"#;

/// Lines of `text` worth quoting in a failure.
fn error_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| {
            let l = l.trim();
            l.contains("error")
                || l.contains("FAIL")
                || l.starts_with("vllm stand-in:")
                || l.starts_with("run.sh: the other nodes")
        })
        .filter(|l| !l.contains(" ranks [") && !l.contains("warning:"))
        .map(|l| {
            let l = l.trim();
            if l.chars().count() > 300 {
                format!("{}…", l.chars().take(300).collect::<String>())
            } else {
                l.to_owned()
            }
        })
        .collect()
}

fn describe_exit(status: Option<ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(s) => match (s.code(), s.signal()) {
            (Some(c), _) => format!("exited with code {c}"),
            (None, Some(sig)) => format!("was killed by signal {sig}"),
            _ => "exited".into(),
        },
        None => "is still running".into(),
    }
}

/// Why node `i` failed: its run.sh log and its ranks' logs.
fn diagnose(layout: &Layout, logs: &Path, i: usize, status: Option<ExitStatus>) -> String {
    let mut msg = format!(
        "{}: run.sh {}",
        node_label(layout, i),
        describe_exit(status)
    );
    let run_log = fs::read_to_string(logs.join(format!("node{i}.log"))).unwrap_or_default();
    let mut lines: Vec<String> = Vec::new();
    for l in error_lines(&run_log) {
        // Name the owner of a busy port.
        if let Some(rest) = l.split("already in use: ").nth(1) {
            let owners: Vec<String> = rest
                .split(" (")
                .next()
                .unwrap_or("")
                .split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok())
                .map(|p| match port_owner(layout, i, p) {
                    Some(o) => format!("{p} = {o}"),
                    None => p.to_string(),
                })
                .collect();
            lines.push(format!("{l} [{}]", owners.join(", ")));
        } else {
            lines.push(l);
        }
    }
    let mut ranks: Vec<(u32, Vec<String>)> = Vec::new();
    if let Ok(dir) = fs::read_dir(logs.join(format!("node{i}"))) {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(r) = name
                .strip_prefix("rank")
                .and_then(|s| s.strip_suffix(".log"))
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            let text = fs::read_to_string(e.path()).unwrap_or_default();
            let errs = error_lines(&text);
            if !errs.is_empty() {
                ranks.push((r, errs));
            }
        }
    }
    ranks.sort_by_key(|(r, _)| *r);
    let role = layout
        .placement
        .nodes
        .get(i)
        .map_or("?".into(), |n| n.role.to_string());
    for (r, errs) in ranks.iter().take(4) {
        for e in errs.iter().take(2) {
            lines.push(format!("node {i} ({}) {role} rank {r}: {e}", node_ip(i)));
        }
    }
    if ranks.len() > 4 {
        lines.push(format!(
            "... and {} more rank(s) of node {i}",
            ranks.len() - 4
        ));
    }
    for l in lines.iter().take(12) {
        let _ = write!(msg, "\n    {l}");
    }
    let _ = write!(
        msg,
        "\n    (logs: {}, {})",
        logs.join(format!("node{i}.log")).display(),
        logs.join(format!("node{i}")).display()
    );
    msg
}

fn served_count(state: &Path, p: &Process) -> Option<u64> {
    fs::read_to_string(state.join(format!("{}-{}.served", p.node, p.first_rank)))
        .ok()
        .and_then(|s| s.trim().parse().ok())
}

/// Waits until every port preflight checks binds on its node's address
/// (except the one a `port-in-use` fault holds). `Ok(None)`: free at once;
/// `Ok(Some(t))`: free after `t`; `Err`: still busy at `until`.
fn wait_for_free_ports(
    layout: &Layout,
    inj: &Injection,
    until: Instant,
) -> Result<Option<Duration>, String> {
    let held = inj.held.as_ref().and_then(|l| l.local_addr().ok());
    let started = Instant::now();
    loop {
        let mut busy = Vec::new();
        for n in &layout.placement.nodes {
            let ip = node_ip(n.index);
            for (a, b) in render::scripts::node_ports(layout, n.index) {
                for p in a..=b {
                    let Ok(p) = u16::try_from(p) else { continue };
                    if held.is_some_and(|h| h.port() == p && h.ip().to_string() == ip) {
                        continue;
                    }
                    if TcpListener::bind((ip.as_str(), p)).is_err() {
                        busy.push(format!("{ip}:{p}"));
                    }
                }
            }
        }
        if busy.is_empty() {
            return Ok((started.elapsed() > Duration::from_millis(100)).then(|| started.elapsed()));
        }
        if Instant::now() >= until {
            return Err(busy.join(" "));
        }
        thread::sleep(Duration::from_millis(250));
    }
}

/// Runs a script with the rehearsal's environment, bounded.
fn run_bounded(mut cmd: Command, limit: Duration) -> Result<(ExitStatus, String), String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let reader = thread::spawn(move || {
        use std::io::Read;
        let mut s = String::new();
        if let Some(o) = out.as_mut() {
            let _ = o.read_to_string(&mut s);
        }
        if let Some(e) = err.as_mut() {
            let _ = e.read_to_string(&mut s);
        }
        s
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Ok(Some(s)) = child.try_wait() {
            break Some(s);
        }
        if Instant::now() >= deadline {
            signal_group(child.id(), rustix::process::Signal::KILL);
            let _ = child.wait();
            break None;
        }
        thread::sleep(Duration::from_millis(20));
    };
    let text = reader.join().unwrap_or_default();
    match status {
        Some(s) => Ok((s, text)),
        None => Err(format!(
            "did not finish within {}s: {text}",
            limit.as_secs()
        )),
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
    let artifacts = render::render_layout(layout).map_err(|e| e.to_string())?;
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
        if let Some(k) = &k8s {
            cmd.env(crate::k8s_env::HOSTS_ENV, &k.hosts);
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
        if shell.absent.is_empty() {
            "nothing".to_owned()
        } else {
            shell.absent.join(", ")
        },
        if shell.undecided.is_empty() {
            String::new()
        } else {
            format!(
                " and, undecided by the table (null), {}",
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
            act(
                layout,
                action,
                drain,
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

/// Processes of this rehearsal on node `i` (they carry the marker and
/// `PD_STANDIN_NODE=i`, inherited from that node's `run.sh`).
fn node_processes(marker: &str, i: usize) -> Vec<(u32, String)> {
    let want = format!("PD_STANDIN_NODE={i}");
    marked_processes(marker)
        .into_iter()
        .filter(|(pid, _)| {
            fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|e| e.split(|b| *b == 0).any(|v| v == want.as_bytes()))
        })
        .collect()
}

/// Waits until node `i` has no process left; returns what is left at `bound`.
fn wait_node_empty(marker: &str, i: usize, bound: Duration) -> Vec<(u32, String)> {
    let until = Instant::now() + bound;
    loop {
        let left = node_processes(marker, i);
        if left.is_empty() || Instant::now() >= until {
            return left;
        }
        thread::sleep(Duration::from_millis(100));
    }
}

fn pids_text(left: &[(u32, String)]) -> String {
    left.iter()
        .take(5)
        .map(|(pid, cmd)| {
            let cmd: String = cmd.replace('\n', " ").chars().take(120).collect();
            format!("pid {pid} ({cmd})")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// After a signal or stop.sh, `run.sh` of a node must exit within this.
const STOP_BOUND: Duration = Duration::from_secs(40);

/// Runs an operator [`Action`] and checks that node stopped cleanly.
#[allow(clippy::too_many_arguments)]
fn act(
    layout: &Layout,
    action: Action,
    drain: Option<u64>,
    bash: &Path,
    cluster: &mut Cluster,
    scripts: &Path,
    logs: &Path,
    marker: &str,
    env: impl Fn(&mut Command),
    out: &mut dyn Write,
    failures: &mut Vec<String>,
) {
    let (i, what) = match action {
        Action::Signal(i, sig) => (i, format!("SIG{} to node {i}'s run.sh", sig.name())),
        Action::Stop(i) => (i, format!("stop.sh {i} on node {i}")),
    };
    // A pod that promises a drain gets SIGTERM with requests in flight on
    // each of its ranks' API ports (a decode rank takes requests only from
    // the proxy, with a prefill's KV): each must still be answered.
    let in_flight: Vec<(u32, thread::JoinHandle<Result<u16, String>>)> = match (action, drain) {
        (Action::Signal(_, Sig::Term), Some(_)) => layout
            .placement
            .nodes
            .get(i)
            .filter(|n| n.role != Role::Decode)
            .map(|n| n.ranks.iter().filter_map(|r| r.api_port).collect::<Vec<u32>>())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|port| {
                let p = u16::try_from(port).ok()?;
                let host = node_ip(i);
                let body = json!({"model": layout.served_model_name.clone(), "prompt": "drain", "max_tokens": 4});
                Some((
                    port,
                    thread::spawn(move || {
                        http::post_json(&host, p, "/v1/completions", &body, Duration::from_secs(20))
                            .map(|r| r.status)
                            .map_err(|e| e.to_string())
                    }),
                ))
            })
            .collect(),
        _ => Vec::new(),
    };
    if !in_flight.is_empty() {
        // Well inside each completion's LATENCY_MS.
        thread::sleep(Duration::from_millis(LATENCY_MS / 3));
    }
    let t0 = Instant::now();
    match action {
        Action::Signal(_, sig) => {
            if let Some(Some(child)) = cluster.runs.get(i) {
                signal_pid(child.id(), sig.raw());
            }
        }
        Action::Stop(_) => {
            let mut cmd = Command::new(bash);
            cmd.arg(scripts.join("stop.sh"));
            env(&mut cmd);
            cmd.arg(i.to_string());
            match run_bounded(cmd, STOP_BOUND) {
                Ok((st, text)) if st.success() => {
                    for l in text.lines().filter(|l| l.starts_with("stop.sh:")) {
                        let _ = writeln!(out, "  {l}");
                    }
                }
                Ok((st, text)) => failures.push(format!(
                    "{what} {}:\n    {}",
                    describe_exit(Some(st)),
                    text.trim().replace('\n', "\n    ")
                )),
                Err(e) => failures.push(format!("{what} {e}")),
            }
        }
    }
    let bound = t0 + STOP_BOUND;
    let requests = in_flight.len();
    let mut cut = Vec::new();
    for (port, h) in in_flight {
        match h.join() {
            Ok(Ok(200)) => {}
            Ok(Ok(status)) => cut.push(format!("{}:{port} answered {status}", node_ip(i))),
            Ok(Err(e)) => cut.push(format!("{}:{port}: {e}", node_ip(i))),
            Err(_) => cut.push(format!("{}:{port}: the client thread panicked", node_ip(i))),
        }
    }
    if !cut.is_empty() {
        failures.push(format!(
            "{what}: the pod promises a drain of {}s (PD_DRAIN_SECONDS in its manifest), but {} of {requests} in-flight request(s) were cut: {}",
            drain.unwrap_or(0),
            cut.len(),
            cut.join("; ")
        ));
    } else if requests > 0 {
        let _ = writeln!(
            out,
            "{what}: node {i} drained {requests} in-flight request(s) before stopping"
        );
    }
    while cluster.exits[i].is_none() && Instant::now() < bound {
        cluster.poll();
        thread::sleep(Duration::from_millis(50));
    }
    let Some(st) = cluster.exits[i] else {
        failures.push(format!(
            "{what}: run.sh did not exit within {}s",
            STOP_BOUND.as_secs()
        ));
        return;
    };
    let left = wait_node_empty(marker, i, Duration::from_secs(5));
    if !left.is_empty() {
        failures.push(format!(
            "{what}: run.sh {}, but {} process(es) of node {i} are left running (holding NPUs and ports): {}",
            describe_exit(Some(st)),
            left.len(),
            pids_text(&left)
        ));
        return;
    }
    let busy: Vec<String> = render::scripts::node_ports(layout, i)
        .into_iter()
        .flat_map(|(a, b)| a..=b)
        .filter(|p| {
            u16::try_from(*p).is_ok_and(|p| TcpListener::bind((node_ip(i).as_str(), p)).is_err())
        })
        .map(|p| p.to_string())
        .collect();
    if !busy.is_empty() {
        failures.push(format!(
            "{what}: ports of node {i} still in use: {}",
            busy.join(" ")
        ));
        return;
    }
    let _ = writeln!(
        out,
        "{what}: run.sh {} after {:.1}s; no process of node {i} left, its ports are free",
        describe_exit(Some(st)),
        t0.elapsed().as_secs_f64()
    );
    if i == 0 && logs.join("endpoint.url").exists() {
        failures.push(format!(
            "{what}: node 0 stopped, but endpoint.url still names its old URL (verify.sh would trust it)"
        ));
    }
    if let Action::Stop(_) = action {
        // Idempotent: a second stop finds nothing and succeeds.
        let mut cmd = Command::new(bash);
        cmd.arg(scripts.join("stop.sh"));
        env(&mut cmd);
        cmd.arg(i.to_string());
        match run_bounded(cmd, STOP_BOUND) {
            Ok((st, text)) if st.success() => {
                let line = text
                    .lines()
                    .find(|l| l.starts_with("stop.sh:"))
                    .unwrap_or("stop.sh: ok");
                let _ = writeln!(out, "{what} again: {line}");
            }
            Ok((st, text)) => failures.push(format!(
                "{what} again {} (stop.sh must be idempotent):\n    {}",
                describe_exit(Some(st)),
                text.trim().replace('\n', "\n    ")
            )),
            Err(e) => failures.push(format!("{what} again {e}")),
        }
    }
}

/// `endpoint` of a proxy list: `127.0.0.3:7100`.
fn endpoint_text(e: &pd_dsl::placement::Endpoint) -> String {
    format!("{}:{}", node_ip(e.node), e.port)
}

/// The running proxy's `--prefiller-*` and `--decoder-*` lists as
/// `host:port` (from its command line), found among this rehearsal's
/// processes; `None` when no process carries them.
fn running_proxy_lists(marker: &str) -> Option<(Vec<String>, Vec<String>)> {
    let (_, cmd) = marked_processes(marker)
        .into_iter()
        .find(|(_, c)| c.contains("--decoder-") && c.contains("--prefiller-"))?;
    let args: Vec<&str> = cmd.split(' ').collect();
    let list = |prefix: &str| -> Vec<String> {
        let Some(i) = args.iter().position(|a| a.starts_with(prefix)) else {
            return Vec::new();
        };
        args[i + 1..]
            .iter()
            .take_while(|a| !a.starts_with("--"))
            .map(|a| (*a).to_owned())
            .collect()
    };
    let zip = |h: Vec<String>, p: Vec<String>| -> Vec<String> {
        h.iter()
            .zip(&p)
            .map(|(h, p)| {
                let h = if h == "localhost" { "127.0.0.1" } else { h };
                format!("{h}:{p}")
            })
            .collect()
    };
    Some((
        zip(list("--prefiller-h"), list("--prefiller-p")),
        zip(list("--decoder-h"), list("--decoder-p")),
    ))
}

/// Every API process served at least once: `Ok(least served)`, else which
/// ranks got nothing and the likely causes, most likely first.
fn coverage(
    layout: &Layout,
    procs: &[Process],
    state: &Path,
    marker: &str,
    concurrency: usize,
    n: usize,
) -> Result<u64, String> {
    let nodes = &layout.placement.nodes;
    let mut min = u64::MAX;
    let mut idle: Vec<(Role, String, String)> = Vec::new();
    let mut served_by_role: BTreeMap<Role, (usize, usize)> = BTreeMap::new();
    for p in procs.iter().filter(|p| p.serves_api) {
        let role = nodes[p.node].role;
        let port = nodes[p.node]
            .ranks
            .iter()
            .find(|r| r.dp_rank == p.first_rank)
            .and_then(|r| r.api_port);
        let at = port.map_or_else(
            || node_ip(p.node),
            |port| format!("{}:{port}", node_ip(p.node)),
        );
        let label = format!("node {} {role} rank {} ({at})", p.node, p.first_rank);
        let e = served_by_role.entry(role).or_default();
        e.1 += 1;
        match served_count(state, p) {
            Some(0) => idle.push((role, label, at)),
            None => idle.push((role, format!("{label}, no counter file: never came up"), at)),
            Some(c) => {
                e.0 += 1;
                min = min.min(c);
            }
        }
    }
    if idle.is_empty() {
        return Ok(if min == u64::MAX { 0 } else { min });
    }
    let mut m = format!(
        "{} of {} rank(s) got no request from {n} requests ({concurrency} at a time):",
        idle.len(),
        procs.iter().filter(|p| p.serves_api).count()
    );
    for (_, label, _) in idle.iter().take(12) {
        let _ = write!(m, "\n      {label}");
    }
    if idle.len() > 12 {
        let _ = write!(m, "\n      ... and {} more", idle.len() - 12);
    }
    if !layout.is_pd() {
        let _ = write!(
            m,
            "\n    likely causes: the API server did not answer completions, or requests went to another port"
        );
        return Err(m);
    }
    let _ = write!(m, "\n    likely causes, most likely first:");
    let mut k = 1;
    // 1. Missing from the lists the proxy really runs with.
    let lists = running_proxy_lists(marker);
    let listed = |role: Role, at: &str| -> Option<bool> {
        let (p, d) = lists.as_ref()?;
        Some(match role {
            Role::Prefill => p.iter().any(|e| e == at),
            _ => d.iter().any(|e| e == at),
        })
    };
    let unlisted: Vec<&str> = idle
        .iter()
        .filter(|(role, _, at)| listed(*role, at) == Some(false))
        .map(|(_, _, at)| at.as_str())
        .collect();
    if !unlisted.is_empty() {
        let _ = write!(
            m,
            "\n    {k}. the running proxy's lists miss {} (its command line has {} prefill and {} decode entries; the layout has {} and {}): compare proxy.sh's PREFILL_*/DECODE_* with `catalog show {}`",
            unlisted.join(" "),
            lists.as_ref().map_or(0, |l| l.0.len()),
            lists.as_ref().map_or(0, |l| l.1.len()),
            layout.placement.proxy.prefill.len(),
            layout.placement.proxy.decode.len(),
            layout.name()
        );
        k += 1;
    } else if lists.is_none() {
        let _ = write!(
            m,
            "\n    {k}. the proxy's lists miss them (the proxy's command line could not be read): compare proxy.sh with `catalog show {}`",
            layout.name()
        );
        k += 1;
    }
    // 2. Whole role idle: the proxy bypasses it.
    if served_by_role
        .get(&Role::Prefill)
        .is_some_and(|(s, _)| *s == 0)
        && served_by_role
            .get(&Role::Decode)
            .is_some_and(|(s, _)| *s > 0)
    {
        let _ = write!(
            m,
            "\n    {k}. no prefill rank served while decode did: the proxy sends requests straight to decode (a decode-only fallback: decode recomputes every prompt)"
        );
        k += 1;
    }
    // 3. Listed but never picked.
    let _ = write!(
        m,
        "\n    {k}. the proxy never picked them: a least-loaded proxy (upstream's) gives requests that do not overlap to the first entry of each list; with {concurrency} in flight every rank should be reached unless requests finished before the next arrived"
    );
    k += 1;
    let _ = write!(
        m,
        "\n    {k}. they answer /health but not completions on that port (another process holds it): see their rank logs"
    );
    Err(m)
}

/// Sends `n` completions, `concurrency` at a time, to `host:port`; returns
/// the errors.
fn send_requests(
    layout: &Layout,
    host: &str,
    port: u16,
    n: usize,
    concurrency: usize,
    deadline: Instant,
) -> Vec<String> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let errors = std::sync::Mutex::new(Vec::new());
    thread::scope(|s| {
        for _ in 0..concurrency.max(1) {
            s.spawn(|| {
                loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if k >= n || Instant::now() >= deadline {
                        break;
                    }
                    let body = json!({
                        "model": layout.served_model_name,
                        // Equal lengths: equal loads at a least-loaded proxy.
                        "prompt": format!("rehearsal request {k:06}"),
                        "max_tokens": 4,
                        "temperature": 0,
                    });
                    let r = http::post_json(
                        host,
                        port,
                        "/v1/completions",
                        &body,
                        Duration::from_secs(30),
                    );
                    let err = match r {
                        Ok(r) if r.status == 200 => None,
                        Ok(r) => Some(format!("HTTP {}: {}", r.status, r.text())),
                        Err(e) => Some(e.to_string()),
                    };
                    if let Some(e) = err
                        && let Ok(mut v) = errors.lock()
                    {
                        v.push(e);
                    }
                }
            });
        }
    });
    errors.into_inner().unwrap_or_default()
}
