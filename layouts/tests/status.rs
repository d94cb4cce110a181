//! The deployment status is derived from the acknowledged rules and the
//! image table, and shown where "verified" is read.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use pd_dsl::{DeployStatus, Rule};
use std::process::Command;

const BLOCKED: &str = "deepseek-v4-flash-w8a8-mtp/a3-2p1d-v1";

#[test]
fn only_the_v1_connector_on_a_pre_hybrid_image_is_blocked() {
    for l in layouts::catalog().unwrap() {
        let want = if l.name() == BLOCKED {
            // MooncakeConnectorV1 carries DeepSeek-V4's hybrid KV from
            // v0.22.1rc1 (vllm-ascend #10342).
            DeployStatus::BlockedOnImage {
                rule: Rule::ConnectorHybridKv,
                first_image: Some("v0.22.1rc1"),
            }
        } else {
            DeployStatus::Deployable
        };
        assert_eq!(l.deploy_status(), want, "{}", l.name());
    }
}

#[test]
fn the_status_follows_the_image_not_the_name() {
    let l = layouts::catalog()
        .unwrap()
        .iter()
        .find(|l| l.name() == BLOCKED)
        .unwrap();
    // On the first image that can run it, the rule no longer fires.
    let mut spec = l.spec.clone();
    spec.image.value = "v0.22.1rc1".into();
    assert!(!pd_dsl::check::violations(&spec).contains(&Rule::ConnectorHybridKv));
    spec.image.value = "v0.21.0rc1".into();
    assert!(pd_dsl::check::violations(&spec).contains(&Rule::ConnectorHybridKv));
}

#[test]
fn catalog_list_shows_the_status_in_the_verified_column() {
    let out = Command::new(env!("CARGO_BIN_EXE_catalog"))
        .arg("list")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let row = text.lines().find(|l| l.starts_with(BLOCKED)).unwrap();
    assert!(row.contains("blocked on image (needs v0.22.1rc1)"), "{row}");
    assert_eq!(text.matches("blocked on image").count(), 1, "{text}");
    let out = Command::new(env!("CARGO_BIN_EXE_catalog"))
        .args(["list", "--format", "json"])
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == BLOCKED)
        .unwrap();
    assert_eq!(
        row["deploy"],
        serde_json::json!({"status": "blocked_on_image", "rule": "connector_hybrid_kv", "first_image": "v0.22.1rc1"})
    );
}
