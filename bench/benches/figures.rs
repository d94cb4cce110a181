//! `cargo bench -p pd-dsl-bench [-- SECTION] [-- --quick]`: the same figures as
//! `scripts/bench.sh`, run through the `pd-dsl-bench` binary (built by cargo
//! for this bench target), which also needs the release `catalog` binary.

use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let bin = env!("CARGO_BIN_EXE_pd-dsl-bench");
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    match Command::new(bin).args(&args).status() {
        Ok(s) if s.success() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("cannot run {bin}: {e}");
            ExitCode::FAILURE
        }
    }
}
