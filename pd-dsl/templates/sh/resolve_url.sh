resolve_url() {
    local log_base=${PD_LOG_DIR:-/var/log/pd-dsl/$LAYOUT} ip0
    if [[ -n ${1:-} ]]; then
        BASE="http://$1:$PORT"
        FROM="the HOST argument"
    elif [[ -n ${PD_PROXY_URL:-} ]]; then
        BASE=${PD_PROXY_URL%/}
        FROM="PD_PROXY_URL"
    elif [[ -s $log_base/endpoint.url ]]; then
        BASE=$(<"$log_base/endpoint.url")
        FROM="$log_base/endpoint.url, recorded by run.sh on node 0"
    elif [[ -n ${PD_NODE_IPS:-} ]]; then
        ip0=${PD_NODE_IPS%%,*}
        ip0=${ip0//[[:space:]]/}
        BASE="http://$ip0:$PORT"
        FROM="node 0 of PD_NODE_IPS"
    else
        BASE="http://127.0.0.1:$PORT"
        FROM="the default: no HOST argument, PD_PROXY_URL, $log_base/endpoint.url or PD_NODE_IPS"
    fi
    [[ $BASE == http://* || $BASE == https://* ]] || BASE="http://$BASE"
}