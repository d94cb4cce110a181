//! Every manifest against the Kubernetes and LeaderWorkerSet schemas, and
//! the schema check itself.

use crate::{KUBERNETES_VERSIONS, layouts, manifests, render_all, validate};
use pd_dsl::render::k8s::K8sSettings;

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
