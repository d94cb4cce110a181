//! The proxy: its Deployment and Service, and the proxy pod's resources.

use super::meta::{ENGINE_LABEL, annotations, image, meta, object_labels, selector_labels};
use super::probes::pre_stop;
use super::volumes::scripts_volume;
use super::{env, quantity, service};
use crate::Layout;
use crate::render::k8s::names::Names;
use crate::render::k8s::settings::K8sSettings;
use crate::render::k8s::{SCRIPTS_DIR, proxy_grace_seconds};
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Affinity, Container, ContainerPort, PodAffinity, PodAffinityTerm, PodSpec, PodTemplateSpec,
    Probe, ResourceRequirements, Service, TCPSocketAction,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use std::collections::BTreeMap;

pub(in crate::render::k8s) fn proxy_objects(
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
                    termination_grace_period_seconds: Some(proxy_grace_seconds(
                        settings.drain_seconds,
                    )),
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
