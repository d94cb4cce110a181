//! The printed Rust of the import round trip: for every fixture under
//! `tests/fixtures/import/` (not `broken/`), the `layout!` source
//! `catalog import` prints is committed in `tests/imported/` and compiled
//! here by the real macro. A test asserts each committed file is what the
//! importer prints today, and that the macro's layout and the `--format
//! yaml` output read back by the loader render exactly the artifacts (byte
//! for byte) of the imported spec, which `import_round_trip/` renders,
//! runs and compares with the input: the round trip covers the printed Rust
//! and YAML alike.
//!
//! After an importer or printer change, rewrite the files with
//! `PD_BLESS=1 cargo test -p pd-dsl-tests --test import_printed` and read
//! the diff before committing it.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl::LayoutSpec;
use pd_dsl::import::{Input, Options, finish, import, print};
use pd_dsl_tests::harness::{sorted, workspace};
use std::path::{Path, PathBuf};

/// One module per fixture: `include!` of its printed file.
macro_rules! printed {
    ($($module:ident => $file:literal,)*) => {
        $(
            mod $module {
                include!(concat!("../imported/", $file));
            }
        )*
        /// File name under `tests/imported/` → the macro's layout.
        const PRINTED: &[(&str, fn() -> LayoutSpec)] = &[$(($file, $module::imported),)*];
    };
}

printed! {
    config_950dt_v31_1p1d_v1 => "config-950dt-v31-1p1d-v1.rs",
    config_a2_v31_1p1d_v1 => "config-a2-v31-1p1d-v1.rs",
    config_a2_v31_mixed_1node => "config-a2-v31-mixed-1node.rs",
    config_a3_v31_1p1d_layerwise => "config-a3-v31-1p1d-layerwise.rs",
    config_a3_v31_1p2d_adxl => "config-a3-v31-1p2d-adxl.rs",
    config_a3_v31_2p1d_v1 => "config-a3-v31-2p1d-v1.rs",
    config_a3_v31_mixed_2node_internal => "config-a3-v31-mixed-2node-internal.rs",
    config_a3_v4_1p1d_hybrid => "config-a3-v4-1p1d-hybrid.rs",
    config_a3_v4_1p3d_hybrid => "config-a3-v4-1p3d-hybrid.rs",
    config_a3_v4_mixed_1node => "config-a3-v4-mixed-1node.rs",
    scripts_950dt_v31_1p1d_layerwise => "scripts-950dt-v31-1p1d-layerwise.rs",
    scripts_a2_v31_mixed_2node => "scripts-a2-v31-mixed-2node.rs",
    scripts_a3_v31_2p1d_v1 => "scripts-a3-v31-2p1d-v1.rs",
    scripts_a3_v31_mixed_1node => "scripts-a3-v31-mixed-1node.rs",
    scripts_a3_v4_1p1d_hybrid => "scripts-a3-v4-1p1d-hybrid.rs",
}

/// Every fixture: its printed file name, its inputs (named as from the
/// workspace root, so the printed `imported from FILE:LINE` is stable) and
/// options.
fn units() -> Vec<(String, Vec<Input>, Options)> {
    let root = workspace();
    let input = |p: &Path| {
        let name = p.strip_prefix(&root).unwrap().display().to_string();
        Input::new(name, std::fs::read_to_string(p).unwrap())
    };
    let dir = root.join("tests/fixtures/import");
    let mut out = Vec::new();
    for f in sorted(&dir.join("configs")) {
        let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
        out.push((
            format!("config-{stem}.rs"),
            vec![input(&f)],
            Options::default(),
        ));
    }
    for d in sorted(&dir.join("scripts")) {
        let name = d.file_name().unwrap().to_string_lossy().into_owned();
        let opts = Options {
            hardware: (name == "a2-v31-mixed-2node").then(|| "a2".to_owned()),
            // The first script's stem would name every set alike.
            name: Some(format!("imported/{name}")),
            ..Options::default()
        };
        let inputs = sorted(&d).iter().map(|p| input(p)).collect();
        out.push((format!("scripts-{name}.rs"), inputs, opts));
    }
    out
}

fn imported_spec(inputs: &[Input], opts: &Options) -> LayoutSpec {
    let imported = import(inputs, opts).unwrap_or_else(|e| panic!("{e}"));
    finish(&imported).unwrap_or_else(|f| panic!("{f:?}"))
}

/// Every artifact of a layout, path → contents.
fn rendered(spec: &LayoutSpec) -> Vec<(PathBuf, String)> {
    render(&pd_dsl::check(spec).unwrap_or_else(|d| panic!("{d}")))
}

fn render(layout: &pd_dsl::Layout) -> Vec<(PathBuf, String)> {
    pd_dsl::render::render_layout(layout)
        .expect("render")
        .into_iter()
        .map(|a| (a.path, a.contents))
        .collect()
}

#[test]
fn the_committed_printed_source_is_what_import_prints() {
    let bless = std::env::var_os("PD_BLESS").is_some();
    let dir = workspace().join("tests/imported");
    let mut stale = Vec::new();
    for (file, inputs, opts) in units() {
        let text = print::layout_file(&imported_spec(&inputs, &opts));
        let path = dir.join(&file);
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &text).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(file);
        }
    }
    assert!(
        stale.is_empty(),
        "stale printed layouts in tests/imported/: {stale:?}; rewrite them with `PD_BLESS=1 cargo test -p pd-dsl-tests --test import_printed` and read the diff"
    );
}

#[test]
fn every_fixture_has_its_printed_source_compiled_here() {
    let want: Vec<String> = units().into_iter().map(|(f, _, _)| f).collect();
    let have: Vec<&str> = PRINTED.iter().map(|(f, _)| *f).collect();
    assert_eq!(
        have, want,
        "add a line to `printed!` for each fixture (file names in fixture order)"
    );
}

#[test]
fn the_printed_layout_renders_what_the_imported_spec_renders() {
    let units = units();
    for (file, f) in PRINTED {
        let (_, inputs, opts) = units
            .iter()
            .find(|(u, _, _)| u == file)
            .unwrap_or_else(|| panic!("{file}: no such fixture"));
        let spec = imported_spec(inputs, opts);
        let theirs = rendered(&spec);
        // `--format yaml` through the loader, as the round trip renders it.
        let yaml = serde_saphyr::to_string(&spec).expect("yaml");
        let loaded = pd_dsl::load::from_yaml(file, &yaml).unwrap_or_else(|e| panic!("{e}"));
        for (what, ours) in [
            ("the macro's layout", rendered(&f())),
            ("the loaded YAML", render(&loaded)),
        ] {
            assert_eq!(
                ours.iter().map(|(p, _)| p).collect::<Vec<_>>(),
                theirs.iter().map(|(p, _)| p).collect::<Vec<_>>(),
                "{file}: artifact list of {what}"
            );
            for ((path, a), (_, b)) in ours.iter().zip(&theirs) {
                assert!(
                    a == b,
                    "{file}: {} differs between {what} and the imported spec",
                    path.display()
                );
            }
        }
    }
}
