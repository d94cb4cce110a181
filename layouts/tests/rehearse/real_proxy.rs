//! The real proxy of each release (`--proxy-script`), from the upstream
//! corpus in a venv with its packages: every PD layout, and every fault.

use crate::{assert_fails, rehearse_with_path};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// The upstream proxy's Python packages, pinned: fastapi below 0.124 as
/// vllm-ascend's `requirements.txt` and `pyproject.toml` require
/// (`fastapi<0.124.0`), httpx and uvicorn as the proxy imports them.
const PROXY_PACKAGES: [&str; 3] = ["fastapi==0.123.10", "httpx==0.28.1", "uvicorn==0.32.1"];

/// The unpacked source of vllm-ascend `release` (without `v`), from the
/// upstream corpus (`scripts/upstream/corpus.py`, which fetches and
/// verifies it on first use); fails naming the cause.
fn corpus_tree(release: &str) -> std::path::PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new("python3")
        .arg(root.join("scripts/upstream/corpus.py"))
        .args(["path", &format!("vllm-ascend=={release}")])
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 scripts/upstream/corpus.py: {e}"));
    assert!(
        out.status.success(),
        "the upstream corpus has no vllm-ascend=={release} (scripts/upstream/corpus.py path failed): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(
        tree.is_dir(),
        "corpus.py printed {}, not a directory",
        tree.display()
    );
    tree
}

/// A venv with [`PROXY_PACKAGES`], created once under the corpus cache and
/// reused (`<cache>/venv/proxy-<pins>/`); fails with the pip output when it
/// cannot be made.
fn proxy_venv(tree: &Path) -> std::path::PathBuf {
    // `<cache>/src/vllm-ascend-X` → `<cache>`.
    let cache = tree
        .parent()
        .and_then(Path::parent)
        .unwrap_or_else(|| panic!("{} is not in a corpus cache", tree.display()));
    let name: String = PROXY_PACKAGES
        .iter()
        .map(|p| p.replace("==", ""))
        .collect::<Vec<_>>()
        .join("-");
    let venv = cache.join("venv").join(format!("proxy-{name}"));
    let python = venv.join("bin/python3");
    let ok = || {
        Command::new(&python)
            .args(["-c", "import fastapi, httpx, uvicorn"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    // Tests of this binary and of others make it concurrently on a fresh
    // machine: one at a time, under an exclusive lock on the cache's venv
    // directory (the loser finds it made).
    let root = cache.join("venv");
    std::fs::create_dir_all(&root)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", root.display()));
    let lock = std::fs::File::create(root.join(".lock"))
        .unwrap_or_else(|e| panic!("cannot create {}/.lock: {e}", root.display()));
    lock.lock()
        .unwrap_or_else(|e| panic!("cannot lock {}/.lock: {e}", root.display()));
    if !ok() {
        let _ = std::fs::remove_dir_all(&venv);
        let out = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .output()
            .unwrap_or_else(|e| panic!("cannot run python3 -m venv: {e}"));
        assert!(
            out.status.success(),
            "python3 -m venv {} failed (install python3-venv): {}",
            venv.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let out = Command::new(&python)
            .args(["-m", "pip", "install", "-q"])
            .args(PROXY_PACKAGES)
            .output()
            .unwrap_or_else(|e| panic!("cannot run pip: {e}"));
        assert!(
            out.status.success() && ok(),
            "cannot install the upstream proxy's packages {PROXY_PACKAGES:?} into {} (PyPI must be reachable): {}{}",
            venv.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    drop(lock);
    venv.join("bin")
}

/// The proxy upstream ships for `l`'s image and connector: the layerwise
/// one for `MooncakeLayerwiseConnector` (push mode), else the load-balance
/// proxy, from the release's `examples/disaggregated_prefill_v1/`.
fn real_proxy(l: &pd_dsl::Layout) -> (std::path::PathBuf, std::path::PathBuf) {
    let release = l.image.tag.strip_prefix('v').unwrap_or(l.image.tag);
    let tree = corpus_tree(release);
    let file = match l.connector {
        Some(pd_dsl::ConnectorKind::MooncakeLayerwise) => {
            "load_balance_proxy_layerwise_server_example.py"
        }
        _ => "load_balance_proxy_server_example.py",
    };
    let script = tree.join("examples/disaggregated_prefill_v1").join(file);
    assert!(
        script.is_file(),
        "vllm-ascend {release} has no {}",
        script.display()
    );
    let venv = proxy_venv(&tree);
    (script, venv)
}

/// Every PD layout with the real proxy of its image's release: up,
/// verify.sh through it, every prefill and decode rank served. A proxy that
/// imports vLLM at the top (the layerwise one from 0.26.0rc1) needs torch
/// and runs inside the image only; such layouts are named in the output and
/// rehearse with the stand-in proxy in `every_registered_layout_rehearses_end_to_end`.
#[test]
fn every_pd_layout_rehearses_with_its_releases_real_proxy() {
    let started = Instant::now();
    let mut times = Vec::new();
    let mut needs_vllm = Vec::new();
    for l in layouts::catalog().unwrap().iter().filter(|l| l.is_pd()) {
        let (script, venv) = real_proxy(l);
        // The layerwise proxy of later releases imports vLLM and vllm-ascend
        // modules at the top (`from vllm.logger import init_logger`, ...),
        // which import torch: it runs inside the image only. Read from the
        // script itself, so a release that drops the import is run here.
        let text = std::fs::read_to_string(&script).unwrap();
        if text
            .lines()
            .any(|line| line.starts_with("from vllm") || line.starts_with("import vllm"))
        {
            needs_vllm.push(format!("{} ({})", l.name(), script.display()));
            assert_eq!(
                l.connector,
                Some(pd_dsl::ConnectorKind::MooncakeLayerwise),
                "{}: its proxy imports vLLM",
                l.name()
            );
            continue;
        }
        let script_arg = script.display().to_string();
        let run = rehearse_with_path(&[l.name(), "--proxy-script", &script_arg], &venv);
        assert_eq!(run.code, Some(0), "{}", run.out);
        for needle in [
            format!("PASS {}", l.name()),
            "every prefill and decode rank served".into(),
            "verify.sh: ok".into(),
        ] {
            assert!(
                run.out.contains(&needle),
                "missing {needle:?} in\n{}",
                run.out
            );
        }
        // Preflight checked the real proxy's packages rather than skip them.
        let skips = run
            .out
            .lines()
            .find(|l| l.starts_with("preflight skips"))
            .unwrap_or_default();
        assert!(!skips.contains("proxy_deps"), "{skips}");
        times.push(format!("{} {:.1}s", l.name(), run.took.as_secs_f64()));
    }
    eprintln!(
        "{}\nreal proxies: {:.1}s in all; not run here, their proxy imports vLLM (torch): {}",
        times.join("\n"),
        started.elapsed().as_secs_f64(),
        if needs_vllm.is_empty() {
            "none".to_owned()
        } else {
            needs_vllm.join(", ")
        }
    );
    assert!(times.len() > needs_vllm.len(), "{needs_vllm:?}");
}

/// Every fault injects with a real proxy (none is refused, none passes):
/// the proxy faults go through the shim, which injects and then runs the
/// real script. The layout is a V1 one with prefill and decode on several
/// nodes; what each failure names is read from its placement.
#[test]
fn every_fault_injects_with_a_real_proxy() {
    use pd_rehearse::rehearsal::{Fault, node_ip};
    const LAYOUT: &str = "deepseek-v4-flash-w8a8-mtp/a3-2p2d";
    let l = layouts::catalog()
        .unwrap()
        .iter()
        .find(|l| l.name() == LAYOUT)
        .expect("the layout");
    let (script, venv) = real_proxy(l);
    let script_arg = script.display().to_string();
    let nodes = &l.placement.nodes;
    // port-in-use holds the first API port of the last node that has one.
    let held = nodes
        .iter()
        .rev()
        .find_map(|n| n.ranks.iter().find_map(|r| r.api_port))
        .expect("an API port");
    let npus = l.hardware.npus_per_node / 2;
    let last = l.placement.proxy.decode.last().expect("a decode rank");
    let served = l
        .placement
        .nodes
        .iter()
        .flat_map(|n| &n.ranks)
        .filter(|r| r.api_port.is_some())
        .count();
    for fault in Fault::ALL {
        let run = rehearse_with_path(
            &[
                LAYOUT,
                "--fault",
                fault.name(),
                "--proxy-script",
                &script_arg,
            ],
            &venv,
        );
        let needles: Vec<String> = match fault {
            Fault::PortInUse => vec![format!("preflight: FAIL ports: already in use: {held}")],
            Fault::MissingModel => vec!["preflight: FAIL model_dir: weights directory".into()],
            Fault::WrongWeights => vec![
                "preflight: FAIL model_config:".into(),
                "the text model_type is 'pd_rehearse_other_model'".into(),
            ],
            Fault::WrongNpuCount => vec![format!(
                "preflight: FAIL npu_count: npu-smi info -l reports {npus} NPUs"
            )],
            Fault::UnreachableMaster => vec![
                "exited with code 4".into(),
                "unreachable after 3s".into(),
            ],
            Fault::ProxyMissesRank => vec![
                format!("1 of {served} rank(s) got no request"),
                format!(
                    "1. the running proxy's lists miss {}:{}",
                    node_ip(last.node),
                    last.port
                ),
            ],
            Fault::MissingProxyScript => vec![
                "preflight: FAIL proxy_script: /nonexistent/load_balance_proxy_server_example.py not found".into(),
            ],
            // The real proxy's own argparse refuses the option and exits 2.
            Fault::ProxyExits => vec![
                "an option it does not define".into(),
                "run.sh: error: the proxy exited with code 2, restarted 1 time(s); stopping node 0. Its last output:".into(),
                "load_balance_proxy_server_example.py: erro".into(),
            ],
        };
        let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
        assert_fails(&run, &needles);
    }
}
