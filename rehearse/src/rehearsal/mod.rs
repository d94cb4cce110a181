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
//! | `wrong-weights` | the model directory's `config.json` is another model's: text model type `pd_rehearse_other_model`, a 1024-token context (layouts whose model type or `max_model_len` preflight judges) | every node's preflight `model_config` check, before any model loads |
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
mod setup;
mod start;
mod up;
mod verdict;
mod verify;
mod wait;

use crate::expect::{Expectation, ExpectedRank};
pub use crate::standin::proxy::Policy;
use cluster::{WorkDir, work_dir};
use diagnose::served_count;
use inject::inject;
pub use options::{Action, Fault, Options, Outcome, Sig};
use pd_dsl::Layout;
use processes::{Process, processes};
use serde_json::json;
use setup::Stage;
use std::io::Write;
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
    let procs = processes(layout);
    let (kill, standins) = setup::check(layout, opts, &procs)?;
    let mut inj = inject(layout, opts.fault)?;

    // The temp dir.
    let work = WorkDir {
        path: work_dir()?,
        keep: opts.keep,
    };
    let stage = setup::stage(layout, opts, &standins, &mut inj, work.path.clone())?;
    setup::announce(layout, opts, &stage, procs.len(), &inj, out);
    let mut cluster = start::start(layout, opts, &stage, &inj, deadline, out)?;

    let mut failures: Vec<String> = Vec::new();
    let mut requests = 0usize;
    let node_total: Vec<usize> = layout
        .placement
        .nodes
        .iter()
        .map(|n| n.ranks.len())
        .collect();

    // Wait until up, a node exits, or the deadline.
    let (api_host, api_port) = match layout.proxy {
        Some(p) if stage.k8s.is_some() => (start::proxy_pod_ip(layout), p.port),
        Some(p) => (node_ip(0), p.port),
        None => (node_ip(0), layout.api_port),
    };
    let api_port = u16::try_from(api_port).map_err(|e| e.to_string())?;
    let run = Run {
        layout,
        opts,
        procs: &procs,
        stage: &stage,
        started,
        deadline,
        node_total,
        api_host,
        api_port,
    };
    let up_at = wait::until_up(&run, &mut cluster, out, &mut failures);

    if let Some(t) = up_at {
        requests = up::after_up(&run, &mut cluster, kill.as_ref(), t, out, &mut failures);
    }

    // Final view, then stop everything.
    verdict::teardown(&run, &mut cluster, out, &mut failures);
    drop(inj);
    let outcome = verdict::verdict(&run, failures, requests, out);
    drop(work);
    Ok(outcome)
}

/// What the phases after the start share: the layout and options, the work
/// dir, the clock, and where the deployment answers.
struct Run<'a> {
    layout: &'a Layout,
    opts: &'a Options,
    procs: &'a [Process],
    stage: &'a Stage,
    started: Instant,
    deadline: Instant,
    /// Every node's rank count.
    node_total: Vec<usize>,
    /// Where the proxy (PD) or the API server (mixed) answers.
    api_host: String,
    api_port: u16,
}

impl Run<'_> {
    /// Node `i`'s ranks whose process has started serving.
    fn ranks_up(&self, i: usize) -> usize {
        self.procs
            .iter()
            .filter(|p| p.node == i && served_count(&self.stage.state, p).is_some())
            .map(|p| p.ranks.len())
            .sum()
    }

    /// Node `i`'s row of the progress view.
    fn print_row(&self, out: &mut dyn Write, i: usize, up: usize, what: &str) {
        let role = self.layout.placement.nodes[i].role.to_string();
        let _ = writeln!(
            out,
            "  node {i:<2} {:<10} {role:<8} ranks {up:>2}/{:<2} {what}",
            node_ip(i),
            self.node_total[i]
        );
    }
}
