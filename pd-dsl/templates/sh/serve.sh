
# PD_DRAIN_SECONDS (from run.sh's environment): on SIGTERM this rank
{%- if m.drain_flag %} finishes its
# in-flight requests for up to that long before it exits.
if [[ ${PD_DRAIN_SECONDS:-0} != 0 ]]; then
    if ! [[ $PD_DRAIN_SECONDS =~ ^[0-9]+$ ]]; then
        echo "${0##*/}: PD_DRAIN_SECONDS must be a number of seconds, got '$PD_DRAIN_SECONDS'" >&2
        exit 2
    fi
    SERVE+=(--shutdown-timeout "$PD_DRAIN_SECONDS")
fi
{%- else %} would finish
# its in-flight requests, but this image's vLLM has no --shutdown-timeout.
if [[ ${PD_DRAIN_SECONDS:-0} != 0 ]]; then
    echo "${0##*/}: PD_DRAIN_SECONDS=$PD_DRAIN_SECONDS: this image's vLLM has no --shutdown-timeout; a stopped rank aborts its requests" >&2
fi
{%- endif %}
# PD_DRY_RUN=1 (run.sh's dry run): print the env this rank gets and the command
# it runs, and start nothing.
if [[ ${PD_DRY_RUN:-0} == 1 ]]; then
    printf '%s: %s env:' "${0##*/}" "$WHO"
    for var in "${RANK_ENV[@]}"; do
        if [[ -v $var ]]; then printf ' %s=%s' "$var" "${!var@Q}"; fi
    done
    printf '\n%s: %s would run:' "${0##*/}" "$WHO"
    echo " ${SERVE[*]@Q}"
    exit 0
fi
exec "${SERVE[@]}"