//! The candidates of [`super::plan`]: engine shapes, each candidate's
//! layout (as the loader's JSON and as a spec set on a per-model base), the
//! shape probes that refuse a PD pair before any count is tried, and the
//! parallel map that checks them.

use super::{Candidate, PlanError, Request};
use crate::estimate::{self, Workload};
use crate::spec::LayoutSpec;
use crate::tables::{self, Hardware, Model};
use serde_json::{Value as Json, json};

/// Powers of two up to `n`.
pub(super) fn powers(n: u32) -> impl Iterator<Item = u32> {
    (0..32).map(|i| 1u32 << i).take_while(move |k| *k <= n)
}

/// `dp x tp` shapes of an engine of `k` nodes.
pub(super) fn shapes(hw: &Hardware, k: u32) -> Vec<(u32, u32)> {
    let npn = hw.npus_per_node;
    (1..=npn)
        .filter(|tp| npn.is_multiple_of(*tp))
        .map(|tp| (k * npn / tp, tp))
        .collect()
}

/// The newest image with a build for `hw`.
pub(super) fn default_image(hw: &Hardware) -> Option<&'static str> {
    tables::IMAGES
        .iter()
        .rev()
        .find(|i| i.reference(hw).is_some())
        .map(|i| i.tag)
}

/// One candidate's layout as the loader's JSON.
#[allow(clippy::too_many_arguments)]
pub(super) fn candidate_json(
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
pub(super) struct Group {
    pub(super) role: &'static str,
    pub(super) count: u32,
    pub(super) dp: u32,
    pub(super) tp: u32,
}

impl Group {
    pub(super) fn new(role: &'static str, count: u32, dp: u32, tp: u32) -> Group {
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
pub(super) const SHAPE_RULES: &[&str] = &["prefill_tp_ge_decode_tp", "weights_fit"];

/// A PD pair of engine shapes (one engine each) and its counts: prefill
/// engines, decode engines, nodes.
pub(super) type ShapePair = ([Group; 2], Vec<(u32, u32, u32)>);

/// The rule of [`SHAPE_RULES`] that refuses a pair of shapes at one
/// engine each and one request per rank, if any.
pub(super) fn shape_refusal(bases: &Bases, hw: &Hardware, probe: &[Group]) -> Option<&'static str> {
    let d = crate::check_owned(bases.spec(hw, probe, 1)).err()?;
    d.0.iter()
        .map(|x| x.rule.name())
        .find(|r| SHAPE_RULES.contains(r))
}

/// `f` of every item on every core (item i on thread i mod n: neighbouring
/// items cost alike, so each thread gets a like share), in item order.
pub(super) fn par_map<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(&T) -> R + Sync,
) -> Result<Vec<R>, PlanError> {
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
pub(super) struct Bases {
    pd: LayoutSpec,
    mixed: LayoutSpec,
    model: &'static Model,
}

impl Bases {
    pub(super) fn new(
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

    pub(super) fn spec(&self, hw: &Hardware, groups: &[Group], seqs: u64) -> LayoutSpec {
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
pub(super) fn batched_tokens(model: &Model, seqs: u64, pd: bool) -> u64 {
    let per_step = if model.mtp { 2 } else { 1 };
    let decode = (seqs * per_step).max(16);
    if pd { decode } else { decode.max(8192) }
}

/// `plan/a3-prefill1x2tp8-decode1x16tp1`.
pub(super) fn candidate_name(hw: &Hardware, groups: &[Group]) -> String {
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
pub(super) fn candidate(
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
    let meets = req.ttft_s.is_none_or(|t| est.ttft_within(t))
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
