# The deployment's own addresses never go through an HTTP proxy: http_proxy,
# https_proxy, all_proxy (and upper case) send httpx (the proxy) and aiohttp
# (vllm bench) to it (http_request ignores them itself). Adds each argument, 127.0.0.1, localhost and ::1
# to NO_PROXY and no_proxy (both exported, merged), keeping the operator's
# proxy for everything else, such as model downloads.
bypass_proxy() {
    local -A seen=()
    local list=() h merged=''
    IFS=',' read -r -a list <<<"${NO_PROXY:-},${no_proxy:-}"
    for h in "${list[@]}" 127.0.0.1 localhost ::1 "$@"; do
        h=${h//[[:space:]]/}
        h=${h#[}
        h=${h%]}
        if [[ -z $h || -n ${seen[$h]:-} ]]; then continue; fi
        seen[$h]=1
        merged=${merged:+$merged,}$h
    done
    export NO_PROXY=$merged no_proxy=$merged
}
