#!/usr/bin/env bash
# Compares the `render` section of two pd-dsl-bench binaries (e.g. before and
# after a renderer change), interleaved in one run: each round runs both,
# alternating which goes first, and the medians over rounds are compared.
#
#   scripts/bench-ab.sh BASE_BIN NEW_BIN [ROUNDS]    # default 7 rounds
#
# Build BASE_BIN from another commit into its own target directory, e.g.
#   git archive COMMIT | tar -x -C /tmp/base
#   (cd /tmp/base && CARGO_TARGET_DIR=/tmp/base-target cargo build --release --locked -p pd-dsl-bench)
# Prints, per binary, the median of the in-memory catalog render
# (`render_catalog_with`), of render + `write_catalog`, and of the sum of the
# per-layout render medians, then NEW / BASE.
set -euo pipefail

die() { echo "bench-ab.sh: error: $*" >&2; exit 2; }
[[ $# -ge 2 ]] || die "usage: $0 BASE_BIN NEW_BIN [ROUNDS]"
base=$1
new=$2
rounds=${3:-7}
[[ -x $base ]] || die "BASE_BIN '$base' is not an executable"
[[ -x $new ]] || die "NEW_BIN '$new' is not an executable"
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive number, got '$rounds'"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# One run of BIN's render section: "catalog_ms write_ms per_layout_sum_us".
measure() {
    local text
    text=$("$1" render) || die "$1 render failed"
    awk -F'|' '
        function num(s) { gsub(/[^0-9.]/, "", s); return s + 0 }
        /render catalog in memory/ { cat = num($3) }
        /render \+ `write_catalog`/ { wr = num($3) }
        # Per-layout rows: | name | ranks | check | render | bytes |
        NF == 7 && $2 ~ /\// && $5 ~ / us / { sum += num($5) }
        END {
            if (cat == "" || wr == "" || sum == 0) exit 1
            print cat, wr, sum
        }' <<<"$text" || die "cannot read the render section of $1"
}

for ((r = 0; r < rounds; r++)); do
    if ((r % 2 == 0)); then order=(base new); else order=(new base); fi
    for which in "${order[@]}"; do
        bin=$base
        [[ $which == new ]] && bin=$new
        measure "$bin" >>"$out/$which"
    done
    echo "round $((r + 1))/$rounds: base $(tail -n 1 "$out/base"), new $(tail -n 1 "$out/new")" >&2
done

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "| measurement (median of $rounds interleaved runs) | base | new | new / base |"
echo "|---|---|---|---|"
col=1
for what in "render catalog in memory (ms)" "render + write_catalog (ms)" "sum of per-layout render medians (us)"; do
    b=$(awk -v c=$col '{ print $c }' "$out/base" | median)
    n=$(awk -v c=$col '{ print $c }' "$out/new" | median)
    awk -v w="$what" -v b="$b" -v n="$n" 'BEGIN { printf "| %s | %.3f | %.3f | %.2fx |\n", w, b, n, n / b }'
    col=$((col + 1))
done
