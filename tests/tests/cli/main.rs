//! The `catalog` command line, driven in-process through `layouts::cli::run`
//! with sample layouts (the binary itself is a one-line `main`).

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod browse;
mod diff;
mod plan;
mod rules;
mod write;

use layouts::cli;
use pd_dsl::Layout;

const SAMPLES: [&str; 3] = [
    include_str!("../../../pd-dsl/tests/fixtures/v3_1_a3_2p1d.json"),
    include_str!("../../../pd-dsl/tests/fixtures/v4_flash_a3_1p1d.json"),
    include_str!("../../../pd-dsl/tests/fixtures/v3_1_a2_mixed_2node.json"),
];

fn samples() -> Vec<Layout> {
    SAMPLES
        .iter()
        .map(|j| {
            let spec: pd_dsl::LayoutSpec = serde_json::from_str(j).expect("parses");
            pd_dsl::check(&spec).unwrap_or_else(|d| panic!("{d}"))
        })
        .collect()
}

fn run(args: &[&str]) -> (u8, String, String) {
    run_with(args, Ok(samples()))
}

fn run_with(args: &[&str], layouts: Result<Vec<Layout>, String>) -> (u8, String, String) {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let mut argv = vec!["catalog"];
    argv.extend_from_slice(args);
    let code = cli::run(argv, layouts, None, &mut out, &mut err);
    (
        code,
        String::from_utf8(out).expect("utf8"),
        String::from_utf8(err).expect("utf8"),
    )
}

const P2P1D: &str = "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d";
