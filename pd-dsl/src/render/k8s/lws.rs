//! The LeaderWorkerSet API, typed: the fields of `leaderworkerset.x-k8s.io/v1`
//! the catalog's manifests use, named and nested as the CRD names them
//! (kubernetes-sigs/lws `api/leaderworkerset/v1/leaderworkerset_types.go`,
//! `config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml`, v0.10.0).
//! The pod templates are k8s-openapi's own `PodTemplateSpec`. The tests check
//! every rendered LeaderWorkerSet against the CRD's OpenAPI v3 schema.

use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

/// `apiVersion` of a LeaderWorkerSet.
pub const API_VERSION: &str = "leaderworkerset.x-k8s.io/v1";
/// `kind` of a LeaderWorkerSet.
pub const KIND: &str = "LeaderWorkerSet";

/// Label LWS puts on every pod of a set: the set's name.
pub const NAME_LABEL: &str = "leaderworkerset.sigs.k8s.io/name";
/// Label LWS puts on every pod: its index in its group (`0` is the leader).
pub const WORKER_INDEX_LABEL: &str = "leaderworkerset.sigs.k8s.io/worker-index";

/// One LeaderWorkerSet object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaderWorkerSet {
    /// Always [`API_VERSION`].
    pub api_version: String,
    /// Always [`KIND`].
    pub kind: String,
    /// Name, labels.
    pub metadata: ObjectMeta,
    /// The groups.
    pub spec: LeaderWorkerSetSpec,
}

impl LeaderWorkerSet {
    /// A LeaderWorkerSet with its `apiVersion` and `kind` set.
    pub fn new(metadata: ObjectMeta, spec: LeaderWorkerSetSpec) -> LeaderWorkerSet {
        LeaderWorkerSet {
            api_version: API_VERSION.to_owned(),
            kind: KIND.to_owned(),
            metadata,
            spec,
        }
    }
}

/// `spec` of a LeaderWorkerSet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaderWorkerSetSpec {
    /// Number of groups (one engine is one group).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// What one group is.
    pub leader_worker_template: LeaderWorkerTemplate,
}

/// `spec.leaderWorkerTemplate`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LeaderWorkerTemplate {
    /// Pods per group, leader included.
    pub size: i32,
    /// What happens to the group when one of its pods restarts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<RestartPolicy>,
    /// The leader's pod; the worker template when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leader_template: Option<PodTemplateSpec>,
    /// The workers' pod.
    pub worker_template: PodTemplateSpec,
}

/// `spec.leaderWorkerTemplate.restartPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RestartPolicy {
    /// Any pod restart recreates the whole group.
    RecreateGroupOnPodRestart,
    /// As above, but only once every pod of the group has started.
    RecreateGroupAfterStart,
    /// Pods restart alone.
    None,
}
