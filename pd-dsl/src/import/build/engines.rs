//! The input's nodes as engines: PCP sizes taken out of the options, nodes
//! joined into engines, each engine's rank ranges checked, and the
//! topology's engine groups.

use super::{Engine, Fail, NodeIn, P, PCP_FLAG, kv_of, number};
use crate::Spanned;
use crate::import::Loc;
use crate::placement::default_ranks_per_node;
use crate::spec::EngineGroup;

/// Each node's PCP size. A PCP size above 1 is the topology's
/// (`dp1tp8pcp2`): taken out of the node's options; 1 stays an option as
/// written.
pub(super) fn take_pcp(nodes: &mut [NodeIn]) -> Result<Vec<Option<P<u64>>>, Fail> {
    let mut node_pcp: Vec<Option<P<u64>>> = Vec::with_capacity(nodes.len());
    for n in nodes {
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
    Ok(node_pcp)
}

/// A PCP size as a number (none written: 1).
pub(super) fn pcp_v(x: &Option<P<u64>>) -> u64 {
    x.as_ref().map_or(1, |p| p.v)
}

/// The input's nodes joined into engines: a node joins the engine before
/// it when it continues that engine's ranks (same role, DP master and size).
pub(super) fn engines_of(
    nodes: &[NodeIn],
    node_pcp: &[Option<P<u64>>],
    errors: &mut Vec<Fail>,
) -> Result<Vec<Engine>, Fail> {
    let mut engines: Vec<Engine> = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let kv = kv_of(n)?;
        let joins = engines.last().is_some_and(|e: &Engine| {
            let last = &nodes[e.nodes[e.nodes.len() - 1]];
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
                    errors.push((
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
    Ok(engines)
}

/// Each engine's ranks per node, its nodes checked to cover its ranks in
/// consecutive ranges.
pub(super) fn ranks_per_node(nodes: &[NodeIn], engines: &[Engine]) -> Result<Vec<u64>, Fail> {
    let mut engine_rpn: Vec<u64> = vec![0; engines.len()];
    for (ei, e) in engines.iter().enumerate() {
        let firstn = &nodes[e.nodes[0]];
        let rpn = firstn.dp_local.v;
        let mut next = 0u64;
        for &ni in &e.nodes {
            let n = &nodes[ni];
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
            let last = &nodes[e.nodes[e.nodes.len() - 1]];
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
    Ok(engine_rpn)
}

/// The topology: engines in pd-dsl order (`order`), alike neighbours as
/// one group; ranks per node stated where they are not the default.
pub(super) fn topology(
    nodes: &[NodeIn],
    engines: &[Engine],
    order: &[usize],
    engine_rpn: &[u64],
    npus: u32,
    s: &mut impl FnMut(Loc) -> crate::Site,
) -> Vec<EngineGroup> {
    let mut groups: Vec<EngineGroup> = Vec::new();
    for &ei in order {
        let e = &engines[ei];
        let rpn = engine_rpn[ei];
        let default = default_ranks_per_node(
            u32::try_from(e.dp.v).unwrap_or(u32::MAX),
            u32::try_from(e.tp.v * pcp_v(&e.pcp)).unwrap_or(u32::MAX),
            npus,
        );
        let rpn_spec = (u64::from(default) != rpn).then(|| {
            let at = nodes[e.nodes[0]].dp_local.at;
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
                let role_at = nodes[e.nodes[0]].at;
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
    groups
}
