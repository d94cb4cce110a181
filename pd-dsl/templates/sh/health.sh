{% include "sh/header.sh" %}
# health.sh PORT...: exits 0 when every given API port of this host answers
# /health with a 2xx, else 1 (2 for a bad argument). The Kubernetes probes
# run it with the pod's ports; on a bare-metal node, `./health.sh 7100`.
# PD_HEALTH_HOST: the address to ask (default 127.0.0.1: the ranks listen on all).
set -euo pipefail
{% include "sh/http.sh" %}
if (($# == 0)); then
    echo "usage: $0 PORT... (the API ports to check on this host)" >&2
    exit 2
fi
for port in "$@"; do
    if ! [[ $port =~ ^[0-9]+$ ]] || ((port < 1 || port > 65535)); then
        echo "$0: found '$port', expected a port number (1-65535)" >&2
        exit 2
    fi
done
for port in "$@"; do
    http_request -fsS --connect-timeout 1 -m 2 -o /dev/null "http://${PD_HEALTH_HOST:-127.0.0.1}:$port/health" || exit 1
done
