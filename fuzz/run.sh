#!/usr/bin/env bash
# Bounded fuzzing of every target: ./fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Needs cargo-fuzz (installed here when missing) and libFuzzer's nightly-only
# flags, which the stable toolchain accepts with RUSTC_BOOTSTRAP=1. Fails —
# never skips — when it cannot build or run, or when a target finds a crash
# (the input is saved under fuzz/artifacts/<target>/).
#
# The committed corpus (fuzz/corpus/<target>/) is read, not written: new
# inputs go to a scratch directory, so a run leaves the tree clean. To keep
# newly found interesting inputs, merge them:
#   RUSTC_BOOTSTRAP=1 cargo fuzz run -s none TARGET -- -merge=1 fuzz/corpus/TARGET SCRATCH
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

SECONDS_PER_TARGET=${1:-60}
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
    TARGETS=(macro_tokens macro_splice loader import)
fi
CARGO_FUZZ_VERSION=0.13.2

if ! grep -q "$CARGO_FUZZ_VERSION" <(cargo fuzz --version 2>/dev/null); then
    echo "fuzz/run.sh: installing cargo-fuzz $CARGO_FUZZ_VERSION" >&2
    cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked --quiet
fi

export RUSTC_BOOTSTRAP=1
# No sanitizer: every crate of ours forbids `unsafe`, and without ASan the
# targets run about twice as fast. Debug assertions (overflow checks) stay on.
FUZZ_FLAGS=(--sanitizer none)

cargo fuzz build "${FUZZ_FLAGS[@]}"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for t in "${TARGETS[@]}"; do
    mkdir -p "$scratch/$t"
    echo "fuzz/run.sh: $t for ${SECONDS_PER_TARGET}s" >&2
    cargo fuzz run "${FUZZ_FLAGS[@]}" "$t" "$scratch/$t" "corpus/$t" -- \
        -max_total_time="$SECONDS_PER_TARGET" -max_len=8192 -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 2>"$scratch/$t.log" || {
        tail -n 60 "$scratch/$t.log" >&2
        echo "fuzz/run.sh: $t failed; the input is under fuzz/artifacts/$t/" >&2
        exit 1
    }
    grep -E "^stat::(number_of_executed_units|average_exec_per_sec|new_units_added)" "$scratch/$t.log" |
        sed "s/^/  $t /" >&2 || true
done
