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