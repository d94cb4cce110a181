//! `catalog diff A B` and `catalog diff A --image TAG`: what differs between
//! two layouts, or one layout on two images, key by key:
//!
//! - `layout.*`: model, hardware, image (and its vLLM), topology, connector;
//! - `role.<role>.*`: each role's `vllm serve` options after the derived
//!   ones (`--max-num-seqs`, …), its env, its `--kv-transfer-config`;
//! - `node[i].*`, `proxy.*`: what the placement derives (engines, DP ranks,
//!   engine ids, kv ports, every rank's devices and API port, the proxy's
//!   lists);
//! - `budget.<role>.*`, `estimate.*`: the memory budget and the estimate.
//!
//! Every key comes from the same views the scripts and `catalog show` are
//! made from, flattened; nothing is re-derived here.

use pd_dsl::Layout;
use pd_dsl::render::model::LayoutModel;
use pd_dsl::render::view;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One key whose value differs (absent on one side: `None`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Change {
    /// Flattened key (`role.decode.--max-num-seqs`).
    pub key: String,
    /// The value in A.
    pub a: Option<String>,
    /// The value in B.
    pub b: Option<String>,
}

/// `catalog diff` as JSON.
#[derive(Clone, Debug, Serialize)]
pub struct Diff {
    /// A's name (and image).
    pub a: String,
    /// B's name (and image).
    pub b: String,
    /// Every key that differs, in key order.
    pub changes: Vec<Change>,
}

fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, x, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), x, out);
            }
        }
        Value::Null => {}
        Value::String(s) => {
            out.insert(prefix.to_owned(), s.clone());
        }
        other => {
            out.insert(prefix.to_owned(), other.to_string());
        }
    }
}

/// The flattened document of one layout.
pub fn document(layout: &Layout) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    out.insert("layout.model".into(), layout.model.id.to_owned());
    out.insert("layout.hardware".into(), layout.hardware.id.to_owned());
    out.insert("layout.image".into(), layout.image_ref.clone());
    out.insert("layout.vllm".into(), layout.image.vllm().to_owned());
    out.insert("layout.topology".into(), layout.topology_text());
    let m = LayoutModel::new(layout).map_err(|e| e.to_string())?;
    for r in &m.roles {
        let role = r.role.as_str();
        for o in &r.options {
            out.insert(
                format!("role.{role}.{}", o.flag),
                o.value.clone().unwrap_or_else(|| "(set)".into()),
            );
        }
        for e in &r.env {
            let v = if e.prepend {
                format!("{} (prepended)", e.value)
            } else {
                e.value.clone()
            };
            out.insert(format!("role.{role}.env.{}", e.name), v);
        }
        if let Some(kv) = &r.kv_transfer_config {
            let one_line: String = kv.split_whitespace().collect::<Vec<_>>().join(" ");
            out.insert(format!("role.{role}.--kv-transfer-config"), one_line);
        }
        out.insert(
            format!("role.{role}.--tensor-parallel-size"),
            r.tp.to_string(),
        );
        out.insert(
            format!("role.{role}.--data-parallel-size"),
            r.dp.to_string(),
        );
    }
    let v = serde_json::to_value(view::layout_view(layout)).map_err(|e| e.to_string())?;
    for (k, prefix) in [
        ("connector", "layout.connector"),
        ("nodes", "node"),
        ("proxy", "proxy"),
        ("estimate", "estimate"),
    ] {
        if let Some(x) = v.get(k) {
            flatten(prefix, x, &mut out);
        }
    }
    if let Some(Value::Array(budgets)) = v.get("budget") {
        for b in budgets {
            let role = b.get("role").and_then(Value::as_str).unwrap_or("role");
            flatten(&format!("budget.{role}"), b, &mut out);
        }
    }
    Ok(out)
}

/// The keys that differ between `a` and `b`.
pub fn diff(a: &Layout, b: &Layout) -> Result<Diff, String> {
    let (da, db) = (document(a)?, document(b)?);
    let mut changes = Vec::new();
    for key in da.keys().chain(db.keys().filter(|k| !da.contains_key(*k))) {
        let (x, y) = (da.get(key), db.get(key));
        if x != y {
            changes.push(Change {
                key: key.clone(),
                a: x.cloned(),
                b: y.cloned(),
            });
        }
    }
    changes.sort_by(|p, q| p.key.cmp(&q.key));
    Ok(Diff {
        a: format!("{} ({})", a.name(), a.image.tag),
        b: format!("{} ({})", b.name(), b.image.tag),
        changes,
    })
}

/// `a` with its image replaced by `tag`, checked: the findings on that
/// image when it cannot run the layout.
pub fn on_image(layout: &Layout, tag: &str) -> Result<Layout, String> {
    let mut spec = layout.spec.clone();
    spec.image.value = tag.to_owned();
    pd_dsl::check(&spec)
        .map_err(|d| format!("{} on image {tag} does not check:\n{d}", layout.name()))
}

/// The text form: one line per key, grouped by section.
pub fn text(d: &Diff) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "--- {}\n+++ {}", d.a, d.b);
    if d.changes.is_empty() {
        let _ = writeln!(out, "no differences");
        return out;
    }
    let mut section = "";
    for c in &d.changes {
        let head = c.key.split(['.', '[']).next().unwrap_or("");
        if head != section {
            section = head;
            let _ = writeln!(out, "{section}:");
        }
        let _ = match (&c.a, &c.b) {
            (Some(a), Some(b)) => writeln!(out, "  ~ {}: {a} -> {b}", c.key),
            (Some(a), None) => writeln!(out, "  - {}: {a}", c.key),
            (None, Some(b)) => writeln!(out, "  + {}: {b}", c.key),
            (None, None) => Ok(()),
        };
    }
    let _ = writeln!(out, "{} difference(s)", d.changes.len());
    out
}
