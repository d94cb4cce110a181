RANK_ENV=(ASCEND_RT_VISIBLE_DEVICES{% for e in r.env %} {{ e.name|ident }}{% endfor %} "${RUN_SH_ENV[@]}" NO_PROXY)
SERVE=(vllm serve "$MODEL_PATH" \
    "${DP_ARGS[@]}" \
    --tensor-parallel-size {{ x.tp }}{% if x.pcp > 1 %} \
    --prefill-context-parallel-size {{ x.pcp }}{% endif %}{% include "sh/options.sh" %})