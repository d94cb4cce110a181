//! Artifact checks over everything rendered: the registered catalog plus the
//! renderer's sample layouts. Every `.sh` passes `bash -n` and `shellcheck`
//! (a missing shellcheck FAILS the test), every `.py` compiles, every
//! YAML/JSON parses, and rendering is deterministic.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl::Layout;
use pd_dsl::render::{self, Artifact};
use std::path::{Path, PathBuf};
use std::process::Command;

const SAMPLES: [&str; 5] = [
    include_str!("../../pd-dsl/tests/fixtures/v3_1_a3_2p1d.json"),
    include_str!("../../pd-dsl/tests/fixtures/v4_flash_a3_1p1d.json"),
    include_str!("../../pd-dsl/tests/fixtures/v3_1_a2_mixed_2node.json"),
    // Per-node settings: the rank scripts' `PD_NODE` cases.
    include_str!("../../pd-dsl/tests/fixtures/v3_1_a3_2p1d_node_settings.json"),
    include_str!("../../pd-dsl/tests/fixtures/v3_1_a2_mixed_2node_node_settings.json"),
];

fn sample(json: &str) -> Layout {
    let spec: pd_dsl::LayoutSpec = serde_json::from_str(json).expect("sample parses");
    pd_dsl::check(&spec).unwrap_or_else(|d| panic!("sample breaks rules:\n{d}"))
}

/// The registered catalog and the samples, rendered into `dir`.
fn rendered(dir: &Path) -> Vec<Artifact> {
    let registered = layouts::catalog().unwrap_or_else(|e| panic!("catalog: {e}"));
    let mut artifacts = render::render_catalog(registered).expect("render catalog");
    // Samples go under their own root so names never clash with the catalog.
    for a in SAMPLES
        .iter()
        .map(|j| sample(j))
        .flat_map(|l| render::render_layout(&l).expect("render sample"))
    {
        artifacts.push(Artifact {
            path: Path::new("samples").join(&a.path),
            ..a
        });
    }
    render::write_catalog(dir, &artifacts).expect("write");
    artifacts
}

fn files(artifacts: &[Artifact], dir: &Path, ext: &str) -> Vec<PathBuf> {
    artifacts
        .iter()
        .filter(|a| a.path.extension().is_some_and(|e| e == ext))
        .map(|a| dir.join(&a.path))
        .collect()
}

fn tool(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("`{name}` is not on PATH: install it (e.g. `apt-get install {name}`); these checks never skip")
        })
}

#[test]
fn every_shell_script_passes_bash_n_and_shellcheck() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("catalog");
    let artifacts = rendered(&dir);
    let scripts = files(&artifacts, &dir, "sh");
    assert!(scripts.len() > 10, "found {} scripts", scripts.len());
    let bash = tool("bash");
    for s in &scripts {
        let o = Command::new(&bash)
            .arg("-n")
            .arg(s)
            .output()
            .expect("bash runs");
        assert!(
            o.status.success(),
            "bash -n {}: {}",
            s.display(),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let o = Command::new(tool("shellcheck"))
        .args(["--shell=bash", "--severity=style"])
        .args(&scripts)
        .output()
        .expect("shellcheck runs");
    assert!(
        o.status.success() && o.stdout.is_empty(),
        "shellcheck findings:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn every_python_file_compiles() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("catalog");
    let artifacts = rendered(&dir);
    let py = files(&artifacts, &dir, "py");
    assert!(!py.is_empty());
    for p in py {
        let o = Command::new(tool("python3"))
            .args(["-m", "py_compile"])
            .arg(&p)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .expect("python3 runs");
        assert!(
            o.status.success(),
            "py_compile {}: {}",
            p.display(),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn every_yaml_and_json_file_parses() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let artifacts = rendered(&tmp.path().join("catalog"));
    let structured = artifacts
        .iter()
        .filter(|a| {
            a.path
                .extension()
                .is_some_and(|e| e == "yaml" || e == "json")
        })
        .count();
    assert!(structured > 2);
    for a in &artifacts {
        if let Err(e) = render::parse_check(a) {
            panic!("{e}");
        }
    }
}

#[test]
fn rendering_twice_is_byte_identical_and_fresh() {
    let registered = layouts::catalog().unwrap_or_else(|e| panic!("catalog: {e}"));
    let a = render::render_catalog(registered).expect("render");
    let b = render::render_catalog(registered).expect("render");
    assert_eq!(a, b);
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("catalog");
    render::write_catalog(&dir, &a).expect("write");
    assert_eq!(render::check_catalog(&dir, &b), vec![]);
    for x in &a {
        assert!(
            x.contents.ends_with('\n') && !x.contents.ends_with("\n\n"),
            "{}",
            x.path.display()
        );
    }
}

#[test]
fn every_layout_directory_has_its_files() {
    let registered = layouts::catalog().unwrap_or_else(|e| panic!("catalog: {e}"));
    for l in registered {
        let a = render::render_layout(l).expect("render");
        let names: Vec<String> = a
            .iter()
            .map(|x| x.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        let mut want = vec![
            "README.md",
            "meta.yaml",
            "run.sh",
            "preflight.sh",
            "verify.sh",
            "bench.sh",
            "docker.sh",
            "index.html",
            "topology.svg",
        ];
        if l.is_pd() {
            want.extend([
                "run_dp_template_prefill.sh",
                "run_dp_template_decode.sh",
                "launch_online_dp.py",
                "proxy.sh",
            ]);
        } else {
            want.push("run_mixed.sh");
        }
        for w in want {
            assert!(names.iter().any(|n| n == w), "{}: missing {w}", l.name());
        }
        for x in &a {
            assert!(x.path.starts_with(l.name()), "{}", x.path.display());
        }
    }
}

/// A reader that stops early (`grep -q`, `head`, `awk '…exit'`, `sed q`)
/// after a pipe kills the writer with SIGPIPE once the output outgrows the
/// pipe buffer (`fc-list` with many fonts, `ldconfig -p`, `ip addr` on a
/// host with many interfaces), and `pipefail` turns that into a failure of
/// the whole pipeline: the match is reported as a miss. `grep -q PAT <(cmd)`
/// or reading the whole output first does not have the problem.
fn early_exit_readers(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with('#') {
            continue;
        }
        // Each stage after a `|` that is not `||`.
        let mut rest = code;
        while let Some(at) = rest.find('|') {
            let after = &rest[at + 1..];
            if let Some(after_or) = after.strip_prefix('|') {
                rest = after_or;
                continue;
            }
            let stage = after.trim_start();
            let stage = stage.split('|').next().unwrap_or("");
            let first = stage.split_whitespace().next().unwrap_or("");
            let quits = match first {
                "head" => true,
                "grep" => stage.split_whitespace().any(|w| {
                    w.starts_with('-')
                        && !w.starts_with("--")
                        && (w.contains('q') || w.contains('m'))
                }),
                "awk" => stage.contains("exit"),
                "sed" => stage.contains("q'") || stage.contains("q;"),
                _ => false,
            };
            if quits {
                found.push(format!("{}: {}", n + 1, code));
            }
            rest = after;
        }
    }
    found
}

#[test]
fn no_pipeline_reader_exits_early_under_pipefail() {
    // The repository's own scripts, then every generated one.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut sources: Vec<(String, String)> = Vec::new();
    for rel in [".ci/run", "fuzz/run.sh"] {
        let text = std::fs::read_to_string(root.join(rel)).expect(rel);
        sources.push((rel.to_owned(), text));
    }
    for dir in ["scripts", "scripts/upstream", "pd-dsl/templates/sh"] {
        for e in std::fs::read_dir(root.join(dir)).expect(dir) {
            let p = e.expect("entry").path();
            if p.extension().is_some_and(|x| x == "sh") {
                let text = std::fs::read_to_string(&p).expect("read");
                sources.push((p.display().to_string(), text));
            }
        }
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("catalog");
    let artifacts = rendered(&dir);
    for a in artifacts
        .iter()
        .filter(|a| a.path.extension().is_some_and(|e| e == "sh"))
    {
        sources.push((a.path.display().to_string(), a.contents.clone()));
    }
    assert!(sources.len() > 20, "found {} scripts", sources.len());
    // The check itself finds what it is for.
    assert_eq!(
        early_exit_readers("if fc-list | grep -q \"$1\"; then\nx=$(getent hosts h | awk '{print $1; exit}')\nok || true\n").len(),
        2
    );
    let mut bad = Vec::new();
    for (name, text) in &sources {
        if !text.contains("pipefail") {
            continue;
        }
        for hit in early_exit_readers(text) {
            bad.push(format!("{name}:{hit}"));
        }
    }
    assert!(
        bad.is_empty(),
        "found a pipeline whose reader exits early under `pipefail` (SIGPIPE fails the writer, so a match reads as a miss); expected `grep -q PAT <(cmd)` or reading the whole output:\n{}",
        bad.join("\n")
    );
}
