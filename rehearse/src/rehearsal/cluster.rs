//! The running nodes: their process groups, the reaper that outlives the
//! rehearsal, the work dir, bounded script runs and the wait for free
//! ports.

use super::inject::Injection;
use super::processes::{marked_processes, signal_group, signal_pid};
use super::{GRACE, node_ip};
use pd_dsl::{Layout, render};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};
use std::{fs, thread};

/// Runs the sweep when the rehearsal's end of its stdin closes, whatever
/// ends the rehearsal; then removes the work dir `$2` (empty: kept).
pub(super) const REAPER: &str = r#"while IFS= read -r _; do :; done
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
pub(super) struct Cluster {
    pub(super) runs: Vec<Option<Child>>,
    pub(super) exits: Vec<Option<ExitStatus>>,
    pub(super) marker: String,
    pub(super) reaper: Option<(Child, ChildStdin)>,
    pub(super) stopped: bool,
}

impl Cluster {
    pub(super) fn poll(&mut self) {
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
    pub(super) fn stop(&mut self) -> Vec<(u32, String)> {
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
pub(super) struct WorkDir {
    pub(super) path: PathBuf,
    pub(super) keep: bool,
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

pub(super) fn work_dir() -> Result<PathBuf, String> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let path = std::env::temp_dir().join(format!("pd-rehearse-{}-{nanos:09}", std::process::id()));
    fs::create_dir_all(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    Ok(path)
}

pub(super) fn write_file(path: &Path, text: &str, executable: bool) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let mode = if executable { 0o755 } else { 0o644 };
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(|e| format!("cannot chmod {}: {e}", path.display()))
}

/// Waits until every port preflight checks binds on its node's address
/// (except the one a `port-in-use` fault holds). `Ok(None)`: free at once;
/// `Ok(Some(t))`: free after `t`; `Err`: still busy at `until`.
pub(super) fn wait_for_free_ports(
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
pub(super) fn run_bounded(
    mut cmd: Command,
    limit: Duration,
) -> Result<(ExitStatus, String), String> {
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
