//! From what the front ends read (nodes with their serve options and env) to
//! a [`LayoutSpec`]: engines, topology, ports, connector, engine ids and
//! per-role settings. Values pd-dsl derives are compared, not copied;
//! values that differ are kept as overrides (engine ids, kv ports) or
//! reported as notes.

use super::{Imported, Input, InputRank, Loc, Note, Options, SourceMap};
use crate::placement::{default_ranks_per_node, derived_engine_id};
use crate::spec::{
    BenchSpec, ConnectorKind, ConnectorSpec, EngineGroup, EngineId, EngineIdsSpec, FigureSpec,
    HardwareSpec, Json, KvPorts, LayoutSpec, PortsSpec, ProvenanceSpec, ProxyScript, ProxySpec,
    Role, ServeSpec,
};
use crate::{Spanned, tables};
use std::collections::BTreeMap;

mod flags;
mod input;
mod kv;
mod ranks;
mod serve;

use flags::{DERIVED_ENV, PCP_FLAG, VLLM_DP_RPC_PORT};
pub(crate) use flags::{RANK_FLAGS, is_switch, normalise_flag, number};
pub(crate) use input::{Arg, BenchIn, Deployment, FigureIn, NodeIn, P, PoolIn, ProxyIn, p};
use kv::{kv_of, pool_of};
use ranks::{input_rank, out_of_order};
pub use serve::PROXY_ENV;
use serve::{factor_common, serve_block};

type Fail = (Loc, String);

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
