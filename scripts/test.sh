#!/usr/bin/env bash
# The one command that passes all tests on a fresh machine (README: "Test").
# It sets up what the tests need (shellcheck, python3) and fails loudly when it
# cannot: no test skips because a tool is missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

need_pkg() { # need_pkg COMMAND DEBIAN_PACKAGE
  if command -v "$1" >/dev/null 2>&1; then return 0; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test.sh: installing $2 (for $1)" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
  fi
  command -v "$1" >/dev/null 2>&1 || {
    echo "test.sh: \`$1\` is required by the artifact tests; install the \`$2\` package" >&2
    exit 1
  }
}
need_pkg shellcheck shellcheck
need_pkg python3 python3
# The interpreter itself first on PATH, not a version manager's shim: pyenv's
# `python3` shim runs ~30 shell processes before Python starts (0.2 s idle,
# seconds on a loaded 2-core machine), and the tests start python3 thousands
# of times (the launcher, its dry runs, the stand-ins). Measured: the import
# round trip of DeepSeek-R1-W8A8-EPLB.yaml took 17 s through the shim, 3.3 s
# without.
PY_DIR=$(dirname "$(python3 -c 'import sys; print(sys.executable)')")
export PATH="$PY_DIR:$PATH"
need_pkg curl curl   # run.sh polls /health with it; the rehearsal tests run run.sh
# The rehearsal puts this machine's copy of every tool the layout's image has on
# the scripts' PATH (upstream/facts/vllm-ascend/<release>.json `tools`).
need_pkg numactl numactl
need_pkg ifconfig net-tools
# tests/tests/k8s/: `kubectl kustomize` builds every layout's k8s/ (Debian's
# kubectl is the `kubernetes-client` package), and tests/k8s/validate.py checks
# the manifests against the schemas shipped by PyPI's kubernetes-validate.
need_pkg kubectl kubernetes-client
need_py() { # need_py MODULE PYPI_REQUIREMENT
  if python3 -c "import $1" >/dev/null 2>&1; then return 0; fi
  if ! python3 -m pip --version >/dev/null 2>&1; then need_pkg pip3 python3-pip; fi
  echo "test.sh: installing $2 (python module $1)" >&2
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install -q "$2" >&2 || true
  python3 -c "import $1" >/dev/null 2>&1 || {
    echo "test.sh: python module \`$1\` is required by the tests; run \`python3 -m pip install $2\`" >&2
    exit 1
  }
}
need_py kubernetes_validate 'kubernetes-validate==1.37.0'
# scripts/upstream/e2e_oracle.py runs upstream's e2e runner, which parses its
# configs with PyYAML and the `regex` module.
need_py yaml 'PyYAML==6.0.3'
need_py regex 'regex==2026.5.9'
# tests/tests/serve_flags_oracle.rs builds the parser `vllm serve` builds from
# each release's source (scripts/upstream/crosscheck_vllm_parser.py), with
# what vLLM's docs build installs.
need_py msgspec 'msgspec==0.23.0'
need_py pydantic 'pydantic==2.13.4'
need_py packaging 'packaging==26.4'
need_py requests 'requests==2.34.2'
# The browser test (tests/tests/browser.rs) loads every catalog page in
# headless Chromium through playwright-core (pinned in tests/browser/).
need_pkg chromium chromium
need_pkg node nodejs
need_pkg npm npm
need_pkg fc-list fontconfig
# Fonts: the picture's monospace face, and CJK for the bilingual index (the
# screenshots must show the text, not empty boxes).
need_font() { # need_font FAMILY DEBIAN_PACKAGE
  # Not `fc-list | grep -q`: grep exits at the first match, fc-list dies of
  # SIGPIPE with many fonts installed, and pipefail reports a miss.
  if grep -q "$1" <(fc-list); then return 0; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test.sh: installing $2 (font $1)" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
  fi
  grep -q "$1" <(fc-list) || {
    echo "test.sh: the browser test needs the font \`$1\`; install the \`$2\` package" >&2
    exit 1
  }
}
need_font "DejaVu Sans Mono" fonts-dejavu-core
need_font "WenQuanYi Micro Hei" fonts-wqy-microhei
echo "== npm ci (tests/browser: playwright-core)" >&2
npm ci --prefix tests/browser --no-audit --no-fund --loglevel=error >&2

# The upstream corpus (upstream/README.md): every pinned vllm-ascend and vLLM
# source distribution, fetched once per machine through pip's index and
# verified against upstream/corpus.lock.json (PD_UPSTREAM_CACHE: a pre-filled
# cache). The Rust tests below read it too.
echo "== upstream corpus (fetch and verify)" >&2
python3 scripts/upstream/corpus.py fetch
echo "== upstream facts (upstream/facts/ equals what the corpus gives)" >&2
python3 scripts/upstream/facts.py check
echo "== vLLM's own parser builds the flag table the facts hold (every pinned vllm)" >&2
python3 scripts/upstream/crosscheck_vllm_parser.py
echo "== start-up refusals (every check of the corpus has a verdict; upstream/startup-checks.md is fresh)" >&2
python3 scripts/upstream/startup_checks.py check
echo "== upstream extractors and e2e oracle (python3 -m unittest)" >&2
(cd scripts/upstream && python3 -m unittest discover -p 'test_*.py')

echo "== cargo fmt --check" >&2
cargo fmt --all -- --check
echo "== cargo clippy" >&2
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== cargo test" >&2
cargo test --workspace --locked
echo "== catalog --check (the committed catalog/ is fresh)" >&2
cargo run --quiet --locked --bin catalog -- --check
echo "== fuzz (cargo-fuzz, ${PD_FUZZ_SECONDS:-60} s per target; installs cargo-fuzz if missing)" >&2
./fuzz/run.sh "${PD_FUZZ_SECONDS:-60}"
