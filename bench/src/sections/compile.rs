//! `compile`: what `layout!` adds to `cargo check`, on generated crates.

use crate::{Res, cargo, repo};
use pd_dsl_bench::{compile, median, ms, ratio};
use std::process::Command;
use std::time::{Duration, Instant};

pub(crate) fn section_compile(quick: bool) -> Res<()> {
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
