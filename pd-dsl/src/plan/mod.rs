//! `catalog plan`: every layout of a model on a hardware within a node
//! budget that passes every rule (the memory budget included), estimated at
//! a workload ([`crate::estimate`]) and ranked.
//!
//! Candidates are whole-node engines: PD layouts of `p` prefill and `d`
//! decode engines and mixed layouts of `m` engines, each engine `k` nodes
//! (1, 2, 4, ...) of `dp x tp` ranks with `tp` a divisor of the node's
//! NPUs. Each candidate is a layout written as the loader reads one (the
//! same rules as `layout!`), with the settings upstream's e2e configs use
//! for the role: expert parallelism for MoE models, MTP with one token
//! where the weights ship it, eager prefill and a decode graph, `max_num_seqs`
//! from the workload's concurrency over the decode ranks, `max_model_len`
//! the workload's prompt plus output. A candidate any rule refuses is
//! dropped and counted by rule.

mod candidate;

use crate::estimate::{Estimate, Workload};
use crate::spec::LayoutSpec;
use crate::tables;
use candidate::{
    Bases, Group, ShapePair, candidate, candidate_json, default_image, par_map, powers,
    shape_refusal, shapes,
};
use serde::Serialize;
use std::collections::BTreeMap;

/// What to plan for.
#[derive(Clone, Debug)]
pub struct Request {
    /// Model table id.
    pub model: String,
    /// Hardware table id.
    pub hardware: String,
    /// Image tag (default: the newest image with a build for the hardware).
    pub image: Option<String>,
    /// Most nodes a layout may use.
    pub max_nodes: u32,
    /// Fewest nodes a layout must use.
    pub min_nodes: u32,
    /// The workload.
    pub workload: Workload,
    /// TTFT limit, s.
    pub ttft_s: Option<f64>,
    /// TPOT limit, ms.
    pub tpot_ms: Option<f64>,
    /// Output tokens/s the deployment must reach (`--target`), for the
    /// fewest nodes that do.
    pub target_tokens_per_s: Option<f64>,
}

/// One candidate that passes every rule.
#[derive(Clone, Debug, Serialize)]
pub struct Candidate {
    /// `1P3D` or `mixed x2`.
    pub kind: String,
    /// The topology in the DSL's syntax.
    pub topology: String,
    /// Nodes.
    pub nodes: u32,
    /// NPUs.
    pub npus: u32,
    /// The estimate at the workload.
    pub estimate: Estimate,
    /// Whether it meets the TTFT/TPOT limits (and the target).
    pub meets: bool,
    /// Its engine groups and decode `max_num_seqs`, from which
    /// [`Plan::spec`] writes it again.
    #[serde(skip)]
    groups: Vec<Group>,
    #[serde(skip)]
    seqs: u64,
}

/// The plan: candidates ranked, and what was refused.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    /// Model, hardware and image planned for.
    pub model: String,
    /// Hardware id.
    pub hardware: String,
    /// Image tag.
    pub image: String,
    /// The workload.
    pub workload: Workload,
    /// Candidates enumerated.
    pub enumerated: usize,
    /// Refused candidates by a rule that refuses them (the first one found,
    /// or the shape rule that refuses a pair of engine shapes outright).
    pub refused: BTreeMap<String, usize>,
    /// Every candidate that passes every rule, best first: those meeting
    /// the limits by output tokens/s (or, with a target, by nodes then
    /// output), then the rest.
    pub candidates: Vec<Candidate>,
}

impl Plan {
    /// The layout of a candidate, as the loader reads it (the same spec
    /// the plan checked).
    pub fn spec(&self, c: &Candidate) -> Result<LayoutSpec, PlanError> {
        let (Some(model), Some(hw)) =
            (tables::model(&self.model), tables::hardware(&self.hardware))
        else {
            return Err(PlanError(format!(
                "internal: {} on {} is not in the tables",
                self.model, self.hardware
            )));
        };
        let pd = c.groups.iter().any(|g| g.role == "prefill");
        serde_json::from_value(candidate_json(
            model,
            hw,
            &self.image,
            &c.groups,
            &self.workload,
            pd,
            c.seqs,
        ))
        .map_err(|e| PlanError(format!("internal: a candidate does not load: {e}")))
    }
}

/// Why planning cannot start.
#[derive(Debug)]
pub struct PlanError(pub String);

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Every candidate within the node budget, checked, estimated and ranked.
pub fn plan(req: &Request) -> Result<Plan, PlanError> {
    let model = tables::model(&req.model).ok_or_else(|| {
        PlanError(format!(
            "found model `{}`, expected a model id of the table (`catalog list` shows them){}",
            req.model,
            crate::rules::did_you_mean(&req.model, tables::MODELS.iter().map(|m| m.id))
        ))
    })?;
    let hw = tables::hardware(&req.hardware).ok_or_else(|| {
        PlanError(format!(
            "found hardware `{}`, expected one of `{}`{}",
            req.hardware,
            tables::HARDWARE
                .iter()
                .map(|h| h.id)
                .collect::<Vec<_>>()
                .join("`, `"),
            crate::rules::did_you_mean(&req.hardware, tables::HARDWARE.iter().map(|h| h.id))
        ))
    })?;
    if crate::dims::dims_for(model.id).is_none() {
        return Err(PlanError(format!(
            "model `{}` has no dimensions, so nothing can be estimated for it: {}",
            model.id,
            crate::dims::UNSIZED
                .iter()
                .find(|(id, _)| *id == model.id)
                .map_or("it is not sized", |(_, why)| why)
        )));
    }
    let image = match &req.image {
        Some(i) => i.clone(),
        None => default_image(hw)
            .ok_or_else(|| PlanError(format!("no image of the table has a build for {}", hw.id)))?
            .to_owned(),
    };
    if req.max_nodes == 0 || req.min_nodes > req.max_nodes {
        return Err(PlanError(format!(
            "found nodes {}..={}, expected at least one node and --min-nodes at most --max-nodes",
            req.min_nodes, req.max_nodes
        )));
    }
    let w = &req.workload;
    let bases = Bases::new(model, hw, &image, w)?;
    let mut enumerated = 0;
    let mut refused: BTreeMap<String, usize> = BTreeMap::new();
    // PD: p prefill engines of kp nodes, d decode engines of kd nodes. A
    // pair of engine shapes that a rule refuses whatever the counts (one
    // of [`SHAPE_RULES`], at the fewest requests per rank) is refused for
    // every count without checking each.
    let mut pairs: Vec<ShapePair> = Vec::new();
    for kp in powers(req.max_nodes) {
        for kd in powers(req.max_nodes) {
            for (pdp, ptp) in shapes(hw, kp) {
                for (ddp, dtp) in shapes(hw, kd) {
                    let counts: Vec<(u32, u32, u32)> = (1..=req.max_nodes / kp)
                        .flat_map(|p| {
                            (1..=(req.max_nodes - p * kp) / kd)
                                .map(move |d| (p, d, p * kp + d * kd))
                        })
                        .filter(|(_, _, n)| *n >= req.min_nodes)
                        .collect();
                    if counts.is_empty() {
                        continue;
                    }
                    let probe = [
                        Group::new("prefill", 1, pdp, ptp),
                        Group::new("decode", 1, ddp, dtp),
                    ];
                    pairs.push((probe, counts));
                }
            }
        }
    }
    let verdicts = par_map(&pairs, |(probe, _)| shape_refusal(&bases, hw, probe))?;
    // Every candidate to check: its groups and nodes.
    let mut tasks: Vec<([Group; 2], usize, u32)> = Vec::new();
    for ((probe, counts), refusal) in pairs.iter().zip(verdicts) {
        if let Some(rule) = refusal {
            enumerated += counts.len();
            *refused.entry(rule.to_owned()).or_default() += counts.len();
            continue;
        }
        let [pg, dg] = *probe;
        for &(p, d, nodes) in counts {
            let groups = [
                Group::new("prefill", p, pg.dp, pg.tp),
                Group::new("decode", d, dg.dp, dg.tp),
            ];
            tasks.push((groups, 2, nodes));
        }
    }
    // Mixed: m engines of k nodes.
    for k in powers(req.max_nodes) {
        for m in 1..=req.max_nodes / k {
            if m * k < req.min_nodes {
                continue;
            }
            for (dp, tp) in shapes(hw, k) {
                let g = Group::new("mixed", m, dp, tp);
                tasks.push(([g, g], 1, m * k));
            }
        }
    }
    enumerated += tasks.len();
    let results = par_map(&tasks, |(groups, n, nodes)| {
        candidate(&bases, hw, &groups[..*n], w, req).map(|mut c| {
            c.nodes = *nodes;
            c.npus = nodes * hw.npus_per_node;
            c
        })
    })?;
    let mut out = Vec::new();
    for r in results {
        match r {
            Ok(c) => out.push(c),
            Err(rule) => *refused.entry(rule).or_default() += 1,
        }
    }
    let target = req.target_tokens_per_s.is_some();
    out.sort_by(|a, b| {
        b.meets
            .cmp(&a.meets)
            .then_with(|| {
                if target {
                    a.nodes.cmp(&b.nodes)
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .then_with(|| {
                b.estimate
                    .output_tokens_per_s
                    .total_cmp(&a.estimate.output_tokens_per_s)
            })
            .then_with(|| a.nodes.cmp(&b.nodes))
            .then_with(|| a.topology.cmp(&b.topology))
    });
    Ok(Plan {
        model: model.id.to_owned(),
        hardware: hw.id.to_owned(),
        image,
        workload: *w,
        enumerated,
        refused,
        candidates: out,
    })
}
