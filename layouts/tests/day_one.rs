//! Day-one shell behaviour of a rendered layout, run for real in a temp dir:
//! node discovery (trimmed and validated `PD_NODE_IPS`, a node index that
//! must name this host), and the scripts that run in a fresh shell
//! (verify.sh's target, stop.sh with nothing running, docker.sh with a
//! container of the same name). Everything runs with `PD_DRY_RUN=1` or
//! against stand-in commands; nothing is started.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const PD: &str = "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d";
const A950: &str = "deepseek-v3.1-w8a8c8-mxfp8/950dt-2p1d";

fn render(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let layout = layouts::catalog()
        .unwrap()
        .iter()
        .find(|l| l.name() == name)
        .unwrap();
    for a in pd_dsl::render::render_layout(layout).unwrap() {
        let path = tmp.path().join(&a.path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &a.contents).unwrap();
        let mode = if a.executable { 0o755 } else { 0o644 };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let dir = tmp.path().join(name);
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
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
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

#[test]
fn node_ips_are_trimmed_and_validated() {
    let (_tmp, dir) = render(PD);
    // Spaces after commas: trimmed, the endpoints are whole addresses.
    let (code, out) = dry_run(
        &dir,
        "127.0.0.1, 127.0.0.2 ,127.0.0.3,  127.0.0.4",
        "2",
        &[],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("--dp-address 127.0.0.3"), "{out}");
    assert!(!out.contains("' 127"), "{out}");
    for (ips, want) in [
        (
            "127.0.0.1,127.0.0.2,127.0.0.3,10.0.0.300",
            "node 3's address '10.0.0.300' in PD_NODE_IPS is not an IPv4 address",
        ),
        (
            "127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.2",
            "nodes 1 and 3 have the same address 127.0.0.2 in PD_NODE_IPS",
        ),
        (
            "127.0.0.1,127.0.0.2,127.0.0.3,bad_host!",
            "node 3's address 'bad_host!' in PD_NODE_IPS is not an IP address or host name",
        ),
        (
            "127.0.0.1,,127.0.0.3,127.0.0.4",
            "node 1 has an empty address in PD_NODE_IPS",
        ),
    ] {
        let (code, out) = dry_run(&dir, ips, "2", &[]);
        assert_eq!(code, 1, "{ips}: {out}");
        assert!(out.contains(want), "{ips}: missing {want:?} in {out}");
    }
}

#[test]
fn a_node_index_that_is_not_this_host_is_an_error() {
    let (_tmp, dir) = render(PD);
    let ips = "10.9.9.1,10.9.9.2,127.0.0.3,10.9.9.4";
    let (code, out) = dry_run(&dir, ips, "1", &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "node index 1 names 10.9.9.2, which is not an address of this host (local IP 127.0.0.3;"
        ),
        "{out}"
    );
    assert!(out.contains("set PD_FORCE_NODE_INDEX=1"), "{out}");
    let (code, out) = dry_run(&dir, ips, "1", &[("PD_FORCE_NODE_INDEX", "1")]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("going on because PD_FORCE_NODE_INDEX=1"),
        "{out}"
    );
    let (code, out) = dry_run(&dir, ips, "2", &[]);
    assert_eq!(code, 0, "{out}");
}

/// The image installs net-tools, not iproute2: without `ip` on PATH, run.sh
/// finds the local IP (the source address towards the DP master), the NIC
/// holding it and this host's addresses (the node index) through python3.
#[test]
fn run_sh_finds_ip_and_nic_without_the_ip_command() {
    let (_tmp, dir) = render(PD);
    let tools = [
        "bash", "awk", "getent", "hostname", "tr", "dirname", "python3", "cat",
    ];
    assert!(
        which("ip").is_ok(),
        "this test compares with iproute2's `ip`: install iproute2"
    );
    let bin = bin_with(&tools, &[]);
    assert!(!bin.path().join("ip").exists());
    let path = bin.path().display().to_string();
    let ips = "127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4";
    let go = |path: &str, index: Option<&str>| {
        let mut env = vec![("PATH", path), ("PD_DRY_RUN", "1"), ("PD_NODE_IPS", ips)];
        if let Some(i) = index {
            env.push(("PD_NODE_INDEX", i));
        }
        run(&dir, "run.sh", &[], &env)
    };
    let (code, out) = go(&path, Some("0"));
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("run.sh: node 0: local IP 127.0.0.1 (the route to the DP master 127.0.0.1, by python3 (no ip command)), NIC lo (the interface holding 127.0.0.1, by python3 (no ip command))"),
        "{out}"
    );
    // No index given: this host's addresses (python3's listing; `hostname -I`
    // has no loopback address) name node 0.
    let (code, out) = go(&path, None);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("run.sh: node 0 would run:"), "{out}");
    // With iproute2 the same IP and NIC.
    let full = std::env::var("PATH").unwrap();
    let (code, out) = go(&full, Some("0"));
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("run.sh: node 0: local IP 127.0.0.1 (the route to the DP master 127.0.0.1, by ip), NIC lo (the interface holding 127.0.0.1, by ip)"),
        "{out}"
    );
    // Both listings of this host's addresses agree, line for line.
    let list = |path: &str| {
        let o = Command::new("bash")
            .arg("-c")
            .arg("source <(sed -n '/^addr_table() {/,/^}/p' \"$1\") && addr_table | sort")
            .arg("-")
            .arg(dir.join("run.sh"))
            .env("PATH", path)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let by_ip = list(&full);
    let with_sed = bin_with(&["sed", "sort"], &[]);
    let by_python = list(&format!("{}:{path}", with_sed.path().display()));
    assert!(by_ip.contains("lo 127.0.0.1 8\n"), "{by_ip}");
    assert_eq!(by_python, by_ip);
    // preflight's `tools` check asks for python3 and curl, not ip.
    let mut with_curl = tools.to_vec();
    with_curl.push("curl");
    let bin = bin_with(&with_curl, &[]);
    let skip = skip_all_but(&dir, &["tools"]);
    let path = bin.path().display().to_string();
    let (code, out) = run(
        &dir,
        "preflight.sh",
        &["0"],
        &[
            ("PATH", path.as_str()),
            ("PD_SKIP_PREFLIGHT", skip.as_str()),
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("preflight: ok   tools: python3, curl"),
        "{out}"
    );
}

fn which(tool: &str) -> Result<PathBuf, ()> {
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
                && l.contains("[rule `connector_hybrid_kv`]")),
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

/// Every preflight check of `dir`'s layout except `keep`, comma-joined (for
/// `PD_SKIP_PREFLIGHT`).
fn skip_all_but(dir: &Path, keep: &[&str]) -> String {
    let text = std::fs::read_to_string(dir.join("preflight.sh")).unwrap();
    let line = text.lines().find(|l| l.starts_with("CHECKS=(")).unwrap();
    let names: Vec<&str> = line
        .trim_start_matches("CHECKS=(")
        .trim_end_matches(')')
        .split_whitespace()
        .collect();
    for k in keep {
        assert!(names.contains(k), "{k} is not a check of {line}");
    }
    names
        .into_iter()
        .filter(|n| !keep.contains(n))
        .collect::<Vec<_>>()
        .join(",")
}

/// The interpreter `python3` on PATH runs (not a version manager's shim,
/// which needs its own tools on PATH).
fn real_python() -> PathBuf {
    let o = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
}

/// A private bin directory holding `tools` from PATH (symlinked) plus
/// `scripts` (name, text) as executables.
fn bin_with(tools: &[&str], scripts: &[(&str, &str)]) -> tempfile::TempDir {
    let bin = tempfile::tempdir().unwrap();
    for tool in tools {
        let p = if *tool == "python3" {
            real_python()
        } else {
            which(tool).unwrap_or_else(|()| panic!("`{tool}` is not on PATH"))
        };
        std::os::unix::fs::symlink(p, bin.path().join(tool)).unwrap();
    }
    for (name, text) in scripts {
        let p = bin.path().join(name);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

/// `ldconfig -p` lists thousands of libraries on a real image; preflight's
/// Mooncake check must still see one listed first (a `| grep -q` under
/// `pipefail` reports the SIGPIPE of ldconfig as a miss).
#[test]
fn preflight_finds_mooncake_in_a_long_ldconfig_listing() {
    let (_tmp, dir) = render(PD);
    // 200,000 lines (several MB, far past a pipe buffer), the match first.
    let ldconfig = "#!/usr/bin/env bash\necho '\tlibmooncake_transfer_engine.so (libc6,x86-64) => /usr/local/lib/libmooncake_transfer_engine.so'\nfor ((i = 0; i < 200000; i++)); do echo \"\tlibfiller$i.so (libc6,x86-64) => /usr/lib/libfiller$i.so\"; done\n";
    let bin = bin_with(&[], &[("ldconfig", ldconfig)]);
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap()
    );
    let skip = skip_all_but(&dir, &["mooncake"]);
    let (code, out) = run(
        &dir,
        "preflight.sh",
        &["0"],
        &[
            ("PATH", path.as_str()),
            ("PD_SKIP_PREFLIGHT", skip.as_str()),
            // No `import mooncake` and no library directory to find it in.
            ("PYTHONPATH", "/nonexistent"),
            ("LD_LIBRARY_PATH", "/nonexistent"),
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("preflight: ok   mooncake: found by ldconfig"),
        "{out}"
    );
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

/// The unpacked source distribution `spec` (`NAME==VERSION`) of the upstream
/// corpus (`scripts/upstream/corpus.py`, fetched and sha256-checked on first
/// use); fails naming the command when it cannot be had.
fn corpus_tree(spec: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new("python3")
        .arg(root.join("scripts/upstream/corpus.py"))
        .args(["path", spec])
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 scripts/upstream/corpus.py: {e}"));
    assert!(
        out.status.success(),
        "`python3 scripts/upstream/corpus.py path {spec}` failed (the upstream corpus is needed, never skipped): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// A stand-in of an installed vllm-ascend release: the package as the sdist
/// ships it (`__init__.py` imports vLLM and defines no `__version__`;
/// setuptools-scm writes `_version.py`), and optionally pip's `.dist-info`.
fn fake_vllm_ascend(root: &Path, version_py: Option<&str>, metadata: Option<&str>) {
    let pkg = root.join("vllm_ascend");
    std::fs::create_dir_all(&pkg).unwrap();
    // As the release's: importing it needs vLLM, which is not here.
    std::fs::write(
        pkg.join("__init__.py"),
        "import vllm_ascend.logger  # noqa: F401\n",
    )
    .unwrap();
    std::fs::write(
        pkg.join("logger.py"),
        "from vllm.logger import init_logger\n",
    )
    .unwrap();
    if let Some(v) = version_py {
        std::fs::write(
            pkg.join("_version.py"),
            format!("__version__ = version = {v:?}\n__version_tuple__ = version_tuple = (0, 21, 0, 'rc1')\n"),
        )
        .unwrap();
    }
    if let Some(v) = metadata {
        let info = root.join(format!("vllm_ascend-{v}.dist-info"));
        std::fs::create_dir_all(&info).unwrap();
        std::fs::write(
            info.join("METADATA"),
            format!("Metadata-Version: 2.1\nName: vllm_ascend\nVersion: {v}\n"),
        )
        .unwrap();
    }
}

/// preflight's `vllm_ascend_version` reads the version the way an installed
/// release has it (no release defines `vllm_ascend.__version__`), compares it
/// with the layout's image tag without its `v`, and names both on a mismatch.
#[test]
fn preflight_reads_the_installed_vllm_ascend_version() {
    let (_tmp, dir) = render(PD);
    let layout = layouts::catalog()
        .unwrap()
        .iter()
        .find(|l| l.name() == PD)
        .unwrap();
    let tag = layout.image.tag;
    let want = tag.trim_start_matches('v');
    assert_ne!(want, tag, "image tags start with v: {tag}");
    let skip = skip_all_but(&dir, &["vllm_ascend_version"]);
    let check = |pythonpath: &Path| {
        let pp = pythonpath.display().to_string();
        run(
            &dir,
            "preflight.sh",
            &["0"],
            &[
                ("PD_SKIP_PREFLIGHT", skip.as_str()),
                ("PYTHONPATH", pp.as_str()),
            ],
        )
    };
    // The release itself (its sdist, through scripts/upstream/corpus.py): its
    // `__init__.py` and `_version.py`, then its PKG-INFO as pip's METADATA.
    let release = corpus_tree(&format!("vllm-ascend=={want}"));
    let site = tempfile::tempdir().unwrap();
    let pkg = site.path().join("vllm_ascend");
    std::fs::create_dir_all(&pkg).unwrap();
    for f in ["__init__.py", "_version.py"] {
        std::fs::copy(release.join("vllm_ascend").join(f), pkg.join(f)).unwrap();
    }
    let (code, out) = check(site.path());
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!(
            "preflight: ok   vllm_ascend_version: {want} ({}/vllm_ascend/_version.py)",
            site.path().display()
        )),
        "{out}"
    );
    let info = site.path().join(format!("vllm_ascend-{want}.dist-info"));
    std::fs::create_dir_all(&info).unwrap();
    std::fs::copy(release.join("PKG-INFO"), info.join("METADATA")).unwrap();
    let (code, out) = check(site.path());
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!(
            "ok   vllm_ascend_version: {want} (package metadata)"
        )),
        "{out}"
    );
    // A stand-in shaped like it, without metadata.
    let site = tempfile::tempdir().unwrap();
    fake_vllm_ascend(site.path(), Some(want), None);
    let (code, out) = check(site.path());
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("vllm_ascend/_version.py)"), "{out}");
    // A wrong version names both.
    let site = tempfile::tempdir().unwrap();
    fake_vllm_ascend(site.path(), Some("0.18.0"), None);
    let (code, out) = check(site.path());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "FAIL vllm_ascend_version: found vllm_ascend 0.18.0 ({}/vllm_ascend/_version.py), but the layout's image is {} (expects {want})",
            site.path().display(),
            layout.image_ref
        )),
        "{out}"
    );
    // pip's metadata wins over the file.
    let site = tempfile::tempdir().unwrap();
    fake_vllm_ascend(site.path(), Some("0.18.0"), Some(want));
    let (code, out) = check(site.path());
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!(
            "ok   vllm_ascend_version: {want} (package metadata)"
        )),
        "{out}"
    );
    // A source build: at the tag with a local part passes, saying so; past
    // the tag (`.devN`) fails, saying what it found.
    let site = tempfile::tempdir().unwrap();
    fake_vllm_ascend(
        site.path(),
        Some(&format!("{want}+g35d600725.d20260101")),
        None,
    );
    let (code, out) = check(site.path());
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("a source build (local part +g35d600725.d20260101)"),
        "{out}"
    );
    let site = tempfile::tempdir().unwrap();
    fake_vllm_ascend(site.path(), Some(&format!("{want}.dev3+g35d600725")), None);
    let (code, out) = check(site.path());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "found vllm_ascend {want}.dev3+g35d600725 ({}/vllm_ascend/_version.py), a source build past a release (dev3), but the layout's image is {} (expects {want})",
            site.path().display(),
            layout.image_ref
        )),
        "{out}"
    );
    // Nothing installed: said, not a traceback.
    let empty = tempfile::tempdir().unwrap();
    let (code, out) = check(empty.path());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "cannot read the installed vllm_ascend version: vllm_ascend is not installed in"
        ),
        "{out}"
    );
}

/// A stand-in Ascend root: each of the image's environment scripts
/// (`render::model::CANN_ENV_FILES`, a glob's `*` as `9.0.0`) records that it
/// was sourced by run.sh itself (not run as a child) with `set -u` off, and
/// the toolkit's exports what CANN's does. `skip`
/// leaves files out.
fn fake_ascend_root(root: &Path, record: &Path, skip: &[&str]) {
    for (n, f) in pd_dsl::render::model::CANN_ENV_FILES.iter().enumerate() {
        if skip.contains(&f.what) {
            continue;
        }
        let path = root.join(f.path.replace('*', "9.0.0"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut text = format!(
            "# stand-in of {what}\n# As vendor scripts do: an unset variable must not stop the caller.\nexport LD_LIBRARY_PATH=/stand-in/{n}:$LD_LIBRARY_PATH_UNSET_HERE\necho \"{what} sourced by ${{BASH_SOURCE[1]##*/}}\" >>{record}\n",
            what = f.what,
            record = record.display()
        );
        if f.required {
            text.push_str(&format!(
                "export {}={}/latest\n",
                pd_dsl::render::model::CANN_ENV_MARKER,
                path.parent().unwrap().display()
            ));
        }
        std::fs::write(&path, text).unwrap();
    }
}

/// run.sh sources the image's CANN, bisheng and ATB environment when no shell
/// did (a non-interactive `docker exec` or pod), says what it sourced, and
/// stops naming the toolkit's script when it is missing.
#[test]
fn run_sh_sources_the_cann_environment_or_names_what_is_missing() {
    let (_tmp, dir) = render(PD);
    let files = pd_dsl::render::model::CANN_ENV_FILES;
    assert_eq!(files.iter().filter(|f| f.required).count(), 1);
    let marker = pd_dsl::render::model::CANN_ENV_MARKER;
    let ips = "127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4";
    let go = |root: &Path, dry: bool, extra: &[(&str, &str)]| {
        let root = root.display().to_string();
        let mut env = vec![
            ("PD_NODE_IPS", ips),
            ("PD_NODE_INDEX", "0"),
            ("PD_LOCAL_IP", "127.0.0.1"),
            ("PD_NIC", "lo"),
            ("PD_ASCEND_ROOT", root.as_str()),
        ];
        if dry {
            env.push(("PD_DRY_RUN", "1"));
        }
        env.extend_from_slice(extra);
        let mut cmd = Command::new(dir.join("run.sh"));
        cmd.current_dir(&dir).env_remove(marker);
        for (k, _) in std::env::vars() {
            if k.starts_with("PD_") {
                cmd.env_remove(k);
            }
        }
        let out = cmd.envs(env.iter().copied()).output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    };
    let ascend = tempfile::tempdir().unwrap();
    let record = ascend.path().join("sourced");
    fake_ascend_root(ascend.path(), &record, &[]);
    let (code, out) = go(ascend.path(), true, &[]);
    assert_eq!(code, 0, "{out}");
    let sourced = std::fs::read_to_string(&record).unwrap();
    let want: Vec<String> = files
        .iter()
        .map(|f| format!("{} sourced by run.sh", f.what))
        .collect();
    assert_eq!(sourced.lines().collect::<Vec<_>>(), want, "{out}");
    let root = ascend.path().display();
    assert!(
        out.contains(&format!(
            "run.sh: sourced the CANN environment: CANN toolkit {root}/ascend-toolkit/set_env.sh; bisheng (ascendnpu-ir) {root}/cann-9.0.0/share/info/ascendnpu-ir/bin/set_env.sh; ATB {root}/nnal/atb/set_env.sh;"
        )),
        "{out}"
    );
    // Already set up by a shell: nothing is sourced.
    std::fs::remove_file(&record).unwrap();
    let (code, out) = go(ascend.path(), true, &[(marker, "/opt/cann/latest")]);
    assert_eq!(code, 0, "{out}");
    assert!(!record.exists(), "{out}");
    assert!(
        out.contains(&format!(
            "CANN environment already set up ({marker}=/opt/cann/latest); sourcing nothing"
        )),
        "{out}"
    );
    // Only the toolkit: the optional ones are named and skipped.
    let toolkit_only = tempfile::tempdir().unwrap();
    let record2 = toolkit_only.path().join("sourced");
    fake_ascend_root(
        toolkit_only.path(),
        &record2,
        &["ATB", "bisheng (ascendnpu-ir)"],
    );
    let (code, out) = go(toolkit_only.path(), true, &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        std::fs::read_to_string(&record2).unwrap(),
        "CANN toolkit sourced by run.sh\n"
    );
    assert!(
        out.contains(&format!(
            "no ATB environment ({}/nnal/atb/set_env.sh does not exist); going on without it",
            toolkit_only.path().display()
        )),
        "{out}"
    );
    // No toolkit: a real start stops before anything runs, naming the file.
    let empty = tempfile::tempdir().unwrap();
    let (code, out) = go(empty.path(), false, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "run.sh: error: no CANN toolkit environment: {}/ascend-toolkit/set_env.sh does not exist and {marker} is unset",
            empty.path().display()
        )),
        "{out}"
    );
    assert!(out.contains("set PD_ASCEND_ROOT"), "{out}");
    assert!(!out.contains("preflight"), "{out}");
    // The dry run warns instead.
    let (code, out) = go(empty.path(), true, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("a real start stops here"), "{out}");
}

/// A dead HTTP proxy in the environment, in every spelling curl, httpx and
/// aiohttp read.
const DEAD_PROXY: [(&str, &str); 5] = [
    ("http_proxy", "http://127.0.0.1:9"),
    ("https_proxy", "http://127.0.0.1:9"),
    ("HTTP_PROXY", "http://127.0.0.1:9"),
    ("HTTPS_PROXY", "http://127.0.0.1:9"),
    ("all_proxy", "http://127.0.0.1:9"),
];

/// A one-request chat completions server on 127.0.0.1; returns its port.
fn one_shot_chat_server() -> (std::process::Child, u16) {
    let script = r#"
import http.server, json, socket, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.dumps({"choices": [{"message": {"content": "ok"}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.handle_request()
"#;
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    (child, line.trim().parse().unwrap())
}

/// With http_proxy and friends pointing at a dead proxy, verify.sh still
/// reaches the deployment; run.sh, proxy.sh and bench.sh put every node
/// address on NO_PROXY/no_proxy and keep what the operator had there.
#[test]
fn scripts_bypass_http_proxies_for_the_deployment() {
    let (_tmp, dir) = render(PD);
    let (mut server, port) = one_shot_chat_server();
    let url = format!("http://127.0.0.1:{port}");
    let mut env: Vec<(&str, &str)> = DEAD_PROXY.to_vec();
    env.push(("PD_PROXY_URL", url.as_str()));
    let (code, out) = run(&dir, "verify.sh", &[], &env);
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("verify.sh: ok: HTTP 200 with choices"),
        "{out}"
    );

    // run.sh: every node by address and by the name it was given (a name
    // that does not resolve is kept in a dry run).
    let ips = "127.0.0.1,node1.cluster.example,127.0.0.3,127.0.0.4";
    let mut env: Vec<(&str, &str)> = DEAD_PROXY.to_vec();
    env.extend([
        ("NO_PROXY", "corp.example, .internal"),
        ("no_proxy", "corp.example,mirror.example"),
    ]);
    let (code, out) = dry_run(&dir, ips, "2", &env);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("run.sh: node 2 bypasses HTTP proxies for NO_PROXY=corp.example,.internal,mirror.example,127.0.0.1,localhost,::1,node1.cluster.example,127.0.0.3,127.0.0.4\n"),
        "{out}"
    );
    // node 0 also dry-runs the proxy with the same list.
    let (code, out) = dry_run(
        &dir,
        "127.0.0.1,127.0.0.2,127.0.0.3,10.0.0.4",
        "0",
        &[
            ("PD_LOCAL_IP", "127.0.0.1"),
            ("http_proxy", "http://127.0.0.1:9"),
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("proxy.sh: bypasses HTTP proxies for NO_PROXY=127.0.0.1,localhost,::1,127.0.0.2,127.0.0.3,10.0.0.4\n"),
        "{out}"
    );

    // bench.sh: vllm bench (aiohttp, trust_env) gets the target on NO_PROXY.
    let record = tempfile::tempdir().unwrap();
    let seen = record.path().join("env");
    let vllm = format!(
        "#!/usr/bin/env bash\nprintf 'NO_PROXY=%s\\nno_proxy=%s\\n' \"$NO_PROXY\" \"$no_proxy\" >{}\n",
        seen.display()
    );
    let bin = bin_with(&[], &[("vllm", &vllm)]);
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap()
    );
    for (host, want) in [("10.1.2.3", "10.1.2.3"), ("[fd00::7]", "fd00::7")] {
        let mut env: Vec<(&str, &str)> = DEAD_PROXY.to_vec();
        env.extend([("PATH", path.as_str()), ("NO_PROXY", "corp.example")]);
        let (code, out) = run(&dir, "bench.sh", &[host], &env);
        assert_eq!(code, 0, "{out}");
        let list = format!("corp.example,127.0.0.1,localhost,::1,{want}");
        assert_eq!(
            std::fs::read_to_string(&seen).unwrap(),
            format!("NO_PROXY={list}\nno_proxy={list}\n"),
            "{host}"
        );
    }
}
