{% include "sh/header.sh" %}
{% if let Some(proxy) = m.proxy %}# Runs the image's {{ proxy.file|comment }} on node 0 (run.sh starts it).
# Needs PD_NODE_IPS (comma-separated, node order; run.sh exports it).
# Overrides: PD_PROXY_SCRIPT (script path), PD_PROXY_HOST (listen address).
set -euo pipefail

die() { echo "proxy.sh: error: $*" >&2; exit 1; }

NODE_COUNT={{ m.node_count }}
PROXY_PORT={{ proxy.port }}
{% include "sh/proxy_script.sh" %}
[[ -n ${PD_NODE_IPS:-} ]] || die "set PD_NODE_IPS to the node IPs (comma-separated, node order)"
IFS=',' read -r -a NODE_IPS <<<"$PD_NODE_IPS"
[[ ${#NODE_IPS[@]} -eq $NODE_COUNT ]] || die "expected $NODE_COUNT node IPs in PD_NODE_IPS, got ${#NODE_IPS[@]}"
PROXY_HOST=${PD_PROXY_HOST:-${NODE_IPS[0]}}
{% include "sh/no_proxy.sh" %}
# The proxy's httpx reaches every rank directly.
bypass_proxy "${NODE_IPS[@]}"
{% if proxy.layerwise %}# The layerwise proxy rejects wildcard hosts: decode nodes call back /v1/metaserver on it.
case $PROXY_HOST in
    0.0.0.0 | :: | 0:0:0:0:0:0:0:0) die "the layerwise proxy needs a reachable --host, not $PROXY_HOST" ;;
esac
{% endif %}
# Every rank exactly once, in node order: node index, then API port.
PREFILL_NODES=({{ proxy.prefill_nodes|wrap(15) }})
PREFILL_PORTS=({{ proxy.prefill_ports|wrap(15) }})
DECODE_NODES=({{ proxy.decode_nodes|wrap(14) }})
DECODE_PORTS=({{ proxy.decode_ports|wrap(14) }})

PREFILL_HOSTS=()
for n in "${PREFILL_NODES[@]}"; do PREFILL_HOSTS+=("${NODE_IPS[$n]}"); done
DECODE_HOSTS=()
for n in "${DECODE_NODES[@]}"; do DECODE_HOSTS+=("${NODE_IPS[$n]}"); done

PROXY_COMMAND=(python3 "$PROXY_SCRIPT"
    --host "$PROXY_HOST"
    --port "$PROXY_PORT"
    --prefiller-hosts "${PREFILL_HOSTS[@]}"
    --prefiller-ports "${PREFILL_PORTS[@]}"
    --decoder-hosts "${DECODE_HOSTS[@]}"
    --decoder-ports "${DECODE_PORTS[@]}")
if [[ ${PD_DRY_RUN:-0} == 1 ]]; then
    echo "proxy.sh: bypasses HTTP proxies for NO_PROXY=$NO_PROXY"
    printf 'proxy.sh: would run:'
    printf ' %q' "${PROXY_COMMAND[@]}"
    echo
    exit 0
fi
[[ -f $PROXY_SCRIPT ]] || die "proxy script $PROXY_SCRIPT not found; set PD_PROXY_SCRIPT"
exec "${PROXY_COMMAND[@]}"
{% else %}# Mixed layout: no proxy.
exit 0
{% endif %}