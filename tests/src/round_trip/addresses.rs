//! Node addresses: the ones run.sh is given, bound to the addresses the
//! input names (normalisation 4), and proxy hosts read as nodes
//! (normalisation 11).

use pd_dsl::Role;
use pd_dsl::import::InputRank;
use std::collections::BTreeMap;

/// The node addresses for run.sh (normalisation 4): each engine's first
/// node gets the address the input names for the engine's DP master, a
/// run-time placeholder bound to `10.0.100.N` (N: that node) in every rank
/// of the engine that names it; other nodes get `10.99.0.N`.
/// Also returns each address as the input names it (an address or a
/// placeholder) with the node it stands for.
pub fn bind_addresses(
    layout: &pd_dsl::Layout,
    ranks: &mut [InputRank],
) -> (Vec<String>, BTreeMap<String, usize>) {
    const ADDRESS: &str = "--data-parallel-address";
    let mut ips: Vec<String> = (0..layout.node_count())
        .map(|n| format!("10.99.0.{}", n + 1))
        .collect();
    let mut named_nodes = BTreeMap::new();
    let nodes = &layout.placement.nodes;
    for master in nodes.iter().filter(|n| n.dp_master == n.index) {
        let named = ranks
            .iter()
            .filter(|r| r.node == master.index)
            .find_map(|r| r.options.iter().find(|(f, _)| f == ADDRESS))
            .and_then(|(_, v)| v.clone());
        let Some(named) = named else { continue };
        let bound = if named.contains('$') {
            format!("10.0.100.{}", master.index)
        } else {
            named.clone()
        };
        for r in ranks.iter_mut().filter(|r| {
            nodes
                .get(r.node)
                .is_some_and(|n| n.dp_master == master.index)
        }) {
            for (f, v) in &mut r.options {
                if f == ADDRESS && v.as_deref() == Some(named.as_str()) {
                    *v = Some(bound.clone());
                }
            }
        }
        ips[master.index] = bound;
        named_nodes.insert(named, master.index);
    }
    (ips, named_nodes)
}

/// Proxy hosts as node addresses (normalisation 11): the address run.sh
/// is given for the node a host names.
#[derive(Debug)]
pub struct Addresses<'a> {
    /// The address run.sh is given for each node.
    pub ips: &'a [String],
    /// Addresses (or placeholders) the input names elsewhere, with their
    /// node: each engine's DP master (normalisation 4).
    pub named: &'a BTreeMap<String, usize>,
    /// Each node's role.
    pub roles: Vec<Role>,
}

impl<'a> Addresses<'a> {
    /// The addresses of `layout`'s nodes.
    pub fn new(
        layout: &pd_dsl::Layout,
        ips: &'a [String],
        named: &'a BTreeMap<String, usize>,
    ) -> Addresses<'a> {
        Addresses {
            ips,
            named,
            roles: layout.placement.nodes.iter().map(|n| n.role).collect(),
        }
    }

    /// The address of the node `host` names, if the input names that node
    /// elsewhere; else `host` as written.
    pub fn known(&self, host: &str) -> String {
        self.named
            .get(host)
            .map_or_else(|| host.to_owned(), |n| self.ips[*n].clone())
    }

    /// The hosts of the prefill and decode lists as node addresses. A host
    /// the input names nowhere else stands for the next node of the list's
    /// role the input gives no address, by first appearance.
    pub fn lists(&self, prefill: &[String], decode: &[String]) -> (Vec<String>, Vec<String>) {
        let mut free: Vec<usize> = (0..self.ips.len())
            .filter(|n| !self.named.values().any(|m| m == n))
            .collect();
        let mut bound: BTreeMap<String, usize> = BTreeMap::new();
        let mut resolve = |hosts: &[String], role: Role| -> Vec<String> {
            hosts
                .iter()
                .map(|h| {
                    if let Some(n) = self.named.get(h).or_else(|| bound.get(h)) {
                        return self.ips[*n].clone();
                    }
                    match free.iter().position(|n| self.roles[*n] == role) {
                        Some(i) => {
                            let n = free.remove(i);
                            bound.insert(h.clone(), n);
                            self.ips[n].clone()
                        }
                        None => h.clone(),
                    }
                })
                .collect()
        };
        let p = resolve(prefill, Role::Prefill);
        let d = resolve(decode, Role::Decode);
        (p, d)
    }
}
