//! The parts of a [`super::LayoutModel`]: per node, proxy, KV pool, role,
//! container and benchmark, each what the templates read.

use crate::Role;

/// What the scripts' `case $NODE_INDEX` rows need per node beyond its
/// [`NodeView`](crate::render::view::NodeView) (at the same index of [`LayoutView::nodes`](crate::render::view::LayoutView::nodes)).
#[derive(Clone, Debug)]
pub struct NodeRow {
    /// The engine's first API port (`--vllm-start-port`).
    pub api_start_port: u32,
    /// The engine's DP RPC port (PD).
    pub dp_rpc_port: Option<u32>,
    /// NPUs this node's ranks use.
    pub npus_used: usize,
    /// Port ranges that must be free, `a` or `a-b`, space-separated.
    pub free_ports: String,
}

/// The proxy (PD layouts).
#[derive(Clone, Debug)]
pub struct ProxyModel {
    /// Listen port on node 0.
    pub port: u32,
    /// Script file name.
    pub file: &'static str,
    /// Default script path inside the image.
    pub script_path: String,
    /// The layerwise proxy (refuses wildcard hosts).
    pub layerwise: bool,
    /// Node index of every prefill rank, proxy order.
    pub prefill_nodes: Vec<usize>,
    /// API port of every prefill rank, proxy order.
    pub prefill_ports: Vec<u32>,
    /// Node index of every decode rank, proxy order.
    pub decode_nodes: Vec<usize>,
    /// API port of every decode rank, proxy order.
    pub decode_ports: Vec<u32>,
}

/// The KV pool next to the PD connector: run.sh writes its config on every
/// node, starts its service on node 0 and waits for it on every node.
#[derive(Clone, Debug)]
pub struct PoolModel {
    /// `memcache` | `mooncake`.
    pub backend: &'static str,
    /// The env variable the engines read the per-node config path from.
    pub config_env: &'static str,
    /// Service ports on node 0, in the backend's order (`name port` pairs).
    pub ports: Vec<u32>,
    /// Their names.
    pub port_names: Vec<&'static str>,
    /// The service's argv (node 0).
    pub service: Vec<String>,
    /// Where the service's argv comes from (release and runner file).
    pub service_source: String,
    /// Directories prepended to `LD_LIBRARY_PATH` for the service.
    pub library_paths: String,
    /// The env variable naming the service's own config file (memcache).
    pub service_env: Option<String>,
    /// The backend's configuration as compact JSON (the writer's input).
    pub config_json: String,
    /// The config keys the scripts write (the rule `kv_pool_config` keeps
    /// the layout from writing them): memcache's three URLs in order
    /// (MetaService, its config store, the local service's config store), or
    /// Mooncake's master address.
    pub derived_keys: Vec<&'static str>,
}

/// One exported env var.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvExport {
    /// Variable name (checked by rule `env_name_format`).
    pub name: String,
    /// Value, or the directory put in front of an inherited path list.
    pub value: String,
    /// `NAME=value${NAME:+:$NAME}` rather than `NAME=value`.
    pub prepend: bool,
}

/// One `vllm serve` option after the derived ones.
#[derive(Clone, Debug)]
pub struct ServeOption {
    /// The flag.
    pub flag: String,
    /// Its value, raw.
    pub value: Option<String>,
}

/// One role's serve settings.
#[derive(Clone, Debug)]
pub struct RoleModel {
    /// The role.
    pub role: Role,
    /// Env exported before `vllm serve`.
    pub env: Vec<EnvExport>,
    /// Options after the derived ones.
    pub options: Vec<ServeOption>,
    /// PD: the role's `--kv-transfer-config`, pretty JSON, with
    /// `@KV_PORT@` (and `@ENGINE_ID@` where used) for run.sh's exports.
    pub kv_transfer_config: Option<String>,
    /// The config carries `@ENGINE_ID@`.
    pub has_engine_id: bool,
    /// Nodes of this role with their own settings (the layout's `nodes:`),
    /// in node order: the templates pick this node's by `PD_NODE`.
    pub nodes: Vec<NodeSettings>,
    /// Some node's env differs from the role's (else one env for all).
    pub node_env_differs: bool,
    /// `--data-parallel-size` of the role's engines (at 1 no
    /// `--data-parallel-rank` is passed: vLLM refuses external DP at DP 1).
    pub dp: u32,
    /// `--tensor-parallel-size`.
    pub tp: u32,
    /// `--prefill-context-parallel-size` (1: not passed).
    pub pcp: u32,
}

/// The env and options of one node whose settings differ from its role's.
#[derive(Clone, Debug)]
pub struct NodeSettings {
    /// Cluster node index.
    pub node: usize,
    /// Env exported before `vllm serve`.
    pub env: Vec<EnvExport>,
    /// Options after the derived ones.
    pub options: Vec<ServeOption>,
}

/// The mixed engine.
#[derive(Clone, Debug)]
pub struct MixedModel {
    /// DP size.
    pub dp: u32,
    /// TP size.
    pub tp: u32,
    /// PCP size (1: not passed).
    pub pcp: u32,
    /// Spans several nodes (native `--headless` DP).
    pub multi_node: bool,
    /// `ASCEND_RT_VISIBLE_DEVICES` of one node.
    pub devices: String,
}

/// The container of one node.
#[derive(Clone, Debug)]
pub struct DockerModel {
    /// Full image reference.
    pub image: String,
    /// Default container name.
    pub container: String,
    /// Default `--shm-size`.
    pub shm_size: &'static str,
    /// NPU device nodes, `/dev/davinciN`.
    pub npu_devices: Vec<String>,
    /// Other device nodes of the hardware.
    pub extra_devices: Vec<&'static str>,
    /// Host paths mounted at the same path, `path:path`.
    pub mounts: Vec<String>,
    /// `--privileged=true`.
    pub privileged: bool,
}

/// `bench.sh`'s workload.
#[derive(Clone, Debug)]
pub struct BenchModel {
    /// `--random-input-len`.
    pub input_len: u64,
    /// `--random-output-len`.
    pub output_len: u64,
    /// `--num-prompts`.
    pub num_prompts: u64,
    /// `--request-rate`.
    pub request_rate: Option<String>,
    /// `--max-concurrency`.
    pub max_concurrency: Option<u64>,
    /// Where the workload comes from.
    pub note: &'static str,
}
