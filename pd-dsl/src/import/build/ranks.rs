//! The input's ranks as the launcher would start them, and the first proxy
//! list entry that is out of pd-dsl's rank order.

use super::{DERIVED_ENV, NodeIn};
use crate::import::InputRank;
use std::collections::BTreeMap;

pub(super) fn input_rank(n: &NodeIn, node: usize, local: u64, _pd: bool) -> InputRank {
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
pub(super) fn out_of_order(
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
