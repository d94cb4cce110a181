//! The pods: engine LeaderWorkerSets, the proxy Deployment, Services.

use crate::render::RenderError;
use crate::render::k8s::lws::{
    LeaderWorkerSet, LeaderWorkerSetSpec, LeaderWorkerTemplate, RestartPolicy,
};
use crate::render::k8s::names::{EngineSet, Names};
use crate::render::k8s::settings::K8sSettings;
use crate::render::k8s::sizing::pod_sizing;
use crate::render::k8s::{
    ENV_ENGINE_NODES, ENV_FIRST_NODE, ENV_LOCAL_IP, ENV_NODE_HOSTS, POD_IP_FIELD, SCRIPTS_DIR,
    termination_grace_seconds,
};
use crate::render::model::DEFAULT_WAIT_SECONDS;
use crate::{Layout, Role};
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, EnvVar, EnvVarSource, ObjectFieldSelector, PodSpec, PodTemplateSpec,
    ResourceRequirements, Service, ServicePort, ServiceSpec,
};
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use std::collections::BTreeMap;

mod meta;
mod probes;
mod proxy;
mod volumes;

use meta::image;
pub use meta::{
    ENGINE_LABEL, IMAGE_ANNOTATION, KUEUE_QUEUE_LABEL, LAYOUT_ANNOTATION, VERSION_ANNOTATION,
};
pub(super) use meta::{annotations, claim, meta, namespace, object_labels, selector_labels};
pub use probes::{
    ENV_DRAIN_SECONDS, ENV_LOG_STDOUT, ENV_WAIT_SECONDS, HEALTH_SCRIPT, LIVENESS_FAILURES,
    LIVENESS_PERIOD_SECONDS, READINESS_FAILURES, READINESS_PERIOD_SECONDS, STARTUP_PERIOD_SECONDS,
};
use probes::{health_probes, pre_stop};
pub(super) use proxy::proxy_objects;
pub use proxy::{PROXY_CPU, PROXY_MEMORY};
use volumes::engine_volumes;
pub use volumes::{LOGS_DIR, extra_device_nodes};

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

fn quantity(s: &str) -> Quantity {
    Quantity(s.to_owned())
}

/// Where `run.sh` finds its node: every node's pod name, its engine's first
/// node and node count. Autoscaled, none: a group added to the set is a
/// whole copy of a one-engine layout, which `run.sh` takes from
/// LeaderWorkerSet's own `LWS_*` variables (`autoscaling.rs` says why).
fn placement_env(names: &Names, set: &EngineSet, settings: &K8sSettings) -> Vec<EnvVar> {
    if settings.autoscale.is_some() {
        return Vec::new();
    }
    vec![
        env(ENV_NODE_HOSTS, names.node_hosts.join(",")),
        env(
            ENV_FIRST_NODE,
            set.nodes.first().copied().unwrap_or(0).to_string(),
        ),
        env(ENV_ENGINE_NODES, set.nodes.len().to_string()),
    ]
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
        env: Some(
            placement_env(names, set, settings)
                .into_iter()
                .chain([
                    // run.sh's local IP (HCCL_IF_IP, and the NIC holding it): the pod
                    // IP from the downward API, not a route lookup.
                    field_env(ENV_LOCAL_IP, POD_IP_FIELD),
                    env(ENV_DRAIN_SECONDS, settings.drain_seconds.to_string()),
                    env(ENV_LOG_STDOUT, "1"),
                    // The startup probe's window is derived from it.
                    env(ENV_WAIT_SECONDS, DEFAULT_WAIT_SECONDS.to_string()),
                ])
                .collect(),
        ),
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
            // Autoscaled, the autoscaler owns the count (LWS defaults it
            // to 1): a re-apply must not undo a scale-out.
            replicas: settings.autoscale.is_none().then_some(1),
            leader_worker_template: LeaderWorkerTemplate {
                size: i32::try_from(set.nodes.len()).unwrap_or(i32::MAX),
                restart_policy: Some(RestartPolicy::RecreateGroupOnPodRestart),
                leader_template,
                worker_template,
            },
        },
    ))
}

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
