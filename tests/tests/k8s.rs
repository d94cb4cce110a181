//! Kubernetes manifests (`<layout>/k8s/`) of every registered layout and the
//! renderer's samples: each validates strictly against the Kubernetes OpenAPI
//! schemas (PyPI `kubernetes-validate`) and the LeaderWorkerSet CRD's OpenAPI
//! v3 schema (`tests/k8s/`), `kubectl kustomize` builds each directory, and the
//! objects carry what the layout derives (one set per engine of the engine's
//! size, whole-node NPU requests, every node's pod name). A missing
//! `kubectl`, `python3` or `kubernetes-validate` FAILS these tests
//! (`scripts/test.sh` installs them).

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl::Layout;
use pd_dsl::render::k8s::{self, K8sSettings, WeightsVolume};
use pd_dsl::render::{self, Artifact};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SAMPLES: [&str; 3] = [
    include_str!("../../pd-dsl/tests/fixtures/v3_1_a3_2p1d.json"),
    include_str!("../../pd-dsl/tests/fixtures/v4_flash_a3_1p1d.json"),
    include_str!("../../pd-dsl/tests/fixtures/v3_1_a2_mixed_2node.json"),
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

#[test]
fn every_manifest_matches_the_kubernetes_and_leaderworkerset_schemas() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("catalog");
    let all = layouts();
    let artifacts = render_all(&all, &K8sSettings::default(), &root);
    let files = manifests(&artifacts, &root);
    // Per layout: scripts, one set per engine, the disruption budgets, the
    // proxy Deployment and Service (PD) or the API Service (mixed), and
    // setup/'s namespace and weights claim.
    let expected: usize = all
        .iter()
        .map(|l| 5 + usize::from(l.is_pd()) + l.placement.engines.len())
        .sum();
    assert_eq!(files.len(), expected, "manifest files: {files:?}");
    for version in KUBERNETES_VERSIONS {
        let o = validate(version, &files);
        assert!(
            o.status.success(),
            "manifests fail the Kubernetes {version} / LeaderWorkerSet schemas:\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn the_schema_check_rejects_unknown_fields_and_wrong_types() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("catalog");
    let all = layouts();
    let artifacts = render_all(&all, &K8sSettings::default(), &root);
    let set = artifacts
        .iter()
        .find(|a| a.contents.contains("kind: LeaderWorkerSet"))
        .expect("a LeaderWorkerSet");
    let proxy = artifacts
        .iter()
        .find(|a| a.path.ends_with("k8s/proxy-deployment.yaml"))
        .expect("a proxy manifest");
    let cases = [
        // A misspelt LeaderWorkerSet field (the CRD schema).
        (set, "    size:", "    sizee:", "'sizee' was unexpected"),
        // A misspelt pod field inside the set's template.
        (
            set,
            "enableServiceLinks:",
            "enableServiceLink:",
            "'enableServiceLink' was unexpected",
        ),
        // A wrong type in the core Deployment schema.
        (proxy, "replicas: 1", "replicas: one", "replicas"),
    ];
    for (i, (artifact, from, to, message)) in cases.into_iter().enumerate() {
        assert!(
            artifact.contents.contains(from),
            "`{from}` in {}",
            artifact.path.display()
        );
        let bad = tmp.path().join(format!("bad{i}.yaml"));
        std::fs::write(&bad, artifact.contents.replacen(from, to, 1)).expect("write");
        let o = validate(KUBERNETES_VERSIONS[0], &[bad]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "validate.py accepted `{to}`");
        assert!(
            stderr.contains(message),
            "expected `{message}` in:\n{stderr}"
        );
    }
}

#[test]
fn kubectl_kustomize_builds_every_layout_with_one_set_per_engine() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("catalog");
    let all = layouts();
    let settings = K8sSettings::default();
    let artifacts = render_all(&all, &settings, &root);
    let dirs = k8s_dirs(&artifacts, &root);
    assert_eq!(dirs.len(), all.len(), "one k8s/ per layout");
    for l in &all {
        let dir = root.join(l.name()).join(k8s::DIR);
        let objects = kustomize(&dir);
        let names = k8s::names(l).expect("names");
        let kinds = |k: &str| objects.iter().filter(|o| o["kind"] == k).count();
        assert_eq!(
            kinds("LeaderWorkerSet"),
            l.placement.engines.len(),
            "{}",
            l.name()
        );
        assert_eq!(kinds("ConfigMap"), 1, "{}", l.name());
        assert_eq!(
            kinds("PodDisruptionBudget"),
            l.placement.engines.len(),
            "{}: one budget per engine",
            l.name()
        );
        assert_eq!(kinds("Deployment"), usize::from(l.is_pd()), "{}", l.name());
        assert_eq!(kinds("Service"), 1, "{}", l.name());
        for o in &objects {
            assert_eq!(
                o["metadata"]["namespace"],
                settings.namespace.as_str(),
                "{}",
                l.name()
            );
            // The full layout name, the renderer's version and the image on
            // every object, whatever its name was shortened to.
            let a = &o["metadata"]["annotations"];
            assert_eq!(a[k8s::LAYOUT_ANNOTATION], l.name(), "{o}");
            assert_eq!(a[k8s::VERSION_ANNOTATION], env!("CARGO_PKG_VERSION"));
            assert_eq!(a[k8s::IMAGE_ANNOTATION], l.image_ref.as_str());
        }
        // docker.sh's --shm-size default is the pods' /dev/shm limit.
        let docker = artifacts
            .iter()
            .find(|a| a.path == Path::new(l.name()).join("docker.sh"))
            .expect("docker.sh");
        let shm = docker
            .contents
            .split_once("PD_SHM_SIZE:-")
            .and_then(|(_, r)| r.split_once('}'))
            .map(|(v, _)| v.trim_end_matches('g').parse::<u64>().expect("GiB"))
            .expect("docker.sh sets --shm-size");
        let budget = pd_dsl::capacity::budget(l);
        let npus = l.hardware.npus_per_node.to_string();
        let resource = settings.npu_resource_for(l);
        for e in &l.placement.engines {
            let set = &names.sets[e.index];
            let o = objects
                .iter()
                .find(|o| {
                    o["kind"] == "LeaderWorkerSet" && o["metadata"]["name"] == set.name.as_str()
                })
                .unwrap_or_else(|| panic!("{}: no set for engine {}", l.name(), e.index));
            let spec = &o["spec"];
            assert_eq!(spec["replicas"], 1);
            let t = &spec["leaderWorkerTemplate"];
            assert_eq!(t["size"], e.nodes.len(), "{} engine {}", l.name(), e.index);
            for template in ["leaderTemplate", "workerTemplate"] {
                let pod = &t[template];
                if pod.is_null() {
                    continue;
                }
                let c = &pod["spec"]["containers"][0];
                assert_eq!(c["image"], l.image_ref.as_str());
                assert_eq!(c["resources"]["limits"][&resource], npus.as_str());
                assert_eq!(c["resources"]["requests"][&resource], npus.as_str());
                // Derived from the placement: 4 CPUs per NPU in use, 2 per
                // rank, 2 for the node; 8 GiB per NPU requested; the limit
                // adds the NPUs' weights (the memory budget) and /dev/shm.
                let node = if template == "leaderTemplate" || t["leaderTemplate"].is_null() {
                    e.nodes[0]
                } else {
                    e.nodes[1]
                };
                let plan = &l.placement.nodes[node];
                let used: u64 = plan.ranks.iter().map(|r| r.devices.len() as u64).sum();
                let ranks = plan.ranks.len() as u64;
                assert_eq!(
                    c["resources"]["requests"]["cpu"],
                    (4 * used + 2 * ranks + 2).to_string(),
                    "{} node {node}",
                    l.name()
                );
                assert!(c["resources"]["limits"]["cpu"].is_null(), "no CPU limit");
                assert_eq!(
                    c["resources"]["requests"]["memory"],
                    format!("{}Gi", 8 * used),
                    "{} node {node}",
                    l.name()
                );
                let per_npu = budget
                    .iter()
                    .find(|b| b.role == plan.role)
                    .map_or(u64::from(l.hardware.hbm_gb_per_npu) * 1_000_000_000, |b| {
                        b.weights.total()
                    });
                let weights_gib = (per_npu * used).div_ceil(1 << 30);
                assert_eq!(
                    c["resources"]["limits"]["memory"],
                    format!("{}Gi", 8 * used + weights_gib + shm),
                    "{} node {node}",
                    l.name()
                );
                assert_eq!(c["resources"]["requests"]["ephemeral-storage"], "100Gi");
                let dshm = pod["spec"]["volumes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|v| v["name"] == "dshm")
                    .expect("dshm");
                assert_eq!(dshm["emptyDir"]["sizeLimit"], format!("{shm}Gi"));
                // The drain fits the grace period: preStop, vLLM's drain, the
                // launcher's grace past it, then time to release the NPUs.
                assert_eq!(
                    env_of(c, k8s::ENV_DRAIN_SECONDS),
                    Some(settings.drain_seconds.to_string())
                );
                let grace = pod["spec"]["terminationGracePeriodSeconds"]
                    .as_i64()
                    .unwrap();
                assert!(
                    grace
                        >= k8s::PRESTOP_SECONDS
                            + i64::from(settings.drain_seconds)
                            + k8s::LAUNCHER_GRACE_SECONDS
                            + 30,
                    "{}: grace {grace}",
                    l.name()
                );
                // Hardware device nodes the device plugin does not give.
                for dev in k8s::extra_device_nodes(l) {
                    assert!(
                        c["volumeMounts"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .any(|m| m["mountPath"] == dev),
                        "{}: {dev} not mounted",
                        l.name()
                    );
                }
                assert_eq!(
                    c["env"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|v| v["name"] == k8s::ENV_LOG_STDOUT && v["value"] == "1")
                        .count(),
                    1
                );
                let hosts = env_of(c, k8s::ENV_NODE_HOSTS).expect("node hosts");
                assert_eq!(hosts.split(',').count(), l.node_count());
                assert_eq!(env_of(c, k8s::ENV_FIRST_NODE), Some(e.nodes[0].to_string()));
                assert_eq!(
                    env_of(c, k8s::ENV_ENGINE_NODES),
                    Some(e.nodes.len().to_string())
                );
                // run.sh's local IP is the pod IP, from the downward API.
                let local_ip = c["env"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|v| v["name"] == "PD_LOCAL_IP")
                    .unwrap_or_else(|| panic!("{}: no PD_LOCAL_IP env", l.name()));
                assert_eq!(
                    local_ip["valueFrom"],
                    serde_json::json!({"fieldRef": {"fieldPath": "status.podIP"}}),
                    "{}",
                    l.name()
                );
                assert!(local_ip.get("value").is_none(), "{local_ip}");
                let mounts = c["volumeMounts"].as_array().unwrap();
                for path in [
                    "/dev/shm",
                    k8s::DRIVER_TOOLS,
                    k8s::LOGS_DIR,
                    l.model_path.as_str(),
                ] {
                    assert!(
                        mounts.iter().any(|m| m["mountPath"] == path),
                        "{}: no {path}",
                        l.name()
                    );
                }
            }
            // Each node's probes poll exactly its ranks' API ports; the
            // startup probe allows what run.sh itself waits for them.
            for (i, &node) in e.nodes.iter().enumerate() {
                let pod = if i == 0 && !t["leaderTemplate"].is_null() {
                    &t["leaderTemplate"]
                } else {
                    &t["workerTemplate"]
                };
                let c = &pod["spec"]["containers"][0];
                let ports: Vec<String> = l.placement.nodes[node]
                    .ranks
                    .iter()
                    .filter_map(|r| r.api_port)
                    .map(|p| p.to_string())
                    .collect();
                for probe in ["startupProbe", "livenessProbe", "readinessProbe"] {
                    let command: Vec<String> = c[probe]["exec"]["command"]
                        .as_array()
                        .map(|a| a.iter().map(|w| w.as_str().unwrap().to_owned()).collect())
                        .unwrap_or_default();
                    if ports.is_empty() {
                        assert!(
                            command.is_empty(),
                            "{} node {node}: a {probe} without API ports",
                            l.name()
                        );
                        continue;
                    }
                    let mut want = vec![
                        "bash".to_owned(),
                        format!("{}/{}", k8s::SCRIPTS_DIR, k8s::HEALTH_SCRIPT),
                    ];
                    want.extend(ports.iter().cloned());
                    assert_eq!(command, want, "{} node {node} {probe}", l.name());
                }
                if !ports.is_empty() {
                    let wait: i64 = env_of(c, k8s::ENV_WAIT_SECONDS)
                        .expect("PD_WAIT_SECONDS")
                        .parse()
                        .unwrap();
                    let s = &c["startupProbe"];
                    let window = s["periodSeconds"].as_i64().unwrap()
                        * s["failureThreshold"].as_i64().unwrap();
                    assert!(
                        window >= wait,
                        "{}: startup window {window} < {wait}",
                        l.name()
                    );
                    assert!(c["lifecycle"]["preStop"]["exec"]["command"].is_array());
                }
            }
            // Its disruption budget selects exactly its pods and lets none go.
            let pdb = objects
                .iter()
                .find(|o| {
                    o["kind"] == "PodDisruptionBudget" && o["metadata"]["name"] == set.name.as_str()
                })
                .unwrap_or_else(|| panic!("{}: no budget for {}", l.name(), set.name));
            assert_eq!(pdb["spec"]["maxUnavailable"], 0);
            let pod_labels = &t["workerTemplate"]["metadata"]["labels"];
            let selector = pdb["spec"]["selector"]["matchLabels"].as_object().unwrap();
            for (k, v) in selector {
                assert_eq!(&pod_labels[k], v, "{}: budget selects {k}={v}", l.name());
            }
            assert_eq!(selector[k8s::ENGINE_LABEL], e.index.to_string());
        }
        // The scripts ConfigMap carries every script of the layout, unchanged.
        let cm = objects.iter().find(|o| o["kind"] == "ConfigMap").unwrap();
        for a in artifacts
            .iter()
            .filter(|a| a.executable && a.path.parent() == Some(Path::new(l.name())))
        {
            let file = a.path.file_name().unwrap().to_str().unwrap();
            assert_eq!(
                cm["data"][file].as_str(),
                Some(a.contents.as_str()),
                "{}: {file}",
                l.name()
            );
        }
        if let Some(proxy) = &l.proxy {
            let d = objects.iter().find(|o| o["kind"] == "Deployment").unwrap();
            let c = &d["spec"]["template"]["spec"]["containers"][0];
            let hosts = env_of(c, "PD_NODE_IPS").expect("proxy hosts");
            assert_eq!(hosts, names.node_hosts.join(","));
            let svc = objects.iter().find(|o| o["kind"] == "Service").unwrap();
            assert_eq!(svc["spec"]["ports"][0]["port"], proxy.port);
        }
    }
}

#[test]
fn settings_reach_the_manifests_and_bad_settings_are_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("catalog");
    let all = layouts();
    let settings = K8sSettings {
        namespace: "serving".into(),
        npu_resource: Some("huawei.com/Ascend910".into()),
        weights: "hostpath:/data/weights".parse().expect("hostpath parses"),
        image_registry: Some("registry.example.com:5000/ascend".into()),
        logs: "pvc:rank-logs".parse().expect("logs claim parses"),
        resources: k8s::ResourceOverrides {
            cpu: Some("64".into()),
            memory: Some("700Gi".into()),
            ephemeral_storage: Some("200Gi".into()),
            shm: Some("16Gi".into()),
        },
        drain_seconds: 120,
        kueue_queue: Some("npu-queue".into()),
        scheduler: Some("volcano".into()),
        gateway: None,
    };
    let artifacts = render_all(&all, &settings, &root);
    let l = &all[0];
    let objects = kustomize(&root.join(l.name()).join(k8s::DIR));
    let set = objects
        .iter()
        .find(|o| o["kind"] == "LeaderWorkerSet")
        .unwrap();
    let pod = &set["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"];
    let c = &pod["containers"][0];
    assert_eq!(set["metadata"]["namespace"], "serving");
    let image = c["image"].as_str().unwrap();
    let (_, name) = l.image_ref.rsplit_once('/').unwrap();
    assert_eq!(image, format!("registry.example.com:5000/ascend/{name}"));
    assert!(c["resources"]["limits"]["huawei.com/Ascend910"].is_string());
    let weights = pod["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "weights")
        .unwrap();
    assert_eq!(weights["hostPath"]["path"], "/data/weights");
    let volume = |name: &str| {
        pod["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == name)
            .unwrap_or_else(|| panic!("no volume {name}"))
            .clone()
    };
    assert_eq!(
        volume("logs")["persistentVolumeClaim"]["claimName"],
        "rank-logs"
    );
    assert_eq!(volume("dshm")["emptyDir"]["sizeLimit"], "16Gi");
    assert_eq!(c["resources"]["requests"]["cpu"], "64");
    assert_eq!(c["resources"]["requests"]["memory"], "700Gi");
    assert_eq!(c["resources"]["limits"]["memory"], "700Gi");
    assert_eq!(c["resources"]["limits"]["ephemeral-storage"], "200Gi");
    assert_eq!(env_of(c, k8s::ENV_DRAIN_SECONDS).as_deref(), Some("120"));
    assert_eq!(
        pod["terminationGracePeriodSeconds"],
        k8s::termination_grace_seconds(120)
    );
    assert_eq!(pod["schedulerName"], "volcano");
    assert_eq!(
        set["metadata"]["labels"][k8s::KUEUE_QUEUE_LABEL],
        "npu-queue"
    );
    // setup/ follows: the namespace, no weights claim (a host path), the logs claim.
    let setup = kustomize(&root.join(l.name()).join(k8s::DIR).join("setup"));
    let kinds: Vec<(&str, &str)> = setup
        .iter()
        .map(|o| {
            (
                o["kind"].as_str().unwrap(),
                o["metadata"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("Namespace", "serving"),
            ("PersistentVolumeClaim", "rank-logs")
        ],
        "{setup:?}"
    );
    assert_eq!(
        setup[0]["metadata"]["labels"]["pod-security.kubernetes.io/enforce"],
        "privileged"
    );
    assert_eq!(setup[1]["spec"]["accessModes"][0], "ReadWriteMany");
    // Still valid against the schemas with every setting changed.
    let o = validate(KUBERNETES_VERSIONS[0], &manifests(&artifacts, &root));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    for (bad, why) in [
        ("pvc:Not_A_Name", "DNS-1123 subdomain"),
        ("hostpath:relative/dir", "absolute path"),
        (
            "nfs:server:/x",
            "expected `pvc:NAME` or `hostpath:/ABSOLUTE/PATH`",
        ),
    ] {
        let e = bad.parse::<WeightsVolume>().expect_err(bad);
        assert!(e.contains(why), "{bad}: {e}");
    }
    for (s, why) in [
        (
            K8sSettings {
                namespace: "Prod".into(),
                ..K8sSettings::default()
            },
            "found namespace `Prod`",
        ),
        (
            K8sSettings {
                npu_resource: Some("ascend".into()),
                ..K8sSettings::default()
            },
            "found NPU resource `ascend`",
        ),
        (
            K8sSettings {
                image_registry: Some("registry.example.com/".into()),
                ..K8sSettings::default()
            },
            "without a trailing `/`",
        ),
        (
            K8sSettings {
                resources: k8s::ResourceOverrides {
                    memory: Some("lots".into()),
                    ..k8s::ResourceOverrides::default()
                },
                ..K8sSettings::default()
            },
            "found memory `lots`, expected a positive Kubernetes quantity",
        ),
        (
            K8sSettings {
                resources: k8s::ResourceOverrides {
                    cpu: Some("-2".into()),
                    ..k8s::ResourceOverrides::default()
                },
                ..K8sSettings::default()
            },
            "found cpu `-2`",
        ),
        (
            K8sSettings {
                drain_seconds: 7200,
                ..K8sSettings::default()
            },
            "found drain of 7200 s, expected at most 3600",
        ),
        (
            K8sSettings {
                kueue_queue: Some("Queue_1".into()),
                ..K8sSettings::default()
            },
            "found Kueue queue `Queue_1`",
        ),
        (
            K8sSettings {
                logs: k8s::LogsVolume::HostPath("logs".into()),
                ..K8sSettings::default()
            },
            "found logs host path `logs`, expected an absolute path",
        ),
    ] {
        let rendered = render::render_layout(l).expect("render");
        let e = k8s::artifacts(l, &s, &rendered).expect_err(why).to_string();
        assert!(e.contains(why), "{e}");
    }
}

#[test]
fn termination_grace_outlasts_the_launchers_stop() {
    // run.sh starts the launcher without `--grace-seconds` unless a drain is
    // set, so its default is what a stop without one must outlast.
    let py = render::launcher::launch_online_dp_py();
    let want = format!(
        "\"--grace-seconds\", type=float, default={}.0",
        k8s::LAUNCHER_GRACE_SECONDS
    );
    assert!(
        py.contains(&want),
        "the launcher's grace default is not {}s",
        k8s::LAUNCHER_GRACE_SECONDS
    );
    // With a drain, run.sh extends the launcher's grace by it, and the pod's
    // grace period covers preStop, the drain, that grace and the release.
    let l = layouts()
        .into_iter()
        .find(pd_dsl::Layout::is_pd)
        .expect("a PD layout");
    let files = render::render_layout(&l).expect("render");
    let run = files
        .iter()
        .find(|a| a.path == Path::new(l.name()).join("run.sh"))
        .expect("run.sh");
    let extend = format!(
        "--grace-seconds \"$((DRAIN_SECONDS + {}))\"",
        k8s::LAUNCHER_GRACE_SECONDS
    );
    assert!(run.contents.contains(&extend), "run.sh lacks `{extend}`");
    for drain in [0, 30, 600] {
        assert_eq!(
            k8s::termination_grace_seconds(drain),
            k8s::PRESTOP_SECONDS
                + i64::from(drain)
                + k8s::LAUNCHER_GRACE_SECONDS
                + k8s::RELEASE_SECONDS
        );
    }
}

#[test]
fn object_names_fit_kubernetes_limits_for_every_layout() {
    for l in layouts() {
        let names = k8s::names(&l).expect("names");
        assert!(names.base.len() <= k8s::MAX_BASE_NAME, "{}", names.base);
        for set in &names.sets {
            // `<set>-0-<worker>` pod names and `<set>-0` StatefulSets.
            assert!(set.name.len() <= k8s::MAX_SET_NAME, "{}", set.name);
        }
        for h in &names.node_hosts {
            assert!(
                h.split('.')
                    .all(|label| !label.is_empty() && label.len() <= 63),
                "{h}"
            );
        }
    }
    // Short enough, the name is the layout's, whole.
    assert_eq!(
        k8s::base_name("deepseek-v3.1-w8a8c8-mxfp8/950dt-2p1d"),
        "deepseek-v3-1-w8a8c8-mxfp8-950dt-2p1d"
    );
    // Longer, the model's words shorten first and the topology stays
    // readable; a hash of the full name keeps two apart.
    let a = k8s::base_name("deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d-16k-low-latency");
    let b = k8s::base_name("deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d-16k-throughput");
    assert_ne!(a, b);
    for (n, variant) in [
        (&a, "a3-2p1d-16k-low-latency"),
        (&b, "a3-2p1d-16k-throughput"),
    ] {
        assert!(n.len() <= k8s::MAX_BASE_NAME, "{n}");
        assert!(n.contains(variant), "`{n}` lost the topology `{variant}`");
    }
    // Even a variant too long for the limit keeps its first words.
    let c = k8s::base_name("m/a3-1p1d-memcache-pool-layerwise-upstream-variant-number-one");
    assert!(
        c.len() <= k8s::MAX_BASE_NAME && c.starts_with("a3-1p1d"),
        "{c}"
    );
}

fn cli(args: &[&str]) -> (u8, String) {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let mut argv = vec!["catalog"];
    argv.extend_from_slice(args);
    let code = layouts::cli::run(argv, Ok(layouts()), None, &mut out, &mut err);
    (code, String::from_utf8(err).expect("utf8"))
}

#[test]
fn catalog_flags_set_the_manifests_and_refuse_bad_values() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("c");
    let out_s = out.to_str().unwrap();
    let name = layouts::catalog().unwrap()[0].name().to_owned();
    let (code, err) = cli(&[
        "render",
        &name,
        "--out",
        out_s,
        "--k8s-namespace",
        "serving",
        "--k8s-weights",
        "pvc:weights-ds",
        "--k8s-npu-resource",
        "huawei.com/Ascend910",
        "--k8s-image-registry",
        "registry.example.com/ascend",
    ]);
    assert_eq!(code, 0, "{err}");
    let dir = out.join(&name).join(k8s::DIR);
    let all = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    for want in [
        "namespace: serving",
        "claimName: weights-ds",
        "huawei.com/Ascend910:",
        "image: registry.example.com/ascend/vllm-ascend:",
    ] {
        assert!(all.contains(want), "no `{want}` in {}", dir.display());
    }
    // The whole-catalog build takes the same flags; --check compares with them.
    let whole = tmp.path().join("whole");
    let whole = whole.to_str().unwrap();
    let (code, err) = cli(&["--out", whole, "--k8s-namespace", "serving"]);
    assert_eq!(code, 0, "{err}");
    let (code, err) = cli(&["--out", whole, "--check", "--k8s-namespace", "serving"]);
    assert_eq!(code, 0, "{err}");
    let (code, _) = cli(&["--out", whole, "--check"]);
    assert_eq!(
        code, 1,
        "the default namespace differs from the written one"
    );

    for (args, why) in [
        (
            vec!["--k8s-weights", "nfs:/x"],
            "expected `pvc:NAME` or `hostpath:/ABSOLUTE/PATH`",
        ),
        (
            vec!["--k8s-namespace", "Serving"],
            "found namespace `Serving`",
        ),
        (
            vec!["--k8s-npu-resource", "npu"],
            "found NPU resource `npu`",
        ),
    ] {
        let mut argv = vec!["render", name.as_str(), "--out", out_s];
        argv.extend(args);
        let (code, err) = cli(&argv);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(why), "{err}");
    }
}

#[test]
fn kustomize_fails_when_a_listed_manifest_is_missing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("catalog");
    let all = layouts();
    render_all(&all, &K8sSettings::default(), &root);
    let dir = root.join(all[0].name()).join(k8s::DIR);
    std::fs::remove_file(dir.join("scripts.yaml")).expect("remove");
    let o = Command::new(tool(
        "kubectl",
        "install kubectl (Debian package `kubernetes-client`)",
    ))
    .arg("kustomize")
    .arg(&dir)
    .output()
    .expect("kubectl runs");
    assert!(
        !o.status.success(),
        "kustomize built a directory missing a listed file"
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("scripts.yaml"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// What `k8s/README.md` tells an operator to run names the objects its
/// `k8s/` really holds, in the namespace the flags chose: every
/// LeaderWorkerSet, `kubectl -n NS`, and a Service that listens on the port
/// forwarded; the layout README points to it.
#[test]
fn each_k8s_readme_names_the_objects_its_manifests_hold() {
    for settings in [
        K8sSettings::default(),
        K8sSettings {
            namespace: "serving".into(),
            ..K8sSettings::default()
        },
    ] {
        for l in layouts() {
            let rendered = render::render_layout(&l).expect("render");
            let files = k8s::with_settings(rendered, &[&l], &settings).expect("settings");
            let file = |name: &str| -> &str {
                let path = Path::new(l.name()).join(name);
                &files
                    .iter()
                    .find(|a| a.path == path)
                    .unwrap_or_else(|| panic!("{}: no {name}", l.name()))
                    .contents
            };
            assert!(
                file("README.md").contains("`k8s/README.md` is the guide"),
                "{}: the layout README does not point to k8s/README.md",
                l.name()
            );
            let section = file("k8s/README.md");
            let objects: Vec<Value> = files
                .iter()
                .filter(|a| a.path.starts_with(Path::new(l.name()).join(k8s::DIR)))
                .filter(|a| a.path.extension().is_some_and(|e| e == "yaml"))
                .filter(|a| !a.path.ends_with("kustomization.yaml"))
                .flat_map(|a| docs(&a.contents))
                .collect();
            let named = |kind: &str| -> Vec<&Value> {
                objects.iter().filter(|o| o["kind"] == kind).collect()
            };
            for set in named("LeaderWorkerSet") {
                let name = set["metadata"]["name"].as_str().expect("name");
                assert!(
                    section.contains(&format!("`{name}`")),
                    "{}: set {name} not named:\n{section}",
                    l.name()
                );
            }
            let kustomization: Value =
                serde_saphyr::from_str(file("k8s/kustomization.yaml")).expect("kustomization");
            let ns = kustomization["namespace"].as_str().expect("namespace");
            assert_eq!(ns, settings.namespace);
            assert!(
                section.contains(&format!("kubectl -n {ns} get lws,pods")),
                "{}:\n{section}",
                l.name()
            );
            let namespace = named("Namespace");
            assert_eq!(namespace.len(), 1, "{}", l.name());
            assert_eq!(namespace[0]["metadata"]["name"], ns);
            let forward = section
                .lines()
                .find_map(|line| line.split_once("port-forward svc/"))
                .map(|(_, rest)| rest)
                .unwrap_or_else(|| panic!("{}: no port-forward:\n{section}", l.name()));
            let mut words = forward.split_whitespace();
            let (svc, ports) = (words.next().expect("service"), words.next().expect("ports"));
            let port: i64 = ports
                .split(':')
                .next()
                .and_then(|p| p.parse().ok())
                .expect("port");
            let service = named("Service")
                .into_iter()
                .find(|s| s["metadata"]["name"] == svc)
                .unwrap_or_else(|| {
                    panic!(
                        "{}: README forwards svc/{svc}, which no manifest defines",
                        l.name()
                    )
                });
            let listens = service["spec"]["ports"]
                .as_array()
                .is_some_and(|ps| ps.iter().any(|p| p["port"] == port));
            assert!(
                listens,
                "{}: svc/{svc} does not listen on {port}: {service}",
                l.name()
            );
        }
    }
}

/// `--k8s-gateway`: `inference/` holds an InferencePool over the pods
/// clients reach (the proxy's, or the mixed engines' API servers) on their
/// ports and an HTTPRoute from the Gateway to it; both validate against the
/// extension's and Gateway API's CRD schemas, and the pool selects exactly
/// the pods that serve.
#[test]
fn the_gateway_objects_select_the_serving_pods_and_validate() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("catalog");
    let all = layouts();
    let settings = K8sSettings {
        gateway: Some("infra/inference-gateway".into()),
        ..K8sSettings::default()
    };
    let artifacts = render_all(&all, &settings, &root);
    let mut files = Vec::new();
    for l in &all {
        let dir = root.join(l.name()).join(k8s::DIR);
        let objects = kustomize(&dir.join("inference"));
        let engines = kustomize(&dir);
        let pool = objects
            .iter()
            .find(|o| o["kind"] == "InferencePool")
            .expect("pool");
        let route = objects
            .iter()
            .find(|o| o["kind"] == "HTTPRoute")
            .expect("route");
        assert_eq!(route["spec"]["parentRefs"][0]["name"], "inference-gateway");
        assert_eq!(route["spec"]["parentRefs"][0]["namespace"], "infra");
        assert_eq!(
            route["spec"]["rules"][0]["backendRefs"][0]["name"],
            pool["metadata"]["name"]
        );
        let selector = pool["spec"]["selector"]["matchLabels"].as_object().unwrap();
        let ports: Vec<i64> = pool["spec"]["targetPorts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["number"].as_i64().unwrap())
            .collect();
        // The pod templates the selector matches.
        let mut templates: Vec<&Value> = Vec::new();
        for o in &engines {
            match o["kind"].as_str() {
                Some("Deployment") => templates.push(&o["spec"]["template"]),
                Some("LeaderWorkerSet") => {
                    let t = &o["spec"]["leaderWorkerTemplate"];
                    let leader = if t["leaderTemplate"].is_null() {
                        &t["workerTemplate"]
                    } else {
                        &t["leaderTemplate"]
                    };
                    templates.push(leader);
                }
                _ => {}
            }
        }
        let matched: Vec<&&Value> = templates
            .iter()
            .filter(|t| {
                selector.iter().all(|(k, v)| {
                    // LWS labels its leaders `worker-index: 0` itself.
                    (k == "leaderworkerset.sigs.k8s.io/worker-index" && v == "0")
                        || &t["metadata"]["labels"][k] == v
                })
            })
            .collect();
        if let Some(proxy) = &l.proxy {
            assert_eq!(ports, [i64::from(proxy.port)], "{}", l.name());
            assert_eq!(matched.len(), 1, "{}: the proxy's pods only", l.name());
            assert!(matched[0]["spec"]["containers"][0]["name"] == "proxy");
        } else {
            assert_eq!(matched.len(), l.placement.engines.len(), "{}", l.name());
            let mut want: Vec<i64> = l
                .placement
                .engines
                .iter()
                .flat_map(|e| l.placement.nodes[e.nodes[0]].ranks.iter())
                .filter_map(|r| r.api_port)
                .map(i64::from)
                .collect();
            want.sort_unstable();
            want.dedup();
            assert_eq!(ports, want, "{}", l.name());
        }
        files.extend(
            ["inference-pool.yaml", "http-route.yaml"].map(|f| dir.join("inference").join(f)),
        );
    }
    assert_eq!(
        artifacts
            .iter()
            .filter(|a| a.path.to_string_lossy().contains("/k8s/inference/"))
            .count(),
        3 * all.len()
    );
    let o = validate(KUBERNETES_VERSIONS[1], &files);
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("InferencePool"));

    // A pool over more than 8 ports is refused, saying what to do instead.
    let mut wide = all
        .iter()
        .find(|l| !l.is_pd())
        .expect("a mixed layout")
        .clone();
    let leader = wide.placement.engines[0].nodes[0];
    let ranks = &mut wide.placement.nodes[leader].ranks;
    let template = ranks[0].clone();
    ranks.clear();
    for i in 0..9u32 {
        let mut r = template.clone();
        r.api_port = Some(9000 + i);
        ranks.push(r);
    }
    let names = k8s::names(&wide).expect("names");
    let e = k8s::gateway::target_ports(&wide, &names).expect_err("nine ports");
    assert!(
        e.contains("would list 9 target ports") && e.contains("expected at most 8"),
        "{e}"
    );
    // And the flag refuses a malformed Gateway.
    let bad = K8sSettings {
        gateway: Some("a/b/c".into()),
        ..K8sSettings::default()
    };
    let rendered = render::render_layout(&all[0]).expect("render");
    let e = k8s::artifacts(&all[0], &bad, &rendered)
        .expect_err("a/b/c")
        .to_string();
    assert!(e.contains("found gateway `a/b/c`"), "{e}");
}

/// `health.sh`, which every probe runs: 0 when each given port answers
/// `/health` with a 2xx, 1 when one does not (nothing listening, or an
/// error status), 2 for an argument that is no port.
#[test]
fn the_probes_script_tells_up_from_down() {
    use std::io::{Read, Write};
    let l = &layouts()[0];
    let tmp = tempfile::tempdir().expect("tempdir");
    let files = render::render_layout(l).expect("render");
    render::write_catalog(tmp.path(), &files).expect("write");
    let script = tmp.path().join(l.name()).join(k8s::HEALTH_SCRIPT);
    // A server answering /health with the given status, for a few requests.
    let serve = |status: &'static str| {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for stream in listener.incoming().take(4) {
                let mut s = stream.expect("accept");
                let mut buf = [0u8; 1024];
                let _ = s.read(&mut buf);
                let _ = write!(
                    s,
                    "HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
            }
        });
        port
    };
    let up = serve("200 OK");
    let sick = serve("503 Service Unavailable");
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .unwrap()
        .port(); // dropped: nothing listens there now
    let run = |args: &[String]| -> i32 {
        Command::new("bash")
            .arg(&script)
            .args(args)
            .output()
            .expect("bash runs")
            .status
            .code()
            .unwrap_or(-1)
    };
    assert_eq!(run(&[up.to_string()]), 0, "a port answering 200");
    assert_eq!(
        run(&[up.to_string(), sick.to_string()]),
        1,
        "one port answering 503"
    );
    assert_eq!(run(&[closed.to_string()]), 1, "nothing listening");
    assert_eq!(run(&["http".into()]), 2, "not a port");
    assert_eq!(run(&[]), 2, "no port");
}
