//! Object names and node DNS names, derived from the placement.

use super::MAX_SET_NAME;
use crate::Layout;
use crate::render::RenderError;

/// One engine's LeaderWorkerSet, as [`super::artifacts`] derives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineSet {
    /// Engine index.
    pub engine: usize,
    /// The set's name.
    pub name: String,
    /// Node indices of the engine, leader first.
    pub nodes: Vec<usize>,
}

/// The names every object of a layout derives from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Names {
    /// Prefix of every object (`app.kubernetes.io/instance`).
    pub base: String,
    /// One set per engine, in engine order.
    pub sets: Vec<EngineSet>,
    /// Every node's pod DNS name relative to the namespace, in node order.
    pub node_hosts: Vec<String>,
}

/// Derives the object names and node DNS names of a layout.
pub fn names(layout: &Layout) -> Result<Names, RenderError> {
    let err = |message: String| RenderError::Layout {
        layout: layout.name().to_owned(),
        message,
    };
    let base = base_name(layout.name());
    let mut sets = Vec::new();
    let mut node_hosts = vec![String::new(); layout.node_count()];
    for e in &layout.placement.engines {
        let name = format!("{base}-{}{}", e.role.as_str(), e.role_index);
        if name.len() > MAX_SET_NAME {
            return Err(err(format!(
                "LeaderWorkerSet name `{name}` has {} characters, expected at most {MAX_SET_NAME}: its StatefulSets' revision labels must fit 63",
                name.len()
            )));
        }
        let first = e.master();
        for (i, &n) in e.nodes.iter().enumerate() {
            // LWS_WORKER_INDEX is the offset from the leader; run.sh adds it
            // to the first node, so an engine's nodes must be consecutive.
            if n != first + i {
                return Err(err(format!(
                    "engine {} runs on nodes {:?}, expected consecutive nodes: a pod's node index is its engine's first node plus `LWS_WORKER_INDEX`",
                    e.index, e.nodes
                )));
            }
            let Some(slot) = node_hosts.get_mut(n) else {
                return Err(err(format!(
                    "engine {} names node {n}, which does not exist",
                    e.index
                )));
            };
            *slot = if i == 0 {
                format!("{name}-0.{name}")
            } else {
                format!("{name}-0-{i}.{name}")
            };
        }
        sets.push(EngineSet {
            engine: e.index,
            name,
            nodes: e.nodes.clone(),
        });
    }
    if let Some(n) = node_hosts.iter().position(String::is_empty) {
        return Err(err(format!(
            "found node {n} in no engine's node list, expected every node in exactly one: its pod would have no LeaderWorkerSet and no DNS name"
        )));
    }
    Ok(Names {
        base,
        sets,
        node_hosts,
    })
}

/// The layout's name as a DNS-1123 label prefix: lowercase, every run of
/// other characters one `-`; longer than 34 characters, shortened with a
/// hash of the full name so two layouts never share a prefix.
pub fn base_name(layout_name: &str) -> String {
    let mut s = String::new();
    for c in layout_name.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.is_empty() && !s.ends_with('-') {
            s.push('-');
        }
    }
    while s.ends_with('-') {
        s.pop();
    }
    const MAX: usize = 34;
    if s.len() <= MAX {
        return s;
    }
    // FNV-1a: stable across runs and platforms, unlike std's hasher.
    let mut h: u32 = 0x811c_9dc5;
    for b in layout_name.bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    let mut short: String = s.chars().take(MAX - 7).collect();
    while short.ends_with('-') {
        short.pop();
    }
    format!("{short}-{:06x}", h & 0xff_ffff)
}

pub(super) fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

pub(super) fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_dns_label)
}
