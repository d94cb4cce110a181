for var in HCCL_IF_IP GLOO_SOCKET_IFNAME TP_SOCKET_IFNAME HCCL_SOCKET_IFNAME; do
    if [[ -z ${!var:-} ]]; then
        echo "$0: $var is not set; start this node through run.sh" >&2
        exit 2
    fi
done