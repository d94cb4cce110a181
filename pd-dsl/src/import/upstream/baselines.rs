//! The performance baselines of an e2e config's `benchmarks`, and the input
//! length and prefix rate a dataset's name carries.

use crate::import::Loc;
use crate::import::build::{BenchIn, FigureIn};

/// The frozen performance baselines of an e2e config's `benchmarks`: each
/// `case_type: performance` case with a number `baseline` is the deployment's
/// output throughput as upstream's CI measures it (tools/aisbench.py:
/// `Output Token Throughput` `total`, token/s over the whole deployment,
/// passing at `threshold x baseline`, threshold 0.97 when not given), run
/// with `batch_size` concurrent requests, `request_rate` requests/s when
/// given, `num_prompts` prompts of up to `max_out_len` output tokens from a
/// dataset whose name carries the input length (`GSM8K-in3500-bs2800`).
/// The case with the most prompts whose input length is known is the
/// layout's workload (`bench`), with a note that `vllm bench serve` runs
/// random prompts of that length instead of the dataset.
pub(super) fn baselines(
    cases: &serde_json::Value,
    at: Loc,
    notes: &mut Vec<crate::import::Note>,
) -> (Vec<FigureIn>, Option<(Loc, BenchIn)>) {
    use serde_json::Value as J;
    let mut figures = Vec::new();
    let mut bench = None;
    let Some(cases) = cases.as_object() else {
        return (figures, bench);
    };
    let num = |v: Option<&J>| -> Option<f64> {
        match v? {
            J::Number(n) => n.as_f64(),
            J::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    };
    let int = |v: Option<&J>| {
        num(v)
            .filter(|x| *x >= 0.0 && x.fract() == 0.0)
            .map(|x| x as u64)
    };
    for (name, c) in cases {
        if c.get("case_type").and_then(J::as_str) != Some("performance") {
            continue;
        }
        let Some(baseline) = num(c.get("baseline")) else {
            continue;
        };
        let dataset = c.get("dataset_path").and_then(J::as_str).unwrap_or("");
        let input_len = input_len_of(dataset);
        let prompts = int(c.get("num_prompts"));
        let out_len = int(c.get("max_out_len"));
        let concurrency = int(c.get("batch_size"));
        // `request_rate` 0 (aisbench's default, tools/aisbench.py) sends
        // without a rate limit, `batch_size` at a time: `vllm bench serve`'s
        // default `--request-rate inf` with `--max-concurrency`.
        let rate = num(c.get("request_rate")).filter(|r| *r > 0.0);
        let threshold = num(c.get("threshold")).unwrap_or(0.97);
        let mut ctx = vec![format!(
            "upstream CI baseline `{name}` (tools/aisbench.py `Output Token Throughput` total, token/s over the whole deployment; passes at {threshold} x baseline)"
        )];
        ctx.push(format!("dataset `{dataset}`"));
        if let Some(l) = input_len {
            ctx.push(format!("input {l} tokens"));
        }
        if let Some(p) = prefix_of(dataset) {
            ctx.push(format!("{p}% prefix-cache hits"));
        }
        if let Some(o) = out_len {
            ctx.push(format!("output up to {o} tokens"));
        }
        if let Some(p) = prompts {
            ctx.push(format!("{p} prompts"));
        }
        if let Some(c) = concurrency {
            ctx.push(format!("concurrency {c}"));
        }
        match rate {
            Some(r) => ctx.push(format!("{r} requests/s")),
            None => ctx.push("no rate limit".to_owned()),
        }
        // A baseline of 1 is the runner's default (tools/aisbench.py
        // `aisbench_config.get("baseline", 1)`): any run passes it, so it
        // freezes no figure; the case is still a workload.
        if baseline > 1.0 {
            figures.push((
                at,
                "output throughput".to_owned(),
                format!("{baseline} tokens/s"),
                ctx.join(", "),
            ));
        }
        // The workload is the case with the most prompts (a config's first
        // case is often a one- or two-prompt prefix-cache warm-up).
        let bigger = bench
            .as_ref()
            .is_none_or(|(_, b): &(Loc, BenchIn)| prompts.is_some_and(|p| p > b.num_prompts));
        if bigger
            && let (Some(input_len), Some(output_len), Some(num_prompts)) =
                (input_len, out_len, prompts)
        {
            notes.retain(|n| !n.what.starts_with("benchmark `"));
            notes.push(crate::import::Note {
                at,
                what: format!(
                    "benchmark `{name}` runs aisbench on dataset `{dataset}` ({})",
                    c.get("request_conf").and_then(J::as_str).unwrap_or("its request config")
                ),
                why: format!(
                    "the layout's `bench` states its workload for `vllm bench serve`: random prompts of the dataset's {input_len} input tokens, {output_len} output tokens, {num_prompts} prompts{}",
                    prefix_of(dataset).filter(|p| *p > 0).map_or_else(String::new, |p| format!(" (random prompts do not repeat the dataset's {p}% shared prefixes)"))
                ),
            });
            bench = Some((
                at,
                BenchIn {
                    input_len,
                    output_len,
                    num_prompts,
                    request_rate: rate.map(|r| r.to_string()),
                    max_concurrency: concurrency,
                },
            ));
        }
    }
    (figures, bench)
}

/// The prefix-cache hit rate a dataset name carries, in percent:
/// `GSM8K-in128k-bs512-prefix90-ds` → 90.
fn prefix_of(dataset: &str) -> Option<u64> {
    dataset.split(['-', '_', '/']).find_map(|part| {
        let n = part.strip_prefix("prefix")?;
        n.parse::<u64>().ok().filter(|n| *n <= 100)
    })
}

/// The input length a dataset name carries: `GSM8K-in3500-bs2800` → 3500,
/// `in128k` → 131072 (`k` = 1024: the same sets are also named `in131072`),
/// `in1M` → 1048576.
fn input_len_of(dataset: &str) -> Option<u64> {
    dataset.split(['-', '_', '/']).find_map(|part| {
        let digits = part.strip_prefix("in")?;
        let (n, unit) = if let Some(n) = digits.strip_suffix(['k', 'K']) {
            (n, 1 << 10)
        } else if let Some(n) = digits.strip_suffix('M') {
            (n, 1 << 20)
        } else {
            (digits, 1)
        };
        if n.is_empty() || !n.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        n.parse::<u64>().ok().map(|n| n * unit)
    })
}

#[cfg(test)]
mod dataset_tests {
    use super::{input_len_of, prefix_of};

    #[test]
    fn dataset_names_carry_input_length_and_prefix_rate() {
        assert_eq!(input_len_of("vllm-ascend/GSM8K-in3500-bs2800"), Some(3500));
        assert_eq!(
            input_len_of("vllm-ascend/GSM8K_prefix0_in16384_bs1200_deepseek"),
            Some(16384)
        );
        assert_eq!(
            input_len_of("vllm-ascend/GSM8K-in128k-bs512-prefix90-ds"),
            Some(131072)
        );
        assert_eq!(
            input_len_of("vllm-ascend/GSM8K-in1M-bs4-prefix99-ds"),
            Some(1 << 20)
        );
        assert_eq!(input_len_of("vllm-ascend/textvqa-perf-1080p"), None);
        assert_eq!(input_len_of("vllm-ascend/gsm8k"), None);
        assert_eq!(
            prefix_of("vllm-ascend/GSM8K_prefix90_in131072_bs100_glm"),
            Some(90)
        );
        assert_eq!(prefix_of("vllm-ascend/GSM8K-in3500-bs2800"), None);
    }
}
