//! `k8s/README.md` against the objects it names.

use crate::{docs, layouts};
use pd_dsl::render;
use pd_dsl::render::k8s::{self, K8sSettings};
use serde_json::Value;
use std::path::Path;

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
