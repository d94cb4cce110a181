//! `pd_dsl::import` over the fixtures in `tests/fixtures/import/`: every
//! good fixture imports to a layout that passes the rules (with its
//! acknowledgements) and survives the loader; every broken one reports the
//! finding and position asserted here (an error, or a convention warning
//! that `finish` acknowledges).

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl::import::{Input, Level, Options, finish, import, lint};
use std::path::{Path, PathBuf};

mod positions;
mod upstream_forms;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/import")
}

fn inputs(paths: &[PathBuf]) -> Vec<Input> {
    paths
        .iter()
        .map(|p| Input::new(p.display().to_string(), std::fs::read_to_string(p).unwrap()))
        .collect()
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

fn units() -> Vec<(Vec<PathBuf>, Options)> {
    let mut out = Vec::new();
    for f in files(&root().join("configs")) {
        out.push((vec![f], Options::default()));
    }
    for d in files(&root().join("scripts")) {
        let opts = Options {
            hardware: d.ends_with("a2-v31-mixed-2node").then(|| "a2".to_owned()),
            ..Options::default()
        };
        out.push((files(&d), opts));
    }
    out
}

#[test]
fn every_fixture_imports_and_passes_the_rules() {
    let units = units();
    assert!(units.len() >= 15, "{} fixtures", units.len());
    for (paths, opts) in units {
        let imported = import(&inputs(&paths), &opts).unwrap_or_else(|e| panic!("{e}"));
        let spec = finish(&imported).unwrap_or_else(|f| panic!("{paths:?}: {f:?}"));
        let layout = pd_dsl::check(&spec).unwrap_or_else(|d| panic!("{d}"));
        // The loader's format carries the same layout.
        let yaml = serde_saphyr::to_string(&spec).unwrap();
        let loaded = pd_dsl::load::from_yaml("x.yaml", &yaml).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(loaded.node_count(), layout.node_count());
        // Every rank of the input is one rank of the layout.
        let ranks: usize = layout.placement.nodes.iter().map(|n| n.ranks.len()).sum();
        assert_eq!(ranks, imported.ranks.len(), "{paths:?}");
    }
}

#[test]
fn upstream_engine_ids_and_adxl_ports_are_kept_and_acknowledged() {
    let p = root().join("configs/a3-v31-2p1d-v1.yaml");
    let imported = import(&inputs(&[p]), &Options::default()).unwrap();
    let spec = finish(&imported).unwrap();
    let ids = spec.engine_ids.as_ref().expect("ids differ from derived");
    let v = |x: &[pd_dsl::EngineId]| {
        x.iter()
            .map(|e| e.ids().iter().map(|x| x.value).collect::<Vec<_>>())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        (v(&ids.prefill), v(&ids.decode)),
        (vec![vec![0], vec![1]], vec![vec![2]])
    );
    let rules: Vec<&str> = spec.allow.iter().map(|a| a.rule.value.as_str()).collect();
    assert_eq!(rules, ["kv_port_in_adxl_range", "engine_id_parity"]);
    assert!(spec.allow[0].reason.value.starts_with("imported from "));
    let src = pd_dsl::import::print::layout_source(&spec);
    assert!(
        src.contains("topology: <prefill 2 x dp2tp8; decode 1 x dp32tp1;>"),
        "{src}"
    );
}

fn findings(paths: &[PathBuf], opts: &Options) -> Vec<(Level, Option<String>, u64, u64, String)> {
    lint(&inputs(paths), opts)
        .into_iter()
        .map(|f| (f.level, f.rule, f.line, f.column, f.message))
        .collect()
}

#[test]
fn broken_fixtures_say_what_and_where() {
    let b = root().join("broken");
    let one = |name: &str| findings(&[b.join(name)], &Options::default());
    let f = one("unknown-key.yaml");
    assert_eq!((f[0].0, f[0].2, f[0].3), (Level::Error, 5, 1));
    assert!(f[0].4.contains("`num_node`") && f[0].4.contains("did you mean `num_nodes`"));
    let f = one("missing-node.yaml");
    assert!(f[0].4.contains("expected nodes for ranks 16..32"), "{f:?}");
    let f = one("inconsistent-rank-start.yaml");
    assert_eq!(
        (f[0].2, f[0].4.as_str()),
        (
            44,
            "found DP rank start 8, expected 16: the nodes of an engine take consecutive rank ranges of 16"
        )
    );
    let f = one("port-collision.yaml");
    assert!(
        f.iter()
            .any(|x| x.0 == Level::Error && x.1.as_deref() == Some("port_collision")),
        "{f:?}"
    );
    let f = one("wrong-extra-shape.yaml");
    assert!(
        f.iter().any(|x| x
            .4
            .contains("`kv_connector_extra_config.decode` is {\"dp_size\":16")),
        "{f:?}"
    );
    // A convention: a warning at the `--additional-config` value, on the
    // folded `server_cmd`'s third line, acknowledged by `finish`.
    let f = one("dsa-cp-without-indexer.yaml");
    let dsa: Vec<_> = f
        .iter()
        .filter(|x| x.1.as_deref() == Some("dsa_cp_needs_indexer"))
        .collect();
    assert_eq!(dsa.len(), 1, "{f:?}");
    assert_eq!(
        (dsa[0].0, dsa[0].2, dsa[0].3),
        (Level::Warning, 13, 27),
        "{f:?}"
    );
    assert!(
        dsa[0]
            .4
            .contains("`DeepSeek-V3.1-Terminus-w4a8-mtp-QuaRot` (MLA attention)"),
        "{f:?}"
    );
    let spec = finish(
        &import(
            &inputs(&[b.join("dsa-cp-without-indexer.yaml")]),
            &Options::default(),
        )
        .unwrap(),
    )
    .unwrap();
    assert!(
        spec.allow
            .iter()
            .any(|a| a.rule.value == "dsa_cp_needs_indexer"),
        "{:?}",
        spec.allow
    );
    let f = findings(&[b.join("computed-scripts/serve.sh")], &Options::default());
    assert_eq!((f[0].2, f[0].3), (16, 16));
    assert!(f[0].4.contains("`--max-num-seqs $((4 * 4))`"), "{f:?}");
    // A hard rule makes the import fail.
    let imported = import(
        &inputs(&[b.join("port-collision.yaml")]),
        &Options::default(),
    )
    .unwrap();
    assert!(finish(&imported).is_err());
}
