//! Where the cluster differs from another: namespace, NPU resource name,
//! weights and logs volumes, image registry, resources, drain, scheduling.

use super::autoscaling::{Autoscaler, DEFAULT_FACTOR, DEFAULT_PROMETHEUS, MAX_FACTOR};
use super::names::{is_dns_label, is_dns_subdomain};
use crate::Layout;
use crate::tables::HardwareFamily;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

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

/// Where each rank's log goes besides the pod's stdout.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogsVolume {
    /// A directory on the node (created when missing): a recreated group's
    /// pods find the old logs next to theirs.
    HostPath(String),
    /// A PersistentVolumeClaim of this name (ReadWriteMany: every pod of the
    /// layout writes its own `node<i>/` directory).
    Pvc(String),
    /// An `emptyDir`: gone with the pod; stdout (`kubectl logs`) only.
    Pod,
}

impl fmt::Display for LogsVolume {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LogsVolume::HostPath(p) => write!(f, "hostpath:{p}"),
            LogsVolume::Pvc(n) => write!(f, "pvc:{n}"),
            LogsVolume::Pod => write!(f, "pod"),
        }
    }
}

impl FromStr for LogsVolume {
    type Err = String;

    /// `hostpath:/ABSOLUTE/PATH`, `pvc:NAME` or `pod`.
    fn from_str(s: &str) -> Result<LogsVolume, String> {
        let v = match s.split_once(':') {
            Some(("hostpath", path)) => LogsVolume::HostPath(path.to_owned()),
            Some(("pvc", name)) => LogsVolume::Pvc(name.to_owned()),
            None if s == "pod" => LogsVolume::Pod,
            _ => {
                return Err(format!(
                    "found `{s}`, expected `hostpath:/ABSOLUTE/PATH`, `pvc:NAME` or `pod`: rank logs go to a node directory, a claim, or the pod alone"
                ));
            }
        };
        v.validate()?;
        Ok(v)
    }
}

impl LogsVolume {
    fn validate(&self) -> Result<(), String> {
        match self {
            LogsVolume::Pvc(n) if !is_dns_subdomain(n) => Err(format!(
                "found logs claim name `{n}`, expected a DNS-1123 subdomain (lowercase letters, digits, `-`, `.`): Kubernetes names a PersistentVolumeClaim so"
            )),
            LogsVolume::HostPath(p) if !p.starts_with('/') || p.contains('\n') => Err(format!(
                "found logs host path `{p}`, expected an absolute path: a hostPath volume is a directory on the node"
            )),
            _ => Ok(()),
        }
    }
}

/// Resource amounts that replace the derived ones ([`super::sizing`]),
/// as Kubernetes quantities (`96`, `500m`, `512Gi`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceOverrides {
    /// CPU request of an engine pod.
    pub cpu: Option<String>,
    /// Memory request and limit of an engine pod.
    pub memory: Option<String>,
    /// Ephemeral-storage request and limit of an engine pod.
    pub ephemeral_storage: Option<String>,
    /// `sizeLimit` of the memory-backed `/dev/shm`.
    pub shm: Option<String>,
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
    /// Where rank logs are kept (default the node directory
    /// `/var/log/pd-dsl`, which outlives the pod).
    pub logs: LogsVolume,
    /// Amounts replacing the derived requests and limits.
    pub resources: ResourceOverrides,
    /// Seconds a stopping rank finishes its in-flight requests (vLLM's
    /// `--shutdown-timeout`, where the image's vLLM has it); the pods'
    /// termination grace period is derived from it.
    pub drain_seconds: u32,
    /// Kueue `LocalQueue` every engine's set is admitted through, whole
    /// (label `kueue.x-k8s.io/queue-name`).
    pub kueue_queue: Option<String>,
    /// `schedulerName` of every engine pod (e.g. `volcano`, whose gang
    /// scheduling LeaderWorkerSet drives with one PodGroup per group).
    pub scheduler: Option<String>,
    /// A Gateway (`NAME` or `NAMESPACE/NAME`): with it, `k8s/inference/`
    /// holds an `InferencePool` and an `HTTPRoute` from that Gateway
    /// (Gateway API Inference Extension).
    pub gateway: Option<String>,
    /// An autoscaler (`--k8s-autoscale keda`): with it, `k8s/autoscaling/`
    /// holds a KEDA `ScaledObject` per engine's set, where adding groups
    /// serves more ([`super::autoscaling`] says where and why).
    pub autoscale: Option<Autoscaler>,
    /// The Prometheus server the ScaledObjects query (default
    /// [`DEFAULT_PROMETHEUS`]).
    pub prometheus: String,
    /// The most groups per engine, as a multiple of the layout's (default
    /// [`DEFAULT_FACTOR`]).
    pub autoscale_factor: u32,
    /// Write the engines as one LeaderWorkerSet `DisaggregatedSet`: refused,
    /// naming why ([`super::disaggregated`]).
    pub disaggregated_set: bool,
}

/// Default [`K8sSettings::drain_seconds`].
pub const DEFAULT_DRAIN_SECONDS: u32 = 30;
/// Default node directory of the rank logs.
pub const DEFAULT_LOG_DIR: &str = "/var/log/pd-dsl";

impl Default for K8sSettings {
    fn default() -> K8sSettings {
        K8sSettings {
            namespace: "vllm".to_owned(),
            npu_resource: None,
            weights: WeightsVolume::Pvc("vllm-weights".to_owned()),
            image_registry: None,
            logs: LogsVolume::HostPath(DEFAULT_LOG_DIR.to_owned()),
            resources: ResourceOverrides::default(),
            drain_seconds: DEFAULT_DRAIN_SECONDS,
            kueue_queue: None,
            scheduler: None,
            gateway: None,
            autoscale: None,
            prometheus: DEFAULT_PROMETHEUS.to_owned(),
            autoscale_factor: DEFAULT_FACTOR,
            disaggregated_set: false,
        }
    }
}

/// Whether `s` is a Kubernetes quantity (`resource.Quantity`'s grammar:
/// a signed decimal number with an optional binary, decimal or exponent suffix).
pub fn is_quantity(s: &str) -> bool {
    let digits = s.trim_start_matches(['+', '-']);
    let end = digits
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(digits.len());
    let (number, suffix) = digits.split_at(end);
    let number_ok = !number.is_empty()
        && number.chars().filter(|&c| c == '.').count() <= 1
        && number.chars().any(|c| c.is_ascii_digit());
    let suffix_ok = matches!(
        suffix,
        "" | "Ki"
            | "Mi"
            | "Gi"
            | "Ti"
            | "Pi"
            | "Ei"
            | "n"
            | "u"
            | "m"
            | "k"
            | "M"
            | "G"
            | "T"
            | "P"
            | "E"
    ) || suffix.strip_prefix(['e', 'E']).is_some_and(|e| {
        let e = e.trim_start_matches(['+', '-']);
        !e.is_empty() && e.chars().all(|c| c.is_ascii_digit())
    });
    number_ok && suffix_ok
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
        self.logs.validate()?;
        for (flag, value) in [
            ("cpu", &self.resources.cpu),
            ("memory", &self.resources.memory),
            ("ephemeral storage", &self.resources.ephemeral_storage),
            ("/dev/shm size", &self.resources.shm),
        ] {
            if let Some(v) = value
                && (!is_quantity(v) || v.starts_with('-'))
            {
                return Err(format!(
                    "found {flag} `{v}`, expected a positive Kubernetes quantity such as `96`, `500m` or `512Gi`: the API server reads requests and limits only in that form"
                ));
            }
        }
        if self.drain_seconds > 3600 {
            return Err(format!(
                "found drain of {} s, expected at most 3600: the pods' termination grace period holds it, and a longer one stalls every rollout",
                self.drain_seconds
            ));
        }
        if let Some(q) = &self.kueue_queue
            && !is_dns_subdomain(q)
        {
            return Err(format!(
                "found Kueue queue `{q}`, expected a LocalQueue name (a DNS-1123 subdomain): Kueue matches the label value against its LocalQueues by name"
            ));
        }
        if let Some(s) = &self.scheduler
            && !is_dns_subdomain(s)
        {
            return Err(format!(
                "found scheduler `{s}`, expected a scheduler name (a DNS-1123 subdomain) such as `volcano`: the pods' `schedulerName` must name a running scheduler"
            ));
        }
        if let Some(g) = &self.gateway {
            let ok = match g.split_once('/') {
                Some((ns, name)) => is_dns_label(ns) && is_dns_subdomain(name),
                None => is_dns_subdomain(g),
            };
            if !ok {
                return Err(format!(
                    "found gateway `{g}`, expected `NAME` or `NAMESPACE/NAME` of a Gateway (DNS-1123 names): the HTTPRoute's parentRef names it so"
                ));
            }
        }
        let p = &self.prometheus;
        let rest = p
            .strip_prefix("http://")
            .or_else(|| p.strip_prefix("https://"));
        if rest.is_none_or(|r| r.is_empty() || r.starts_with('/'))
            || p.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(format!(
                "found Prometheus server `{p}`, expected an `http://` or `https://` URL such as `{DEFAULT_PROMETHEUS}`: KEDA's prometheus scaler queries it over HTTP"
            ));
        }
        if !(2..=MAX_FACTOR).contains(&self.autoscale_factor) {
            return Err(format!(
                "found autoscale factor {}, expected 2 to {MAX_FACTOR}: the most groups per engine is this multiple of the layout's, and at 1 nothing scales",
                self.autoscale_factor
            ));
        }
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
