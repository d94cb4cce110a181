{% include "sh/header.sh" %}
# Runs `vllm bench serve` with the layout's workload against {{ m.entry_what|comment }}.
# Usage: bench.sh [HOST] [`vllm bench serve` arguments...]
# The first argument is HOST only when it does not start with `-`; every other argument
# goes to `vllm bench serve` after the layout's workload, so it overrides it
# (`./bench.sh --num-prompts 10`, `./bench.sh 10.0.0.1 --request-rate 4`).
# Target as verify.sh: HOST, PD_PROXY_URL, PD_LOG_DIR/endpoint.url, node 0 of PD_NODE_IPS, 127.0.0.1.
# Results go to PD_BENCH_RESULT_DIR (default ./bench-results), tagged with the layout
# (`--metadata pd_dsl_layout=...`): `catalog calibrate RESULT.json` sets them against
# the estimate and records the ratio next to the layout (calibration.json).
set -euo pipefail

LAYOUT={{ m.view.name }}
# Workload: {{ m.bench.note|comment }}.
PORT={{ m.entry_port }}

{% include "sh/resolve_url.sh" %}
HOST=
if [[ $# -gt 0 && $1 != -* ]]; then
    HOST=$1
    shift
fi
resolve_url "$HOST"
echo "bench.sh: against $BASE (from $FROM)" >&2
{% include "sh/no_proxy.sh" %}
# vllm bench's aiohttp honours the proxy variables (trust_env): not for the deployment.
host=${BASE#*://}
host=${host%%/*}
if [[ $host == \[* ]]; then host=${host%%]*}; else host=${host%:*}; fi
bypass_proxy "$host"

exec vllm bench serve \
    --model "${PD_MODEL_PATH:-{{ m.model_path }}}" \
    --served-model-name {{ m.served_model_name }} \
    --base-url "$BASE" \
    --dataset-name random \
    --random-input-len {{ m.bench.input_len }} \
    --random-output-len {{ m.bench.output_len }} \
    --num-prompts {{ m.bench.num_prompts }} \
{% if let Some(rate) = m.bench.request_rate %}    --request-rate {{ rate }} \
{% endif %}{% if let Some(c) = m.bench.max_concurrency %}    --max-concurrency {{ c }} \
{% endif %}    --metadata pd_dsl_layout="$LAYOUT" pd_dsl_image={{ m.image_version }} \
    --save-result \
    --result-dir "${PD_BENCH_RESULT_DIR:-./bench-results}" \
    "$@"
