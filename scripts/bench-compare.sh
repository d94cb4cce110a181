#!/usr/bin/env bash
# Render speed of this checkout against another revision, side by side in one
# run: builds `pd-dsl-bench` at BASE (in a temporary worktree, its own target
# dir) and here, then runs their `render --quick` sections alternately, ROUNDS
# times each, and prints the median of each figure and the ratio HEAD / BASE.
#
#   scripts/bench-compare.sh BASE [ROUNDS]     # e.g. scripts/bench-compare.sh 7d3d784 8
#
# Both binaries render the catalog of their own revision; when the catalog is
# the same (a refactor), the ratio is the renderer's alone.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
base="${1:?usage: scripts/bench-compare.sh BASE [ROUNDS]}"
rounds="${2:-8}"
git rev-parse --verify --quiet "$base^{commit}" >/dev/null ||
  { echo "bench-compare: \`$base\` is not a commit in this repository" >&2; exit 2; }
head_rev="$(git rev-parse --short HEAD)"
base_rev="$(git rev-parse --short "$base")"
target="${CARGO_TARGET_DIR:-target}"
base_target="$(realpath -m "${PD_BENCH_BASE_TARGET:-$target/bench-base}")"
work="$(mktemp -d)"
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add --quiet --detach "$work/base" "$base"
echo "bench-compare: building BASE $base_rev and HEAD $head_rev (release)" >&2
(cd "$work/base" && CARGO_TARGET_DIR="$base_target" \
  cargo build --release --locked -q -p pd-dsl-bench --bin pd-dsl-bench)
cargo build --release --locked -q -p pd-dsl-bench --bin pd-dsl-bench
base_bin="$base_target/release/pd-dsl-bench"
head_bin="$(realpath "$target")/release/pd-dsl-bench"

# The figures of one `render --quick` run, one `NAME<TAB>MILLISECONDS` line each.
figures() {
  "$1" render --quick | awk -F'|' '
    function msof(s) { gsub(/ /, "", s); if (s ~ /us$/) { sub(/us$/, "", s); return s / 1000 }
                       if (s ~ /ms$/) { sub(/ms$/, "", s); return s + 0 } if (s ~ /s$/) { sub(/s$/, "", s); return s * 1000 } return "" }
    /render catalog in memory/ { print "catalog in memory\t" msof($3) }
    /render \+ `write_catalog`/ { print "catalog to disk\t" msof($3) }
    /^\| [a-z0-9.-]+\/[^|]+\| [0-9]+ \|/ { v = msof($5); if (v != "") { sum += v; n++ } }
    END { if (n) print "sum of per-layout renders\t" sum }'
}

: >"$work/samples"
for ((i = 0; i < rounds; i++)); do
  # Alternate which goes first, so neither always runs on a warmer machine.
  if ((i % 2 == 0)); then order=(base head); else order=(head base); fi
  for who in "${order[@]}"; do
    bin="$base_bin"; [[ "$who" == head ]] && bin="$head_bin"
    figures "$bin" | sed "s/^/$who\t/" >>"$work/samples"
  done
  echo "bench-compare: round $((i + 1))/$rounds done" >&2
done

echo "| figure (median of $rounds runs each, interleaved) | BASE $base_rev | HEAD $head_rev | HEAD / BASE |"
echo "|---|---|---|---|"
python3 - "$work/samples" <<'EOF'
import statistics, sys
data = {}
for line in open(sys.argv[1]):
    who, name, v = line.rstrip("\n").split("\t")
    data.setdefault(name, {}).setdefault(who, []).append(float(v))
for name, d in data.items():
    b, h = statistics.median(d["base"]), statistics.median(d["head"])
    print(f"| {name} | {b:.3f} ms | {h:.3f} ms | {h / b:.2f}x |")
EOF
