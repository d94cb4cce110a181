{% include "sh/header.sh" %}
# Stops this node of the layout: run.sh, every rank (by its process group) and the proxy; idempotent.
# Usage: stop.sh [NODE_INDEX]  (default PD_NODE_INDEX, else the one node with records under PD_LOG_DIR)
# Overrides: PD_LOG_DIR (as run.sh), PD_STOP_GRACE (seconds before SIGKILL; default 30, plus the
# run's PD_DRAIN_SECONDS and the launcher's {{ m.launcher_grace }} s grace when the run drains).
set -euo pipefail

LAYOUT={{ m.view.name }}
NODE_COUNT={{ m.node_count }}

die() { echo "stop.sh: error: $*" >&2; exit 1; }
log() { echo "stop.sh: $*" >&2; }
is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }
LOG_BASE=${PD_LOG_DIR:-/var/log/pd-dsl/$LAYOUT}
NODE_INDEX=${1:-${PD_NODE_INDEX:-}}
if [[ -z $NODE_INDEX ]]; then
    # The one node of this host that has records.
    mapfile -t found < <(for f in "$LOG_BASE"/node*/run.pid; do [[ -e $f ]] && basename "$(dirname "$f")"; done)
    case ${#found[@]} in
        0) echo "stop.sh: nothing running: no run.pid under $LOG_BASE"; exit 0 ;;
        1) NODE_INDEX=${found[0]#node} ;;
        *) die "${#found[@]} nodes have records under $LOG_BASE (${found[*]}); name one: ./stop.sh NODE_INDEX" ;;
    esac
fi
if ! is_uint "$NODE_INDEX" || ((NODE_INDEX >= NODE_COUNT)); then
    die "node index '$NODE_INDEX' is not in [0, $NODE_COUNT)"
fi
DIR="$LOG_BASE/node$NODE_INDEX"
# The run's drain (run.sh records PD_DRAIN_SECONDS): its ranks may answer
# in-flight requests that long, and the launcher waits {{ m.launcher_grace }} s more before
# it SIGKILLs them; stop.sh must not cut that short.
DRAIN=0
if [[ -s $DIR/run.drain ]]; then DRAIN=$(<"$DIR/run.drain"); fi
is_uint "$DRAIN" || DRAIN=0
GRACE=${PD_STOP_GRACE:-$((30 + (DRAIN > 0 ? DRAIN + {{ m.launcher_grace }} : 0)))}
is_uint "$GRACE" || die "PD_STOP_GRACE must be a number of seconds, got '$GRACE'"

# This node's ports, derived from the layout's placement.
case $NODE_INDEX in
{% for (n, row) in m.nodes() %}    {{ n.index }}) PORT_LIST={{ row.free_ports }} ;;
{% endfor %}    *) die "node index $NODE_INDEX is not in [0, $NODE_COUNT)" ;;
esac

{% include "sh/busy_ports.sh" %}

# Processes of this run: they carry PD_RUN_ID=<the recorded id> in their environment.
run_id=''
[[ -s $DIR/run.id ]] && run_id=$(<"$DIR/run.id")
of_run() {
    local f pid
    [[ -n $run_id ]] || return 0
    for f in /proc/[0-9]*/environ; do
        pid=${f#/proc/}
        pid=${pid%/environ}
        [[ $pid != "$$" ]] || continue
        if grep -qzxF "PD_RUN_ID=$run_id" "$f" 2>/dev/null; then echo "$pid"; fi
    done
}
alive() { [[ -n $(of_run) ]]; }

stopped=()
# 1. run.sh (it exports PD_RUN_ID after it starts, so it is known by its command line):
#    its trap stops the launcher (which stops every rank) and the proxy.
if [[ -s $DIR/run.pid ]]; then
    pid=$(<"$DIR/run.pid")
    if is_uint "$pid" && [[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) == *run.sh* ]]; then
        kill -TERM "$pid" 2>/dev/null && stopped+=("run.sh (pid $pid)")
    fi
fi
# 2. Every rank's process group, also when the launcher is gone.
for f in "$DIR"/rank*.pgid; do
    [[ -e $f ]] || continue
    pgid=$(<"$f")
    r=${f##*/rank}
    r=${r%.pgid}
    if is_uint "$pgid" && grep -qzxF "PD_RUN_ID=$run_id" "/proc/$pgid/environ" 2>/dev/null; then
        kill -TERM -- "-$pgid" 2>/dev/null && stopped+=("rank $r (process group $pgid)")
    fi
done
if ((${#stopped[@]} == 0)) && ! alive; then
    rm -f "$DIR/run.pid" "$DIR/run.id" "$DIR/run.drain" "$DIR"/rank*.pgid
    echo "stop.sh: node $NODE_INDEX: nothing running (records in $DIR)"
    exit 0
fi
if ((${#stopped[@]})); then
    log "node $NODE_INDEX: SIGTERM to ${stopped[*]:0:3}$( ((${#stopped[@]} > 3)) && echo " and $((${#stopped[@]} - 3)) more"); SIGKILL after ${GRACE}s$( ((DRAIN > 0)) && echo " (drain ${DRAIN}s)")"
fi
# 3. Wait, then SIGKILL whatever of this run is left.
deadline=$((SECONDS + GRACE))
while alive && ((SECONDS < deadline)); do sleep 0.5; done
mapfile -t left < <(of_run)
if ((${#left[@]})); then
    log "node $NODE_INDEX: ${#left[@]} process(es) still running after ${GRACE}s; sending SIGKILL: ${left[*]:0:8}"
    kill -KILL "${left[@]}" 2>/dev/null || true
    sleep 1
fi
mapfile -t left < <(of_run)
((${#left[@]} == 0)) || die "node $NODE_INDEX: cannot stop pid(s) ${left[*]} (run stop.sh as the user that started run.sh)"
rm -f "$DIR/run.pid" "$DIR/run.id" "$DIR/run.drain" "$DIR"/rank*.pgid
if ((NODE_INDEX == 0)); then rm -f "$LOG_BASE/endpoint.url"; fi
# 4. The node's ports must be free again.
read -r -a PORTS <<<"$PORT_LIST"
busy=''
for _ in 1 2 3 4 5 6 7 8 9 10; do
    busy=$(busy_ports) || die "cannot test the ports (python3 failed)"
    [[ -n $busy ]] || break
    sleep 1
done
[[ -z $busy ]] || die "node $NODE_INDEX stopped, but ports are still in use: $busy (another process holds them)"
if [[ -n $PORT_LIST ]]; then
    echo "stop.sh: node $NODE_INDEX stopped; ports $PORT_LIST are free"
else
    echo "stop.sh: node $NODE_INDEX stopped; it binds no port"
fi
