//! What a layout will serve: output and total tokens/s, TTFT and TPOT at a
//! workload, per role and for the whole deployment, before anyone starts
//! it.
//!
//! The model is a roofline per role with four fitted constants
//! ([`Calibration`]), built on the memory budget ([`crate::capacity`]):
//!
//! - **Decode** is bound by memory bandwidth: one step of a DP rank reads
//!   its dense weights, the routed experts the step's tokens activate over
//!   the expert group (`1 - (1 - 1/E)^(tokens x top-k)` of them) and the KV
//!   of every request it runs, at
//!   `hbm_efficiency` of the NPU's HBM bandwidth per NPU of the rank, plus
//!   a fixed `step_overhead` (kernel launches, MoE dispatch/combine, the
//!   scheduler). A step emits `1 + a + a^2 + ... + a^k` tokens per request
//!   with `k` MTP tokens accepted with probability `mtp_acceptance` each
//!   (chain acceptance). The batch per rank is the workload's concurrency
//!   over the decode ranks, at most `max_num_seqs` and what the KV cache
//!   holds.
//! - **Prefill** is bound by compute: `2 x active parameters` FLOPs per
//!   token plus attention over the context (`4 x heads x (qk + v) dims`
//!   per context token and layer, the context capped at the DSA indexer's
//!   top-k where the model has one), at `prefill_mfu` of the NPU's peak
//!   (INT8 where the weights and activations are 8-bit, else BF16). A
//!   prefix-cache hit rate removes that share of the prompt's compute.
//! - **KV transfer** (PD): the prompt's KV for the whole model crosses one
//!   NPU's inter-node link; it adds to TTFT.
//! - **The deployment** runs a closed loop of `concurrency` requests (or an
//!   open one at `request_rate`): requests/s is the least of what the loop
//!   sustains (`concurrency / (TTFT + OSL x TPOT)`), the prefill ranks'
//!   capacity, the decode ranks' capacity at their largest batch and the
//!   rate. A mixed layout's ranks share their time between the two.
//! - **Queueing** ([`queue`]): when the layout, not the loop, bounds what
//!   completes, requests wait before their first token (Little's law for a
//!   closed loop; Kingman-Sakasegawa per stage for an open one below
//!   capacity; without bound above it). The wait is part of TTFT.
//!
//! The hardware figures ([`HardwarePeak`]) carry their sources; the four
//! constants are fitted on upstream's frozen e2e baselines by
//! `tests/tests/estimate_calibration.rs`, which reports leave-one-out errors
//! (BENCHMARKS.md) and fails when [`CALIBRATION`] is not its fit.

mod balance;
mod queue;

pub use balance::{BALANCE_RATIO, Balance};

use crate::capacity::{self, RoleBudget};
use crate::dims::{self, AttentionDims, Params};
use crate::layout::Layout;
use crate::spec::Role;
use serde::Serialize;

/// Peak figures of one NPU as the runtime counts NPUs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct HardwarePeak {
    /// Hardware table id.
    pub id: &'static str,
    /// Dense BF16/FP16 TFLOPS.
    pub bf16_tflops: f64,
    /// Dense INT8 (A2/A3) or FP8 (950DT) TOPS.
    pub int8_tops: f64,
    /// HBM bandwidth, TB/s.
    pub hbm_tb_s: f64,
    /// Inter-node link per NPU, GB/s (one direction).
    pub link_gb_s: f64,
    /// Where the figures come from.
    pub source: &'static str,
}

/// The hardware table's peaks. A3 counts one die of an Ascend 910C as an
/// NPU (16 per node).
pub const PEAKS: &[HardwarePeak] = &[
    HardwarePeak {
        id: "a2",
        bf16_tflops: 313.0,
        int8_tops: 626.0,
        hbm_tb_s: 1.6,
        link_gb_s: 25.0,
        source: "Ascend 910B3 (upstream docs' \"A2-313T\", vllm-ascend docs/source/tutorials/models/DeepSeekOCR2.md); INT8 = 2 x FP16; HBM 1.6 TB/s and one 200GE RoCE port per NPU as light-llm-simulator conf/hardware_config.py models them",
    },
    HardwarePeak {
        id: "a3",
        bf16_tflops: 376.0,
        int8_tops: 752.0,
        hbm_tb_s: 1.6,
        link_gb_s: 25.0,
        source: "one die of an Ascend 910C (A3-752T: 752 TFLOPS FP16 per two-die package, vllm-ascend docs); HBM 3.2 TB/s and 400 Gb/s RoCE per package (CloudMatrix384, arXiv 2506.12708), halved per die; INT8 = 2 x FP16",
    },
    HardwarePeak {
        id: "ascend_950dt",
        bf16_tflops: 500.0,
        int8_tops: 1000.0,
        hbm_tb_s: 4.0,
        link_gb_s: 50.0,
        source: "Ascend 950DT as announced at Huawei Connect 2025: FP8 1 PFLOPS, HBM 4 TB/s (HiZQ 2.0); BF16 taken as FP8 / 2 and the link as 400 Gb/s, neither published",
    },
];

/// The fitted constants.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Calibration {
    /// Share of the HBM bandwidth a decode step achieves.
    pub hbm_efficiency: f64,
    /// Fixed time per decode step, ms.
    pub step_overhead_ms: f64,
    /// Share of peak compute prefill achieves.
    pub prefill_mfu: f64,
    /// Probability each MTP token is accepted.
    pub mtp_acceptance: f64,
}

/// The constants in force: the fit of `tests/tests/estimate_calibration.rs`
/// on upstream's frozen baselines (it fails when these are not its fit).
pub const CALIBRATION: Calibration = Calibration {
    hbm_efficiency: 0.5,
    step_overhead_ms: 15.0,
    prefill_mfu: 0.075,
    mtp_acceptance: 0.4,
};

/// The workload an estimate is for.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Workload {
    /// Prompt tokens.
    pub input_len: u64,
    /// Output tokens per request.
    pub output_len: u64,
    /// Share of the prompt served from the prefix cache, 0-1.
    pub prefix_rate: f64,
    /// Requests in flight (closed loop), if bounded.
    pub concurrency: Option<u64>,
    /// Requests per second offered, if paced.
    pub request_rate: Option<f64>,
}

impl Workload {
    /// The layout's declared workload (`bench`), without prefix hits.
    pub fn of_layout(layout: &Layout) -> Option<Workload> {
        let b = layout.spec.bench.as_ref()?;
        let rate = b
            .request_rate
            .as_ref()
            .and_then(|r| r.value.trim().parse::<f64>().ok())
            .filter(|r| r.is_finite() && *r > 0.0);
        // How many at once: the memory budget's reading of the bench, one
        // rule for both.
        let concurrency = capacity::workload(layout).and_then(|(_, c)| c);
        Some(Workload {
            input_len: b.input_len.value,
            output_len: b.output_len.value,
            prefix_rate: 0.0,
            concurrency,
            request_rate: rate,
        })
    }
}

/// One role's figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RoleEstimate {
    /// The role.
    pub role: Role,
    /// DP ranks of the role over all its engines.
    pub ranks: u64,
    /// NPUs of one rank.
    pub npus_per_rank: u64,
    /// Requests one decode rank runs at once at this workload.
    pub batch_per_rank: f64,
    /// Seconds one rank takes to prefill one prompt (its uncached part).
    pub prefill_s: f64,
    /// Seconds of one decode step at `batch_per_rank`.
    pub step_s: f64,
    /// Tokens a step emits per request (MTP included).
    pub tokens_per_step: f64,
    /// Requests/s the role can take at most.
    pub capacity_rps: f64,
}

/// What a layout serves at a workload.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// The workload.
    pub workload: Workload,
    /// Per role, in the layout's role order.
    pub roles: Vec<RoleEstimate>,
    /// Requests per second the deployment completes.
    pub requests_per_s: f64,
    /// Output tokens/s over the whole deployment (what upstream's CI
    /// baselines measure: aisbench `Output Token Throughput`).
    pub output_tokens_per_s: f64,
    /// Input plus output tokens/s over the whole deployment.
    pub total_tokens_per_s: f64,
    /// Output tokens/s per NPU of the deployment.
    pub output_tokens_per_s_per_npu: f64,
    /// Time to first token, s: the wait, prefill and KV transfer (without
    /// the wait when it has no bound, see `queue_s`).
    pub ttft_s: f64,
    /// KV transfer's share of it, s.
    pub kv_transfer_s: f64,
    /// The wait before prefill (or a decode slot) in it, s; `null` when an
    /// open loop offers more than the layout completes, so the wait grows
    /// for as long as the run lasts.
    pub queue_s: Option<f64>,
    /// Time per output token, ms.
    pub tpot_ms: f64,
    /// What bounds the throughput: `concurrency`, `prefill`, `decode` or
    /// `request rate`.
    pub bound: &'static str,
    /// The error band: the calibration's leave-one-out median error, as a
    /// fraction (the estimate is likely within `x (1 +- band)`).
    pub band: f64,
    /// PD: the side that idles when one role's capacity exceeds the
    /// other's by more than [`BALANCE_RATIO`].
    pub balance: Option<Balance>,
}

/// What a TTFT without a bound reads as (an open loop offering more than
/// the layout completes).
pub const NO_BOUND: &str = "no bound";

impl Estimate {
    /// TTFT as documents print it: `1.23 s`, or [`NO_BOUND`].
    pub fn ttft_text(&self) -> String {
        match self.queue_s {
            Some(_) => format!("{} s", self.ttft_figure(1.0, 2)),
            None => NO_BOUND.to_owned(),
        }
    }

    /// TTFT as a table column prints it: in units of `1 / per_second` of a
    /// second (1 for s, 1000 for ms) to `decimals`, or [`NO_BOUND`].
    pub fn ttft_figure(&self, per_second: f64, decimals: usize) -> String {
        match self.queue_s {
            Some(_) => format!("{:.*}", decimals, self.ttft_s * per_second),
            None => NO_BOUND.to_owned(),
        }
    }

    /// Whether TTFT is within `limit_s` (never, when it has no bound).
    pub fn ttft_within(&self, limit_s: f64) -> bool {
        self.queue_s.is_some() && self.ttft_s <= limit_s
    }
}

/// Leave-one-out median absolute error of [`CALIBRATION`] on upstream's
/// baselines (tests/tests/estimate_calibration.rs, BENCHMARKS.md).
pub const BAND: f64 = 0.26;

/// The numbers of a `vllm bench serve --save-result` file that a measured
/// run is compared by (`catalog calibrate`), besides `max_concurrency` and
/// `request_rate`: vLLM writes each (vllm/benchmarks/serve.py; a test reads
/// them in every pinned vLLM, and the rehearsal's stand-in writes them).
pub const BENCH_RESULT_KEYS: [&str; 4] = [
    "completed",
    "total_input_tokens",
    "total_output_tokens",
    "output_throughput",
];

/// The peaks of hardware `id`.
pub fn peak(id: &str) -> Option<&'static HardwarePeak> {
    PEAKS.iter().find(|p| p.id == id)
}

/// Parameters one token activates (routed experts: `experts_per_token`
/// of them; `lm_head` once).
fn active_params(p: &Params, arch: &dims::Architecture) -> f64 {
    let routed = if arch.routed_experts == 0 {
        0.0
    } else {
        p.routed_experts as f64 * arch.experts_per_token as f64 / arch.routed_experts as f64
    };
    (p.embedding as f64) / 2.0
        + (p.attention + p.dense_mlp + p.shared_experts + p.router) as f64
        + routed
}

/// Attention FLOPs per token per context token (all layers), and the
/// context cap (DSA's top-k).
fn attention_flops(arch: &dims::Architecture) -> (f64, Option<u64>) {
    let layers = arch.layers as f64;
    match arch.attention {
        AttentionDims::Mla {
            heads,
            qk_nope_head_dim,
            qk_rope_head_dim,
            v_head_dim,
            indexer,
            ..
        } => (
            2.0 * layers * heads as f64 * (qk_nope_head_dim + qk_rope_head_dim + v_head_dim) as f64,
            // DSA attends to the indexer's top 2048 tokens (index_topk).
            indexer.map(|_| 2048),
        ),
        AttentionDims::Gqa {
            heads, head_dim, ..
        } => (2.0 * layers * heads as f64 * 2.0 * head_dim as f64, None),
        // Only the full-attention layers attend over the context; a Gated
        // DeltaNet layer's recurrent update does not grow with it.
        AttentionDims::Hybrid {
            heads,
            head_dim,
            full_layers,
            ..
        } => (
            2.0 * full_layers as f64 * heads as f64 * 2.0 * head_dim as f64,
            None,
        ),
        AttentionDims::V4 {
            heads,
            head_dim,
            sliding_window,
            ..
        } => (
            2.0 * layers * heads as f64 * 2.0 * head_dim as f64,
            Some(sliding_window.max(2048)),
        ),
    }
}

/// Whether the weights and activations are 8-bit (INT8 matmuls).
fn int8_compute(format: &dims::WeightFormat) -> bool {
    format.name.contains("a8") || format.name.contains("a4")
}

/// `1 + a + ... + a^k`.
fn tokens_per_step(k: u64, a: f64) -> f64 {
    (0..=k.min(16)).map(|i| a.powi(i as i32)).sum()
}

/// The estimate of a checked layout at `w` with constants `c`; `None` for
/// a model without dimensions or hardware without peaks.
pub fn estimate_with(layout: &Layout, w: &Workload, c: &Calibration) -> Option<Estimate> {
    estimate_from(layout, &capacity::budget(layout), w, c)
}

/// [`estimate_with`] on the layout's budget, computed once (the
/// calibration evaluates many constants on one layout).
pub fn estimate_from(
    layout: &Layout,
    budgets: &[RoleBudget],
    w: &Workload,
    c: &Calibration,
) -> Option<Estimate> {
    let md = dims::dims_for(layout.model.id)?;
    let hw = peak(layout.hardware.id)?;
    let arch = md.arch;
    let params = arch.params();
    if budgets.is_empty() {
        return None;
    }
    let isl = w.input_len as f64;
    let osl = w.output_len.max(1) as f64;
    let uncached = isl * (1.0 - w.prefix_rate.clamp(0.0, 1.0));
    let (attn, cap) = attention_flops(arch);
    let flops_per_token = 2.0 * active_params(&params, arch);
    // Mean context over the uncached prompt, capped where attention is sparse.
    let ctx = |len: f64| cap.map_or(len, |k| len.min(k as f64));
    let prefill_flops =
        uncached * (flops_per_token + attn * ctx((isl + isl - uncached) / 2.0 + uncached / 2.0));
    let peak_flops = if int8_compute(md.format) {
        hw.int8_tops
    } else {
        hw.bf16_tflops
    } * 1e12;
    let bw = hw.hbm_tb_s * 1e12 * c.hbm_efficiency;
    let npus_total: u64 =
        layout.placement.nodes.len() as u64 * u64::from(layout.hardware.npus_per_node);
    let mtp = |role: Role| {
        layout
            .serve
            .get(&role)
            .and_then(|s| s.speculative.as_ref())
            .map_or(0, |s| s.tokens)
    };
    let pd = layout.is_pd();
    let (p_role, d_role) = if pd {
        (Role::Prefill, Role::Decode)
    } else {
        (Role::Mixed, Role::Mixed)
    };
    let pb = budgets.iter().find(|b| b.role == p_role)?;
    let db = budgets.iter().find(|b| b.role == d_role)?;
    let ranks_of = |b: &RoleBudget| u64::from(b.dp) * engines_of(layout, b.role);
    let npus_of = |b: &RoleBudget| u64::from(b.tp) * u64::from(b.pcp);
    let prefill_s = prefill_flops / (peak_flops * c.prefill_mfu * npus_of(pb) as f64);
    let (p_ranks, d_ranks) = (ranks_of(pb) as f64, ranks_of(db) as f64);
    let slots = db
        .max_num_seqs
        .min(db.workload.map_or(db.max_num_seqs, |f| f.fit_per_rank))
        .max(1) as f64;
    let tps = tokens_per_step(mtp(d_role), c.mtp_acceptance);
    let spec_tokens = 1.0 + mtp(d_role) as f64;
    let step_at = |batch: f64| {
        step_time(
            arch,
            db,
            batch,
            spec_tokens,
            isl + osl / 2.0,
            bw,
            npus_of(db),
            c,
        )
    };
    // The prompt's KV for the whole model (a decode rank holds every layer
    // of its requests) over one NPU's link.
    let kv_transfer = if pd {
        isl * db.kv_bytes_per_token as f64 * f64::from(db.tp.max(1)).min(kv_split(arch))
            / (hw.link_gb_s * 1e9)
    } else {
        0.0
    };
    let ttft = prefill_s + kv_transfer;
    let cycle = |batch: f64| ttft + osl * step_at(batch) / tps;
    // Requests in flight: the closed loop's concurrency, what the rate keeps
    // in flight (rate x cycle, a fixed point), or every slot.
    let concurrency = w.concurrency.map(|c| c as f64);
    let mut batch = slots;
    for _ in 0..60 {
        let by_rate = w.request_rate.map(|r| r * cycle(batch));
        let n = match (concurrency, by_rate) {
            (Some(c), Some(r)) => c.min(r),
            (Some(c), None) => c,
            (None, Some(r)) => r,
            (None, None) => slots * d_ranks,
        };
        let next = (n / d_ranks).clamp(1.0, slots);
        if (next - batch).abs() < 1e-6 {
            break;
        }
        batch = (batch + next) / 2.0;
    }
    let step = step_at(batch);
    let tpot = step / tps;
    let full = step_at(slots);
    let mut caps: Vec<(&'static str, f64)> = Vec::new();
    let mut roles = Vec::new();
    if pd {
        let p_cap = p_ranks / prefill_s;
        let d_cap = d_ranks * slots * tps / (full * osl);
        caps.push(("prefill", p_cap));
        caps.push(("decode", d_cap));
        roles.push(RoleEstimate {
            role: Role::Prefill,
            ranks: p_ranks as u64,
            npus_per_rank: npus_of(pb),
            batch_per_rank: 0.0,
            prefill_s,
            step_s: 0.0,
            tokens_per_step: 0.0,
            capacity_rps: p_cap,
        });
        roles.push(RoleEstimate {
            role: Role::Decode,
            ranks: d_ranks as u64,
            npus_per_rank: npus_of(db),
            batch_per_rank: batch,
            prefill_s: 0.0,
            step_s: step,
            tokens_per_step: tps,
            capacity_rps: d_cap,
        });
    } else {
        // Each request costs a rank its prefill plus its share of the decode
        // steps at a full batch.
        let cap = d_ranks / (prefill_s + osl * full / (tps * slots));
        caps.push(("decode", cap));
        roles.push(RoleEstimate {
            role: Role::Mixed,
            ranks: d_ranks as u64,
            npus_per_rank: npus_of(db),
            batch_per_rank: batch,
            prefill_s,
            step_s: step,
            tokens_per_step: tps,
            capacity_rps: cap,
        });
    }
    if let Some(c) = concurrency {
        caps.push(("concurrency", c / cycle(batch)));
    }
    if let Some(r) = w.request_rate {
        caps.push(("request rate", r));
    }
    let balance = balance::balance(layout, &roles);
    let (bound, rps) = caps
        .iter()
        .copied()
        .filter(|(_, r)| r.is_finite())
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    // The wait before the first token: none when the loop bounds itself;
    // the open loop's queues at the rate it offers when that bounds it;
    // else what Little's law leaves of the closed loop's cycle, or no bound
    // for an open loop beyond what the layout completes.
    let queue = match (bound, w.request_rate) {
        ("concurrency", _) => Some(0.0),
        ("request rate", Some(r)) => {
            let stages = if pd {
                vec![
                    queue::Stage {
                        servers: p_ranks,
                        service_s: prefill_s,
                    },
                    queue::Stage {
                        servers: d_ranks * slots,
                        service_s: osl * step / tps,
                    },
                ]
            } else {
                // A mixed rank serves a request as its capacity counts it.
                vec![queue::Stage {
                    servers: d_ranks,
                    service_s: prefill_s + osl * full / (tps * slots),
                }]
            };
            queue::open_wait(r, &stages)
        }
        _ => match (concurrency, w.request_rate) {
            (Some(c), _) => Some(queue::closed_wait(c, rps, cycle(batch))),
            (None, Some(_)) => None,
            (None, None) => Some(queue::closed_wait(slots * d_ranks, rps, cycle(batch))),
        },
    };
    Some(Estimate {
        workload: *w,
        roles,
        requests_per_s: rps,
        output_tokens_per_s: rps * osl,
        total_tokens_per_s: rps * (osl + isl),
        output_tokens_per_s_per_npu: rps * osl / npus_total.max(1) as f64,
        ttft_s: ttft + queue.unwrap_or(0.0),
        kv_transfer_s: kv_transfer,
        queue_s: queue,
        tpot_ms: tpot * 1e3,
        bound,
        band: BAND,
        balance,
    })
}

/// How far the KV per token on a rank is split over TP (MLA and V4 keep
/// one latent head per rank: not split; GQA down to one head).
fn kv_split(arch: &dims::Architecture) -> f64 {
    match arch.attention {
        AttentionDims::Gqa { kv_heads, .. } | AttentionDims::Hybrid { kv_heads, .. } => {
            kv_heads as f64
        }
        _ => 1.0,
    }
}

/// Share of a rank's routed experts one step activates: the step routes
/// `tokens x experts_per_token` choices over the `routed_experts` of the
/// group that splits them, so a rank reads the experts hit at least once,
/// `1 - (1 - 1/E)^choices` of its own.
fn routed_share(arch: &dims::Architecture, tokens: f64) -> f64 {
    if arch.routed_experts == 0 {
        return 1.0;
    }
    let e = arch.routed_experts as f64;
    let choices = tokens * arch.experts_per_token as f64;
    1.0 - (1.0 - 1.0 / e).powf(choices)
}

/// One decode step of a rank running `batch` requests of mean context
/// `ctx`, each `tokens_per_request` tokens a step (MTP's drafts too): the
/// rank's dense weights, the routed experts the step activates over the
/// expert group and every request's KV, over the rank's NPUs' bandwidth,
/// plus the fixed overhead.
#[allow(clippy::too_many_arguments)]
fn step_time(
    arch: &dims::Architecture,
    b: &RoleBudget,
    batch: f64,
    tokens_per_request: f64,
    ctx: f64,
    bw: f64,
    npus: u64,
    c: &Calibration,
) -> f64 {
    // Ranks whose batches share the experts (DP ranks of the engine with
    // expert parallelism).
    let group = f64::from(b.ep.max(1)) / f64::from(b.tp.max(1));
    let share = routed_share(arch, batch * tokens_per_request * group.max(1.0));
    let w = &b.weights;
    let weights =
        ((w.total() - w.routed) as f64 + w.routed as f64 * share) * f64::from(b.tp.max(1));
    let kv = batch
        * (ctx * b.kv_bytes_per_token as f64 + b.kv_bytes_per_request as f64)
        * f64::from(b.tp.max(1));
    c.step_overhead_ms / 1e3 + (weights + kv) / (bw * npus as f64)
}

/// Engines of `role`.
fn engines_of(layout: &Layout, role: Role) -> u64 {
    layout
        .placement
        .engines
        .iter()
        .filter(|e| e.role == role)
        .count() as u64
}

/// The estimate at the layout's declared workload with [`CALIBRATION`].
pub fn estimate(layout: &Layout) -> Option<Estimate> {
    estimate_with(layout, &Workload::of_layout(layout)?, &CALIBRATION)
}
