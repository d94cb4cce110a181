//! `synthetic`: synthetic catalogs of growing size, each built, checked and
//! rendered in a child process (with `profile-seed`, the seed catalog under
//! a profiler).

use crate::{Res, bytes_of, guide, plain_write, run_quiet};
use pd_dsl::render;
use pd_dsl_bench::{Shape, linear_fit, peak_rss_kib, repeated, synthetic_catalog, timed};
use std::process::Command;
use std::time::Instant;

/// `profile-seed N`: checks and renders the seed catalog N times and nothing
/// else, to run under `valgrind --tool=callgrind` (see BENCHMARKS.md).
pub(crate) fn profile_seed(n: &str) -> Res<()> {
    let n: usize = n.parse().map_err(|e| format!("{n}: {e}"))?;
    let guide = guide();
    for _ in 0..n {
        let layouts = layouts::build(layouts::specs())?;
        let a = render::render_catalog_with(&layouts, Some(&guide)).map_err(|e| e.to_string())?;
        std::hint::black_box(a);
    }
    Ok(())
}

/// Child process: builds, checks and renders a synthetic catalog, prints
/// `key=value` figures (peak memory is this process's `VmHWM`).
pub(crate) fn synth_child(mode: &str, n: &str) -> Res<()> {
    let n: usize = n.parse().map_err(|e| format!("{n}: {e}"))?;
    let base_kib = peak_rss_kib().unwrap_or(0);
    let start = Instant::now();
    let (specs, ranks) = match mode.strip_prefix("large") {
        Some(k) => {
            let k: u64 = k.parse().map_err(|e| format!("{k}: {e}"))?;
            let shape = Shape::large(k);
            (repeated(shape, n), shape.ranks() * n as u64)
        }
        None => synthetic_catalog(n),
    };
    let built = start.elapsed();
    let layouts = layouts::build(specs)?;
    let checked = start.elapsed();
    let artifacts = render::render_catalog(&layouts).map_err(|e| e.to_string())?;
    let rendered = start.elapsed();
    let bytes = bytes_of(&artifacts);
    let capacity: usize = artifacts.iter().map(|a| a.contents.capacity()).sum();
    let files = artifacts.len();
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let peak = peak_rss_kib().unwrap_or(0);
    // Writing vs its limits: the same files written plainly, and `cp -r`.
    let written = tmp.path().join("catalog");
    let (write_t, r) = timed(|| render::write_catalog(&written, &artifacts));
    r.map_err(|e| e.to_string())?;
    let (plain_t, r) = timed(|| plain_write(&tmp.path().join("plain"), &artifacts));
    r?;
    let cp_t = run_quiet(
        Command::new("cp")
            .arg("-r")
            .arg(&written)
            .arg(tmp.path().join("cp")),
    )?;
    println!(
        "layouts={} ranks={ranks} files={files} bytes={bytes} capacity={capacity} build_s={} check_s={} render_s={} write_s={} plain_s={} cp_s={} base_kib={base_kib} peak_kib={peak}",
        layouts.len(),
        built.as_secs_f64(),
        (checked - built).as_secs_f64(),
        (rendered - checked).as_secs_f64(),
        write_t.as_secs_f64(),
        plain_t.as_secs_f64(),
        cp_t.as_secs_f64(),
    );
    Ok(())
}

#[derive(Clone, Debug, Default)]
struct Synth {
    layouts: u64,
    ranks: u64,
    bytes: u64,
    /// build + check + render (in memory).
    total: f64,
    write: f64,
    plain: f64,
    cp: f64,
    base_kib: u64,
    peak_kib: u64,
}

fn run_child(mode: &str, n: usize) -> Res<Synth> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .args(["synth-child", mode, &n.to_string()])
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "synth-child {mode} {n}: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let get = |k: &str| -> f64 {
        text.split_whitespace()
            .find_map(|kv| kv.strip_prefix(k)?.strip_prefix('='))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    };
    Ok(Synth {
        layouts: get("layouts") as u64,
        ranks: get("ranks") as u64,
        bytes: get("bytes") as u64,
        total: get("build_s") + get("check_s") + get("render_s"),
        write: get("write_s"),
        plain: get("plain_s"),
        cp: get("cp_s"),
        base_kib: get("base_kib") as u64,
        peak_kib: get("peak_kib") as u64,
    })
}

/// Runs every config `rounds` times, rotating the order; median by total.
fn run_children(configs: &[(String, usize)], rounds: usize) -> Res<Vec<Synth>> {
    let mut samples: Vec<Vec<Synth>> = vec![Vec::new(); configs.len()];
    for round in 0..rounds {
        for j in 0..configs.len() {
            let i = (round + j) % configs.len();
            samples[i].push(run_child(&configs[i].0, configs[i].1)?);
        }
    }
    Ok(samples
        .into_iter()
        .map(|mut s| {
            s.sort_by(|a, b| a.total.total_cmp(&b.total));
            let mid = s.len() / 2;
            let mut m = s[mid].clone();
            let med = |f: fn(&Synth) -> f64| {
                let mut v: Vec<f64> = s.iter().map(f).collect();
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            m.write = med(|x| x.write);
            m.plain = med(|x| x.plain);
            m.cp = med(|x| x.cp);
            m.peak_kib = s.iter().map(|x| x.peak_kib).max().unwrap_or(0);
            m
        })
        .collect())
}

pub(crate) fn section_synthetic(quick: bool) -> Res<()> {
    let rounds = if quick { 1 } else { 5 };
    let sizes = [125usize, 250, 500, 1000];
    let configs: Vec<(String, usize)> = sizes.iter().map(|&n| ("mixed".to_owned(), n)).collect();
    let mixed = run_children(&configs, rounds)?;
    println!(
        "## Synthetic catalogs (check + render in memory, one process each; medians of {rounds})\n"
    );
    println!(
        "Mixed catalogs cycle through 10 A3 PD shapes from 1P1D (2 nodes) to 16P16D (prefill 16 x dp8tp4, decode 16 x dp32tp1: 64 nodes, 640 ranks).\n"
    );
    println!(
        "| layouts | total ranks | output | check + render | peak RSS (VmHWM) | us per rank | write_catalog | plain write | `cp -r` | write_catalog / `cp -r` |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut points = Vec::new();
    for s in &mixed {
        println!(
            "| {} | {} | {:.1} MB | {:.3} s | {:.1} MB | {:.2} | {:.3} s | {:.3} s | {:.3} s | {:.2}x |",
            s.layouts,
            s.ranks,
            s.bytes as f64 / 1e6,
            s.total,
            s.peak_kib as f64 / 1024.0,
            s.total * 1e6 / s.ranks as f64,
            s.write,
            s.plain,
            s.cp,
            s.write / s.cp
        );
        points.push((s.ranks as f64, s.total));
    }
    let (a, b, r2) = linear_fit(&points);
    println!(
        "\nfit: time = {:.1} ms + {:.2} us x ranks, r^2 = {r2:.4} (process baseline RSS {:.1} MB)\n",
        a * 1e3,
        b * 1e6,
        mixed.first().map_or(0.0, |s| s.base_kib as f64 / 1024.0)
    );

    // One shape at a time: growth with the size of each layout.
    let ks = [1u64, 2, 4, 8, 16];
    let per = if quick { 10 } else { 40 };
    let configs: Vec<(String, usize)> = ks.iter().map(|k| (format!("large{k}"), per)).collect();
    let large = run_children(&configs, rounds)?;
    println!(
        "Growth with layout size: {per} layouts of `prefill k x dp8tp4; decode k x dp32tp1` (4k nodes, 40k ranks each)\n"
    );
    println!(
        "| k | nodes per layout | ranks per layout | check + render per layout | us per rank |"
    );
    println!("|---|---|---|---|---|");
    let mut points = Vec::new();
    for (k, s) in ks.iter().zip(&large) {
        let per_layout = s.total / s.layouts.max(1) as f64;
        let ranks = s.ranks / s.layouts.max(1);
        println!(
            "| {k} | {} | {ranks} | {:.3} ms | {:.2} |",
            4 * k,
            per_layout * 1e3,
            per_layout * 1e6 / ranks as f64
        );
        points.push((ranks as f64, per_layout));
    }
    let (a, b, r2) = linear_fit(&points);
    println!(
        "\nfit: per layout = {:.3} ms + {:.2} us x ranks, r^2 = {r2:.4}\n",
        a * 1e3,
        b * 1e6
    );
    Ok(())
}
