//! The layout's ports: the API port base and DP RPC port (per role where a
//! role's nodes use others), with notes on the DP flags pd-dsl passes.

use super::{Engine, NodeIn, P, VLLM_DP_RPC_PORT, p};
use crate::Spanned;
use crate::import::{Loc, Note};
use crate::spec::{PortsSpec, Role};
use std::collections::BTreeMap;

/// The layout's ports from the nodes' (`first`: the input's first node).
pub(super) fn ports_of(
    first: &NodeIn,
    nodes: &[NodeIn],
    notes: &mut Vec<Note>,
    engines: &[Engine],
    s: &mut impl FnMut(Loc) -> crate::Site,
) -> PortsSpec {
    // One API port base and one DP RPC port for the layout (the first
    // node's); a PD role whose nodes all use another one gets its own
    // (`ports: { decode: { api, dp_rpc } }`); a node differing within its
    // role is reported.
    let api = first.api_port.clone();
    let mut dp_rpc: Option<P<u64>> = None;
    let mut role_api: BTreeMap<Role, P<u64>> = BTreeMap::new();
    let mut role_rpc: BTreeMap<Role, P<u64>> = BTreeMap::new();
    for n in nodes.iter().filter(|n| !n.headless) {
        let base = role_api.entry(n.role).or_insert(n.api_port.clone());
        if n.api_port.v != base.v {
            notes.push(Note {
                at: n.api_port.at,
                what: format!(
                    "API port base (`--port`) {} on one {} node, {} on the role's first",
                    n.api_port.v, n.role, base.v
                ),
                why: "pd-dsl starts every node's ranks of a role at one API port base".into(),
            });
        }
    }
    for n in nodes {
        if let Some(r) = &n.dp_rpc {
            if dp_rpc.is_none() {
                dp_rpc = Some(r.clone());
            }
            let base = role_rpc.entry(n.role).or_insert(r.clone());
            if base.v != r.v {
                notes.push(Note {
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
    let prefill_ports = role_ports(Role::Prefill, s);
    let decode_ports = role_ports(Role::Decode, s);
    // A single-node, single-rank mixed engine needs no DP RPC port; the
    // launcher passes one to every PD rank (rule `dp_rpc_port_required`).
    let needs_rpc = engines
        .iter()
        .any(|e| e.dp.v > 1 || e.nodes.len() > 1 || e.role != Role::Mixed);
    // No node passes one: every engine runs at vLLM's default, which
    // pd-dsl's launcher must pass (rule `dp_rpc_port_required`).
    let passes_rpc = nodes.iter().any(|n| {
        n.rank_args
            .iter()
            .any(|a| a.flag.v == "--data-parallel-rpc-port")
    });
    // pd-dsl passes it to every PD rank (`$5` of the template).
    if let Some(n) = nodes.iter().find(|n| {
        n.role != Role::Mixed
            && !n
                .rank_args
                .iter()
                .any(|a| a.flag.v == "--data-parallel-address")
    }) {
        notes.push(Note {
            at: n.at,
            what: "no `--data-parallel-address` (vLLM's default)".into(),
            why: "pd-dsl passes each engine's DP master address to every rank".into(),
        });
    }
    // An address that is a bare number (upstream's `--data-parallel-address
    // 12321`, a port where the address goes) is replaced by the master's.
    if let Some(a) = nodes.iter().find_map(|n| {
        n.rank_args.iter().find(|a| {
            a.flag.v == "--data-parallel-address"
                && a.value
                    .as_ref()
                    .is_some_and(|v| !v.v.is_empty() && v.v.bytes().all(|b| b.is_ascii_digit()))
        })
    }) {
        let v = a.value.as_ref().map_or("", |v| v.v.as_str());
        notes.push(Note {
            at: a.value.as_ref().map_or(a.flag.at, |v| v.at),
            what: format!("`--data-parallel-address {v}` is no address (a port number?)"),
            why: "pd-dsl passes each engine's DP master address to every rank".into(),
        });
    }
    // `--data-parallel-rank` on a DP 1 engine turns on external load
    // balancing, which vLLM refuses at DP 1 (vllm/config/parallel.py
    // `ParallelConfig._validate_parallel_config`, every vLLM of the image
    // table); pd-dsl leaves it out there.
    if let Some(a) = nodes
        .iter()
        .filter(|n| n.role != Role::Mixed && n.dp.v == 1)
        .find_map(|n| {
            n.rank_args
                .iter()
                .find(|a| a.flag.v == "--data-parallel-rank")
        })
    {
        notes.push(Note {
            at: a.flag.at,
            what: "`--data-parallel-rank` on a DP 1 engine, which vLLM refuses (\"data_parallel_external_lb can only be set when data_parallel_size > 1\", vllm/config/parallel.py)".into(),
            why: "pd-dsl passes no DP rank to a DP 1 engine, so it starts".into(),
        });
    }
    if let Some(r) = &dp_rpc
        && let Some(n) = nodes.iter().find(|n| {
            !n.rank_args
                .iter()
                .any(|a| a.flag.v == "--data-parallel-rpc-port")
        })
    {
        notes.push(Note {
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
        notes.push(Note {
            at: first.at,
            what: format!(
                "no `--data-parallel-rpc-port` (vLLM's default {VLLM_DP_RPC_PORT} applies)"
            ),
            why: "pd-dsl passes the DP RPC port to every rank; the layout states vLLM's default"
                .into(),
        });
        dp_rpc = Some(p(VLLM_DP_RPC_PORT, first.at));
    }
    PortsSpec {
        api: Some(Spanned::new(api.v, s(api.at))),
        dp_rpc: dp_rpc
            .filter(|_| needs_rpc)
            .map(|r| Spanned::new(r.v, s(r.at))),
        prefill: prefill_ports,
        decode: decode_ports,
        site: s(api.at),
    }
}
