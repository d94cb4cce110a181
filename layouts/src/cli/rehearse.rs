//! `catalog rehearse`: its `--kill` and `--signal` values and the run.

use super::{CliResult, EXIT_OK, EXIT_REHEARSAL, EXIT_USAGE};
use pd_dsl::Layout;
use pd_rehearse::rehearsal;
use std::io::Write;

/// `NODE:RANK`.
pub(super) fn parse_kill(s: &str) -> Result<(usize, u32), (u8, String)> {
    let bad = || {
        (
            EXIT_USAGE,
            format!("--kill {s}: expected NODE:RANK (node index, global DP rank), e.g. 2:5"),
        )
    };
    let (n, r) = s.split_once(':').ok_or_else(bad)?;
    Ok((
        n.trim().parse().map_err(|_| bad())?,
        r.trim().parse().map_err(|_| bad())?,
    ))
}

/// `NODE:SIG` of `--signal`.
pub(super) fn parse_signal(s: &str) -> Result<(usize, rehearsal::Sig), (u8, String)> {
    let bad = |why: String| (EXIT_USAGE, format!("--signal {s}: {why}"));
    let (node, sig) = s
        .split_once(':')
        .ok_or_else(|| bad("expected NODE:SIG, e.g. 2:HUP".into()))?;
    let node = node
        .parse()
        .map_err(|_| bad(format!("node `{node}` is not a number")))?;
    Ok((node, rehearsal::Sig::parse(sig).map_err(bad)?))
}

pub(super) fn rehearse(
    layout: &Layout,
    mut opts: rehearsal::Options,
    out: &mut dyn Write,
) -> CliResult {
    opts.standins = std::env::current_exe().map_err(|e| (EXIT_REHEARSAL, e.to_string()))?;
    let usage = |e: String| {
        if e.contains("does not apply") || e.starts_with("--") {
            (EXIT_USAGE, e)
        } else {
            (EXIT_REHEARSAL, e)
        }
    };
    let outcome = rehearsal::rehearse(layout, &opts, out).map_err(usage)?;
    Ok(if outcome.passed {
        EXIT_OK
    } else {
        EXIT_REHEARSAL
    })
}
