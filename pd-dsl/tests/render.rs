//! Snapshots of every artifact of representative layouts (built at run time
//! from JSON specs, checked by the same rules as `layout!`), plus the
//! renderer's write/check behaviour.

use pd_dsl::render::{self, Artifact, StaleKind};
use pd_dsl::{Layout, LayoutSpec};

const FIXTURES: [(&str, &str); 3] = [
    ("v3_1_a3_2p1d", include_str!("fixtures/v3_1_a3_2p1d.json")),
    ("v4_flash_a3_1p1d", include_str!("fixtures/v4_flash_a3_1p1d.json")),
    ("v3_1_a2_mixed_2node", include_str!("fixtures/v3_1_a2_mixed_2node.json")),
];

fn load(json: &str) -> Layout {
    let spec: LayoutSpec = match serde_json::from_str(json) {
        Ok(s) => s,
        Err(e) => panic!("fixture does not parse: {e}"),
    };
    match pd_dsl::check(&spec) {
        Ok(l) => l,
        Err(d) => panic!("fixture breaks rules:\n{d}"),
    }
}

fn layouts() -> Vec<Layout> {
    FIXTURES.iter().map(|(_, j)| load(j)).collect()
}

fn snapshot_name(fixture: &str, a: &Artifact) -> String {
    let file = a
        .path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{fixture}__{file}")
}

#[test]
fn fixtures_pass_the_rules() {
    assert_eq!(layouts().len(), 3);
}

#[test]
fn artifacts_match_snapshots() {
    for (name, json) in FIXTURES {
        let layout = load(json);
        let artifacts = match render::render_layout(&layout) {
            Ok(a) => a,
            Err(e) => panic!("{name}: {e}"),
        };
        for a in &artifacts {
            insta::assert_snapshot!(snapshot_name(name, a), a.contents);
        }
    }
}

#[test]
fn index_matches_snapshot() {
    let artifacts = match render::render_catalog_with(&layouts(), Some("*scenario guide goes here*")) {
        Ok(a) => a,
        Err(e) => panic!("{e}"),
    };
    for a in artifacts.iter().filter(|a| a.path.components().count() == 1) {
        insta::assert_snapshot!(format!("index__{}", a.path.display()), a.contents);
    }
}
