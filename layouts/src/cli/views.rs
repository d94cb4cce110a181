//! Commands that print layouts: `list`, `diff` and `show`, and their
//! tables.

use super::args::{Format, ListFilter};
use super::catalog::{find, render_failed};
use super::{CliResult, EXIT_OK, EXIT_STALE, EXIT_USAGE};
use pd_dsl::render::view;
use pd_dsl::{Layout, render};
use std::io::Write;

pub(super) fn list(
    layouts: &[Layout],
    format: Format,
    filter: &ListFilter,
    wide: bool,
    out: &mut dyn Write,
) -> CliResult {
    if let Some(h) = &filter.hardware
        && !pd_dsl::tables::HARDWARE.iter().any(|x| x.id == h)
    {
        let ids: Vec<&str> = pd_dsl::tables::HARDWARE.iter().map(|x| x.id).collect();
        return Err((
            EXIT_USAGE,
            format!(
                "found --hardware `{h}`, expected one of {}: the hardware table's ids",
                ids.join(", ")
            ),
        ));
    }
    let rows: Vec<view::IndexEntry> = layouts
        .iter()
        .filter(|l| filter.keeps(l))
        .map(view::index_entry)
        .collect();
    match format {
        Format::Json => {
            let text = serde_json::to_string_pretty(&rows).map_err(render_failed)?;
            let _ = writeln!(out, "{text}");
        }
        Format::Table => {
            // The model and hardware are in the name; the image's tag says
            // which release.
            let head: &[&str] = if wide {
                &[
                    "NAME", "MODEL", "HARDWARE", "TOPOLOGY", "NODES", "NPUS", "IMAGE", "VERIFIED",
                    "RECORDED",
                ]
            } else {
                &["NAME", "TOPOLOGY", "NODES", "NPUS", "IMAGE", "VERIFIED"]
            };
            let mut t = vec![head.iter().map(|h| (*h).to_owned()).collect::<Vec<_>>()];
            t.extend(rows.iter().map(|r| {
                // A layout its image cannot run says so where "verified"
                // would be read.
                let verified = if r.deploy.is_deployable() {
                    r.verified.to_string()
                } else {
                    r.deploy.label()
                };
                if wide {
                    vec![
                        r.name.clone(),
                        r.model.to_owned(),
                        r.hardware.to_owned(),
                        r.topology.clone(),
                        r.nodes.to_string(),
                        r.npus.to_string(),
                        r.image.clone(),
                        verified,
                        r.recorded.clone(),
                    ]
                } else {
                    vec![
                        r.name.clone(),
                        r.topology.clone(),
                        r.nodes.to_string(),
                        r.npus.to_string(),
                        r.image
                            .rsplit_once(':')
                            .map_or(r.image.clone(), |(_, t)| t.to_owned()),
                        verified,
                    ]
                }
            }));
            let _ = write!(out, "{}", table(&t));
            if rows.is_empty() {
                let _ = writeln!(
                    out,
                    "no layout matches the filters ({} registered)",
                    layouts.len()
                );
            }
        }
    }
    Ok(EXIT_OK)
}

pub(super) fn diff(
    layouts: &[Layout],
    a: &str,
    b: Option<&str>,
    image: Option<&str>,
    format: Format,
    out: &mut dyn Write,
) -> CliResult {
    let la = find(layouts, a)?;
    let lb = match (b, image) {
        (Some(b), _) => find(layouts, b)?.clone(),
        (None, Some(tag)) => {
            let tag = if tag.starts_with('v') {
                tag.to_owned()
            } else {
                format!("v{tag}")
            };
            crate::diff_cmd::on_image(la, &tag).map_err(|e| (EXIT_STALE, e))?
        }
        (None, None) => {
            return Err((EXIT_USAGE, "give a second layout or --image TAG".into()));
        }
    };
    let d = crate::diff_cmd::diff(la, &lb).map_err(render_failed)?;
    let text = match format {
        Format::Table => crate::diff_cmd::text(&d),
        Format::Json => serde_json::to_string_pretty(&d).map_err(render_failed)? + "\n",
    };
    out.write_all(text.as_bytes()).map_err(render_failed)?;
    Ok(if d.changes.is_empty() {
        EXIT_OK
    } else {
        EXIT_STALE
    })
}

pub(super) fn show(layout: &Layout, format: Format, out: &mut dyn Write) -> CliResult {
    let v = view::layout_view(layout);
    if format == Format::Json {
        let text = serde_json::to_string_pretty(&v).map_err(render_failed)?;
        let _ = writeln!(out, "{text}");
        return Ok(EXIT_OK);
    }
    let _ = writeln!(out, "{}", v.name);
    let _ = writeln!(
        out,
        "model {} · hardware {} · image {} · verified {} · connector {}",
        v.model,
        v.hardware,
        v.image,
        v.verified,
        v.connector.unwrap_or("none (mixed)")
    );
    let _ = writeln!(out, "verification: {}", layout.verification_text());
    let mut t = vec![
        [
            "NODE",
            "ROLE",
            "ENGINE",
            "RANKS",
            "DEVICES",
            "API PORTS",
            "KV SPAN",
            "ENGINE ID",
            "DP MASTER",
        ]
        .map(String::from)
        .to_vec(),
    ];
    // The same rows the README's topology table shows (one formatting of
    // rank, device, port and kv spans).
    for r in render::docs::model::topology(&v.nodes).rows {
        let n = &r.node;
        t.push(vec![
            n.index.to_string(),
            n.role.to_string(),
            n.engine.to_string(),
            r.ranks,
            r.devices,
            r.ports,
            r.kv,
            r.engine_id,
            format!("node {}", n.dp_master),
        ]);
    }
    let _ = write!(out, "{}", table(&t));
    // The README's memory table, per rank of each role.
    let rows = render::docs::model::budget_rows(&v.budget);
    if !rows.is_empty() {
        let mut b = vec![
            [
                "ROLE",
                "SHAPE",
                "USABLE",
                "WEIGHTS",
                "RESERVES",
                "KV CACHE",
                "KV/TOKEN",
                "KV TOKENS",
                "MAX MODEL LEN",
                "AT MAX LEN",
                "WORKLOAD AT ONCE",
            ]
            .map(String::from)
            .to_vec(),
        ];
        for r in rows {
            b.push(vec![
                r.role,
                r.shape,
                r.usable,
                r.weights,
                r.reserves,
                r.kv,
                r.kv_per_token,
                r.kv_tokens,
                r.max_len,
                r.at_max_len,
                r.workload,
            ]);
        }
        let _ = writeln!(out, "memory per rank:");
        let _ = write!(out, "{}", table(&b));
    }
    if let Some(why) = &v.budget_not_planned {
        let _ = writeln!(out, "memory per rank: not computed: {why}");
    }
    if let Some(p) = &v.proxy {
        let _ = writeln!(
            out,
            "proxy: {} on node {}, port {}, {} prefill + {} decode endpoints",
            p.script,
            p.node,
            p.port,
            p.prefill.len(),
            p.decode.len()
        );
    }
    Ok(EXIT_OK)
}

/// Left-aligned columns separated by two spaces.
pub(super) fn table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut s = String::new();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c + 1 == r.len() {
                line.push_str(cell);
            } else {
                let pad = widths[c].saturating_sub(cell.chars().count()) + 2;
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            }
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s
}
