{% if let Some(pool) = m.pool %}
# The KV pool ({{ pool.backend|comment }} store): every node writes the store's config
# under $LOG_DIR/runtime with this node's addresses filled in, node 0 runs its service
# (as {{ pool.service_source|comment }} does), every node waits for the service's
# ports before its ranks start, and the ranks find the config through {{ pool.config_env|ident }}.
POOL_BACKEND={{ pool.backend }}
POOL_PORT_NAMES=({{ pool.port_names|words }})
POOL_PORTS=({{ pool.ports|words }})
POOL_SERVICE=({{ pool.service|words }})
POOL_CONFIG={{ pool.config_json }}
POOL_DIR="$LOG_DIR/runtime"
{% if pool.backend == "memcache" %}export {{ pool.config_env|ident }}="$POOL_DIR/mmc-local.conf"
{% else %}export {{ pool.config_env|ident }}="$POOL_DIR/mooncake.json"
export MOONCAKE_MASTER="${NODE_IPS[0]}:${POOL_PORTS[0]}"
{% endif %}
# The keys this script writes into the store's config (the layout may not).
POOL_DERIVED_KEYS=({{ pool.derived_keys|words }})
# Writes (DIR set) or prints (DIR empty) this node's pool config files: memcache's
# `key = value` files with the MetaService and config-store URLs on node 0, or
# Mooncake's store JSON with the master's address.
pool_config() {
    python3 - "$1" "$PD_NODE_IPS" "$LOCAL_IP" "$POOL_BACKEND" "${POOL_PORTS[@]}" "$POOL_CONFIG" "${POOL_DERIVED_KEYS[@]}" <<'PY'
import json
import os
import re
import sys

out, ips, local, backend, first, second, config = sys.argv[1:8]
derived = sys.argv[8:]
ips = ips.split(",")
config = json.loads(config)


def fill(v):
    if isinstance(v, dict):
        return {k: fill(x) for k, x in v.items()}
    if isinstance(v, list):
        return [fill(x) for x in v]
    if not isinstance(v, str):
        return v

    def one(m):
        if m.group(2) is not None:
            return ips[int(m.group(2))]
        return ips[0] if m.group(1) == "MASTER_IP" else local

    return re.sub(r"\$\{(NODE_(\d+)_IP|MASTER_IP|LOCAL_IP)\}", one, v)


def lines(entries):
    return "".join(f"{k} = {str(v).lower() if isinstance(v, bool) else v}\n" for k, v in entries.items())


config = fill(config)
if backend == "memcache":
    meta, mine = dict(config["meta"]), dict(config["local"])
    meta_url, store_url = f"tcp://{ips[0]}:{first}", f"tcp://{ips[0]}:{second}"
    meta_key, meta_store_key, local_store_key = derived
    meta[meta_key] = meta_url
    meta[meta_store_key] = store_url
    mine[meta_key] = meta_url
    mine[local_store_key] = store_url
    files = {"mmc-meta.conf": lines(meta), "mmc-local.conf": lines(mine)}
else:
    (master_key,) = derived
    config[master_key] = f"{ips[0]}:{first}"
    files = {"mooncake.json": json.dumps(config, indent=2, ensure_ascii=False)}
for name, text in files.items():
    if not out:
        sys.stdout.write(f"--- {name}\n{text}")
        if not text.endswith("\n"):
            sys.stdout.write("\n")
        continue
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, name)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
PY
}

# Node 0: the pool's service, logging to $LOG_DIR/kv-pool.log.
pool_service() {
{% if let Some(var) = pool.service_env %}    {{ var|ident }}="$POOL_DIR/mmc-meta.conf" "${POOL_SERVICE[@]}"
{% else %}    LD_LIBRARY_PATH={{ pool.library_paths }}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "${POOL_SERVICE[@]}"
{% endif %}}

# Waits until node 0's pool service accepts connections on every port.
wait_pool() {
    local deadline=$((SECONDS + WAIT_SECONDS)) i down
    while :; do
        down=()
        for i in "${!POOL_PORTS[@]}"; do
            python3 -c 'import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2).close()' \
                "${NODE_IPS[0]}" "${POOL_PORTS[$i]}" 2>/dev/null || down+=("${POOL_PORT_NAMES[$i]} ${POOL_PORTS[$i]}")
        done
        ((${#down[@]} == 0)) && return 0
        if ((NODE_INDEX == 0)) && ! kill -0 "${PIDS[-1]}" 2>/dev/null; then
            rc=0
            wait "${PIDS[-1]}" || rc=$?
            die "the $POOL_BACKEND pool service exited with code $rc before it listened (log: $LOG_DIR/kv-pool.log)"
        fi
        ((SECONDS < deadline)) || die "timed out after ${WAIT_SECONDS}s waiting for the $POOL_BACKEND pool service on node 0 (${NODE_IPS[0]}): ${down[*]} not listening"
        log "waiting for the $POOL_BACKEND pool service on ${NODE_IPS[0]}: ${down[*]}"
        sleep "$POLL_SECONDS"
    done
}
{% endif %}
