//! `--k8s-autoscale keda`: the ScaledObjects in `autoscaling/`, and the
//! layouts it refuses.

use crate::{KUBERNETES_VERSIONS, kustomize, layouts, manifests, render_all, validate};
use pd_dsl::render::k8s::autoscaling::Autoscaler;
use pd_dsl::render::k8s::{self, K8sSettings};
use pd_dsl::render::{self, RenderError};
use pd_dsl::{Layout, Role};
use serde_json::Value;
use std::path::Path;

fn settings() -> K8sSettings {
    K8sSettings {
        namespace: "serving".into(),
        autoscale: Some(Autoscaler::Keda),
        prometheus: "http://prometheus.example:9090".into(),
        autoscale_factor: 3,
        ..K8sSettings::default()
    }
}

/// The layouts the flag accepts, by the placement: mixed, one engine.
fn accepted(all: &[Layout]) -> Vec<Layout> {
    all.iter()
        .filter(|l| !l.is_pd() && l.placement.engines.len() == 1)
        .cloned()
        .collect()
}

/// Whether PromQL's fully anchored `=~` of `pod=~"<set>-[0-9]+(-[0-9]+)?"`
/// matches `pod`: the set's leaders `<set>-<group>` and workers
/// `<set>-<group>-<index>`, nothing else.
fn pod_matches(set: &str, pod: &str) -> bool {
    let Some(rest) = pod.strip_prefix(set).and_then(|r| r.strip_prefix('-')) else {
        return false;
    };
    let parts: Vec<&str> = rest.split('-').collect();
    (1..=2).contains(&parts.len())
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Every accepted layout's `autoscaling/` holds one ScaledObject per engine
/// whose target, bounds, query and threshold are recomputed here from the
/// placement and the serve settings; each validates against KEDA's CRD
/// schema, and the scaled sets leave `replicas` to it and carry no
/// `PD_K8S_*` env (so `run.sh` takes the group from LeaderWorkerSet).
#[test]
fn scaled_objects_target_each_engines_set_with_derived_bounds_and_validate() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("catalog");
    let all = accepted(&layouts());
    assert!(all.len() >= 10, "mixed one-engine layouts: {}", all.len());
    let settings = settings();
    let artifacts = render_all(&all, &settings, &root);
    let mut files = Vec::new();
    for l in &all {
        let dir = root.join(l.name()).join(k8s::DIR);
        let scaled = kustomize(&dir.join("autoscaling"));
        assert_eq!(scaled.len(), l.placement.engines.len(), "{}", l.name());
        let main = kustomize(&dir);
        let base = k8s::base_name(l.name());
        let (_, default_seqs) = pd_dsl::capacity::default_batching(l.hardware);
        for e in &l.placement.engines {
            let set = format!("{base}-{}{}", e.role.as_str(), e.role_index);
            let o = scaled
                .iter()
                .find(|o| o["metadata"]["name"] == set.as_str())
                .unwrap_or_else(|| panic!("{}: no ScaledObject {set}", l.name()));
            assert_eq!(o["metadata"]["namespace"], "serving");
            let spec = &o["spec"];
            let target = &spec["scaleTargetRef"];
            assert_eq!(target["apiVersion"], "leaderworkerset.x-k8s.io/v1");
            assert_eq!(target["kind"], "LeaderWorkerSet");
            assert_eq!(target["name"], set.as_str());
            assert_eq!(spec["minReplicaCount"], 1, "{}", l.name());
            assert_eq!(spec["maxReplicaCount"], 3, "{}", l.name());
            let trigger = &spec["triggers"][0];
            assert_eq!(trigger["type"], "prometheus");
            assert_eq!(trigger["metricType"], "AverageValue");
            let m = &trigger["metadata"];
            assert_eq!(m["serverAddress"], "http://prometheus.example:9090");
            assert_eq!(
                m["query"],
                format!(
                    "sum(vllm:num_requests_waiting{{namespace=\"serving\",pod=~\"{set}-[0-9]+(-[0-9]+)?\"}})"
                )
                .as_str()
            );
            let seqs = l
                .serve
                .get(&Role::Mixed)
                .and_then(|s| s.max_num_seqs)
                .unwrap_or(default_seqs);
            let threshold = seqs * u64::from(e.dp);
            assert_eq!(
                m["threshold"],
                threshold.to_string().as_str(),
                "{}: one group's batch, {seqs} seqs x {} ranks",
                l.name(),
                e.dp
            );
            assert_eq!(m["ignoreNullValues"], "false");
            // The query's pods are exactly the set's groups' pods.
            let size = e.nodes.len();
            for g in 0..3 {
                assert!(pod_matches(&set, &format!("{set}-{g}")));
                for w in 1..size {
                    assert!(pod_matches(&set, &format!("{set}-{g}-{w}")));
                }
            }
            assert!(!pod_matches(&set, &format!("{set}1-0")));
            assert!(!pod_matches(&set, &format!("{set}-0-1-2")));
            assert!(!pod_matches(&set, &format!("{base}-proxy-0")));
            // The set: its count left to KEDA, its pods on LWS_* alone.
            let lws = main
                .iter()
                .find(|o| o["kind"] == "LeaderWorkerSet" && o["metadata"]["name"] == set.as_str())
                .unwrap_or_else(|| panic!("{}: no set {set}", l.name()));
            assert_eq!(lws["spec"]["replicas"], Value::Null, "{}", l.name());
            let t = &lws["spec"]["leaderWorkerTemplate"];
            assert_eq!(t["size"], size, "{}", l.name());
            for template in [&t["leaderTemplate"], &t["workerTemplate"]] {
                for c in template["spec"]["containers"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    for env in c["env"].as_array().into_iter().flatten() {
                        let name = env["name"].as_str().unwrap();
                        assert!(
                            !name.starts_with("PD_K8S_"),
                            "{}: {name} would tie every group to the first",
                            l.name()
                        );
                    }
                }
            }
            // The Service selects every group's leader.
            let api = main
                .iter()
                .find(|o| o["kind"] == "Service")
                .expect("the API Service");
            let selector = api["spec"]["selector"].as_object().unwrap();
            let leader = t
                .get("leaderTemplate")
                .filter(|v| !v.is_null())
                .unwrap_or(&t["workerTemplate"]);
            for (k, v) in selector {
                assert!(
                    (k == "leaderworkerset.sigs.k8s.io/worker-index" && v == "0")
                        || &leader["metadata"]["labels"][k] == v,
                    "{}: the Service's {k}={v} misses a group's leader",
                    l.name()
                );
            }
        }
        let readme = std::fs::read_to_string(dir.join("README.md")).expect("README");
        assert!(readme.contains("## Autoscaling"), "{}", l.name());
        assert!(
            readme.contains("kubectl apply -k autoscaling/"),
            "{}",
            l.name()
        );
        assert!(readme.contains("--k8s-autoscale keda"), "{}", l.name());
        let f = dir.join("autoscaling");
        for a in artifacts.iter().filter(|a| {
            a.path
                .starts_with(Path::new(l.name()).join(k8s::DIR).join("autoscaling"))
                && !a.path.ends_with("kustomization.yaml")
        }) {
            files.push(root.join(&a.path));
            assert!(a.path.starts_with(f.strip_prefix(&root).unwrap()));
        }
    }
    assert_eq!(files.len(), all.len(), "one ScaledObject file per layout");
    let mut everything = manifests(&artifacts, &root);
    everything.sort();
    for version in KUBERNETES_VERSIONS {
        let o = validate(version, &everything);
        assert!(
            o.status.success(),
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("ScaledObject v1alpha1"),
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
    }
}

/// A PD layout is refused, naming the proxy's fixed rank list; and bad
/// autoscaling flags are refused, naming the value.
#[test]
fn prefill_decode_layouts_and_bad_values_are_refused() {
    let all = layouts();
    let pd = all.iter().find(|l| l.is_pd()).expect("a PD layout");
    let rendered = render::render_layout(pd).expect("render");
    let e = k8s::artifacts(pd, &settings(), &rendered).expect_err("a PD layout");
    let RenderError::Layout { layout, message } = &e else {
        panic!("{e}");
    };
    assert_eq!(layout, pd.name());
    let prefill = pd
        .placement
        .engines
        .iter()
        .filter(|e| e.role == Role::Prefill)
        .count();
    let decode = pd.placement.engines.len() - prefill;
    assert!(
        message.starts_with(&format!(
            "found a prefill/decode layout ({prefill} prefill and {decode} decode engines behind one proxy), expected a mixed layout of one engine"
        )),
        "{message}"
    );
    assert!(
        message.contains("fixed list of prefill and decode ranks by pod name"),
        "{message}"
    );
    assert!(message.contains("KV engine id"), "{message}");

    let mixed = accepted(&all).into_iter().next().expect("a mixed layout");
    let rendered = render::render_layout(&mixed).expect("render");
    for (s, want) in [
        (
            K8sSettings {
                autoscale_factor: 1,
                ..settings()
            },
            "found autoscale factor 1, expected 2 to 64",
        ),
        (
            K8sSettings {
                prometheus: "prometheus:9090".into(),
                ..settings()
            },
            "found Prometheus server `prometheus:9090`, expected an `http://` or `https://` URL",
        ),
    ] {
        let e = k8s::artifacts(&mixed, &s, &rendered)
            .expect_err(want)
            .to_string();
        assert!(e.contains(want), "{e}");
    }
    let e = "hpa".parse::<Autoscaler>().expect_err("hpa");
    assert!(e.contains("found autoscaler `hpa`, expected `keda`"), "{e}");
    // Without the flag nothing changes: one replica, PD_K8S_* present.
    let files = k8s::artifacts(&mixed, &K8sSettings::default(), &rendered).expect("default");
    assert!(
        !files
            .iter()
            .any(|a| a.path.to_string_lossy().contains("/autoscaling/"))
    );
    let set = files
        .iter()
        .find(|a| a.contents.contains("kind: LeaderWorkerSet"))
        .expect("a set");
    assert!(set.contents.contains("replicas: 1"));
    assert!(set.contents.contains(k8s::ENV_NODE_HOSTS));
}

fn cli(args: &[&str]) -> (u8, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut argv = vec!["catalog"];
    argv.extend_from_slice(args);
    let code = layouts::cli::run(argv, Ok(layouts()), None, &mut out, &mut err);
    (code, String::from_utf8(err).expect("utf8"))
}

/// The command line: `--k8s-autoscale keda` writes `autoscaling/` for a
/// mixed layout and refuses a PD one; an unknown autoscaler is a usage
/// error; `--k8s-disaggregated-set` refuses, naming why.
#[test]
fn the_flags_write_autoscaling_or_refuse_on_the_command_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("c");
    let out = out.to_str().unwrap();
    let all = layouts();
    let mixed = accepted(&all).into_iter().next().expect("a mixed layout");
    let pd = all.iter().find(|l| l.is_pd()).expect("a PD layout");
    let (code, err) = cli(&[
        "render",
        mixed.name(),
        "--out",
        out,
        "--k8s-autoscale",
        "keda",
        "--k8s-autoscale-factor",
        "5",
    ]);
    assert_eq!(code, 0, "{err}");
    let dir = Path::new(out)
        .join(mixed.name())
        .join(k8s::DIR)
        .join("autoscaling");
    let object = std::fs::read_to_string(dir.join("mixed0.yaml")).expect("mixed0.yaml");
    assert!(object.contains("maxReplicaCount: 5"), "{object}");
    let (code, err) = cli(&["render", pd.name(), "--out", out, "--k8s-autoscale", "keda"]);
    assert_ne!(code, 0);
    assert!(err.contains("found a prefill/decode layout"), "{err}");
    let (code, err) = cli(&[
        "render",
        mixed.name(),
        "--out",
        out,
        "--k8s-autoscale",
        "hpa",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("expected `keda`"), "{err}");
    let (code, err) = cli(&["render", pd.name(), "--out", out, "--k8s-disaggregated-set"]);
    assert_ne!(code, 0);
    assert!(err.contains("revision hash"), "{err}");
}
