//! `catalog plan`: the layouts of a model on a hardware within a node
//! budget, estimated at a workload and ranked (`pd_dsl::plan`).

use clap::{Args, ValueEnum};
use pd_dsl::estimate::Workload;
use pd_dsl::plan::{Plan, Request, plan};
use std::io::Write;

/// `catalog plan`'s arguments.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Model table id (`catalog list` shows the models of the catalog).
    #[arg(long)]
    pub model: String,
    /// Hardware table id: `a2`, `a3` or `ascend_950dt`.
    #[arg(long)]
    pub hardware: String,
    /// Image tag (default: the newest with a build for the hardware).
    #[arg(long)]
    pub image: Option<String>,
    /// Most nodes a layout may use.
    #[arg(long, value_name = "N")]
    pub max_nodes: u32,
    /// Fewest nodes a layout must use.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub min_nodes: u32,
    /// Prompt tokens.
    #[arg(long, value_name = "TOKENS")]
    pub input_len: u64,
    /// Output tokens per request.
    #[arg(long, value_name = "TOKENS")]
    pub output_len: u64,
    /// Share of the prompt the prefix cache serves, 0-1.
    #[arg(long, value_name = "RATE", default_value_t = 0.0)]
    pub prefix_rate: f64,
    /// Requests in flight (closed loop).
    #[arg(long, value_name = "N")]
    pub concurrency: Option<u64>,
    /// Requests per second offered.
    #[arg(long, value_name = "RPS")]
    pub request_rate: Option<f64>,
    /// TTFT limit, seconds.
    #[arg(long, value_name = "SECONDS")]
    pub ttft: Option<f64>,
    /// TPOT limit, milliseconds.
    #[arg(long, value_name = "MS")]
    pub tpot: Option<f64>,
    /// Output tokens/s the deployment must reach: rank the fewest nodes
    /// that do first ("how many nodes for this load").
    #[arg(long, value_name = "TOKENS_PER_S")]
    pub target: Option<f64>,
    /// Rows of the table.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// `text` (a table and the best layout as YAML) or `json` (stable:
    /// `pd_dsl::plan::Plan`).
    #[arg(long, value_enum, default_value_t = PlanFormat::Text)]
    pub format: PlanFormat,
}

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PlanFormat {
    /// A ranked table and the best layout as YAML.
    Text,
    /// `pd_dsl::plan::Plan` as JSON.
    Json,
}

/// Runs `catalog plan`: 0 with a layout that meets the limits, 1 without.
pub fn run(a: &PlanArgs, out: &mut dyn Write) -> Result<u8, (u8, String)> {
    if !(0.0..1.0).contains(&a.prefix_rate) {
        return Err((
            2,
            format!(
                "found --prefix-rate {}, expected a share from 0 up to (not including) 1",
                a.prefix_rate
            ),
        ));
    }
    if a.input_len == 0 || a.output_len == 0 {
        return Err((
            2,
            "found a zero --input-len or --output-len, expected tokens per request".into(),
        ));
    }
    let req = Request {
        model: a.model.clone(),
        hardware: a.hardware.clone(),
        image: a.image.clone(),
        max_nodes: a.max_nodes,
        min_nodes: a.min_nodes,
        workload: Workload {
            input_len: a.input_len,
            output_len: a.output_len,
            prefix_rate: a.prefix_rate,
            concurrency: a.concurrency,
            request_rate: a.request_rate.filter(|r| r.is_finite() && *r > 0.0),
        },
        ttft_s: a.ttft,
        tpot_ms: a.tpot,
        target_tokens_per_s: a.target,
    };
    let p = plan(&req).map_err(|e| (2, e.to_string()))?;
    let meets = p.candidates.first().is_some_and(|c| c.meets);
    match a.format {
        PlanFormat::Json => {
            let text = serde_json::to_string_pretty(&p).map_err(|e| (4, e.to_string()))?;
            let _ = writeln!(out, "{text}");
        }
        PlanFormat::Text => text(&p, a.top, out).map_err(|e| (4, e))?,
    }
    Ok(if meets { 0 } else { 1 })
}

fn text(p: &Plan, top: usize, out: &mut dyn Write) -> Result<(), String> {
    let _ = writeln!(
        out,
        "{} on {} ({}): {} candidates, {} pass every rule{}",
        p.model,
        p.hardware,
        p.image,
        p.enumerated,
        p.candidates.len(),
        if p.refused.is_empty() {
            String::new()
        } else {
            format!(
                "; refused by {}",
                p.refused
                    .iter()
                    .map(|(r, n)| format!("{r} ({n})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    );
    let _ = writeln!(
        out,
        "{:<4} {:<5} {:<44} {:>5} {:>5} {:>10} {:>9} {:>8} {:>8}  bound",
        "rank", "meets", "topology", "nodes", "NPUs", "output/s", "per NPU", "TTFT s", "TPOT ms"
    );
    for (i, c) in p.candidates.iter().take(top).enumerate() {
        let e = &c.estimate;
        let _ = writeln!(
            out,
            "{:<4} {:<5} {:<44} {:>5} {:>5} {:>10.0} {:>9.1} {:>8} {:>8.1}  {}",
            i + 1,
            if c.meets { "yes" } else { "no" },
            c.topology,
            c.nodes,
            c.npus,
            e.output_tokens_per_s,
            e.output_tokens_per_s_per_npu,
            e.ttft_figure(1.0, 2),
            e.tpot_ms,
            e.bound
        );
    }
    let Some(best) = p.candidates.first() else {
        let _ = writeln!(out, "no layout passes every rule within the node budget");
        return Ok(());
    };
    let band = best.estimate.band * 100.0;
    let _ = writeln!(
        out,
        "\nestimates are within about {band:.0}% (leave-one-out median error on upstream's baselines, BENCHMARKS.md)"
    );
    if let Some(b) = &best.estimate.balance {
        let _ = writeln!(out, "best: {}", b.summary());
    }
    let spec = p.spec(best).map_err(|e| e.to_string())?;
    let yaml = serde_saphyr::to_string(&spec).map_err(|e| e.to_string())?;
    let _ = writeln!(
        out,
        "\n# the best layout, ready for `catalog render FILE.yaml` (rename it first):\n{yaml}"
    );
    Ok(())
}
