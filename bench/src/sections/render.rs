//! `render`: checking and rendering the catalog, writing it, and the limit
//! of plain writes.

use crate::{Res, bytes_of, catalog, guide, plain_write};
use pd_dsl::{LayoutSpec, render};
use pd_dsl_bench::{interleave, median, ms, ratio, timed, us};
use std::fs;
use std::process::Command;
use std::time::{Duration, Instant};

pub(crate) fn section_render(quick: bool) -> Res<()> {
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
    // The checkpoint copies (`dims::CHECKPOINTS`) are parsed once per
    // process, the first time a rule reads them: what the macro pays once
    // per compiler process, next to one layout's check.
    let mut parse = Vec::new();
    for _ in 0..rounds {
        let (t, r) = timed(pd_dsl::dims::load_checkpoints);
        sink ^= r.map(|c| c.len()).unwrap_or(0);
        parse.push(t);
    }
    println!(
        "checkpoint copies parsed once per process in {} ({} copies)\n",
        us(median(&parse)),
        pd_dsl::dims::CHECKPOINTS.len()
    );
    std::hint::black_box(sink);
    Ok(())
}
