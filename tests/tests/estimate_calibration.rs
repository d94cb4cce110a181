//! The throughput estimate (`pd_dsl::estimate`) against upstream's own
//! frozen performance baselines: every multi-node e2e config of every
//! release of the corpus with a baseline (`benchmarks:` case with a
//! `baseline` above the runner's default 1) is imported, checked and
//! estimated at that case's workload (input, prefix-cache rate, output,
//! concurrency, rate, as the importer records them in the figure's
//! context). Identical cases across releases count once per distinct
//! baseline.
//!
//! The four constants of [`pd_dsl::estimate::Calibration`] are fitted on a
//! grid by the median absolute log error; each case's leave-one-out error
//! is its error under the fit of all the other cases. The test fails when
//! [`CALIBRATION`] or [`BAND`] is not what the corpus gives, or when the
//! generated section of BENCHMARKS.md is stale (`PD_BLESS=1` rewrites it).

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl::estimate::{BAND, CALIBRATION, Calibration, Workload, estimate_from};
use pd_dsl::import::{Input, Options, finish, import};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use pd_dsl_tests::harness::{workspace, workspace_python as python};

/// One baseline with its layout.
struct Case {
    key: String,
    label: String,
    layout: pd_dsl::Layout,
    budgets: Vec<pd_dsl::capacity::RoleBudget>,
    workload: Workload,
    measured: f64,
    /// Why the baseline cannot be what the deployment measured, if so.
    implausible: Option<String>,
}

/// The workload a figure's context states (written by the importer:
/// `input N tokens`, `P% prefix-cache hits`, `output up to N tokens`,
/// `concurrency N`, `R requests/s`).
fn workload_of(context: &str) -> Option<Workload> {
    let mut w = Workload {
        input_len: 0,
        output_len: 0,
        prefix_rate: 0.0,
        concurrency: None,
        request_rate: None,
    };
    for part in context.split(", ") {
        let num = |s: &str| {
            s.split_whitespace()
                .next()
                .and_then(|n| n.parse::<f64>().ok())
        };
        if let Some(r) = part.strip_prefix("input ") {
            w.input_len = num(r)? as u64;
        } else if let Some(r) = part.strip_prefix("output up to ") {
            w.output_len = num(r)? as u64;
        } else if let Some(r) = part.strip_prefix("concurrency ") {
            w.concurrency = Some(num(r)? as u64);
        } else if let Some(p) = part.strip_suffix("% prefix-cache hits") {
            w.prefix_rate = p.parse::<f64>().ok()? / 100.0;
        } else if let Some(r) = part.strip_suffix(" requests/s") {
            w.request_rate = r.parse().ok();
        }
    }
    (w.input_len > 0 && w.output_len > 0).then_some(w)
}

fn cases() -> Vec<Case> {
    let listing = python(&["scripts/upstream/e2e_oracle.py", "list"]);
    let mut trees: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut out: BTreeMap<String, Case> = BTreeMap::new();
    for line in listing.lines() {
        let Some((release, rel)) = line.split_once('\t') else {
            continue;
        };
        let tree = trees
            .entry(release.to_owned())
            .or_insert_with(|| {
                PathBuf::from(
                    python(&[
                        "scripts/upstream/corpus.py",
                        "path",
                        &format!("vllm-ascend=={release}"),
                    ])
                    .trim(),
                )
            })
            .clone();
        let text = std::fs::read_to_string(tree.join(rel)).expect("config");
        if !text.contains("baseline") {
            continue;
        }
        let opts = Options {
            image: Some(format!("v{release}")),
            ..Options::default()
        };
        let Ok(imported) = import(&[Input::new(format!("{release} {rel}"), text)], &opts) else {
            continue;
        };
        let Ok(spec) = finish(&imported) else {
            continue;
        };
        let Ok(layout) = pd_dsl::check(&spec) else {
            continue;
        };
        if pd_dsl::dims::dims_for(layout.model.id).is_none() {
            continue;
        }
        let budgets = pd_dsl::capacity::budget(&layout);
        let npus = layout.placement.nodes.len() as f64 * f64::from(layout.hardware.npus_per_node);
        // (workload, baseline) of every case of this config, for the
        // copy-paste check.
        let mut seen: Vec<(Workload, f64)> = Vec::new();
        for f in &spec.figures {
            let (Some(m), Some(w)) = (
                f.value
                    .value
                    .strip_suffix(" tokens/s")
                    .and_then(|v| v.parse::<f64>().ok()),
                workload_of(&f.context.value),
            ) else {
                continue;
            };
            seen.push((w, m));
        }
        for f in &spec.figures {
            if f.metric.value != "output throughput" {
                continue;
            }
            let Some(measured) = f
                .value
                .value
                .strip_suffix(" tokens/s")
                .and_then(|v| v.parse::<f64>().ok())
            else {
                continue;
            };
            let Some(workload) = workload_of(&f.context.value) else {
                continue;
            };
            let shape: Vec<String> = spec
                .topology
                .iter()
                .map(|g| format!("{}{}x{}", g.role.value, g.count.value, g.shape()))
                .collect();
            let key = format!(
                "{} {} {} {workload:?} {measured}",
                layout.model.id,
                layout.hardware.id,
                shape.join("+")
            );
            let stem = rel.rsplit('/').next().unwrap_or(rel);
            let implausible = implausible(&workload, measured, npus, &seen);
            out.entry(key.clone()).or_insert_with(|| Case {
                key,
                label: format!("{stem} @ {release}"),
                layout: layout.clone(),
                budgets: budgets.clone(),
                workload,
                measured,
                implausible,
            });
        }
    }
    out.into_values().collect()
}

/// Why a baseline cannot be a measurement of its own workload, so it is
/// listed but neither fitted nor scored:
/// - more than 250 output tokens/s per request in flight (a TPOT under
///   4 ms: no layout of the table decodes that fast);
/// - under 1 token/s per NPU with 16 or more requests in flight (a
///   placeholder);
/// - the same figure as another case of the config whose concurrency
///   differs (a copied baseline).
fn implausible(
    w: &Workload,
    measured: f64,
    npus: f64,
    config: &[(Workload, f64)],
) -> Option<String> {
    if let Some(c) = w.concurrency
        && measured / c.max(1) as f64 > 250.0
    {
        return Some(format!(
            "{:.0} tokens/s per request in flight (TPOT under 4 ms)",
            measured / c.max(1) as f64
        ));
    }
    if w.concurrency.is_some_and(|c| c >= 16) && measured / npus < 1.0 {
        return Some(format!(
            "{:.2} tokens/s per NPU with {} requests in flight",
            measured / npus,
            w.concurrency.unwrap_or(0)
        ));
    }
    if config
        .iter()
        .any(|(o, m)| *m == measured && o.concurrency != w.concurrency)
    {
        return Some("the same figure as a case of the config at another concurrency".into());
    }
    None
}

/// The grid the constants are fitted on.
fn grid() -> Vec<Calibration> {
    let mut g = Vec::new();
    for e in [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9] {
        for o in [5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 60.0] {
            for m in [0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4] {
                for a in [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9] {
                    g.push(Calibration {
                        hbm_efficiency: e,
                        step_overhead_ms: o,
                        prefill_mfu: m,
                        mtp_acceptance: a,
                    });
                }
            }
        }
    }
    g
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// `|ln(predicted / measured)|`.
fn log_err(p: f64, m: f64) -> f64 {
    (p / m).ln().abs()
}

/// The grid point with the least median log error over `cases` (ties: the
/// first in grid order).
fn fit(errs: &[Vec<f64>], cases: impl Fn(usize) -> bool) -> usize {
    let mut best = (f64::INFINITY, 0);
    for (gi, row) in errs.iter().enumerate() {
        let m = median(
            row.iter()
                .enumerate()
                .filter(|(i, _)| cases(*i))
                .map(|(_, e)| *e)
                .collect(),
        );
        if m < best.0 {
            best = (m, gi);
        }
    }
    best.1
}

const BEGIN: &str = "<!-- estimate-calibration:begin (generated: PD_BLESS=1 cargo test -p pd-dsl-tests --test estimate_calibration) -->";
const END: &str = "<!-- estimate-calibration:end -->";

#[test]
fn the_estimate_is_calibrated_on_upstreams_baselines() {
    let cases = cases();
    assert!(
        cases.len() >= 20,
        "only {} baselines of sized models",
        cases.len()
    );
    let grid = grid();
    // errs[grid point][case]
    let preds: Vec<Vec<f64>> = grid
        .iter()
        .map(|c| {
            cases
                .iter()
                .map(|k| {
                    estimate_from(&k.layout, &k.budgets, &k.workload, c)
                        .map_or(f64::NAN, |e| e.output_tokens_per_s)
                })
                .collect()
        })
        .collect();
    let errs: Vec<Vec<f64>> = preds
        .iter()
        .map(|row| {
            row.iter()
                .zip(&cases)
                .map(|(p, k)| {
                    if p.is_finite() && *p > 0.0 {
                        log_err(*p, k.measured)
                    } else {
                        10.0
                    }
                })
                .collect()
        })
        .collect();
    let ok = |i: usize| cases[i].implausible.is_none();
    let all = fit(&errs, ok);
    let fitted = grid[all];
    // Leave-one-out: each case under the fit of the others.
    let mut rows = Vec::new();
    let mut loo_abs = Vec::new();
    let mut excluded = Vec::new();
    for (i, k) in cases.iter().enumerate() {
        if let Some(why) = &k.implausible {
            excluded.push((k, why));
            continue;
        }
        let gi = fit(&errs, |j| j != i && ok(j));
        let p = preds[gi][i];
        let abs = (p - k.measured).abs() / k.measured;
        loo_abs.push(abs);
        let e = estimate_from(&k.layout, &k.budgets, &k.workload, &grid[gi]).expect("estimate");
        // TTFT with its wait, as documents print it.
        let ttft = e.ttft_figure(1.0, 2);
        rows.push((abs, k, p, e.bound, e.tpot_ms, ttft));
    }
    let med = median(loo_abs.clone());
    // Within 2x either way: the estimate between half and twice the figure.
    let within_2x = rows
        .iter()
        .filter(|r| log_err(r.2, r.1.measured) <= 2f64.ln() + 1e-12)
        .count();
    rows.sort_by(|a, b| a.1.label.cmp(&b.1.label).then(a.1.key.cmp(&b.1.key)));
    let mut md = String::new();
    let _ = writeln!(md, "{BEGIN}");
    let _ = writeln!(
        md,
        "{} distinct baselines of sized models (of the corpus's multi-node e2e configs that import and check), {} of them scored ({} cannot be measurements of their workload, listed last). Fit on the scored: HBM efficiency {}, step overhead {} ms, prefill MFU {}, MTP acceptance {}. Leave-one-out median absolute error **{:.0}%**, {} of {} within 2x.\n",
        cases.len(),
        rows.len(),
        excluded.len(),
        fitted.hbm_efficiency,
        fitted.step_overhead_ms,
        fitted.prefill_mfu,
        fitted.mtp_acceptance,
        med * 100.0,
        within_2x,
        rows.len()
    );
    let _ = writeln!(
        md,
        "| case | model | hw | ISL/OSL | prefix | conc | rate | measured tok/s | LOO estimate | error | bound | TPOT ms | TTFT s |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (abs, k, p, bound, tpot, ttft) in &rows {
        let w = &k.workload;
        let _ = writeln!(
            md,
            "| `{}` | {} | {} | {}/{} | {:.0}% | {} | {} | {:.1} | {:.1} | {:+.0}% | {} | {:.1} | {} |",
            k.label,
            k.layout.model.id,
            k.layout.hardware.id,
            w.input_len,
            w.output_len,
            w.prefix_rate * 100.0,
            w.concurrency.map_or("-".to_owned(), |c| c.to_string()),
            w.request_rate.map_or("-".to_owned(), |r| r.to_string()),
            k.measured,
            p,
            (p - k.measured) / k.measured * 100.0,
            bound,
            tpot,
            ttft
        );
        let _ = abs;
    }
    if !excluded.is_empty() {
        let _ = writeln!(md, "\nNot scored:\n");
        let _ = writeln!(
            md,
            "| case | model | ISL/OSL | conc | measured tok/s | why |"
        );
        let _ = writeln!(md, "|---|---|---|---|---|---|");
        excluded.sort_by(|a, b| a.0.label.cmp(&b.0.label).then(a.0.key.cmp(&b.0.key)));
        for (k, why) in &excluded {
            let _ = writeln!(
                md,
                "| `{}` | {} | {}/{} | {} | {:.1} | {why} |",
                k.label,
                k.layout.model.id,
                k.workload.input_len,
                k.workload.output_len,
                k.workload
                    .concurrency
                    .map_or("-".to_owned(), |c| c.to_string()),
                k.measured
            );
        }
    }
    let _ = writeln!(md, "\n{}", tutorial_comparison());
    let _ = writeln!(md, "{END}");
    let path = workspace().join("BENCHMARKS.md");
    let text = std::fs::read_to_string(&path).expect("BENCHMARKS.md");
    let (Some(b), Some(e)) = (text.find(BEGIN), text.find(END)) else {
        panic!("BENCHMARKS.md has no estimate-calibration markers");
    };
    let fresh = format!("{}{}{}", &text[..b], md.trim_end(), &text[e + END.len()..]);
    let out_dir = workspace().join("target/tmp");
    let _ = std::fs::create_dir_all(&out_dir);
    let _ = std::fs::write(out_dir.join("estimate_calibration.md"), &md);
    eprintln!("{md}");
    if std::env::var_os("PD_BLESS").is_some() {
        std::fs::write(&path, fresh).expect("write BENCHMARKS.md");
    } else {
        assert!(
            fresh == text,
            "BENCHMARKS.md's estimate calibration is stale; rerun with PD_BLESS=1"
        );
    }
    assert_eq!(
        CALIBRATION, fitted,
        "pd_dsl::estimate::CALIBRATION is not the corpus's fit"
    );
    assert!(
        (BAND - (med * 100.0).round() / 100.0).abs() < 1e-9,
        "pd_dsl::estimate::BAND is {BAND}, the leave-one-out median error {med:.2}"
    );
}

/// The DeepSeek-V3.1 tutorial's 2P1D figures (seed 001, "8.1 使用 AISBench":
/// A3-752T, 4 nodes, prefill DP2+TP8, decode DP32+TP1, 3.5k/1.5k; TTFT
/// 6.16 s, TPOT 48.82 ms, "478 TPS per card"), what that unit counts, and
/// the estimate of the catalog's layout of that deployment at 700 requests
/// at once (the concurrency of upstream's CI case of the same deployment;
/// the tutorial states none).
fn tutorial_comparison() -> String {
    const TTFT_S: f64 = 6.16;
    const TPOT_MS: f64 = 48.82;
    const TPS_PER_CARD: f64 = 478.0;
    let layout = layouts::catalog()
        .expect("catalog")
        .iter()
        .find(|l| l.name() == "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d")
        .expect("the tutorial's 2P1D is registered")
        .clone();
    let npus = layout.placement.nodes.len() as f64 * f64::from(layout.hardware.npus_per_node);
    let (isl, osl) = (3500.0, 1500.0);
    let all = TPS_PER_CARD * npus;
    // As output tokens alone: requests decoding at once to emit that at
    // the tutorial's TPOT.
    let decoding = all * TPOT_MS / 1e3;
    // As input plus output: the output share.
    let output = all * osl / (isl + osl);
    let w = Workload {
        input_len: 3500,
        output_len: 1500,
        prefix_rate: 0.0,
        concurrency: Some(700),
        request_rate: None,
    };
    let e = estimate_from(
        &layout,
        &pd_dsl::capacity::budget(&layout),
        &w,
        &CALIBRATION,
    )
    .expect("estimate");
    let decode_ranks: u32 = layout
        .placement
        .engines
        .iter()
        .filter(|g| g.role == pd_dsl::Role::Decode)
        .map(|g| g.dp)
        .sum();
    let seqs = layout
        .serve
        .get(&pd_dsl::Role::Decode)
        .and_then(|s| s.max_num_seqs)
        .expect("the decode role sets max_num_seqs");
    format!(
        "The DeepSeek-V3.1 tutorial's 2P1D (seed 001: A3-752T, {n} NPUs, 3.5k/1.5k): TTFT {TTFT_S} s, TPOT {TPOT_MS} ms, {TPS_PER_CARD} TPS per card. {TPS_PER_CARD} x {n} NPUs = {all:.0} tokens/s. Read as output tokens alone, that needs {decoding:.0} requests decoding at once at its TPOT, {per_rank:.0} per decode rank, more than its `max_num_seqs` {seqs}; read as input plus output, it is {output:.0} output tokens/s ({out_npu:.0} per NPU), close to what upstream's CI baseline of the same deployment freezes (`DeepSeek_V3.1T_MTP1_3_5K_1_5K_PD.yaml` in the table above). So \"TPS per card\" counts input and output tokens per NPU. The estimate of `deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d` at 700 at once: {eo:.0} output tokens/s, {et:.0} input plus output tokens/s per NPU (tutorial {TPS_PER_CARD}), TTFT {ettft:.2} s, {wait:.2} s of it waiting (Little's law: the layout, bound by {bound}, completes fewer than 700 in flight would ask), TPOT {etpot:.1} ms (tutorial {TPOT_MS}). The tutorial's TTFT of {TTFT_S} s is not the steady state of its own figures: {rps_t:.2} requests/s at its TPOT keep {in_decode:.0} of the 700 decoding, so {before:.0} are before their first token, each for {little:.1} s on average by Little's law (a mean TTFT over a run that starts with every request at once, before the queue builds, reads lower).",
        n = npus,
        per_rank = decoding / f64::from(decode_ranks),
        out_npu = output / npus,
        eo = e.output_tokens_per_s,
        et = e.total_tokens_per_s / npus,
        ettft = e.ttft_s,
        wait = e.queue_s.expect("a closed loop's wait is bounded"),
        bound = e.bound,
        etpot = e.tpot_ms,
        rps_t = output / osl,
        in_decode = output * TPOT_MS / 1e3,
        before = 700.0 - output * TPOT_MS / 1e3,
        little = (700.0 - output * TPOT_MS / 1e3) / (output / osl),
    )
}

/// The context parser reads what the importer writes.
#[test]
fn a_figures_workload_is_read_from_its_context() {
    let w = workload_of("upstream CI baseline `x` (tools/aisbench.py ...; passes at 0.97 x baseline), dataset `d`, input 3500 tokens, 90% prefix-cache hits, output up to 1500 tokens, 4096 prompts, concurrency 1024, 12 requests/s").unwrap();
    assert_eq!(
        (w.input_len, w.output_len, w.concurrency),
        (3500, 1500, Some(1024))
    );
    assert!((w.prefix_rate - 0.9).abs() < 1e-9);
    assert_eq!(w.request_rate, Some(12.0));
    assert!(workload_of("dataset `d`, output up to 10 tokens").is_none());
}
