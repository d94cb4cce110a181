//! `pd-dsl-bench`: prints every figure of `BENCHMARKS.md` as markdown.
//!
//! ```text
//! scripts/bench.sh                      # builds release binaries, runs all
//! pd-dsl-bench [all|render|cli|synthetic|compile|import] [--quick]
//! ```
//!
//! Every comparison is measured side by side in one run, interleaved (the
//! order rotates each round), and reported as medians.

mod sections;

use pd_dsl::Layout;
use pd_dsl::render::Artifact;
use pd_dsl_bench::compile;
use sections::{
    profile_seed, section_cli, section_compile, section_corpus, section_import, section_plan,
    section_render, section_synthetic, synth_child,
};
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

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}
