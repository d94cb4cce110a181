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
//! - `kustomization.yaml` listing them, with the namespace;
//! - opt-in, each in its own directory with its own kustomization:
//!   `inference/` ([`gateway`] and its endpoint picker [`epp`],
//!   `--k8s-gateway`) and `autoscaling/`
//!   ([`autoscaling`], `--k8s-autoscale keda`: one-engine mixed layouts
//!   only, since a PD layout's proxy routes to a fixed list of ranks). A
//!   LeaderWorkerSet `DisaggregatedSet` is refused for every layout
//!   ([`disaggregated`] says why).
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

pub mod autoscaling;
pub mod disaggregated;
pub mod epp;
pub mod gateway;
pub mod lws;
mod names;
mod pods;
pub mod readme;
mod settings;
pub mod sizing;

pub use names::{EngineSet, MAX_BASE_NAME, Names, base_name, names};
pub use pods::{
    ENGINE_LABEL, ENV_DRAIN_SECONDS, ENV_LOG_STDOUT, ENV_WAIT_SECONDS, HEALTH_SCRIPT,
    IMAGE_ANNOTATION, KUEUE_QUEUE_LABEL, LAYOUT_ANNOTATION, LOGS_DIR, PROXY_CPU, PROXY_MEMORY,
    STARTUP_PERIOD_SECONDS, VERSION_ANNOTATION, extra_device_nodes,
};
use pods::{engine_set, meta, proxy_objects, selector_labels, service};
pub use settings::{
    DEFAULT_DRAIN_SECONDS, DEFAULT_LOG_DIR, K8sSettings, LogsVolume, ResourceOverrides,
    WeightsVolume, default_npu_resource, is_quantity,
};

/// The typed Kubernetes API the manifests are built from.
pub use k8s_openapi;

use super::{Artifact, RenderError};
use crate::{Layout, Role};
use k8s_openapi::api::core::v1::ConfigMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Directory of the manifests inside a layout's directory.
pub const DIR: &str = "k8s";
/// Where the scripts ConfigMap is mounted; `run.sh` runs from here.
pub const SCRIPTS_DIR: &str = "/opt/pd-dsl";
/// Upstream CI's driver tools mount (`lws.yaml.jinja2`: `driver-tools`).
pub const DRIVER_TOOLS: &str = "/usr/local/Ascend/driver/tools";
/// Seconds the launcher waits between SIGTERM and SIGKILL of its ranks
/// (`launch_online_dp.py --grace-seconds`, default; a test keeps them equal).
pub const LAUNCHER_GRACE_SECONDS: i64 = 10;
/// Seconds after the launcher's grace for `run.sh` to reap it and for vLLM
/// to release NPU contexts before the kubelet sends SIGKILL.
pub const RELEASE_SECONDS: i64 = 50;
/// Seconds a pod's `preStop` waits before SIGTERM, so that Services and the
/// proxy's next connection see it leaving before its ranks stop accepting.
pub const PRESTOP_SECONDS: i64 = 5;
/// Seconds past `PD_WAIT_SECONDS` the startup probe allows, for `run.sh`'s
/// own steps before it starts waiting (preflight, name resolution).
pub const STARTUP_MARGIN_SECONDS: i64 = 120;

/// `terminationGracePeriodSeconds` of an engine pod draining for `drain`
/// seconds: the `preStop` wait, then SIGTERM: vLLM finishes in-flight
/// requests for up to `drain` seconds (`--shutdown-timeout`), the launcher
/// waits that plus its own grace before SIGKILL
/// (`run.sh` passes `--grace-seconds $((PD_DRAIN_SECONDS + 10))`), then
/// [`RELEASE_SECONDS`].
pub fn termination_grace_seconds(drain: u32) -> i64 {
    PRESTOP_SECONDS + i64::from(drain) + LAUNCHER_GRACE_SECONDS + RELEASE_SECONDS
}

/// `terminationGracePeriodSeconds` of the proxy pod when the engines drain
/// for `drain` seconds: the `preStop` wait, then uvicorn finishes open
/// requests on SIGTERM for as long as an engine drains, and the launcher's
/// grace; it holds no NPUs to release.
pub fn proxy_grace_seconds(drain: u32) -> i64 {
    PRESTOP_SECONDS + i64::from(drain) + LAUNCHER_GRACE_SECONDS
}
/// Env var: every node's pod DNS name, comma-separated, in node order.
pub const ENV_NODE_HOSTS: &str = "PD_K8S_NODE_HOSTS";
/// Env var: the node index of this pod's engine's first node (its leader).
pub const ENV_FIRST_NODE: &str = "PD_K8S_FIRST_NODE";
/// Env var: the node count of this pod's engine (the set's `size`).
pub const ENV_ENGINE_NODES: &str = "PD_K8S_ENGINE_NODES";
/// Env var: this pod's IP, which `run.sh` takes as its local IP.
pub const ENV_LOCAL_IP: &str = "PD_LOCAL_IP";
/// The downward API field [`ENV_LOCAL_IP`] comes from.
pub const POD_IP_FIELD: &str = "status.podIP";
/// Longest generated LeaderWorkerSet name: LWS names the workers'
/// StatefulSet `<set>-0`, and a StatefulSet name must leave room for the
/// 11-character revision suffix in a 63-character label.
pub const MAX_SET_NAME: usize = 50;

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

/// Several objects of one kind as one `v1` `List` document.
fn yaml_list<T: Serialize>(layout: &Layout, items: &[T]) -> Result<String, RenderError> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct List<'a, T> {
        api_version: &'static str,
        kind: &'static str,
        items: &'a [T],
    }
    yaml(
        layout,
        &List {
            api_version: "v1",
            kind: "List",
            items,
        },
    )
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
/// let dir = std::path::Path::new(layout.name()).join("k8s");
/// let names: Vec<String> = files
///     .iter()
///     .map(|a| a.path.strip_prefix(&dir).unwrap().to_string_lossy().into_owned())
///     .collect();
/// assert_eq!(
///     names,
///     ["scripts.yaml", "prefill0.yaml", "decode0.yaml", "disruption-budgets.yaml",
///      "proxy-deployment.yaml", "proxy-service.yaml", "kustomization.yaml", "README.md",
///      "setup/namespace.yaml", "setup/weights-claim.yaml", "setup/kustomization.yaml"]
/// );
/// assert!(files[6].contents.contains("namespace: serving"));
/// assert!(files[7].contents.contains("kubectl -n serving get lws,pods"));
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
    if settings.disaggregated_set {
        return Err(RenderError::Layout {
            layout: layout.name().to_owned(),
            message: disaggregated::refusal(layout, &names),
        });
    }
    // Refused before anything is built: the engine pods change with it.
    let scaled = match settings.autoscale {
        Some(autoscaling::Autoscaler::Keda) => {
            Some(autoscaling::objects(layout, &names, settings)?)
        }
        None => None,
    };
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
            layout,
            &format!("{}-scripts", names.base),
            pods::object_labels(layout, &names.base, "scripts"),
        ),
        data: Some(scripts),
        ..ConfigMap::default()
    };
    files.push(("scripts.yaml".into(), yaml(layout, &config_map)?));

    for set in &names.sets {
        let lws = engine_set(layout, &names, set, settings)?;
        files.push((
            format!(
                "{}.yaml",
                set.name.trim_start_matches(&format!("{}-", names.base))
            ),
            yaml(layout, &lws)?,
        ));
    }
    let budgets: Vec<_> = names
        .sets
        .iter()
        .map(|set| pods::disruption_budget(layout, &names, set))
        .collect();
    files.push((
        "disruption-budgets.yaml".into(),
        yaml_list(layout, &budgets)?,
    ));
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
        let mut selector = selector_labels(&names.base, Role::Mixed.as_str());
        selector.insert(lws::WORKER_INDEX_LABEL.to_owned(), "0".to_owned());
        let svc = service(
            layout,
            &format!("{}-api", names.base),
            pods::object_labels(layout, &names.base, Role::Mixed.as_str()),
            selector,
            &ports,
        );
        files.push(("api.yaml".into(), yaml(layout, &svc)?));
    }
    let kustomization = Kustomization {
        api_version: "kustomize.config.k8s.io/v1beta1".into(),
        kind: "Kustomization".into(),
        namespace: settings.namespace.clone(),
        resources: files.iter().map(|(f, _)| f.clone()).collect(),
    };
    files.push(("kustomization.yaml".into(), yaml(layout, &kustomization)?));

    // setup/: what the first apply needs and the layout does not own.
    let claim_gib = weights_claim_gib(layout);
    let mut setup: Vec<(String, String)> = vec![(
        "namespace.yaml".into(),
        yaml(layout, &pods::namespace(layout, &settings.namespace))?,
    )];
    if let WeightsVolume::Pvc(claim) = &settings.weights {
        let pvc = pods::claim(layout, claim, "ReadOnlyMany", claim_gib);
        setup.push(("weights-claim.yaml".into(), yaml(layout, &pvc)?));
    }
    if let LogsVolume::Pvc(claim) = &settings.logs {
        let pvc = pods::claim(layout, claim, "ReadWriteMany", LOGS_CLAIM_GIB);
        setup.push(("logs-claim.yaml".into(), yaml(layout, &pvc)?));
    }
    let setup_kustomization = Kustomization {
        api_version: "kustomize.config.k8s.io/v1beta1".into(),
        kind: "Kustomization".into(),
        namespace: settings.namespace.clone(),
        resources: setup.iter().map(|(f, _)| f.clone()).collect(),
    };
    setup.push((
        "kustomization.yaml".into(),
        yaml(layout, &setup_kustomization)?,
    ));
    // inference/: with a Gateway, the extension's pool and a route to it.
    let mut inference: Vec<(String, String)> = Vec::new();
    if let Some(gw) = &settings.gateway {
        let (pool, route) = gateway::objects(layout, &names, gw)?;
        let picker = epp::objects(
            layout,
            &names,
            &pool.metadata.name.clone().unwrap_or_default(),
            &pool.spec.endpoint_picker_ref.name,
            &settings.namespace,
            settings.drain_seconds,
        );
        inference.push(("inference-pool.yaml".into(), yaml(layout, &pool)?));
        inference.push(("http-route.yaml".into(), yaml(layout, &route)?));
        inference.push((
            "epp-service-account.yaml".into(),
            yaml(layout, &picker.account)?,
        ));
        inference.push(("epp-role.yaml".into(), yaml(layout, &picker.role)?));
        inference.push((
            "epp-role-binding.yaml".into(),
            yaml(layout, &picker.binding)?,
        ));
        inference.push((
            "epp-deployment.yaml".into(),
            yaml(layout, &picker.deployment)?,
        ));
        inference.push(("epp-service.yaml".into(), yaml(layout, &picker.service)?));
        let k = Kustomization {
            api_version: "kustomize.config.k8s.io/v1beta1".into(),
            kind: "Kustomization".into(),
            namespace: settings.namespace.clone(),
            resources: inference.iter().map(|(f, _)| f.clone()).collect(),
        };
        inference.push(("kustomization.yaml".into(), yaml(layout, &k)?));
    }
    // autoscaling/: with an autoscaler, one ScaledObject per engine's set.
    let mut autoscaling: Vec<(String, String)> = Vec::new();
    if let Some(objects) = &scaled {
        for (set, object) in names.sets.iter().zip(objects) {
            autoscaling.push((
                format!(
                    "{}.yaml",
                    set.name.trim_start_matches(&format!("{}-", names.base))
                ),
                yaml(layout, object)?,
            ));
        }
        let k = Kustomization {
            api_version: "kustomize.config.k8s.io/v1beta1".into(),
            kind: "Kustomization".into(),
            namespace: settings.namespace.clone(),
            resources: autoscaling.iter().map(|(f, _)| f.clone()).collect(),
        };
        autoscaling.push(("kustomization.yaml".into(), yaml(layout, &k)?));
    }
    let view = readme::view(layout, &names, settings, claim_gib);
    let mut out: Vec<Artifact> = files
        .into_iter()
        .map(|(f, c)| Artifact::new(dir.join(f), c))
        .collect();
    out.push(Artifact::new(
        dir.join("README.md"),
        super::docs::k8s_readme(&view)?,
    ));
    out.extend(
        setup
            .into_iter()
            .map(|(f, c)| Artifact::new(dir.join("setup").join(f), c)),
    );
    out.extend(
        inference
            .into_iter()
            .map(|(f, c)| Artifact::new(dir.join("inference").join(f), c)),
    );
    out.extend(
        autoscaling
            .into_iter()
            .map(|(f, c)| Artifact::new(dir.join("autoscaling").join(f), c)),
    );
    Ok(out)
}

/// Size of the logs claim `--k8s-logs pvc:NAME` asks for, GiB.
pub const LOGS_CLAIM_GIB: u64 = 100;

/// Size of the weights claim, GiB: the whole model's weights in its format
/// (the memory budget's weights at TP 1, MTP layer included) and a tenth
/// more for the tokenizer, config and index files; one node's HBM when the
/// model has no dimensions.
pub fn weights_claim_gib(layout: &Layout) -> u64 {
    let bytes = crate::dims::dims_for(layout.model.id).map_or_else(
        || {
            u64::from(layout.hardware.hbm_gb_per_npu)
                .saturating_mul(u64::from(layout.hardware.npus_per_node))
                .saturating_mul(1_000_000_000)
        },
        |d| crate::capacity::weights(d.arch, d.format, 1, 1, 0, true).total(),
    );
    (bytes.saturating_add(bytes / 10)).div_ceil(1 << 30)
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
