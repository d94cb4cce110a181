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

export ASCEND_RT_VISIBLE_DEVICES="$1"{% include "sh/env.sh" %}

# This engine's kv_port and engine_id are filled in from run.sh's exports.
KV_TRANSFER_CONFIG={{ kv_transfer_config }}
KV_TRANSFER_CONFIG=${KV_TRANSFER_CONFIG/@KV_PORT@/$KV_PORT}
{% if r.has_engine_id %}KV_TRANSFER_CONFIG=${KV_TRANSFER_CONFIG/@ENGINE_ID@/$ENGINE_ID}
{% endif %}
{% include "sh/model_path.sh" %}
# Printed as is by PD_DRY_RUN=1 (serve.sh), with the env this rank gets.
WHO="DP rank $4 (devices $1, port $2)"
RANK_ENV=(ASCEND_RT_VISIBLE_DEVICES{% for e in r.env %} {{ e.name|ident }}{% endfor %} ENGINE_ID KV_PORT "${RUN_SH_ENV[@]}" NO_PROXY)
SERVE=(vllm serve "$MODEL_PATH" \
    --host 0.0.0.0 \
    --port "$2" \
    --data-parallel-size "$3" \
    --data-parallel-rank "$4" \
    --data-parallel-address "$5" \
    --data-parallel-rpc-port "$6" \
    --tensor-parallel-size "$7"{% include "sh/options.sh" %} \
    --kv-transfer-config "$KV_TRANSFER_CONFIG")
{% include "sh/serve.sh" %}
