//! The derived values of the view model that take more than a field copy:
//! the role template's `--kv-transfer-config`, Mooncake's library
//! directories and each node's ports.

use crate::{Layout, Role};

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
    if let Some(m) = kv.as_object_mut() {
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
