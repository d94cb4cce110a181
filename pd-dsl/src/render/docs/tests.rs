//! The documents view and the Markdown escaping of the READMEs.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use super::model::docs_view;
use crate::{Layout, LayoutSpec};
use serde_json::json;

const PD: &str = include_str!("../../../tests/fixtures/v3_1_a3_2p1d.json");
const MIXED: &str = include_str!("../../../tests/fixtures/v3_1_a2_mixed_2node.json");

fn layout(
    json: &str,
    edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>),
) -> Layout {
    let mut v: serde_json::Value = serde_json::from_str(json).expect("fixture parses");
    edit(v.as_object_mut().expect("an object"));
    let spec: LayoutSpec = serde_json::from_value(v).expect("a spec");
    crate::check(&spec).expect("the layout checks")
}

#[test]
fn the_view_takes_its_figures_from_the_placement() {
    let l = layout(PD, |_| {});
    let d = docs_view(&l);
    assert_eq!(d.topology.rows.len(), l.placement.nodes.len());
    let proxy = l.proxy.expect("a PD layout has a proxy");
    assert_eq!(d.endpoint_port, proxy.port);
    assert!(d.pd && d.scripts.contains(&"proxy.sh"));
    assert!(d.kv_connector_extra_config.is_some());
    // Node 3 holds decode ranks 16-31 of the dp32 engine.
    let row = &d.topology.rows[3];
    assert_eq!(row.ranks, "16-31 of 32");
    assert_eq!(row.devices, "0-15 (1 per rank)");

    let m = layout(MIXED, |_| {});
    let d = docs_view(&m);
    assert_eq!(d.endpoint_port, m.api_port);
    assert!(!d.pd && d.proxy.is_none() && d.kv_connector_extra_config.is_none());
    assert!(d.scripts.contains(&"run_mixed.sh") && !d.scripts.contains(&"proxy.sh"));
    assert!(d.topology.rows.iter().any(|r| r.ports == "- (headless)"));
}

#[test]
fn table_text_is_escaped_and_prose_is_placed_as_written() {
    let l = layout(PD, |o| {
        o.insert("summary".into(), json!(["Prose with a | pipe and `code`."]));
        o.insert(
            "figures".into(),
            json!([{"metric": "TTFT|p99", "value": "`1 s`", "context": "a|b"}]),
        );
        o.insert("deviations".into(), json!([{"what": "w|1", "why": "y|2"}]));
    });
    let readme = super::layout_readme(&l).expect("renders");
    assert!(
        readme.contains("\nProse with a | pipe and `code`.\n"),
        "{readme}"
    );
    assert!(
        readme.contains("| TTFT\\|p99 | `1 s` | a\\|b |"),
        "{readme}"
    );
    assert!(readme.contains("- w\\|1: y\\|2\n"), "{readme}");
    // Every table row has exactly as many unescaped pipes as its header.
    for line in readme.lines().filter(|l| l.starts_with("| TTFT")) {
        assert_eq!(line.replace("\\|", "").matches('|').count(), 4, "{line}");
    }
}

#[test]
fn sections_without_content_say_so() {
    let l = layout(MIXED, |o| {
        for k in ["workload", "figures", "deviations", "bench"] {
            o.remove(k);
        }
    });
    let readme = super::layout_readme(&l).expect("renders");
    for said in [
        "No workload guidance recorded.\n\n## Topology",
        "None recorded.\n\n",
        "No bench workload recorded;",
    ] {
        assert!(readme.contains(said), "missing {said:?} in\n{readme}");
    }
    let index = super::index_readme(&[&l], Some("\n## Guide\n\ntext\n\n")).expect("renders");
    assert!(
        index.contains("<!-- scenario guide -->\n\n## Guide\n\ntext\n\n## 布局 · Layouts"),
        "{index}"
    );
}
