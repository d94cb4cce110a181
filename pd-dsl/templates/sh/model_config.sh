# The weights' own config.json against what the layout's settings ask of it,
# as the image's vLLM reads it (the compiler judged the same from the model
# table where it could; only this file says what is on this node).
check_model_config() {
    local out
    if out=$(python3 - "$MODEL_PATH/config.json" "$CHECKPOINT_CHECKS" 2>&1 <<'PY'
{% include "py/checkpoint_config.py" %}

{% include "py/model_config_judge.py" %}

problems, seen = judge(sys.argv[1], json.loads(sys.argv[2]))
if problems:
    print("; ".join(problems))
    sys.exit(1)
print(", ".join(seen))
PY
    ); then
        pass model_config "$out"
    else
        fail model_config "$MODEL_PATH/config.json: ${out//$'\n'/ }"
    fi
}
