//! KEDA autoscaling inputs for a layout (`k8s/autoscaling/`, with
//! `--k8s-autoscale keda`): one `ScaledObject` per engine's
//! LeaderWorkerSet, on vLLM's Prometheus metric
//! [`WAITING_METRIC`]. Typed after the published CRD (`keda.sh/v1alpha1`,
//! kedacore/keda v2.20.2 `config/crd/bases/keda.sh_scaledobjects.yaml`);
//! the tests validate every one against that schema.
//!
//! What scales: an engine is one LeaderWorkerSet group (one DP group of
//! `size` nodes), so one scale step is one more group, one more LWS replica.
//! LeaderWorkerSet has the scale subresource (`.spec.replicas`,
//! `.status.hpaPodSelector`; LWS v0.10.0's CRD), so the ScaledObject targets
//! the set itself.
//!
//! Where that is correct, and why only there ([`scalable`]):
//! - a PD layout is refused. Its proxy routes to a fixed list of prefill and
//!   decode ranks by pod name (`proxy.sh`, `PD_NODE_IPS`), written when the
//!   manifests are rendered, so an added group would hold NPUs and never get
//!   a request; and each engine has its own KV engine id and ports, which a
//!   copy of the group would repeat. More capacity for a PD layout is more
//!   engines in its topology, re-rendered;
//! - a mixed layout of more than one engine is refused: `run.sh` takes its
//!   node's facts from its node index in the layout, and a group of one of
//!   several engines can only be told which by the generated names of the
//!   first group (`PD_K8S_NODE_HOSTS`);
//! - a mixed layout of one engine scales. Its Service selects every group's
//!   leader (role and worker-index labels, which every group's pods carry),
//!   so a new group serves as soon as it is ready. Its pods go without the
//!   `PD_K8S_*` env, so `run.sh` takes the group from LeaderWorkerSet alone
//!   (`LWS_LEADER_ADDRESS`, `LWS_GROUP_SIZE`, `LWS_WORKER_INDEX`), waiting
//!   for each of the group's pod names to resolve (a new group's pods start
//!   in any order; `catalog rehearse --k8s-env --k8s-autoscale keda
//!   --k8s-late-workers 3` plays it): each group
//!   is a whole copy of the layout; and the set leaves `spec.replicas` to the
//!   autoscaler (LWS defaults it to 1), so re-applying `k8s/` does not undo a
//!   scale-out.
//!
//! Bounds and target, all derived: `minReplicaCount` is the layout's one
//! group; `maxReplicaCount` is `--k8s-autoscale-factor` (default
//! [`DEFAULT_FACTOR`]) times it. The query sums [`WAITING_METRIC`] over the
//! set's pods; the target per group (`threshold`, KEDA's `AverageValue`) is
//! one group's full batch, `max_num_seqs` (vLLM's default when unset) times
//! the engine's DP ranks: a queue longer than a full batch per group is
//! what another group would serve at once.

use super::names::Names;
use super::pods::{meta, object_labels};
use super::settings::K8sSettings;
use super::{STARTUP_MARGIN_SECONDS, lws};
use crate::render::RenderError;
use crate::render::model::DEFAULT_WAIT_SECONDS;
use crate::{Layout, Role};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// `apiVersion` of a ScaledObject.
pub const API_VERSION: &str = "keda.sh/v1alpha1";
/// vLLM's gauge of the requests a server holds that are not yet running.
pub const WAITING_METRIC: &str = "vllm:num_requests_waiting";
/// Default `--k8s-prometheus`: the Service prometheus-operator creates for
/// its Prometheus servers (`prometheus-operated`), in the namespace
/// kube-prometheus-stack's guides install it (`monitoring`).
pub const DEFAULT_PROMETHEUS: &str = "http://prometheus-operated.monitoring.svc:9090";
/// Default `--k8s-autoscale-factor`: the most groups per engine.
pub const DEFAULT_FACTOR: u32 = 4;
/// Largest `--k8s-autoscale-factor`.
pub const MAX_FACTOR: u32 = 64;
/// Longest scale-down stabilization window the HorizontalPodAutoscaler
/// accepts (`stabilizationWindowSeconds` <= 3600).
pub const MAX_STABILIZATION_SECONDS: i64 = 3600;
/// Longest policy period the HorizontalPodAutoscaler accepts
/// (`periodSeconds` <= 1800).
pub const MAX_PERIOD_SECONDS: i64 = 1800;

/// Which autoscaler `--k8s-autoscale` writes inputs for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Autoscaler {
    /// KEDA `ScaledObject`s on Prometheus metrics.
    Keda,
}

impl fmt::Display for Autoscaler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Autoscaler::Keda => write!(f, "keda"),
        }
    }
}

impl FromStr for Autoscaler {
    type Err = String;

    fn from_str(s: &str) -> Result<Autoscaler, String> {
        match s {
            "keda" => Ok(Autoscaler::Keda),
            _ => Err(format!(
                "found autoscaler `{s}`, expected `keda`: the autoscaling inputs are KEDA ScaledObjects"
            )),
        }
    }
}

/// `keda.sh/v1alpha1` `ScaledObject`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScaledObject {
    /// [`API_VERSION`].
    pub api_version: String,
    /// `ScaledObject`.
    pub kind: String,
    /// Name, labels, annotations.
    pub metadata: ObjectMeta,
    /// What scales, between which bounds, on what.
    pub spec: ScaledObjectSpec,
}

/// `ScaledObject.spec`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScaledObjectSpec {
    /// The engine's LeaderWorkerSet.
    pub scale_target_ref: ScaleTargetRef,
    /// Fewest groups.
    pub min_replica_count: i32,
    /// Most groups.
    pub max_replica_count: i32,
    /// The HorizontalPodAutoscaler's behaviour.
    pub advanced: Advanced,
    /// The metric.
    pub triggers: Vec<Trigger>,
}

/// `spec.scaleTargetRef`: any object with the scale subresource.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScaleTargetRef {
    /// [`lws::API_VERSION`].
    pub api_version: String,
    /// [`lws::KIND`].
    pub kind: String,
    /// The set's name.
    pub name: String,
}

/// `spec.advanced`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Advanced {
    /// What KEDA passes to the HorizontalPodAutoscaler it creates.
    pub horizontal_pod_autoscaler_config: HpaConfig,
}

/// `spec.advanced.horizontalPodAutoscalerConfig`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HpaConfig {
    /// `behavior` (autoscaling/v2).
    pub behavior: Behavior,
}

/// `behavior`: how fast each way.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Behavior {
    /// Adding groups.
    pub scale_up: ScalingRules,
    /// Removing groups.
    pub scale_down: ScalingRules,
}

/// `behavior.scaleUp` / `behavior.scaleDown`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScalingRules {
    /// Seconds of past recommendations the HPA takes the safest of.
    pub stabilization_window_seconds: i32,
    /// At most this much change per period.
    pub policies: Vec<ScalingPolicy>,
}

/// One policy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScalingPolicy {
    /// `Pods`: a count of replicas (groups, for a LeaderWorkerSet).
    #[serde(rename = "type")]
    pub kind: String,
    /// How many.
    pub value: i32,
    /// Per this many seconds.
    pub period_seconds: i32,
}

/// `spec.triggers[]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Trigger {
    /// `prometheus`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `AverageValue`: the query's value divided by the groups.
    pub metric_type: String,
    /// The scaler's settings (all strings, as KEDA reads them).
    pub metadata: BTreeMap<String, String>,
}

/// One engine's scaling, derived from the placement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalingPlan {
    /// The LeaderWorkerSet scaled (and the ScaledObject's name).
    pub set: String,
    /// Fewest groups: the layout's.
    pub min: i32,
    /// Most groups.
    pub max: i32,
    /// The PromQL query.
    pub query: String,
    /// Waiting requests per group that call for another group.
    pub threshold: u64,
}

/// Whether adding groups to this layout's sets serves more, or why not
/// (the module doc has the reasoning).
pub fn scalable(layout: &Layout) -> Result<(), String> {
    let engines = &layout.placement.engines;
    if layout.is_pd() {
        let prefill = engines.iter().filter(|e| e.role == Role::Prefill).count();
        let decode = engines.len() - prefill;
        return Err(format!(
            "found a prefill/decode layout ({prefill} prefill and {decode} decode engines behind one proxy), expected a mixed layout of one engine: the proxy routes to a fixed list of prefill and decode ranks by pod name, written when the manifests are rendered, so a LeaderWorkerSet replica added by an autoscaler would hold NPUs and never get a request, and would repeat its engine's KV engine id and ports. Add engines to the layout's topology and re-render instead, or autoscale a mixed layout"
        ));
    }
    if engines.len() != 1 {
        return Err(format!(
            "found a mixed layout of {} engines, expected one: `run.sh` takes each node's facts from its node index in the layout, and a group added to one of several engines' LeaderWorkerSets could learn its index only from the first group's pod names. Write the layout with one engine (min groups = the layout's) and let the autoscaler add the rest",
            engines.len()
        ));
    }
    Ok(())
}

/// Scale-up period and scale-down window, seconds: a new group serves only
/// after its model loads (up to the startup probe's window,
/// `PD_WAIT_SECONDS` + [`STARTUP_MARGIN_SECONDS`]), and its queue stays long
/// meanwhile, so one group per window at most (the HPA's limits cap both).
pub fn pace_seconds() -> (i64, i64) {
    let window = i64::from(DEFAULT_WAIT_SECONDS) + STARTUP_MARGIN_SECONDS;
    (
        window.min(MAX_PERIOD_SECONDS),
        window.min(MAX_STABILIZATION_SECONDS),
    )
}

/// Each scalable set's bounds, query and target, or why this layout
/// cannot scale.
pub fn plans(
    layout: &Layout,
    names: &Names,
    settings: &K8sSettings,
) -> Result<Vec<ScalingPlan>, String> {
    scalable(layout)?;
    let (_, default_seqs) = crate::capacity::default_batching(layout.hardware);
    let mut out = Vec::new();
    for set in &names.sets {
        let Some(engine) = layout.placement.engines.get(set.engine) else {
            return Err(format!(
                "set `{}` names engine {}, which the placement does not have",
                set.name, set.engine
            ));
        };
        let seqs = layout
            .serve
            .get(&engine.role)
            .and_then(|s| s.max_num_seqs)
            .unwrap_or(default_seqs);
        let min = 1;
        let max = i32::try_from(settings.autoscale_factor)
            .unwrap_or(i32::MAX)
            .saturating_mul(min);
        out.push(ScalingPlan {
            set: set.name.clone(),
            min,
            max,
            query: waiting_query(&settings.namespace, &set.name),
            threshold: seqs.saturating_mul(u64::from(engine.dp)),
        });
    }
    Ok(out)
}

/// The sum of [`WAITING_METRIC`] over every pod of a set's groups: leaders
/// `<set>-<group>`, workers `<set>-<group>-<index>` (PromQL regexes match
/// the whole value).
pub fn waiting_query(namespace: &str, set: &str) -> String {
    format!("sum({WAITING_METRIC}{{namespace=\"{namespace}\",pod=~\"{set}-[0-9]+(-[0-9]+)?\"}})")
}

/// The layout's ScaledObjects.
pub fn objects(
    layout: &Layout,
    names: &Names,
    settings: &K8sSettings,
) -> Result<Vec<ScaledObject>, RenderError> {
    let plans = plans(layout, names, settings).map_err(|message| RenderError::Layout {
        layout: layout.name().to_owned(),
        message,
    })?;
    let (period, window) = pace_seconds();
    let period = i32::try_from(period).unwrap_or(i32::MAX);
    let window = i32::try_from(window).unwrap_or(i32::MAX);
    let one_group = |period_seconds| ScalingPolicy {
        kind: "Pods".to_owned(),
        value: 1,
        period_seconds,
    };
    Ok(plans
        .into_iter()
        .map(|p| ScaledObject {
            api_version: API_VERSION.to_owned(),
            kind: "ScaledObject".to_owned(),
            metadata: meta(
                layout,
                &p.set,
                object_labels(layout, &names.base, "autoscaling"),
            ),
            spec: ScaledObjectSpec {
                scale_target_ref: ScaleTargetRef {
                    api_version: lws::API_VERSION.to_owned(),
                    kind: lws::KIND.to_owned(),
                    name: p.set.clone(),
                },
                min_replica_count: p.min,
                max_replica_count: p.max,
                advanced: Advanced {
                    horizontal_pod_autoscaler_config: HpaConfig {
                        behavior: Behavior {
                            scale_up: ScalingRules {
                                stabilization_window_seconds: 0,
                                policies: vec![one_group(period)],
                            },
                            scale_down: ScalingRules {
                                stabilization_window_seconds: window,
                                policies: vec![one_group(period)],
                            },
                        },
                    },
                },
                triggers: vec![Trigger {
                    kind: "prometheus".to_owned(),
                    metric_type: "AverageValue".to_owned(),
                    metadata: BTreeMap::from([
                        ("serverAddress".to_owned(), settings.prometheus.clone()),
                        ("query".to_owned(), p.query),
                        ("threshold".to_owned(), p.threshold.to_string()),
                        // A lost target is an error, not zero: missing
                        // metrics never remove a group.
                        ("ignoreNullValues".to_owned(), "false".to_owned()),
                    ]),
                }],
            },
        })
        .collect())
}
