//! Until the deployment is up: the progress view of each node's ranks, and
//! the wait for every rank and the proxy or API server, a node's exit, or the
//! deadline.

use super::Run;
use super::cluster::Cluster;
use super::diagnose::{describe_exit, diagnose};
use super::processes::node_label;
use crate::http;
use std::fmt::Write as _;
use std::io::Write;
use std::thread;
use std::time::{Duration, Instant};

/// Waits until every rank serves and the proxy (PD) or the API server
/// (mixed) answers: `Some(time to up)`. A node that exits first, or the
/// deadline, adds its failures and gives `None`.
pub(super) fn until_up(
    run: &Run,
    cluster: &mut Cluster,
    out: &mut dyn Write,
    failures: &mut Vec<String>,
) -> Option<Duration> {
    let Run {
        layout,
        opts,
        started,
        deadline,
        node_total,
        api_host,
        api_port,
        ..
    } = run;
    let (started, deadline, api_port) = (*started, *deadline, *api_port);
    let nodes = &layout.placement.nodes;
    let logs = &run.stage.logs;
    let mut last: Vec<(usize, Instant)> = vec![(usize::MAX, started); nodes.len()];
    loop {
        cluster.poll();
        let mut all_up = true;
        for i in 0..nodes.len() {
            let up = run.ranks_up(i);
            all_up &= up == node_total[i];
            let changed = up != last[i].0;
            if changed && (up == node_total[i] || last[i].1.elapsed() >= Duration::from_millis(500))
            {
                run.print_row(
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
                    run.print_row(out, i, run.ranks_up(i), &describe_exit(Some(st)));
                    failures.push(diagnose(layout, logs, i, Some(st)));
                }
            }
            break None;
        }
        if all_up {
            let ready = if layout.is_pd() {
                http::probe(api_host, api_port, Duration::from_millis(200)).is_ok()
            } else {
                http::get(api_host, api_port, "/health", Duration::from_secs(2))
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
                    run.ranks_up(i),
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
    }
}
