//! `cli`: the `catalog` binary's commands, timed as processes.

use crate::{Res, catalog_bin, repo, run_quiet};
use pd_dsl_bench::{median, ms, ratio};
use std::fs;
use std::process::Command;
use std::time::Duration;

pub(crate) fn section_cli(quick: bool) -> Res<()> {
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
