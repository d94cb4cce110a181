{% include "sh/header.sh" %}
# This node's share of the mixed engine (native DP); run.sh calls it.
# Usage: run_mixed.sh DP_SIZE_LOCAL DP_START_RANK DP_ADDRESS HEADLESS(0|1)
set -euo pipefail

if [[ $# -ne 4 ]]; then
    echo "usage: $0 DP_SIZE_LOCAL DP_START_RANK DP_ADDRESS HEADLESS (got $# arguments)" >&2
    exit 2
fi
{% include "sh/template_checks.sh" %}

export ASCEND_RT_VISIBLE_DEVICES={{ x.devices }}{% if !r.nodes.is_empty() %}{% include "sh/node_guard.sh" %}{% endif %}{% if !r.node_env_differs %}{% include "sh/env.sh" %}{% else %}
{% include "sh/node_env.sh" %}{% endif %}

{% if x.multi_node %}DP_ARGS=(--data-parallel-size {{ x.dp }} --data-parallel-size-local "$1" --data-parallel-address "$3"{% if let Some(rpc) = m.dp_rpc_port %} --data-parallel-rpc-port {{ rpc }}{% endif %})
# Every node passes --host/--port as upstream's commands do; only node 0 serves the API.
DP_ARGS=(--host 0.0.0.0 --port {{ m.api_port }} "${DP_ARGS[@]}")
if [[ $4 == 1 ]]; then
    # Non-first nodes run headless from their start rank.
    DP_ARGS=(--headless "${DP_ARGS[@]}" --data-parallel-start-rank "$2")
fi
{% else %}DP_ARGS=(--host 0.0.0.0 --port {{ m.api_port }} --data-parallel-size {{ x.dp }})
{% endif %}
{% include "sh/model_path.sh" %}
# Printed as is by PD_DRY_RUN=1 (serve.sh), with the env this node's ranks get.
WHO="DP ranks from $2 ($1 on this node)"
{% if r.nodes.is_empty() %}{% include "sh/mixed_serve.sh" %}
{% else %}case "$PD_NODE" in
{%- for n in r.nodes %}
{{ n.node }})
{%- let r = n %}
{% include "sh/mixed_serve.sh" %}
    ;;
{%- endfor %}
*)
{% include "sh/mixed_serve.sh" %}
    ;;
esac
{% endif %}{% include "sh/serve.sh" %}
