//! The processes a rehearsal starts and finds: each `vllm serve` process of
//! the layout, node labels and port owners, the processes carrying the
//! rehearsal's marker, and signals to them.

use super::{MARKER, node_ip};
use pd_dsl::Layout;
use std::time::{Duration, Instant};
use std::{fs, thread};

/// One `vllm serve` process the layout starts: PD = one per rank; mixed =
/// one per node (native DP), keyed by its first rank.
#[derive(Clone, Debug)]
pub(super) struct Process {
    pub(super) node: usize,
    pub(super) first_rank: u32,
    pub(super) ranks: Vec<u32>,
    pub(super) serves_api: bool,
}

pub(super) fn processes(layout: &Layout) -> Vec<Process> {
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
pub(super) fn node_label(layout: &Layout, i: usize) -> String {
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
pub(super) fn port_owner(layout: &Layout, i: usize, port: u32) -> Option<String> {
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

/// Every process (pid, command line) whose environment holds `marker`.
pub(super) fn marked_processes(marker: &str) -> Vec<(u32, String)> {
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

pub(super) fn signal_pid(pid: u32, sig: rustix::process::Signal) {
    if let Some(p) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process(p, sig);
    }
}

pub(super) fn signal_group(pgid: u32, sig: rustix::process::Signal) {
    if let Some(p) = i32::try_from(pgid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(p, sig);
    }
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

/// SIGKILLs every process of node `i` (as the kubelet does to a container
/// past its grace period); returns what it killed.
pub(super) fn kill_node(marker: &str, i: usize) -> Vec<(u32, String)> {
    let left = node_processes(marker, i);
    for (pid, _) in &left {
        signal_pid(*pid, rustix::process::Signal::KILL);
    }
    left
}

/// Waits until node `i` has no process left; returns what is left at `bound`.
pub(super) fn wait_node_empty(marker: &str, i: usize, bound: Duration) -> Vec<(u32, String)> {
    let until = Instant::now() + bound;
    loop {
        let left = node_processes(marker, i);
        if left.is_empty() || Instant::now() >= until {
            return left;
        }
        thread::sleep(Duration::from_millis(100));
    }
}

pub(super) fn pids_text(left: &[(u32, String)]) -> String {
    left.iter()
        .take(5)
        .map(|(pid, cmd)| {
            let cmd: String = cmd.replace('\n', " ").chars().take(120).collect();
            format!("pid {pid} ({cmd})")
        })
        .collect::<Vec<_>>()
        .join(", ")
}
