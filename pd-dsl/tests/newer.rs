//! What a later image changes for a layout (`Layout::newer_images`), on a
//! sample layout moved to v0.18.0 that passes a `vllm serve` flag, an env
//! variable and an `additional_config` key later releases drop: each is
//! reported on exactly the later images whose facts lack it, and the rule
//! findings follow the checker with the image replaced.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl::upstream;

const MIXED: &str = include_str!("fixtures/v3_1_a2_mixed_2node.json");
const BLOCKED: &str = include_str!("fixtures/v4_flash_a3_1p1d.json");

fn layout(json: &str, edit: impl FnOnce(&mut serde_json::Value)) -> pd_dsl::Layout {
    let mut v: serde_json::Value = serde_json::from_str(json).expect("fixture parses");
    edit(&mut v);
    let spec: pd_dsl::LayoutSpec = serde_json::from_value(v).expect("spec");
    pd_dsl::check(&spec).unwrap_or_else(|d| panic!("{d}"))
}

#[test]
fn dropped_flag_env_and_key_are_reported_where_the_facts_lack_them() {
    // vllm/engine/arg_utils.py @0.18.0 defines `--calculate-kv-scales`,
    // later vLLMs do not; vllm_ascend reads `ASCEND_LAUNCH_BLOCKING` and
    // `additional_config.multistream_overlap_gate` at v0.18.0 only on some releases.
    let l = layout(MIXED, |v| {
        v["image"] = "v0.18.0".into();
        let serve = &mut v["serve"];
        serve["flags"] = serde_json::json!([{"name": "--calculate-kv-scales"}]);
        serve["env"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"name": "ASCEND_LAUNCH_BLOCKING", "value": "1"}));
        serve["additional_config"] = serde_json::json!({"multistream_overlap_gate": true});
    });
    let newer = l.newer_images();
    assert!(!newer.is_empty());
    let own = l.image.facts().unwrap();
    assert!(own.reads_env("ASCEND_LAUNCH_BLOCKING"));
    assert!(own.config_key("multistream_overlap_gate").is_some());
    let mut flag_seen = false;
    let mut env_seen = false;
    let mut key_seen = false;
    for n in &newer {
        let img = pd_dsl::tables::image(n.tag).unwrap();
        assert!(img.version() > l.image.version());
        let v = upstream::vllm(img.vllm()).unwrap();
        let lacks_flag = !v
            .serve_flags
            .iter()
            .any(|f| f.name == "calculate-kv-scales");
        assert_eq!(
            n.flags_unaccepted
                .contains(&"--calculate-kv-scales".to_owned()),
            lacks_flag,
            "{}",
            n.tag
        );
        let facts = img.facts().unwrap();
        assert_eq!(
            n.env_unread.contains(&"ASCEND_LAUNCH_BLOCKING".to_owned()),
            !facts.reads_env("ASCEND_LAUNCH_BLOCKING"),
            "{}",
            n.tag
        );
        assert_eq!(
            n.config_keys_unread
                .contains(&"multistream_overlap_gate".to_owned()),
            facts.config_key("multistream_overlap_gate").is_none(),
            "{}",
            n.tag
        );
        // Derived flags every pinned vLLM accepts are never reported.
        assert!(
            !n.flags_unaccepted
                .iter()
                .any(|f| f == "--tensor-parallel-size")
        );
        flag_seen |= lacks_flag;
        env_seen |= !n.env_unread.is_empty();
        key_seen |= !n.config_keys_unread.is_empty();
        // A key the newer image ignores is also a new finding of the rules.
        if facts.config_key("multistream_overlap_gate").is_none() {
            assert!(
                n.findings_added
                    .iter()
                    .any(|f| f.rule == "unknown_additional_config_key"
                        && f.field
                            .ends_with("additional_config.multistream_overlap_gate")),
                "{}: {:?}",
                n.tag,
                n.findings_added
            );
        }
        assert_eq!(n.is_unchanged(), n.lines().is_empty());
    }
    assert!(flag_seen && env_seen && key_seen);
}

#[test]
fn a_blocked_layout_clears_its_rule_on_the_first_image_that_runs_it() {
    // The sample on `mooncake_v1`, which cannot carry DeepSeek-V4's hybrid
    // KV before v0.22.1rc1, acknowledged.
    let l = layout(BLOCKED, |v| {
        v["connector"]["kind"] = "mooncake_v1".into();
        v["allow"] =
            serde_json::json!([{"rule": "connector_hybrid_kv", "reason": "the sample blocked"}]);
    });
    let pd_dsl::DeployStatus::BlockedOnImage {
        rule,
        first_image: Some(first),
    } = l.deploy_status()
    else {
        panic!("the sample is blocked on its image: {}", l.deploy_status());
    };
    for n in l.newer_images() {
        let img = pd_dsl::tables::image(n.tag).unwrap();
        let first = pd_dsl::tables::image(first).unwrap();
        assert_eq!(
            n.findings_removed.iter().any(|f| f.rule == rule.name()),
            img.version() >= first.version(),
            "{}",
            n.tag
        );
    }
}
