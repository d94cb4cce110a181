{% include "sh/header.sh" %}
# Checks a node before start; run.sh runs it. Usage: preflight.sh NODE_INDEX
# Checks: {{ m.preflight_checks|join(", ")|comment }}. Skip one only with PD_SKIP_PREFLIGHT=name,...
# Overrides: PD_MODEL_PATH (weights directory), PD_PORT_CHECK_HOST (address the ports check binds, default 0.0.0.0 as vllm serve does).
set -euo pipefail

CHECKS=({{ m.preflight_checks|words }})
NODE_COUNT={{ m.node_count }}
EXPECTED_NPUS={{ m.npus_per_node }}
{% include "sh/model_path.sh" %}
{% if let Some(proxy) = m.proxy %}{% include "sh/proxy_script.sh" %}
{% endif %}IMAGE_REF={{ m.docker.image }}
IMAGE_VERSION={{ m.image_version }}
REQUIRED_PATHS=({{ m.required_host_paths|words }})
MOONCAKE_DIRS={{ m.mooncake_dirs }}
CHECKPOINT_CHECKS={{ m.checkpoint_checks }}

die() { echo "preflight: error: $*" >&2; exit 2; }
NODE_INDEX=${1:-${PD_NODE_INDEX:-}}
[[ $NODE_INDEX =~ ^[0-9]+$ ]] || die "usage: $0 NODE_INDEX"
SKIP=${PD_SKIP_PREFLIGHT:-}
IFS=',' read -r -a skip_names <<<"$SKIP"
for name in "${skip_names[@]}"; do
    [[ -z $name || " ${CHECKS[*]} " == *" $name "* ]] || die "PD_SKIP_PREFLIGHT names unknown check '$name' (known: ${CHECKS[*]})"
done

# Per-node facts, derived from the layout's placement: NPUs used and ports that must be free.
case $NODE_INDEX in
{% for (n, row) in m.nodes() %}    {{ n.index }}) NPUS_USED={{ row.npus_used }} PORT_LIST={{ row.free_ports }} ;;
{% endfor %}    *) die "node index $NODE_INDEX is not in [0, $NODE_COUNT)" ;;
esac
read -r -a PORTS <<<"$PORT_LIST"

{% include "sh/busy_ports.sh" %}

FAILED=()
fail() { echo "preflight: FAIL $1: $2" >&2; FAILED+=("$1"); }
pass() { echo "preflight: ok   $1: $2" >&2; }

check_npu_count() {
    if ! command -v npu-smi >/dev/null 2>&1; then
        fail npu_count "npu-smi not found on PATH (is the driver mounted into the container?)"
        return
    fi
    local info count
    if ! info=$(npu-smi info -l 2>&1); then
        fail npu_count "'npu-smi info -l' failed: $info"
        return
    fi
    # NPUs as the runtime counts them: chips when npu-smi lists them per card, else cards.
    count=$(awk -F: '/Total Count/ {gsub(/ /, "", $2); total = $2} /Chip Count/ {gsub(/ /, "", $2); chips += $2} END {print (chips > 0 ? chips : total + 0)}' <<<"$info")
    if [[ $count -ne $EXPECTED_NPUS ]]; then
        fail npu_count "npu-smi info -l reports $count NPUs, the layout's hardware has $EXPECTED_NPUS"
    else
        pass npu_count "$count NPUs"
    fi
}

check_npu_links() {
    if ! command -v hccn_tool >/dev/null 2>&1; then
        fail npu_links "hccn_tool not found on PATH (mount /usr/local/Ascend/driver/tools/hccn_tool)"
        return
    fi
    local d out bad=()
    for ((d = 0; d < NPUS_USED; d++)); do
        out=$(hccn_tool -i "$d" -link -g 2>&1) || true
        [[ $out == *UP* ]] || bad+=("NPU $d link not UP ($out)")
        out=$(hccn_tool -i "$d" -net_health -g 2>&1) || true
        [[ ${out,,} == *success* ]] || bad+=("NPU $d net_health not success ($out)")
    done
    if ((${#bad[@]})); then
        fail npu_links "$(printf '%s; ' "${bad[@]}")"
    else
        pass npu_links "NPUs 0..$((NPUS_USED - 1)) link UP, net_health success"
    fi
}

check_host_paths() {
    local p missing=()
    for p in "${REQUIRED_PATHS[@]}"; do
        [[ -e $p ]] || missing+=("$p")
    done
    if ((${#missing[@]})); then
        fail host_paths "missing ${missing[*]}"
    else
        pass host_paths "${REQUIRED_PATHS[*]}"
    fi
}

check_model_dir() {
    if [[ ! -d $MODEL_PATH ]]; then
        fail model_dir "weights directory $MODEL_PATH does not exist (mount it or fix the layout's model_path)"
    elif [[ ! -f $MODEL_PATH/config.json ]]; then
        fail model_dir "$MODEL_PATH has no config.json (incomplete download?)"
    else
        pass model_dir "$MODEL_PATH"
    fi
}

{% include "sh/model_config.sh" %}

check_ports() {
    local busy
    if ! busy=$(busy_ports); then
        fail ports "cannot test the ports (python3 failed)"
        return
    fi
    if [[ -n $busy ]]; then
        fail ports "already in use: $busy (a previous vllm, proxy or Mooncake process still running?)"
    else
        pass ports "${PORTS[*]} free"
    fi
}

check_tools() {
    # python3 runs vLLM, so every image has it; curl is optional (http_request falls back to python3).
    if ! command -v python3 >/dev/null 2>&1; then
        fail tools "missing python3: run.sh needs it (the launcher; local IP and NIC where iproute2's ip is not installed; the /health polls where curl is not installed)"
    elif command -v curl >/dev/null 2>&1; then
        pass tools "python3, curl"
    else
        pass tools "python3 (no curl: the /health polls and verify.sh use python3's urllib)"
    fi
}

check_proxy_script() {
    if ((NODE_INDEX != 0)); then
        pass proxy_script "node 0 runs the proxy"
    elif [[ -f $PROXY_SCRIPT ]]; then
        pass proxy_script "$PROXY_SCRIPT"
    else
        fail proxy_script "$PROXY_SCRIPT not found: the proxy would exit after every rank loaded the model; set PD_PROXY_SCRIPT"
    fi
}

check_proxy_deps() {
    local err
    if ((NODE_INDEX != 0)); then
        pass proxy_deps "node 0 runs the proxy"
    elif err=$(python3 -c 'import fastapi, httpx, uvicorn' 2>&1); then
        pass proxy_deps "fastapi, httpx, uvicorn importable"
    else
        fail proxy_deps "the proxy needs fastapi, httpx and uvicorn in python3: ${err##*$'\n'}"
    fi
}

check_mooncake() {
    if python3 -c 'import mooncake' >/dev/null 2>&1; then
        pass mooncake "python module importable"
        return
    fi
    local dirs d
    IFS=: read -r -a dirs <<<"${LD_LIBRARY_PATH:-}:$MOONCAKE_DIRS"
    for d in "${dirs[@]}"; do
        [[ -n $d && -d $d ]] || continue
        if compgen -G "$d/*mooncake*" >/dev/null || compgen -G "$d/*ascend_transport*" >/dev/null || compgen -G "$d/*transfer_engine*" >/dev/null; then
            pass mooncake "found in $d"
            return
        fi
    done
    # Process substitution, not a pipe: grep -q stops at the first match, which would
    # kill ldconfig with SIGPIPE and fail the pipeline under pipefail.
    if grep -q -e mooncake -e ascend_transport -e transfer_engine <(ldconfig -p 2>/dev/null); then
        pass mooncake "found by ldconfig"
        return
    fi
    fail mooncake "Mooncake not found: 'import mooncake' fails and no library in LD_LIBRARY_PATH, $MOONCAKE_DIRS or ldconfig"
}

# The installed vllm-ascend's version as pip has it: the package metadata
# (importlib.metadata), else the `_version.py` setuptools-scm writes (setup.py:
# `get_version(write_to="vllm_ascend/_version.py")`), read without importing the
# package (its `__init__.py` imports vLLM and defines no `__version__`).
installed_vllm_ascend() {
    python3 - <<'PY'
import importlib.metadata
import importlib.util
import pathlib
import runpy
import sys

try:
    print(importlib.metadata.version("vllm_ascend"), "(package metadata)")
    sys.exit(0)
except importlib.metadata.PackageNotFoundError:
    pass
spec = importlib.util.find_spec("vllm_ascend")
if spec is None or not spec.origin:
    sys.exit("vllm_ascend is not installed in " + sys.executable + ": no package metadata and no importable vllm_ascend")
path = pathlib.Path(spec.origin).parent / "_version.py"
try:
    version = runpy.run_path(str(path)).get("__version__")
except OSError as e:
    sys.exit("vllm_ascend has no package metadata and no " + str(path) + ": " + e.strerror)
if not version:
    sys.exit(str(path) + " defines no __version__")
print(version, "(" + str(path) + ")")
PY
}

check_vllm_ascend_version() {
    local out v from public note=''
    if ! out=$(installed_vllm_ascend 2>&1); then
        fail vllm_ascend_version "cannot read the installed vllm_ascend version: ${out##*$'\n'}"
        return
    fi
    out=${out##*$'\n'}
    v=${out%% *}
    from=${out#* }
    # A release is `0.21.0rc1` for image tag `v0.21.0rc1`; a source build adds
    # `.devN` (commits past a tag) and/or a `+local` part (commit, dirty tree).
    public=${v,,}
    public=${public#v}
    if [[ $public == *+* ]]; then
        note=", a source build (local part +${public#*+})"
        public=${public%%+*}
    fi
    if [[ $public == "$IMAGE_VERSION" ]]; then
        pass vllm_ascend_version "$v $from$note"
    elif [[ $public =~ \.dev[0-9]*$ ]]; then
        fail vllm_ascend_version "found vllm_ascend $v $from, a source build past a release (${BASH_REMATCH[0]#.}), but the layout's image is $IMAGE_REF (expects $IMAGE_VERSION)"
    else
        fail vllm_ascend_version "found vllm_ascend $v $from$note, but the layout's image is $IMAGE_REF (expects $IMAGE_VERSION)"
    fi
}

for check in "${CHECKS[@]}"; do
    if [[ ,$SKIP, == *",$check,"* ]]; then
        echo "preflight: skip $check (PD_SKIP_PREFLIGHT)" >&2
        continue
    fi
    "check_$check"
done
if ((${#FAILED[@]})); then
    echo "preflight: node $NODE_INDEX failed: ${FAILED[*]} (skip a check only with PD_SKIP_PREFLIGHT=name,...)" >&2
    exit 1
fi
echo "preflight: node $NODE_INDEX ok" >&2
