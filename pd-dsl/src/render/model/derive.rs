//! The derived values of the view model that take more than a field copy:
//! the role template's `--kv-transfer-config`, Mooncake's library
//! directories and each node's ports.

use crate::render::RenderError;
use crate::{Layout, Role};
use pd_dsl_core::spec::{PoolBackend, PoolSpec};
use pd_dsl_core::upstream;

/// Why a role has no `--kv-transfer-config` template.
pub(super) enum KvTemplate {
    /// The role has serve settings but no engine.
    NoEngine,
    /// The config cannot be templated.
    Bad(String),
}

/// The role template's `--kv-transfer-config`: the role's first engine's
/// config with `kv_port` and `engine_id` replaced by placeholders, because
/// the template serves every engine of the role and those two are per
/// engine (run.sh exports them).
pub(super) fn kv_template(layout: &Layout, role: Role) -> Result<(String, bool), KvTemplate> {
    let engine = layout
        .placement
        .engines
        .iter()
        .find(|e| e.role == role)
        .ok_or(KvTemplate::NoEngine)?;
    let mut kv = layout
        .kv_transfer_config(engine)
        .ok_or_else(|| KvTemplate::Bad(format!("no kv_transfer_config for the {role} engine")))?;
    // The PD connector: the config itself, or the first child of a
    // MultiConnector (a KV pool next to it).
    let pd = if layout.pool().is_some() {
        kv.pointer_mut("/kv_connector_extra_config/connectors/0")
    } else {
        Some(&mut kv)
    };
    if let Some(m) = pd.and_then(|c| c.as_object_mut()) {
        m.insert("kv_port".into(), "@KV_PORT@".into());
        if m.contains_key("engine_id") {
            m.insert("engine_id".into(), "@ENGINE_ID@".into());
        }
    }
    let text = serde_json::to_string_pretty(&kv).map_err(|e| KvTemplate::Bad(e.to_string()))?;
    if text.matches("@KV_PORT@").count() != 1 || text.matches("@ENGINE_ID@").count() > 1 {
        return Err(KvTemplate::Bad(
            "kv_transfer_config placeholders are ambiguous".into(),
        ));
    }
    let has_engine_id = text.contains("@ENGINE_ID@");
    Ok((text, has_engine_id))
}

/// Mooncake library directories the role env puts on `LD_LIBRARY_PATH`.
pub(super) fn mooncake_dirs(layout: &Layout) -> String {
    let mut dirs: Vec<&str> = Vec::new();
    for serve in layout.serve.values() {
        if let Some(v) = serve.env_value("LD_LIBRARY_PATH") {
            for d in v.text().split(':') {
                if d.starts_with('/') && !d.contains('$') && !dirs.contains(&d) {
                    dirs.push(d);
                }
            }
        }
    }
    dirs.join(":")
}

/// Node `i`'s ports as `busy_ports` reads them: `7100-7103 12321`.
pub(super) fn port_list(layout: &Layout, i: usize) -> String {
    node_ports(layout, i)
        .into_iter()
        .map(|(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Port ranges a node must find free: API ports, the binding role's kv
/// spans, the DP RPC port on DP masters and the proxy port on node 0.
pub fn node_ports(layout: &Layout, index: usize) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = layout
        .node_sockets(index)
        .into_iter()
        // Only the binding role listens on a kv span.
        .filter(|s| !matches!(s.kind, crate::SocketKind::Kv { binds: false, .. }))
        .map(|s| (s.first, s.last))
        .collect();
    out.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::new();
    for (a, b) in out {
        match merged.last_mut() {
            Some(last) if a <= last.1 + 1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
}

/// The KV pool's model: its service from the generated facts
/// (`kv_pool_runner`, upstream's e2e runner), its ports and config.
pub(super) fn pool_model(layout: &Layout, pool: &PoolSpec) -> Result<super::PoolModel, String> {
    let backend = pool.backend.value;
    let names = backend.port_names();
    let ports: Vec<u32> = names
        .iter()
        .map(|n| {
            pool.port(n)
                .and_then(|p| u32::try_from(p).ok())
                .ok_or_else(|| format!("the KV pool has no `{n}`"))
        })
        .collect::<Result<_, _>>()?;
    let (release, runner) = upstream::pool_runner(layout.image).ok_or_else(|| {
        "no release's e2e runner starts a KV pool service (generated facts `kv_pool_runner`)"
            .to_owned()
    })?;
    let word = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let (service, service_env, library_paths) = match backend {
        PoolBackend::Memcache => (
            runner
                .memcache_argv
                .iter()
                .map(|v| {
                    word(v).ok_or_else(|| format!("the MetaService argv of {release} has {v}"))
                })
                .collect::<Result<Vec<_>, _>>()?,
            runner.memcache_env.first().cloned(),
            String::new(),
        ),
        PoolBackend::Mooncake => {
            // `null` after `--port` / `--metrics_port`: the pool's ports.
            let mut argv = Vec::new();
            let mut prev = "";
            for v in &runner.mooncake_argv {
                let w = match (v, prev) {
                    (serde_json::Value::Null, "--port") => ports[0].to_string(),
                    (serde_json::Value::Null, "--metrics_port") => ports[1].to_string(),
                    _ => word(v).ok_or_else(|| {
                        format!("the mooncake_master argv of {release} has {v} after `{prev}`")
                    })?,
                };
                argv.push(w);
                prev = argv.last().map_or("", String::as_str);
            }
            if argv.is_empty() {
                return Err(format!(
                    "the e2e runner of {release} starts no mooncake_master"
                ));
            }
            (argv, None, runner.mooncake_library_paths.join(":"))
        }
    };
    let config: serde_json::Map<String, serde_json::Value> = pool
        .config
        .iter()
        .map(|(k, v)| (k.clone(), v.value.clone()))
        .collect();
    Ok(super::PoolModel {
        backend: backend.as_str(),
        config_env: backend.config_env(),
        ports,
        port_names: names.to_vec(),
        service,
        service_source: format!("vllm-ascend {release} {}", runner.source),
        library_paths,
        service_env,
        config_json: serde_json::Value::Object(config).to_string(),
        derived_keys: match backend {
            PoolBackend::Memcache => pd_dsl_core::check::pool::MEMCACHE_DERIVED.to_vec(),
            PoolBackend::Mooncake => vec![pd_dsl_core::check::pool::MOONCAKE_DERIVED],
        },
    })
}

/// The layout's checkpoint checks as one line of JSON for the preflight's
/// `model_config` check (`pd_dsl_core::preflight`).
pub(super) fn checkpoint_checks_json(layout: &Layout) -> Result<String, RenderError> {
    let fail = |message: String| RenderError::Layout {
        layout: layout.name().to_owned(),
        message,
    };
    let checks = pd_dsl_core::preflight::checkpoint_checks(layout).ok_or_else(|| {
        fail(format!(
            "image `{}` has no generated vLLM facts, so the preflight cannot say how its vLLM reads config.json",
            layout.image.tag
        ))
    })?;
    serde_json::to_string(&checks).map_err(|e| fail(format!("checkpoint checks: {e}")))
}
