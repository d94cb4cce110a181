//! From what the front ends read (nodes with their serve options and env) to
//! a [`LayoutSpec`]: engines, topology, ports, connector, engine ids and
//! per-role settings. Values pd-dsl derives are compared, not copied;
//! values that differ are kept as overrides (engine ids, kv ports) or
//! reported as notes.

use super::{Imported, Input, InputProxy, InputRank, Loc, Note, Options, SourceMap};
use crate::placement::{default_ranks_per_node, derived_engine_id};
use crate::spec::{
    BenchSpec, ConnectorKind, ConnectorSpec, EngineGroup, EngineId, EngineIdsSpec, EnvEntry,
    EnvValue, FigureSpec, FlagEntry, GraphMode, HardwareSpec, Json, KvPorts, LayoutSpec, PoolSpec,
    PortsSpec, ProvenanceSpec, ProxyScript, ProxySpec, Role, ServeSpec, SpeculativeSpec,
};
use crate::{Spanned, tables};
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

type Fail = (Loc, String);

/// The PCP option; a size above 1 becomes the topology's `pcp<N>`.
const PCP_FLAG: &str = pd_dsl_core::check::PCP_FLAG;

/// Flags pd-dsl derives per rank; front ends consume them into node facts.
pub(crate) const RANK_FLAGS: &[&str] = &[
    "--host",
    "--port",
    "--data-parallel-size",
    "--data-parallel-rank",
    "--data-parallel-address",
    "--data-parallel-rpc-port",
    "--data-parallel-size-local",
    "--data-parallel-start-rank",
    "--tensor-parallel-size",
    "--headless",
];

/// vLLM's `--data-parallel-rpc-port` default (vllm `vllm/config/parallel.py`,
/// `data_parallel_rpc_port`: 29550 in every vLLM of the corpus, 0.18.0 to
/// 0.30.0).
const VLLM_DP_RPC_PORT: u64 = 29550;

/// Env run.sh derives per node or rank, and harness-internal variables
/// of the upstream e2e runner (`SERVER_PORT` is its port placeholder).
const DERIVED_ENV: &[&str] = &[
    "ASCEND_RT_VISIBLE_DEVICES",
    "HCCL_IF_IP",
    "GLOO_SOCKET_IFNAME",
    "TP_SOCKET_IFNAME",
    "HCCL_SOCKET_IFNAME",
    "ENGINE_ID",
    "KV_PORT",
    "SERVER_PORT",
];

/// Splits `--flag=value` and normalises `--flag_name` to `--flag-name`
/// (vLLM's argparse accepts both; one spelling lets rules see duplicates).
pub(crate) fn normalise_flag(raw: &str) -> (String, Option<String>) {
    let (name, value) = match raw.split_once('=') {
        Some((n, v)) => (n, Some(v.to_owned())),
        None => (raw, None),
    };
    // A dotted key into a JSON option (`--attention-config.indexer_kv_dtype`)
    // is passed as written: only the flag before the first `.` is spelled.
    let (flag, keys) = match name.split_once('.') {
        Some((f, k)) => (f, format!(".{k}")),
        None => (name, String::new()),
    };
    // A short alias (`-tp 8`, `-pcp 2`) is the long flag vLLM defines it for.
    if !flag.starts_with("--")
        && let Some(long) = pd_dsl_core::upstream::long_name_of_alias(flag)
    {
        return (format!("--{long}{keys}"), value);
    }
    (
        format!("--{}{keys}", flag.trim_start_matches('-').replace('_', "-")),
        value,
    )
}

/// Whether a flag takes no value.
pub(crate) fn is_switch(flag: &str) -> bool {
    matches!(
        flag,
        "--headless"
            | "--enable-expert-parallel"
            | "--trust-remote-code"
            | "--enforce-eager"
            | "--no-enable-prefix-caching"
            | "--enable-prefix-caching"
            | "--async-scheduling"
            | "--disable-log-stats"
            | "--disable-log-requests"
            | "--enable-chunked-prefill"
            | "--no-enable-chunked-prefill"
            | "--enable-auto-tool-choice"
            | "--disable-uvicorn-access-log"
    )
}

/// Parses a number the input wrote, pointing at it when it is not one.
pub(crate) fn number(v: &P<String>, what: &str) -> Result<P<u64>, Fail> {
    v.v.trim()
        .parse::<u64>()
        .map(|n| p(n, v.at))
        .map_err(|_| {
            (
                v.at,
                format!(
                    "found `{}` for {what}, expected a whole number: the importer follows literal values only",
                    v.v
                ),
            )
        })
}

struct Engine {
    role: Role,
    dp: P<u64>,
    tp: P<u64>,
    /// `--prefill-context-parallel-size` above 1, as written.
    pcp: Option<P<u64>>,
    /// Input node indices, in rank order.
    nodes: Vec<usize>,
    kv: Option<KvIn>,
    /// Each node's `engine_id` as written (upstream gives a multi-node
    /// engine's nodes their own).
    node_ids: Vec<Option<P<u64>>>,
}

#[derive(Clone, Debug)]
struct KvIn {
    kind: P<ConnectorKind>,
    port: Option<P<u64>>,
    engine_id: Option<P<u64>>,
    extra: BTreeMap<String, P<Json>>,
    shapes: BTreeMap<String, (P<Json>, Loc)>,
    /// Top-level keys pd-dsl does not render (`kv_connector_module_path`,
    /// `kv_buffer_device`), with their values.
    dropped: Vec<(String, Json)>,
    /// `AscendStoreConnector`'s extra config, when a MultiConnector chains
    /// it after the PD connector (a KV pool).
    store: Option<P<serde_json::Map<String, Json>>>,
}

/// The deployment as a spec, with the errors the build went on after
/// (empty: the import succeeds).
pub(crate) type Built = (Imported, Vec<(Loc, String)>);

pub(crate) fn build(
    mut d: Deployment,
    mut map: SourceMap,
    inputs: &[Input],
    opts: &Options,
) -> Result<Built, (SourceMap, Loc, String)> {
    match build_inner(&mut d, &mut map, inputs, opts) {
        Ok((spec, ranks)) => Ok((
            Imported {
                proxy: spec.proxy.as_ref().and(d.proxy_command),
                spec,
                map,
                notes: d.notes,
                ranks,
            },
            d.errors,
        )),
        Err((at, m)) => Err((map, at, m)),
    }
}

fn build_inner(
    d: &mut Deployment,
    map: &mut SourceMap,
    inputs: &[Input],
    opts: &Options,
) -> Result<(LayoutSpec, Vec<InputRank>), Fail> {
    let file0 = Loc {
        file: 0,
        line: 0,
        column: 0,
    };
    // --- PCP ---------------------------------------------------------------
    // A PCP size above 1 is the topology's (`dp1tp8pcp2`): taken out of the
    // node's options; 1 stays an option as written.
    let mut node_pcp: Vec<Option<P<u64>>> = Vec::with_capacity(d.nodes.len());
    for n in &mut d.nodes {
        let mut found = None;
        let mut keep = Vec::with_capacity(n.args.len());
        for a in std::mem::take(&mut n.args) {
            if a.flag.v == PCP_FLAG && found.is_none() {
                let Some(v) = &a.value else {
                    return Err((
                        a.flag.at,
                        format!(
                            "found `{PCP_FLAG}` without a value, expected a size: it sets how many NPUs each rank spans (tp x pcp)"
                        ),
                    ));
                };
                let size = number(v, PCP_FLAG)?;
                if size.v > 1 {
                    found = Some(size);
                    continue;
                }
            }
            keep.push(a);
        }
        n.args = keep;
        node_pcp.push(found);
    }
    let pcp_v = |x: &Option<P<u64>>| x.as_ref().map_or(1, |p| p.v);

    let Some(first) = d.nodes.first() else {
        return Err((
            file0,
            "found no node that runs `vllm serve`, expected at least one: nothing to import".into(),
        ));
    };
    let mut s = |v: Loc| map.site(v);

    // --- model ---------------------------------------------------------
    let model_at = first.model.clone();
    for n in &d.nodes {
        if n.model.v != model_at.v {
            return Err((
                n.model.at,
                format!(
                    "found model `{}` here and `{}` on another node, expected one model per deployment",
                    n.model.v, model_at.v
                ),
            ));
        }
    }
    // A path equal to the table's default path names its model too.
    let by_path = || {
        tables::MODELS.iter().copied().find(|m| {
            m.default_path.trim_end_matches('/') == model_at.v.trim().trim_end_matches('/')
        })
    };
    let Some(model) = tables::model_by_hub_id(&model_at.v).or_else(by_path) else {
        let known: Vec<String> = tables::MODELS
            .iter()
            .flat_map(|m| m.hub_ids.iter().map(|h| format!("`{h}`")))
            .collect();
        return Err((
            model_at.at,
            format!(
                "found model `{}`, expected a model of the table (hub id, weights name or a path ending in one): known are {}",
                model_at.v,
                known.join(", ")
            ),
        ));
    };
    let model_path = if model_at.v.starts_with('/')
        && model_at.v.trim_end_matches('/') != model.default_path.trim_end_matches('/')
    {
        Some(Spanned::new(model_at.v.clone(), s(model_at.at)))
    } else {
        if !model_at.v.starts_with('/') {
            d.notes.push(Note {
                at: model_at.at,
                what: format!("model `{}` loaded from the hub", model_at.v),
                why: format!(
                    "pd-dsl serves weights from a path; the model table's is `{}`",
                    model.default_path
                ),
            });
        }
        None
    };

    // --- engines -----------------------------------------------------------
    let mut engines: Vec<Engine> = Vec::new();
    for (i, n) in d.nodes.iter().enumerate() {
        let kv = kv_of(n)?;
        let joins = engines.last().is_some_and(|e: &Engine| {
            let last = &d.nodes[e.nodes[e.nodes.len() - 1]];
            e.role == n.role
                && last.master.v == n.master.v
                && e.dp.v == n.dp.v
                && n.rank_start.v > 0
                && last.rank_start.v < n.rank_start.v
        });
        if joins {
            if let Some(e) = engines.last_mut() {
                if e.tp.v != n.tp.v {
                    return Err((
                        n.tp.at,
                        format!(
                            "found `--tensor-parallel-size {}` on a node of an engine whose first node says {}, expected one TP size per engine",
                            n.tp.v, e.tp.v
                        ),
                    ));
                }
                if pcp_v(&e.pcp) != pcp_v(&node_pcp[i]) {
                    return Err((
                        node_pcp[i].as_ref().map_or(n.at, |p| p.at),
                        format!(
                            "found `{PCP_FLAG} {}` on a node of an engine whose first node says {}, expected one PCP size per engine",
                            pcp_v(&node_pcp[i]),
                            pcp_v(&e.pcp)
                        ),
                    ));
                }
                if let (Some(a), Some(b)) = (&e.kv, &kv)
                    && a.port.as_ref().map(|x| x.v) != b.port.as_ref().map(|x| x.v)
                {
                    let at = b.port.as_ref().map_or(n.at, |x| x.at);
                    // The first node's port stands for the engine.
                    d.errors.push((
                        at,
                        format!(
                            "found `kv_port` {} on this node and {} on the engine's first node, expected one per engine: the engine's ranks take consecutive spans from one base",
                            b.port
                                .as_ref()
                                .map_or("none".to_owned(), |x| x.v.to_string()),
                            a.port
                                .as_ref()
                                .map_or("none".to_owned(), |x| x.v.to_string())
                        ),
                    ));
                }
                e.node_ids
                    .push(kv.as_ref().and_then(|k| k.engine_id.clone()));
                e.nodes.push(i);
            }
        } else {
            if n.rank_start.v != 0 {
                return Err((
                    n.rank_start.at,
                    format!(
                        "found DP rank start {} on a node with no node before it in its engine (DP master `{}`), expected 0: the engine's first node is missing",
                        n.rank_start.v, n.master.v
                    ),
                ));
            }
            engines.push(Engine {
                role: n.role,
                dp: n.dp.clone(),
                tp: n.tp.clone(),
                pcp: node_pcp[i].clone(),
                nodes: vec![i],
                node_ids: vec![kv.as_ref().and_then(|k| k.engine_id.clone())],
                kv,
            });
        }
    }

    // --- hardware ------------------------------------------------------------
    let comm_res = engines
        .iter()
        .filter_map(|e| e.kv.as_ref())
        .any(|k| k.extra.contains_key("ascend_local_comm_res_path"));
    let hw_id: String = match (&opts.hardware, &d.npus) {
        (Some(h), _) => h.clone(),
        (None, Some(npus)) => match npus.v {
            16 => "a3".into(),
            8 if comm_res => "ascend_950dt".into(),
            8 => "a2".into(),
            n => {
                return Err((
                    npus.at,
                    format!(
                        "found `npu_per_node: {n}`, expected 16 (Atlas 800 A3) or 8 (A2, 950DT): no other node kind is in the hardware table"
                    ),
                ));
            }
        },
        (None, None) => {
            let most = d
                .nodes
                .iter()
                .zip(&node_pcp)
                .map(|(n, pcp)| n.dp_local.v * n.tp.v * pcp_v(pcp))
                .max()
                .unwrap_or(0);
            if comm_res {
                "ascend_950dt".into()
            } else if most > 8 {
                "a3".into()
            } else {
                return Err((
                    first.at,
                    format!(
                        "found nodes using at most {most} NPUs, expected `--hardware a2|a3|ascend_950dt`: the scripts do not say which node kind they run on"
                    ),
                ));
            }
        }
    };
    let Some(hw) = tables::hardware(&hw_id) else {
        return Err((
            file0,
            format!(
                "found hardware `{hw_id}`, expected one of `a2`, `a3`, `ascend_950dt`{}",
                crate::rules::did_you_mean(&hw_id, tables::HARDWARE.iter().map(|h| h.id))
            ),
        ));
    };
    let npus = hw.npus_per_node;

    // --- ranks per node, node coverage --------------------------------------
    let mut groups: Vec<EngineGroup> = Vec::new();
    let mut order: Vec<usize> = Vec::new(); // engine indices in pd-dsl order
    for role in [Role::Prefill, Role::Decode, Role::Mixed] {
        order.extend((0..engines.len()).filter(|&i| engines[i].role == role));
    }
    let mut engine_rpn: Vec<u64> = vec![0; engines.len()];
    for (ei, e) in engines.iter().enumerate() {
        let firstn = &d.nodes[e.nodes[0]];
        let rpn = firstn.dp_local.v;
        let mut next = 0u64;
        for &ni in &e.nodes {
            let n = &d.nodes[ni];
            let want_local = rpn.min(e.dp.v.saturating_sub(next));
            if n.rank_start.v != next {
                return Err((
                    n.rank_start.at,
                    format!(
                        "found DP rank start {}, expected {next}: the nodes of an engine take consecutive rank ranges of {rpn}",
                        n.rank_start.v
                    ),
                ));
            }
            if n.dp_local.v != want_local {
                return Err((
                    n.dp_local.at,
                    format!(
                        "found {} local DP ranks, expected {want_local}: the engine's first node runs {rpn} and every node but the last runs as many",
                        n.dp_local.v
                    ),
                ));
            }
            next += n.dp_local.v;
        }
        if next != e.dp.v {
            let last = &d.nodes[e.nodes[e.nodes.len() - 1]];
            return Err((
                last.dp_local.at,
                format!(
                    "found ranks 0..{next} of `--data-parallel-size {}` (DP master `{}`), expected nodes for ranks {next}..{}: the engine's other nodes are missing",
                    e.dp.v, last.master.v, e.dp.v
                ),
            ));
        }
        engine_rpn[ei] = rpn;
    }
    for &ei in &order {
        let e = &engines[ei];
        let rpn = engine_rpn[ei];
        let default = default_ranks_per_node(
            u32::try_from(e.dp.v).unwrap_or(u32::MAX),
            u32::try_from(e.tp.v * pcp_v(&e.pcp)).unwrap_or(u32::MAX),
            npus,
        );
        let rpn_spec = (u64::from(default) != rpn).then(|| {
            let at = d.nodes[e.nodes[0]].dp_local.at;
            Spanned::new(rpn, s(at))
        });
        let same = groups.last_mut().filter(|g| {
            g.role.value == e.role
                && g.dp.value == e.dp.v
                && g.tp.value == e.tp.v
                && g.pcp() == pcp_v(&e.pcp)
                && g.ranks_per_node.as_ref().map(|r| r.value) == rpn_spec.as_ref().map(|r| r.value)
        });
        match same {
            Some(g) => g.count.value += 1,
            None => {
                let role_at = d.nodes[e.nodes[0]].at;
                groups.push(EngineGroup {
                    role: Spanned::new(e.role, s(role_at)),
                    count: Spanned::new(1, s(role_at)),
                    dp: Spanned::new(e.dp.v, s(e.dp.at)),
                    tp: Spanned::new(e.tp.v, s(e.tp.at)),
                    pcp: e.pcp.as_ref().map(|p| Spanned::new(p.v, s(p.at))),
                    ranks_per_node: rpn_spec,
                    shape_site: s(e.dp.at),
                });
            }
        }
    }

    // --- ports -------------------------------------------------------------------
    // One API port base and one DP RPC port for the layout (the first
    // node's); a PD role whose nodes all use another one gets its own
    // (`ports: { decode: { api, dp_rpc } }`); a node differing within its
    // role is reported.
    let api = first.api_port.clone();
    let mut dp_rpc: Option<P<u64>> = None;
    let mut role_api: BTreeMap<Role, P<u64>> = BTreeMap::new();
    let mut role_rpc: BTreeMap<Role, P<u64>> = BTreeMap::new();
    for n in d.nodes.iter().filter(|n| !n.headless) {
        let base = role_api.entry(n.role).or_insert(n.api_port.clone());
        if n.api_port.v != base.v {
            d.notes.push(Note {
                at: n.api_port.at,
                what: format!(
                    "API port base (`--port`) {} on one {} node, {} on the role's first",
                    n.api_port.v, n.role, base.v
                ),
                why: "pd-dsl starts every node's ranks of a role at one API port base".into(),
            });
        }
    }
    for n in &d.nodes {
        if let Some(r) = &n.dp_rpc {
            if dp_rpc.is_none() {
                dp_rpc = Some(r.clone());
            }
            let base = role_rpc.entry(n.role).or_insert(r.clone());
            if base.v != r.v {
                d.notes.push(Note {
                    at: r.at,
                    what: format!(
                        "`--data-parallel-rpc-port` {} on one {} node, {} on the role's first",
                        r.v, n.role, base.v
                    ),
                    why: "pd-dsl uses one DP RPC port per role (each engine has its own master)"
                        .into(),
                });
            }
        }
    }
    let role_ports = |role: Role, s: &mut dyn FnMut(Loc) -> crate::Site| {
        let a = role_api.get(&role).filter(|a| a.v != api.v);
        let r = role_rpc
            .get(&role)
            .filter(|r| dp_rpc.as_ref().is_some_and(|d| d.v != r.v));
        (a.is_some() || r.is_some()).then(|| crate::spec::RolePortsSpec {
            api: a.map(|a| Spanned::new(a.v, s(a.at))),
            dp_rpc: r.map(|r| Spanned::new(r.v, s(r.at))),
            site: a.or(r).map_or(crate::Site::NONE, |x| s(x.at)),
        })
    };
    let prefill_ports = role_ports(Role::Prefill, &mut s);
    let decode_ports = role_ports(Role::Decode, &mut s);
    // A single-node, single-rank mixed engine needs no DP RPC port; the
    // launcher passes one to every PD rank (rule `dp_rpc_port_required`).
    let needs_rpc = engines
        .iter()
        .any(|e| e.dp.v > 1 || e.nodes.len() > 1 || e.role != Role::Mixed);
    // No node passes one: every engine runs at vLLM's default, which
    // pd-dsl's launcher must pass (rule `dp_rpc_port_required`).
    let passes_rpc = d.nodes.iter().any(|n| {
        n.rank_args
            .iter()
            .any(|a| a.flag.v == "--data-parallel-rpc-port")
    });
    // pd-dsl passes it to every PD rank (`$5` of the template).
    if let Some(n) = d.nodes.iter().find(|n| {
        n.role != Role::Mixed
            && !n
                .rank_args
                .iter()
                .any(|a| a.flag.v == "--data-parallel-address")
    }) {
        d.notes.push(Note {
            at: n.at,
            what: "no `--data-parallel-address` (vLLM's default)".into(),
            why: "pd-dsl passes each engine's DP master address to every rank".into(),
        });
    }
    // An address that is a bare number (upstream's `--data-parallel-address
    // 12321`, a port where the address goes) is replaced by the master's.
    if let Some(a) = d.nodes.iter().find_map(|n| {
        n.rank_args.iter().find(|a| {
            a.flag.v == "--data-parallel-address"
                && a.value
                    .as_ref()
                    .is_some_and(|v| !v.v.is_empty() && v.v.bytes().all(|b| b.is_ascii_digit()))
        })
    }) {
        let v = a.value.as_ref().map_or("", |v| v.v.as_str());
        d.notes.push(Note {
            at: a.value.as_ref().map_or(a.flag.at, |v| v.at),
            what: format!("`--data-parallel-address {v}` is no address (a port number?)"),
            why: "pd-dsl passes each engine's DP master address to every rank".into(),
        });
    }
    // `--data-parallel-rank` on a DP 1 engine turns on external load
    // balancing, which vLLM refuses at DP 1 (vllm/config/parallel.py
    // `ParallelConfig._validate_parallel_config`, every vLLM of the image
    // table); pd-dsl leaves it out there.
    if let Some(a) = d
        .nodes
        .iter()
        .filter(|n| n.role != Role::Mixed && n.dp.v == 1)
        .find_map(|n| {
            n.rank_args
                .iter()
                .find(|a| a.flag.v == "--data-parallel-rank")
        })
    {
        d.notes.push(Note {
            at: a.flag.at,
            what: "`--data-parallel-rank` on a DP 1 engine, which vLLM refuses (\"data_parallel_external_lb can only be set when data_parallel_size > 1\", vllm/config/parallel.py)".into(),
            why: "pd-dsl passes no DP rank to a DP 1 engine, so it starts".into(),
        });
    }
    if let Some(r) = &dp_rpc
        && let Some(n) = d.nodes.iter().find(|n| {
            !n.rank_args
                .iter()
                .any(|a| a.flag.v == "--data-parallel-rpc-port")
        })
    {
        d.notes.push(Note {
            at: n.at,
            what: format!(
                "no `--data-parallel-rpc-port` on a {} node (vLLM's default {VLLM_DP_RPC_PORT} applies there)",
                n.role
            ),
            why: format!("pd-dsl passes the layout's DP RPC port {} to every rank", r.v),
        });
    }
    // The rule asks for one where the launcher runs (PD) or an engine spans
    // nodes.
    let rule_needs_rpc = engines
        .iter()
        .any(|e| e.role != Role::Mixed || e.nodes.len() > 1);
    if dp_rpc.is_none() && rule_needs_rpc && !passes_rpc {
        d.notes.push(Note {
            at: first.at,
            what: format!(
                "no `--data-parallel-rpc-port` (vLLM's default {VLLM_DP_RPC_PORT} applies)"
            ),
            why: "pd-dsl passes the DP RPC port to every rank; the layout states vLLM's default"
                .into(),
        });
        dp_rpc = Some(p(VLLM_DP_RPC_PORT, first.at));
    }
    let ports = PortsSpec {
        api: Some(Spanned::new(api.v, s(api.at))),
        dp_rpc: dp_rpc
            .filter(|_| needs_rpc)
            .map(|r| Spanned::new(r.v, s(r.at))),
        prefill: prefill_ports,
        decode: decode_ports,
        site: s(api.at),
    };

    // --- connector, engine ids ---------------------------------------------------
    let pd = engines.iter().any(|e| e.role != Role::Mixed);
    let mut connector: Option<ConnectorSpec> = None;
    let mut connector_at = file0;
    let mut engine_ids: Option<EngineIdsSpec> = None;
    if pd {
        let mut kind: Option<P<ConnectorKind>> = None;
        let mut ports_by_role: BTreeMap<Role, Vec<Spanned<u64>>> = BTreeMap::new();
        let mut ids_by_role: BTreeMap<Role, Vec<EngineId>> = BTreeMap::new();
        let mut ids_differ = false;
        let mut extra: BTreeMap<String, Spanned<Json>> = BTreeMap::new();
        let mut role_index: BTreeMap<Role, usize> = BTreeMap::new();
        for &ei in &order {
            let e = &engines[ei];
            let at = d.nodes[e.nodes[0]].at;
            let Some(kv) = &e.kv else {
                return Err((
                    at,
                    format!(
                        "found a {} engine without `--kv-transfer-config`, expected one on every engine of a PD deployment",
                        e.role
                    ),
                ));
            };
            match &kind {
                None => kind = Some(kv.kind.clone()),
                Some(k) if k.v != kv.kind.v => {
                    return Err((
                        kv.kind.at,
                        format!(
                            "found `{}` here and `{}` on another engine, expected one connector per deployment",
                            kv.kind.v.kv_connector(),
                            k.v.kv_connector()
                        ),
                    ));
                }
                Some(_) => {}
            }
            let Some(port) = &kv.port else {
                return Err((
                    kv.kind.at,
                    "found a kv-transfer-config without `kv_port`, expected one: each engine's handshake span starts there".into(),
                ));
            };
            ports_by_role
                .entry(e.role)
                .or_default()
                .push(Spanned::new(port.v, s(port.at)));
            let ri = role_index.entry(e.role).or_insert(0);
            let derived = derived_engine_id(e.role, *ri);
            *ri += 1;
            let one = |x: &Option<P<u64>>, s: &mut dyn FnMut(Loc) -> crate::Site| match x {
                Some(id) => Spanned::new(id.v, s(id.at)),
                None => Spanned::new(derived.unwrap_or(0), s(at)),
            };
            let per_node = e
                .node_ids
                .iter()
                .any(|x| x.as_ref().map(|x| x.v) != e.node_ids[0].as_ref().map(|x| x.v));
            let id = if per_node {
                ids_differ = true;
                EngineId::PerNode(e.node_ids.iter().map(|x| one(x, &mut s)).collect())
            } else {
                if kv
                    .engine_id
                    .as_ref()
                    .is_some_and(|id| Some(id.v) != derived)
                {
                    ids_differ = true;
                }
                EngineId::One(one(&kv.engine_id, &mut s))
            };
            ids_by_role.entry(e.role).or_default().push(id);
            for (k, v) in &kv.extra {
                match extra.get(k) {
                    Some(prev) if prev.value != v.v => {
                        return Err((
                            v.at,
                            format!(
                                "found `kv_connector_extra_config.{k}` = {} here and {} on another engine, expected one value: the extra config is identical on every engine",
                                v.v, prev.value
                            ),
                        ));
                    }
                    Some(_) => {}
                    None => {
                        extra.insert(k.clone(), Spanned::new(v.v.clone(), s(v.at)));
                    }
                }
            }
            // The prefill/decode shapes are derived: compare.
            for (shape_role, (shape, key_at)) in &kv.shapes {
                let want = engines
                    .iter()
                    .find(|x| x.role.as_str() == shape_role)
                    .map(|x| serde_json::json!({ "dp_size": x.dp.v, "tp_size": x.tp.v }));
                let same = want.as_ref().is_some_and(|w| {
                    w.get("dp_size") == shape.v.get("dp_size")
                        && w.get("tp_size") == shape.v.get("tp_size")
                });
                if !same {
                    d.notes.push(Note {
                        at: *key_at,
                        what: format!(
                            "`--kv-transfer-config` key `kv_connector_extra_config.{shape_role}` is {}",
                            shape.v
                        ),
                        why: match want {
                            Some(w) => format!(
                                "pd-dsl derives {w} from the topology: a wrong shape makes the connector compute the peer's ports from the wrong rank layout"
                            ),
                            None => format!("the deployment has no {shape_role} engine"),
                        },
                    });
                }
            }
        }
        // What one engine's kv-transfer-config says and pd-dsl does not
        // render, or renders on every engine.
        for &ei in &order {
            let e = &engines[ei];
            let Some(kv) = &e.kv else { continue };
            for (k, v) in &kv.dropped {
                let what = format!("`--kv-transfer-config` key `{k}` ({v}) dropped");
                if !d.notes.iter().any(|n| n.what == what) {
                    d.notes.push(Note {
                        at: kv.kind.at,
                        what,
                        why: format!(
                            "pd-dsl renders `kv_connector`, `kv_role`, `kv_port`, `engine_id` and `kv_connector_extra_config`; `{}` is found by its name",
                            kv.kind.v.kv_connector()
                        ),
                    });
                }
            }
            for k in extra.keys() {
                if !kv.extra.contains_key(k) {
                    let what = format!(
                        "`--kv-transfer-config` key `kv_connector_extra_config.{k}` set on some engines, not on this {} engine",
                        e.role
                    );
                    if !d.notes.iter().any(|n| n.what == what) {
                        d.notes.push(Note {
                            at: kv.kind.at,
                            what,
                            why: "pd-dsl renders one extra config for every engine".into(),
                        });
                    }
                }
            }
        }
        let pool = pool_of(d.pool.take(), &mut d.notes, &engines, &order, &mut s)?;
        let kind = kind.unwrap_or(p(ConnectorKind::MooncakeV1, first.at));
        let collapse = |v: Vec<Spanned<u64>>| -> Vec<Spanned<u64>> {
            if v.len() > 1 && v.iter().all(|x| x.value == v[0].value) {
                v.into_iter().take(1).collect()
            } else {
                v
            }
        };
        let kind_site = s(kind.at);
        connector_at = kind.at;
        connector = Some(ConnectorSpec {
            kind: Spanned::new(kind.v, kind_site),
            kv_port: KvPorts {
                prefill: collapse(ports_by_role.remove(&Role::Prefill).unwrap_or_default()),
                decode: collapse(ports_by_role.remove(&Role::Decode).unwrap_or_default()),
            },
            extra,
            pool,
            site: kind_site,
        });
        if ids_differ {
            engine_ids = Some(EngineIdsSpec {
                prefill: ids_by_role.remove(&Role::Prefill).unwrap_or_default(),
                decode: ids_by_role.remove(&Role::Decode).unwrap_or_default(),
                site: kind_site,
            });
        }
    }

    // --- proxy -------------------------------------------------------------------
    let proxy = if pd {
        Some(match &d.proxy {
            Some(px) => {
                let pairing = connector
                    .as_ref()
                    .map(|c| c.kind.value.proxy_script())
                    .unwrap_or(ProxyScript::LoadBalance);
                let prefill_ranks: u64 = engines
                    .iter()
                    .filter(|e| e.role == Role::Prefill)
                    .map(|e| e.dp.v)
                    .sum();
                let decode_ranks: u64 = engines
                    .iter()
                    .filter(|e| e.role == Role::Decode)
                    .map(|e| e.dp.v)
                    .sum();
                if px.prefill_endpoints as u64 != prefill_ranks
                    || px.decode_endpoints as u64 != decode_ranks
                {
                    d.notes.push(Note {
                        at: px.port.at,
                        what: format!(
                            "the proxy lists {} prefill and {} decode endpoints",
                            px.prefill_endpoints, px.decode_endpoints
                        ),
                        why: format!(
                            "pd-dsl derives {prefill_ranks} and {decode_ranks}: every rank exactly once, or requests miss ranks"
                        ),
                    });
                }
                ProxySpec {
                    port: Spanned::new(px.port.v, s(px.port.at)),
                    script: (px.script.v != pairing)
                        .then(|| Spanned::new(px.script.v, s(px.script.at))),
                    site: s(px.port.at),
                }
            }
            // The e2e harness starts the load-balance proxy on node 0, port
            // 1999 (tests/e2e/nightly/multi_node/external_dp/scripts/
            // external_dp_config.py), whatever the connector.
            None => {
                if let (Some(c), Some(cmd)) = (&connector, &d.proxy_command) {
                    let pairing = c.kind.value.proxy_script();
                    if cmd.script != pairing.file_name() {
                        d.notes.push(Note {
                            at: connector_at,
                            what: format!("the e2e runner starts `{}`", cmd.script),
                            why: format!(
                                "pd-dsl starts `{}`: `{}` pairs with it (rule `connector_proxy_pairing`)",
                                pairing.file_name(),
                                c.kind.value.kv_connector()
                            ),
                        });
                    }
                }
                ProxySpec {
                    port: Spanned::bare(1999),
                    script: None,
                    site: crate::Site::NONE,
                }
            }
        })
    } else {
        None
    };
    // The proxy balances over its lists in order; pd-dsl derives them,
    // every rank once, in node order, then port.
    if let (true, Some(cmd)) = (pd, &d.proxy_command) {
        let at = d.proxy.as_ref().map_or(connector_at, |px| px.port.at);
        // Each engine's DP master address as the input names it, with its
        // node (an address two engines name stands for neither).
        let mut masters: BTreeMap<&str, Option<usize>> = BTreeMap::new();
        for e in &engines {
            let first = e.nodes[0];
            masters
                .entry(d.nodes[first].master.v.as_str())
                .and_modify(|n| *n = None)
                .or_insert(Some(first));
        }
        let masters: BTreeMap<&str, usize> = masters
            .into_iter()
            .filter_map(|(a, n)| n.map(|n| (a, n)))
            .collect();
        let mut late = Vec::new();
        for (role, hosts_flag, ports_flag) in [
            (Role::Prefill, "--prefiller-hosts", "--prefiller-ports"),
            (Role::Decode, "--decoder-hosts", "--decoder-ports"),
        ] {
            let derived: Vec<(usize, u64)> = order
                .iter()
                .map(|&ei| &engines[ei])
                .filter(|e| e.role == role)
                .flat_map(|e| e.nodes.iter())
                .flat_map(|&ni| {
                    let n = &d.nodes[ni];
                    (0..n.dp_local.v).map(move |l| (ni, n.api_port.v + l))
                })
                .collect();
            let list = |f: &str| {
                cmd.options
                    .iter()
                    .find(|(flag, _)| flag == f)
                    .map_or(&[][..], |(_, v)| v.as_slice())
            };
            let (hosts, ports) = (list(hosts_flag), list(ports_flag));
            if hosts.len() != derived.len() || ports.len() != derived.len() {
                continue; // reported above: not one entry per rank
            }
            if let Some(i) = out_of_order(hosts, ports, &derived, &masters) {
                late.push(Note {
                    at,
                    what: format!(
                        "the proxy lists the {role} endpoints out of node order (entry {}: `{}:{}`)",
                        i + 1,
                        hosts[i],
                        ports[i]
                    ),
                    why: "pd-dsl lists every rank once, in node order, then port: the proxy balances over its lists in that order".into(),
                });
            }
        }
        d.notes.extend(late);
    }

    // --- serve settings per role ----------------------------------------------------
    let mut roles: BTreeMap<Role, ServeSpec> = BTreeMap::new();
    let mut served: Option<P<String>> = None;
    // The layout's node index of each input node: engines in pd-dsl order,
    // each engine's nodes in order (as the ranks below are numbered).
    let mut layout_index: BTreeMap<usize, u32> = BTreeMap::new();
    for &ei in &order {
        for &ni in &engines[ei].nodes {
            let next = layout_index.len() as u32;
            layout_index.insert(ni, next);
        }
    }
    let mut per_node: BTreeMap<u32, ServeSpec> = BTreeMap::new();
    for role in [Role::Prefill, Role::Decode, Role::Mixed] {
        let nodes: Vec<(usize, &NodeIn)> = d
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.role == role)
            .collect();
        if nodes.is_empty() {
            continue;
        }
        // Each node's settings; what every node of the role sets alike is
        // the role's, the rest each node's own (`nodes:`), as upstream runs
        // one `vllm serve` per node.
        let mut blocks: BTreeMap<u32, ServeSpec> = BTreeMap::new();
        let mut notes = Vec::new();
        for (ni, n) in &nodes {
            let block = serve_block(n, model, &mut served, &mut notes, &mut s)?;
            blocks.insert(layout_index.get(ni).copied().unwrap_or(*ni as u32), block);
        }
        for note in notes {
            if !d.notes.iter().any(|x| x.what == note.what) {
                d.notes.push(note);
            }
        }
        let block = factor_common(&mut blocks);
        for (node, b) in blocks {
            if !b.is_empty() {
                per_node.insert(node, b);
            }
        }
        roles.insert(role, block);
    }
    let serve = factor_common(&mut roles);
    // Without `--served-model-name` vLLM serves the model under the model
    // argument; pd-dsl always passes one (a hub id is no valid served name,
    // rule `served_name_format`), so clients must ask for another name.
    if served.is_none() && model_at.v != model.served_name {
        d.notes.push(Note {
            at: model_at.at,
            what: format!(
                "no `--served-model-name` (vLLM serves the model as `{}`)",
                model_at.v
            ),
            why: format!(
                "pd-dsl passes the model table's `--served-model-name {}`: clients ask for that name",
                model.served_name
            ),
        });
    }
    let served_model_name = served
        .filter(|x| x.v != model.served_name)
        .map(|x| Spanned::new(x.v, s(x.at)));

    // --- identity -----------------------------------------------------------------
    let image_tag = opts
        .image
        .clone()
        .or_else(|| {
            tables::IMAGES
                .iter()
                .rev()
                .find(|i| i.reference(hw).is_some())
                .map(|i| i.tag.to_owned())
        })
        .unwrap_or_default();
    let recorded = opts.recorded.clone().unwrap_or_else(|| {
        tables::image(&image_tag)
            .map(|i| i.date.to_owned())
            .unwrap_or_else(|| "1970-01-01".into())
    });
    let name = opts.name.clone().unwrap_or_else(|| {
        // A script set is named after its directory, a config after its file.
        let first = inputs.first().map(|i| i.name.as_str()).unwrap_or_default();
        let mut parts = first.rsplit('/');
        let file = parts.next().unwrap_or(first);
        let stem = match parts.next() {
            Some(dir) if inputs.len() > 1 && !dir.is_empty() && dir != "." => dir.to_owned(),
            // The file name without its extension (`DeepSeek_V3.1T_PD.yaml`
            // → `deepseek_v3.1t_pd`, not `deepseek_v3`).
            _ => file
                .rsplit_once('.')
                .map_or(file, |(stem, _)| stem)
                .to_owned(),
        };
        let clean: String = stem
            .to_ascii_lowercase()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        // A layout name part starts with a letter or digit (`.tmpXYZ`).
        let clean = clean
            .trim_start_matches(|c: char| !c.is_ascii_alphanumeric())
            .trim_end_matches('-');
        format!(
            "imported/{}",
            if clean.is_empty() { "layout" } else { clean }
        )
    });
    let spec = LayoutSpec {
        summary: vec![format!(
            "Imported from {}.",
            inputs
                .iter()
                .map(|i| format!("`{}`", i.name))
                .collect::<Vec<_>>()
                .join(", ")
        )],
        name: Spanned::bare(name),
        model: Spanned::new(model.id.to_owned(), s(model_at.at)),
        hardware: HardwareSpec::All(Spanned::bare(hw.id.to_owned())),
        image: Spanned::bare(image_tag),
        topology: groups,
        topology_site: s(first.at),
        connector,
        ports,
        proxy,
        engine_ids,
        model_path,
        served_model_name,
        serve,
        roles,
        nodes: per_node,
        provenance: ProvenanceSpec {
            recorded: Spanned::bare(recorded),
            derived_from: None,
            sources: inputs
                .iter()
                .map(|i| Spanned::bare(format!("imported from {}", i.name)))
                .collect(),
            refresh: Vec::new(),
        },
        figures: d
            .figures
            .iter()
            .map(|(at, metric, value, context)| FigureSpec {
                metric: Spanned::new(metric.clone(), s(*at)),
                value: Spanned::new(value.clone(), s(*at)),
                context: Spanned::new(context.clone(), s(*at)),
            })
            .collect(),
        bench: d.bench.as_ref().map(|(at, b)| BenchSpec {
            input_len: Spanned::new(b.input_len, s(*at)),
            output_len: Spanned::new(b.output_len, s(*at)),
            num_prompts: Spanned::new(b.num_prompts, s(*at)),
            request_rate: b.request_rate.clone().map(|r| Spanned::new(r, s(*at))),
            max_concurrency: b.max_concurrency.map(|c| Spanned::new(c, s(*at))),
        }),
        ..LayoutSpec::default()
    };

    // --- the input's ranks, in pd-dsl node order -------------------------------------
    let mut ranks = Vec::new();
    let mut node_index = 0usize;
    for &ei in &order {
        let e = &engines[ei];
        for &ni in &e.nodes {
            let n = &d.nodes[ni];
            for local in 0..n.dp_local.v {
                ranks.push(input_rank(n, node_index, local, e.kv.is_some()));
            }
            node_index += 1;
        }
    }
    Ok((spec, ranks))
}

fn input_rank(n: &NodeIn, node: usize, local: u64, _pd: bool) -> InputRank {
    let mut options: Vec<(String, Option<String>)> = n
        .rank_args
        .iter()
        .map(|a| {
            let value = a.value.as_ref().map(|v| {
                if v.v.contains('$') {
                    resolve_rank_value(n, &a.flag.v, local).unwrap_or_else(|| v.v.clone())
                } else {
                    v.v.clone()
                }
            });
            (a.flag.v.clone(), value)
        })
        .collect();
    options.extend(
        n.args
            .iter()
            .map(|a| (a.flag.v.clone(), a.value.as_ref().map(|v| v.v.clone()))),
    );
    let env = n
        .env
        .iter()
        .filter(|(k, _)| !DERIVED_ENV.contains(&k.v.as_str()))
        .map(|(k, v)| (k.v.clone(), v.v.clone()))
        .collect();
    InputRank {
        node,
        input_node: n.index,
        dp_rank: n.rank_start.v + local,
        model: n.model.v.clone(),
        options,
        env,
    }
}

/// What a placeholder of a per-rank flag stands for at local rank `local`:
/// the value `launch_online_dp.py` (`$2..$7`, facts §1.3) or the e2e runner
/// (`${DP_RANK}`, `$SERVER_PORT`, ...) passes, from the node's facts.
fn resolve_rank_value(n: &NodeIn, flag: &str, local: u64) -> Option<String> {
    Some(match flag {
        "--port" => (n.api_port.v + local).to_string(),
        "--data-parallel-size" => n.dp.v.to_string(),
        "--data-parallel-rank" => (n.rank_start.v + local).to_string(),
        "--data-parallel-address" => n.master.v.clone(),
        "--data-parallel-rpc-port" => n.dp_rpc.as_ref()?.v.to_string(),
        "--tensor-parallel-size" => n.tp.v.to_string(),
        "--data-parallel-size-local" => n.dp_local.v.to_string(),
        "--data-parallel-start-rank" => n.rank_start.v.to_string(),
        _ => return None,
    })
}

/// The first entry of a proxy list (`hosts[i]:ports[i]`) that is not the
/// rank pd-dsl derives at that place (`derived`: input node, API port). A
/// host is a node: the DP master's address names its node, any other
/// address the node it first stands at; an address naming two nodes, or a
/// node named by two addresses, is out of order.
fn out_of_order(
    hosts: &[String],
    ports: &[String],
    derived: &[(usize, u64)],
    masters: &BTreeMap<&str, usize>,
) -> Option<usize> {
    let mut host_node: BTreeMap<&str, usize> = masters.clone();
    let mut node_host: BTreeMap<usize, &str> = masters.iter().map(|(h, n)| (*n, *h)).collect();
    for (i, ((h, p), (n, port))) in hosts.iter().zip(ports).zip(derived).enumerate() {
        if p.parse::<u64>().ok() != Some(*port) {
            return Some(i);
        }
        match (host_node.get(h.as_str()), node_host.get(n)) {
            (Some(m), _) if m != n => return Some(i),
            (None, Some(_)) => return Some(i),
            (None, None) => {
                host_node.insert(h, *n);
                node_host.insert(*n, h);
            }
            _ => {}
        }
    }
    None
}

fn kv_of(n: &NodeIn) -> Result<Option<KvIn>, Fail> {
    let Some(arg) = n.args.iter().find(|a| a.flag.v == "--kv-transfer-config") else {
        return Ok(None);
    };
    let Some(v) = &arg.value else {
        return Err((
            arg.flag.at,
            "found `--kv-transfer-config` without a value, expected a JSON object".into(),
        ));
    };
    let json: Json = serde_json::from_str(&v.v).map_err(|e| {
        (
            v.at,
            format!(
                "found a `--kv-transfer-config` that is not JSON ({e}), expected a JSON object"
            ),
        )
    })?;
    kv_of_json(n, &json, v)
}

/// [`kv_of`] on the parsed JSON (a MultiConnector's PD child too).
fn kv_of_json(n: &NodeIn, json: &Json, v: &P<String>) -> Result<Option<KvIn>, Fail> {
    let Json::Object(obj) = json else {
        return Err((
            v.at,
            "found a `--kv-transfer-config` that is not a JSON object, expected `{\"kv_connector\": ..}`".into(),
        ));
    };
    let name = obj
        .get("kv_connector")
        .and_then(Json::as_str)
        .unwrap_or_default();
    let Some(kind) = ConnectorKind::from_kv_connector(name) else {
        let known: Vec<&str> = ConnectorKind::ALL
            .iter()
            .map(|k| k.kv_connector())
            .collect();
        // vLLM's MultiConnector chains connectors: upstream's KV-pool runs
        // chain a Mooncake PD connector and `AscendStoreConnector`.
        if name == "MultiConnector" {
            return multi_connector(n, obj, v);
        }
        return Err((
            v.at,
            format!(
                "found `kv_connector` `{name}`, expected one of `{}`{}",
                known.join("`, `"),
                crate::rules::did_you_mean(name, known.iter().copied())
            ),
        ));
    };
    let want_role = n.role.kv_role();
    let role = obj.get("kv_role").and_then(Json::as_str);
    if role.is_some() && role != want_role {
        return Err((
            v.at,
            format!(
                "found `kv_role` `{}` on a {} node, expected `{}`: the routing and the connector disagree about the node's role",
                role.unwrap_or_default(),
                n.role,
                want_role.unwrap_or("none")
            ),
        ));
    }
    let num = |key: &str| -> Result<Option<P<u64>>, Fail> {
        match obj.get(key) {
            None => Ok(None),
            Some(Json::Number(x)) => x.as_u64().map(|x| Some(p(x, v.at))).ok_or((
                v.at,
                format!("found `{key}` = {x}, expected a whole number"),
            )),
            Some(Json::String(x)) => number(&p(x.clone(), v.at), &format!("`{key}`")).map(Some),
            Some(other) => Err((
                v.at,
                format!("found `{key}` = {other}, expected a number or a numeric string"),
            )),
        }
    };
    let port = num("kv_port")?;
    let engine_id = num("engine_id")?;
    let dropped: Vec<(String, Json)> = obj
        .iter()
        .filter(|(k, _)| {
            !matches!(
                k.as_str(),
                "kv_connector" | "kv_role" | "kv_port" | "engine_id" | "kv_connector_extra_config"
            )
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut extra = BTreeMap::new();
    let mut shapes = BTreeMap::new();
    if let Some(Json::Object(x)) = obj.get("kv_connector_extra_config") {
        for (k, val) in x {
            if k == "prefill" || k == "decode" {
                shapes.insert(k.clone(), (p(val.clone(), v.at), v.at));
            } else {
                extra.insert(k.clone(), p(val.clone(), v.at));
            }
        }
    }
    Ok(Some(KvIn {
        kind: p(kind, v.at),
        port,
        engine_id,
        extra,
        shapes,
        dropped,
        store: None,
    }))
}

/// The KV pool: `kv_pool:`'s service with the `AscendStoreConnector` every
/// engine chains after its PD connector (its extra config the same on
/// every engine of a role; what both roles share is `extra`).
fn pool_of(
    pool_in: Option<PoolIn>,
    notes: &mut Vec<Note>,
    engines: &[Engine],
    order: &[usize],
    s: &mut impl FnMut(Loc) -> crate::Site,
) -> Result<Option<PoolSpec>, Fail> {
    let mut by_role: BTreeMap<Role, P<serde_json::Map<String, Json>>> = BTreeMap::new();
    let mut without: Option<Loc> = None;
    let mut with: Option<Loc> = None;
    for &ei in order {
        let e = &engines[ei];
        let Some(kv) = &e.kv else { continue };
        let Some(store) = &kv.store else {
            without.get_or_insert(kv.kind.at);
            continue;
        };
        with.get_or_insert(store.at);
        match by_role.get(&e.role) {
            Some(prev) if prev.v != store.v => {
                return Err((
                    store.at,
                    format!(
                        "found `AscendStoreConnector` extra config {} here and {} on another {} engine, expected one per role: pd-dsl states the pool's settings per role",
                        Json::Object(store.v.clone()),
                        Json::Object(prev.v.clone()),
                        e.role
                    ),
                ));
            }
            Some(_) => {}
            None => {
                by_role.insert(e.role, store.clone());
            }
        }
    }
    let (Some(_), Some(pool_in)) = (with, pool_in.clone()) else {
        if let Some(at) = with {
            return Err((
                at,
                "found `AscendStoreConnector` in a MultiConnector without a `kv_pool:` service, expected `kv_pool: { type: .., ports, config }`: the store connector reaches the pool's service on node 0".into(),
            ));
        }
        if let Some(pool) = pool_in {
            notes.push(Note {
                at: pool.at,
                what: format!("`kv_pool` ({}) dropped", pool.backend.v),
                why: "no engine chains `AscendStoreConnector` after its PD connector: nothing uses the pool".into(),
            });
        }
        return Ok(None);
    };
    if let Some(at) = without {
        return Err((
            at,
            "found a PD connector without the KV pool's `AscendStoreConnector` here and a MultiConnector with it on another engine, expected one on every engine: pd-dsl states one pool for the deployment".into(),
        ));
    }
    let backend = pool_in.backend.v;
    for store in by_role.values() {
        // AscendStoreConnector's default (pool_scheduler.py
        // `extra_config.get("backend", "mooncake")`).
        let named = store
            .v
            .get("backend")
            .and_then(Json::as_str)
            .unwrap_or("mooncake");
        if !named.eq_ignore_ascii_case(backend.as_str()) {
            return Err((
                store.at,
                format!(
                    "found `AscendStoreConnector` backend `{named}` with a `kv_pool` of type `{backend}`, expected the same store: the connector would look for a service that does not run"
                ),
            ));
        }
        if store.v.get("backend").is_none() {
            notes.push(Note {
                at: store.at,
                what: "`AscendStoreConnector` without `backend` (its default `mooncake`)".into(),
                why: "pd-dsl writes the pool's backend on every engine".into(),
            });
        }
    }
    let empty = serde_json::Map::new();
    let pf = by_role.get(&Role::Prefill).map_or(&empty, |x| &x.v);
    let dc = by_role.get(&Role::Decode).map_or(&empty, |x| &x.v);
    let at_of = |r: Role| by_role.get(&r).map_or(pool_in.at, |x| x.at);
    let (pf_at, dc_at) = (at_of(Role::Prefill), at_of(Role::Decode));
    let mut extra = BTreeMap::new();
    let mut prefill = BTreeMap::new();
    let mut decode = BTreeMap::new();
    for (k, v) in pf {
        if k == "backend" {
            continue;
        }
        if dc.get(k) == Some(v) {
            extra.insert(k.clone(), Spanned::new(v.clone(), s(pf_at)));
        } else {
            prefill.insert(k.clone(), Spanned::new(v.clone(), s(pf_at)));
        }
    }
    for (k, v) in dc {
        if k != "backend" && pf.get(k) != Some(v) {
            decode.insert(k.clone(), Spanned::new(v.clone(), s(dc_at)));
        }
    }
    let ports = pool_in
        .ports
        .iter()
        .map(|(n, v)| (n.clone(), Spanned::new(v.v, s(v.at))))
        .collect();
    let config = pool_in
        .config
        .iter()
        .map(|(k, v)| (k.clone(), Spanned::new(v.v.clone(), s(v.at))))
        .collect();
    let backend_site = s(pool_in.backend.at);
    Ok(Some(PoolSpec {
        backend: Spanned::new(backend, backend_site),
        ports,
        config,
        extra,
        prefill,
        decode,
        site: backend_site,
    }))
}

/// A MultiConnector of a PD connector then `AscendStoreConnector`, each with
/// the node's `kv_role`: the PD connector as [`kv_of`] reads it, with the
/// store's extra config.
fn multi_connector(
    n: &NodeIn,
    obj: &serde_json::Map<String, Json>,
    v: &P<String>,
) -> Result<Option<KvIn>, Fail> {
    let children: Vec<&Json> = obj
        .get("kv_connector_extra_config")
        .and_then(|x| x.get("connectors"))
        .and_then(Json::as_array)
        .map(|cs| cs.iter().collect())
        .unwrap_or_default();
    let names: Vec<&str> = children
        .iter()
        .map(|c| c.get("kv_connector").and_then(Json::as_str).unwrap_or(""))
        .collect();
    let pd_names: Vec<&str> = ConnectorKind::ALL
        .iter()
        .map(|k| k.kv_connector())
        .collect();
    let shape_ok =
        names.len() == 2 && pd_names.contains(&names[0]) && names[1] == "AscendStoreConnector";
    if !shape_ok {
        return Err((
            v.at,
            format!(
                "found `kv_connector` `MultiConnector` chaining {}, expected a PD connector (`{}`) then `AscendStoreConnector`: that is the KV pool a pd-dsl layout states (`connector: .. {{ pool: .. }}`)",
                if names.is_empty() {
                    "no connectors".to_owned()
                } else {
                    format!("`{}`", names.join("`, `"))
                },
                pd_names.join("` | `")
            ),
        ));
    }
    let want = n.role.kv_role();
    for (what, c) in [
        ("`MultiConnector`", &Json::Object(obj.clone())),
        ("its PD connector", children[0]),
        ("`AscendStoreConnector`", children[1]),
    ] {
        let role = c.get("kv_role").and_then(Json::as_str);
        if role != want {
            return Err((
                v.at,
                format!(
                    "found `kv_role` {} on {what} of a {} node, expected `{}`: every connector of the chain plays the node's role",
                    role.map_or("missing".to_owned(), |r| format!("`{r}`")),
                    n.role,
                    want.unwrap_or("none")
                ),
            ));
        }
    }
    let extra_keys: Vec<&String> = obj
        .keys()
        .filter(|k| {
            !matches!(
                k.as_str(),
                "kv_connector" | "kv_role" | "kv_connector_extra_config"
            )
        })
        .collect();
    if let Some(k) = extra_keys.first() {
        return Err((
            v.at,
            format!(
                "found `{k}` on the `MultiConnector` itself, expected only `kv_connector`, `kv_role` and its `connectors`: pd-dsl puts each connector's settings on that connector"
            ),
        ));
    }
    let store = children[1];
    let unknown: Vec<&String> = store
        .as_object()
        .map(|m| {
            m.keys()
                .filter(|k| {
                    !matches!(
                        k.as_str(),
                        "kv_connector" | "kv_role" | "kv_connector_extra_config"
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    if let Some(k) = unknown.first() {
        return Err((
            v.at,
            format!(
                "found `{k}` on `AscendStoreConnector`, expected only `kv_connector`, `kv_role` and `kv_connector_extra_config`: pd-dsl renders those"
            ),
        ));
    }
    let extra = match store.get("kv_connector_extra_config") {
        None => serde_json::Map::new(),
        Some(Json::Object(m)) => m.clone(),
        Some(other) => {
            return Err((
                v.at,
                format!(
                    "found `AscendStoreConnector`'s `kv_connector_extra_config` = {other}, expected a JSON object"
                ),
            ));
        }
    };
    let inner = P {
        v: children[0].to_string(),
        at: v.at,
    };
    let mut kv = kv_of_json(n, children[0], &inner)?;
    if let Some(kv) = &mut kv {
        kv.store = Some(p(extra, v.at));
    }
    Ok(kv)
}

/// The role's settings from its first node's options and env.
fn serve_block(
    n: &NodeIn,
    model: &tables::Model,
    served: &mut Option<P<String>>,
    notes: &mut Vec<Note>,
    s: &mut impl FnMut(Loc) -> crate::Site,
) -> Result<ServeSpec, Fail> {
    let mut b = ServeSpec::default();
    for a in &n.args {
        let flag = a.flag.v.as_str();
        let val = || -> Result<&P<String>, Fail> {
            a.value.as_ref().ok_or((
                a.flag.at,
                format!("found `{flag}` without a value, expected one"),
            ))
        };
        let int = |v: &P<String>| number(v, &format!("`{flag}`"));
        let json = |v: &P<String>| -> Result<Json, Fail> {
            serde_json::from_str(&v.v).map_err(|e| {
                (
                    v.at,
                    format!(
                        "found a `{flag}` value that is not JSON ({e}), expected a JSON object"
                    ),
                )
            })
        };
        macro_rules! set_int {
            ($f:ident) => {{
                let v = int(val()?)?;
                b.$f = Some(Spanned::new(v.v, s(v.at)));
            }};
        }
        macro_rules! set_bool {
            ($f:ident, $b:expr) => {
                b.$f = Some(Spanned::new($b, s(a.flag.at)))
            };
        }
        match flag {
            "--kv-transfer-config" => {}
            "--max-model-len" => set_int!(max_model_len),
            "--max-num-batched-tokens" => set_int!(max_num_batched_tokens),
            "--max-num-seqs" => set_int!(max_num_seqs),
            "--block-size" => set_int!(block_size),
            "--seed" => set_int!(seed),
            "--gpu-memory-utilization" => {
                let v = val()?;
                b.gpu_memory_utilization = Some(Spanned::new(v.v.clone(), s(v.at)));
            }
            "--enable-expert-parallel" => set_bool!(expert_parallel, true),
            "--trust-remote-code" => set_bool!(trust_remote_code, true),
            "--async-scheduling" => set_bool!(async_scheduling, true),
            "--enable-prefix-caching" => set_bool!(prefix_caching, true),
            "--no-enable-prefix-caching" => set_bool!(prefix_caching, false),
            "--enforce-eager" => b.graph = Some(Spanned::new(GraphMode::Eager, s(a.flag.at))),
            "--served-model-name" => {
                let v = val()?;
                *served = Some(v.clone());
            }
            "--quantization" => {
                let v = val()?;
                if Some(v.v.as_str()) != model.quantization {
                    notes.push(Note {
                        at: v.at,
                        what: format!("`--quantization {}`", v.v),
                        why: format!(
                            "pd-dsl passes the model table's {} for `{}`",
                            model
                                .quantization
                                .map_or("none".to_owned(), |q| format!("`{q}`")),
                            model.id
                        ),
                    });
                }
            }
            "--compilation-config" => {
                let v = val()?;
                let j = json(v)?;
                let mode = j.get("cudagraph_mode").and_then(Json::as_str);
                let graph = mode.and_then(|m| {
                    [
                        GraphMode::FullDecodeOnly,
                        GraphMode::Full,
                        GraphMode::Piecewise,
                    ]
                    .into_iter()
                    .find(|g| g.cudagraph_mode() == Some(m))
                });
                match graph {
                    Some(g) => b.graph = Some(Spanned::new(g, s(v.at))),
                    None => {
                        return Err((
                            v.at,
                            format!(
                                "found `--compilation-config` {}, expected `cudagraph_mode` `FULL_DECODE_ONLY`, `FULL` or `PIECEWISE`: pd-dsl renders the graph mode from `graph:`",
                                v.v
                            ),
                        ));
                    }
                }
                // Capture sizes are the layout's `graph: MODE { capture_sizes }`.
                let sizes: Option<Vec<u64>> = j
                    .get("cudagraph_capture_sizes")
                    .and_then(Json::as_array)
                    .and_then(|a| a.iter().map(Json::as_u64).collect());
                if let Some(sizes) = &sizes {
                    b.capture_sizes = sizes.iter().map(|&n| Spanned::new(n, s(v.at))).collect();
                }
                if let Json::Object(o) = &j {
                    let rest: Vec<&String> = o
                        .keys()
                        .filter(|k| {
                            *k != "cudagraph_mode"
                                && !(sizes.is_some() && *k == "cudagraph_capture_sizes")
                        })
                        .collect();
                    if !rest.is_empty() {
                        notes.push(Note {
                            at: v.at,
                            what: format!(
                                "`--compilation-config` keys {} dropped",
                                rest.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                            ),
                            why: "pd-dsl renders only `cudagraph_mode` (from `graph:`); the rest is vLLM's default".into(),
                        });
                    }
                }
            }
            "--speculative-config" => {
                let v = val()?;
                let j = json(v)?;
                let method = j.get("method").and_then(Json::as_str);
                let tokens = j.get("num_speculative_tokens").and_then(Json::as_u64);
                let (Some(method), Some(tokens)) = (method, tokens) else {
                    return Err((
                        v.at,
                        format!(
                            "found `--speculative-config` {}, expected `method` and `num_speculative_tokens`",
                            v.v
                        ),
                    ));
                };
                let site = s(v.at);
                b.speculative = Some(SpeculativeSpec {
                    method: Spanned::new(method.to_owned(), site),
                    tokens: Spanned::new(tokens, site),
                    enforce_eager: j
                        .get("enforce_eager")
                        .and_then(Json::as_bool)
                        .map(|e| Spanned::new(e, site)),
                    site,
                });
                if let Json::Object(o) = &j {
                    let rest: Vec<&String> = o
                        .keys()
                        .filter(|k| {
                            !matches!(
                                k.as_str(),
                                "method" | "num_speculative_tokens" | "enforce_eager"
                            )
                        })
                        .collect();
                    if !rest.is_empty() {
                        notes.push(Note {
                            at: v.at,
                            what: format!(
                                "`--speculative-config` keys {} dropped",
                                rest.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                            ),
                            why: "pd-dsl renders `method`, `num_speculative_tokens` and `enforce_eager`".into(),
                        });
                    }
                }
            }
            "--additional-config" => {
                let v = val()?;
                let Json::Object(o) = json(v)? else {
                    return Err((
                        v.at,
                        "found an `--additional-config` that is not a JSON object, expected `{\"key\": ..}`".into(),
                    ));
                };
                for (k, x) in o {
                    b.additional_config.insert(k, Spanned::new(x, s(v.at)));
                }
            }
            _ => b.flags.push(FlagEntry {
                name: Spanned::new(flag.to_owned(), s(a.flag.at)),
                // A JSON value written over several lines is passed on one
                // (vLLM parses it alike; the round trip compares JSON as
                // JSON): a flag value holds no control characters.
                value: a.value.as_ref().map(|v| {
                    let text = match serde_json::from_str::<Json>(&v.v) {
                        Ok(j @ (Json::Object(_) | Json::Array(_))) if v.v.contains('\n') => {
                            j.to_string()
                        }
                        _ => v.v.clone(),
                    };
                    Spanned::new(Json::String(text), s(v.at))
                }),
            }),
        }
    }
    // pd-dsl binds every API server to all interfaces: the proxy on node 0
    // reaches the ranks of every node.
    for a in n.rank_args.iter().filter(|a| a.flag.v == "--host") {
        if let Some(v) = &a.value
            && v.v != "0.0.0.0"
            && !v.v.contains('$')
        {
            let what = format!("`--host {}`", v.v);
            if !notes.iter().any(|x| x.what == what) {
                notes.push(Note {
                    at: v.at,
                    what,
                    why: "pd-dsl passes `--host 0.0.0.0`: the proxy on node 0 reaches every node's ranks".into(),
                });
            }
        }
    }
    // Flags pd-dsl passes from the model table that the input leaves to
    // vLLM's default: the rendered command differs, so say so.
    let has = |f: &str| n.args.iter().any(|a| a.flag.v == f);
    for (flag, table) in [
        ("--quantization", model.quantization),
        ("--tokenizer-mode", model.tokenizer_mode),
    ] {
        let what = format!("no `{flag}` (vLLM's default)");
        if let Some(t) = table
            && !has(flag)
            && !notes.iter().any(|x| x.what == what)
        {
            notes.push(Note {
                at: n.model.at,
                what,
                why: format!(
                    "pd-dsl passes the model table's `{flag} {t}` for `{}`",
                    model.id
                ),
            });
        }
    }
    // Every proxy variable set, and set empty: `no_proxy` then has no
    // effect (curl and Python consult it only to bypass a proxy).
    let proxies_off = PROXY_ENV
        .iter()
        .all(|p| n.env.iter().any(|(k, v)| k.v == *p && v.v.is_empty()));
    for (k, v) in &n.env {
        if DERIVED_ENV.contains(&k.v.as_str()) {
            continue;
        }
        if proxies_off && k.v.eq_ignore_ascii_case("no_proxy") && v.v.contains('$') {
            let what = format!("env `{}={}`", k.v, v.v);
            if !notes.iter().any(|x| x.what == what) {
                notes.push(Note {
                    at: v.at,
                    what,
                    why: "dropped: it lists addresses known only at run time, which a pd-dsl env value cannot state, and has no effect, since the same env sets every proxy variable (`http_proxy`, `https_proxy`, `all_proxy`, either case) empty".into(),
                });
            }
            continue;
        }
        let value = env_value(&k.v, v)?;
        b.env.push(EnvEntry {
            name: Spanned::new(k.v.clone(), s(k.at)),
            value: Spanned::new(value, s(v.at)),
        });
    }
    Ok(b)
}

/// The proxy variables, both spellings curl and Python read.
pub const PROXY_ENV: &[&str] = &[
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
];

/// `dir:$NAME` (or `dir${NAME:+:$NAME}`) prepends to a path list; any other
/// reference is run-time state the importer cannot follow.
fn env_value(name: &str, v: &P<String>) -> Result<EnvValue, Fail> {
    let text = v.v.as_str();
    for suffix in [
        format!(":${name}"),
        format!(":${{{name}}}"),
        format!("${{{name}:+:${name}}}"),
        format!("${{{name}:+:${{{name}}}}}"),
    ] {
        if let Some(dir) = text.strip_suffix(suffix.as_str())
            && !dir.contains('$')
        {
            return Ok(EnvValue::Prepend {
                prepend: dir.to_owned(),
            });
        }
    }
    if text.contains("$(") || text.contains('`') {
        return Err((
            v.at,
            format!(
                "found env `{name}={text}`, a value computed at run time, expected a literal: the importer never runs commands"
            ),
        ));
    }
    if text.contains('$') {
        return Err((
            v.at,
            format!(
                "found env `{name}={text}`, which reads another variable, expected a literal or `dir:${name}` (a prepend): the importer cannot know that variable's value"
            ),
        ));
    }
    Ok(EnvValue::Literal(text.to_owned()))
}

/// Moves what every role sets alike into the common `serve` block.
fn factor_common<K: Ord>(roles: &mut BTreeMap<K, ServeSpec>) -> ServeSpec {
    let mut common = ServeSpec::default();
    if roles.len() < 2 {
        if let Some((_, only)) = roles.pop_first() {
            return only;
        }
        return common;
    }
    macro_rules! field {
        ($f:ident) => {{
            let first = roles.values().next().and_then(|b| b.$f.clone());
            if let Some(v) = first
                && roles
                    .values()
                    .all(|b| b.$f.as_ref().map(|x| &x.value) == Some(&v.value))
            {
                for b in roles.values_mut() {
                    b.$f = None;
                }
                common.$f = Some(v);
            }
        }};
    }
    field!(max_model_len);
    field!(max_num_batched_tokens);
    field!(max_num_seqs);
    field!(gpu_memory_utilization);
    field!(block_size);
    field!(seed);
    field!(expert_parallel);
    field!(trust_remote_code);
    field!(async_scheduling);
    field!(prefix_caching);
    // The graph mode and its capture sizes move together: sizes belong to
    // the block that sets their mode.
    let sizes = |b: &ServeSpec| b.capture_sizes.iter().map(|c| c.value).collect::<Vec<_>>();
    let graph0 = roles
        .values()
        .next()
        .map(|b| (b.graph.clone(), b.capture_sizes.clone()));
    if let Some((Some(g), caps)) = graph0
        && roles.values().all(|b| {
            b.graph.as_ref().map(|x| &x.value) == Some(&g.value)
                && sizes(b) == caps.iter().map(|c| c.value).collect::<Vec<_>>()
        })
    {
        for b in roles.values_mut() {
            b.graph = None;
            b.capture_sizes.clear();
        }
        common.graph = Some(g);
        common.capture_sizes = caps;
    }
    let spec0 = roles.values().next().and_then(|b| b.speculative.clone());
    if let Some(sp) = spec0
        && roles.values().all(|b| {
            b.speculative.as_ref().is_some_and(|x| {
                x.method.value == sp.method.value
                    && x.tokens.value == sp.tokens.value
                    && x.enforce_eager.as_ref().map(|e| e.value)
                        == sp.enforce_eager.as_ref().map(|e| e.value)
            })
        })
    {
        for b in roles.values_mut() {
            b.speculative = None;
        }
        common.speculative = Some(sp);
    }
    let keys: Vec<String> = roles
        .values()
        .next()
        .map(|b| b.additional_config.keys().cloned().collect())
        .unwrap_or_default();
    for k in keys {
        let v0 = roles
            .values()
            .next()
            .and_then(|b| b.additional_config.get(&k).cloned());
        if let Some(v0) = v0
            && roles
                .values()
                .all(|b| b.additional_config.get(&k).map(|x| &x.value) == Some(&v0.value))
        {
            for b in roles.values_mut() {
                b.additional_config.remove(&k);
            }
            common.additional_config.insert(k, v0);
        }
    }
    let env0: Vec<EnvEntry> = roles
        .values()
        .next()
        .map(|b| b.env.clone())
        .unwrap_or_default();
    for e in env0 {
        let everywhere = roles.values().all(|b| {
            b.env
                .iter()
                .any(|x| x.name.value == e.name.value && x.value.value == e.value.value)
        });
        if everywhere {
            for b in roles.values_mut() {
                b.env.retain(|x| x.name.value != e.name.value);
            }
            common.env.push(e);
        }
    }
    let flags0: Vec<FlagEntry> = roles
        .values()
        .next()
        .map(|b| b.flags.clone())
        .unwrap_or_default();
    for f in flags0 {
        let val = |x: &FlagEntry| x.value.as_ref().map(|v| v.value.clone());
        let everywhere = roles.values().all(|b| {
            b.flags
                .iter()
                .any(|x| x.name.value == f.name.value && val(x) == val(&f))
        });
        if everywhere {
            for b in roles.values_mut() {
                b.flags.retain(|x| x.name.value != f.name.value);
            }
            common.flags.push(f);
        }
    }
    common
}

#[cfg(test)]
mod tests {
    use super::normalise_flag;

    /// Short aliases read as the long flag vLLM's argument table defines
    /// them for (the embedded facts), so `-tp 8` sets the TP size and
    /// `-pcp 2` meets rule `parallel_groups_expressible`; other spellings
    /// keep their normalisation.
    #[test]
    fn short_aliases_are_vllm_s_long_flags() {
        let long = |raw: &str| normalise_flag(raw).0;
        assert_eq!(long("-tp"), "--tensor-parallel-size");
        assert_eq!(long("-dp"), "--data-parallel-size");
        assert_eq!(long("-pcp"), "--prefill-context-parallel-size");
        assert_eq!(long("-pp"), "--pipeline-parallel-size");
        assert_eq!(
            normalise_flag("-tp=4"),
            ("--tensor-parallel-size".to_owned(), Some("4".to_owned()))
        );
        assert_eq!(long("--max_model_len"), "--max-model-len");
        assert_eq!(long("-not-an-alias"), "--not-an-alias");
    }
}
