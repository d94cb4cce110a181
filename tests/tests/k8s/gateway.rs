//! `--k8s-gateway`: the InferencePool and HTTPRoute in `inference/`.

use crate::{KUBERNETES_VERSIONS, kustomize, layouts, render_all, validate};
use pd_dsl::render;
use pd_dsl::render::k8s::{self, K8sSettings};
use serde_json::Value;

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
        endpoint_picker_serves_the_pool(l.name(), &objects, pool, &matched);
        // The README says the picker's namespace is an argument an overlay
        // moving the objects must patch, naming the one the picker got.
        let readme = std::fs::read_to_string(dir.join("README.md")).expect("k8s README");
        let named = format!(
            "`--pool-namespace {}`",
            pool["metadata"]["namespace"]
                .as_str()
                .expect("pool namespace")
        );
        assert!(
            readme.contains(&named) && readme.contains("must patch that argument"),
            "{}: the README does not say {named} must follow an overlay's namespace",
            l.name()
        );
        files.extend(
            [
                "inference-pool.yaml",
                "http-route.yaml",
                "epp-service-account.yaml",
                "epp-role.yaml",
                "epp-role-binding.yaml",
                "epp-deployment.yaml",
                "epp-service.yaml",
            ]
            .map(|f| dir.join("inference").join(f)),
        );
    }
    assert_eq!(
        artifacts
            .iter()
            .filter(|a| a.path.to_string_lossy().contains("/k8s/inference/"))
            .count(),
        8 * all.len()
    );
    let o = validate(KUBERNETES_VERSIONS[1], &files);
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("InferencePool"));
    // Every object of every file, the picker's included, was validated.
    let valid = format!("{} object(s) valid", 7 * all.len());
    assert!(
        String::from_utf8_lossy(&o.stdout).starts_with(&valid),
        "expected `{valid}`: {}",
        String::from_utf8_lossy(&o.stdout)
    );

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

/// The endpoint picker `inference/` deploys is the one the pool names: the
/// Service of the pool's `endpointPickerRef` on its port, selecting the
/// picker's pods, whose arguments name this pool in the kustomization's
/// namespace on the same gRPC port; its ServiceAccount is bound to a Role
/// that reads pods and pools; and its grace period is the longest of the
/// pool's pods.
fn endpoint_picker_serves_the_pool(
    layout: &str,
    objects: &[Value],
    pool: &Value,
    members: &[&&Value],
) {
    let of = |kind: &str| -> &Value {
        objects
            .iter()
            .find(|o| o["kind"] == kind)
            .unwrap_or_else(|| panic!("{layout}: no {kind} in inference/"))
    };
    let reference = &pool["spec"]["endpointPickerRef"];
    let service = of("Service");
    assert_eq!(service["metadata"]["name"], reference["name"], "{layout}");
    assert_eq!(
        service["spec"]["ports"][0]["port"], reference["port"]["number"],
        "{layout}"
    );
    assert_eq!(
        service["spec"]["ports"][0]["appProtocol"], "http2",
        "{layout}"
    );
    let deployment = of("Deployment");
    let template = &deployment["spec"]["template"];
    for (k, v) in service["spec"]["selector"].as_object().unwrap() {
        assert_eq!(
            &template["metadata"]["labels"][k], v,
            "{layout}: selector {k}"
        );
    }
    let args: Vec<&str> = template["spec"]["containers"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let arg = |flag: &str| {
        args.iter()
            .position(|a| *a == flag)
            .and_then(|i| args.get(i + 1))
            .copied()
            .unwrap_or_else(|| panic!("{layout}: no `{flag}` in {args:?}"))
    };
    assert_eq!(arg("--pool-name"), pool["metadata"]["name"], "{layout}");
    assert_eq!(
        arg("--pool-namespace"),
        pool["metadata"]["namespace"],
        "{layout}"
    );
    assert_eq!(
        arg("--grpc-port"),
        reference["port"]["number"].to_string(),
        "{layout}"
    );
    let account = of("ServiceAccount");
    assert_eq!(
        template["spec"]["serviceAccountName"], account["metadata"]["name"],
        "{layout}"
    );
    let binding = of("RoleBinding");
    let role = of("Role");
    assert_eq!(
        binding["roleRef"]["name"], role["metadata"]["name"],
        "{layout}"
    );
    assert_eq!(
        binding["subjects"][0]["name"], account["metadata"]["name"],
        "{layout}"
    );
    assert_eq!(
        binding["subjects"][0]["namespace"], pool["metadata"]["namespace"],
        "{layout}"
    );
    for (group, resource) in [("", "pods"), (k8s::gateway::POOL_GROUP, "inferencepools")] {
        assert!(
            role["rules"].as_array().unwrap().iter().any(|r| {
                r["apiGroups"][0] == group
                    && r["resources"][0] == resource
                    && ["get", "list", "watch"]
                        .iter()
                        .all(|v| r["verbs"].as_array().unwrap().iter().any(|x| x == v))
            }),
            "{layout}: the Role does not let the picker read {resource}: {role}"
        );
    }
    let longest = members
        .iter()
        .filter_map(|t| t["spec"]["terminationGracePeriodSeconds"].as_i64())
        .max()
        .expect("the pool's pods have a grace period");
    assert_eq!(
        template["spec"]["terminationGracePeriodSeconds"], longest,
        "{layout}: the picker's grace is not the longest of the pool's pods"
    );
}
