#!/usr/bin/env bash
# Every figure of BENCHMARKS.md, measured side by side in one run.
#
#   scripts/bench.sh            # all sections (~5-10 min on 2 cores)
#   scripts/bench.sh --quick    # fewer rounds
#   scripts/bench.sh render     # one section: render | cli | synthetic | compile | import | corpus | plan
#
# Builds the release `catalog` and `pd-dsl-bench` binaries (same target dir),
# then runs the bench. Set CARGO_TARGET_DIR to share a build directory.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --release --locked -p layouts --bin catalog -p pd-dsl-bench --bin pd-dsl-bench >&2
target="${CARGO_TARGET_DIR:-target}"
exec "$target/release/pd-dsl-bench" "$@"
