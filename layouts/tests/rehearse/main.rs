//! `catalog rehearse`: every registered layout end to end, and every fault.
//! Rehearsals share the loopback addresses and the layouts' ports, so they
//! run one at a time (a process-wide lock); each is bounded by a timeout and
//! must leave no process and no temp dir behind.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod actions;
mod faults;
mod per_role;
mod real_proxy;
mod registered;
mod shapes;
mod usage;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

const CATALOG: &str = env!("CARGO_BIN_EXE_catalog");
const PD: &str = "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d";
const MIXED: &str = "deepseek-v3.1-w8a8-mtp-quarot/a2x2-mixed-dp4tp4";
const LIMIT: Duration = Duration::from_secs(150);

static SERIAL: Mutex<()> = Mutex::new(());

struct Run {
    code: Option<i32>,
    out: String,
    took: Duration,
}

/// `catalog rehearse ARGS...`, bounded; checks nothing of it is left.
fn rehearse(args: &[&str]) -> Run {
    rehearse_env(args, &[])
}

/// [`rehearse`] with `dir` first on `PATH` (a venv's `bin/`).
fn rehearse_with_path(args: &[&str], dir: &Path) -> Run {
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    rehearse_env(args, &[("PATH", &path)])
}

/// [`rehearse`] with `env` added to the rehearsal's environment.
fn rehearse_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let started = Instant::now();
    let mut child = Command::new(CATALOG)
        .arg("rehearse")
        .args(args)
        .arg("--timeout")
        .arg("90")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("catalog rehearse {args:?} did not finish within {LIMIT:?}");
        }
        thread::sleep(Duration::from_millis(50));
    };
    let out = reader.join().unwrap();
    let took = started.elapsed();
    assert_nothing_left(&out);
    eprintln!("rehearse {args:?}: {:.1}s", took.as_secs_f64());
    Run {
        code: status.code(),
        out,
        took,
    }
}

/// Nothing of a rehearsal is left: its temp dir (named in `out`) is gone and
/// no process mentions it.
fn assert_nothing_left(out: &str) {
    let dir = out
        .lines()
        .find_map(|l| l.split("work dir ").nth(1))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no work dir in output:\n{out}"));
    // The reaper removes the dir right after the rehearsal exits.
    let deadline = Instant::now() + Duration::from_secs(10);
    while Path::new(dir).exists() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(50));
    }
    assert!(!Path::new(dir).exists(), "{dir} left behind\n{out}");
    let strays = processes_mentioning(dir);
    assert!(
        strays.is_empty(),
        "processes left running: {strays:?}\n{out}"
    );
}

/// Processes whose command line or environment mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.parse::<u32>().is_err() {
            continue;
        }
        for f in ["cmdline", "environ"] {
            if let Ok(b) = std::fs::read(e.path().join(f))
                && String::from_utf8_lossy(&b).contains(needle)
            {
                out.push(format!("{name}: {}", String::from_utf8_lossy(&b)));
                break;
            }
        }
    }
    out
}

fn assert_fails(run: &Run, needles: &[&str]) {
    assert_eq!(run.code, Some(5), "exit code\n{}", run.out);
    assert!(run.out.contains("\nFAIL "), "{}", run.out);
    for n in needles {
        assert!(run.out.contains(n), "missing {n:?} in\n{}", run.out);
    }
}

/// [`rehearse`] for a layout built here rather than registered: the same
/// rehearsal, in process, with the options `configure` sets; checks nothing
/// of it is left.
fn rehearse_layout(
    layout: &pd_dsl::Layout,
    configure: impl FnOnce(&mut pd_rehearse::rehearsal::Options),
) -> (pd_rehearse::rehearsal::Outcome, String) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut opts = pd_rehearse::rehearsal::Options::new(CATALOG);
    opts.timeout = Duration::from_secs(90);
    configure(&mut opts);
    let mut out = Vec::new();
    let outcome = pd_rehearse::rehearsal::rehearse(layout, &opts, &mut out)
        .unwrap_or_else(|e| panic!("{}: rehearsal could not run: {e}", layout.name()));
    let out = String::from_utf8_lossy(&out).into_owned();
    assert_nothing_left(&out);
    eprintln!(
        "rehearse {} ({:?}, {:?}, k8s env {}): {:.1}s",
        layout.name(),
        opts.proxy_policy,
        opts.action,
        opts.k8s_env,
        outcome.elapsed.as_secs_f64()
    );
    (outcome, out)
}
