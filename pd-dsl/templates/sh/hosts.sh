# Resolves a host name to an IP with getent (an IP resolves to itself).
resolve_host() {
    local addr
    addr=$(getent hosts "$1" | awk 'NR == 1 {print $1}') || true
    [[ -n $addr ]] || die "cannot resolve host '$1' (getent hosts)"
    printf '%s\n' "$addr"
}

# Sets addr to a LeaderWorkerSet pod's address, waiting for its DNS name: a
# pod's name resolves only once the pod is scheduled and has an address, and
# the pods of a group, of another engine's set, or of a group an autoscaler
# just added start in any order. Bounded by PD_WAIT_SECONDS from the first
# call, polled every PD_POLL_SECONDS.
await_pod_host() {
    if [[ -z ${dns_deadline:-} ]]; then
        dns_wait=${PD_WAIT_SECONDS:-3600}
        dns_poll=${PD_POLL_SECONDS:-10}
        is_uint "$dns_wait" || die "PD_WAIT_SECONDS must be a number of seconds, got '$dns_wait'"
        [[ $dns_poll =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "PD_POLL_SECONDS must be a number of seconds, got '$dns_poll'"
        dns_deadline=$((SECONDS + dns_wait))
    fi
    local waited=0
    until addr=$(getent hosts "$1" | awk 'NR == 1 {print $1}') && [[ -n $addr ]]; do
        ((SECONDS < dns_deadline)) || die "pod name '$1' did not resolve within ${dns_wait}s (getent hosts): is its LeaderWorkerSet applied and scheduled?"
        ((waited)) || log "waiting for pod name '$1' to resolve (up to ${dns_wait}s: its pod may not be scheduled yet)"
        waited=1
        sleep "$dns_poll"
    done
    ((!waited)) || log "pod name '$1' resolves to $addr"
}

# Index of this host in NODE_IPS, matched against its own addresses.
find_own_index() {
    local i addr
    for i in "${!NODE_IPS[@]}"; do
        while read -r addr; do
            if [[ -n $addr && $addr == "${NODE_IPS[$i]}" ]]; then
                printf '%s\n' "$i"
                return 0
            fi
        done < <(local_addresses)
    done
    return 1
}
