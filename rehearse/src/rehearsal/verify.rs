//! The checks of a serving deployment: node 0's ready line, `verify.sh`,
//! every pod's probes (`--k8s-env`), then the requests and the check that
//! every rank served.

use super::cluster::run_bounded;
use super::coverage::{coverage, send_requests};
use super::diagnose::describe_exit;
use super::processes::node_label;
use super::{Run, WAVES, node_ip};
use std::fs;
use std::io::Write;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

/// verify.sh, then enough requests to reach every rank; returns how many
/// requests were sent (none after a failure).
pub(super) fn serving(run: &Run, out: &mut dyn Write, failures: &mut Vec<String>) -> usize {
    ready_line(run, out, failures);
    verify_sh(run, out, failures);
    probes(run, out, failures);
    if failures.is_empty() {
        requests(run, out, failures)
    } else {
        0
    }
}

/// Node 0 says it is ready (run.sh prints it once the proxy or API server
/// answers), and records where it listens.
fn ready_line(run: &Run, out: &mut dyn Write, failures: &mut Vec<String>) {
    let Run {
        layout,
        stage,
        deadline,
        api_host,
        api_port,
        ..
    } = run;
    let (deadline, api_port) = (*deadline, *api_port);
    // On Kubernetes the proxy is its own Deployment: node 0's run.sh
    // leaves it alone, so only a mixed layout's node 0 says ready.
    let expect_ready = !(stage.k8s.is_some() && layout.is_pd());
    let ready_by = Instant::now() + Duration::from_secs(10);
    let ready = loop {
        if !expect_ready {
            break None;
        }
        let log = fs::read_to_string(stage.logs.join("node0.log")).unwrap_or_default();
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
}

/// verify.sh as in a fresh shell on node 0: no PD_NODE_IPS, only the log
/// directory run.sh used (its default on a cluster).
fn verify_sh(run: &Run, out: &mut dyn Write, failures: &mut Vec<String>) {
    let Run {
        stage,
        deadline,
        api_host,
        api_port,
        ..
    } = run;
    let (deadline, api_port) = (*deadline, *api_port);
    let mut cmd = Command::new(&stage.shell.bash);
    cmd.arg("verify.sh");
    stage.base_env(&mut cmd);
    cmd.current_dir(&stage.scripts)
        .env_remove("PD_NODE_IPS")
        .env("PD_LOG_DIR", &stage.logs);
    if stage.k8s.is_some() {
        // Against the proxy Service, as the README's k8s path does.
        cmd.arg(api_host);
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
}

/// Every pod's probes (`--k8s-env`), as the kubelet runs them: the
/// manifest's command, with the ConfigMap's mount played by the scripts
/// directory and the pod's loopback by its node's address.
fn probes(run: &Run, out: &mut dyn Write, failures: &mut Vec<String>) {
    let Run {
        layout,
        stage,
        deadline,
        ..
    } = run;
    let deadline = *deadline;
    if let Some(k) = &stage.k8s {
        for pod in &k.pods {
            let mut passed = Vec::new();
            for (kind, argv) in &pod.probes {
                let Some((program, args)) = argv.split_first() else {
                    continue;
                };
                let mut cmd = Command::new(if program == "bash" {
                    stage.shell.bash.as_os_str().to_owned()
                } else {
                    program.into()
                });
                for a in args {
                    match a.strip_prefix(pd_dsl::render::k8s::SCRIPTS_DIR) {
                        Some(rest) => cmd.arg(format!("{}{rest}", stage.scripts.display())),
                        None => cmd.arg(a),
                    };
                }
                stage.base_env(&mut cmd);
                cmd.current_dir(&stage.scripts)
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
}

/// The requests, then the check that every rank served; returns how many
/// were sent.
fn requests(run: &Run, out: &mut dyn Write, failures: &mut Vec<String>) -> usize {
    let Run {
        layout,
        stage,
        deadline,
        api_host,
        api_port,
        ..
    } = run;
    let (deadline, api_port) = (*deadline, *api_port);
    let procs = run.procs;
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
    let errors = send_requests(layout, api_host, api_port, n, concurrency, deadline);
    if !errors.is_empty() {
        failures.push(format!(
            "{} of {n} requests through {api_host}:{api_port} failed; first: {}",
            errors.len(),
            errors[0]
        ));
    }
    let coverage = coverage(layout, procs, &stage.state, &stage.marker, concurrency, n);
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
    n
}
