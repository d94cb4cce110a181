RANK_ENV=(ASCEND_RT_VISIBLE_DEVICES{% for e in r.env %} {{ e.name|ident }}{% endfor %} ENGINE_ID KV_PORT "${RUN_SH_ENV[@]}" NO_PROXY)
SERVE=(vllm serve "$MODEL_PATH" \
    --host 0.0.0.0 \
    --port "$2" \
    --data-parallel-size "$3" \
{%- if *dp > 1 %}
    --data-parallel-rank "$4" \{% endif %}
    --data-parallel-address "$5" \
    --data-parallel-rpc-port "$6" \
    {% if *pcp > 1 %}--tensor-parallel-size {{ tp }} \
    --prefill-context-parallel-size {{ pcp }}{% else %}--tensor-parallel-size "$7"{% endif %}{% include "sh/options.sh" %} \
    --kv-transfer-config "$KV_TRANSFER_CONFIG")