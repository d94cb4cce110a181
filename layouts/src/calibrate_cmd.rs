//! `catalog calibrate RESULT.json...`: a `vllm bench serve` result (what the
//! layout's `bench.sh` saves) against the estimate at the result's own
//! workload, and the ratio recorded next to the layout (`calibration.json`),
//! so a layout measured on hardware carries its own figure.

use clap::{Args, ValueEnum};
use pd_dsl::Layout;
use pd_dsl::estimate::{CALIBRATION, Estimate, Workload, estimate_with};
use serde::Serialize;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `catalog calibrate`'s arguments.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// `vllm bench serve --save-result` files (`bench.sh` writes them to
    /// `bench-results/` with the layout's name as metadata).
    #[arg(required = true, value_name = "RESULT")]
    pub results: Vec<PathBuf>,
    /// The layout, where a result does not name one (`pd_dsl_layout`).
    #[arg(long)]
    pub layout: Option<String>,
    /// Print only; record nothing.
    #[arg(long)]
    pub no_record: bool,
    /// `text` or `json` (one [`Entry`] per result).
    #[arg(long, value_enum, default_value_t = CalibrateFormat::Text)]
    pub format: CalibrateFormat,
}

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CalibrateFormat {
    /// A table and, per result, a `figures` entry for the layout's source.
    Text,
    /// The ledger entries as JSON.
    Json,
}

/// One measured run against the estimate: a `calibration.json` entry.
#[derive(Clone, Debug, Serialize)]
pub struct Entry {
    /// The result file's name.
    pub result: String,
    /// The layout.
    pub layout: String,
    /// vLLM's `date` of the run.
    pub date: String,
    /// The image the bench recorded (`pd_dsl_image`), if any.
    pub image: Option<String>,
    /// The workload the run measured.
    pub workload: Workload,
    /// Output tokens/s measured (vLLM's `output_throughput`).
    pub measured_output_tokens_per_s: f64,
    /// Mean TTFT measured, ms.
    pub measured_ttft_ms: Option<f64>,
    /// Mean TPOT measured, ms.
    pub measured_tpot_ms: Option<f64>,
    /// The estimate at that workload.
    pub estimate: Estimate,
    /// Measured over estimated output tokens/s.
    pub ratio: f64,
}

type Res<T> = Result<T, (u8, String)>;

pub use pd_dsl::estimate::BENCH_RESULT_KEYS as RESULT_KEYS;

fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

/// The workload and figures of one result file (vllm/benchmarks/serve.py
/// `main`: `completed`, `total_input_tokens`, `total_output_tokens`,
/// `max_concurrency`, `request_rate` (`"inf"` when unpaced),
/// `output_throughput`, `mean_ttft_ms`, `mean_tpot_ms`).
fn read(path: &Path) -> Res<Value> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| (1, format!("cannot read `{}`: {e}", path.display())))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| {
        (
            1,
            format!(
                "`{}` is not a `vllm bench serve` result: {e}",
                path.display()
            ),
        )
    })?;
    for key in [
        "completed",
        "total_input_tokens",
        "total_output_tokens",
        "output_throughput",
    ] {
        if num(&v, key).is_none() {
            return Err((
                1,
                format!(
                    "found no number `{key}` in `{}`, expected a `vllm bench serve --save-result` file (bench.sh writes them to bench-results/)",
                    path.display()
                ),
            ));
        }
    }
    Ok(v)
}

fn workload(v: &Value) -> Res<Workload> {
    let completed = num(v, "completed").unwrap_or(0.0);
    if completed < 1.0 {
        return Err((
            1,
            format!(
                "found `completed` {completed}, expected at least one completed request: the run measured nothing to set against the estimate"
            ),
        ));
    }
    let per = |key: &str| (num(v, key).unwrap_or(0.0) / completed).round().max(1.0) as u64;
    Ok(Workload {
        input_len: per("total_input_tokens"),
        output_len: per("total_output_tokens"),
        prefix_rate: 0.0,
        concurrency: v.get("max_concurrency").and_then(Value::as_u64),
        request_rate: num(v, "request_rate").filter(|r| r.is_finite() && *r > 0.0),
    })
}

/// Where a result's ledger goes: the layout directory holding its
/// `bench-results/` (it has `meta.yaml`), else beside the result.
fn ledger_path(result: &Path) -> PathBuf {
    let dir = result.parent().unwrap_or(Path::new("."));
    match dir.parent() {
        Some(up) if up.join("meta.yaml").is_file() => up.join("calibration.json"),
        _ => dir.join("calibration.json"),
    }
}

/// Adds `entry` to the ledger at `path` (an entry for the same result file
/// is replaced).
fn record(path: &Path, entry: &Entry) -> Res<()> {
    let mut entries: Vec<Value> = match std::fs::read_to_string(path) {
        Ok(t) => serde_json::from_str(&t).map_err(|e| {
            (
                1,
                format!("`{}` is not a calibration ledger: {e}", path.display()),
            )
        })?,
        Err(_) => Vec::new(),
    };
    entries.retain(|e| e.get("result").and_then(Value::as_str) != Some(entry.result.as_str()));
    entries.push(serde_json::to_value(entry).map_err(|e| (4, e.to_string()))?);
    let mut text = serde_json::to_string_pretty(&entries).map_err(|e| (4, e.to_string()))?;
    text.push('\n');
    std::fs::write(path, text).map_err(|e| (4, format!("cannot write `{}`: {e}", path.display())))
}

/// Runs `catalog calibrate`.
pub fn run(a: &CalibrateArgs, layouts: &[Layout], out: &mut dyn Write) -> Res<u8> {
    let mut entries = Vec::new();
    for path in &a.results {
        let v = read(path)?;
        let name = a
            .layout
            .clone()
            .or_else(|| v.get("pd_dsl_layout").and_then(Value::as_str).map(str::to_owned))
            .ok_or_else(|| {
                (
                    2,
                    format!(
                        "`{}` names no layout (no `pd_dsl_layout`: not written by bench.sh), expected --layout NAME",
                        path.display()
                    ),
                )
            })?;
        let layout = layouts.iter().find(|l| l.name() == name).ok_or_else(|| {
            (
                2,
                format!(
                    "no layout named `{name}`{}",
                    pd_dsl::rules::did_you_mean(&name, layouts.iter().map(|l| l.name()))
                ),
            )
        })?;
        let w = workload(&v)?;
        let estimate = estimate_with(layout, &w, &CALIBRATION).ok_or_else(|| {
            (
                1,
                format!("`{name}` cannot be estimated: its model has no dimensions"),
            )
        })?;
        let measured = num(&v, "output_throughput").unwrap_or(0.0);
        let entry = Entry {
            result: path
                .file_name()
                .map_or_else(String::new, |f| f.to_string_lossy().into_owned()),
            layout: name,
            date: v
                .get("date")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            image: v
                .get("pd_dsl_image")
                .and_then(Value::as_str)
                .map(str::to_owned),
            workload: w,
            measured_output_tokens_per_s: measured,
            measured_ttft_ms: num(&v, "mean_ttft_ms"),
            measured_tpot_ms: num(&v, "mean_tpot_ms"),
            ratio: measured / estimate.output_tokens_per_s,
            estimate,
        };
        let ledger = ledger_path(path);
        if !a.no_record {
            record(&ledger, &entry)?;
        }
        entries.push((entry, ledger));
    }
    match a.format {
        CalibrateFormat::Json => {
            let list: Vec<&Entry> = entries.iter().map(|(e, _)| e).collect();
            let text = serde_json::to_string_pretty(&list).map_err(|e| (4, e.to_string()))?;
            let _ = writeln!(out, "{text}");
        }
        CalibrateFormat::Text => {
            for (e, ledger) in &entries {
                let w = &e.workload;
                let _ = writeln!(
                    out,
                    "{} ({}): {}-token prompts, {} output tokens{}{}",
                    e.layout,
                    e.result,
                    w.input_len,
                    w.output_len,
                    w.concurrency
                        .map_or(String::new(), |c| format!(", {c} at once")),
                    w.request_rate
                        .map_or(String::new(), |r| format!(", {r} requests/s"))
                );
                let ms = |x: Option<f64>| x.map_or("-".to_owned(), |v| format!("{v:.1}"));
                let _ = writeln!(
                    out,
                    "  output tokens/s  measured {:.1}  estimated {:.1}  ratio {:.2} (the estimate's band: +-{:.0}%)",
                    e.measured_output_tokens_per_s,
                    e.estimate.output_tokens_per_s,
                    e.ratio,
                    e.estimate.band * 100.0
                );
                let _ = writeln!(
                    out,
                    "  TTFT ms          measured {}  estimated {}\n  TPOT ms          measured {}  estimated {:.1}",
                    ms(e.measured_ttft_ms),
                    e.estimate.ttft_figure(1e3, 1),
                    ms(e.measured_tpot_ms),
                    e.estimate.tpot_ms
                );
                if !a.no_record {
                    let _ = writeln!(out, "  recorded in {}", ledger.display());
                }
                let _ = writeln!(
                    out,
                    "  for the layout's source: figures: [{{ metric: \"output throughput\", value: \"{:.1} tokens/s\", context: \"vllm bench serve {}{}, {} input and {} output tokens{}\" }}]",
                    e.measured_output_tokens_per_s,
                    e.date,
                    e.image
                        .as_deref()
                        .map_or(String::new(), |i| format!(" on v{i}")),
                    w.input_len,
                    w.output_len,
                    w.concurrency
                        .map_or(String::new(), |c| format!(", {c} at once"))
                );
            }
        }
    }
    Ok(0)
}
