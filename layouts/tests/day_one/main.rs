//! Day-one shell behaviour of a rendered layout, run for real in a temp dir:
//! node discovery (trimmed and validated `PD_NODE_IPS`, a node index that
//! must name this host), and the scripts that run in a fresh shell
//! (verify.sh's target, stop.sh with nothing running, docker.sh with a
//! container of the same name). Everything runs with `PD_DRY_RUN=1` or
//! against stand-in commands; nothing is started.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod model_config;
mod nodes;
mod preflight;
mod proxies;
mod scripts;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const PD: &str = "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d";
const A950: &str = "deepseek-v3.1-w8a8c8-mxfp8/950dt-2p1d";

fn render(name: &str) -> (tempfile::TempDir, PathBuf) {
    let layout = layouts::catalog()
        .unwrap()
        .iter()
        .find(|l| l.name() == name)
        .unwrap();
    render_layout(layout)
}

/// Writes `layout`'s rendered directory into a temp dir, modes as `catalog`
/// writes them; returns the temp dir and the layout's directory in it.
fn render_layout(layout: &pd_dsl::Layout) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    for a in pd_dsl::render::render_layout(layout).unwrap() {
        let path = tmp.path().join(&a.path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &a.contents).unwrap();
        let mode = if a.executable { 0o755 } else { 0o644 };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let dir = tmp.path().join(layout.name());
    (tmp, dir)
}

/// Runs `script` in `dir` with a clean `PD_*` environment plus `env`.
fn run(dir: &Path, script: &str, args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
    let mut cmd = Command::new(dir.join(script));
    cmd.current_dir(dir).args(args);
    for (k, _) in std::env::vars() {
        if k.starts_with("PD_") {
            cmd.env_remove(k);
        }
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = output(&mut cmd);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// `cmd.output()`, retried while the kernel says the script is busy: a
/// script another test thread has just written can still be open for writing
/// in a child that thread forked before the child's exec closed it, and
/// exec then fails with ETXTBSY for a moment.
fn output(cmd: &mut Command) -> std::process::Output {
    for _ in 0..200 {
        match cmd.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            r => return r.unwrap(),
        }
    }
    panic!("{cmd:?}: still 'text file busy' after 2 s")
}

fn dry_run(dir: &Path, ips: &str, index: &str, extra: &[(&str, &str)]) -> (i32, String) {
    let mut env = vec![
        ("PD_DRY_RUN", "1"),
        ("PD_NODE_IPS", ips),
        ("PD_NODE_INDEX", index),
        ("PD_LOCAL_IP", "127.0.0.3"),
        ("PD_NIC", "lo"),
    ];
    env.extend_from_slice(extra);
    run(dir, "run.sh", &[], &env)
}
