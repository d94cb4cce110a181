//! Kubernetes manifests for a layout (`<layout>/k8s/` in the catalog), so
//! `kubectl apply -k catalog/<layout>/k8s` deploys it.
//!
//! What is generated, and why:
//! - one LeaderWorkerSet per engine (`size` = the engine's nodes, one
//!   replica), as upstream vllm-ascend's CI deploys every multi-node
//!   configuration (`tests/e2e/nightly/multi_node/scripts/lws.yaml.jinja2`).
//!   A DP group cannot lose a rank and go on, so a pod restart recreates the
//!   whole group (`RecreateGroupOnPodRestart`);
//! - a ConfigMap carrying the layout's scripts, mounted where `run.sh` runs,
//!   so a pod runs exactly the bare-metal `run.sh`;
//! - PD layouts: the proxy as a Deployment and a Service; mixed layouts: a
//!   Service in front of every engine's API server;
//! - `kustomization.yaml` listing them, with the namespace.
//!
//! Addresses: pods use the pod network, not the host's, as upstream CI does:
//! HCCL and Mooncake move data over the NPUs' own RoCE ports (configured on
//! the host with `hccn_tool`, reached through the device plugin's devices),
//! and only their control sockets use the pod IP. Every node is named by its
//! pod DNS name, `<set>-0.<set>` for an engine's leader and `<set>-0-<i>.<set>`
//! for worker `i`: LeaderWorkerSet gives each set a headless Service named
//! after it that publishes addresses before pods are ready (lws
//! `pkg/utils/pod/pod_utils.go` `AddLWSVariables`, `pkg/utils/controller`).
//! One set per engine means a pod only knows its own group, so each pod gets,
//! as generated env, every node's name in node order (`PD_K8S_NODE_HOSTS`),
//! its engine's first node (`PD_K8S_FIRST_NODE`) and node count
//! (`PD_K8S_ENGINE_NODES`); `run.sh` resolves the names and adds
//! `LWS_WORKER_INDEX` to get its node index.
//!
//! Objects are k8s-openapi's typed structs (and a typed LeaderWorkerSet,
//! [`lws`]) serialised with serde-saphyr; nothing is assembled as text.

pub mod lws;

/// The typed Kubernetes API the manifests are built from.
pub use k8s_openapi;

use super::{Artifact, RenderError};
use crate::tables::HardwareFamily;
use crate::{Layout, Role};
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    ConfigMap, ConfigMapVolumeSource, Container, ContainerPort, EmptyDirVolumeSource, EnvVar,
    ExecAction, HostPathVolumeSource, PersistentVolumeClaimVolumeSource, PodSpec, PodTemplateSpec,
    Probe, ResourceRequirements, Service, ServicePort, ServiceSpec, TCPSocketAction, Volume,
    VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use lws::{LeaderWorkerSet, LeaderWorkerSetSpec, LeaderWorkerTemplate, RestartPolicy};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Directory of the manifests inside a layout's directory.
pub const DIR: &str = "k8s";
/// Where the scripts ConfigMap is mounted; `run.sh` runs from here.
pub const SCRIPTS_DIR: &str = "/opt/pd-dsl";
/// Upstream CI's driver tools mount (`lws.yaml.jinja2`: `driver-tools`).
pub const DRIVER_TOOLS: &str = "/usr/local/Ascend/driver/tools";
/// Seconds the launcher waits between SIGTERM and SIGKILL of its ranks
/// (`launch_online_dp.py --grace-seconds`, default; a test keeps them equal).
pub const LAUNCHER_GRACE_SECONDS: i64 = 10;
/// `terminationGracePeriodSeconds`: the launcher's grace, plus time for
/// `run.sh` to reap it and for vLLM to release NPU contexts before the kubelet
/// sends SIGKILL.
pub const TERMINATION_GRACE_SECONDS: i64 = LAUNCHER_GRACE_SECONDS + 50;
/// Env var: every node's pod DNS name, comma-separated, in node order.
pub const ENV_NODE_HOSTS: &str = "PD_K8S_NODE_HOSTS";
/// Env var: the node index of this pod's engine's first node (its leader).
pub const ENV_FIRST_NODE: &str = "PD_K8S_FIRST_NODE";
/// Env var: the node count of this pod's engine (the set's `size`).
pub const ENV_ENGINE_NODES: &str = "PD_K8S_ENGINE_NODES";
/// Longest generated LeaderWorkerSet name: LWS names the workers'
/// StatefulSet `<set>-0`, and a StatefulSet name must leave room for the
/// 11-character revision suffix in a 63-character label.
const MAX_SET_NAME: usize = 50;

/// Where the weights come from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WeightsVolume {
    /// A PersistentVolumeClaim of this name, in the layout's namespace.
    Pvc(String),
    /// A directory on every node.
    HostPath(String),
}

impl fmt::Display for WeightsVolume {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WeightsVolume::Pvc(n) => write!(f, "pvc:{n}"),
            WeightsVolume::HostPath(p) => write!(f, "hostpath:{p}"),
        }
    }
}

impl FromStr for WeightsVolume {
    type Err = String;

    /// `pvc:NAME` or `hostpath:/ABSOLUTE/PATH`.
    fn from_str(s: &str) -> Result<WeightsVolume, String> {
        let v = match s.split_once(':') {
            Some(("pvc", name)) => WeightsVolume::Pvc(name.to_owned()),
            Some(("hostpath", path)) => WeightsVolume::HostPath(path.to_owned()),
            _ => {
                return Err(format!(
                    "found `{s}`, expected `pvc:NAME` or `hostpath:/ABSOLUTE/PATH`: the weights volume is a claim or a node directory"
                ));
            }
        };
        v.validate()?;
        Ok(v)
    }
}

impl WeightsVolume {
    fn validate(&self) -> Result<(), String> {
        match self {
            WeightsVolume::Pvc(n) if !is_dns_subdomain(n) => Err(format!(
                "found claim name `{n}`, expected a DNS-1123 subdomain (lowercase letters, digits, `-`, `.`): Kubernetes names a PersistentVolumeClaim so"
            )),
            WeightsVolume::HostPath(p) if !p.starts_with('/') || p.contains('\n') => Err(format!(
                "found host path `{p}`, expected an absolute path: a hostPath volume is a directory on the node"
            )),
            _ => Ok(()),
        }
    }
}

/// The settings of the manifests that depend on the cluster, not the layout.
/// Defaults follow upstream vllm-ascend CI (`lws.yaml.jinja2`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct K8sSettings {
    /// Namespace written into `kustomization.yaml` (default `vllm`).
    pub namespace: String,
    /// Extended resource name of one NPU; `None` takes upstream CI's per
    /// hardware: `huawei.com/ascend-1980` on A2/A3, `huawei.com/npu` on 950.
    pub npu_resource: Option<String>,
    /// Weights volume, mounted read-only at the layout's model path
    /// (default the claim `vllm-weights`).
    pub weights: WeightsVolume,
    /// Registry and repository prefix of the image, replacing the layout's
    /// (`quay.io/ascend`); the image name, tag and hardware suffix stay.
    pub image_registry: Option<String>,
}

impl Default for K8sSettings {
    fn default() -> K8sSettings {
        K8sSettings {
            namespace: "vllm".to_owned(),
            npu_resource: None,
            weights: WeightsVolume::Pvc("vllm-weights".to_owned()),
            image_registry: None,
        }
    }
}

impl K8sSettings {
    /// Checks every setting; the error says which and why.
    pub fn validate(&self) -> Result<(), String> {
        if !is_dns_label(&self.namespace) {
            return Err(format!(
                "found namespace `{}`, expected a DNS-1123 label (at most 63 lowercase letters, digits, `-`): Kubernetes names namespaces so",
                self.namespace
            ));
        }
        if let Some(r) = &self.npu_resource {
            let ok = r.split_once('/').is_some_and(|(domain, name)| {
                is_dns_subdomain(domain)
                    && !name.is_empty()
                    && name.len() <= 63
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            });
            if !ok {
                return Err(format!(
                    "found NPU resource `{r}`, expected an extended resource name `domain/name` such as `huawei.com/ascend-1980`: the device plugin advertises NPUs so"
                ));
            }
        }
        self.weights.validate()?;
        if let Some(r) = &self.image_registry
            && (r.is_empty() || r.ends_with('/') || r.chars().any(char::is_whitespace))
        {
            return Err(format!(
                "found image registry `{r}`, expected a registry and repository prefix without a trailing `/`, such as `registry.example.com/ascend`"
            ));
        }
        Ok(())
    }

    /// The NPU resource name for a layout's hardware.
    pub fn npu_resource_for(&self, layout: &Layout) -> String {
        self.npu_resource
            .clone()
            .unwrap_or_else(|| default_npu_resource(layout.hardware.family).to_owned())
    }
}

/// Upstream CI's NPU resource name per hardware (`lws.yaml.jinja2`,
/// `lws_560t.yaml.jinja2`).
pub fn default_npu_resource(family: HardwareFamily) -> &'static str {
    match family {
        HardwareFamily::Atlas800 => "huawei.com/ascend-1980",
        HardwareFamily::Ascend950 => "huawei.com/npu",
    }
}

/// `kustomization.yaml`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Kustomization {
    /// `kustomize.config.k8s.io/v1beta1`.
    pub api_version: String,
    /// `Kustomization`.
    pub kind: String,
    /// Namespace of every object.
    pub namespace: String,
    /// The manifest files, in apply order.
    pub resources: Vec<String>,
}

/// One engine's LeaderWorkerSet, as [`artifacts`] derives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineSet {
    /// Engine index.
    pub engine: usize,
    /// The set's name.
    pub name: String,
    /// Node indices of the engine, leader first.
    pub nodes: Vec<usize>,
}

/// The names every object of a layout derives from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Names {
    /// Prefix of every object (`app.kubernetes.io/instance`).
    pub base: String,
    /// One set per engine, in engine order.
    pub sets: Vec<EngineSet>,
    /// Every node's pod DNS name relative to the namespace, in node order.
    pub node_hosts: Vec<String>,
}

/// Derives the object names and node DNS names of a layout.
pub fn names(layout: &Layout) -> Result<Names, RenderError> {
    let err = |message: String| RenderError::Layout {
        layout: layout.name().to_owned(),
        message,
    };
    let base = base_name(layout.name());
    let mut sets = Vec::new();
    let mut node_hosts = vec![String::new(); layout.node_count()];
    for e in &layout.placement.engines {
        let name = format!("{base}-{}{}", e.role.as_str(), e.role_index);
        if name.len() > MAX_SET_NAME {
            return Err(err(format!(
                "LeaderWorkerSet name `{name}` has {} characters, expected at most {MAX_SET_NAME}: its StatefulSets' revision labels must fit 63",
                name.len()
            )));
        }
        let first = e.master();
        for (i, &n) in e.nodes.iter().enumerate() {
            // LWS_WORKER_INDEX is the offset from the leader; run.sh adds it
            // to the first node, so an engine's nodes must be consecutive.
            if n != first + i {
                return Err(err(format!(
                    "engine {} runs on nodes {:?}, expected consecutive nodes: a pod's node index is its engine's first node plus `LWS_WORKER_INDEX`",
                    e.index, e.nodes
                )));
            }
            let Some(slot) = node_hosts.get_mut(n) else {
                return Err(err(format!(
                    "engine {} names node {n}, which does not exist",
                    e.index
                )));
            };
            *slot = if i == 0 {
                format!("{name}-0.{name}")
            } else {
                format!("{name}-0-{i}.{name}")
            };
        }
        sets.push(EngineSet {
            engine: e.index,
            name,
            nodes: e.nodes.clone(),
        });
    }
    if let Some(n) = node_hosts.iter().position(String::is_empty) {
        return Err(err(format!("node {n} belongs to no engine")));
    }
    Ok(Names {
        base,
        sets,
        node_hosts,
    })
}

/// The layout's name as a DNS-1123 label prefix: lowercase, every run of
/// other characters one `-`; longer than 34 characters, shortened with a
/// hash of the full name so two layouts never share a prefix.
pub fn base_name(layout_name: &str) -> String {
    let mut s = String::new();
    for c in layout_name.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.is_empty() && !s.ends_with('-') {
            s.push('-');
        }
    }
    while s.ends_with('-') {
        s.pop();
    }
    const MAX: usize = 34;
    if s.len() <= MAX {
        return s;
    }
    // FNV-1a: stable across runs and platforms, unlike std's hasher.
    let mut h: u32 = 0x811c_9dc5;
    for b in layout_name.bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    let mut short: String = s.chars().take(MAX - 7).collect();
    while short.ends_with('-') {
        short.pop();
    }
    format!("{short}-{:06x}", h & 0xff_ffff)
}

fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_dns_label)
}

/// The image for the cluster: the layout's, with the registry setting.
fn image(layout: &Layout, settings: &K8sSettings) -> String {
    match (&settings.image_registry, layout.image_ref.rsplit_once('/')) {
        (Some(registry), Some((_, name))) => format!("{registry}/{name}"),
        _ => layout.image_ref.clone(),
    }
}

fn labels(base: &str, component: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), "pd-dsl".to_owned()),
        ("app.kubernetes.io/instance".to_owned(), base.to_owned()),
        (
            "app.kubernetes.io/component".to_owned(),
            component.to_owned(),
        ),
    ])
}

fn meta(name: &str, labels: BTreeMap<String, String>) -> ObjectMeta {
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
/// `/health` (the ranks listen on all addresses: `--host 0.0.0.0`).
fn health_probe(ports: &[u32]) -> Option<Probe> {
    if ports.is_empty() {
        return None;
    }
    let list: Vec<String> = ports.iter().map(u32::to_string).collect();
    let script = format!(
        "for port in {}; do curl -fsS --connect-timeout 1 -m 2 -o /dev/null \"http://127.0.0.1:$port/health\" || exit 1; done",
        list.join(" ")
    );
    let timeout = i32::try_from(2 * ports.len() + 5).unwrap_or(i32::MAX);
    Some(Probe {
        exec: Some(ExecAction {
            command: Some(vec!["bash".to_owned(), "-c".to_owned(), script]),
        }),
        period_seconds: Some(10),
        timeout_seconds: Some(timeout),
        failure_threshold: Some(3),
        ..Probe::default()
    })
}

fn engine_pod(
    layout: &Layout,
    names: &Names,
    set: &EngineSet,
    node: usize,
    settings: &K8sSettings,
) -> PodTemplateSpec {
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
        readiness_probe: health_probe(&ports),
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
    PodTemplateSpec {
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
    }
}

fn engine_set(
    layout: &Layout,
    names: &Names,
    set: &EngineSet,
    settings: &K8sSettings,
) -> LeaderWorkerSet {
    let role = layout
        .placement
        .engines
        .get(set.engine)
        .map_or(Role::Mixed, |e| e.role);
    let leader = engine_pod(layout, names, set, set.nodes[0], settings);
    let (leader_template, worker_template) = match set.nodes.get(1) {
        // Workers differ from the leader when they serve no API (a mixed
        // engine's headless nodes): no readiness probe on ports they lack.
        Some(&worker) => {
            let w = engine_pod(layout, names, set, worker, settings);
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
    LeaderWorkerSet::new(
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
    )
}

fn proxy_objects(
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

fn service(name: &str, selector: BTreeMap<String, String>, ports: &[i32]) -> Service {
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

/// One object as a YAML file (one document, so every YAML parser reads it).
fn yaml<T: Serialize>(layout: &Layout, object: &T) -> Result<String, RenderError> {
    let text = serde_saphyr::to_string(object).map_err(|e| RenderError::Layout {
        layout: layout.name().to_owned(),
        message: format!("cannot write a Kubernetes manifest as YAML: {e}"),
    })?;
    Ok(format!(
        "# Generated by pd-dsl from layout {}. Do not edit: change the layout and re-render.\n{text}",
        layout.name()
    ))
}

/// The layout's Kubernetes artifacts under `<layout>/k8s/`. `rendered` is the
/// layout's other artifacts: every script among them goes into the scripts
/// ConfigMap. [`super::render_layout`] calls it with the default settings.
///
/// ```
/// use pd_dsl::layout;
/// use pd_dsl::render::{self, k8s};
///
/// let spec = layout! {
///     name: "deepseek-v4-flash-w8a8-mtp/a3-1p1d-k8s-demo",
///     model: deepseek_v4_flash_w8a8_mtp,
///     hardware: a3,
///     image: "v0.21.0rc1",
///     topology: <prefill 1 x dp4tp4; decode 1 x dp16tp1;>,
///     connector: mooncake_hybrid { kv_port: { prefill: 36100, decode: 36200 } },
///     ports: { api: 7100, dp_rpc: 12321 },
///     proxy: { port: 1999 },
///     serve: { expert_parallel: true, speculative: { method: mtp, tokens: 1, enforce_eager: true } },
///     prefill: { max_num_batched_tokens: 8192, max_num_seqs: 16, graph: eager },
///     decode: { max_num_batched_tokens: 120, max_num_seqs: 60, graph: full_decode_only },
///     provenance: { recorded: "2026-06-30" },
/// };
/// let layout = pd_dsl::check(&spec).expect("checked");
/// let rendered = render::render_layout(&layout).expect("renders");
/// let settings = k8s::K8sSettings {
///     namespace: "serving".into(),
///     ..k8s::K8sSettings::default()
/// };
/// let files = k8s::artifacts(&layout, &settings, &rendered).expect("manifests");
/// let names: Vec<String> = files
///     .iter()
///     .map(|a| a.path.file_name().unwrap().to_string_lossy().into_owned())
///     .collect();
/// assert_eq!(
///     names,
///     ["scripts.yaml", "prefill0.yaml", "decode0.yaml", "proxy-deployment.yaml",
///      "proxy-service.yaml", "kustomization.yaml"]
/// );
/// assert!(files[5].contents.contains("namespace: serving"));
/// ```
pub fn artifacts(
    layout: &Layout,
    settings: &K8sSettings,
    rendered: &[Artifact],
) -> Result<Vec<Artifact>, RenderError> {
    settings.validate().map_err(|message| RenderError::Layout {
        layout: layout.name().to_owned(),
        message,
    })?;
    let names = names(layout)?;
    let dir = PathBuf::from(layout.name()).join(DIR);
    let mut files: Vec<(String, String)> = Vec::new();

    let layout_dir = Path::new(layout.name());
    let scripts: BTreeMap<String, String> = rendered
        .iter()
        .filter(|a| a.executable && a.path.parent() == Some(layout_dir))
        .filter_map(|a| {
            let file = a.path.file_name()?.to_str()?.to_owned();
            Some((file, a.contents.clone()))
        })
        .collect();
    if !scripts.contains_key("run.sh") {
        return Err(RenderError::Layout {
            layout: layout.name().to_owned(),
            message: "no `run.sh` among the rendered files: the pods run it".into(),
        });
    }
    let config_map = ConfigMap {
        metadata: meta(
            &format!("{}-scripts", names.base),
            labels(&names.base, "scripts"),
        ),
        data: Some(scripts),
        ..ConfigMap::default()
    };
    files.push(("scripts.yaml".into(), yaml(layout, &config_map)?));

    for set in &names.sets {
        let lws = engine_set(layout, &names, set, settings);
        files.push((
            format!(
                "{}.yaml",
                set.name.trim_start_matches(&format!("{}-", names.base))
            ),
            yaml(layout, &lws)?,
        ));
    }
    if let Some(proxy) = &layout.proxy {
        let (deployment, service) = proxy_objects(layout, &names, proxy.port, settings);
        files.push(("proxy-deployment.yaml".into(), yaml(layout, &deployment)?));
        files.push(("proxy-service.yaml".into(), yaml(layout, &service)?));
    } else {
        // Mixed: one Service over every engine's API server (its first node).
        let mut ports: Vec<i32> = names
            .sets
            .iter()
            .filter_map(|s| layout.placement.nodes.get(s.nodes[0]))
            .flat_map(|n| n.ranks.iter().filter_map(|r| r.api_port))
            .filter_map(|p| i32::try_from(p).ok())
            .collect();
        ports.sort_unstable();
        ports.dedup();
        let mut selector = labels(&names.base, Role::Mixed.as_str());
        selector.insert(lws::WORKER_INDEX_LABEL.to_owned(), "0".to_owned());
        let svc = service(&format!("{}-api", names.base), selector, &ports);
        files.push(("api.yaml".into(), yaml(layout, &svc)?));
    }
    let kustomization = Kustomization {
        api_version: "kustomize.config.k8s.io/v1beta1".into(),
        kind: "Kustomization".into(),
        namespace: settings.namespace.clone(),
        resources: files.iter().map(|(f, _)| f.clone()).collect(),
    };
    files.push(("kustomization.yaml".into(), yaml(layout, &kustomization)?));
    Ok(files
        .into_iter()
        .map(|(f, c)| Artifact::new(dir.join(f), c))
        .collect())
}

/// Replaces the `k8s/` artifacts of every layout in `artifacts` (as
/// [`super::render_catalog`] made them, with default settings) by ones made
/// with `settings`: how `catalog --k8s-*` and `catalog render --k8s-*` apply
/// their flags.
pub fn with_settings(
    all: Vec<Artifact>,
    layouts: &[&Layout],
    settings: &K8sSettings,
) -> Result<Vec<Artifact>, RenderError> {
    let mut out: Vec<Artifact> = Vec::with_capacity(all.len());
    let mut by_layout: BTreeMap<&str, Vec<Artifact>> = BTreeMap::new();
    for a in all {
        let owner = layouts
            .iter()
            .find(|l| a.path.starts_with(Path::new(l.name()).join(DIR)));
        match owner {
            Some(_) => {}
            None => {
                if let Some(l) = layouts
                    .iter()
                    .find(|l| a.path.parent() == Some(Path::new(l.name())))
                {
                    by_layout.entry(l.name()).or_default().push(a.clone());
                }
                out.push(a);
            }
        }
    }
    for l in layouts {
        let rendered = by_layout.get(l.name()).map_or(&[][..], Vec::as_slice);
        out.extend(artifacts(l, settings, rendered)?);
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}
