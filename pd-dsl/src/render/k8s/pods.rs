//! The pods: engine LeaderWorkerSets, the proxy Deployment, Services.

use super::names::{EngineSet, Names};
use super::settings::{K8sSettings, LogsVolume, WeightsVolume};
use super::sizing::pod_sizing;
use super::{
    DRIVER_TOOLS, ENV_ENGINE_NODES, ENV_FIRST_NODE, ENV_LOCAL_IP, ENV_NODE_HOSTS,
    LAUNCHER_GRACE_SECONDS, POD_IP_FIELD, PRESTOP_SECONDS, SCRIPTS_DIR, STARTUP_MARGIN_SECONDS,
    lws, termination_grace_seconds,
};
use crate::render::RenderError;
use crate::render::model::DEFAULT_WAIT_SECONDS;
use crate::{Layout, Role};
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Affinity, ConfigMapVolumeSource, Container, ContainerPort, EmptyDirVolumeSource, EnvVar,
    EnvVarSource, ExecAction, HostPathVolumeSource, Lifecycle, LifecycleHandler, Namespace,
    ObjectFieldSelector, PersistentVolumeClaim, PersistentVolumeClaimSpec,
    PersistentVolumeClaimVolumeSource, PodAffinity, PodAffinityTerm, PodSpec, PodTemplateSpec,
    Probe, ResourceRequirements, Service, ServicePort, ServiceSpec, TCPSocketAction, Volume,
    VolumeMount, VolumeResourceRequirements,
};
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use lws::{LeaderWorkerSet, LeaderWorkerSetSpec, LeaderWorkerTemplate, RestartPolicy};
use std::collections::BTreeMap;

fn image(layout: &Layout, settings: &K8sSettings) -> String {
    match (&settings.image_registry, layout.image_ref.rsplit_once('/')) {
        (Some(registry), Some((_, name))) => format!("{registry}/{name}"),
        _ => layout.image_ref.clone(),
    }
}

/// The labels a selector matches: stable for the life of the layout (a
/// Deployment's selector cannot change).
pub(super) fn selector_labels(base: &str, component: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), "pd-dsl".to_owned()),
        ("app.kubernetes.io/instance".to_owned(), base.to_owned()),
        (
            "app.kubernetes.io/component".to_owned(),
            component.to_owned(),
        ),
    ])
}

/// Label: the engine a pod or set belongs to.
pub const ENGINE_LABEL: &str = "pd-dsl/engine";
/// Annotation: the layout's full name (object names may shorten it).
pub const LAYOUT_ANNOTATION: &str = "pd-dsl/layout";
/// Annotation: the pd-dsl version that rendered the object.
pub const VERSION_ANNOTATION: &str = "pd-dsl/version";
/// Annotation: the image the layout runs.
pub const IMAGE_ANNOTATION: &str = "pd-dsl/image";
/// Label Kueue admits a workload's queue by.
pub const KUEUE_QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";

/// An object's labels: the selector's, plus who manages it and the image
/// tag it runs (`app.kubernetes.io/version`).
pub(super) fn object_labels(
    layout: &Layout,
    base: &str,
    component: &str,
) -> BTreeMap<String, String> {
    let mut labels = selector_labels(base, component);
    labels.insert(
        "app.kubernetes.io/managed-by".to_owned(),
        "pd-dsl".to_owned(),
    );
    labels.insert("app.kubernetes.io/part-of".to_owned(), base.to_owned());
    if let Some(tag) = image_tag_label(&layout.image_ref) {
        labels.insert("app.kubernetes.io/version".to_owned(), tag);
    }
    labels
}

/// The image's tag when it is a valid label value.
fn image_tag_label(image: &str) -> Option<String> {
    let tag = image.rsplit_once(':')?.1;
    let ok = !tag.is_empty()
        && tag.len() <= 63
        && tag
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        && tag.starts_with(|c: char| c.is_ascii_alphanumeric())
        && tag.ends_with(|c: char| c.is_ascii_alphanumeric());
    ok.then(|| tag.to_owned())
}

/// The annotations every object carries: the full layout name, the pd-dsl
/// version and the image.
pub(super) fn annotations(layout: &Layout) -> BTreeMap<String, String> {
    BTreeMap::from([
        (LAYOUT_ANNOTATION.to_owned(), layout.name().to_owned()),
        (
            VERSION_ANNOTATION.to_owned(),
            env!("CARGO_PKG_VERSION").to_owned(),
        ),
        (IMAGE_ANNOTATION.to_owned(), layout.image_ref.clone()),
    ])
}

pub(super) fn meta(layout: &Layout, name: &str, labels: BTreeMap<String, String>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        labels: Some(labels),
        annotations: Some(annotations(layout)),
        ..ObjectMeta::default()
    }
}

fn env(name: &str, value: impl Into<String>) -> EnvVar {
    EnvVar {
        name: name.to_owned(),
        value: Some(value.into()),
        ..EnvVar::default()
    }
}

/// An env var the kubelet fills from the pod's own fields (downward API).
fn field_env(name: &str, field_path: &str) -> EnvVar {
    EnvVar {
        name: name.to_owned(),
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                field_path: field_path.to_owned(),
                ..ObjectFieldSelector::default()
            }),
            ..EnvVarSource::default()
        }),
        ..EnvVar::default()
    }
}

fn mount(name: &str, path: &str, read_only: bool) -> VolumeMount {
    VolumeMount {
        name: name.to_owned(),
        mount_path: path.to_owned(),
        read_only: read_only.then_some(true),
        ..VolumeMount::default()
    }
}

fn scripts_volume(base: &str) -> (Volume, VolumeMount) {
    (
        Volume {
            name: "scripts".to_owned(),
            config_map: Some(ConfigMapVolumeSource {
                name: format!("{base}-scripts"),
                // The scripts call each other directly (`"$HERE/preflight.sh"`).
                default_mode: Some(0o755),
                ..ConfigMapVolumeSource::default()
            }),
            ..Volume::default()
        },
        mount("scripts", SCRIPTS_DIR, true),
    )
}

fn host_path_volume(name: &str, path: &str) -> Volume {
    Volume {
        name: name.to_owned(),
        host_path: Some(HostPathVolumeSource {
            path: path.to_owned(),
            ..HostPathVolumeSource::default()
        }),
        ..Volume::default()
    }
}

/// The volumes and mounts of an engine pod: scripts, `/dev/shm` in memory,
/// the driver tools and every host path the hardware's docker command mounts
/// (read-only), and the weights at the model path.
/// Where the rank logs are mounted: `run.sh`'s `PD_LOG_DIR` default
/// (`/var/log/pd-dsl/<layout>/node<i>/`) lies under it.
pub const LOGS_DIR: &str = "/var/log/pd-dsl";

/// Device nodes of the hardware that the Ascend device plugin does not hand
/// out with an NPU (it mounts `/dev/davinciN`, `davinci_manager`,
/// `devmm_svm` and `hisi_hdc`): on 950DT `/dev/ummu` and `/dev/uburma`,
/// which `docker.sh` passes with `--device`.
pub fn extra_device_nodes(layout: &Layout) -> Vec<&'static str> {
    let plugin = crate::tables::ATLAS_800_DEVICES;
    layout
        .hardware
        .extra_devices
        .iter()
        .copied()
        .filter(|d| !plugin.contains(d))
        .collect()
}

fn engine_volumes(
    layout: &Layout,
    base: &str,
    settings: &K8sSettings,
    shm: &str,
) -> (Vec<Volume>, Vec<VolumeMount>) {
    let (scripts, scripts_mount) = scripts_volume(base);
    let logs = match &settings.logs {
        LogsVolume::HostPath(p) => Volume {
            name: "logs".to_owned(),
            host_path: Some(HostPathVolumeSource {
                path: p.clone(),
                type_: Some("DirectoryOrCreate".to_owned()),
            }),
            ..Volume::default()
        },
        LogsVolume::Pvc(claim) => Volume {
            name: "logs".to_owned(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: claim.clone(),
                read_only: None,
            }),
            ..Volume::default()
        },
        LogsVolume::Pod => Volume {
            name: "logs".to_owned(),
            empty_dir: Some(EmptyDirVolumeSource::default()),
            ..Volume::default()
        },
    };
    let mut volumes = vec![
        scripts,
        Volume {
            name: "dshm".to_owned(),
            // Memory-backed, as large as the upstream docker command's
            // --shm-size; its pages count against the memory limit, which
            // leaves room for it (sizing.rs).
            empty_dir: Some(EmptyDirVolumeSource {
                medium: Some("Memory".to_owned()),
                size_limit: Some(Quantity(shm.to_owned())),
            }),
            ..Volume::default()
        },
        host_path_volume("driver-tools", DRIVER_TOOLS),
        logs,
    ];
    let mut mounts = vec![
        scripts_mount,
        mount("dshm", "/dev/shm", false),
        mount("driver-tools", DRIVER_TOOLS, true),
        mount("logs", LOGS_DIR, false),
    ];
    // The hardware's other device nodes, as character devices: the kubelet
    // refuses to start a pod whose node lacks one (a clear event, not a
    // failure minutes into the load).
    for (i, dev) in extra_device_nodes(layout).into_iter().enumerate() {
        let name = format!("dev-{i}");
        volumes.push(Volume {
            name: name.clone(),
            host_path: Some(HostPathVolumeSource {
                path: dev.to_owned(),
                type_: Some("CharDevice".to_owned()),
            }),
            ..Volume::default()
        });
        mounts.push(mount(&name, dev, false));
    }
    let mut i = 0;
    let mut seen: Vec<&str> = Vec::new();
    // The host paths preflight requires are mounted too, so its `host_paths`
    // check sees what the node has.
    for path in layout
        .hardware
        .mounts
        .iter()
        .chain(layout.hardware.required_host_paths)
    {
        let path = path.trim_end_matches('/');
        if seen.contains(&path) {
            continue;
        }
        seen.push(path);
        // Covered by the driver tools mount; `/root/.cache` is where docker.sh
        // keeps weights, which here come from the weights volume.
        if path.starts_with(DRIVER_TOOLS) || path == "/root/.cache" {
            continue;
        }
        let name = format!("host-{i}");
        i += 1;
        volumes.push(host_path_volume(&name, path));
        mounts.push(mount(&name, path, true));
    }
    volumes.push(Volume {
        name: "weights".to_owned(),
        persistent_volume_claim: match &settings.weights {
            WeightsVolume::Pvc(claim) => Some(PersistentVolumeClaimVolumeSource {
                claim_name: claim.clone(),
                read_only: Some(true),
            }),
            WeightsVolume::HostPath(_) => None,
        },
        host_path: match &settings.weights {
            WeightsVolume::HostPath(p) => Some(HostPathVolumeSource {
                path: p.clone(),
                type_: Some("Directory".to_owned()),
            }),
            WeightsVolume::Pvc(_) => None,
        },
        ..Volume::default()
    });
    mounts.push(mount("weights", &layout.model_path, true));
    (volumes, mounts)
}

/// The pod's three probes on every given API port's `/health` (the ranks
/// listen on all addresses: `--host 0.0.0.0`), through the scripts'
/// `http_request` (curl when the image has it, else python3):
/// - startup: until it passes, the others wait; it allows `run.sh`'s own
///   wait for the ranks (`PD_WAIT_SECONDS`, set in the pod) plus
///   [`STARTUP_MARGIN_SECONDS`], so a model load is never cut short;
/// - liveness: 4 failures 30 s apart (a hung or dead engine answers 503 or
///   nothing) restart the container, which recreates the group;
/// - readiness: 3 failures 10 s apart take the pod out of its Services.
#[derive(Clone, Debug, PartialEq)]
pub struct Probes {
    /// `startupProbe`.
    pub startup: Probe,
    /// `livenessProbe`.
    pub liveness: Probe,
    /// `readinessProbe`.
    pub readiness: Probe,
}

/// Period of the liveness probe, seconds.
pub const LIVENESS_PERIOD_SECONDS: i32 = 30;
/// Failures in a row that restart the container.
pub const LIVENESS_FAILURES: i32 = 4;
/// Period of the readiness probe, seconds.
pub const READINESS_PERIOD_SECONDS: i32 = 10;
/// Failures in a row that take the pod out of its Services.
pub const READINESS_FAILURES: i32 = 3;
/// Period of the startup probe, seconds.
pub const STARTUP_PERIOD_SECONDS: i32 = 10;

/// The script the probes run, from the scripts ConfigMap.
pub const HEALTH_SCRIPT: &str = "health.sh";

fn health_probes(ports: &[u32]) -> Option<Probes> {
    if ports.is_empty() {
        return None;
    }
    let mut command = vec!["bash".to_owned(), format!("{SCRIPTS_DIR}/{HEALTH_SCRIPT}")];
    command.extend(ports.iter().map(u32::to_string));
    let timeout = i32::try_from(2 * ports.len() + 5).unwrap_or(i32::MAX);
    let probe = |period: i32, failures: i32| Probe {
        exec: Some(ExecAction {
            command: Some(command.clone()),
        }),
        period_seconds: Some(period),
        timeout_seconds: Some(timeout),
        failure_threshold: Some(failures),
        ..Probe::default()
    };
    let window = u64::from(DEFAULT_WAIT_SECONDS) + STARTUP_MARGIN_SECONDS.unsigned_abs();
    let startup_period = STARTUP_PERIOD_SECONDS.max(timeout);
    let startup_failures =
        i32::try_from(window.div_ceil(startup_period.unsigned_abs().into())).unwrap_or(i32::MAX);
    Some(Probes {
        startup: probe(startup_period, startup_failures),
        // A period never shorter than one probe may take.
        liveness: probe(LIVENESS_PERIOD_SECONDS.max(timeout), LIVENESS_FAILURES),
        readiness: probe(READINESS_PERIOD_SECONDS.max(timeout), READINESS_FAILURES),
    })
}

/// `preStop`: wait [`PRESTOP_SECONDS`] before the kubelet's SIGTERM.
fn pre_stop() -> Lifecycle {
    Lifecycle {
        pre_stop: Some(LifecycleHandler {
            exec: Some(ExecAction {
                command: Some(vec!["sleep".to_owned(), PRESTOP_SECONDS.to_string()]),
            }),
            ..LifecycleHandler::default()
        }),
        ..Lifecycle::default()
    }
}

/// Env var: seconds a stopping rank drains (`run.sh` passes vLLM's
/// `--shutdown-timeout` and the launcher's grace from it).
pub const ENV_DRAIN_SECONDS: &str = "PD_DRAIN_SECONDS";
/// Env var: `1` makes `run.sh` follow its node's rank logs on stdout.
pub const ENV_LOG_STDOUT: &str = "PD_LOG_STDOUT";
/// Env var: seconds node 0 waits for every rank (`run.sh`).
pub const ENV_WAIT_SECONDS: &str = "PD_WAIT_SECONDS";

fn quantity(s: &str) -> Quantity {
    Quantity(s.to_owned())
}

fn engine_pod(
    layout: &Layout,
    names: &Names,
    set: &EngineSet,
    node: usize,
    settings: &K8sSettings,
) -> Result<PodTemplateSpec, RenderError> {
    let role = layout
        .placement
        .engines
        .get(set.engine)
        .map_or(Role::Mixed, |e| e.role);
    let ports: Vec<u32> = layout
        .placement
        .nodes
        .get(node)
        .map(|n| n.ranks.iter().filter_map(|r| r.api_port).collect())
        .unwrap_or_default();
    let sizing = pod_sizing(layout, node, &settings.resources);
    let (volumes, volume_mounts) = engine_volumes(layout, &names.base, settings, &sizing.shm);
    let npus = Quantity(sizing.npus.to_string());
    let resource = settings.npu_resource_for(layout);
    let requests = BTreeMap::from([
        (resource.clone(), npus.clone()),
        ("cpu".to_owned(), quantity(&sizing.cpu)),
        ("memory".to_owned(), quantity(&sizing.memory_request)),
        (
            "ephemeral-storage".to_owned(),
            quantity(&sizing.ephemeral_storage),
        ),
    ]);
    // No CPU limit (sizing.rs says why).
    let limits = BTreeMap::from([
        (resource, npus),
        ("memory".to_owned(), quantity(&sizing.memory_limit)),
        (
            "ephemeral-storage".to_owned(),
            quantity(&sizing.ephemeral_storage),
        ),
    ]);
    let probes = health_probes(&ports);
    let container = Container {
        name: "vllm".to_owned(),
        image: Some(image(layout, settings)),
        command: Some(vec!["bash".to_owned(), format!("{SCRIPTS_DIR}/run.sh")]),
        env: Some(vec![
            env(ENV_NODE_HOSTS, names.node_hosts.join(",")),
            env(
                ENV_FIRST_NODE,
                set.nodes.first().copied().unwrap_or(0).to_string(),
            ),
            env(ENV_ENGINE_NODES, set.nodes.len().to_string()),
            // run.sh's local IP (HCCL_IF_IP, and the NIC holding it): the pod
            // IP from the downward API, not a route lookup.
            field_env(ENV_LOCAL_IP, POD_IP_FIELD),
            env(ENV_DRAIN_SECONDS, settings.drain_seconds.to_string()),
            env(ENV_LOG_STDOUT, "1"),
            // The startup probe's window is derived from it.
            env(ENV_WAIT_SECONDS, DEFAULT_WAIT_SECONDS.to_string()),
        ]),
        ports: (!ports.is_empty()).then(|| {
            ports
                .iter()
                .enumerate()
                .map(|(i, &p)| ContainerPort {
                    name: Some(format!("api-{i}")),
                    container_port: i32::try_from(p).unwrap_or(0),
                    ..ContainerPort::default()
                })
                .collect()
        }),
        lifecycle: probes.is_some().then(pre_stop),
        startup_probe: probes.as_ref().map(|p| p.startup.clone()),
        liveness_probe: probes.as_ref().map(|p| p.liveness.clone()),
        readiness_probe: probes.map(|p| p.readiness),
        // Whole nodes, as upstream CI requests them: the ranks' device lists
        // count from 0 over the node's NPUs, as on bare metal.
        resources: Some(ResourceRequirements {
            limits: Some(limits),
            requests: Some(requests),
            ..ResourceRequirements::default()
        }),
        volume_mounts: Some(volume_mounts),
        ..Container::default()
    };
    let mut labels = object_labels(layout, &names.base, role.as_str());
    labels.insert(ENGINE_LABEL.to_owned(), set.engine.to_string());
    Ok(PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(labels),
            annotations: Some(annotations(layout)),
            ..ObjectMeta::default()
        }),
        spec: Some(PodSpec {
            containers: vec![container],
            // Service links would inject `<SERVICE>_PORT` variables, and vLLM
            // reads `VLLM_PORT` as its own setting.
            enable_service_links: Some(false),
            termination_grace_period_seconds: Some(termination_grace_seconds(
                settings.drain_seconds,
            )),
            scheduler_name: settings.scheduler.clone(),
            volumes: Some(volumes),
            ..PodSpec::default()
        }),
    })
}

pub(super) fn engine_set(
    layout: &Layout,
    names: &Names,
    set: &EngineSet,
    settings: &K8sSettings,
) -> Result<LeaderWorkerSet, RenderError> {
    let role = layout
        .placement
        .engines
        .get(set.engine)
        .map_or(Role::Mixed, |e| e.role);
    let leader = engine_pod(layout, names, set, set.nodes[0], settings)?;
    let (leader_template, worker_template) = match set.nodes.get(1) {
        // Workers differ from the leader when they serve no API (a mixed
        // engine's headless nodes): no readiness probe on ports they lack.
        Some(&worker) => {
            let w = engine_pod(layout, names, set, worker, settings)?;
            if w == leader {
                (None, w)
            } else {
                (Some(leader), w)
            }
        }
        None => (None, leader),
    };
    let mut labels = object_labels(layout, &names.base, role.as_str());
    labels.insert(ENGINE_LABEL.to_owned(), set.engine.to_string());
    if let Some(queue) = &settings.kueue_queue {
        labels.insert(KUEUE_QUEUE_LABEL.to_owned(), queue.clone());
    }
    Ok(LeaderWorkerSet::new(
        meta(layout, &set.name, labels),
        LeaderWorkerSetSpec {
            replicas: Some(1),
            leader_worker_template: LeaderWorkerTemplate {
                size: i32::try_from(set.nodes.len()).unwrap_or(i32::MAX),
                restart_policy: Some(RestartPolicy::RecreateGroupOnPodRestart),
                leader_template,
                worker_template,
            },
        },
    ))
}

pub(super) fn proxy_objects(
    layout: &Layout,
    names: &Names,
    port: u32,
    settings: &K8sSettings,
) -> (Deployment, Service) {
    let name = format!("{}-proxy", names.base);
    let selector = selector_labels(&names.base, "proxy");
    let own = object_labels(layout, &names.base, "proxy");
    let (scripts, scripts_mount) = scripts_volume(&names.base);
    let port = i32::try_from(port).unwrap_or(0);
    let container = Container {
        name: "proxy".to_owned(),
        image: Some(image(layout, settings)),
        command: Some(vec!["bash".to_owned(), format!("{SCRIPTS_DIR}/proxy.sh")]),
        env: Some(vec![
            // proxy.sh addresses ranks as PD_NODE_IPS[node]; pod DNS names
            // follow a group that was recreated with new pod IPs.
            env("PD_NODE_IPS", names.node_hosts.join(",")),
            env("PD_PROXY_HOST", "0.0.0.0"),
        ]),
        ports: Some(vec![ContainerPort {
            name: Some("http".to_owned()),
            container_port: port,
            ..ContainerPort::default()
        }]),
        readiness_probe: Some(Probe {
            tcp_socket: Some(TCPSocketAction {
                port: IntOrString::Int(port),
                ..TCPSocketAction::default()
            }),
            period_seconds: Some(5),
            ..Probe::default()
        }),
        liveness_probe: Some(Probe {
            tcp_socket: Some(TCPSocketAction {
                port: IntOrString::Int(port),
                ..TCPSocketAction::default()
            }),
            // proxy.sh first waits for nothing: the port is up in seconds.
            initial_delay_seconds: Some(30),
            period_seconds: Some(10),
            failure_threshold: Some(6),
            ..Probe::default()
        }),
        lifecycle: Some(pre_stop()),
        resources: Some(ResourceRequirements {
            requests: Some(BTreeMap::from([
                ("cpu".to_owned(), quantity(PROXY_CPU)),
                ("memory".to_owned(), quantity(PROXY_MEMORY)),
            ])),
            limits: Some(BTreeMap::from([(
                "memory".to_owned(),
                quantity(PROXY_MEMORY),
            )])),
            ..ResourceRequirements::default()
        }),
        volume_mounts: Some(vec![scripts_mount]),
        ..Container::default()
    };
    let mut pod_labels = own.clone();
    pod_labels.extend(selector.clone());
    // The proxy runs the engines' image, so it must land on a node of their
    // architecture: required affinity to the layout's pods over the
    // `kubernetes.io/arch` topology (no architecture typed here).
    let engines = BTreeMap::from([("app.kubernetes.io/instance".to_owned(), names.base.clone())]);
    let affinity = Affinity {
        pod_affinity: Some(PodAffinity {
            required_during_scheduling_ignored_during_execution: Some(vec![PodAffinityTerm {
                label_selector: Some(LabelSelector {
                    match_labels: Some(engines),
                    match_expressions: Some(vec![
                        k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement {
                            key: ENGINE_LABEL.to_owned(),
                            operator: "Exists".to_owned(),
                            values: None,
                        },
                    ]),
                }),
                topology_key: "kubernetes.io/arch".to_owned(),
                ..PodAffinityTerm::default()
            }]),
            ..PodAffinity::default()
        }),
        ..Affinity::default()
    };
    let deployment = Deployment {
        metadata: meta(layout, &name, own.clone()),
        spec: Some(DeploymentSpec {
            replicas: Some(1),
            selector: LabelSelector {
                match_labels: Some(selector.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(pod_labels),
                    annotations: Some(annotations(layout)),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    affinity: Some(affinity),
                    containers: vec![container],
                    enable_service_links: Some(false),
                    // uvicorn finishes open requests on SIGTERM: as long as
                    // an engine drains.
                    termination_grace_period_seconds: Some(
                        PRESTOP_SECONDS
                            + i64::from(settings.drain_seconds)
                            + LAUNCHER_GRACE_SECONDS,
                    ),
                    volumes: Some(vec![scripts]),
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        }),
        ..Deployment::default()
    };
    let service = service(layout, &name, own, selector, &[port]);
    (deployment, service)
}

/// CPU request of the proxy pod.
pub const PROXY_CPU: &str = "2";
/// Memory request and limit of the proxy pod.
pub const PROXY_MEMORY: &str = "4Gi";

/// One PodDisruptionBudget per engine: a voluntary eviction (a node drain,
/// a cluster upgrade) of any pod of a DP group recreates the whole group
/// and drops every in-flight request, so none is allowed: take an engine
/// down on purpose (`kubectl delete lws`) instead.
pub(super) fn disruption_budget(
    layout: &Layout,
    names: &Names,
    set: &EngineSet,
) -> PodDisruptionBudget {
    let role = layout
        .placement
        .engines
        .get(set.engine)
        .map_or(Role::Mixed, |e| e.role);
    let mut selector = selector_labels(&names.base, role.as_str());
    selector.insert(ENGINE_LABEL.to_owned(), set.engine.to_string());
    PodDisruptionBudget {
        metadata: meta(
            layout,
            &set.name,
            object_labels(layout, &names.base, role.as_str()),
        ),
        spec: Some(PodDisruptionBudgetSpec {
            max_unavailable: Some(IntOrString::Int(0)),
            selector: Some(LabelSelector {
                match_labels: Some(selector),
                ..LabelSelector::default()
            }),
            ..PodDisruptionBudgetSpec::default()
        }),
        ..PodDisruptionBudget::default()
    }
}

pub(super) fn service(
    layout: &Layout,
    name: &str,
    own: BTreeMap<String, String>,
    selector: BTreeMap<String, String>,
    ports: &[i32],
) -> Service {
    Service {
        metadata: meta(layout, name, own),
        spec: Some(ServiceSpec {
            selector: Some(selector),
            ports: Some(
                ports
                    .iter()
                    .map(|&p| ServicePort {
                        name: Some(format!("http-{p}")),
                        port: p,
                        target_port: Some(IntOrString::Int(p)),
                        protocol: Some("TCP".to_owned()),
                        ..ServicePort::default()
                    })
                    .collect(),
            ),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }
}

/// Labels of what several layouts share (the namespace, the claims): not
/// one layout's instance, so applying another layout's `setup/` changes
/// nothing but the annotations of who wrote it last.
fn shared_labels() -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), "pd-dsl".to_owned()),
        (
            "app.kubernetes.io/managed-by".to_owned(),
            "pd-dsl".to_owned(),
        ),
    ])
}

/// The namespace, at the Pod Security level the pods need: host paths are
/// admitted only by `privileged` (the `baseline` and `restricted` levels
/// refuse every hostPath volume).
pub(super) fn namespace(layout: &Layout, name: &str) -> Namespace {
    let mut labels = shared_labels();
    for mode in ["enforce", "audit", "warn"] {
        labels.insert(
            format!("pod-security.kubernetes.io/{mode}"),
            "privileged".to_owned(),
        );
    }
    Namespace {
        metadata: meta(layout, name, labels),
        ..Namespace::default()
    }
}

/// A claim of `gib` GiB with one access mode, in the cluster's default
/// storage class.
pub(super) fn claim(
    layout: &Layout,
    name: &str,
    access_mode: &str,
    gib: u64,
) -> PersistentVolumeClaim {
    PersistentVolumeClaim {
        metadata: meta(layout, name, shared_labels()),
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(vec![access_mode.to_owned()]),
            resources: Some(VolumeResourceRequirements {
                requests: Some(BTreeMap::from([(
                    "storage".to_owned(),
                    Quantity(format!("{gib}Gi")),
                )])),
                ..VolumeResourceRequirements::default()
            }),
            ..PersistentVolumeClaimSpec::default()
        }),
        ..PersistentVolumeClaim::default()
    }
}
