//! The KV pool next to the PD connector (`connector: .. { pool: memcache { .. } }`):
//! its service ports, its backend's configuration and `AscendStoreConnector`'s
//! extra config.

use super::text::{find_placeholder, json_control_text};
use crate::check::Cx;
use crate::rules::Rule;
use crate::spec::{Json, PoolBackend, PoolSpec};

declare_rules! {
    /// A KV pool's service ports: exactly its backend's two
    /// (`meta_service_port` + `config_store_port` for memcache,
    /// `master_port` + `metrics_port` for mooncake), each 1-65535 and
    /// distinct, as upstream's e2e runner validates them
    /// (tests/e2e/common/kv_pool/config.py `validate_kv_pool_config`
    /// @v0.27.1rc1+). Collisions with node 0's other ports are
    /// `port_collision`'s.
    KvPoolPorts = "kv_pool_ports", Hard, "a KV pool names its backend's two service ports, distinct TCP ports";
    /// A KV pool's configuration in the shape its files take: memcache
    /// `meta` and `local` maps of scalars (`key = value` files), without the
    /// URLs the scripts write; mooncake without `master_server_address`;
    /// `${..}` only those filled per node (runtime.py
    /// `ExternalDPMemcacheManager._write_config`, external_dp_config.py
    /// `replace_cluster_placeholders` @v0.27.1rc1+).
    KvPoolConfig = "kv_pool_config", Hard, "a KV pool's configuration has its backend's shape, without what the scripts derive";
    /// `backend` in `AscendStoreConnector`'s extra config is the pool's own
    /// keyword, derived.
    KvPoolStoreExtra = "kv_pool_store_extra", Hard, "`AscendStoreConnector`'s `backend` is the pool's";
}

/// Keys the scripts write into memcache's config files themselves, from the
/// pool's ports and node 0's address (upstream's e2e runner does the same:
/// tests/e2e/common/multi_node/external_dp/runtime.py
/// `ExternalDPMemcacheManager._write_config` @0.27.1rc1+).
pub const MEMCACHE_DERIVED: [&str; 3] = [
    "ock.mmc.meta_service_url",
    "ock.mmc.meta_service.config_store_url",
    "ock.mmc.local_service.config_store_url",
];

/// The key the scripts add to Mooncake's store config
/// (`ExternalDPMooncakeManager._write_config`).
pub const MOONCAKE_DERIVED: &str = "master_server_address";

/// Placeholders filled per node in the pool's config, as upstream's runner
/// fills them (external_dp_config.py `replace_cluster_placeholders`):
/// `NODE_<k>_IP` besides these.
pub const POOL_PLACEHOLDERS: [&str; 2] = ["MASTER_IP", "LOCAL_IP"];

/// Every `${NAME}` in `s` that is not one the scripts fill, given the node count.
pub fn unknown_placeholders(s: &str, nodes: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        let after = &rest[i + 2..];
        let Some(j) = after.find('}') else {
            out.push(after.to_owned());
            break;
        };
        let name = &after[..j];
        let node = name
            .strip_prefix("NODE_")
            .and_then(|n| n.strip_suffix("_IP"))
            .and_then(|k| k.parse::<usize>().ok());
        let known = POOL_PLACEHOLDERS.contains(&name) || node.is_some_and(|k| k < nodes);
        if !known {
            out.push(name.to_owned());
        }
        rest = &after[j + 1..];
    }
    out
}

/// Every string in a JSON value.
fn strings(v: &Json, out: &mut Vec<String>) {
    match v {
        Json::String(s) => out.push(s.clone()),
        Json::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Json::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// The pool's rules; false when the layout cannot be derived.
pub(super) fn check_pool(pool: &PoolSpec, cx: &mut Cx) -> bool {
    let backend = pool.backend.value;
    let mut ok = check_ports(pool, cx);
    ok &= check_config(pool, cx);
    for (scope, map) in [
        ("extra", &pool.extra),
        ("prefill", &pool.prefill),
        ("decode", &pool.decode),
    ] {
        for (k, v) in map {
            let field = format!("connector.pool.{scope}.{k}");
            if k == "backend" {
                cx.report(
                    Rule::KvPoolStoreExtra,
                    v.site,
                    &field,
                    format!("found `backend` in the pool's {scope} entries, expected it left out: it is the pool's backend (`{backend}`), written once after `pool:`"),
                );
                ok = false;
            }
            if let Some(t) = json_control_text(k, &v.value) {
                cx.report(
                    Rule::TextFormat,
                    v.site,
                    &field,
                    format!("found {t:?} in the pool's {scope} entries, expected text without control characters: generated docs and scripts must show exactly what was written"),
                );
            }
            if let Some(p) = find_placeholder(k, &v.value) {
                cx.report(
                    Rule::TextFormat,
                    v.site,
                    &field,
                    format!("found `{p}` in the pool's {scope} entries, expected text without it: the role templates fill `{p}` in at run time, so the value would be rewritten"),
                );
                ok = false;
            }
        }
    }
    ok
}

/// `kv_pool_ports`: exactly the backend's two ports, each a TCP port, distinct
/// (upstream's e2e runner refuses the same: tests/e2e/common/kv_pool/config.py
/// `validate_kv_pool_config` @0.27.1rc1+).
fn check_ports(pool: &PoolSpec, cx: &mut Cx) -> bool {
    let backend = pool.backend.value;
    let names = backend.port_names();
    let mut ok = true;
    for (name, p) in &pool.ports {
        if !names.contains(&name.as_str()) {
            let other = PoolBackend::ALL
                .into_iter()
                .find(|b| b.port_names().contains(&name.as_str()));
            let why = match other {
                Some(b) => format!(": `{name}` is a {b} pool's port"),
                None => String::new(),
            };
            cx.report(
                Rule::KvPoolPorts,
                p.site,
                format!("connector.pool.ports.{name}"),
                format!(
                    "found port `{name}` in a {backend} pool, expected `{}` and `{}`{why}",
                    names[0], names[1]
                ),
            );
            ok = false;
        } else if p.value == 0 || p.value > 65535 {
            cx.report(
                Rule::KvPoolPorts,
                p.site,
                format!("connector.pool.ports.{name}"),
                format!("found `{name}` {}, expected a TCP port 1-65535: node 0's pool service listens on it", p.value),
            );
            ok = false;
        }
    }
    let missing: Vec<&str> = names
        .into_iter()
        .filter(|n| !pool.ports.contains_key(*n))
        .collect();
    if !missing.is_empty() {
        cx.report(
            Rule::KvPoolPorts,
            pool.backend.site,
            "connector.pool.ports",
            format!(
                "found a {backend} pool without `{}`, expected `ports: {{ {}: N, {}: M }}`: node 0's pool service listens on both and every engine reaches it there",
                missing.join("` and `"),
                names[0],
                names[1]
            ),
        );
        ok = false;
    }
    if let (Some(a), Some(b)) = (pool.ports.get(names[0]), pool.ports.get(names[1]))
        && a.value == b.value
    {
        cx.report(
            Rule::KvPoolPorts,
            b.site,
            format!("connector.pool.ports.{}", names[1]),
            format!(
                "found `{}` and `{}` both {}, expected two ports: the pool service binds each",
                names[0], names[1], a.value
            ),
        );
        ok = false;
    }
    ok
}

/// `kv_pool_config`: the backend's configuration in the shape its files take.
fn check_config(pool: &PoolSpec, cx: &mut Cx) -> bool {
    let backend = pool.backend.value;
    let mut ok = true;
    let mut report = |cx: &mut Cx, site, field: String, msg: String| {
        cx.report(Rule::KvPoolConfig, site, field, msg);
        ok = false;
    };
    for (k, v) in &pool.config {
        let field = format!("connector.pool.config.{k}");
        if let Some(t) = json_control_text(k, &v.value) {
            report(
                cx,
                v.site,
                field.clone(),
                format!(
                    "found {t:?} in the pool's config, expected text without control characters: it is written into the pool's config files"
                ),
            );
        }
        match backend {
            PoolBackend::Memcache => {
                let Json::Object(entries) = &v.value else {
                    report(
                        cx,
                        v.site,
                        field,
                        format!(
                            "found `{k}` = {}, expected `meta` and `local` each a map of `key: value`: they become memcache's `mmc-meta.conf` and `mmc-local.conf`",
                            v.value
                        ),
                    );
                    continue;
                };
                if k != "meta" && k != "local" {
                    report(
                        cx,
                        v.site,
                        field,
                        format!(
                            "found `{k}` in a memcache pool's config, expected only `meta` (the MetaService's file) and `local` (each node's): nothing reads another section"
                        ),
                    );
                    continue;
                }
                for (ek, ev) in entries {
                    if MEMCACHE_DERIVED.contains(&ek.as_str()) {
                        report(
                            cx,
                            v.site,
                            format!("{field}.{ek}"),
                            format!(
                                "found `{ek}` in the pool's `{k}` config, expected it left out: the scripts write it from the pool's ports and node 0's address"
                            ),
                        );
                    } else if ev.is_object() || ev.is_array() || ev.is_null() {
                        report(
                            cx,
                            v.site,
                            format!("{field}.{ek}"),
                            format!(
                                "found `{ek}` = {ev}, expected a string, number or boolean: memcache's config is `key = value` lines"
                            ),
                        );
                    }
                }
            }
            PoolBackend::Mooncake => {
                if k == MOONCAKE_DERIVED {
                    report(
                        cx,
                        v.site,
                        field,
                        format!(
                            "found `{MOONCAKE_DERIVED}` in the pool's config, expected it left out: the scripts write node 0's address and `master_port`"
                        ),
                    );
                }
            }
        }
    }
    if backend == PoolBackend::Memcache {
        for section in ["meta", "local"] {
            if !pool.config.contains_key(section) {
                report(
                    cx,
                    pool.backend.site,
                    format!("connector.pool.config.{section}"),
                    format!(
                        "found a memcache pool without `config.{section}`, expected `config: {{ meta: {{ .. }}, local: {{ .. }} }}`: upstream's runner refuses a memcache pool without both (tests/e2e/common/kv_pool/config.py `validate_kv_pool_config`)"
                    ),
                );
            }
        }
    }
    ok
}

/// `kv_pool_config`'s placeholders, once the node count is known.
pub(super) fn check_placeholders(pool: &PoolSpec, nodes: usize, cx: &mut Cx) {
    for (k, v) in &pool.config {
        let mut texts = Vec::new();
        strings(&v.value, &mut texts);
        for name in texts.iter().flat_map(|t| unknown_placeholders(t, nodes)) {
            cx.report(
                Rule::KvPoolConfig,
                v.site,
                format!("connector.pool.config.{k}"),
                format!(
                    "found `${{{name}}}` in the pool's config, expected one the scripts fill per node: `${{MASTER_IP}}` (node 0), `${{LOCAL_IP}}` (this node) or `${{NODE_<k>_IP}}` for k below {nodes}"
                ),
            );
        }
    }
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::panic)]
mod tests {
    use super::unknown_placeholders;
    use crate::spec::PoolBackend;

    /// Every image's vllm-ascend has both pool backends (generated facts
    /// `kv_pool_backends`), so no rule gates the backend by release; and
    /// where vllm-ascend itself reads the backend's config path, it reads
    /// the variable the scripts export.
    #[test]
    fn every_release_has_both_pool_backends_and_their_config_env() {
        for img in crate::tables::IMAGES.iter() {
            let r = img.facts().expect("every image has facts");
            for b in PoolBackend::ALL {
                let fact = r.kv_pool_backends.iter().find(|f| f.name == b.as_str());
                let fact = fact.unwrap_or_else(|| panic!("{} has no `{b}` backend", r.version));
                if let Some(env) = &fact.config_env {
                    assert_eq!(env, b.config_env(), "{} {}", r.version, fact.source);
                }
            }
        }
        // The facts do record the variable (memcache from 0.23.0rc1).
        let last = crate::tables::IMAGES
            .last()
            .and_then(|i| i.facts())
            .expect("facts");
        assert!(
            last.kv_pool_backends
                .iter()
                .all(|f| f.name == "yuanrong" || f.config_env.is_some())
        );
    }

    #[test]
    fn placeholders_the_scripts_fill_are_known() {
        assert!(unknown_placeholders("http://${MASTER_IP}:8002", 2).is_empty());
        assert!(unknown_placeholders("${LOCAL_IP} ${NODE_1_IP}", 2).is_empty());
        assert_eq!(unknown_placeholders("${NODE_2_IP}", 2), ["NODE_2_IP"]);
        assert_eq!(unknown_placeholders("${PORT}x${HOME", 2), ["PORT", "HOME"]);
    }
}
