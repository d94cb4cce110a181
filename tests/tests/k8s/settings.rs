//! The manifests' settings and the `--k8s-*` flags: they reach the objects,
//! bad values are refused, and a missing manifest fails the build.

use crate::{
    KUBERNETES_VERSIONS, env_of, kustomize, layouts, manifests, render_all, tool, validate,
};
use pd_dsl::render;
use pd_dsl::render::k8s::{self, K8sSettings, WeightsVolume};
use std::process::Command;

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
        ..K8sSettings::default()
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
