//! What the front ends hand the build: nodes with their serve options and
//! env, the proxy, pool, figures and bench, each value with where it was read.

use crate::import::{InputProxy, Loc, Note};
use crate::spec::{Json, ProxyScript, Role};
use std::collections::BTreeMap;

/// A value with where it was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct P<T> {
    pub v: T,
    pub at: Loc,
}

pub(crate) fn p<T>(v: T, at: Loc) -> P<T> {
    P { v, at }
}

/// One `vllm serve` option as read: `--flag` and its value, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Arg {
    pub flag: P<String>,
    pub value: Option<P<String>>,
}

/// One node as read.
#[derive(Clone, Debug)]
pub(crate) struct NodeIn {
    /// Where the node is described.
    pub at: Loc,
    /// The node's index in the input ([`InputRank::input_node`]).
    pub index: usize,
    pub role: Role,
    pub model: P<String>,
    pub dp: P<u64>,
    pub dp_local: P<u64>,
    pub rank_start: P<u64>,
    pub tp: P<u64>,
    pub api_port: P<u64>,
    pub dp_rpc: Option<P<u64>>,
    /// The DP master as written (engine key).
    pub master: P<String>,
    /// Options other than the model and the derived ones.
    pub args: Vec<Arg>,
    /// The derived per-rank options ([`RANK_FLAGS`]) as written, launcher
    /// and harness placeholders (`$2`, `${DP_RANK}`) unresolved.
    pub rank_args: Vec<Arg>,
    /// Env, in order; values as written (`/x:$LD_PRELOAD`).
    pub env: Vec<(P<String>, P<String>)>,
    /// A native-DP worker (`--headless`): no API port of its own.
    pub headless: bool,
}

/// The proxy as read.
#[derive(Clone, Debug)]
pub(crate) struct ProxyIn {
    pub port: P<u64>,
    pub script: P<ProxyScript>,
    pub prefill_endpoints: usize,
    pub decode_endpoints: usize,
}

/// A deployment as read by a front end.
#[derive(Clone, Debug)]
pub(crate) struct Deployment {
    pub nodes: Vec<NodeIn>,
    /// NPUs per node when the input says (`npu_per_node`).
    pub npus: Option<P<u64>>,
    pub proxy: Option<ProxyIn>,
    /// The proxy command as read ([`InputProxy`]).
    pub proxy_command: Option<InputProxy>,
    /// Notes the front end already made.
    pub notes: Vec<Note>,
    /// Errors the build went on after (settings pd-dsl cannot state): the
    /// import fails with them, `lint` reports them with every rule finding
    /// on the rest.
    pub errors: Vec<(Loc, String)>,
    /// The input's frozen performance baselines (upstream's `benchmarks`
    /// cases of `case_type: performance`), as reference figures.
    pub figures: Vec<FigureIn>,
    /// The workload of the first baseline whose input length is known.
    pub bench: Option<(Loc, BenchIn)>,
    /// The KV pool's service, when the input runs one.
    pub pool: Option<PoolIn>,
}

/// A KV pool's service as read (upstream's `kv_pool:`).
#[derive(Clone, Debug)]
pub(crate) struct PoolIn {
    pub at: Loc,
    pub backend: P<crate::spec::PoolBackend>,
    /// Ports by name, as written.
    pub ports: Vec<(String, P<u64>)>,
    pub config: BTreeMap<String, P<Json>>,
}

/// A reference figure as read: where, metric, value, context.
pub(crate) type FigureIn = (Loc, String, String, String);

/// A benchmark workload as read.
#[derive(Clone, Debug, Default)]
pub(crate) struct BenchIn {
    pub input_len: u64,
    pub output_len: u64,
    pub num_prompts: u64,
    pub request_rate: Option<String>,
    pub max_concurrency: Option<u64>,
}
