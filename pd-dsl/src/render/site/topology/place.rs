//! Where every box, label and wire of the picture goes.

use super::*;

/// Lays the picture out.
pub fn picture(layout: &Layout) -> Picture {
    let p = &layout.placement;
    let proxy = layout.proxy.filter(|_| layout.is_pd());
    // Lines per node and the node box size (uniform, from the longest).
    let lines: Vec<Vec<(&'static str, String)>> =
        p.nodes.iter().map(|n| node_lines(layout, n)).collect();
    let engine_labels: Vec<[String; 2]> = p.engines.iter().map(engine_label).collect();
    let max_line = lines
        .iter()
        .flatten()
        .map(|(_, t)| text_width(t))
        .max()
        .unwrap_or(0);
    // The engine header sits over its first node and must end before the
    // proxy arrow that enters that node near its right edge.
    let max_engine = engine_labels
        .iter()
        .flatten()
        .map(|t| text_width(t))
        .max()
        .unwrap_or(0);
    let node_w = (px(max_line) + 2.0 * PAD)
        .max(px(max_engine) + 2.0 * PAD + 28.0)
        .max(200.0)
        .ceil();
    let rows = lines.iter().map(Vec::len).max().unwrap_or(1);
    let node_h = (2.0 * PAD + rows as f64 * LINE).ceil();
    let widest_engine = p.engines.iter().map(|e| e.nodes.len()).max().unwrap_or(1);
    let columns = widest_engine.clamp(MIN_COLUMNS, MAX_COLUMNS);
    let content_w = columns as f64 * node_w + (columns - 1) as f64 * NODE_GAP + 2.0 * ENGINE_PAD;

    let mut labels = Vec::new();
    let mut engines = Vec::new();
    let mut nodes = Vec::new();
    let mut wires = Vec::new();

    // Title.
    let title_text = layout.name().to_owned();
    let subtitle = format!(
        "{} · {} x {} ({} NPUs per node, {} used) · {}",
        layout.topology_text(),
        layout.node_count(),
        layout.hardware.product,
        layout.hardware.npus_per_node,
        layout.npus_used(),
        layout.image_ref
    );
    let mut y = 24.0;
    labels.push(Label {
        x: LEFT,
        y,
        class: "title",
        text: title_text.clone(),
    });
    y += 20.0;
    labels.push(Label {
        x: LEFT,
        y,
        class: "note",
        text: subtitle.clone(),
    });
    y += 16.0;

    // Proxy.
    let mut proxy_box = None;
    let mut bus_top = None;
    if let Some(pr) = proxy {
        let lp = &p.proxy;
        let proxy_lines = [
            ("head", format!("proxy · on node 0 · port {}", pr.port)),
            ("note", pr.script.file_name().to_owned()),
            (
                "note",
                format!(
                    "→ {} prefill + {} decode endpoints, every rank once, node order",
                    lp.prefill.len(),
                    lp.decode.len()
                ),
            ),
        ];
        let w = (proxy_lines
            .iter()
            .map(|(_, t)| px(text_width(t)))
            .fold(0.0, f64::max)
            + 2.0 * PAD)
            .ceil();
        let h = 2.0 * PAD + proxy_lines.len() as f64 * LINE;
        let top = y + 8.0;
        let labels = place_lines(LEFT, top, &proxy_lines);
        proxy_box = Some(NodeBox {
            index: 0,
            role: Role::Mixed,
            x: LEFT,
            y: top,
            w,
            h,
            title: format!(
                "proxy on node 0, port {}: {} prefill and {} decode endpoints",
                pr.port,
                lp.prefill.len(),
                lp.decode.len()
            ),
            labels,
        });
        let mid = top + h / 2.0;
        wires.push(Wire {
            d: format!("M{LEFT},{mid} H{BUS_X}"),
            class: "proxy",
            arrow: false,
            title: "proxy bus".into(),
        });
        bus_top = Some(mid);
        y = top + h + 12.0;
    }

    // Endpoints listed by the proxy, per node.
    let listed = |node: usize| -> Vec<u32> {
        p.proxy
            .prefill
            .iter()
            .chain(&p.proxy.decode)
            .filter(|e| e.node == node)
            .map(|e| e.port)
            .collect()
    };

    let bands: Vec<Role> = if layout.is_pd() {
        vec![Role::Prefill, Role::Decode]
    } else {
        vec![Role::Mixed]
    };
    let mut bus_bottom: Option<f64> = None;
    let mut band_bottoms = Vec::new();
    let mut band_tops = Vec::new();
    for (bi, role) in bands.iter().enumerate() {
        let band: Vec<&crate::EnginePlan> = p.engines.iter().filter(|e| e.role == *role).collect();
        if bi > 0 && layout.is_pd() {
            // The KV gap between prefill and decode.
            y += 50.0;
        }
        let n_nodes: usize = band.iter().map(|e| e.nodes.len()).sum();
        let (dp, tp) = layout.role_shape(*role).unwrap_or((0, 0));
        y += 18.0;
        band_tops.push(y - 14.0);
        labels.push(Label {
            x: LEFT,
            y,
            class: "band",
            text: format!(
                "{role} · {} engine{} of DP{dp} x TP{tp} · {n_nodes} node{}",
                band.len(),
                if band.len() == 1 { "" } else { "s" },
                if n_nodes == 1 { "" } else { "s" }
            ),
        });
        y += 6.0;
        // Flow engines into rows.
        let mut rows: Vec<Vec<&crate::EnginePlan>> = Vec::new();
        let mut used = columns;
        for e in band {
            let k = e.nodes.len().clamp(1, columns);
            if used + k > columns {
                rows.push(Vec::new());
                used = 0;
            }
            used += k;
            if let Some(r) = rows.last_mut() {
                r.push(e);
            }
        }
        for row in rows {
            let row_top = y + GUTTER;
            let mut x = LEFT;
            let mut row_h: f64 = 0.0;
            // Branch y for each inner row of this outer row.
            let mut branches: Vec<(f64, f64)> = Vec::new(); // (y, rightmost arrow x)
            for e in row {
                let k = e.nodes.len().clamp(1, columns);
                let inner_rows = e.nodes.len().div_ceil(columns).max(1);
                let w = 2.0 * ENGINE_PAD + k as f64 * node_w + (k - 1) as f64 * NODE_GAP;
                let h = ENGINE_HEAD
                    + inner_rows as f64 * node_h
                    + (inner_rows - 1) as f64 * GUTTER
                    + ENGINE_PAD;
                engines.push(EngineBox {
                    index: e.index,
                    role: e.role,
                    x,
                    y: row_top,
                    w,
                    h,
                    title: format!(
                        "engine {} ({}): nodes {}",
                        e.index,
                        e.role,
                        e.nodes
                            .iter()
                            .map(usize::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    labels: engine_labels
                        .get(e.index)
                        .into_iter()
                        .flatten()
                        .enumerate()
                        .map(|(i, t)| Label {
                            x: x + ENGINE_PAD,
                            y: row_top + 15.0 + i as f64 * LINE,
                            class: if i == 0 { "engine" } else { "note" },
                            text: t.clone(),
                        })
                        .collect(),
                });
                for (i, &ni) in e.nodes.iter().enumerate() {
                    let Some(n) = p.nodes.get(ni) else { continue };
                    let (ir, ic) = (i / columns, i % columns);
                    let nx = x + ENGINE_PAD + ic as f64 * (node_w + NODE_GAP);
                    let ny = row_top + ENGINE_HEAD + ir as f64 * (node_h + GUTTER);
                    let node_text = lines.get(ni).cloned().unwrap_or_default();
                    nodes.push(NodeBox {
                        index: n.index,
                        role: n.role,
                        x: nx,
                        y: ny,
                        w: node_w,
                        h: node_h,
                        title: node_title(layout, n),
                        labels: place_lines(nx, ny, &node_text),
                    });
                    let ports = listed(n.index);
                    if proxy.is_some() && !ports.is_empty() {
                        let by = if ir == 0 {
                            y + GUTTER / 2.0
                        } else {
                            ny - GUTTER / 2.0
                        };
                        let ax = nx + node_w - 14.0;
                        wires.push(Wire {
                            d: format!("M{ax},{by} V{ny}"),
                            class: "proxy",
                            arrow: true,
                            title: format!(
                                "proxy -> node {}: {} endpoint{} ({})",
                                n.index,
                                ports.len(),
                                if ports.len() == 1 { "" } else { "s" },
                                port_list(&ports)
                            ),
                        });
                        match branches.iter_mut().find(|(b, _)| *b == by) {
                            Some(b) => b.1 = b.1.max(ax),
                            None => branches.push((by, ax)),
                        }
                    }
                }
                row_h = row_h.max(h);
                x += w + ENGINE_GAP;
            }
            for (by, ax) in branches {
                wires.push(Wire {
                    d: format!("M{BUS_X},{by} H{ax}"),
                    class: "proxy",
                    arrow: false,
                    title: "proxy bus".into(),
                });
                bus_bottom = Some(bus_bottom.map_or(by, |b: f64| b.max(by)));
            }
            y = row_top + row_h;
        }
        band_bottoms.push(y);
    }
    if let (Some(top), Some(bottom)) = (bus_top, bus_bottom) {
        wires.push(Wire {
            d: format!("M{BUS_X},{top} V{bottom}"),
            class: "proxy",
            arrow: false,
            title: "proxy bus".into(),
        });
    }

    // KV: prefill -> decode, in the gap between the bands.
    if layout.is_pd()
        && let (Some(&from), Some(&to)) = (band_bottoms.first(), band_tops.get(1))
    {
        let ax = LEFT + 24.0;
        wires.push(Wire {
            d: format!("M{ax},{} V{}", from + 4.0, to - 6.0),
            class: "kv",
            arrow: true,
            title: "KV cache: prefill -> decode".into(),
        });
        let ids = |role: Role| -> Vec<String> {
            p.engines
                .iter()
                .filter(|e| e.role == role)
                .map(|e| e.engine_id.map_or(e.index.to_string(), |i| i.to_string()))
                .collect()
        };
        labels.push(Label {
            x: ax + 14.0,
            y: (from + to) / 2.0 + 4.0,
            class: "kv",
            text: format!(
                "KV cache prefill → decode · {} · engine_id {} → {}",
                layout.connector.map_or("-", |c| c.kv_connector()),
                list_summary(&ids(Role::Prefill)),
                list_summary(&ids(Role::Decode)),
            ),
        });
    }

    // Legend.
    y += 28.0;
    let mut legend = vec![
        "legend: ★ DP master (--data-parallel-address) · rN = DP rank · NPU = ASCEND_RT_VISIBLE_DEVICES".to_owned(),
        ":port = API port · kv = kv handshake port span".to_owned(),
    ];
    if proxy.is_some() {
        legend.push(
            "blue: proxy -> API endpoints it lists · orange: KV cache prefill -> decode".into(),
        );
    }
    for t in legend {
        labels.push(Label {
            x: LEFT,
            y,
            class: "note",
            text: t,
        });
        y += LINE;
    }
    let height = (y + 8.0).ceil();

    let text_right = labels
        .iter()
        .map(|l| l.x + px(text_width(&l.text)))
        .chain(proxy_box.as_ref().map(|b| b.x + b.w))
        .chain(engines.iter().map(|e| e.x + e.w))
        .fold(LEFT + content_w, f64::max);
    let width = (text_right + RIGHT).ceil();

    let roles = |role: Role| p.engines.iter().filter(|e| e.role == role).count();
    let desc = if layout.is_pd() {
        format!(
            "{} nodes: {} prefill engine(s) and {} decode engine(s); the proxy on node 0 lists {} prefill and {} decode endpoints; KV cache flows from prefill to decode through {}.",
            layout.node_count(),
            roles(Role::Prefill),
            roles(Role::Decode),
            p.proxy.prefill.len(),
            p.proxy.decode.len(),
            layout.connector.map_or("-", |c| c.kv_connector()),
        )
    } else {
        format!(
            "{} node(s): {} mixed engine(s), no proxy.",
            layout.node_count(),
            roles(Role::Mixed)
        )
    };
    Picture {
        layout: layout.name().to_owned(),
        node_count: nodes.len(),
        width,
        height,
        title: format!("Topology of {title_text}: {subtitle}"),
        desc,
        labels,
        engines,
        nodes,
        proxy: proxy_box,
        wires,
    }
}

fn place_lines(x: f64, y: f64, lines: &[(&'static str, String)]) -> Vec<Label> {
    lines
        .iter()
        .enumerate()
        .map(|(i, (class, text))| Label {
            x: x + PAD,
            // Baseline: 5 px above the line slot's bottom (room for descenders).
            y: y + PAD + (i + 1) as f64 * LINE - 5.0,
            class,
            text: text.clone(),
        })
        .collect()
}

fn port_list(ports: &[u32]) -> String {
    if ports.is_empty() {
        String::new()
    } else {
        format!(":{}", crate::render::view::span_text(ports, ","))
    }
}

fn node_title(layout: &Layout, n: &crate::NodePlan) -> String {
    let e = layout.placement.engines.get(n.engine);
    format!(
        "node {}: {} engine {}{}, {} rank(s), DP master node {}",
        n.index,
        n.role,
        n.engine,
        e.and_then(|e| e.engine_id)
            .map_or(String::new(), |i| format!(" (engine_id {i})")),
        n.ranks.len(),
        n.dp_master
    )
}
