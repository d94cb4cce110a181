//! Reading the catalog: `list` (its filters and narrow default), `show`, a
//! layout named by a unique suffix or a near name, and `--version`.

use crate::{P2P1D, run, run_with, samples};

#[test]
fn list_table_and_json() {
    let (code, out, _) = run(&["list"]);
    assert_eq!(code, 0);
    assert!(
        out.contains(P2P1D) && out.contains("<prefill 2 x dp2tp8; decode 1 x dp32tp1;>"),
        "{out}"
    );
    let (code, out, _) = run(&["list", "--format", "json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let rows = v.as_array().expect("array");
    assert_eq!(rows.len(), 3);
    for key in [
        "name", "model", "hardware", "topology", "nodes", "npus", "image", "verified", "recorded",
    ] {
        assert!(rows[0].get(key).is_some(), "missing {key}");
    }
}

#[test]
fn show_table_and_stable_json() {
    let (code, out, _) = run(&["show", P2P1D]);
    assert_eq!(code, 0);
    assert!(
        out.contains("DP MASTER") && out.contains("16-31 of 32"),
        "{out}"
    );
    let (code, out, _) = run(&["show", P2P1D, "--format", "json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["name"], P2P1D);
    assert_eq!(v["connector"], "MooncakeConnectorV1");
    assert_eq!(v["nodes"].as_array().map(Vec::len), Some(4));
    let node3 = &v["nodes"][3];
    assert_eq!(node3["dp_rank_start"], 16);
    assert_eq!(node3["dp_master"], 2);
    assert_eq!(node3["engine_id"], 1);
    assert_eq!(node3["kv_port"], 30200);
    assert_eq!(node3["ranks"][0]["dp_rank"], 16);
    assert_eq!(
        node3["ranks"][0]["kv_span"],
        serde_json::json!([30216, 30216])
    );
    assert_eq!(v["proxy"]["port"], 1999);
    assert_eq!(v["proxy"]["prefill"].as_array().map(Vec::len), Some(4));
    assert_eq!(v["proxy"]["decode"][16], serde_json::json!([3, 7100]));
    // `newer_images`: every later image of the table with an A3 build, in
    // version order, each with every documented field.
    let layout = samples().into_iter().find(|l| l.name() == P2P1D).unwrap();
    let want: Vec<&str> = pd_dsl::tables::IMAGES
        .iter()
        .filter(|i| i.version() > layout.image.version() && i.reference(layout.hardware).is_some())
        .map(|i| i.tag)
        .collect();
    let newer = v["newer_images"].as_array().expect("newer_images");
    let tags: Vec<&str> = newer.iter().filter_map(|n| n["tag"].as_str()).collect();
    let mut sorted = tags.clone();
    sorted.sort_by_key(|t| pd_dsl::tables::image(t).map(|i| i.version()));
    assert_eq!(tags, sorted);
    let mut want_sorted = want.clone();
    want_sorted.sort_by_key(|t| pd_dsl::tables::image(t).map(|i| i.version()));
    assert_eq!(tags, want_sorted);
    for n in newer {
        for key in [
            "tag",
            "vllm",
            "findings_added",
            "findings_removed",
            "flags_unaccepted",
            "config_keys_unread",
            "env_unread",
            "connector_unregistered",
            "proxy_flags_removed",
        ] {
            assert!(
                n.get(key).is_some(),
                "newer_images entry without `{key}`: {n}"
            );
        }
    }
}

#[test]
fn unknown_name_suggests_and_exits_2() {
    let (code, _, err) = run(&["show", "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1"]);
    assert_eq!(code, 2);
    assert!(err.contains(&format!("did you mean `{P2P1D}`")), "{err}");
    let (code, _, _) = run(&["render", "nope/nothing"]);
    assert_eq!(code, 2);
    let (code, _, err) = run(&["frobnicate"]);
    assert_eq!(code, 2, "{err}");
}

/// `--version`, and a layout named by a unique suffix of its name.
#[test]
fn version_and_unique_suffix_names() {
    let (code, out, _) = run(&["--version"]);
    assert_eq!(code, 0);
    assert_eq!(out.trim(), format!("catalog {}", env!("CARGO_PKG_VERSION")));
    // `a3-2p1d` ends one sample's name only.
    let (code, out, err) = run(&["show", "a3-2p1d", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["name"], P2P1D);
    // `1p1d` is no whole part of a name's end: not found, with a hint.
    let (code, _, err) = run(&["show", "p1d"]);
    assert_eq!(code, 2);
    assert!(err.contains("no layout named `p1d`"), "{err}");
    // A suffix several names end with names them all.
    let catalog = layouts::catalog().expect("catalog").to_vec();
    let (code, _, err) = run_with(&["show", "a3-1p1d-upstream"], Ok(catalog));
    assert_eq!(code, 2);
    assert!(
        err.contains("layout names: `") && err.contains("give more of the name"),
        "{err}"
    );
}

/// `catalog list` filters by model, hardware and node count, and its
/// default table leaves out what the name says.
#[test]
fn list_filters_and_a_narrow_default() {
    let all = samples();
    let (code, out, _) = run(&["list", "--format", "json", "--max-nodes", "2"]);
    assert_eq!(code, 0);
    let rows: serde_json::Value = serde_json::from_str(&out).expect("json");
    let want = all.iter().filter(|l| l.node_count() <= 2).count();
    assert!(want > 0 && want < all.len(), "the samples cover both sides");
    assert_eq!(rows.as_array().unwrap().len(), want);
    for r in rows.as_array().unwrap() {
        assert!(r["nodes"].as_u64().unwrap() <= 2, "{r}");
    }
    let hw = all[0].hardware.id;
    let (code, out, _) = run(&["list", "--format", "json", "--hardware", hw]);
    assert_eq!(code, 0);
    let rows: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        rows.as_array().unwrap().len(),
        all.iter().filter(|l| l.hardware.id == hw).count()
    );
    let (code, out, _) = run(&["list", "--model", "no-such-model"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("no layout matches the filters (3 registered)"),
        "{out}"
    );
    let (code, _, err) = run(&["list", "--hardware", "h100"]);
    assert_eq!(code, 2);
    assert!(err.contains("found --hardware `h100`"), "{err}");
    let (_, narrow, _) = run(&["list"]);
    let (_, wide, _) = run(&["list", "--wide"]);
    assert!(!narrow.contains("RECORDED") && wide.contains("RECORDED"));
    let widest = |t: &str| t.lines().map(str::len).max().unwrap_or(0);
    assert!(widest(&narrow) < widest(&wide), "{narrow}\n{wide}");
}
