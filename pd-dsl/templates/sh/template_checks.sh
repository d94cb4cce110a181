# What run.sh exports for every rank: the node's control-socket address and NIC{% if let Some(pool) = m.pool %},
# and where the KV pool's config is{% endif %}.
RUN_SH_ENV=(HCCL_IF_IP GLOO_SOCKET_IFNAME TP_SOCKET_IFNAME HCCL_SOCKET_IFNAME{% if let Some(pool) = m.pool %} {{ pool.config_env|ident }}{% if pool.backend == "mooncake" %} MOONCAKE_MASTER{% endif %}{% endif %})
for var in "${RUN_SH_ENV[@]}"; do
    if [[ -z ${!var:-} ]]; then
        echo "$0: $var is not set; start this node through run.sh" >&2
        exit 2
    fi
done