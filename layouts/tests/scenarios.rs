//! The scenario guide only points at registered layouts, and the variations
//! it recommends pass the same rules as everything else.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use layouts::scenarios::SCENARIOS;
use pd_dsl::{EngineGroup, LayoutSpec, Role, Spanned};

fn registered(name: &str) -> LayoutSpec {
    layouts::specs()
        .into_iter()
        .find(|s| s.name.value == name)
        .unwrap_or_else(|| panic!("{name} is not registered"))
}

fn group(role: Role, count: u64, dp: u64, tp: u64) -> EngineGroup {
    EngineGroup {
        role: Spanned::bare(role),
        count: Spanned::bare(count),
        dp: Spanned::bare(dp),
        tp: Spanned::bare(tp),
        ..EngineGroup::default()
    }
}

#[test]
fn every_scenario_starts_from_a_registered_layout() {
    let catalog = layouts::catalog().expect("catalog");
    for s in SCENARIOS {
        assert!(
            catalog.iter().any(|l| l.name() == s.start_from),
            "scenario {:?} starts from unknown layout {}",
            s.need,
            s.start_from
        );
    }
    let guide = layouts::scenarios::scenario_guide();
    assert!(guide.contains("| long context (64k) | P node | 16 | 16 | 1 | 132k | 3 |"));
}

#[test]
fn the_low_latency_variation_passes_the_rules() {
    let mut spec = registered("deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp4tp4");
    spec.topology = vec![group(Role::Mixed, 1, 2, 8)];
    let layout = pd_dsl::check(&spec).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(layout.node_count(), 1);
}

#[test]
fn the_long_context_variation_passes_once_lmhead_tp_is_dropped() {
    let mut spec = registered("deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d");
    spec.topology = vec![group(Role::Prefill, 2, 1, 16), group(Role::Decode, 1, 8, 4)];
    let err = pd_dsl::check(&spec).expect_err("lmhead TP 16 on decode TP4 must be refused");
    assert!(
        err.iter()
            .any(|d| d.rule == pd_dsl::Rule::LmheadTensorParallel),
        "{err}"
    );
    spec.roles
        .get_mut(&Role::Decode)
        .expect("decode block")
        .additional_config
        .remove("finegrained_tp_config");
    let layout = pd_dsl::check(&spec).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(layout.node_count(), 4);
    assert_eq!(layout.placement.proxy.prefill.len(), 2);
    assert_eq!(layout.placement.proxy.decode.len(), 8);
}
