//! The topology's shapes: roles, sizes, TP within a node, engines in whole nodes, node occupancy, DP rank tiling and the connector's TP mapping between prefill and decode.

use crate::check::Cx;
use crate::placement::{self, GroupShape};
use crate::rules::Rule;
use crate::spec::{LayoutSpec, Role};
use crate::tables::Hardware;
use std::collections::{BTreeMap, BTreeSet};

declare_rules! {
    /// Roles do not make a PD or a mixed layout.
    TopologyRoles = "topology_roles", Hard, "a layout is PD (prefill and decode) or mixed, not both";
    /// A size is zero.
    TopologySizes = "topology_sizes", Hard, "engine counts, DP and TP sizes are at least 1";
    /// TP does not divide the node.
    TpDividesNode = "tp_divides_node", Hard, "a TP group divides the node and never spans nodes";
    /// Engine neither fits one node nor fills whole nodes.
    EngineWholeNodes = "engine_whole_nodes", Hard, "an engine fits in one node or fills whole nodes";
    /// More NPUs used on a node than it has.
    NodeOversubscribed = "node_oversubscribed", Hard, "a node never runs more NPUs than it has";
    /// Per-node rank ranges do not tile `[0, dp)`.
    DpRanksTile = "dp_ranks_tile", Hard, "per-node DP rank ranges tile `[0, dp)` exactly";
    /// Engines of one role have different shapes.
    RoleShapeUniform = "role_shape_uniform", Hard, "all engines of a role share one shape";
    /// Prefill TP below decode TP, or not a multiple: the V1 connector's TP
    /// mapping (vllm_ascend/distributed/kv_transfer/kv_p2p/mooncake_connector.py
    /// @v0.18.0 L1098, @v0.23.0 L1129, @v0.30.0rc2 L1213).
    PrefillTpGeDecodeTp = "prefill_tp_ge_decode_tp", Hard, "prefill TP is at least decode TP and a multiple of it";
}

pub(crate) fn u32_of(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// Checks shapes; returns the placeable groups when every shape is sound.
pub(crate) fn check_topology(
    spec: &LayoutSpec,
    hw: Option<&Hardware>,
    cx: &mut Cx,
) -> Option<Vec<GroupShape>> {
    let mut ok = true;
    let roles: BTreeSet<Role> = spec.topology.iter().map(|g| g.role.value).collect();
    let pd = roles.contains(&Role::Prefill) || roles.contains(&Role::Decode);
    if spec.topology.is_empty() {
        cx.report(
            Rule::TopologyRoles,
            spec.topology_site,
            "topology",
            "found no engines, expected `prefill` and `decode` groups or a `mixed` group: a layout deploys at least one engine",
        );
        ok = false;
    } else if pd && roles.contains(&Role::Mixed) {
        let g = spec.topology.iter().find(|g| g.role.value == Role::Mixed);
        cx.report(
            Rule::TopologyRoles,
            g.map_or(spec.topology_site, |g| g.role.site),
            "topology",
            "found `mixed` next to `prefill`/`decode`, expected a PD layout or a mixed one: a mixed engine has no kv role",
        );
        ok = false;
    } else if pd {
        for (need, other) in [(Role::Prefill, Role::Decode), (Role::Decode, Role::Prefill)] {
            if !roles.contains(&need) {
                let g = spec.topology.iter().find(|g| g.role.value == other);
                cx.report(
                    Rule::TopologyRoles,
                    g.map_or(spec.topology_site, |g| g.role.site),
                    "topology",
                    format!("found `{other}` engines without `{need}` engines, expected both: a PD layout needs a kv producer and a kv consumer"),
                );
                ok = false;
            }
        }
    }
    let mut shapes = Vec::new();
    let mut first_shape: BTreeMap<Role, (u64, u64, u64, usize)> = BTreeMap::new();
    for (i, g) in spec.topology.iter().enumerate() {
        let f = |s: &str| format!("topology[{i}].{s}");
        let mut good = true;
        let pcp_size = g.pcp.iter().map(|p| (p, "pcp"));
        for (v, name) in [(&g.count, "count"), (&g.dp, "dp"), (&g.tp, "tp")]
            .into_iter()
            .chain(pcp_size)
        {
            if v.value == 0 || v.value > 4096 {
                cx.report(
                    Rule::TopologySizes,
                    v.site,
                    f(name),
                    format!("found {name} {}, expected 1 to 4096: an engine has at least one rank of at least one NPU", v.value),
                );
                good = false;
            }
        }
        if let Some(r) = &g.ranks_per_node
            && (r.value == 0 || r.value > 4096)
        {
            cx.report(
                Rule::TopologySizes,
                r.site,
                f("ranks_per_node"),
                format!("found {} ranks per node, expected 1 to 4096: a node of an engine runs at least one rank", r.value),
            );
            good = false;
        }
        match first_shape.get(&g.role.value) {
            None => {
                first_shape.insert(g.role.value, (g.dp.value, g.tp.value, g.pcp(), i));
            }
            Some(&(dp, tp, pcp, j)) if (dp, tp, pcp) != (g.dp.value, g.tp.value, g.pcp()) => cx.report(
                Rule::RoleShapeUniform,
                g.shape_site,
                f("shape"),
                format!(
                    "found {} engines `{}` next to `{}` (topology[{j}]), expected one shape per role: `kv_connector_extra_config` describes one {} shape and every engine checks it against its own",
                    g.role.value,
                    g.shape(),
                    crate::spec::shape_text(dp, tp, pcp),
                    g.role.value
                ),
            ),
            Some(_) => {}
        }
        let Some(hw) = hw else {
            ok = false;
            continue;
        };
        if !good {
            ok = false;
            continue;
        }
        let n = u64::from(hw.npus_per_node);
        let (dp, tp, pcp) = (g.dp.value, g.tp.value, g.pcp());
        if tp > n || n % tp != 0 {
            cx.report(
                Rule::TpDividesNode,
                g.tp.site,
                f("tp"),
                format!(
                    "found `tp{tp}` on {} ({n} NPUs per node), expected a TP size dividing {n}: a TP group never spans nodes and ranks tile a node",
                    hw.product
                ),
            );
            ok = false;
            continue;
        }
        // A rank's NPUs: tp x pcp (vllm/config/parallel.py `world_size`).
        let width = tp * pcp;
        if let Some(p) = &g.pcp
            && (width > n || n % width != 0)
        {
            cx.report(
                Rule::TpDividesNode,
                p.site,
                f("pcp"),
                format!(
                    "found `tp{tp}pcp{pcp}` = {width} NPUs per rank on {} ({n} NPUs per node), expected tp x pcp dividing {n}: a rank's TP x PCP group never spans nodes and ranks tile a node",
                    hw.product
                ),
            );
            ok = false;
            continue;
        }
        let rank_text = if pcp > 1 {
            format!("TP{tp} x PCP{pcp}")
        } else {
            format!("TP{tp}")
        };
        let rpn = match &g.ranks_per_node {
            Some(r) => {
                if r.value * width > n {
                    cx.report(
                        Rule::NodeOversubscribed,
                        r.site,
                        f("ranks_per_node"),
                        format!(
                            "found {} ranks of {rank_text} per node = {} NPUs, expected at most {n} on {}: ranks would share NPUs",
                            r.value,
                            r.value * width,
                            hw.product
                        ),
                    );
                    ok = false;
                    continue;
                }
                if r.value > dp || dp % r.value != 0 {
                    cx.report(
                        Rule::DpRanksTile,
                        r.site,
                        f("ranks_per_node"),
                        format!(
                            "found {} ranks per node for DP{dp}, expected a divisor of {dp}: every node of an engine runs the same number of ranks so the rank ranges tile `[0, {dp})`",
                            r.value
                        ),
                    );
                    ok = false;
                    continue;
                }
                r.value
            }
            None => {
                let npus = dp * width;
                if npus > n && npus % n != 0 {
                    cx.report(
                        Rule::EngineWholeNodes,
                        g.shape_site,
                        f("shape"),
                        format!(
                            "found `{}` = {npus} NPUs on {} ({n} per node), expected at most {n} or a multiple of {n}: an engine fits in one node or fills whole nodes (say `/ ranks` per node to spread it)",
                            g.shape(),
                            hw.product
                        ),
                    );
                    ok = false;
                    continue;
                }
                u64::from(placement::default_ranks_per_node(
                    u32_of(dp),
                    u32_of(width),
                    hw.npus_per_node,
                ))
            }
        };
        shapes.push(GroupShape {
            role: g.role.value,
            count: u32_of(g.count.value),
            dp: u32_of(dp),
            tp: u32_of(tp),
            pcp: u32_of(pcp),
            ranks_per_node: u32_of(rpn),
        });
    }
    if let (Some(p), Some(d)) = (
        first_shape.get(&Role::Prefill),
        first_shape.get(&Role::Decode),
    ) {
        let (ptp, dtp) = (p.1, d.1);
        if ptp > 0 && dtp > 0 && (ptp < dtp || ptp % dtp != 0) {
            let g = &spec.topology[d.3];
            cx.report(
                Rule::PrefillTpGeDecodeTp,
                g.tp.site,
                format!("topology[{}].tp", d.3),
                format!(
                    "found prefill TP{ptp} with decode TP{dtp}, expected decode TP to divide prefill TP: Mooncake V1/Hybrid raise when prefill TP < decode TP and assert `P_tp % D_tp == 0` (mooncake_connector.py L2055-2059)"
                ),
            );
            ok = false;
        }
    }
    ok.then_some(shapes)
}
