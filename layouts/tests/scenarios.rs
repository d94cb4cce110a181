//! The scenario guide only points at registered layouts: every need and
//! every reference row of the tutorial links a layout that exists, and the
//! guide renders those links.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use layouts::scenarios::{A3_TUNING, A950DT_TUNING, SCENARIOS};

#[test]
fn every_scenario_links_a_registered_layout() {
    let catalog = layouts::catalog().expect("catalog");
    let guide = layouts::scenarios::scenario_guide();
    for s in SCENARIOS {
        assert!(
            catalog.iter().any(|l| l.name() == s.layout),
            "scenario {:?} links unknown layout {}",
            s.need,
            s.layout
        );
        assert!(
            guide.contains(&format!("[`{0}`]({0}/README.md)", s.layout)),
            "guide misses the link of {:?}",
            s.need
        );
    }
}

#[test]
fn every_reference_row_links_a_registered_layout() {
    let catalog = layouts::catalog().expect("catalog");
    let guide = layouts::scenarios::scenario_guide();
    for r in A3_TUNING.iter().chain(A950DT_TUNING) {
        assert!(
            catalog.iter().any(|l| l.name() == r.layout),
            "row {} / {} links unknown layout {}",
            r.scenario,
            r.config,
            r.layout
        );
        assert!(
            guide.contains(&format!("]({}/README.md) |", r.layout)),
            "{}",
            r.layout
        );
        assert!(
            SCENARIOS.iter().any(|s| s.layout == r.layout),
            "no need in the guide leads to {}",
            r.layout
        );
    }
    assert!(guide.contains(
        "| long context (64k) | P node | 16 | 16 | 1 | 132k | 3 | [`a3-2p1d-64k`](deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d-64k/README.md) |"
    ));
}
