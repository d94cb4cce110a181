//! Operator actions: a signal to one node's `run.sh`, and `stop.sh` on one
//! node.

use crate::{MIXED, PD, rehearse};

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
