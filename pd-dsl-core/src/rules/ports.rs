//! Ports over the placement: API and DP RPC bases per role, ranges, collisions on each host and Mooncake's AscendDirectTransport range.

use super::pool;
use super::topology::u32_of;
use crate::check::Cx;
use crate::layout::{Layout, Socket, SocketKind};
use crate::placement::{self, GroupShape};
use crate::rules::Rule;
use crate::site::{Site, Spanned};
use crate::spec::{LayoutSpec, Role};
use crate::tables::Hardware;
use std::collections::{BTreeMap, BTreeSet};

declare_rules! {
    /// A port outside 1..=65535.
    PortRange = "port_range", Hard, "ports are between 1 and 65535";
    /// Two sockets on one host share a port.
    PortCollision = "port_collision", Hard, "API ports, DP RPC port, proxy port and kv spans are disjoint per host";
    /// kv span inside the AscendDirectTransport dynamic range (the kv_port
    /// table of docs/source/tutorials/.../pd_disaggregation_mooncake_multi_node.md
    /// @v0.18.0 L229 … @v0.30.0rc2 L279).
    KvPortInAdxlRange = "kv_port_in_adxl_range", Convention, "kv spans stay outside `[20000, 20000 + 1000 x NPUs)`";
    /// kv span on the inclusive upper edge of the ADXL range (same table,
    /// every release v0.18.0 to v0.30.0rc2).
    KvPortOnAdxlEdge = "kv_port_on_adxl_edge", Convention, "kv spans avoid `20000 + 1000 x NPUs`, which Mooncake can still draw";
    /// DP RPC port missing where one is needed: `--dp-rpc-port` of
    /// examples/external_online_dp/launch_online_dp.py (L15 at every release
    /// v0.18.0 to v0.30.0rc2) has an int default that crashes `subprocess`.
    DpRpcPortRequired = "dp_rpc_port_required", Hard, "external and multi-node DP need an explicit DP RPC port";
    /// An engine without an API start port.
    ApiPortRequired = "api_port_required", Hard, "every engine has an API start port, common or per role";
}

pub(crate) fn port_of(cx: &mut Cx, p: &Spanned<u64>, field: &str, what: &str) -> Option<u32> {
    if p.value == 0 || p.value > 65535 {
        cx.report(
            Rule::PortRange,
            p.site,
            field,
            format!(
                "found {what} {}, expected 1 to 65535: it is a TCP port",
                p.value
            ),
        );
        None
    } else {
        Some(u32_of(p.value))
    }
}

/// The API and DP RPC ports of every role: the common `ports: { api, dp_rpc }`
/// and the per-role blocks overriding them. Returns the layout's API and DP
/// RPC port (the common ones, else the first role's), the roles with their
/// own ports, and whether every engine has an API port in range.
pub(crate) fn check_port_bases(
    spec: &LayoutSpec,
    present: &BTreeSet<Role>,
    pd: bool,
    shapes: Option<&[GroupShape]>,
    cx: &mut Cx,
) -> (
    Option<u32>,
    Option<u32>,
    BTreeMap<Role, placement::RolePorts>,
    bool,
) {
    let ports = &spec.ports;
    let mut ok = true;
    let common_api = match &ports.api {
        Some(p) => {
            let v = port_of(cx, p, "ports.api", "API port");
            ok &= v.is_some();
            v
        }
        None => None,
    };
    let common_rpc = match &ports.dp_rpc {
        Some(p) => port_of(cx, p, "ports.dp_rpc", "DP RPC port"),
        None => None,
    };
    let mut role_ports = BTreeMap::new();
    for role in [Role::Prefill, Role::Decode] {
        let Some(b) = ports.role(role) else { continue };
        if !present.contains(&role) {
            cx.report(
                Rule::TopologyRoles,
                b.site,
                format!("ports.{role}"),
                format!("found `ports.{role}` but no `{role}` engines in the topology, expected per-role ports only for roles that run: they would be silently unused"),
            );
            continue;
        }
        let api = match &b.api {
            Some(p) => {
                let v = port_of(cx, p, &format!("ports.{role}.api"), "API port");
                ok &= v.is_some();
                v
            }
            None => common_api,
        };
        let dp_rpc = match &b.dp_rpc {
            Some(p) => port_of(cx, p, &format!("ports.{role}.dp_rpc"), "DP RPC port"),
            None => common_rpc,
        };
        if let Some(api) = api {
            role_ports.insert(role, placement::RolePorts { api, dp_rpc });
        }
    }
    // Where a "missing" finding points: the ports block, else the layout.
    let block_site = if ports.site.is_known() {
        ports.site
    } else {
        ports.api.as_ref().map_or(Site::NONE, |p| p.site)
    };
    for role in present {
        if ports.api_of(*role).is_none() {
            cx.report(
                Rule::ApiPortRequired,
                block_site,
                "ports.api",
                if *role == Role::Mixed {
                    "found no API port, expected `ports: { api: N }`: the engine serves its API on it".to_owned()
                } else {
                    format!("found no API port for the {role} engines, expected `ports: {{ api: N }}` or `ports: {{ {role}: {{ api: N }} }}`: each rank serves its API on the start port + its local index")
                },
            );
            ok = false;
        }
    }
    let multi_node_mixed = shapes.is_some_and(|s| {
        s.iter()
            .any(|g| g.role == Role::Mixed && g.dp > g.ranks_per_node)
    });
    let needs_rpc: Vec<Role> = present
        .iter()
        .copied()
        .filter(|r| *r != Role::Mixed || multi_node_mixed)
        .collect();
    let missing_rpc: Vec<Role> = needs_rpc
        .iter()
        .copied()
        .filter(|r| ports.dp_rpc_of(*r).is_none())
        .collect();
    let rpc_site = ports.api.as_ref().map_or(block_site, |p| p.site);
    if !missing_rpc.is_empty() && missing_rpc.len() == needs_rpc.len() {
        cx.report(
            Rule::DpRpcPortRequired,
            rpc_site,
            "ports.dp_rpc",
            if pd {
                "found no `dp_rpc` port, expected `ports: { dp_rpc: N }`: `launch_online_dp.py`'s default is an int that crashes `subprocess` (launch_online_dp.py L15, L40)"
            } else {
                "found no `dp_rpc` port for a mixed engine spanning nodes, expected `ports: { dp_rpc: N }`: every node must pass the same `--data-parallel-rpc-port`"
            },
        );
        ok = false;
    } else {
        for role in missing_rpc {
            let site = ports.role(role).map_or(rpc_site, |b| b.site);
            cx.report(
                Rule::DpRpcPortRequired,
                site,
                format!("ports.{role}.dp_rpc"),
                format!("found no `dp_rpc` port for the {role} engines, expected `ports: {{ dp_rpc: N }}` or `ports: {{ {role}: {{ dp_rpc: N }} }}`: `launch_online_dp.py`'s default is an int that crashes `subprocess` (launch_online_dp.py L15, L40)"),
            );
            ok = false;
        }
    }
    let first = present.iter().next().copied();
    let first_ports = first.and_then(|r| role_ports.get(&r));
    let api = common_api.or(first_ports.map(|p| p.api));
    let dp_rpc = common_rpc.or(first_ports.and_then(|p| p.dp_rpc));
    (api, dp_rpc, role_ports, ok)
}

/// One socket as the port rules see it: what it is, and which written value
/// moves it.
pub(crate) struct PortUse {
    lo: u32,
    hi: u32,
    /// The socket, for its description and field path.
    sock: SocketKind,
    /// What kind of socket, for grouping one mistake's findings.
    kind: &'static str,
    /// Which moves first when two collide: a single port (proxy, DP RPC) is
    /// cheaper to move than a kv base, a kv base cheaper than the API base
    /// that the proxy lists and every rank derive from.
    weight: u8,
    /// The DP rank it belongs to, if any.
    rank: Option<(usize, u32)>,
    site: Site,
}

/// Findings of one mistake: the first occurrence and every rank it hits.
pub(crate) struct Finding {
    rule: Rule,
    site: Site,
    field: String,
    /// The kinds of socket involved (`kv/api`), so different clashes of one
    /// value stay apart.
    kinds: String,
    /// The first occurrence, as a "found ..." clause.
    first: String,
    expected: &'static str,
    ranks: BTreeSet<(usize, u32)>,
    nodes: BTreeSet<usize>,
}

/// Groups findings that come from one written value and one kind of clash,
/// so a mistake that hits many ranks is one diagnostic.
#[derive(Default)]
pub(crate) struct Findings(Vec<Finding>);

impl Findings {
    /// Records one occurrence of `rule` at the value `site` / `field`.
    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        rule: Rule,
        site: Site,
        field: &str,
        kinds: &str,
        first: impl FnOnce() -> String,
        expected: &'static str,
        ranks: impl IntoIterator<Item = (usize, u32)>,
        node: usize,
    ) {
        let i =
            match self.0.iter().position(|f| {
                f.rule == rule && f.site == site && f.field == field && f.kinds == kinds
            }) {
                Some(i) => i,
                None => {
                    self.0.push(Finding {
                        rule,
                        site,
                        field: field.to_owned(),
                        kinds: kinds.to_owned(),
                        first: first(),
                        expected,
                        ranks: BTreeSet::new(),
                        nodes: BTreeSet::new(),
                    });
                    self.0.len() - 1
                }
            };
        let f = &mut self.0[i];
        f.ranks.extend(ranks);
        f.nodes.insert(node);
    }

    fn report(self, cx: &mut Cx) {
        for f in self.0 {
            let count = f.ranks.len();
            let more = if count > 1 {
                let nodes: Vec<String> = f.nodes.iter().map(usize::to_string).collect();
                format!(
                    ", and the same on {} more ranks ({count} ranks on node{} {})",
                    count - 1,
                    if nodes.len() > 1 { "s" } else { "" },
                    nodes.join(", ")
                )
            } else {
                String::new()
            };
            cx.report(
                f.rule,
                f.site,
                f.field,
                format!("found {}{more}, expected {}", f.first, f.expected),
            );
        }
    }
}

/// Which of a node's sockets overlap: sorted by first port, each compared
/// only with those still open at its first port, so a node of disjoint
/// sockets costs a sort instead of every pair.
#[derive(Default)]
struct Sweep {
    order: Vec<u64>,
    open: Vec<usize>,
}

impl Sweep {
    /// Every overlapping pair `(i, j)` of `socks`, `j < i`, in the order of
    /// `i` then `j` (the order a pairwise walk meets them).
    fn overlapping(&mut self, socks: &[Socket], pairs: &mut Vec<(usize, usize)>) {
        pairs.clear();
        // First port and index in one word: a plain integer sort.
        self.order.clear();
        self.order.extend(
            socks
                .iter()
                .enumerate()
                .map(|(i, s)| (u64::from(s.first) << 32) | i as u64),
        );
        self.order.sort_unstable();
        self.open.clear();
        // The last port of the open sockets, so a socket past all of them
        // (every socket of a layout without a collision) closes them at once.
        let mut reach: Option<u32> = None;
        for &key in &self.order {
            let i = (key & u64::from(u32::MAX)) as usize;
            let (first, last) = (socks[i].first, socks[i].last);
            if reach.is_some_and(|r| r >= first) {
                // Sockets ending before this one starts end before every
                // later one; the one reaching furthest is still open.
                self.open.retain(|&j| socks[j].last >= first);
                pairs.extend(self.open.iter().map(|&j| (i.max(j), i.min(j))));
                reach = reach.max(Some(last));
            } else {
                self.open.clear();
                reach = Some(last);
            }
            self.open.push(i);
        }
        pairs.sort_unstable();
    }
}

/// Port rules over a placement: collisions per host, ranges, the ADXL range.
/// One written value that collides with or overflows on many ranks is one
/// diagnostic naming the first rank and the count.
pub(crate) fn check_ports(spec: &LayoutSpec, layout: &Layout, hw: &Hardware, cx: &mut Cx) {
    // Where a role's kv_port was written, and its field path (written only
    // for a finding: the site is needed for every socket).
    let kv_at = |role: Role, role_index: usize| -> Option<(Site, &'static str, usize)> {
        let c = spec.connector.as_ref()?;
        let (list, field) = match role {
            Role::Prefill => (&c.kv_port.prefill, "prefill"),
            _ => (&c.kv_port.decode, "decode"),
        };
        let i = if list.len() > 1 { role_index } else { 0 };
        Some((list.get(i).map_or(c.kind.site, |p| p.site), field, i))
    };
    let kv_site = |role: Role, role_index: usize| -> (Site, String) {
        match kv_at(role, role_index) {
            None => (Site::NONE, "connector".into()),
            Some((site, field, i)) => (site, format!("connector.kv_port.{field}[{i}]")),
        }
    };
    // A role's API / DP RPC port: its own block's value, else the common
    // one; `true` when the role's own block has it.
    let port_at = |role: Role, rpc: bool| -> (Site, bool) {
        let own = spec.ports.role(role).and_then(|b| {
            if rpc {
                b.dp_rpc.as_ref()
            } else {
                b.api.as_ref()
            }
        });
        match own {
            Some(p) => (p.site, true),
            None => {
                let common = if rpc {
                    spec.ports.dp_rpc.as_ref()
                } else {
                    spec.ports.api.as_ref()
                };
                (common.map_or(spec.ports.site, |p| p.site), false)
            }
        }
    };
    let port_site = |role: Role, rpc: bool| -> (Site, String) {
        let name = if rpc { "dp_rpc" } else { "api" };
        match port_at(role, rpc) {
            (site, true) => (site, format!("ports.{role}.{name}")),
            (site, false) => (site, format!("ports.{name}")),
        }
    };
    if let Some(pool) = layout.pool() {
        pool::check_placeholders(pool, layout.placement.nodes.len(), cx);
    }
    let mut findings = Findings::default();
    // Buffers reused across nodes (a 64-node layout has thousands of
    // sockets; `catalog plan` checks tens of thousands of layouts).
    let mut socks = Vec::new();
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let mut sweep = Sweep::default();
    let proxy_site = spec.proxy.as_ref().map_or(Site::NONE, |p| p.port.site);
    for node in &layout.placement.nodes {
        let engine = &layout.placement.engines[node.engine];
        // The sites of the node's values, once per node (its engine's role).
        let api_site = port_at(engine.role, false).0;
        let rpc_site = port_at(engine.role, true).0;
        let kv_value_site = kv_at(engine.role, engine.role_index).map_or(Site::NONE, |k| k.0);
        // What the rules need of a socket, built only for a finding (as are
        // descriptions and field paths).
        let use_of = |sock: &Socket| -> PortUse {
            let (kind, weight, rank, site) = match sock.kind {
                SocketKind::Api { dp_rank } => ("api", 0, Some((engine.index, dp_rank)), api_site),
                // Both roles compute the span (facts §10.5): it counts
                // whichever role binds it.
                SocketKind::Kv { dp_rank, .. } => {
                    ("kv", 1, Some((engine.index, dp_rank)), kv_value_site)
                }
                SocketKind::DpRpc => ("dp_rpc", 2, None, rpc_site),
                SocketKind::Proxy => ("proxy", 3, None, proxy_site),
                SocketKind::Pool { name } => (
                    "pool",
                    4,
                    None,
                    layout
                        .pool()
                        .and_then(|p| p.ports.get(name))
                        .map_or(Site::NONE, |p| p.site),
                ),
            };
            PortUse {
                lo: sock.first,
                hi: sock.last,
                sock: sock.kind,
                kind,
                weight,
                rank,
                site,
            }
        };
        layout.node_sockets_into(node.index, &mut socks);
        // What a socket is, and the field its value was written at.
        let what = |u: &PortUse| -> String {
            let lo = u.lo;
            match u.sock {
                SocketKind::Api { dp_rank } => format!("API port {lo} of DP rank {dp_rank}"),
                SocketKind::Kv { dp_rank, .. } => {
                    format!("kv span {lo}-{} of DP rank {dp_rank}", u.hi)
                }
                SocketKind::DpRpc => format!("DP RPC port {lo}"),
                SocketKind::Proxy => format!("proxy port {lo}"),
                SocketKind::Pool { name } => format!("KV pool {name} {lo}"),
            }
        };
        let field = |u: &PortUse| -> String {
            match u.sock {
                SocketKind::Api { .. } => port_site(engine.role, false).1,
                SocketKind::Kv { .. } => kv_site(engine.role, engine.role_index).1,
                SocketKind::DpRpc => port_site(engine.role, true).1,
                SocketKind::Proxy => "proxy.port".to_owned(),
                SocketKind::Pool { name } => format!("pool.ports.{name}"),
            }
        };
        for u in socks.iter().filter(|s| s.last > 65535).map(use_of) {
            let u = &u;
            {
                findings.add(
                    Rule::PortRange,
                    u.site,
                    &field(u),
                    u.kind,
                    || format!("{} on node {} reaching port {}", what(u), node.index, u.hi),
                    "at most 65535: it is a TCP port",
                    u.rank,
                    node.index,
                );
            }
        }
        // Each colliding pair once, at the value that moves first (see
        // `PortUse::weight`; the later-written value between equals).
        sweep.overlapping(&socks, &mut pairs);
        for &(i, j) in &pairs {
            let (a, b) = (&use_of(&socks[i]), &use_of(&socks[j]));
            {
                let (at, other) = if (a.weight, a.site) >= (b.weight, b.site) {
                    (a, b)
                } else {
                    (b, a)
                };
                let kinds = format!("{}/{}", at.kind, other.kind);
                findings.add(
                    Rule::PortCollision,
                    at.site,
                    &field(at),
                    &kinds,
                    || {
                        format!(
                            "{} overlapping {} on node {}",
                            what(at),
                            what(other),
                            node.index
                        )
                    },
                    "disjoint ports per host: the second bind fails with `Address already in use`",
                    at.rank.into_iter().chain(other.rank),
                    node.index,
                );
            }
        }
    }
    findings.report(cx);
    // ADXL dynamic range [20000, 20000 + 1000·NPUs) per the doc table, with
    // Mooncake's inclusive upper bound as its own rule (facts §3.4, §10.6).
    let lo = 20000u32;
    let hi = lo + 1000 * hw.npus_per_node;
    for e in &layout.placement.engines {
        let spans = e
            .nodes
            .iter()
            .filter_map(|&n| layout.placement.nodes.get(n))
            .flat_map(|n| n.ranks.iter().filter_map(|r| r.kv_span));
        let Some((first, last)) = spans.fold(None, |acc: Option<(u32, u32)>, (a, b)| {
            Some(acc.map_or((a, b), |(f, l)| (f.min(a), l.max(b))))
        }) else {
            continue;
        };
        let in_range = first < hi && last >= lo;
        let on_edge = first <= hi && last >= hi;
        if !(in_range || on_edge) {
            continue;
        }
        let (site, field) = kv_site(e.role, e.role_index);
        if in_range {
            cx.report(
                Rule::KvPortInAdxlRange,
                site,
                field,
                format!(
                    "found {} kv ports {first}-{last}, expected ports outside [{lo}, {hi}) on {} ({} NPUs): AscendDirectTransport draws random ports there, causing intermittent `Address already in use` (multi-node doc kv_port table)",
                    e.role, hw.product, hw.npus_per_node
                ),
            );
        } else if first <= hi && last >= hi {
            cx.report(
                Rule::KvPortOnAdxlEdge,
                site,
                field,
                format!(
                    "found {} kv ports {first}-{last} including {hi}, expected ports above {hi} on {}: Mooncake's `findAdxlListenPort` draws up to {hi} inclusive (ascend_direct_transport.cpp)",
                    e.role, hw.product
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sweep finds exactly the pairs a walk over every pair finds, in
    /// the same order, on sets of sockets from disjoint to piled up.
    #[test]
    fn the_sweep_finds_every_overlapping_pair_in_pairwise_order() {
        let mut seed = 0x9e37_79b9_u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) % n
        };
        let mut sweep = Sweep::default();
        let mut pairs = Vec::new();
        let mut found_some = 0;
        for round in 0..2000 {
            let n = next(40) as usize;
            let spread = [4, 40, 400, 70_000][round % 4];
            let socks: Vec<Socket> = (0..n)
                .map(|_| {
                    let first = next(spread) as u32;
                    Socket {
                        first,
                        last: first + next(6) as u32,
                        kind: SocketKind::DpRpc,
                    }
                })
                .collect();
            let mut walk = Vec::new();
            for (i, a) in socks.iter().enumerate() {
                for (j, b) in socks[..i].iter().enumerate() {
                    if a.first <= b.last && b.first <= a.last {
                        walk.push((i, j));
                    }
                }
            }
            sweep.overlapping(&socks, &mut pairs);
            assert_eq!(pairs, walk, "round {round}: {socks:?}");
            found_some += usize::from(!walk.is_empty());
        }
        assert!(found_some > 500, "the sets overlap often enough to test it");
    }
}
