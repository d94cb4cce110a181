//! `plan` and `corpus`: `catalog plan` on growing node budgets, and every
//! multi-node e2e config of the upstream corpus linted.

use crate::{Res, repo};
use pd_dsl_bench::{interleave, median, ms, ratio, timed, us};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// `python3 scripts/upstream/ARGS` from the repository, its stdout.
fn upstream_script(args: &[&str]) -> Res<String> {
    let out = Command::new("python3")
        .args(args)
        .current_dir(repo())
        .output()
        .map_err(|e| format!("cannot run `python3 {}`: {e}", args.join(" ")))?;
    if !out.status.success() {
        return Err(format!(
            "`python3 {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Every multi-node e2e config of every release of the upstream corpus
/// (`scripts/upstream/e2e_oracle.py list`, the set the upstream import test
/// reads), linted in one process against its own release's image.
/// `catalog plan` for one model on up to 1..64 A3 nodes (issue 22: < 1 s
/// for 64 nodes): candidates enumerated, checked and estimated, per node
/// budget, medians of a few rounds.
pub(crate) fn section_plan(quick: bool) -> Res<()> {
    use pd_dsl::estimate::Workload;
    use pd_dsl::plan::{Request, plan};
    let rounds = if quick { 1 } else { 3 };
    println!("\n### Plan (issue 22)\n");
    println!(
        "`pd_dsl::plan` for `deepseek_v3_1_w8a8_mtp_quarot` on A3, 3500/1500 tokens, 700 at once, TPOT 50 ms; every candidate checked by the rule engine and estimated. Median of {rounds}.\n"
    );
    println!("| max nodes | candidates | pass every rule | time | per candidate | target |");
    println!("|---|---|---|---|---|---|");
    for n in [4u32, 16, 32, 64] {
        let req = Request {
            model: "deepseek_v3_1_w8a8_mtp_quarot".into(),
            hardware: "a3".into(),
            image: None,
            max_nodes: n,
            min_nodes: 1,
            workload: Workload {
                input_len: 3500,
                output_len: 1500,
                prefix_rate: 0.0,
                concurrency: Some(700),
                request_rate: None,
            },
            ttft_s: None,
            tpot_ms: Some(50.0),
            target_tokens_per_s: None,
        };
        let mut samples = Vec::new();
        let mut last = None;
        for _ in 0..rounds {
            let (d, p) = timed(|| plan(&req));
            samples.push(d);
            last = Some(p.map_err(|e| e.to_string())?);
        }
        let p = last.ok_or("no round")?;
        let t = median(&samples);
        println!(
            "| {n} | {} | {} | {} | {} | {} |",
            p.enumerated,
            p.candidates.len(),
            ms(t),
            us(t / u32::try_from(p.enumerated.max(1)).unwrap_or(u32::MAX)),
            if n == 64 {
                if t.as_secs_f64() < 1.0 {
                    "< 1 s: met"
                } else {
                    "< 1 s: not met"
                }
            } else {
                ""
            }
        );
    }
    Ok(())
}

pub(crate) fn section_corpus(quick: bool) -> Res<()> {
    use pd_dsl::import::{self, Input, Options};
    let rounds = if quick { 5 } else { 21 };
    let listing = upstream_script(&["scripts/upstream/e2e_oracle.py", "list"])?;
    let mut trees: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut units: Vec<(Vec<Input>, Options)> = Vec::new();
    for line in listing.lines() {
        let Some((release, rel)) = line.split_once('\t') else {
            continue;
        };
        let tree = match trees.get(release) {
            Some(t) => t.clone(),
            None => {
                let t = PathBuf::from(
                    upstream_script(&[
                        "scripts/upstream/corpus.py",
                        "path",
                        &format!("vllm-ascend=={release}"),
                    ])?
                    .trim(),
                );
                trees.insert(release.to_owned(), t.clone());
                t
            }
        };
        let path = tree.join(rel);
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let opts = Options {
            image: Some(format!("v{release}")),
            ..Options::default()
        };
        units.push((vec![Input::new(format!("{release}/{rel}"), text)], opts));
    }
    if units.len() < 700 {
        return Err(format!(
            "the corpus lists {} configs, expected over 700",
            units.len()
        ));
    }
    let bytes: usize = units
        .iter()
        .flat_map(|(i, _)| i)
        .map(|i| i.text.len())
        .sum();
    let (mut imported, mut findings) = (0usize, 0usize);
    for (inputs, opts) in &units {
        imported += usize::from(import::import(inputs, opts).is_ok());
        findings += import::lint_unit(inputs, opts).findings.len();
    }
    let mut lint_all = || {
        for (inputs, opts) in &units {
            std::hint::black_box(import::lint_unit(inputs, opts));
        }
    };
    let mut yaml_alone = || {
        for (inputs, _) in &units {
            for i in inputs {
                let v: Result<serde_json::Value, _> = serde_saphyr::from_str(&i.text);
                std::hint::black_box(v.ok());
            }
        }
    };
    let s = interleave(rounds, &mut [&mut lint_all, &mut yaml_alone]);
    let m: Vec<Duration> = s.iter().map(|s| median(s)).collect();
    let n = units.len();
    println!(
        "## Lint the upstream corpus in one process ({n} e2e multi-node configs of {} releases; medians of {rounds} interleaved rounds)\n",
        trees.len()
    );
    println!(
        "Each config from its release's source distribution (`scripts/upstream/corpus.py`), linted against that release's image (`lint_unit`: import, the rules, every finding with its position); {imported} of {n} import, {findings} findings in all.\n"
    );
    println!("| measurement | configs | input bytes | median | per config | ratio |");
    println!("|---|---|---|---|---|---|");
    let per = |d: Duration| us(d / u32::try_from(n.max(1)).unwrap_or(u32::MAX));
    println!(
        "| lint every config (target < 1 s) | {n} | {bytes} | {} | {} | {} |",
        ms(m[0]),
        per(m[0]),
        ratio(m[0], m[1])
    );
    println!(
        "| the YAML crate alone on the same bytes (`serde_saphyr` to a JSON value) | {n} | {bytes} | {} | {} | |",
        ms(m[1]),
        per(m[1])
    );
    println!(
        "\n{n} configs linted in {} (target < 1 s: {})\n",
        ms(m[0]),
        if m[0] < Duration::from_secs(1) {
            "met"
        } else {
            "not met"
        }
    );
    Ok(())
}
