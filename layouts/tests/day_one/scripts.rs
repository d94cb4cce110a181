//! The scripts that run in a fresh shell: verify.sh's target, stop.sh with
//! nothing running, docker.sh with an existing container, bench.sh's
//! arguments, and what the READMEs say.

use crate::preflight::bin_with;
use crate::{A950, PD, render, run};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) fn which(tool: &str) -> Result<PathBuf, ()> {
    std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .map(|d| Path::new(d).join(tool))
        .find(|p| p.is_file())
        .ok_or(())
}

#[test]
fn verify_says_which_url_it_tried_and_where_it_came_from() {
    let (_tmp, dir) = render(PD);
    let logs = tempfile::tempdir().unwrap();
    let logs_s = logs.path().display().to_string();
    // Nothing listens on port 9 of 127.0.0.1: the request fails fast.
    std::fs::write(logs.path().join("endpoint.url"), "http://127.0.0.1:9\n").unwrap();
    let (code, out) = run(&dir, "verify.sh", &[], &[("PD_LOG_DIR", logs_s.as_str())]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "verify.sh: trying http://127.0.0.1:9/v1/chat/completions (from {logs_s}/endpoint.url, recorded by run.sh on node 0)"
        )),
        "{out}"
    );
    let (_, out) = run(
        &dir,
        "verify.sh",
        &[],
        &[
            ("PD_LOG_DIR", logs_s.as_str()),
            ("PD_PROXY_URL", "http://127.0.0.1:8/"),
        ],
    );
    assert!(
        out.contains("trying http://127.0.0.1:8/v1/chat/completions (from PD_PROXY_URL)"),
        "{out}"
    );
    let empty = tempfile::tempdir().unwrap();
    let (_, out) = run(
        &dir,
        "verify.sh",
        &[],
        &[
            ("PD_LOG_DIR", &empty.path().display().to_string()),
            ("PD_NODE_IPS", " 127.0.0.7, 127.0.0.8"),
        ],
    );
    assert!(
        out.contains(
            "trying http://127.0.0.7:1999/v1/chat/completions (from node 0 of PD_NODE_IPS)"
        ),
        "{out}"
    );
}

#[test]
fn stop_sh_with_nothing_running_succeeds() {
    let (_tmp, dir) = render(PD);
    let logs = tempfile::tempdir().unwrap();
    let logs_s = logs.path().display().to_string();
    let (code, out) = run(&dir, "stop.sh", &[], &[("PD_LOG_DIR", logs_s.as_str())]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("stop.sh: nothing running: no run.pid under"),
        "{out}"
    );
    let (code, out) = run(&dir, "stop.sh", &["7"], &[("PD_LOG_DIR", logs_s.as_str())]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("node index '7' is not in [0, 4)"), "{out}");
}

/// docker.sh with a container of the same name: reuse it (started again if
/// stopped) when it runs this image, replace it on request, refuse otherwise;
/// it says which. `docker` is a recording stand-in.
#[test]
fn docker_sh_handles_an_existing_container() {
    let (_tmp, dir) = render(A950);
    let bin = tempfile::tempdir().unwrap();
    let log = bin.path().join("calls");
    let docker = format!(
        "#!/usr/bin/env bash\necho \"$*\" >>{log}\nif [[ $1 == container && $2 == inspect ]]; then\n    [[ -n ${{FAKE_EXISTING:-}} ]] || exit 1\n    echo \"$FAKE_EXISTING\"\nfi\n",
        log = log.display()
    );
    std::fs::write(bin.path().join("docker"), docker).unwrap();
    std::fs::set_permissions(
        bin.path().join("docker"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap()
    );
    let image = "quay.io/ascend/vllm-ascend:v0.23.0-a5";
    let go = |existing: &str, mode: &str| {
        let _ = std::fs::remove_file(&log);
        let (code, out) = run(
            &dir,
            "docker.sh",
            &[],
            &[
                ("PATH", path.as_str()),
                ("FAKE_EXISTING", existing),
                ("PD_CONTAINER_EXISTING", mode),
            ],
        );
        (code, out, std::fs::read_to_string(&log).unwrap_or_default())
    };
    let (code, out, calls) = go("", "");
    assert_eq!(code, 0, "{out}");
    let run_line = calls.lines().find(|l| l.starts_with("run ")).unwrap();
    // Every path 950DT preflight requires is mounted.
    for p in ["/lib/route.conf", "/etc/hccl_rootinfo.json", "/etc/hixlep/"] {
        assert!(run_line.contains(&format!("-v {p}:{p}")), "{run_line}");
    }
    let (code, out, calls) = go(&format!("{image} true"), "");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("is already running; reusing it"), "{out}");
    assert!(!calls.contains("run "), "{calls}");
    let (code, out, calls) = go(&format!("{image} false"), "reuse");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("exists (stopped); starting it again"), "{out}");
    assert!(calls.contains("start pd-"), "{calls}");
    let (code, out, _) = go("other:tag true", "");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!("exists with image other:tag, not {image}")),
        "{out}"
    );
    let (code, out, calls) = go("other:tag true", "replace");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("replacing existing container"), "{out}");
    assert!(calls.contains("rm -f pd-"), "{calls}");
    assert!(calls.lines().any(|l| l.starts_with("run ")), "{calls}");
}

/// A layout its image cannot run says so at the top of its README and in
/// the index; a mixed layout's README has no PD steps; every README says how
/// to stop the layout.
#[test]
fn readmes_say_status_stop_and_nothing_of_pd_for_mixed() {
    let layouts = layouts::catalog().unwrap();
    let artifacts = pd_dsl::render::render_catalog(layouts).unwrap();
    let text = |path: &str| {
        artifacts
            .iter()
            .find(|a| a.path == Path::new(path))
            .unwrap_or_else(|| panic!("no {path}"))
            .contents
            .clone()
    };
    let blocked = text("deepseek-v4-flash-w8a8-mtp/a3-2p1d-v1/README.md");
    let top: Vec<&str> = blocked.lines().take(6).collect();
    assert!(
        top.iter()
            .any(|l| l.starts_with("> **Status: blocked on image.**")
                && l.contains("the first image that can run it is `v0.22.1rc1`")
                && l.contains(
                    "[rule [`connector_hybrid_kv`](../../RULES.md#connector_hybrid_kv)]"
                )),
        "{blocked}"
    );
    assert!(blocked.contains("| status | blocked on image (needs v0.22.1rc1) |"));
    let index = text("README.md");
    let row = index
        .lines()
        .find(|l| l.starts_with("| [a3-2p1d-v1](deepseek-v4-flash-w8a8-mtp/a3-2p1d-v1/README.md)"))
        .unwrap_or_else(|| panic!("no index row for a3-2p1d-v1:\n{index}"));
    assert!(
        row.contains("| blocked on image (needs v0.22.1rc1) |"),
        "{row}"
    );
    assert_eq!(index.matches("> **Status: blocked on image.**").count(), 1);
    // The index's banner links the rule from the catalog's root.
    assert!(
        index.contains("[rule [`connector_hybrid_kv`](RULES.md#connector_hybrid_kv)]"),
        "the index's blocked banner does not link its rule"
    );
    for l in layouts {
        let readme = text(&format!("{}/README.md", l.name()));
        assert!(readme.contains("## How to stop it"), "{}", l.name());
        assert!(readme.contains("`./stop.sh`"), "{}", l.name());
        assert_eq!(
            readme.contains("Status: blocked on image"),
            l.name() == "deepseek-v4-flash-w8a8-mtp/a3-2p1d-v1",
            "{}",
            l.name()
        );
        if !l.is_pd() {
            for pd in [
                "proxy.sh",
                "prefill engines first",
                "every endpoint answers",
                "starts `proxy.sh`",
            ] {
                assert!(
                    !readme.contains(pd),
                    "{}: mixed README mentions {pd:?}",
                    l.name()
                );
            }
            assert!(
                readme.contains("until its API server answers `/health`"),
                "{}",
                l.name()
            );
        }
    }
}

/// bench.sh takes a first argument as HOST only when it is not an option;
/// every other argument reaches `vllm bench serve` (a recording stand-in).
#[test]
fn bench_sh_passes_options_through_and_takes_host_only_as_first_word() {
    let (_tmp, dir) = render(PD);
    let record = tempfile::tempdir().unwrap();
    let calls = record.path().join("argv");
    let vllm = format!(
        "#!/usr/bin/env bash\nprintf '%s\\n' \"$@\" >{}\n",
        calls.display()
    );
    let bin = bin_with(&[], &[("vllm", &vllm)]);
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap()
    );
    let empty = tempfile::tempdir().unwrap();
    let logs = empty.path().display().to_string();
    let bench = |args: &[&str]| {
        let (code, out) = run(
            &dir,
            "bench.sh",
            args,
            &[("PATH", path.as_str()), ("PD_LOG_DIR", logs.as_str())],
        );
        assert_eq!(code, 0, "{args:?}: {out}");
        let argv: Vec<String> = std::fs::read_to_string(&calls)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        (argv, out)
    };
    let value = |argv: &[String], flag: &str| -> Vec<String> {
        argv.windows(2)
            .filter(|w| w[0] == flag)
            .map(|w| w[1].clone())
            .collect()
    };
    let (argv, out) = bench(&["--num-prompts", "10"]);
    assert_eq!(argv[..2], ["bench", "serve"], "{argv:?}");
    assert_eq!(
        value(&argv, "--base-url"),
        ["http://127.0.0.1:1999"],
        "{out}"
    );
    assert!(out.contains("(from the default:"), "{out}");
    // The layout's count, then the override: the last one wins in argparse.
    let prompts = value(&argv, "--num-prompts");
    assert_eq!(prompts.len(), 2, "{argv:?}");
    assert_eq!(prompts[1], "10", "{argv:?}");
    assert_eq!(argv[argv.len() - 2..], ["--num-prompts", "10"], "{argv:?}");
    let (argv, out) = bench(&["10.1.2.3", "--request-rate", "4"]);
    assert_eq!(
        value(&argv, "--base-url"),
        ["http://10.1.2.3:1999"],
        "{out}"
    );
    assert!(out.contains("(from the HOST argument)"), "{out}");
    assert_eq!(argv[argv.len() - 2..], ["--request-rate", "4"], "{argv:?}");
    assert!(!argv.contains(&"10.1.2.3".to_owned()), "{argv:?}");
}

/// stop.sh waits a draining run out: with the run's `PD_DRAIN_SECONDS`
/// recorded (run.sh writes `run.drain`), the grace before SIGKILL is the
/// usual 30 s plus the drain plus the launcher's grace; without a drain 30 s;
/// `PD_STOP_GRACE` overrides both. The run is a process named `run.sh` that
/// carries the run id and exits on SIGTERM; stop.sh removes the record.
#[test]
fn stop_sh_waits_the_runs_drain() {
    let (_tmp, dir) = render(PD);
    let launcher = pd_dsl::render::k8s::LAUNCHER_GRACE_SECONDS;
    for (drain, stop_grace, want) in [
        (
            Some("45"),
            None,
            format!("SIGKILL after {}s (drain 45s)", 30 + 45 + launcher),
        ),
        (None, None, "SIGKILL after 30s".to_owned()),
        (Some("0"), None, "SIGKILL after 30s".to_owned()),
        (
            Some("45"),
            Some("7"),
            "SIGKILL after 7s (drain 45s)".to_owned(),
        ),
    ] {
        let logs = tempfile::tempdir().unwrap();
        let node = logs.path().join("node0");
        std::fs::create_dir_all(&node).unwrap();
        let id = "test/node0/1";
        let mut run_sh = Command::new("bash")
            .args(["-c", "exec -a run.sh sleep 300"])
            .env("PD_RUN_ID", id)
            .spawn()
            .unwrap();
        std::fs::write(node.join("run.pid"), format!("{}\n", run_sh.id())).unwrap();
        std::fs::write(node.join("run.id"), format!("{id}\n")).unwrap();
        if let Some(d) = drain {
            std::fs::write(node.join("run.drain"), format!("{d}\n")).unwrap();
        }
        let logs_s = logs.path().display().to_string();
        let mut env = vec![("PD_LOG_DIR", logs_s.as_str())];
        if let Some(g) = stop_grace {
            env.push(("PD_STOP_GRACE", g));
        }
        let (code, out) = run(&dir, "stop.sh", &["0"], &env);
        let _ = run_sh.kill();
        let _ = run_sh.wait();
        assert_eq!(code, 0, "{out}");
        assert!(
            out.contains(&format!(
                "node 0: SIGTERM to run.sh (pid {}); {want}",
                run_sh.id()
            )),
            "expected `{want}`:\n{out}"
        );
        assert!(!node.join("run.drain").exists(), "record left:\n{out}");
    }
}
