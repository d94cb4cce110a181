//! `pd-dsl-bench`: prints every figure of `BENCHMARKS.md` as markdown.
//!
//! ```text
//! scripts/bench.sh                      # builds release binaries, runs all
//! pd-dsl-bench [all|render|cli|synthetic|compile|import] [--quick]
//! ```
//!
//! Every comparison is measured side by side in one run, interleaved (the
//! order rotates each round), and reported as medians.

use pd_dsl::render::{self, Artifact};
use pd_dsl::{Layout, LayoutSpec};
use pd_dsl_bench::{
    Shape, compile, interleave, linear_fit, median, ms, peak_rss_kib, ratio, repeated,
    synthetic_catalog, timed, us,
};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

type Res<T> = Result<T, String>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let quick = args.iter().any(|a| a == "--quick");
    let words: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let result = match words.as_slice() {
        ["synth-child", mode, n] => synth_child(mode, n),
        ["profile-seed", n] => profile_seed(n),
        ["write-compile-crates", dir] => compile::write_workspace(Path::new(dir), &repo(), 200)
            .map(drop)
            .map_err(|e| e.to_string()),
        [] | ["all"] => all(quick),
        ["render"] => section_render(quick),
        ["cli"] => section_cli(quick),
        ["synthetic"] => section_synthetic(quick),
        ["compile"] => section_compile(quick),
        ["import"] => section_import(quick),
        ["corpus"] => section_corpus(quick),
        ["plan"] => section_plan(quick),
        _ => Err(format!(
            "usage: pd-dsl-bench [all|render|cli|synthetic|compile|import|corpus|plan] [--quick]; got {words:?}"
        )),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pd-dsl-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn all(quick: bool) -> Res<()> {
    machine();
    section_render(quick)?;
    section_cli(quick)?;
    section_synthetic(quick)?;
    section_import(quick)?;
    section_corpus(quick)?;
    section_plan(quick)?;
    section_compile(quick)
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn machine() {
    let cpus = std::thread::available_parallelism().map_or(0, usize::from);
    let model = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|m| m.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let load = fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    println!("# pd-dsl benchmarks\n");
    println!(
        "machine: {cpus} cores, {model}; load average at start {}\n",
        load.join(" ")
    );
}

fn catalog() -> Res<&'static [Layout]> {
    layouts::catalog()
}

fn guide() -> String {
    layouts::scenarios::scenario_guide()
}

fn bytes_of(artifacts: &[Artifact]) -> usize {
    artifacts.iter().map(|a| a.contents.len()).sum()
}

/// The limit of writing: the same files, plain `create_dir_all` + `write`.
fn plain_write(dir: &Path, artifacts: &[Artifact]) -> Res<()> {
    for a in artifacts {
        let p = dir.join(&a.path);
        if let Some(d) = p.parent() {
            fs::create_dir_all(d).map_err(|e| e.to_string())?;
        }
        fs::write(&p, &a.contents).map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn section_render(quick: bool) -> Res<()> {
    let rounds = if quick { 30 } else { 200 };
    let layouts = catalog()?;
    let guide = guide();
    let specs = layouts::specs();
    let artifacts =
        render::render_catalog_with(layouts, Some(&guide)).map_err(|e| e.to_string())?;
    let bytes = bytes_of(&artifacts);
    let mut sink = 0usize;

    // Whole catalog, in memory: check + render vs render vs copying the bytes.
    let mut check_all = || {
        std::hint::black_box(layouts::build(specs.clone()).map(|l| l.len()).ok());
    };
    let mut render_all = || {
        std::hint::black_box(render::render_catalog_with(layouts, Some(&guide)).ok());
    };
    let mut copy_bytes = || {
        let copy: Vec<Vec<u8>> = artifacts
            .iter()
            .map(|a| a.contents.as_bytes().to_vec())
            .collect();
        std::hint::black_box(copy);
    };
    let s = interleave(
        rounds,
        &mut [&mut check_all, &mut render_all, &mut copy_bytes],
    );
    let (check_m, render_m, copy_m) = (median(&s[0]), median(&s[1]), median(&s[2]));

    // Whole catalog to disk: render + write_catalog vs the same bytes written
    // plainly vs `cp -r` of the rendered directory.
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let reference = tmp.path().join("reference");
    render::write_catalog(&reference, &artifacts).map_err(|e| e.to_string())?;
    let disk_rounds = if quick { 10 } else { 40 };
    let mut k = 0usize;
    let mut next = || {
        k += 1;
        tmp.path().join(format!("out-{k}"))
    };
    let mut dirs = Vec::new();
    let mut samples: [Vec<Duration>; 3] = Default::default();
    for round in 0..disk_rounds {
        for j in 0..3 {
            let which = (round + j) % 3;
            let dir = next();
            let start = Instant::now();
            let ok = match which {
                0 => render::render_catalog_with(layouts, Some(&guide))
                    .map_err(|e| e.to_string())
                    .and_then(|a| render::write_catalog(&dir, &a).map_err(|e| e.to_string())),
                1 => plain_write(&dir, &artifacts),
                _ => Command::new("cp")
                    .arg("-r")
                    .arg(&reference)
                    .arg(&dir)
                    .status()
                    .map_err(|e| e.to_string())
                    .and_then(|s| s.success().then_some(()).ok_or_else(|| "cp failed".into())),
            };
            samples[which].push(start.elapsed());
            ok?;
            dirs.push(dir);
        }
        // Clean up outside the timed region.
        for d in dirs.drain(..) {
            let _ = fs::remove_dir_all(d);
        }
    }
    let (write_m, plain_m, cp_m) = (
        median(&samples[0]),
        median(&samples[1]),
        median(&samples[2]),
    );

    println!(
        "## Seed catalog in-process ({} layouts, {} files, {} bytes)\n",
        layouts.len(),
        artifacts.len(),
        bytes
    );
    println!("medians of {rounds} interleaved rounds (disk: {disk_rounds})\n");
    println!("| measurement | median | ratio |");
    println!("|---|---|---|");
    println!("| check all specs (`layouts::build`) | {} | |", ms(check_m));
    println!(
        "| render catalog in memory (`render_catalog_with`) | {} | {} of in-memory byte copy |",
        ms(render_m),
        ratio(render_m, copy_m)
    );
    println!("| in-memory copy of the same bytes | {} | 1 |", ms(copy_m));
    println!(
        "| render + `write_catalog` to a new dir | {} | {} of `cp -r` |",
        ms(write_m),
        ratio(write_m, cp_m)
    );
    println!(
        "| plain `fs::write` of the same files | {} | {} of `cp -r` |",
        ms(plain_m),
        ratio(plain_m, cp_m)
    );
    println!(
        "| `cp -r` of the rendered catalog (process) | {} | 1 |",
        ms(cp_m)
    );
    println!();

    // Per layout: check and render, interleaved across layouts.
    let n = layouts.len();
    let mut per: Vec<(Vec<Duration>, Vec<Duration>)> = vec![Default::default(); n];
    let mut budget: Vec<Vec<Duration>> = vec![Vec::new(); n];
    let by_name: Vec<&LayoutSpec> = layouts
        .iter()
        .map(|l| {
            specs
                .iter()
                .find(|s| s.name.value == l.name())
                .ok_or("spec missing")
        })
        .collect::<Result<_, _>>()?;
    for round in 0..rounds {
        for j in 0..n {
            let i = (round + j) % n;
            let (t, r) = timed(|| pd_dsl::check(by_name[i]));
            sink ^= r.map(|l| l.node_count()).unwrap_or(0);
            per[i].0.push(t);
            let (t, r) = timed(|| render::render_layout(&layouts[i]));
            sink ^= r.map(|a| a.len()).unwrap_or(0);
            per[i].1.push(t);
            // The memory budget alone (check runs it once per layout too).
            let (t, r) = timed(|| pd_dsl::capacity::budget(&layouts[i]));
            sink ^= r.iter().map(|b| b.kv_tokens as usize).sum::<usize>();
            budget[i].push(t);
        }
    }
    println!("### Per seed layout (target: render < 1 ms)\n");
    println!("| layout | ranks | check | of which budget | render | bytes |");
    println!("|---|---|---|---|---|---|");
    let mut worst = Duration::ZERO;
    for (i, l) in layouts.iter().enumerate() {
        let a = render::render_layout(l).map_err(|e| e.to_string())?;
        let (c, r) = (median(&per[i].0), median(&per[i].1));
        worst = worst.max(r);
        let ranks: usize = l.placement.nodes.iter().map(|n| n.ranks.len()).sum();
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            l.name(),
            ranks,
            us(c),
            us(median(&budget[i])),
            us(r),
            bytes_of(&a)
        );
    }
    println!("\nslowest seed layout renders in {}\n", us(worst));
    std::hint::black_box(sink);
    Ok(())
}

/// `target/release/catalog` next to this binary (or its parent), built
/// first when missing (e.g. under `cargo bench`, which builds only this
/// package).
fn catalog_bin() -> Res<PathBuf> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let find = || {
        exe.ancestors()
            .skip(1)
            .take(2)
            .map(|d| d.join("catalog"))
            .find(|p| p.is_file())
    };
    if let Some(p) = find() {
        return Ok(p);
    }
    eprintln!("cli: building the release `catalog` binary ...");
    let status = Command::new(cargo())
        .current_dir(repo())
        .args([
            "build",
            "--release",
            "-q",
            "-p",
            "layouts",
            "--bin",
            "catalog",
        ])
        .status()
        .map_err(|e| e.to_string())?;
    find().filter(|_| status.success()).ok_or_else(|| {
        format!(
            "no `catalog` binary next to {}: run `cargo build --release -p layouts --bin catalog` with the same CARGO_TARGET_DIR (scripts/bench.sh does)",
            exe.display()
        )
    })
}

fn run_quiet(cmd: &mut Command) -> Res<Duration> {
    let start = Instant::now();
    let status = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| e.to_string())?;
    let t = start.elapsed();
    if status.success() {
        Ok(t)
    } else {
        Err(format!("{cmd:?} failed: {status}"))
    }
}

fn section_cli(quick: bool) -> Res<()> {
    let bin = catalog_bin()?;
    let rounds = if quick { 7 } else { 25 };
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let reference = tmp.path().join("reference");
    run_quiet(Command::new(&bin).arg("--out").arg(&reference))?;
    let committed = repo().join("catalog");
    let mut samples: [Vec<Duration>; 5] = Default::default();
    let mut k = 0;
    for round in 0..rounds {
        for j in 0..5 {
            let which = (round + j) % 5;
            k += 1;
            let fresh = tmp.path().join(format!("out-{k}"));
            let t = match which {
                // Cold process, new directory.
                0 => run_quiet(Command::new(&bin).arg("--out").arg(&fresh))?,
                // Cold process, replacing a previous catalog.
                1 => run_quiet(Command::new(&bin).arg("--out").arg(&reference))?,
                2 => run_quiet(Command::new("cp").arg("-r").arg(&reference).arg(&fresh))?,
                3 => run_quiet(
                    Command::new(&bin)
                        .arg("--check")
                        .arg("--out")
                        .arg(&committed),
                )?,
                // The limit of a check: read and compare the same bytes.
                _ => run_quiet(
                    Command::new("diff")
                        .arg("-r")
                        .arg(&reference)
                        .arg(&committed),
                )
                .unwrap_or(Duration::MAX),
            };
            samples[which].push(t);
            let _ = fs::remove_dir_all(&fresh);
        }
    }
    let m: Vec<Duration> = samples.iter().map(|s| median(s)).collect();
    println!(
        "## Cold CLI: `{}` (release), {rounds} interleaved runs each\n",
        bin.display()
    );
    println!("| command | median | min | ratio to `cp -r` |");
    println!("|---|---|---|---|");
    let min = |s: &[Duration]| s.iter().min().copied().unwrap_or_default();
    let rows = [
        ("`catalog --out NEW` (target < 100 ms)", 0),
        ("`catalog --out EXISTING` (replace)", 1),
        ("`cp -r` of the same catalog", 2),
        ("`catalog --check` on the committed catalog", 3),
        ("`diff -r` rendered vs committed (reading limit)", 4),
    ];
    for (label, i) in rows {
        println!(
            "| {label} | {} | {} | {} |",
            ms(m[i]),
            ms(min(&samples[i])),
            ratio(m[i], m[2])
        );
    }
    println!("\n`--check` vs `diff -r`: {}\n", ratio(m[3], m[4]));
    Ok(())
}

/// `profile-seed N`: checks and renders the seed catalog N times and nothing
/// else, to run under `valgrind --tool=callgrind` (see BENCHMARKS.md).
fn profile_seed(n: &str) -> Res<()> {
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
fn synth_child(mode: &str, n: &str) -> Res<()> {
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

fn section_synthetic(quick: bool) -> Res<()> {
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

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

fn section_compile(quick: bool) -> Res<()> {
    let n = 200;
    let rounds = if quick { 3 } else { 7 };
    let tmp = tempfile::Builder::new()
        .prefix("pd-dsl-bench-compile-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let dir = tmp.path();
    let libs = compile::write_workspace(dir, &repo(), n).map_err(|e| e.to_string())?;
    let target = dir.join("target");
    let check = |pkg: &str| -> Res<Duration> {
        let start = Instant::now();
        let out = Command::new(cargo())
            .current_dir(dir)
            .env("CARGO_TARGET_DIR", &target)
            .args(["check", "--offline", "-q", "-p", pkg])
            .output()
            .map_err(|e| e.to_string())?;
        let t = start.elapsed();
        if out.status.success() {
            Ok(t)
        } else {
            Err(format!(
                "cargo check -p {pkg} in {}: {}",
                dir.display(),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    };
    // Dependencies (and the first full check of each crate), not measured.
    eprintln!(
        "compile: building dependencies of the generated crates in {} ...",
        dir.display()
    );
    for pkg in compile::CRATES {
        check(pkg)?;
    }
    let mut samples: [Vec<Duration>; 3] = Default::default();
    for round in 0..rounds {
        for j in 0..3 {
            let i = (round + j) % 3;
            compile::touch(&libs[i]).map_err(|e| e.to_string())?;
            samples[i].push(check(compile::CRATES[i])?);
        }
    }
    let m: Vec<Duration> = samples.iter().map(|s| median(s)).collect();
    let per = |d: Duration| format!("{:.2} ms", d.as_secs_f64() * 1e3 / n as f64);
    let over = |a: Duration, b: Duration| a.saturating_sub(b);
    println!(
        "## Compile cost: incremental `cargo check` after touching `src/lib.rs` ({n} layouts, {rounds} interleaved rounds)\n"
    );
    println!(
        "Generated crates depend on `pd-dsl` by path; default Cargo profiles (the proc macro runs at opt-level 0, as in a user's crate).\n"
    );
    println!("| crate | median | min | over baseline | per layout over baseline |");
    println!("|---|---|---|---|---|");
    let min = |s: &[Duration]| s.iter().min().copied().unwrap_or_default();
    for (i, name) in [
        "200 x `layout!`",
        "200 x serde JSON (runtime path)",
        "baseline (no layouts)",
    ]
    .iter()
    .enumerate()
    {
        println!(
            "| {name} | {} | {} | {} | {} |",
            ms(m[i]),
            ms(min(&samples[i])),
            ms(over(m[i], m[2])),
            per(over(m[i], m[2]))
        );
    }
    println!(
        "\n`layout!` vs runtime path: {} of the `cargo check` time; the macro adds {} per layout over the runtime path (target < 5 ms)\n",
        ratio(m[0], m[1]),
        per(over(m[0], m[1]))
    );
    Ok(())
}

/// `import`: `catalog lint` and `catalog import` in one process over 100
/// deployments made from the importer's fixtures (issue 11: < 1 s), side by
/// side with the first stage alone (the YAML crate on the configs' bytes, the
/// shell lexer on the scripts).
fn section_import(quick: bool) -> Res<()> {
    use pd_dsl::import;
    use pd_dsl_bench::import::{Unit, deployments, fixtures};
    let n = 100;
    let rounds = if quick { 7 } else { 41 };
    let base = fixtures(&repo().join("tests/fixtures/import")).map_err(|e| e.to_string())?;
    let units = deployments(&base, n);
    let (configs, scripts): (Vec<&Unit>, Vec<&Unit>) = units.iter().partition(|u| u.yaml);
    let bytes = |us: &[&Unit]| -> usize {
        us.iter()
            .flat_map(|u| &u.inputs)
            .map(|i| i.text.len())
            .sum()
    };
    // Every variant imports and passes the rules with its acknowledgements,
    // as its fixture does: the timing covers the whole path, not an early
    // read error.
    let (mut findings, mut errors) = (0usize, 0usize);
    for u in &units {
        let imported =
            import::import(&u.inputs, &u.opts).map_err(|e| format!("{}: {e}", u.label))?;
        let f = import::findings(&imported);
        errors += f.iter().filter(|f| f.level == import::Level::Error).count();
        findings += f.len();
        import::finish(&imported).map_err(|f| format!("{}: {} findings", u.label, f.len()))?;
    }
    let all: Vec<&Unit> = units.iter().collect();
    let lint = |us: &[&Unit]| {
        for u in us {
            std::hint::black_box(import::lint_unit(&u.inputs, &u.opts));
        }
    };
    let mut lint_all = || lint(&all);
    let mut import_all = || {
        for u in &units {
            let printed = import::import(&u.inputs, &u.opts)
                .ok()
                .and_then(|i| import::finish(&i).ok())
                .map(|spec| import::print::layout_file(&spec));
            std::hint::black_box(printed);
        }
    };
    let mut lint_configs = || lint(&configs);
    let mut yaml_alone = || {
        for u in &configs {
            for i in &u.inputs {
                let v: Result<serde_json::Value, _> = serde_saphyr::from_str(&i.text);
                std::hint::black_box(v.ok());
            }
        }
    };
    let mut lint_scripts = || lint(&scripts);
    let mut lex_alone = || {
        for u in &scripts {
            for (k, i) in u.inputs.iter().enumerate() {
                std::hint::black_box(import::shell::commands(k, &i.text).ok());
            }
        }
    };
    let s = interleave(
        rounds,
        &mut [
            &mut lint_all,
            &mut import_all,
            &mut lint_configs,
            &mut yaml_alone,
            &mut lint_scripts,
            &mut lex_alone,
        ],
    );
    let m: Vec<Duration> = s.iter().map(|s| median(s)).collect();
    println!(
        "## Import and lint in one process ({} deployments: {} e2e configs, {} script sets; medians of {rounds} interleaved rounds)\n",
        units.len(),
        configs.len(),
        scripts.len()
    );
    println!(
        "Made from the {} fixtures of `tests/fixtures/import/` (configs and script sets), each pass with its addresses and DP RPC port moved; every one imports and passes the rules with its acknowledgements ({findings} findings, {errors} errors).\n",
        base.len()
    );
    println!("| measurement | deployments | input bytes | median | per deployment | ratio |");
    println!("|---|---|---|---|---|---|");
    let per = |d: Duration, k: usize| ms(d / u32::try_from(k.max(1)).unwrap_or(u32::MAX));
    let rows: [(&str, &[&Unit], usize, Option<usize>); 6] = [
        (
            "lint all (`lint_unit`: import + every finding; target < 1 s)",
            &all,
            0,
            None,
        ),
        (
            "import all (`import` + `finish` + `print::layout_file`)",
            &all,
            1,
            None,
        ),
        ("lint the e2e configs", &configs, 2, Some(3)),
        (
            "the YAML crate alone on the same bytes (`serde_saphyr` to a JSON value)",
            &configs,
            3,
            Some(3),
        ),
        ("lint the script sets", &scripts, 4, Some(5)),
        (
            "the shell lexer alone on the same bytes (`import::shell::commands`)",
            &scripts,
            5,
            Some(5),
        ),
    ];
    for (label, us_, i, against) in rows {
        println!(
            "| {label} | {} | {} | {} | {} | {} |",
            us_.len(),
            bytes(us_),
            ms(m[i]),
            per(m[i], us_.len()),
            against.map_or_else(String::new, |j| ratio(m[i], m[j]))
        );
    }
    println!(
        "\n{} deployments linted in {} (target < 1 s: {})\n",
        units.len(),
        ms(m[0]),
        if m[0] < Duration::from_secs(1) {
            "met"
        } else {
            "not met"
        }
    );
    Ok(())
}

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
fn section_plan(quick: bool) -> Res<()> {
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

fn section_corpus(quick: bool) -> Res<()> {
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
