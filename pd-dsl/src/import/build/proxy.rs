//! The proxy of a PD deployment: its port and script as the input starts
//! it, and notes on endpoint lists pd-dsl derives otherwise.

use super::{Engine, NodeIn, ProxyIn, out_of_order};
use crate::Spanned;
use crate::import::{InputProxy, Loc, Note};
use crate::spec::{ConnectorSpec, ProxyScript, ProxySpec, Role};
use std::collections::BTreeMap;

/// The proxy as read (`proxy`), or the e2e harness's when the input starts
/// none of its own (`proxy_command`: the runner's, compared to the
/// connector's pairing, read at `connector_at`).
pub(super) fn proxy_of(
    proxy: &Option<ProxyIn>,
    proxy_command: &Option<InputProxy>,
    connector: &Option<ConnectorSpec>,
    connector_at: Loc,
    engines: &[Engine],
    notes: &mut Vec<Note>,
    s: &mut impl FnMut(Loc) -> crate::Site,
) -> ProxySpec {
    match proxy {
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
                notes.push(Note {
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
            if let (Some(c), Some(cmd)) = (connector, proxy_command) {
                let pairing = c.kind.value.proxy_script();
                if cmd.script != pairing.file_name() {
                    notes.push(Note {
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
    }
}

/// Notes, at `at`, on the proxy command's (`cmd`) endpoint lists where they
/// are out of pd-dsl's order (engines in `order`).
pub(super) fn proxy_order(
    cmd: &InputProxy,
    at: Loc,
    nodes: &[NodeIn],
    engines: &[Engine],
    order: &[usize],
    notes: &mut Vec<Note>,
) {
    // Each engine's DP master address as the input names it, with its
    // node (an address two engines name stands for neither).
    let mut masters: BTreeMap<&str, Option<usize>> = BTreeMap::new();
    for e in engines {
        let first = e.nodes[0];
        masters
            .entry(nodes[first].master.v.as_str())
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
                let n = &nodes[ni];
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
    notes.extend(late);
}
