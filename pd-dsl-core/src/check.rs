//! The one rule engine. The `layout!` macro and the runtime loader both call
//! [`check`]; nothing else decides whether a layout is valid. The rules
//! themselves — each declared once with its doc, next to its check — are the
//! concern modules under `crate::rules`; this module runs them in order over
//! one layout and settles the `allow`s.

pub use crate::rules::pool;
pub use crate::rules::settings::PCP_FLAG;
pub use crate::rules::text::{TEMPLATE_PLACEHOLDERS, is_safe_path};

use crate::layout::{Layout, Serve};
use crate::placement;
use crate::rules::allow::settle_allows;
use crate::rules::budget::check_capacity;
use crate::rules::connector::check_wiring;
use crate::rules::names::{check_verification, lookup_tables};
use crate::rules::ports::check_ports;
use crate::rules::serve::{Facts, check_serve};
use crate::rules::settings::{check_flags_accepted, check_serve_block, node_block_exists};
use crate::rules::text::check_texts;
use crate::rules::topology::{check_topology, u32_of};
use crate::rules::{Diagnostic, Diagnostics, Rule, Severity};
use crate::site::Site;
use crate::spec::{LayoutSpec, Role, ServeSpec};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// Checks a layout and derives everything from it. Returns every violation
/// that is not acknowledged, in the order written.
pub fn check(spec: &LayoutSpec) -> Result<Layout, Diagnostics> {
    check_cow(Cow::Borrowed(spec))
}

/// [`check`] of a spec the caller gives up: the layout keeps it rather than
/// a copy (`catalog plan` checks ~10^5 candidate specs it builds for this).
pub fn check_owned(spec: LayoutSpec) -> Result<Layout, Diagnostics> {
    check_cow(Cow::Owned(spec))
}

fn check_cow(spec: Cow<'_, LayoutSpec>) -> Result<Layout, Diagnostics> {
    let mut cx = Cx::default();
    let (out, acknowledged) = match derive_parts(&spec, &mut cx) {
        Some(mut layout) => {
            layout.spec = spec.into_owned();
            finish(&layout, &mut cx);
            let acknowledged = settle_allows(&layout.spec, &mut cx);
            (Some(layout), acknowledged)
        }
        None => (None, settle_allows(&spec, &mut cx)),
    };
    if !cx.errors.is_empty() {
        cx.errors.0.sort_by_key(|d| d.site);
        return Err(cx.errors);
    }
    match out {
        Some(mut layout) => {
            layout.acknowledged = acknowledged;
            Ok(layout)
        }
        // `derive_parts` only returns None after recording an error.
        None => Err(cx.errors),
    }
}

/// Every finding of the rules on `spec`, hard or convention, before any
/// `allow` is settled (hard ones first, each group in the checker's order).
/// What a newer image changes for a layout compares these.
pub fn findings(spec: &LayoutSpec) -> Vec<Diagnostic> {
    let mut cx = Cx::default();
    let _ = derive(spec, &mut cx);
    let mut out = cx.errors.0;
    out.extend(cx.conventions);
    out
}

/// Every rule `spec` violates, hard or convention, before any `allow` is
/// settled (sorted, deduplicated). The deployment status asks it whether a
/// later image clears an acknowledged rule.
pub fn violations(spec: &LayoutSpec) -> Vec<Rule> {
    let mut rules: Vec<Rule> = findings(spec).into_iter().map(|d| d.rule).collect();
    rules.sort_unstable();
    rules.dedup();
    rules
}

/// What the checks of one layout have found so far.
#[derive(Default)]
pub(crate) struct Cx {
    /// Violations of convention rules, to settle against `allow`s.
    pub(crate) conventions: Vec<Diagnostic>,
    /// Final errors.
    pub(crate) errors: Diagnostics,
}

impl Cx {
    /// Records a finding: an error for a hard rule, a convention finding to
    /// settle against the layout's `allow`s otherwise.
    pub(crate) fn report(
        &mut self,
        rule: Rule,
        site: Site,
        field: impl Into<String>,
        message: impl Into<String>,
    ) {
        let d = Diagnostic {
            rule,
            site,
            field: field.into(),
            message: message.into(),
        };
        match rule.severity() {
            Severity::Hard => {
                if !self.errors.0.contains(&d) {
                    self.errors.0.push(d);
                }
            }
            Severity::Convention => {
                if !self.conventions.contains(&d) {
                    self.conventions.push(d);
                }
            }
        }
    }
}

fn derive(spec: &LayoutSpec, cx: &mut Cx) -> Option<Layout> {
    let mut layout = derive_parts(spec, cx)?;
    layout.spec = spec.clone();
    finish(&layout, cx);
    Some(layout)
}

/// Every check that reads the spec alone, and the layout they derive, its
/// `spec` left empty for the caller to fill ([`finish`] reads it).
fn derive_parts(spec: &LayoutSpec, cx: &mut Cx) -> Option<Layout> {
    check_texts(spec, cx);
    let (model, hw, image) = lookup_tables(spec, cx);
    let shapes = check_topology(spec, hw, cx);
    let wiring = check_wiring(spec, model, shapes.as_deref(), hw, image, cx);
    check_serve_block(&spec.serve, "serve", cx);
    check_flags_accepted(&spec.serve, "serve", image, cx);
    for (role, block) in &spec.roles {
        check_serve_block(block, role.as_str(), cx);
        check_flags_accepted(block, role.as_str(), image, cx);
    }
    for (node, block) in &spec.nodes {
        let scope = format!("nodes.{node}");
        check_serve_block(block, &scope, cx);
        check_flags_accepted(block, &scope, image, cx);
    }
    let verified = check_verification(spec, image, cx);
    let pd = spec.topology.iter().any(|g| g.role.value != Role::Mixed);
    let present: BTreeSet<Role> = spec.topology.iter().map(|g| g.role.value).collect();
    for role in spec.roles.keys() {
        if !present.contains(role) {
            let site = spec.roles.get(role).map_or(Site::NONE, |b| b.site);
            cx.report(
                Rule::TopologyRoles,
                site,
                role.as_str(),
                format!("found `{role}` settings but no `{role}` engines in the topology, expected settings only for roles that run: they would be silently unused"),
            );
        }
    }
    let facts = Facts {
        spec,
        model,
        hw,
        image,
        pd,
    };
    let mut serve = BTreeMap::new();
    for role in &present {
        let s = Serve::resolve(&spec.serve, spec.roles.get(role));
        let dp_tp = spec
            .topology
            .iter()
            .find(|g| g.role.value == *role)
            .map(|g| (u32_of(g.dp.value), u32_of(g.tp.value)));
        let pcp = spec
            .topology
            .iter()
            .find(|g| g.role.value == *role)
            .map_or(1, |g| u32_of(g.pcp()));
        check_serve(&facts, *role, &s, dp_tp, pcp, cx);
        serve.insert(*role, s);
    }
    let (model, hw, image, shapes, wiring) = (model?, hw?, image?, shapes?, wiring?);
    let image_ref = image.reference(hw)?;
    let placement = placement::place(&shapes, &wiring.input);
    // One id per node: as many as the engine has nodes.
    if let Some(ids) = &spec.engine_ids {
        for (role, list) in [(Role::Prefill, &ids.prefill), (Role::Decode, &ids.decode)] {
            let engines = placement.engines.iter().filter(|e| e.role == role);
            for (e, id) in engines.zip(list) {
                if let crate::spec::EngineId::PerNode(per) = id
                    && per.len() != e.nodes.len()
                {
                    cx.report(
                        Rule::EngineIdCount,
                        per.last().map_or(ids.site, |l| l.site),
                        format!("engine_ids.{role}"),
                        format!(
                            "found {} per-node engine ids for {role} engine {} on {} nodes, expected {}: one id per node of the engine (or one for the engine)",
                            per.len(),
                            e.role_index,
                            e.nodes.len(),
                            e.nodes.len()
                        ),
                    );
                }
            }
        }
    }
    // Settings per node: each names a node of the layout, and the node's
    // ranks run common + role + node settings, checked like a role's.
    let mut node_serve = BTreeMap::new();
    for (&node, block) in &spec.nodes {
        let Some(plan) = node_block_exists(&placement, node, block, cx) else {
            continue;
        };
        let role = plan.role;
        let (view, s) = node_view(spec, node, role);
        let facts = Facts {
            spec: &view,
            model: Some(model),
            hw: Some(hw),
            image: Some(image),
            pd,
        };
        let dp_tp = placement.engines.get(plan.engine).map(|e| (e.dp, e.tp));
        let pcp = placement.engines.get(plan.engine).map_or(1, |e| e.pcp);
        check_serve(&facts, role, &s, dp_tp, pcp, cx);
        node_serve.insert(node as usize, s);
    }
    Some(Layout {
        spec: LayoutSpec::default(),
        model,
        hardware: hw,
        image,
        image_ref,
        placement,
        connector: wiring.input.connector,
        proxy: wiring.proxy,
        api_port: wiring.input.api_port,
        dp_rpc_port: wiring.dp_rpc,
        model_path: spec
            .model_path
            .as_ref()
            .map_or(model.default_path.to_owned(), |p| p.value.clone()),
        served_model_name: spec
            .served_model_name
            .as_ref()
            .map_or(model.served_name.to_owned(), |n| n.value.clone()),
        serve,
        node_serve,
        acknowledged: Vec::new(),
        verified,
    })
}

/// The checks that read the derived layout (ports, memory budget), on the
/// spec it holds.
fn finish(layout: &Layout, cx: &mut Cx) {
    let spec = &layout.spec;
    check_ports(spec, layout, layout.hardware, cx);
    check_capacity(spec, layout, cx);
    for (&node, s) in &layout.node_serve {
        let Some(role) = layout.placement.nodes.get(node).map(|n| n.role) else {
            continue;
        };
        let (view, _) = node_view(spec, node as u32, role);
        let mut variant = layout.clone();
        variant.serve.insert(role, s.clone());
        variant.serve.retain(|r, _| *r == role);
        check_capacity(&view, &variant, cx);
    }
}

/// The layout as node `node`'s ranks see it: its role's block with the
/// node's block written on top (sites kept, so findings point at the
/// setting that causes them), and the settings those ranks run.
fn node_view(spec: &LayoutSpec, node: u32, role: Role) -> (LayoutSpec, Serve) {
    let mut view = spec.clone();
    let empty = ServeSpec::default();
    let over = spec.nodes.get(&node).unwrap_or(&empty);
    let merged = spec.roles.get(&role).unwrap_or(&empty).overlay(over);
    view.roles.insert(role, merged);
    let s = Serve::resolve(&view.serve, view.roles.get(&role));
    (view, s)
}
