//! Why a node failed: the lines of its logs worth quoting, its exit, and the
//! requests each process served.

use super::node_ip;
use super::processes::{Process, node_label, port_owner};
use pd_dsl::Layout;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::ExitStatus;

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

pub(super) fn describe_exit(status: Option<ExitStatus>) -> String {
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
pub(super) fn diagnose(
    layout: &Layout,
    logs: &Path,
    i: usize,
    status: Option<ExitStatus>,
) -> String {
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

pub(super) fn served_count(state: &Path, p: &Process) -> Option<u64> {
    fs::read_to_string(state.join(format!("{}-{}.served", p.node, p.first_rank)))
        .ok()
        .and_then(|s| s.trim().parse().ok())
}
