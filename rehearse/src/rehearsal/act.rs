//! Operator actions (`--signal`, `--stop`): run one and check that its node
//! stopped cleanly.

use super::cluster::{Cluster, run_bounded};
use super::diagnose::describe_exit;
use super::options::{Action, Sig};
use super::processes::{kill_node, pids_text, signal_pid, wait_node_empty};
use super::{LATENCY_MS, node_ip};
use crate::http;
use pd_dsl::{Layout, Role, render};
use serde_json::json;
use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

/// After a signal or stop.sh, `run.sh` of a node must exit within this.
const STOP_BOUND: Duration = Duration::from_secs(40);
/// The shortest time the kubelet leaves a container after its `preStop`
/// hook, however much of the grace period the hook used
/// (`minimumGracePeriodInSeconds`, kubernetes
/// `pkg/kubelet/kuberuntime/kuberuntime_container.go`).
const MIN_GRACE_AFTER_HOOK: Duration = Duration::from_secs(2);

/// The kubelet's side of terminating a pod (`--k8s-env`, SIGTERM): it runs
/// the container's `preStop` hook, then sends SIGTERM, and SIGKILLs what of
/// the pod still runs when the grace period is up (kubernetes
/// `pkg/kubelet/kuberuntime/kuberuntime_container.go` `killContainer`: the
/// hook's time counts against `terminationGracePeriodSeconds`).
#[derive(Clone, Debug)]
pub(super) struct Kubelet {
    /// The container's `preStop` exec command.
    pub(super) pre_stop: Option<Vec<String>>,
    /// `terminationGracePeriodSeconds`.
    pub(super) grace: Duration,
}

/// Waits, at most `bound`, until the server on each of `ports` counts a
/// request running (`vllm:num_requests_running` on its `/metrics`, the gauge
/// vLLM exports); `false` when one never does.
fn wait_running(host: &str, ports: &[u32], bound: Duration) -> bool {
    let until = Instant::now() + bound;
    ports.iter().all(|&port| {
        let Ok(port) = u16::try_from(port) else {
            return false;
        };
        loop {
            let running = http::get(host, port, "/metrics", Duration::from_millis(200))
                .ok()
                .and_then(|r| {
                    r.text().lines().find_map(|l| {
                        let rest = l.strip_prefix("vllm:num_requests_running")?;
                        rest.rsplit(' ').next()?.trim().parse::<f64>().ok()
                    })
                });
            if running.is_some_and(|n| n >= 1.0) {
                return true;
            }
            if Instant::now() >= until {
                return false;
            }
            thread::sleep(Duration::from_millis(10));
        }
    })
}

/// Runs an operator [`Action`] and checks that node stopped cleanly.
#[allow(clippy::too_many_arguments)]
pub(super) fn act(
    layout: &Layout,
    action: Action,
    drain: Option<u64>,
    kubelet: Option<&Kubelet>,
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
    // SIGTERM to a pod: the kubelet runs its preStop hook first, and its
    // grace period counts from there.
    let kubelet = kubelet.filter(|_| matches!(action, Action::Signal(_, Sig::Term)));
    let begun = Instant::now();
    if let Some(argv) = kubelet.and_then(|k| k.pre_stop.as_ref())
        && let Some((program, args)) = argv.split_first()
    {
        let mut cmd = Command::new(program);
        cmd.args(args);
        env(&mut cmd);
        let grace = kubelet.map_or(STOP_BOUND, |k| k.grace);
        match run_bounded(cmd, grace) {
            Ok((st, _)) if st.success() => {
                let _ = writeln!(
                    out,
                    "kubelet: node {i}'s preStop `{}` ran {:.1}s",
                    argv.join(" "),
                    begun.elapsed().as_secs_f64()
                );
            }
            Ok((st, text)) => failures.push(format!(
                "{what}: the pod's preStop `{}` {}:\n    {}",
                argv.join(" "),
                describe_exit(Some(st)),
                text.trim().replace('\n', "\n    ")
            )),
            Err(e) => failures.push(format!(
                "{what}: the pod's preStop `{}` {e}",
                argv.join(" ")
            )),
        }
    }
    // What the kubelet leaves the container once the hook is done.
    let window = kubelet.map(|k| {
        k.grace
            .saturating_sub(begun.elapsed())
            .max(MIN_GRACE_AFTER_HOOK)
    });
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
        // SIGTERM must find each request in flight, not still in a socket's
        // backlog: wait until every server counts it, well inside each
        // completion's LATENCY_MS.
        let ports: Vec<u32> = in_flight.iter().map(|(p, _)| *p).collect();
        if !wait_running(
            &node_ip(i),
            &ports,
            Duration::from_millis(LATENCY_MS * 2 / 3),
        ) {
            let _ = writeln!(
                out,
                "{what}: not every in-flight request was running on its server after {} ms; SIGTERM goes anyway",
                LATENCY_MS * 2 / 3
            );
        }
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
    let bound = t0 + window.unwrap_or(STOP_BOUND);
    while cluster.exits[i].is_none() && Instant::now() < bound {
        cluster.poll();
        thread::sleep(Duration::from_millis(50));
    }
    if let (Some(k), None) = (kubelet, cluster.exits[i]) {
        // The kubelet's SIGKILL: every process of the container.
        let killed = kill_node(marker, i);
        failures.push(format!(
            "{what}: the pod still ran {:.1}s after the kubelet began terminating it (terminationGracePeriodSeconds {}: preStop, then SIGTERM), so the kubelet SIGKILLs it there: {} process(es) killed without their drain or the release of their NPUs{}",
            begun.elapsed().as_secs_f64(),
            k.grace.as_secs(),
            killed.len(),
            if killed.is_empty() { String::new() } else { format!(" ({})", pids_text(&killed)) }
        ));
    }
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
    let Some(st) = cluster.exits[i] else {
        if kubelet.is_none() {
            failures.push(format!(
                "{what}: run.sh did not exit within {}s",
                STOP_BOUND.as_secs()
            ));
        }
        return;
    };
    if let Some(k) = kubelet {
        let _ = writeln!(
            out,
            "kubelet: node {i}'s pod stopped {:.1}s into its terminationGracePeriodSeconds {}",
            begun.elapsed().as_secs_f64(),
            k.grace.as_secs()
        );
    }
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
