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

/// Longest object-name prefix: a set's name adds `-<role><index>` (at most
/// 10 characters) and must stay within [`MAX_SET_NAME`].
pub const MAX_BASE_NAME: usize = MAX_SET_NAME - 10;

fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}

/// The longest word of the model's (`model`) or the topology's words that
/// is longer than `min`, the first of equals.
fn longest(words: &[(String, bool)], model: bool, min: usize) -> Option<usize> {
    words
        .iter()
        .enumerate()
        .filter(|(_, (w, m))| *m == model && w.len() > min)
        .max_by_key(|(i, (w, _))| (w.len(), usize::MAX - i))
        .map(|(i, _)| i)
}

/// The layout's name as a DNS-1123 label prefix: lowercase, every run of
/// other characters one `-`. Longer than [`MAX_BASE_NAME`], the model's
/// words give way before the topology's (the part after `/`, which tells
/// four variants of one model apart in `kubectl get`): they shorten, longest
/// first, to 2 characters, then drop from the last; only then do the
/// topology's words shorten. A hash of the full name is appended so two
/// layouts never share a prefix. The full name is on every
/// object as the annotation `pd-dsl/layout`.
pub fn base_name(layout_name: &str) -> String {
    let whole = slug(layout_name);
    if whole.len() <= MAX_BASE_NAME {
        return whole;
    }
    // FNV-1a: stable across runs and platforms, unlike std's hasher.
    let mut h: u32 = 0x811c_9dc5;
    for b in layout_name.bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    let suffix = format!("-{:04x}", h & 0xffff);
    let target = MAX_BASE_NAME - suffix.len();
    let (family, variant) = layout_name.rsplit_once('/').unwrap_or(("", layout_name));
    // (word, is the model's)
    let mut words: Vec<(String, bool)> = slug(family)
        .split('-')
        .filter(|w| !w.is_empty())
        .map(|w| (w.to_owned(), true))
        .chain(
            slug(variant)
                .split('-')
                .filter(|w| !w.is_empty())
                .map(|w| (w.to_owned(), false)),
        )
        .collect();
    let len = |w: &[(String, bool)]| -> usize {
        w.iter().map(|(x, _)| x.len()).sum::<usize>() + w.len().saturating_sub(1)
    };
    // 1. The model's words, longest first, down to 2 characters.
    while len(&words) > target {
        let Some(i) = longest(&words, true, 2) else {
            break;
        };
        words[i].0.pop();
    }
    // 2. The model's words from the last, keeping its first.
    while len(&words) > target && words.iter().filter(|(_, m)| *m).count() > 1 {
        if let Some(i) = words.iter().rposition(|(_, m)| *m) {
            words.remove(i);
        }
    }
    // 3. The topology's words, longest first, down to 4 characters; then
    //    the model's last word; then the cut below.
    while len(&words) > target {
        match longest(&words, false, 4) {
            Some(i) => {
                words[i].0.pop();
            }
            None => {
                if let Some(i) = words.iter().position(|(_, m)| *m) {
                    words.remove(i);
                } else {
                    break;
                }
            }
        }
    }
    let mut short: String = words
        .iter()
        .map(|(w, _)| w.as_str())
        .collect::<Vec<_>>()
        .join("-");
    short.truncate(target);
    while short.ends_with('-') {
        short.pop();
    }
    format!("{short}{suffix}")
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
