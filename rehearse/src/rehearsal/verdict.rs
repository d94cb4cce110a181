//! The end of a rehearsal: the final view of the nodes, the stop of
//! everything with the check that nothing is left running, and the verdict.

use super::Run;
use super::cluster::Cluster;
use super::diagnose::{describe_exit, served_count};
use super::options::Outcome;
use super::processes::marked_processes;
use std::io::Write;

/// Final view, then stop everything: what a clean stop left running, what
/// could not be stopped, and a tool the release table leaves undecided that
/// a script missed are failures.
pub(super) fn teardown(
    run: &Run,
    cluster: &mut Cluster,
    out: &mut dyn Write,
    failures: &mut Vec<String>,
) {
    let Run {
        layout,
        procs,
        stage,
        ..
    } = run;
    let nodes = &layout.placement.nodes;
    cluster.poll();
    let _ = writeln!(out, "nodes:");
    for i in 0..nodes.len() {
        let served: Vec<u64> = procs
            .iter()
            .filter(|p| p.node == i && p.serves_api)
            .filter_map(|p| served_count(&stage.state, p))
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
        run.print_row(out, i, run.ranks_up(i), &format!("{served:<14} {st}"));
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
    let strays = marked_processes(&stage.marker);
    if !strays.is_empty() {
        failures.push(format!(
            "{} process(es) could not be stopped: {:?}",
            strays.len(),
            strays
        ));
    }
    // A tool the release table leaves undecided is absent here; when a
    // script missed it, say that the table, not the image, is the cause.
    let missed: Vec<&str> = stage
        .shell
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
            stage.shell.release,
            missed.join("`, `"),
            crate::facts::image_key(layout.hardware)
        ));
    }
}

/// The verdict, written to `out`: PASS with what was checked, or FAIL with
/// every failure.
pub(super) fn verdict(
    run: &Run,
    failures: Vec<String>,
    requests: usize,
    out: &mut dyn Write,
) -> Outcome {
    let Run {
        layout,
        opts,
        stage,
        started,
        node_total,
        ..
    } = run;
    let nodes = &layout.placement.nodes;
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
    let kept = opts.keep.then(|| stage.root.clone());
    if let Some(k) = &kept {
        let _ = writeln!(out, "kept {}", k.display());
    }
    Outcome {
        passed,
        failures,
        elapsed,
        requests,
        kept,
    }
}
