//! The endpoint picker the layout's `InferencePool` names (`k8s/inference/
//! endpoint-picker.yaml`, with `--k8s-gateway`): the Gateway asks it, over
//! Envoy's ext-proc gRPC, which pool member serves each request.
//!
//! It runs the Gateway API Inference Extension's own lightweight endpoint
//! picker (`lwepp`, gateway-api-inference-extension v1.6.0 `cmd/lwepp`,
//! `pkg/lwepp`): round-robin over the pool's ready pods. That is the right
//! policy here, not a placeholder: the pool's members serve every request
//! alike (a PD layout's proxies, which pick the prefill and decode ranks
//! themselves; a mixed layout's equal engines), and a picker that scores
//! pods by vLLM's metrics would find none on a proxy. Deployed as the
//! extension's conformance suite deploys it (v1.6.0
//! `conformance/resources/base.yaml`): its flags (`pkg/lwepp/server/
//! options.go`), ext-proc on [`EPP_PORT`], gRPC health on
//! [`EPP_HEALTH_PORT`] for the probes (service `inference-extension`, which
//! turns SERVING once the pool is synced: `runserver.go`), a Service with
//! `appProtocol: http2`, and read access to pods and pools in the namespace
//! (`controller_manager.go` caches both there). Added here: its own
//! ServiceAccount, requests and limits, the restricted Pod Security settings
//! (the image is `distroless/static:nonroot`, `lwepp.Dockerfile`), and a
//! grace period as long as the longest of the pool's pods (upstream's
//! comment: "this timeout should mirror the longest grace period of the
//! pods within the pool").

use super::gateway::{EPP_PORT, POOL_GROUP};
use super::names::Names;
use super::pods::{annotations, meta, object_labels, selector_labels};
use super::{proxy_grace_seconds, termination_grace_seconds};
use crate::Layout;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, ContainerPort, GRPCAction, PodSecurityContext, PodSpec,
    PodTemplateSpec, Probe, ResourceRequirements, SeccompProfile, SecurityContext, Service,
    ServiceAccount, ServicePort, ServiceSpec,
};
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use std::collections::BTreeMap;

/// The endpoint picker's image: the extension's lightweight picker at the
/// release whose `InferencePool` CRD the pool is typed after (v1.6.0
/// `conformance/resources/base.yaml`).
pub const EPP_IMAGE: &str = "registry.k8s.io/gateway-api-inference-extension/lwepp:v1.6.0";
/// Its gRPC health port (`--grpc-health-port`; `DefaultGrpcHealthPort`).
pub const EPP_HEALTH_PORT: i32 = 9003;
/// Its metrics port (`--metrics-port` default).
pub const EPP_METRICS_PORT: i32 = 9090;
/// The gRPC health service its probes ask (`runserver.go`).
pub const EPP_HEALTH_SERVICE: &str = "inference-extension";
/// CPU request: a round-robin picker answering one gRPC stream per request.
pub const EPP_CPU: &str = "250m";
/// Memory request and limit: it caches the namespace's pods and pools.
pub const EPP_MEMORY: &str = "256Mi";

/// The picker's objects, in apply order: its ServiceAccount, the Role that
/// lets it read pods and pools, the binding, its Deployment and the Service
/// the pool's `endpointPickerRef` names.
#[derive(Clone, Debug, PartialEq)]
pub struct EndpointPicker {
    /// `<base>-epp`.
    pub account: ServiceAccount,
    /// get/list/watch on pods and `inferencepools`.
    pub role: Role,
    /// The account to the role.
    pub binding: RoleBinding,
    /// One `lwepp` pod.
    pub deployment: Deployment,
    /// `<base>-epp` on [`EPP_PORT`].
    pub service: Service,
}

/// The endpoint picker of `pool` (named `picker`, the pool's
/// `endpointPickerRef`) in `namespace`, for pods that drain for `drain`
/// seconds.
pub fn objects(
    layout: &Layout,
    names: &Names,
    pool: &str,
    picker: &str,
    namespace: &str,
    drain: u32,
) -> EndpointPicker {
    let own = object_labels(layout, &names.base, "endpoint-picker");
    let selector = selector_labels(&names.base, "endpoint-picker");
    let read = |group: &str, resource: &str| PolicyRule {
        api_groups: Some(vec![group.to_owned()]),
        resources: Some(vec![resource.to_owned()]),
        verbs: ["get", "list", "watch"].map(str::to_owned).to_vec(),
        ..PolicyRule::default()
    };
    let role = Role {
        metadata: meta(layout, picker, own.clone()),
        rules: Some(vec![read("", "pods"), read(POOL_GROUP, "inferencepools")]),
    };
    let binding = RoleBinding {
        metadata: meta(layout, picker, own.clone()),
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".to_owned(),
            kind: "Role".to_owned(),
            name: picker.to_owned(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".to_owned(),
            name: picker.to_owned(),
            namespace: Some(namespace.to_owned()),
            ..Subject::default()
        }]),
    };
    let account = ServiceAccount {
        metadata: meta(layout, picker, own.clone()),
        ..ServiceAccount::default()
    };
    let health = || Probe {
        grpc: Some(GRPCAction {
            port: EPP_HEALTH_PORT,
            service: Some(EPP_HEALTH_SERVICE.to_owned()),
        }),
        initial_delay_seconds: Some(5),
        period_seconds: Some(10),
        ..Probe::default()
    };
    let port = |name: &str, number: i32| ContainerPort {
        name: Some(name.to_owned()),
        container_port: number,
        protocol: Some("TCP".to_owned()),
        ..ContainerPort::default()
    };
    let container = Container {
        name: "epp".to_owned(),
        image: Some(EPP_IMAGE.to_owned()),
        args: Some(
            [
                "--pool-name",
                pool,
                "--pool-namespace",
                namespace,
                "--grpc-port",
                &EPP_PORT.to_string(),
                "--grpc-health-port",
                &EPP_HEALTH_PORT.to_string(),
                "--metrics-port",
                &EPP_METRICS_PORT.to_string(),
            ]
            .map(str::to_owned)
            .to_vec(),
        ),
        ports: Some(vec![
            port("grpc", EPP_PORT),
            port("grpc-health", EPP_HEALTH_PORT),
            port("metrics", EPP_METRICS_PORT),
        ]),
        liveness_probe: Some(health()),
        readiness_probe: Some(health()),
        resources: Some(ResourceRequirements {
            requests: Some(BTreeMap::from([
                ("cpu".to_owned(), Quantity(EPP_CPU.to_owned())),
                ("memory".to_owned(), Quantity(EPP_MEMORY.to_owned())),
            ])),
            limits: Some(BTreeMap::from([(
                "memory".to_owned(),
                Quantity(EPP_MEMORY.to_owned()),
            )])),
            ..ResourceRequirements::default()
        }),
        security_context: Some(SecurityContext {
            allow_privilege_escalation: Some(false),
            read_only_root_filesystem: Some(true),
            run_as_non_root: Some(true),
            capabilities: Some(Capabilities {
                drop: Some(vec!["ALL".to_owned()]),
                ..Capabilities::default()
            }),
            ..SecurityContext::default()
        }),
        ..Container::default()
    };
    let mut pod_labels = own.clone();
    pod_labels.extend(selector.clone());
    // The longest grace of the pool's pods: the proxy's (PD) or an engine's.
    let grace = if layout.is_pd() {
        proxy_grace_seconds(drain)
    } else {
        termination_grace_seconds(drain)
    };
    let deployment = Deployment {
        metadata: meta(layout, picker, own.clone()),
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
                    containers: vec![container],
                    enable_service_links: Some(false),
                    security_context: Some(PodSecurityContext {
                        run_as_non_root: Some(true),
                        seccomp_profile: Some(SeccompProfile {
                            type_: "RuntimeDefault".to_owned(),
                            ..SeccompProfile::default()
                        }),
                        ..PodSecurityContext::default()
                    }),
                    service_account_name: Some(picker.to_owned()),
                    termination_grace_period_seconds: Some(grace),
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        }),
        ..Deployment::default()
    };
    let service = Service {
        metadata: meta(layout, picker, own),
        spec: Some(ServiceSpec {
            selector: Some(selector),
            ports: Some(vec![ServicePort {
                name: Some("grpc".to_owned()),
                port: EPP_PORT,
                target_port: Some(IntOrString::Int(EPP_PORT)),
                protocol: Some("TCP".to_owned()),
                // The Gateway speaks HTTP/2 (gRPC ext-proc) to it.
                app_protocol: Some("http2".to_owned()),
                ..ServicePort::default()
            }]),
            type_: Some("ClusterIP".to_owned()),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    };
    EndpointPicker {
        account,
        role,
        binding,
        deployment,
        service,
    }
}
