{% include "sh/header.sh" %}
# One {{ r.role.as_str()|comment }} DP rank; launch_online_dp.py runs one per rank on this node.
# Upstream contract (launch_online_dp.py): exactly 7 positional arguments
#   $1 devices  $2 API port  $3 DP size  $4 DP rank  $5 DP address  $6 DP RPC port  $7 TP size
# ENGINE_ID, KV_PORT, HCCL_IF_IP and the *_SOCKET_IFNAME variables come from run.sh.
set -euo pipefail

if [[ $# -ne 7 ]]; then
    echo "usage: $0 DEVICES PORT DP_SIZE DP_RANK DP_ADDRESS DP_RPC_PORT TP_SIZE (got $# arguments)" >&2
    exit 2
fi
for var in ENGINE_ID KV_PORT; do
    if ! [[ ${!var:-} =~ ^[0-9]+$ ]]; then
        echo "$0: $var must be an integer exported by run.sh, got '${!var:-}'" >&2
        exit 2
    fi
done
{% include "sh/template_checks.sh" %}
{%- let dp = r.dp %}{% let tp = r.tp %}{% let pcp = r.pcp %}{% if *pcp > 1 %}
# A rank is TP {{ tp }} x PCP {{ pcp }} = {{ tp * pcp }} NPUs (vllm/config/parallel.py world_size):
# run.sh gives launch_online_dp.py that count as its TP size, which arrives here as $7.
if [[ $7 != {{ tp * pcp }} ]]; then
    echo "$0: expected {{ tp * pcp }} NPUs per rank (TP {{ tp }} x PCP {{ pcp }}) as the 7th argument, got '$7'; start this node through run.sh" >&2
    exit 2
fi
{%- endif %}{% if *dp == 1 %}
# DP 1: no --data-parallel-rank, which turns on external load balancing and vLLM refuses that
# at DP 1 (vllm/config/parallel.py ParallelConfig._validate_parallel_config).
{%- endif %}

export ASCEND_RT_VISIBLE_DEVICES="$1"{% if !r.nodes.is_empty() %}{% include "sh/node_guard.sh" %}{% endif %}{% if !r.node_env_differs %}{% include "sh/env.sh" %}{% else %}
{% include "sh/node_env.sh" %}{% endif %}

# This engine's kv_port and engine_id are filled in from run.sh's exports.
KV_TRANSFER_CONFIG={{ kv_transfer_config }}
KV_TRANSFER_CONFIG=${KV_TRANSFER_CONFIG/@KV_PORT@/$KV_PORT}
{% if r.has_engine_id %}KV_TRANSFER_CONFIG=${KV_TRANSFER_CONFIG/@ENGINE_ID@/$ENGINE_ID}
{% endif %}
{% include "sh/model_path.sh" %}
# Printed as is by PD_DRY_RUN=1 (serve.sh), with the env this rank gets.
WHO="DP rank $4 (devices $1, port $2)"
{% if r.nodes.is_empty() %}{% include "sh/dp_serve.sh" %}
{% else %}case "$PD_NODE" in
{%- for n in r.nodes %}
{{ n.node }})
{%- let r = n %}
{% include "sh/dp_serve.sh" %}
    ;;
{%- endfor %}
*)
{% include "sh/dp_serve.sh" %}
    ;;
esac
{% endif %}{% include "sh/serve.sh" %}
