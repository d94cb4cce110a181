//! Once the deployment is up: the operator action (`--signal`, `--stop`) or
//! the `--kill` fault, or else the checks of a serving deployment
//! (`verify.rs`).

use super::act::{self, act};
use super::cluster::Cluster;
use super::diagnose::{describe_exit, diagnose};
use super::options::Action;
use super::processes::{Process, node_label, signal_pid};
use super::setup::KillTarget;
use super::{FAIL_FAST_BOUND, Run, node_ip, verify};
use pd_dsl::render;
use std::fs;
use std::io::Write;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

/// Says the deployment is up (after `t`), then runs the operator action,
/// the `--kill` fault or the checks; returns how many requests were sent.
pub(super) fn after_up(
    run: &Run,
    cluster: &mut Cluster,
    kill: Option<&KillTarget>,
    t: Duration,
    out: &mut dyn Write,
    failures: &mut Vec<String>,
) -> usize {
    let Run {
        layout,
        api_host,
        api_port,
        ..
    } = run;
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
    if let Some(action) = run.opts.action {
        operator_action(run, cluster, action, out, failures);
        0
    } else if let Some((p, rank)) = kill {
        kill_rank(run, cluster, p, *rank, out, failures);
        0
    } else {
        verify::serving(run, out, failures)
    }
}

/// `--signal`, `--stop`: the action, with what the pod's manifest promises
/// under `--k8s-env`.
fn operator_action(
    run: &Run,
    cluster: &mut Cluster,
    action: Action,
    out: &mut dyn Write,
    failures: &mut Vec<String>,
) {
    let Run {
        layout,
        opts,
        stage,
        ..
    } = run;
    let i = match action {
        Action::Signal(i, _) | Action::Stop(i) => i,
    };
    let env = |cmd: &mut Command| {
        stage.base_env(cmd);
        cmd.current_dir(&stage.scripts)
            .env("PD_LOG_DIR", &stage.logs)
            .env("PD_PORT_CHECK_HOST", node_ip(i));
    };
    // What the manifest promises this pod: a drain of in-flight
    // requests on SIGTERM (its PD_DRAIN_SECONDS, where the image's
    // vLLM has --shutdown-timeout), whatever the overrides did.
    let drain = stage
        .k8s
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
    let kubelet = stage
        .k8s
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
        &stage.shell.bash,
        cluster,
        &stage.scripts,
        &stage.logs,
        &stage.marker,
        env,
        out,
        failures,
    );
}

/// `--kill`: a rank dies after start; its node must stop loudly, bounded.
fn kill_rank(
    run: &Run,
    cluster: &mut Cluster,
    p: &Process,
    rank: u32,
    out: &mut dyn Write,
    failures: &mut Vec<String>,
) {
    let Run {
        layout,
        stage,
        deadline,
        ..
    } = run;
    let deadline = *deadline;
    let nodes = &layout.placement.nodes;
    let pid = fs::read_to_string(stage.state.join(format!("{}-{}.pid", p.node, p.first_rank)))
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
                    run.print_row(out, p.node, run.ranks_up(p.node), &describe_exit(Some(st)));
                    failures.push(format!(
                        "{head}; the node stopped after {:.1}s\n    {}",
                        t0.elapsed().as_secs_f64(),
                        diagnose(layout, &stage.logs, p.node, Some(st))
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
}
