//! What `kubectl kustomize` builds: one set per engine with what the layout
//! derives, the termination grace, and object names within Kubernetes'
//! limits.

use crate::{env_of, k8s_dirs, kustomize, layouts, render_all};
use pd_dsl::render;
use pd_dsl::render::k8s::{self, K8sSettings};
use std::path::Path;

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
