//! Where the cluster differs from another: namespace, NPU resource name,
//! weights volume, image registry.

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
