//! Kubernetes manifests (`<layout>/k8s/`) of every registered layout and the
//! renderer's samples: each validates strictly against the Kubernetes OpenAPI
//! schemas (PyPI `kubernetes-validate`) and the LeaderWorkerSet CRD's OpenAPI
//! v3 schema (`tests/k8s/`), `kubectl kustomize` builds each directory, and the
//! objects carry what the layout derives (one set per engine of the engine's
//! size, whole-node NPU requests, every node's pod name). A missing
//! `kubectl`, `python3` or `kubernetes-validate` FAILS these tests
//! (`scripts/test.sh` installs them).

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod autoscaling;
mod disaggregated;
mod gateway;
mod objects;
mod probes;
mod readme;
mod schema;
mod settings;

use pd_dsl::Layout;
use pd_dsl::render::k8s::{self, K8sSettings};
use pd_dsl::render::{self, Artifact};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SAMPLES: [&str; 3] = [
    include_str!("../../../pd-dsl/tests/fixtures/v3_1_a3_2p1d.json"),
    include_str!("../../../pd-dsl/tests/fixtures/v4_flash_a3_1p1d.json"),
    include_str!("../../../pd-dsl/tests/fixtures/v3_1_a2_mixed_2node.json"),
];

/// Kubernetes versions the manifests are validated against: the oldest API
/// the typed structs model (k8s-openapi `v1_33`) and the newest schemas the
/// `kubernetes-validate` package ships.
const KUBERNETES_VERSIONS: [&str; 2] = ["1.33", "1.37"];

fn layouts() -> Vec<Layout> {
    let mut all: Vec<Layout> = layouts::catalog()
        .unwrap_or_else(|e| panic!("catalog: {e}"))
        .to_vec();
    for json in SAMPLES {
        let spec: pd_dsl::LayoutSpec = serde_json::from_str(json).expect("sample parses");
        let l = pd_dsl::check(&spec).unwrap_or_else(|d| panic!("sample breaks rules:\n{d}"));
        if !all.iter().any(|x| x.name() == l.name()) {
            all.push(l);
        }
    }
    all
}

fn render_all(layouts: &[Layout], settings: &K8sSettings, dir: &Path) -> Vec<Artifact> {
    let refs: Vec<&Layout> = layouts.iter().collect();
    let mut artifacts = Vec::new();
    for l in layouts {
        artifacts.extend(render::render_layout(l).expect("render"));
    }
    let artifacts = k8s::with_settings(artifacts, &refs, settings).expect("k8s settings apply");
    render::write_catalog(dir, &artifacts).expect("write");
    artifacts
}

fn tool(name: &str, install: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("`{name}` is not on PATH: {install}; these checks never skip"))
}

fn validator() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("k8s/validate.py")
}

fn validate(version: &str, files: &[PathBuf]) -> Output {
    let python = tool("python3", "install python3");
    let probe = Command::new(&python)
        .args(["-c", "import kubernetes_validate, jsonschema, yaml"])
        .output()
        .expect("python3 runs");
    assert!(
        probe.status.success(),
        "python3 lacks `kubernetes-validate`: run `python3 -m pip install kubernetes-validate` (scripts/test.sh does); these checks never skip\n{}",
        String::from_utf8_lossy(&probe.stderr)
    );
    Command::new(python)
        .arg(validator())
        .arg(version)
        .args(files)
        .output()
        .expect("validate.py runs")
}

fn k8s_dirs(artifacts: &[Artifact], root: &Path) -> Vec<PathBuf> {
    artifacts
        .iter()
        .filter(|a| a.path.ends_with("k8s/kustomization.yaml"))
        .map(|a| root.join(a.path.parent().unwrap()))
        .collect()
}

/// Every manifest under each `k8s/`, `setup/` included.
fn manifests(artifacts: &[Artifact], root: &Path) -> Vec<PathBuf> {
    artifacts
        .iter()
        .filter(|a| {
            a.path
                .ancestors()
                .any(|p| p.file_name().is_some_and(|f| f == k8s::DIR))
                && a.path.extension().is_some_and(|e| e == "yaml")
                && !a.path.ends_with("kustomization.yaml")
        })
        .map(|a| root.join(&a.path))
        .collect()
}

fn docs(text: &str) -> Vec<Value> {
    text.split("\n---\n")
        .map(|d| serde_saphyr::from_str::<Value>(d).expect("manifest parses"))
        .collect()
}

/// `kubectl kustomize DIR`, parsed.
fn kustomize(dir: &Path) -> Vec<Value> {
    let o = Command::new(tool(
        "kubectl",
        "install kubectl (Debian package `kubernetes-client`)",
    ))
    .arg("kustomize")
    .arg(dir)
    .output()
    .expect("kubectl runs");
    assert!(
        o.status.success(),
        "kubectl kustomize {} failed:\n{}",
        dir.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    docs(&String::from_utf8(o.stdout).expect("utf-8"))
}

fn env_of(container: &Value, name: &str) -> Option<String> {
    container["env"]
        .as_array()?
        .iter()
        .find(|e| e["name"] == name)
        .and_then(|e| e["value"].as_str().map(str::to_owned))
}
