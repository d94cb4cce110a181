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

use crate::estimate::{self, Estimate, Workload};
use crate::spec::LayoutSpec;
use crate::tables::{self, Hardware, Model};
use serde::Serialize;
use serde_json::{Value as Json, json};
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

/// Powers of two up to `n`.
fn powers(n: u32) -> impl Iterator<Item = u32> {
    (0..32).map(|i| 1u32 << i).take_while(move |k| *k <= n)
}

/// `dp x tp` shapes of an engine of `k` nodes.
fn shapes(hw: &Hardware, k: u32) -> Vec<(u32, u32)> {
    let npn = hw.npus_per_node;
    (1..=npn)
        .filter(|tp| npn.is_multiple_of(*tp))
        .map(|tp| (k * npn / tp, tp))
        .collect()
}

/// The newest image with a build for `hw`.
fn default_image(hw: &Hardware) -> Option<&'static str> {
    tables::IMAGES
        .iter()
        .rev()
        .find(|i| i.reference(hw).is_some())
        .map(|i| i.tag)
}

/// One candidate's layout as the loader's JSON.
#[allow(clippy::too_many_arguments)]
fn candidate_json(
    model: &Model,
    hw: &Hardware,
    image: &str,
    groups: &[Group],
    w: &Workload,
    pd: bool,
    decode_seqs: u64,
) -> Json {
    let topology: Vec<Json> = groups
        .iter()
        .map(|g| json!({ "role": g.role, "count": g.count, "dp": g.dp, "tp": g.tp }))
        .collect();
    let len = (w.input_len + w.output_len).div_ceil(1024) * 1024;
    let mut serve = json!({ "max_model_len": len });
    if model.moe {
        serve["expert_parallel"] = json!(true);
    }
    if model.mtp {
        serve["speculative"] = json!({ "method": "mtp", "tokens": 1 });
    }
    let batched = batched_tokens(model, decode_seqs, pd);
    let decode = json!({
        "max_num_seqs": decode_seqs,
        "max_num_batched_tokens": batched,
        "graph": "full_decode_only",
    });
    let prefill = json!({
        "max_num_seqs": 16,
        "max_num_batched_tokens": 16384,
        "graph": "eager",
    });
    let mut spec = json!({
        "name": candidate_name(hw, groups),
        "model": model.id,
        "hardware": hw.id,
        "image": image,
        "topology": topology,
        "ports": { "api": 7100, "dp_rpc": 12321 },
        "serve": serve,
        "provenance": { "recorded": tables::image(image).map_or("2026-01-01", |i| i.date) },
        "bench": {
            "input_len": w.input_len,
            "output_len": w.output_len,
            "num_prompts": w.concurrency.unwrap_or(64).max(1) * 4,
        },
    });
    if let Some(c) = w.concurrency {
        spec["bench"]["max_concurrency"] = json!(c);
    }
    if let Some(r) = w.request_rate {
        spec["bench"]["request_rate"] = json!(r.to_string());
    }
    if pd {
        let kind = if model.hybrid_kv {
            "mooncake_hybrid"
        } else {
            "mooncake_v1"
        };
        // Above AscendDirectTransport's range [20000, 20000 + 1000 x NPUs)
        // and its edge (rules kv_port_in_adxl_range, kv_port_on_adxl_edge).
        let base = 20000 + 1000 * hw.npus_per_node + 100;
        spec["connector"] =
            json!({ "kind": kind, "kv_port": { "prefill": [base], "decode": [base + 100] } });
        spec["proxy"] = json!({ "port": 1999 });
        spec["roles"] = json!({ "prefill": prefill, "decode": decode });
    } else {
        // A mixed engine prefills too: a chunk of a prompt per step.
        let mut mixed = decode;
        mixed["max_num_batched_tokens"] = json!(batched);
        spec["roles"] = json!({ "mixed": mixed });
    }
    spec
}

/// One engine group of a candidate: role, engines, DP, TP.
#[derive(Clone, Copy, Debug)]
struct Group {
    role: &'static str,
    count: u32,
    dp: u32,
    tp: u32,
}

impl Group {
    fn new(role: &'static str, count: u32, dp: u32, tp: u32) -> Group {
        Group {
            role,
            count,
            dp,
            tp,
        }
    }
}

/// Rules whose verdict on a PD pair of engine shapes holds for every count
/// of engines and every `max_num_seqs` above one: the pair's TPs
/// (`prefill_tp_ge_decode_tp`) and the weights with the least reserves
/// (`weights_fit`: reserves only grow with requests per rank).
const SHAPE_RULES: &[&str] = &["prefill_tp_ge_decode_tp", "weights_fit"];

/// A PD pair of engine shapes (one engine each) and its counts: prefill
/// engines, decode engines, nodes.
type ShapePair = ([Group; 2], Vec<(u32, u32, u32)>);

/// The rule of [`SHAPE_RULES`] that refuses a pair of shapes at one
/// engine each and one request per rank, if any.
fn shape_refusal(bases: &Bases, hw: &Hardware, probe: &[Group]) -> Option<&'static str> {
    let d = crate::check_owned(bases.spec(hw, probe, 1)).err()?;
    d.0.iter()
        .map(|x| x.rule.name())
        .find(|r| SHAPE_RULES.contains(r))
}

/// `f` of every item on every core (item i on thread i mod n: neighbouring
/// items cost alike, so each thread gets a like share), in item order.
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Result<Vec<R>, PlanError> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, 8);
    let f = &f;
    let per_thread: Vec<Vec<R>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| scope.spawn(move || items.iter().skip(t).step_by(threads).map(f).collect()))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| PlanError("internal: checking a candidate panicked".into()))
            })
            .collect::<Result<Vec<Vec<R>>, PlanError>>()
    })?;
    let mut iters: Vec<_> = per_thread.into_iter().map(Vec::into_iter).collect();
    let mut out = Vec::with_capacity(items.len());
    for i in 0..items.len() {
        if let Some(r) = iters.get_mut(i % threads).and_then(Iterator::next) {
            out.push(r);
        }
    }
    Ok(out)
}

/// The candidates' layouts: one spec per kind read through the loader
/// once, then per candidate its topology, name and decode batch set; the
/// same spec [`candidate_json`] reads to (a test holds the two equal).
struct Bases {
    pd: LayoutSpec,
    mixed: LayoutSpec,
    model: &'static Model,
}

impl Bases {
    fn new(
        model: &'static Model,
        hw: &Hardware,
        image: &str,
        w: &Workload,
    ) -> Result<Bases, PlanError> {
        let read = |groups: &[Group], pd: bool| -> Result<LayoutSpec, PlanError> {
            serde_json::from_value(candidate_json(model, hw, image, groups, w, pd, 1))
                .map_err(|e| PlanError(format!("internal: a candidate does not load: {e}")))
        };
        Ok(Bases {
            pd: read(
                &[
                    Group::new("prefill", 1, 1, 1),
                    Group::new("decode", 1, 1, 1),
                ],
                true,
            )?,
            mixed: read(&[Group::new("mixed", 1, 1, 1)], false)?,
            model,
        })
    }

    fn spec(&self, hw: &Hardware, groups: &[Group], seqs: u64) -> LayoutSpec {
        use crate::Spanned;
        use crate::spec::{EngineGroup, Role};
        let pd = groups.iter().any(|g| g.role == "prefill");
        let mut spec = if pd {
            self.pd.clone()
        } else {
            self.mixed.clone()
        };
        spec.name = Spanned::bare(candidate_name(hw, groups));
        spec.topology = groups
            .iter()
            .map(|g| EngineGroup {
                role: Spanned::bare(match g.role {
                    "prefill" => Role::Prefill,
                    "decode" => Role::Decode,
                    _ => Role::Mixed,
                }),
                count: Spanned::bare(u64::from(g.count)),
                dp: Spanned::bare(u64::from(g.dp)),
                tp: Spanned::bare(u64::from(g.tp)),
                ..EngineGroup::default()
            })
            .collect();
        let role = if pd { Role::Decode } else { Role::Mixed };
        if let Some(r) = spec.roles.get_mut(&role) {
            let tokens = batched_tokens(self.model, seqs, pd);
            r.max_num_seqs = Some(Spanned::bare(seqs));
            r.max_num_batched_tokens = Some(Spanned::bare(tokens));
        }
        spec
    }
}

/// The decode (or mixed) engine's `max_num_batched_tokens` for `seqs`
/// requests a step: each request's token plus its MTP draft, at least 16; a
/// mixed engine also prefills, a chunk of a prompt per step, so at least
/// 8192.
fn batched_tokens(model: &Model, seqs: u64, pd: bool) -> u64 {
    let per_step = if model.mtp { 2 } else { 1 };
    let decode = (seqs * per_step).max(16);
    if pd { decode } else { decode.max(8192) }
}

/// `plan/a3-prefill1x2tp8-decode1x16tp1`.
fn candidate_name(hw: &Hardware, groups: &[Group]) -> String {
    format!(
        "plan/{}-{}",
        hw.id,
        groups
            .iter()
            .map(|g| format!("{}{}x{}tp{}", g.role, g.count, g.dp, g.tp))
            .collect::<Vec<_>>()
            .join("-")
    )
}

/// One candidate checked and estimated, or the rule that refuses it.
fn candidate(
    bases: &Bases,
    hw: &Hardware,
    groups: &[Group],
    w: &Workload,
    req: &Request,
) -> Result<Candidate, String> {
    let pd = groups.iter().any(|g| g.role == "prefill");
    let decode_ranks: u64 = groups
        .iter()
        .filter(|g| g.role != "prefill")
        .map(|g| u64::from(g.count) * u64::from(g.dp))
        .sum();
    let seqs = w
        .concurrency
        .map_or(64, |c| c.div_ceil(decode_ranks.max(1)))
        .clamp(1, 256);
    let layout = crate::check_owned(bases.spec(hw, groups, seqs)).map_err(|d| {
        d.0.first()
            .map_or("read".to_owned(), |x| x.rule.name().to_owned())
    })?;
    let est = estimate::estimate_with(&layout, w, &estimate::CALIBRATION)
        .ok_or_else(|| "no estimate".to_owned())?;
    let meets = req.ttft_s.is_none_or(|t| est.ttft_s <= t)
        && req.tpot_ms.is_none_or(|t| est.tpot_ms <= t)
        && req
            .target_tokens_per_s
            .is_none_or(|t| est.output_tokens_per_s >= t);
    let kind = if pd {
        format!("{}P{}D", groups[0].count, groups[1].count)
    } else {
        format!("mixed x{}", groups[0].count)
    };
    let topology = groups
        .iter()
        .map(|g| format!("{} {} x dp{}tp{};", g.role, g.count, g.dp, g.tp))
        .collect::<Vec<_>>()
        .join(" ");
    Ok(Candidate {
        kind,
        topology: format!("<{topology}>"),
        nodes: 0,
        npus: 0,
        estimate: est,
        meets,
        groups: groups.to_vec(),
        seqs,
    })
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The candidates' specs, set on a base, equal what the loader reads
    /// from each candidate's JSON.
    #[test]
    fn a_candidate_spec_is_what_the_loader_reads() {
        let model = tables::model("deepseek_v4_flash_w8a8_mtp").unwrap();
        for hw_id in ["a2", "a3"] {
            let hw = tables::hardware(hw_id).unwrap();
            let image = default_image(hw).unwrap();
            let w = Workload {
                input_len: 3500,
                output_len: 1500,
                prefix_rate: 0.0,
                concurrency: Some(100),
                request_rate: Some(4.0),
            };
            let bases = Bases::new(model, hw, image, &w).unwrap();
            for (groups, seqs) in [
                (
                    vec![
                        Group::new("prefill", 2, 4, 4),
                        Group::new("decode", 3, 16, 1),
                    ],
                    7,
                ),
                (
                    vec![
                        Group::new("prefill", 1, 1, 16),
                        Group::new("decode", 1, 32, 1),
                    ],
                    256,
                ),
                (vec![Group::new("mixed", 2, 8, 2)], 1),
            ] {
                let pd = groups[0].role == "prefill";
                let read: LayoutSpec =
                    serde_json::from_value(candidate_json(model, hw, image, &groups, &w, pd, seqs))
                        .unwrap();
                assert_eq!(bases.spec(hw, &groups, seqs), read, "{groups:?}");
            }
        }
    }
}
