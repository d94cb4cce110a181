//! `--k8s-disaggregated-set`: refused for every layout, naming why.

use crate::layouts;
use pd_dsl::Role;
use pd_dsl::render::k8s::{self, K8sSettings, disaggregated};
use pd_dsl::render::{self, RenderError};
use serde_json::Value;
use std::path::Path;

/// The role bounds the refusal quotes are the CRD schema's.
#[test]
fn the_refusal_quotes_the_disaggregatedset_schema() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("k8s/disaggregatedsets.disaggregatedset.x-k8s.io_v1.schema.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("schema")).expect("json");
    let roles = &schema["properties"]["spec"]["properties"]["roles"];
    assert_eq!(roles["minItems"], disaggregated::MIN_ROLES);
    assert_eq!(roles["maxItems"], disaggregated::MAX_ROLES);
}

/// Every layout is refused, nothing written: a mixed one for its one role,
/// a PD one for its pods found by name (the first node's pod named), and
/// each role of several engines for engines that differ (their KV engine
/// ids and first nodes, recomputed from the placement).
#[test]
fn every_layout_is_refused_naming_why() {
    let settings = K8sSettings {
        disaggregated_set: true,
        ..K8sSettings::default()
    };
    let mut pd_seen = false;
    let mut differing_seen = false;
    for l in layouts() {
        let rendered = render::render_layout(&l).expect("render");
        let e = k8s::artifacts(&l, &settings, &rendered).expect_err("refused");
        let RenderError::Layout { layout, message } = &e else {
            panic!("{e}");
        };
        assert_eq!(layout, l.name());
        if !l.is_pd() {
            assert!(
                message.starts_with(&format!(
                    "found a mixed layout (one role, `mixed`, {} engine(s)), expected 2 to 10 roles",
                    l.placement.engines.len()
                )),
                "{message}"
            );
            continue;
        }
        pd_seen = true;
        let names = k8s::names(&l).expect("names");
        assert!(
            message.starts_with(&format!(
                "found a prefill/decode layout whose proxy and `run.sh` find every node by its pod name ({}, ...), expected pods found by label",
                names.node_hosts[0]
            )),
            "{message}"
        );
        assert!(message.contains("revision hash"), "{message}");
        assert!(message.contains("LeaderWorkerSet v0.10.0"), "{message}");
        for role in [Role::Prefill, Role::Decode] {
            let engines: Vec<_> = l
                .placement
                .engines
                .iter()
                .filter(|e| e.role == role)
                .collect();
            let ids: Vec<String> = engines
                .iter()
                .map(|e| e.engine_id.map_or("-".to_owned(), |i| i.to_string()))
                .collect();
            let firsts: Vec<String> = engines.iter().map(|e| e.nodes[0].to_string()).collect();
            let clause = format!(
                "its {} {role} engines differ (KV engine ids {}, first nodes {})",
                engines.len(),
                ids.join(", "),
                firsts.join(", ")
            );
            assert_eq!(
                message.contains(&clause),
                engines.len() > 1,
                "{}: `{clause}` in {message}",
                l.name()
            );
            differing_seen |= engines.len() > 1;
        }
    }
    assert!(pd_seen && differing_seen);
}
