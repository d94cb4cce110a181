//! What `k8s/README.md` says: the view its template reads, built with the
//! settings the manifests were rendered with, so the commands it prints are
//! the ones that work for these files.

use super::autoscaling::{self, ScalingPlan};
use super::names::Names;
use super::settings::{K8sSettings, LogsVolume, WeightsVolume};
use super::sizing::{PodSizing, pod_sizing};
use super::{PRESTOP_SECONDS, STARTUP_MARGIN_SECONDS, termination_grace_seconds};
use crate::Layout;
use crate::render::model::{DEFAULT_WAIT_SECONDS, drain_flag};

/// One LeaderWorkerSet's line of the sizing table.
#[derive(Clone, Debug)]
pub struct SetRow {
    /// The set's name.
    pub name: String,
    /// Its pods (the engine's nodes).
    pub pods: usize,
    /// Its leader pod's sizing (every pod of an engine runs the same ranks).
    pub sizing: PodSizing,
}

/// The view of `k8s/README.md`.
#[derive(Clone, Debug)]
pub struct K8sReadmeView {
    /// Full layout name.
    pub layout: String,
    /// True for PD layouts.
    pub pd: bool,
    /// Namespace.
    pub namespace: String,
    /// The Service clients reach.
    pub service: String,
    /// Its port.
    pub port: u32,
    /// NPU resource name.
    pub npu_resource: String,
    /// NPUs per node.
    pub npus: u32,
    /// The sets.
    pub sets: Vec<SetRow>,
    /// Weights claim name, when the weights are a claim.
    pub weights_claim: Option<String>,
    /// Weights host directory, when they are one.
    pub weights_host_path: Option<String>,
    /// Size of the weights claim, GiB.
    pub weights_claim_gib: u64,
    /// Model path inside the pods.
    pub model_path: String,
    /// Where the logs go (`hostpath:/DIR`, `pvc:NAME`, `pod`).
    pub logs: String,
    /// The logs are a claim of this name.
    pub logs_claim: Option<String>,
    /// Drain seconds.
    pub drain: u32,
    /// The image's vLLM has `--shutdown-timeout`.
    pub drain_flag: bool,
    /// The image's vLLM version.
    pub vllm: String,
    /// Termination grace period of the engine pods.
    pub grace: i64,
    /// `preStop` seconds.
    pub prestop: i64,
    /// `PD_WAIT_SECONDS` in the pods.
    pub wait: u32,
    /// Startup probe window, seconds.
    pub startup_window: i64,
    /// The Gateway of `inference/`, and the pool's picker Service.
    pub gateway: Option<(String, String)>,
    /// Kueue queue.
    pub kueue_queue: Option<String>,
    /// Scheduler name.
    pub scheduler: Option<String>,
    /// Hardware device nodes mounted from the host (950DT).
    pub devices: Vec<&'static str>,
    /// The sizing and probe constants the text explains (sizing.rs, pods/probes.rs).
    pub k: Constants,
    /// The flags that reproduce these files.
    pub flags: String,
    /// Engines in the layout.
    pub engines: usize,
    /// `app.kubernetes.io/instance` of every object.
    pub instance: String,
    /// With `--k8s-autoscale`: what `autoscaling/` holds.
    pub autoscaling: Option<AutoscalingView>,
    /// The LeaderWorkerSet release whose `DisaggregatedSet` the text means.
    pub ds_version: &'static str,
}

/// What `k8s/README.md` says of `autoscaling/`.
#[derive(Clone, Debug)]
pub struct AutoscalingView {
    /// One line per ScaledObject.
    pub plans: Vec<ScalingPlan>,
    /// The Prometheus server queried.
    pub prometheus: String,
    /// The metric.
    pub metric: &'static str,
    /// Most groups per engine, as a multiple of the layout's.
    pub factor: u32,
    /// Seconds per added or removed group.
    pub period: i64,
    /// Scale-down stabilization window, seconds.
    pub window: i64,
}

/// The constants `k8s/README.md` explains, from where they are defined.
#[derive(Clone, Debug)]
pub struct Constants {
    /// CPUs per NPU used.
    pub cpu_per_npu: u64,
    /// CPUs per DP rank.
    pub cpu_per_rank: u64,
    /// CPUs per node.
    pub cpu_node: u64,
    /// Host GiB per NPU used.
    pub gib_per_npu: u64,
    /// Ephemeral storage, GiB.
    pub ephemeral_gib: u64,
    /// Startup margin past `PD_WAIT_SECONDS`.
    pub startup_margin: i64,
    /// Liveness period and failures.
    pub liveness: (i32, i32),
    /// Readiness period and failures.
    pub readiness: (i32, i32),
    /// The launcher's grace past the drain.
    pub launcher_grace: i64,
    /// Seconds left to release the NPUs.
    pub release: i64,
}

/// Builds the view.
pub fn view(
    layout: &Layout,
    names: &Names,
    settings: &K8sSettings,
    weights_claim_gib: u64,
) -> K8sReadmeView {
    let sets = names
        .sets
        .iter()
        .map(|s| SetRow {
            name: s.name.clone(),
            pods: s.nodes.len(),
            sizing: pod_sizing(layout, s.nodes[0], &settings.resources),
        })
        .collect();
    let (service, port) = match &layout.proxy {
        Some(p) => (format!("{}-proxy", names.base), p.port),
        None => (
            format!("{}-api", names.base),
            layout
                .placement
                .nodes
                .first()
                .and_then(|n| n.ranks.first())
                .and_then(|r| r.api_port)
                .unwrap_or(0),
        ),
    };
    let mut flags = vec![format!("--k8s-namespace {}", settings.namespace)];
    flags.push(format!("--k8s-weights {}", settings.weights));
    flags.push(format!("--k8s-logs {}", settings.logs));
    flags.push(format!("--k8s-drain-seconds {}", settings.drain_seconds));
    for (flag, v) in [
        ("--k8s-npu-resource", &settings.npu_resource),
        ("--k8s-image-registry", &settings.image_registry),
        ("--k8s-cpu", &settings.resources.cpu),
        ("--k8s-memory", &settings.resources.memory),
        (
            "--k8s-ephemeral-storage",
            &settings.resources.ephemeral_storage,
        ),
        ("--k8s-shm", &settings.resources.shm),
        ("--k8s-kueue-queue", &settings.kueue_queue),
        ("--k8s-scheduler", &settings.scheduler),
        ("--k8s-gateway", &settings.gateway),
    ] {
        if let Some(v) = v {
            flags.push(format!("{flag} {v}"));
        }
    }
    if let Some(a) = settings.autoscale {
        flags.push(format!("--k8s-autoscale {a}"));
        flags.push(format!("--k8s-prometheus {}", settings.prometheus));
        flags.push(format!(
            "--k8s-autoscale-factor {}",
            settings.autoscale_factor
        ));
    }
    let (period, window) = autoscaling::pace_seconds();
    let autoscaling = settings.autoscale.and_then(|_| {
        autoscaling::plans(layout, names, settings)
            .ok()
            .map(|plans| AutoscalingView {
                plans,
                prometheus: settings.prometheus.clone(),
                metric: autoscaling::WAITING_METRIC,
                factor: settings.autoscale_factor,
                period,
                window,
            })
    });
    K8sReadmeView {
        layout: layout.name().to_owned(),
        pd: layout.proxy.is_some(),
        namespace: settings.namespace.clone(),
        service,
        port,
        npu_resource: settings.npu_resource_for(layout),
        npus: layout.hardware.npus_per_node,
        sets,
        weights_claim: match &settings.weights {
            WeightsVolume::Pvc(c) => Some(c.clone()),
            WeightsVolume::HostPath(_) => None,
        },
        weights_host_path: match &settings.weights {
            WeightsVolume::HostPath(p) => Some(p.clone()),
            WeightsVolume::Pvc(_) => None,
        },
        weights_claim_gib,
        model_path: layout.model_path.clone(),
        logs: settings.logs.to_string(),
        logs_claim: match &settings.logs {
            LogsVolume::Pvc(c) => Some(c.clone()),
            _ => None,
        },
        drain: settings.drain_seconds,
        drain_flag: drain_flag(layout),
        vllm: layout.image.vllm().to_owned(),
        grace: termination_grace_seconds(settings.drain_seconds),
        prestop: PRESTOP_SECONDS,
        wait: DEFAULT_WAIT_SECONDS,
        startup_window: i64::from(DEFAULT_WAIT_SECONDS) + STARTUP_MARGIN_SECONDS,
        gateway: settings
            .gateway
            .clone()
            .map(|g| (g, format!("{}-epp", names.base))),
        kueue_queue: settings.kueue_queue.clone(),
        scheduler: settings.scheduler.clone(),
        devices: super::pods::extra_device_nodes(layout),
        k: Constants {
            cpu_per_npu: super::sizing::CPU_PER_NPU,
            cpu_per_rank: super::sizing::CPU_PER_RANK,
            cpu_node: super::sizing::CPU_NODE,
            gib_per_npu: super::sizing::HOST_GIB_PER_NPU,
            ephemeral_gib: super::sizing::EPHEMERAL_GIB,
            startup_margin: STARTUP_MARGIN_SECONDS,
            liveness: (
                super::pods::LIVENESS_PERIOD_SECONDS,
                super::pods::LIVENESS_FAILURES,
            ),
            readiness: (
                super::pods::READINESS_PERIOD_SECONDS,
                super::pods::READINESS_FAILURES,
            ),
            launcher_grace: super::LAUNCHER_GRACE_SECONDS,
            release: super::RELEASE_SECONDS,
        },
        flags: flags.join(" "),
        engines: layout.placement.engines.len(),
        instance: names.base.clone(),
        autoscaling,
        ds_version: super::disaggregated::LWS_VERSION,
    }
}
