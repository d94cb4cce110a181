//! The harness that runs what the catalog renders: `run.sh` in
//! `PD_DRY_RUN=1`, the launcher's `--dry-run`, and the role templates and
//! `run_mixed.sh` with a recording `vllm` stand-in on PATH. Shared by the
//! seed conformance test and the import round trip.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

/// The workspace root (the tests' scripts run from it).
pub fn workspace() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `python3 ARGS` in the workspace root (an upstream script:
/// `scripts/upstream/...`) and returns its stdout; panics with its stderr
/// when it fails.
pub fn workspace_python(args: &[&str]) -> String {
    let out = Command::new("python3")
        .args(args)
        .current_dir(workspace())
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "python3 {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// A layout rendered into a temporary catalog directory.
#[derive(Debug)]
pub struct Rendered {
    _tmp: tempfile::TempDir,
    /// The layout's directory (`run.sh`, templates, launcher, ...).
    pub root: PathBuf,
    /// NPUs per node of the layout's hardware.
    pub npus: u32,
}

/// Renders the registered layout `name`.
pub fn render(name: &str) -> Rendered {
    let catalog = layouts::catalog().unwrap_or_else(|e| panic!("catalog: {e}"));
    let layout = catalog
        .iter()
        .find(|l| l.name() == name)
        .unwrap_or_else(|| panic!("layout {name} is not registered"));
    render_layout(layout)
}

/// Renders `layout` and writes its artifacts as the catalog does.
pub fn render_layout(layout: &pd_dsl::Layout) -> Rendered {
    let name = layout.name();
    let artifacts = pd_dsl::render::render_layout(layout).expect("render");
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("catalog");
    pd_dsl::render::write_catalog(&out, &artifacts).expect("write");
    Rendered {
        root: out.join(name),
        _tmp: tmp,
        npus: layout.hardware.npus_per_node,
    }
}

/// Splits a shell command line the way bash would for the quoting our
/// scripts and the seed use: whitespace, `'...'`, `"..."` (with `\"`, `\\`,
/// `\$` escapes), backslash escapes and backslash-newline continuations.
pub fn shell_split(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(n) => {
                    cur.push(n);
                    in_word = true;
                }
            },
            '\'' => {
                in_word = true;
                for n in chars.by_ref() {
                    if n == '\'' {
                        break;
                    }
                    cur.push(n);
                }
            }
            '"' => {
                in_word = true;
                while let Some(n) = chars.next() {
                    match n {
                        '"' => break,
                        '\\' if matches!(chars.peek(), Some('"' | '\\' | '$' | '`')) => {
                            cur.extend(chars.next());
                        }
                        _ => cur.push(n),
                    }
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

/// What `run.sh` of one node would do (`PD_DRY_RUN=1`).
#[derive(Debug)]
pub struct DryRun {
    /// `ENGINE_ID` it exports (PD nodes).
    pub engine_id: Option<String>,
    /// `KV_PORT` it exports (PD nodes).
    pub kv_port: Option<String>,
    /// The node's command: the launcher or `run_mixed.sh` with its args.
    pub node_command: Vec<String>,
    /// The proxy command (node 0 of a PD layout).
    pub proxy_command: Option<Vec<String>>,
    /// The KV pool's service command (node 0 of a layout with a pool).
    pub pool_service: Option<Vec<String>>,
    /// The env the pool's service starts with (`NAME=value`).
    pub pool_service_env: Vec<(String, String)>,
    /// The KV pool config files this node writes, by file name.
    pub pool_files: BTreeMap<String, String>,
}

/// Runs the generated run.sh of node `node` with `PD_DRY_RUN=1`.
pub fn dry_run(r: &Rendered, node: usize, ips: &[&str]) -> DryRun {
    let out = Command::new("bash")
        .arg(r.root.join("run.sh"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("PD_NODE_INDEX", node.to_string())
        .env("PD_NODE_IPS", ips.join(","))
        .env("PD_LOCAL_IP", ips[node])
        .env("PD_NIC", "eth0")
        .env("PD_DRY_RUN", "1")
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "run.sh dry run of node {node} failed: {}{}",
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
    let mut d = DryRun {
        engine_id: None,
        kv_port: None,
        node_command: Vec::new(),
        proxy_command: None,
        pool_service: None,
        pool_service_env: Vec::new(),
        pool_files: BTreeMap::new(),
    };
    // The pool's files print as `--- NAME` then their lines.
    let mut file: Option<String> = None;
    for line in stdout.lines() {
        if let Some(name) = line.strip_prefix("--- ") {
            file = Some(name.to_owned());
            d.pool_files.insert(name.to_owned(), String::new());
            continue;
        }
        if let Some(f) = &file {
            if line.contains(".sh: ") {
                file = None;
            } else {
                let text = d.pool_files.entry(f.clone()).or_default();
                text.push_str(line);
                text.push('\n');
                continue;
            }
        }
        if let Some(rest) = line.strip_prefix("run.sh: node 0 pool service env: ") {
            if let Some((k, v)) = rest.split_once('=') {
                d.pool_service_env.push((k.to_owned(), v.to_owned()));
            }
            continue;
        }
        if let Some(rest) = line
            .strip_prefix("run.sh: node 0 would run the ")
            .and_then(|r| r.split_once(" pool service:"))
            .map(|(_, argv)| argv)
        {
            d.pool_service = Some(shell_split(rest));
            continue;
        }
        if let Some(rest) = line.strip_prefix(&format!("run.sh: node {node} exports ")) {
            for kv in rest.split_whitespace() {
                match kv.split_once('=') {
                    Some(("ENGINE_ID", v)) => d.engine_id = Some(v.to_owned()),
                    Some(("KV_PORT", v)) => d.kv_port = Some(v.to_owned()),
                    _ => panic!("unexpected export {kv}"),
                }
            }
        } else if let Some(rest) = line.strip_prefix(&format!("run.sh: node {node} would run:")) {
            d.node_command = shell_split(rest);
        } else if let Some(rest) = line.strip_prefix("proxy.sh: would run:") {
            d.proxy_command = Some(shell_split(rest));
        }
    }
    assert!(!d.node_command.is_empty(), "no command in {stdout}");
    d
}

/// `--flag value` pairs and switches of an argv, flags normalised to dashes.
/// Multi-value flags (the proxy's lists) collect every following value.
pub fn flags(argv: &[String]) -> BTreeMap<String, Vec<String>> {
    let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for a in argv {
        if let Some(f) = a.strip_prefix("--") {
            // A dotted key into a JSON option keeps its spelling.
            let f = match f.split_once('.') {
                Some((head, keys)) => format!("--{}.{keys}", head.replace('_', "-")),
                None => format!("--{}", f.replace('_', "-")),
            };
            assert!(!m.contains_key(&f), "flag {f} given twice in {argv:?}");
            m.insert(f.clone(), Vec::new());
            current = Some(f);
        } else if let Some(f) = &current {
            m.get_mut(f).expect("flag").push(a.clone());
        }
    }
    m
}

/// The single value of `flag`.
pub fn one(m: &BTreeMap<String, Vec<String>>, flag: &str) -> String {
    match m.get(flag).map(Vec::as_slice) {
        Some([v]) => v.clone(),
        other => panic!("{flag}: expected one value, found {other:?}"),
    }
}

/// The launcher's per-rank template argv (after `bash TEMPLATE`).
pub fn ranks(r: &Rendered, launcher: &[String]) -> Vec<Vec<String>> {
    let mut argv: Vec<String> = launcher[1..].to_vec();
    argv.extend([
        "--dry-run".into(),
        "--visible-npus".into(),
        r.npus.to_string(),
    ]);
    let out = Command::new("python3")
        .args(&argv)
        .output()
        .expect("launcher runs");
    assert!(
        out.status.success(),
        "launcher dry run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| shell_split(l)[2..].to_vec())
        .collect()
}

/// What a script passed to the recording `vllm` stand-in.
#[derive(Debug)]
pub struct Served {
    /// argv after `vllm` (`serve`, the model, options).
    pub argv: Vec<String>,
    /// The environment `vllm` saw.
    pub env: BTreeMap<String, String>,
}

/// Runs a generated script with a recording `vllm` on PATH.
pub fn serve(r: &Rendered, script: &str, args: &[String], extra_env: &[(&str, &str)]) -> Served {
    let stub = tempfile::tempdir().expect("tempdir");
    let vllm = stub.path().join("vllm");
    // Records argv and env NUL-separated: no interpreter between the
    // script under test and what it passes. A child process writes it, so
    // no writable descriptor of ours can leak into a process another test
    // thread forks meanwhile (exec would fail with "Text file busy").
    let written = Command::new("sh")
        .args(["-c", "printf '%s' \"$2\" >\"$1\" && chmod 755 \"$1\"", "sh"])
        .arg(&vllm)
        .arg("#!/bin/sh\nprintf '%s\\0' \"$@\" >\"$STUB_OUT.argv\"\nenv -0 >\"$STUB_OUT.env\"\n")
        .status()
        .expect("sh runs");
    assert!(written.success(), "cannot write the vllm stand-in");
    let record = stub.path().join("record");
    let path = format!(
        "{}:{}",
        stub.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new("bash");
    cmd.arg(r.root.join(script))
        .args(args)
        .env_clear()
        .env("PATH", path)
        .env("STUB_OUT", &record)
        .env("HCCL_IF_IP", "192.xx.xx.1")
        .env("GLOO_SOCKET_IFNAME", "eth0")
        .env("TP_SOCKET_IFNAME", "eth0")
        .env("HCCL_SOCKET_IFNAME", "eth0")
        // run.sh's KV pool exports (layouts with a pool require them).
        .env("MMC_LOCAL_CONFIG_PATH", "/tmp/runtime/mmc-local.conf")
        .env("MOONCAKE_CONFIG_PATH", "/tmp/runtime/mooncake.json")
        .env("MOONCAKE_MASTER", "192.xx.xx.1:50088");
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("bash runs");
    assert!(
        out.status.success(),
        "{script} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |ext: &str| -> Vec<String> {
        let bytes = std::fs::read(record.with_extension(ext)).expect("stub record");
        String::from_utf8(bytes)
            .expect("utf-8")
            .split_terminator('\0')
            .map(str::to_owned)
            .collect()
    };
    Served {
        argv: read("argv"),
        env: read("env")
            .iter()
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
    }
}

/// The entries of `dir`, sorted by path (panics naming the directory).
pub fn sorted(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    v.sort();
    v
}
