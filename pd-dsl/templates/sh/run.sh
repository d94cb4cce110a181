{% include "sh/header.sh" %}
# Per-node entry point: run it on every node from this directory.
{% if m.node_count == 1 %}#   ./run.sh   (one node: this host; PD_LOCAL_IP sets its address)
{% else %}#   PD_NODE_INDEX=<i> PD_NODE_IPS=<ip0>,<ip1>,... ./run.sh
{% endif %}
# Node discovery alternatives: PD_HOSTFILE, RANK_TABLE_FILE, ModelArts, LeaderWorkerSet (see README.md).
# Overrides: PD_ASCEND_ROOT (CANN's set_env.sh files), PD_LOCAL_IP, PD_NIC, PD_LOG_DIR, PD_WAIT_SECONDS, PD_POLL_SECONDS, PD_MODEL_PATH, PD_SKIP_PREFLIGHT.
# PD_DRY_RUN=1 prints this node's commands (launcher, each rank's env and `vllm serve`, and the
# proxy on node 0) and starts nothing.
set -euo pipefail

LAYOUT={{ m.view.name }}
NODE_COUNT={{ m.node_count }}
HAS_PROXY={{ m.proxy.is_some()|bit }}
{% if m.is_pd && m.uniform_dp_rpc_port %}{% if let Some(port) = m.dp_rpc_port %}DP_RPC_PORT={{ port }}
{% endif %}{% endif %}{% if let Some(proxy) = m.proxy %}PROXY_PORT={{ proxy.port }}
{% else %}API_PORT={{ m.api_port }}
{% endif %}HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

PIDS=()
# Fail fast: report, stop anything this script started, exit non-zero.
die() {
    echo "run.sh: error: $*" >&2
    others
    if ((${#PIDS[@]})); then
        kill -TERM "${PIDS[@]}" 2>/dev/null || true
        wait || true
    fi
    if declare -F cleanup >/dev/null; then cleanup; fi
    exit 1
}
log() { echo "run.sh: $*" >&2; }
# Said whenever this node stops on its own: the other nodes do not know.
# A dry run started nothing anywhere; a node that failed before starting
# anything leaves the others waiting for it, not serving.
others() {
    if ((NODE_COUNT > 1)) && [[ ${PD_DRY_RUN:-0} != 1 ]]; then
        if ((${#PIDS[@]})); then
            echo "run.sh: the other nodes of $LAYOUT keep running; stop them with ./stop.sh on each (README: How to stop it)" >&2
        else
            echo "run.sh: this node started nothing; nodes of $LAYOUT already started wait for it until PD_WAIT_SECONDS: fix the cause and start it again, or stop them with ./stop.sh on each" >&2
        fi
    fi
}
is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }
is_ipv4() {
    local IFS=. part parts
    [[ $1 =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]] || return 1
    read -r -a parts <<<"$1"
    for part in "${parts[@]}"; do ((10#$part <= 255)) || return 1; done
}

{% include "sh/net.sh" %}

# 0. The image's CANN, bisheng and ATB environment. Only ~/.bashrc sources their
#    set_env.sh in the image, and this script runs in a non-interactive shell
#    (`docker exec NAME bash run.sh`, a pod's command): unless a shell set it up
#    already ({{ m.cann_env_marker|ident }} set), source each that exists under
#    PD_ASCEND_ROOT (default {{ m.ascend_root|comment }}); the toolkit's is required.
ASCEND_ROOT=${PD_ASCEND_ROOT:-{{ m.ascend_root }}}
# Rows of: required (1|0), what, path under ASCEND_ROOT (a glob: its first match).
CANN_ENV=(
{% for f in m.cann_env %}    {{ f.required|bit }} {{ f.what }} {{ f.path }}
{% endfor %})
if [[ -n ${ {{- m.cann_env_marker|ident -}} :-} ]]; then
    log "CANN environment already set up ({{ m.cann_env_marker|ident }}=${{ m.cann_env_marker|ident }}); sourcing nothing"
else
    sourced=()
    for ((c = 0; c < ${#CANN_ENV[@]}; c += 3)); do
        mapfile -t found < <(compgen -G "$ASCEND_ROOT/${CANN_ENV[c + 2]}" || true)
        if ((${#found[@]} == 0)); then
            if ((CANN_ENV[c])); then
                if [[ ${PD_DRY_RUN:-0} == 1 ]]; then
                    log "warning: no ${CANN_ENV[c + 1]} environment: $ASCEND_ROOT/${CANN_ENV[c + 2]} does not exist and {{ m.cann_env_marker|ident }} is unset; a real start stops here"
                else
                    die "no ${CANN_ENV[c + 1]} environment: $ASCEND_ROOT/${CANN_ENV[c + 2]} does not exist and {{ m.cann_env_marker|ident }} is unset (that script sets it); set PD_ASCEND_ROOT to the directory holding ascend-toolkit/, or source its set_env.sh before run.sh"
                fi
            else
                log "no ${CANN_ENV[c + 1]} environment ($ASCEND_ROOT/${CANN_ENV[c + 2]} does not exist); going on without it"
            fi
            continue
        fi
        # Vendor scripts: not written for `set -euo pipefail` (upstream CI sources ATB's under `set +eu`).
        set +euo pipefail
        # shellcheck disable=SC1090
        source "${found[0]}"
        set -euo pipefail
        sourced+=("${CANN_ENV[c + 1]} ${found[0]}")
    done
    if ((${#sourced[@]})); then
        log "sourced the CANN environment: $(printf '%s; ' "${sourced[@]}")"
    fi
fi

{% include "sh/no_proxy.sh" %}

{% include "sh/http.sh" %}

{% include "sh/hosts.sh" %}

# 1. This node's index and every node's IP, in node order. First source set wins:
#    PD_NODE_IPS (+ PD_NODE_INDEX), PD_HOSTFILE, RANK_TABLE_FILE (HCCL rank table),
#    ModelArts (VC_WORKER_HOSTS + VC_TASK_INDEX), LeaderWorkerSet (LWS_*).
NODE_IPS=()
# Node names as given (before resolution), for NO_PROXY.
NODE_NAMES=()
NODE_INDEX=${PD_NODE_INDEX:-}
if [[ -n ${PD_NODE_IPS:-} ]]; then
    SOURCE="PD_NODE_IPS"
    IFS=',' read -r -a NODE_IPS <<<"$PD_NODE_IPS"
elif [[ -n ${PD_HOSTFILE:-} ]]; then
    SOURCE="hostfile $PD_HOSTFILE"
    [[ -r $PD_HOSTFILE ]] || die "PD_HOSTFILE '$PD_HOSTFILE' is not readable"
    mapfile -t NODE_IPS < <(awk '!/^[[:space:]]*(#|$)/ {print $1}' "$PD_HOSTFILE")
elif [[ -n ${RANK_TABLE_FILE:-} ]]; then
    SOURCE="rank table $RANK_TABLE_FILE"
    [[ -r $RANK_TABLE_FILE ]] || die "RANK_TABLE_FILE '$RANK_TABLE_FILE' is not readable"
    table_ips=$(python3 - "$RANK_TABLE_FILE" <<'PY'
import json
import sys

with open(sys.argv[1]) as f:
    table = json.load(f)
servers = table.get("server_list") or []
if not servers:
    sys.exit("no server_list in " + sys.argv[1])
for server in servers:
    addr = server.get("host_ip") or server.get("container_ip") or server.get("server_id")
    if not addr:
        sys.exit("a server has no host_ip, container_ip or server_id in " + sys.argv[1])
    print(addr)
PY
    ) || die "cannot read the server_list of rank table '$RANK_TABLE_FILE'"
    mapfile -t NODE_IPS <<<"$table_ips"
elif [[ -n ${VC_WORKER_HOSTS:-} ]]; then
    SOURCE="ModelArts VC_WORKER_HOSTS"
    IFS=',' read -r -a worker_hosts <<<"$VC_WORKER_HOSTS"
    for h in "${worker_hosts[@]}"; do
        NODE_NAMES+=("$h")
        addr=$(resolve_host "$h") || exit 1
        NODE_IPS+=("$addr")
    done
    NODE_INDEX=${NODE_INDEX:-${VC_TASK_INDEX:-}}
elif [[ -n ${LWS_LEADER_ADDRESS:-} && -n ${PD_K8S_NODE_HOSTS:-} ]]; then
    # One LeaderWorkerSet per engine (this layout's k8s/ manifests): a pod knows
    # only its own group, so the manifest adds every node's pod DNS name (node
    # order) and this engine's first node and node count.
    SOURCE="LeaderWorkerSet (PD_K8S_NODE_HOSTS)"
    for v in LWS_GROUP_SIZE LWS_WORKER_INDEX PD_K8S_FIRST_NODE PD_K8S_ENGINE_NODES; do
        is_uint "${!v:-}" || die "$v must be a number on a pod of this layout's LeaderWorkerSets, got '${!v:-}'"
    done
    ((LWS_GROUP_SIZE == PD_K8S_ENGINE_NODES)) || die "LWS_GROUP_SIZE is $LWS_GROUP_SIZE, but this engine runs on $PD_K8S_ENGINE_NODES node(s): the LeaderWorkerSet's size must be the engine's node count"
    ((LWS_WORKER_INDEX < LWS_GROUP_SIZE)) || die "LWS_WORKER_INDEX $LWS_WORKER_INDEX is not in [0, $LWS_GROUP_SIZE)"
    IFS=',' read -r -a node_hosts <<<"$PD_K8S_NODE_HOSTS"
    ((PD_K8S_FIRST_NODE + LWS_GROUP_SIZE <= ${#node_hosts[@]})) || die "PD_K8S_NODE_HOSTS names ${#node_hosts[@]} node(s), fewer than this engine's nodes $PD_K8S_FIRST_NODE..$((PD_K8S_FIRST_NODE + LWS_GROUP_SIZE - 1))"
    leader_host=${node_hosts[$PD_K8S_FIRST_NODE]}
    [[ ${LWS_LEADER_ADDRESS%%.*} == "${leader_host%%.*}" ]] || die "LWS_LEADER_ADDRESS is '$LWS_LEADER_ADDRESS', expected the pod '${leader_host%%.*}' (node $PD_K8S_FIRST_NODE): PD_K8S_* belong to another LeaderWorkerSet"
    for h in "${node_hosts[@]}"; do
        NODE_NAMES+=("$h")
        await_pod_host "$h"
        NODE_IPS+=("$addr")
    done
    NODE_INDEX=${NODE_INDEX:-$((PD_K8S_FIRST_NODE + LWS_WORKER_INDEX))}
    # The proxy runs as its own Deployment (k8s/proxy-deployment.yaml), not on node 0.
    HAS_PROXY=0
elif [[ -n ${LWS_LEADER_ADDRESS:-} ]]; then
    SOURCE="LeaderWorkerSet"
    is_uint "${LWS_GROUP_SIZE:-}" || die "LWS_GROUP_SIZE must be set with LWS_LEADER_ADDRESS"
    # Worker i of a LeaderWorkerSet group is <leader>-<i> in the leader's domain.
    leader=${LWS_LEADER_ADDRESS%%.*}
    domain=${LWS_LEADER_ADDRESS#"$leader"}
    for ((i = 0; i < LWS_GROUP_SIZE; i++)); do
        h=$LWS_LEADER_ADDRESS
        if ((i > 0)); then h="$leader-$i$domain"; fi
        NODE_NAMES+=("$h")
        await_pod_host "$h"
        NODE_IPS+=("$addr")
    done
    NODE_INDEX=${NODE_INDEX:-${LWS_WORKER_INDEX:-}}
{%- if m.node_count == 1 %}
else
    # A single-node layout: this host is node 0, at PD_LOCAL_IP or its first
    # address that is not loopback or link-local.
    SOURCE="this host (a single-node layout)"
    # awk reads every line (no early exit: pipefail would fail the writer).
    addr=${PD_LOCAL_IP:-$(local_addresses | awk '!/^(127\.|::1$|fe80:)/ && !found { print; found = 1 }')}
    [[ -n $addr ]] || die "a single-node layout runs on this host, but it has no address besides loopback and link-local ones: set PD_LOCAL_IP"
    NODE_IPS=("$addr")
    NODE_INDEX=${NODE_INDEX:-0}
{%- else %}
else
    die "cannot tell this node's index and the node IPs: set PD_NODE_INDEX and PD_NODE_IPS (comma-separated, node order), or PD_HOSTFILE, RANK_TABLE_FILE, ModelArts VC_TASK_INDEX/VC_WORKER_HOSTS, or LeaderWorkerSet LWS_WORKER_INDEX/LWS_LEADER_ADDRESS/LWS_GROUP_SIZE"
{%- endif %}
fi

if [[ ${#NODE_IPS[@]} -ne $NODE_COUNT ]]; then
    die "layout $LAYOUT runs on $NODE_COUNT nodes, but $SOURCE lists ${#NODE_IPS[@]}: ${NODE_IPS[*]}"
fi
# Every entry trimmed, then an IPv4 or IPv6 address, or a host name that resolves.
for i in "${!NODE_IPS[@]}"; do
    entry=${NODE_IPS[$i]}
    entry=${entry#"${entry%%[![:space:]]*}"}
    entry=${entry%"${entry##*[![:space:]]}"}
    [[ -n $entry ]] || die "node $i has an empty address in $SOURCE"
    NODE_NAMES+=("$entry")
    if is_ipv4 "$entry"; then
        :
    elif [[ $entry == *:* ]]; then
        [[ $entry =~ ^[0-9A-Fa-f:.]+$ ]] || die "node $i's address '$entry' in $SOURCE is not an IPv6 address"
    elif [[ $entry =~ ^[0-9.]+$ ]]; then
        die "node $i's address '$entry' in $SOURCE is not an IPv4 address (four numbers 0-255)"
    elif [[ $entry =~ ^[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?$ ]]; then
        addr=$(getent hosts "$entry" | awk 'NR == 1 {print $1}') || true
        if [[ -n $addr ]]; then
            entry=$addr
        elif [[ ${PD_DRY_RUN:-0} == 1 ]]; then
            log "warning: cannot resolve node $i's host '$entry' in $SOURCE (getent hosts); a real start stops here"
        else
            die "cannot resolve node $i's host '$entry' in $SOURCE (getent hosts)"
        fi
    else
        die "node $i's address '$entry' in $SOURCE is not an IP address or host name"
    fi
    NODE_IPS[i]=$entry
done
for i in "${!NODE_IPS[@]}"; do
    for ((j = i + 1; j < ${#NODE_IPS[@]}; j++)); do
        [[ ${NODE_IPS[$i]} != "${NODE_IPS[$j]}" ]] || die "nodes $i and $j have the same address ${NODE_IPS[$i]} in $SOURCE"
    done
done
# Every node by address and name: health polls, the proxy and vLLM's own HTTP
# calls (the layerwise connector calls the proxy back) bypass HTTP proxies.
bypass_proxy "${NODE_IPS[@]}" "${NODE_NAMES[@]}"
if [[ -z $NODE_INDEX ]]; then
    NODE_INDEX=$(find_own_index) || die "this host is none of ${NODE_IPS[*]} ($SOURCE); set PD_NODE_INDEX"
fi
if ! is_uint "$NODE_INDEX" || ((NODE_INDEX >= NODE_COUNT)); then
    die "node index '$NODE_INDEX' is not in [0, $NODE_COUNT)"
fi

# Per-node facts, derived from the layout's placement.
case $NODE_INDEX in
{% for (n, row) in m.nodes() %}    {{ n.index }}) ROLE={{ n.role.as_str() }} ENGINE={{ n.engine }} DP_SIZE={{ n.dp_size }} TP_SIZE={{ n.tp_size }}{% if m.has_pcp() %} PCP_SIZE={{ n.pcp_size }}{% endif %} DP_SIZE_LOCAL={{ n.dp_size_local }} DP_RANK_START={{ n.dp_rank_start }} DP_MASTER_NODE={{ n.dp_master }}{% if m.is_pd %} ENGINE_ID={{ n.engine_id|or_empty }} KV_PORT={{ n.kv_port|or_empty }} API_START_PORT={{ row.api_start_port }}{% if !m.uniform_dp_rpc_port %} DP_RPC_PORT={{ row.dp_rpc_port|or_empty }}{% endif %}{% else %} HEADLESS={{ n.headless|bit }}{% endif %} ;;
{% endfor %}    *) die "node index $NODE_INDEX is not in [0, $NODE_COUNT)" ;;
esac
{% if m.is_pd %}export ENGINE_ID KV_PORT
{% endif %}{% if m.has_node_settings() %}# Nodes with their own settings (the layout's `nodes:`): the rank scripts pick this node's.
export PD_NODE=$NODE_INDEX
{% endif %}{% if m.is_pd %}
# The proxy (node 0), restarted at most PD_PROXY_RESTARTS times; then this node stops, naming the cause.
# shellcheck disable=SC2317  # reached through the trap
supervise_proxy() {
    local attempt=0 rc child='' cause start
    trap '[[ -z $child ]] || kill -TERM "$child" 2>/dev/null; wait; exit 143' TERM INT HUP
    while :; do
        start=$(stat -c %s "$LOG_DIR/proxy.log" 2>/dev/null || echo 0)
        "$HERE/proxy.sh" >>"$LOG_DIR/proxy.log" 2>&1 &
        child=$!
        rc=0
        wait "$child" || rc=$?
        # This attempt's last lines only.
        cause=$(tail -c "+$((start + 1))" "$LOG_DIR/proxy.log" 2>/dev/null | tail -n 3 | tr '\n' ' ')
        if ((attempt >= PROXY_RESTARTS)); then
            log "error: the proxy exited with code $rc, restarted $attempt time(s); stopping node 0. Its last output: ${cause:-none} (log: $LOG_DIR/proxy.log)"
            exit 1
        fi
        attempt=$((attempt + 1))
        log "warning: the proxy exited with code $rc (${cause:-no output}); restart $attempt of $PROXY_RESTARTS in $((2 * attempt))s"
        sleep $((2 * attempt)) &
        child=$!
        wait "$child" || true
    done
}

# This node's launcher command (printed as is by PD_DRY_RUN=1).
define_commands() {
    NODE_COMMAND=(python3 "$HERE/launch_online_dp.py"
        --dp-size "$DP_SIZE"
        --tp-size {% if m.has_pcp() %}"$((TP_SIZE * PCP_SIZE))"{% else %}"$TP_SIZE"{% endif %}
        --dp-size-local "$DP_SIZE_LOCAL"
        --dp-rank-start "$DP_RANK_START"
        --dp-address "$MASTER_IP"
        --dp-rpc-port "$DP_RPC_PORT"
        --vllm-start-port "$API_START_PORT"
        --template "$HERE/run_dp_template_$ROLE.sh"
        --log-dir "$LOG_DIR")
    # A draining rank gets its drain before the launcher's SIGKILL.
    if ((DRAIN_SECONDS > 0)); then
        NODE_COMMAND+=(--grace-seconds "$((DRAIN_SECONDS + {{ m.launcher_grace }}))")
    fi
}
{% else %}
# This node's command (printed as is by PD_DRY_RUN=1).
define_commands() {
    NODE_COMMAND=("$HERE/run_mixed.sh" "$DP_SIZE_LOCAL" "$DP_RANK_START" "$MASTER_IP" "$HEADLESS")
}
{% endif %}
# 2. Local IP and NIC: the route to this engine's DP master (overridable; on
#    Kubernetes PD_LOCAL_IP is the pod IP, from the downward API).
MASTER_IP=${NODE_IPS[$DP_MASTER_NODE]}
if [[ -z ${PD_LOCAL_IP:-} || -z ${PD_NIC:-} ]] && ! command -v ip >/dev/null 2>&1 && ! command -v python3 >/dev/null 2>&1; then
    die "neither ip (iproute2) nor python3 is installed: one of them finds this node's IP and NIC; install python3, or set PD_LOCAL_IP and PD_NIC"
fi
if [[ -n ${PD_LOCAL_IP:-} ]]; then
    LOCAL_IP=$PD_LOCAL_IP
    ip_from="PD_LOCAL_IP"
else
    LOCAL_IP=$(source_ip "$MASTER_IP" 2>/dev/null) || LOCAL_IP=''
    [[ -n $LOCAL_IP ]] || die "no route to the DP master $MASTER_IP (source address by $(net_tool)); set PD_LOCAL_IP and PD_NIC"
    ip_from="the route to the DP master $MASTER_IP, by $(net_tool)"
fi
if [[ -n ${PD_NIC:-} ]]; then
    NIC=$PD_NIC
    nic_from="PD_NIC"
else
    NIC=$(addr_table 2>/dev/null | awk -v want="$LOCAL_IP" '$2 == want && nic == "" {nic = $1} END {print nic}')
    [[ -n $NIC ]] || die "cannot find the interface holding $LOCAL_IP (addresses by $(net_tool)); set PD_NIC"
    nic_from="the interface holding $LOCAL_IP, by $(net_tool)"
fi
log "node $NODE_INDEX: local IP $LOCAL_IP ($ip_from), NIC $NIC ($nic_from)"
# The node index must name this host: a wrong index starts the wrong ranks.
own=0
[[ $LOCAL_IP != "${NODE_IPS[$NODE_INDEX]}" ]] || own=1
if ((!own)); then
    while read -r addr; do
        [[ $addr != "${NODE_IPS[$NODE_INDEX]}" ]] || own=1
    done < <(local_addresses)
fi
if ((!own)); then
    if guess=$(find_own_index); then
        hint="this host is node $guess (${NODE_IPS[$guess]})"
    else
        hint="this host has none of the listed addresses"
    fi
    if [[ ${PD_FORCE_NODE_INDEX:-0} == 1 ]]; then
        log "warning: node index $NODE_INDEX names ${NODE_IPS[$NODE_INDEX]}, not an address of this host (local IP $LOCAL_IP; $hint); going on because PD_FORCE_NODE_INDEX=1"
    else
        die "node index $NODE_INDEX names ${NODE_IPS[$NODE_INDEX]}, which is not an address of this host (local IP $LOCAL_IP; $hint): fix PD_NODE_INDEX, or set PD_FORCE_NODE_INDEX=1 when the listed address reaches this host through NAT"
    fi
fi
export HCCL_IF_IP=$LOCAL_IP
export GLOO_SOCKET_IFNAME=$NIC
export TP_SOCKET_IFNAME=$NIC
export HCCL_SOCKET_IFNAME=$NIC
export PD_NODE_INDEX=$NODE_INDEX
PD_NODE_IPS=$(IFS=,; echo "${NODE_IPS[*]}")
export PD_NODE_IPS

# What this node runs; PD_DRY_RUN=1 prints it and starts nothing.
LOG_BASE=${PD_LOG_DIR:-/var/log/pd-dsl/$LAYOUT}
LOG_DIR="$LOG_BASE/node$NODE_INDEX"
# PD_DRAIN_SECONDS (the Kubernetes pods set it): a stopped rank finishes its
# in-flight requests for up to that long{% if m.drain_flag %} (vLLM's --shutdown-timeout){% else %}; this image's vLLM has no
# --shutdown-timeout, so its ranks abort them{% endif %}.
DRAIN_SECONDS=${PD_DRAIN_SECONDS:-0}
is_uint "$DRAIN_SECONDS" || die "PD_DRAIN_SECONDS must be a number of seconds, got '$DRAIN_SECONDS'"
define_commands
{%- include "sh/kv_pool.sh" %}
if [[ ${PD_DRY_RUN:-0} == 1 ]]; then
    if [[ -n ${ENGINE_ID:-} ]]; then
        echo "run.sh: node $NODE_INDEX exports ENGINE_ID=$ENGINE_ID KV_PORT=$KV_PORT"
    fi
    echo "run.sh: node $NODE_INDEX bypasses HTTP proxies for NO_PROXY=$NO_PROXY"
{% if let Some(pool) = m.pool %}    echo "run.sh: node $NODE_INDEX writes the $POOL_BACKEND pool config into $POOL_DIR and exports {{ pool.config_env|ident }}=${{ pool.config_env|ident }}"
    pool_config "" || die "cannot render the $POOL_BACKEND pool config"
    if ((NODE_INDEX == 0)); then
{% if let Some(var) = pool.service_env %}        echo "run.sh: node 0 pool service env: {{ var|ident }}=$POOL_DIR/mmc-meta.conf"
{% else %}        echo "run.sh: node 0 pool service env: LD_LIBRARY_PATH="{{ pool.library_paths }}
{% endif %}        printf 'run.sh: node 0 would run the %s pool service:' "$POOL_BACKEND"
        printf ' %q' "${POOL_SERVICE[@]}"
        echo
    fi
{% endif %}    printf 'run.sh: node %s would run:' "$NODE_INDEX"
    printf ' %q' "${NODE_COMMAND[@]}"
    echo
{% if m.is_pd %}    # Each rank's template as the launcher starts it, printing its env and
    # `vllm serve` command instead of running it.
    "${NODE_COMMAND[@]}" --dry-run-templates || die "the dry run of node $NODE_INDEX's ranks failed (above)"
{% else %}    PD_DRY_RUN=1 "${NODE_COMMAND[@]}" || die "the dry run of $HERE/run_mixed.sh failed"
{% endif %}    if ((NODE_INDEX == 0 && HAS_PROXY)); then
        PD_DRY_RUN=1 "$HERE/proxy.sh"
    fi
    exit 0
fi

# 3. Preflight (skip a check only with PD_SKIP_PREFLIGHT=name,...).
"$HERE/preflight.sh" "$NODE_INDEX" || die "preflight failed on node $NODE_INDEX"

mkdir -p "$LOG_DIR" || die "cannot create log directory $LOG_DIR"
# PD_LOG_STDOUT=1 (the Kubernetes pods set it): follow this node's logs on
# stdout too, so `kubectl logs` shows the ranks. tail runs detached (not a
# job of this shell, so the waits below never wait for it).
TAIL_PID=
if [[ ${PD_LOG_STDOUT:-0} == 1 ]]; then
    follow=()
    for ((r = DP_RANK_START; r < DP_RANK_START + DP_SIZE_LOCAL; r++)); do follow+=("$LOG_DIR/rank$r.log"); done
    if ((NODE_INDEX == 0)); then follow+=("$LOG_DIR/proxy.log" "$LOG_DIR/kv-pool.log"); fi
    exec 3>&1
    TAIL_PID=$(tail -n 0 -F "${follow[@]}" >&3 2>/dev/null </dev/null & echo "$!")
    exec 3>&-
    log "node $NODE_INDEX follows ${#follow[@]} log file(s) of $LOG_DIR on stdout"
fi
WAIT_SECONDS=${PD_WAIT_SECONDS:-{{ m.wait_seconds }}}
is_uint "$WAIT_SECONDS" || die "PD_WAIT_SECONDS must be a number of seconds, got '$WAIT_SECONDS'"
POLL_SECONDS=${PD_POLL_SECONDS:-10}
[[ $POLL_SECONDS =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "PD_POLL_SECONDS must be a number of seconds, got '$POLL_SECONDS'"
command -v curl >/dev/null 2>&1 || command -v python3 >/dev/null 2>&1 || die "neither curl nor python3 is installed: one of them polls /health; install python3"
log "node $NODE_INDEX polls /health with $(http_client)"

# Records for stop.sh: this script's pid and a run id every process it starts inherits.
if [[ -s $LOG_DIR/run.pid ]]; then
    other=$(<"$LOG_DIR/run.pid")
    if is_uint "$other" && [[ $other != "$$" ]] && kill -0 "$other" 2>/dev/null \
        && [[ $(tr '\0' ' ' <"/proc/$other/cmdline" 2>/dev/null) == *run.sh* ]]; then
        die "run.sh is already running on node $NODE_INDEX (pid $other); stop it first with ./stop.sh $NODE_INDEX"
    fi
fi
PD_RUN_ID="$LAYOUT/node$NODE_INDEX/$$-$RANDOM$RANDOM"
export PD_RUN_ID
printf '%s\n' "$$" >"$LOG_DIR/run.pid"
printf '%s\n' "$PD_RUN_ID" >"$LOG_DIR/run.id"
# stop.sh waits this drain (and the launcher's grace) before it SIGKILLs.
printf '%s\n' "$DRAIN_SECONDS" >"$LOG_DIR/run.drain"
cleanup() {
    rm -f "$LOG_DIR/run.pid" "$LOG_DIR/run.id" "$LOG_DIR/run.drain"
    if [[ -n $TAIL_PID ]]; then kill "$TAIL_PID" 2>/dev/null || true; fi
    # Node 0 no longer serves: verify.sh must not trust the old URL.
    if ((NODE_INDEX == 0)); then rm -f "$LOG_BASE/endpoint.url"; fi
}

# HUP (a dropped SSH session or `docker exec -it`), TERM and INT stop every rank of this node.
# shellcheck disable=SC2317  # reached through the traps below
stop() {
    trap - HUP TERM INT
    log "received SIG$1; stopping node $NODE_INDEX"
    kill -TERM "${PIDS[@]}" 2>/dev/null || true
    wait || true
    cleanup
    exit "$2"
}
trap 'stop HUP 129' HUP
trap 'stop TERM 143' TERM
trap 'stop INT 130' INT

# Polls URL until it answers (strict: -f, an HTTP status below 400 only), the last started process exits, or WAIT_SECONDS pass.
wait_http() {
    local url=$1 what=$2 strict=$3 deadline=$((SECONDS + WAIT_SECONDS)) opts=(-sS -o /dev/null --connect-timeout 3 -m 5)
    if ((strict)); then opts+=(-f); fi
    until http_request "${opts[@]}" "$url" 2>/dev/null; do
        kill -0 "${PIDS[-1]}" 2>/dev/null || return 1
        ((SECONDS < deadline)) || die "timed out after ${WAIT_SECONDS}s waiting for $what at $url"
        sleep "$POLL_SECONDS"
    done
}

# The URL verify.sh and bench.sh use, recorded on node 0 once it answers.
record_url() {
    printf '%s\n' "$1" >"$LOG_BASE/endpoint.url" || log "warning: cannot write $LOG_BASE/endpoint.url"
    log "ready: $2 answers on $1 (recorded in $LOG_BASE/endpoint.url; ./verify.sh and ./bench.sh use it)"
}
{% if m.pool.is_some() %}
# 3b. The KV pool: this node's config, the service on node 0, then wait for it.
pool_config "$POOL_DIR" || die "cannot write the $POOL_BACKEND pool config into $POOL_DIR"
log "node $NODE_INDEX: wrote the $POOL_BACKEND pool config into $POOL_DIR"
if ((NODE_INDEX == 0)); then
    log "node 0: starting the $POOL_BACKEND pool service on ports ${POOL_PORTS[*]} (log: $LOG_DIR/kv-pool.log)"
    pool_service >>"$LOG_DIR/kv-pool.log" 2>&1 &
    PIDS+=("$!")
fi
wait_pool
log "node $NODE_INDEX: the $POOL_BACKEND pool service answers on ${NODE_IPS[0]} (${POOL_PORTS[*]})"
{% endif %}{% if m.is_pd %}
# 4. This node's ranks, one `vllm serve` each, through the fail-fast launcher.
log "node $NODE_INDEX: $ROLE engine $ENGINE, DP ranks $DP_RANK_START..$((DP_RANK_START + DP_SIZE_LOCAL - 1)) of $DP_SIZE, DP master $MASTER_IP, engine_id $ENGINE_ID, kv_port $KV_PORT, logs in $LOG_DIR"
"${NODE_COMMAND[@]}" &
LAUNCHER_PID=$!
PIDS+=("$LAUNCHER_PID")

# 5. Node 0: wait until every rank answers /health, then start the proxy.
if ((NODE_INDEX == 0 && HAS_PROXY)); then
    # Every rank as node:port, in proxy order.
    ENDPOINTS=({{ m.endpoints|wrap(15) }})
    deadline=$((SECONDS + WAIT_SECONDS))
    while :; do
        down=()
        for ep in "${ENDPOINTS[@]}"; do
            host=${NODE_IPS[${ep%%:*}]}
            port=${ep#*:}
            http_request -fsS --connect-timeout 3 -m 5 -o /dev/null "http://$host:$port/health" 2>/dev/null || down+=("$host:$port")
        done
        if ((${#down[@]} == 0)); then
            break
        fi
        if ! kill -0 "$LAUNCHER_PID" 2>/dev/null; then
            rc=0
            wait "$LAUNCHER_PID" || rc=$?
            die "the launcher exited with code $rc before every endpoint was up (see $LOG_DIR)"
        fi
        if ((SECONDS >= deadline)); then
            die "timed out after ${WAIT_SECONDS}s waiting for /health; ${#down[@]} endpoint(s) still down: ${down[*]}"
        fi
        log "waiting for ${#down[@]} of ${#ENDPOINTS[@]} endpoint(s): ${down[*]:0:4}..."
        sleep "$POLL_SECONDS"
    done
    log "all ${#ENDPOINTS[@]} endpoints answer /health; starting the proxy (log: $LOG_DIR/proxy.log)"
    PROXY_RESTARTS=${PD_PROXY_RESTARTS:-3}
    is_uint "$PROXY_RESTARTS" || die "PD_PROXY_RESTARTS must be a number, got '$PROXY_RESTARTS'"
    supervise_proxy &
    PIDS+=("$!")
    proxy_host=${PD_PROXY_HOST:-${NODE_IPS[0]}}
    case $proxy_host in 0.0.0.0 | :: | 0:0:0:0:0:0:0:0) proxy_host=${NODE_IPS[0]} ;; esac
    if [[ $proxy_host == *:* ]]; then proxy_host="[$proxy_host]"; fi
    PROXY_URL="http://$proxy_host:$PROXY_PORT"
    if wait_http "$PROXY_URL/healthcheck" "the proxy" 0; then
        record_url "$PROXY_URL" "the proxy"
    fi
fi
{% else %}
# 4. This node's share of the engine: one `vllm serve` with native DP.
LOG="$LOG_DIR/rank$DP_RANK_START.log"
log "node $NODE_INDEX: $ROLE engine $ENGINE (TP $TP_SIZE{% if m.has_pcp() %} x PCP $PCP_SIZE{% endif %}), DP ranks $DP_RANK_START..$((DP_RANK_START + DP_SIZE_LOCAL - 1)) of $DP_SIZE, DP master $MASTER_IP, log $LOG"
"${NODE_COMMAND[@]}" >>"$LOG" 2>&1 &
PIDS+=("$!")

# 5. Node 0 serves the API: wait for its /health, then say it is ready.
if ((NODE_INDEX == 0)); then
    API_URL="http://${NODE_IPS[0]}:$API_PORT"
    if [[ ${NODE_IPS[0]} == *:* ]]; then API_URL="http://[${NODE_IPS[0]}]:$API_PORT"; fi
    if wait_http "$API_URL/health" "the API server" 1; then
        record_url "$API_URL" "the API server"
    fi
fi
{% endif %}
# Fail fast: when any started process exits, stop the others.
rc=0
wait -n || rc=$?
log "a process of node $NODE_INDEX exited with code $rc; stopping the rest"
kill -TERM "${PIDS[@]}" 2>/dev/null || true
wait || true
cleanup
others
if ((rc == 0)); then rc=1; fi
exit "$rc"
