//! The pods: engine LeaderWorkerSets, the proxy Deployment, Services.

use super::names::{EngineSet, Names};
use super::settings::{K8sSettings, WeightsVolume};
use super::{
    DRIVER_TOOLS, ENV_ENGINE_NODES, ENV_FIRST_NODE, ENV_LOCAL_IP, ENV_NODE_HOSTS, POD_IP_FIELD,
    SCRIPTS_DIR, TERMINATION_GRACE_SECONDS, lws,
};
use crate::render::RenderError;
use crate::render::scripts::HealthProbeSh;
use crate::{Layout, Role};
use askama::Template;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    ConfigMapVolumeSource, Container, ContainerPort, EmptyDirVolumeSource, EnvVar, EnvVarSource,
    ExecAction, HostPathVolumeSource, ObjectFieldSelector, PersistentVolumeClaimVolumeSource,
    PodSpec, PodTemplateSpec, Probe, ResourceRequirements, Service, ServicePort, ServiceSpec,
    TCPSocketAction, Volume, VolumeMount,
};
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

pub(super) fn labels(base: &str, component: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), "pd-dsl".to_owned()),
        ("app.kubernetes.io/instance".to_owned(), base.to_owned()),
        (
            "app.kubernetes.io/component".to_owned(),
            component.to_owned(),
        ),
    ])
}

pub(super) fn meta(name: &str, labels: BTreeMap<String, String>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        labels: Some(labels),
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
fn engine_volumes(
    layout: &Layout,
    base: &str,
    settings: &K8sSettings,
) -> (Vec<Volume>, Vec<VolumeMount>) {
    let (scripts, scripts_mount) = scripts_volume(base);
    let mut volumes = vec![
        scripts,
        Volume {
            name: "dshm".to_owned(),
            // Memory-backed, no size limit: vLLM and HCCL size their shared
            // memory from the model, and a limit evicts the pod mid-load.
            empty_dir: Some(EmptyDirVolumeSource {
                medium: Some("Memory".to_owned()),
                ..EmptyDirVolumeSource::default()
            }),
            ..Volume::default()
        },
        host_path_volume("driver-tools", DRIVER_TOOLS),
    ];
    let mut mounts = vec![
        scripts_mount,
        mount("dshm", "/dev/shm", false),
        mount("driver-tools", DRIVER_TOOLS, true),
    ];
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

/// A readiness probe that passes when every given API port answers
/// `/health` (the ranks listen on all addresses: `--host 0.0.0.0`), through
/// the scripts' `http_request` (curl when the image has it, else python3).
fn health_probe(layout: &Layout, ports: &[u32]) -> Result<Option<Probe>, RenderError> {
    if ports.is_empty() {
        return Ok(None);
    }
    let script = HealthProbeSh { ports }
        .render()
        .map_err(|e| RenderError::Layout {
            layout: layout.name().to_owned(),
            message: format!("cannot render the readiness probe's script: {e}"),
        })?;
    let timeout = i32::try_from(2 * ports.len() + 5).unwrap_or(i32::MAX);
    Ok(Some(Probe {
        exec: Some(ExecAction {
            command: Some(vec!["bash".to_owned(), "-c".to_owned(), script]),
        }),
        period_seconds: Some(10),
        timeout_seconds: Some(timeout),
        failure_threshold: Some(3),
        ..Probe::default()
    }))
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
    let (volumes, volume_mounts) = engine_volumes(layout, &names.base, settings);
    let npus = Quantity(layout.hardware.npus_per_node.to_string());
    let resource = settings.npu_resource_for(layout);
    let resources = BTreeMap::from([(resource, npus)]);
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
        readiness_probe: health_probe(layout, &ports)?,
        // Whole nodes, as upstream CI requests them: the ranks' device lists
        // count from 0 over the node's NPUs, as on bare metal.
        resources: Some(ResourceRequirements {
            limits: Some(resources.clone()),
            requests: Some(resources),
            ..ResourceRequirements::default()
        }),
        volume_mounts: Some(volume_mounts),
        ..Container::default()
    };
    let mut labels = labels(&names.base, role.as_str());
    labels.insert("pd-dsl/engine".to_owned(), set.engine.to_string());
    Ok(PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(labels),
            ..ObjectMeta::default()
        }),
        spec: Some(PodSpec {
            containers: vec![container],
            // Service links would inject `<SERVICE>_PORT` variables, and vLLM
            // reads `VLLM_PORT` as its own setting.
            enable_service_links: Some(false),
            termination_grace_period_seconds: Some(TERMINATION_GRACE_SECONDS),
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
    let mut labels = labels(&names.base, role.as_str());
    labels.insert("pd-dsl/engine".to_owned(), set.engine.to_string());
    Ok(LeaderWorkerSet::new(
        meta(&set.name, labels),
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
    let selector = labels(&names.base, "proxy");
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
        volume_mounts: Some(vec![scripts_mount]),
        ..Container::default()
    };
    let deployment = Deployment {
        metadata: meta(&name, selector.clone()),
        spec: Some(DeploymentSpec {
            replicas: Some(1),
            selector: LabelSelector {
                match_labels: Some(selector.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(selector.clone()),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![container],
                    enable_service_links: Some(false),
                    volumes: Some(vec![scripts]),
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        }),
        ..Deployment::default()
    };
    let service = service(&name, selector, &[port]);
    (deployment, service)
}

pub(super) fn service(name: &str, selector: BTreeMap<String, String>, ports: &[i32]) -> Service {
    // The object's own labels are the layout's, not the pod-only ones the
    // selector may add (an LWS worker index).
    let own: BTreeMap<String, String> = selector
        .iter()
        .filter(|(k, _)| k.starts_with("app.kubernetes.io/"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Service {
        metadata: meta(name, own),
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
