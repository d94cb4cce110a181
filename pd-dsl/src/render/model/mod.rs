//! The view model: everything a script shows about one layout, derived once
//! from the checked [`Layout`] by [`LayoutModel::new`]. Templates read only
//! this; nothing in a template recomputes a port, a rank or a list.
//!
//! The stable `catalog show --format json` document ([`LayoutView`]) is part
//! of the model ([`LayoutModel::view`]): the node rows of every script are
//! read from its node views, so the JSON and the scripts show the same values.

mod derive;
mod parts;

use super::RenderError;
use super::docs::model::{DocsView, docs_view};
use super::view::{self, LayoutView, NodeView};
use crate::{EnvValue, Layout, Role};
use derive::{
    KvTemplate, checkpoint_checks_json, kv_template, mooncake_dirs, pool_model, port_list,
};

pub use derive::node_ports;
pub use parts::{
    BenchModel, DockerModel, EnvExport, MixedModel, NodeRow, NodeSettings, PoolModel, ProxyModel,
    RoleModel, ServeOption,
};

/// Directory of the image's proxy scripts.
pub const PROXY_DIR: &str = "/vllm-workspace/vllm-ascend/examples/disaggregated_prefill_v1";

/// Where the image installs CANN, ATB and bisheng (`PD_ASCEND_ROOT`
/// overrides it in run.sh).
pub const ASCEND_ROOT: &str = "/usr/local/Ascend";

/// What the CANN toolkit's `set_env.sh` exports, which tells run.sh the
/// environment is already set up (a login shell sourced `~/.bashrc`).
pub const CANN_ENV_MARKER: &str = "ASCEND_HOME_PATH";

/// One environment script of the image, under [`ASCEND_ROOT`].
#[derive(Clone, Copy, Debug)]
pub struct CannEnvFile {
    /// Path under the root; a glob, of which the first match is sourced.
    pub path: &'static str,
    /// What it sets up.
    pub what: &'static str,
    /// run.sh stops when it is missing and the environment is not set up.
    pub required: bool,
}

/// The image's environment scripts, in the order upstream sources them. In
/// the image only `~/.bashrc` sources them, so a non-interactive `run.sh`
/// (`docker exec NAME bash run.sh`, a pod's command) sources them itself.
/// Upstream: `Dockerfile.a3` (`source /usr/local/Ascend/ascend-toolkit/set_env.sh
/// && source /usr/local/Ascend/nnal/atb/set_env.sh` before installing
/// vllm-ascend) and CI's pod script `tests/e2e/nightly/multi_node/scripts/run.sh`
/// (toolkit; `ls -d /usr/local/Ascend/cann-* | head -1` +
/// `share/info/ascendnpu-ir/bin/set_env.sh`, optional since v0.27.1rc1, and a
/// fixed `cann-9.0.0`/`cann-8.5.1` before; `nnal/atb/set_env.sh`, optional,
/// sourced under `set +eu`).
pub const CANN_ENV_FILES: &[CannEnvFile] = &[
    CannEnvFile {
        path: "ascend-toolkit/set_env.sh",
        what: "CANN toolkit",
        required: true,
    },
    CannEnvFile {
        path: "cann-*/share/info/ascendnpu-ir/bin/set_env.sh",
        what: "bisheng (ascendnpu-ir)",
        required: false,
    },
    CannEnvFile {
        path: "nnal/atb/set_env.sh",
        what: "ATB",
        required: false,
    },
];

/// GiB of `/dev/shm` the upstream docker commands give a node's container:
/// the V4 tutorials run with `--shm-size=512g`, the V3.x ones with `1g`
/// (facts §7). `docker.sh` and the Kubernetes pods' `sizeLimit` both read it.
pub fn shm_gib(layout: &Layout) -> u64 {
    if layout.model.hybrid_kv { 512 } else { 1 }
}

/// Whether the image's vLLM has `--shutdown-timeout` (finish in-flight
/// requests for that long on SIGTERM: `VllmConfig.shutdown_timeout`,
/// vllm/config/vllm.py, from vLLM 0.19; read from the generated facts of
/// its `vllm/engine/arg_utils.py`).
pub fn drain_flag(layout: &Layout) -> bool {
    crate::upstream::vllm_of(layout.image).is_ok_and(|v| v.flag("shutdown-timeout").is_some())
}

/// The page's "what each role runs" table from the role models: TP and DP,
/// then every option any role passes after the derived ones, in first-seen
/// order.
fn role_settings(roles: &[RoleModel]) -> super::docs::model::RoleSettings {
    let mut flags: Vec<String> = Vec::new();
    for r in roles {
        for o in &r.options {
            if !flags.contains(&o.flag) {
                flags.push(o.flag.clone());
            }
        }
    }
    let mut rows = vec![
        (
            "--tensor-parallel-size".to_owned(),
            roles.iter().map(|r| r.tp.to_string()).collect(),
        ),
        (
            "--data-parallel-size".to_owned(),
            roles.iter().map(|r| r.dp.to_string()).collect(),
        ),
    ];
    for f in flags {
        let values = roles
            .iter()
            .map(|r| {
                r.options.iter().find(|o| o.flag == f).map_or_else(
                    || "-".to_owned(),
                    |o| o.value.clone().unwrap_or_else(|| "on".to_owned()),
                )
            })
            .collect();
        rows.push((f, values));
    }
    super::docs::model::RoleSettings {
        roles: roles.iter().map(|r| r.role.as_str().to_owned()).collect(),
        rows,
    }
}

/// Default seconds node 0 waits for every endpoint's `/health`.
pub const DEFAULT_WAIT_SECONDS: u32 = 3600;

/// The view model of one layout: a plain struct, built in one function.
#[derive(Clone, Debug)]
pub struct LayoutModel {
    /// The `catalog show --format json` document (names, nodes, proxy).
    pub view: LayoutView,
    /// What the layout's README, `meta.yaml` and HTML page show.
    pub docs: DocsView,
    /// True for PD layouts.
    pub is_pd: bool,
    /// Node count.
    pub node_count: usize,
    /// Hardware product name.
    pub product: &'static str,
    /// NPUs per node of the hardware.
    pub npus_per_node: u32,
    /// Host paths preflight requires.
    pub required_host_paths: Vec<&'static str>,
    /// Weights path in the container.
    pub model_path: String,
    /// `--served-model-name`.
    pub served_model_name: String,
    /// Full image tag without the leading `v`: the version the installed
    /// vllm-ascend package reports (its metadata, or `vllm_ascend/_version.py`).
    pub image_version: String,
    /// API port base (the mixed engine's API port).
    pub api_port: u32,
    /// Layout-wide DP RPC port.
    pub dp_rpc_port: Option<u32>,
    /// `DP_RPC_PORT` is one layout-wide value in run.sh (PD layouts whose
    /// roles share it); otherwise each PD node row states its engine's.
    pub uniform_dp_rpc_port: bool,
    /// Script facts per node, in node order.
    pub node_rows: Vec<NodeRow>,
    /// Every rank as `node:port`, prefill then decode, in proxy order.
    pub endpoints: Vec<String>,
    /// The proxy command's inputs (PD).
    pub proxy: Option<ProxyModel>,
    /// The KV pool, if any.
    pub pool: Option<PoolModel>,
    /// Serve settings per role, in role order.
    pub roles: Vec<RoleModel>,
    /// The mixed engine (mixed layouts).
    pub mixed: Option<MixedModel>,
    /// Container settings.
    pub docker: DockerModel,
    /// Preflight check names, in run order.
    pub preflight_checks: Vec<&'static str>,
    /// Mooncake library directories the role env puts on `LD_LIBRARY_PATH`, `:`-joined.
    pub mooncake_dirs: String,
    /// What the node's `config.json` must say (`pd_dsl_core::preflight`),
    /// as JSON for the preflight's `model_config` check.
    pub checkpoint_checks: String,
    /// The port `verify.sh` and `bench.sh` talk to on node 0.
    pub entry_port: u32,
    /// What listens on [`LayoutModel::entry_port`].
    pub entry_what: &'static str,
    /// `verify.sh`'s request body.
    pub verify_body: String,
    /// `bench.sh`'s workload.
    pub bench: BenchModel,
    /// Seconds node 0 waits for every endpoint by default.
    pub wait_seconds: u32,
    /// The image's vLLM takes `--shutdown-timeout` (a rank then drains for
    /// `PD_DRAIN_SECONDS` when stopped).
    pub drain_flag: bool,
    /// The launcher's default `--grace-seconds`, which a drain extends.
    pub launcher_grace: i64,
    /// The image's environment scripts run.sh sources ([`CANN_ENV_FILES`]).
    pub cann_env: &'static [CannEnvFile],
    /// Their root ([`ASCEND_ROOT`]).
    pub ascend_root: &'static str,
    /// The variable that says they are sourced already ([`CANN_ENV_MARKER`]).
    pub cann_env_marker: &'static str,
}

impl LayoutModel {
    /// Derives the view model; fails only on a layout the renderer cannot
    /// express (a role without serve settings or engine).
    pub fn new(layout: &Layout) -> Result<LayoutModel, RenderError> {
        let err = |message: String| RenderError::Layout {
            layout: layout.name().to_owned(),
            message,
        };
        let p = &layout.placement;
        let node_rows = p
            .nodes
            .iter()
            .map(|n| {
                let e = p.engines.get(n.engine);
                NodeRow {
                    api_start_port: e.map_or(0, |e| e.api_port),
                    dp_rpc_port: e.and_then(|e| e.dp_rpc_port),
                    npus_used: n.npus_used(),
                    free_ports: port_list(layout, n.index),
                }
            })
            .collect();
        let endpoints = p
            .proxy
            .prefill
            .iter()
            .chain(&p.proxy.decode)
            .map(|e| format!("{}:{}", e.node, e.port))
            .collect();
        let proxy = layout.proxy.map(|proxy| ProxyModel {
            port: proxy.port,
            file: proxy.script.file_name(),
            script_path: format!("{PROXY_DIR}/{}", proxy.script.file_name()),
            layerwise: proxy.script == crate::ProxyScript::Layerwise,
            prefill_nodes: p.proxy.prefill.iter().map(|e| e.node).collect(),
            prefill_ports: p.proxy.prefill.iter().map(|e| e.port).collect(),
            decode_nodes: p.proxy.decode.iter().map(|e| e.node).collect(),
            decode_ports: p.proxy.decode.iter().map(|e| e.port).collect(),
        });
        let pool = match layout.pool() {
            Some(pool) => Some(pool_model(layout, pool).map_err(err)?),
            None => None,
        };
        let mut roles = Vec::new();
        for (&role, serve) in &layout.serve {
            let (kv_transfer_config, has_engine_id) = if layout.is_pd() {
                match kv_template(layout, role) {
                    Ok((text, id)) => (Some(text), id),
                    // A role without an engine has no template to render;
                    // its script says so when asked for (artifacts.rs).
                    Err(KvTemplate::NoEngine) => (None, false),
                    Err(KvTemplate::Bad(m)) => return Err(err(m)),
                }
            } else {
                (None, false)
            };
            let env_of = |serve: &crate::Serve| {
                serve
                    .env
                    .iter()
                    .map(|(name, v)| EnvExport {
                        name: name.clone(),
                        value: v.text().to_owned(),
                        prepend: matches!(v, EnvValue::Prepend { .. }),
                    })
                    .collect::<Vec<_>>()
            };
            let options_of = |serve: &crate::Serve| {
                serve
                    .options(layout.model, &layout.served_model_name)
                    .into_iter()
                    .map(|(flag, value)| ServeOption { flag, value })
                    .collect::<Vec<_>>()
            };
            let nodes: Vec<NodeSettings> = layout
                .node_serve
                .iter()
                .filter(|(n, _)| p.nodes.get(**n).is_some_and(|plan| plan.role == role))
                .map(|(&node, s)| NodeSettings {
                    node,
                    env: env_of(s),
                    options: options_of(s),
                })
                .collect();
            let env = env_of(serve);
            let node_env_differs = nodes.iter().any(|n| n.env != env);
            let shape = p.engines.iter().find(|e| e.role == role);
            roles.push(RoleModel {
                role,
                dp: shape.map_or(1, |e| e.dp),
                tp: shape.map_or(1, |e| e.tp),
                pcp: shape.map_or(1, |e| e.pcp),
                node_env_differs,
                env,
                options: options_of(serve),
                kv_transfer_config,
                has_engine_id,
                nodes,
            });
        }
        let mixed = (!layout.is_pd()).then(|| {
            let engine = p.engines.first();
            let npus_local = p.nodes.first().map_or(0, |n| n.npus_used());
            MixedModel {
                dp: engine.map_or(1, |e| e.dp),
                tp: engine.map_or(1, |e| e.tp),
                pcp: engine.map_or(1, |e| e.pcp),
                multi_node: engine.is_some_and(|e| e.nodes.len() > 1),
                devices: (0..npus_local)
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            }
        });
        let hw = layout.hardware;
        let docker = DockerModel {
            image: layout.image_ref.clone(),
            container: format!("pd-{}", layout.name().replace(['/', '.'], "-")),
            shm_size: if shm_gib(layout) == 512 { "512g" } else { "1g" },
            npu_devices: (0..hw.npus_per_node)
                .map(|d| format!("/dev/davinci{d}"))
                .collect(),
            extra_devices: hw.extra_devices.to_vec(),
            mounts: hw
                .container_mounts()
                .into_iter()
                .map(|m| format!("{m}:{m}"))
                .collect(),
            privileged: hw.privileged,
        };
        let mut preflight_checks = vec![
            "tools",
            "npu_count",
            "npu_links",
            "host_paths",
            "model_dir",
            "model_config",
            "ports",
        ];
        if layout.is_pd() {
            preflight_checks.extend(["proxy_script", "proxy_deps", "mooncake"]);
        }
        preflight_checks.push("vllm_ascend_version");
        let (entry_port, entry_what) = match layout.proxy {
            Some(p) => (p.port, "the proxy on node 0"),
            None => (layout.api_port, "the API server on node 0"),
        };
        let verify_body = serde_json::json!({
            "model": layout.served_model_name,
            "messages": [{"role": "user", "content": "The future of AI is"}],
            "max_tokens": 32,
            "temperature": 0,
        })
        .to_string();
        let bench = match &layout.spec.bench {
            Some(b) => BenchModel {
                input_len: b.input_len.value,
                output_len: b.output_len.value,
                num_prompts: b.num_prompts.value,
                request_rate: b.request_rate.as_ref().map(|r| r.value.clone()),
                max_concurrency: b.max_concurrency.as_ref().map(|c| c.value),
                note: "the layout's bench workload",
            },
            // Seed 001 §8: random 1024-token prompts, 200 prompts at 1 req/s.
            None => BenchModel {
                input_len: 1024,
                output_len: 1024,
                num_prompts: 200,
                request_rate: Some("1".to_owned()),
                max_concurrency: None,
                note: "no workload recorded: the upstream tutorial's default",
            },
        };
        let mut docs = docs_view(layout);
        docs.role_settings = role_settings(&roles);
        Ok(LayoutModel {
            view: view::layout_view(layout),
            docs,
            is_pd: layout.is_pd(),
            node_count: layout.node_count(),
            product: hw.product,
            npus_per_node: hw.npus_per_node,
            required_host_paths: hw.required_host_paths.to_vec(),
            model_path: layout.model_path.clone(),
            served_model_name: layout.served_model_name.clone(),
            image_version: layout.image.tag.trim_start_matches('v').to_owned(),
            api_port: layout.api_port,
            dp_rpc_port: layout.dp_rpc_port,
            uniform_dp_rpc_port: layout.uniform_dp_rpc_port(),
            node_rows,
            endpoints,
            proxy,
            pool,
            roles,
            mixed,
            docker,
            preflight_checks,
            mooncake_dirs: mooncake_dirs(layout),
            checkpoint_checks: checkpoint_checks_json(layout)?,
            entry_port,
            entry_what,
            verify_body,
            bench,
            wait_seconds: DEFAULT_WAIT_SECONDS,
            drain_flag: drain_flag(layout),
            launcher_grace: crate::render::k8s::LAUNCHER_GRACE_SECONDS,
            cann_env: CANN_ENV_FILES,
            ascend_root: ASCEND_ROOT,
            cann_env_marker: CANN_ENV_MARKER,
        })
    }

    /// Layout name.
    pub fn name(&self) -> &str {
        &self.view.name
    }

    /// The serve settings of `role`.
    pub fn role(&self, role: Role) -> Option<&RoleModel> {
        self.roles.iter().find(|r| r.role == role)
    }

    /// Whether some node runs its own settings (the templates then read
    /// `PD_NODE`, which run.sh exports).
    pub fn has_node_settings(&self) -> bool {
        self.roles.iter().any(|r| !r.nodes.is_empty())
    }

    /// Whether some engine runs prefill context parallelism (its ranks then
    /// take `tp x pcp` NPUs from the launcher).
    pub fn has_pcp(&self) -> bool {
        self.view.nodes.iter().any(|n| n.pcp_size > 1)
    }

    /// Node rows with their node views, in node order.
    pub fn nodes(&self) -> impl Iterator<Item = (&NodeView, &NodeRow)> {
        self.view.nodes.iter().zip(&self.node_rows)
    }
}
