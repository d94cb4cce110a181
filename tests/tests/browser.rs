//! The HTML catalog in a real browser: the registered catalog plus a synthetic
//! 64-node layout (16P16D on A3, the largest shape `bench/` builds) are
//! rendered to a temporary directory and every page and picture is loaded in
//! headless Chromium by `tests/browser/check.mjs` (playwright-core), at a
//! desktop and a phone width. It fails on console errors, broken links,
//! overlapping or overflowing text in the topology picture, or a node count in
//! the picture that differs from the layout.
//!
//! Needs `/usr/bin/chromium` (Debian `chromium`) and `npm ci --prefix
//! tests/browser`; `scripts/test.sh` installs both. A missing one FAILS the
//! test, saying what to install. Screenshots are kept in
//! `target/tmp/browser-screenshots/` for a human to look at.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl::render;
use pd_dsl::{EngineGroup, LayoutSpec, Role, Spanned};
use std::path::Path;
use std::process::Command;

/// `prefill 16 x dp8tp4; decode 16 x dp32tp1` on A3: 64 nodes, 640 ranks (as
/// `pd_dsl_bench::Shape::large(16)`), from the V4-Flash 1P1D seed layout.
fn synthetic_64_nodes() -> LayoutSpec {
    let group = |role: Role, count: u64, dp: u64, tp: u64| EngineGroup {
        role: Spanned::bare(role),
        count: Spanned::bare(count),
        dp: Spanned::bare(dp),
        tp: Spanned::bare(tp),
        ..EngineGroup::default()
    };
    let mut spec = layouts::deepseek_v4_flash::a3_1p1d();
    spec.name = Spanned::bare("synthetic/a3-16p16d-64-nodes".to_owned());
    spec.provenance.derived_from = None;
    spec.topology = vec![
        group(Role::Prefill, 16, 8, 4),
        group(Role::Decode, 16, 32, 1),
    ];
    spec
}

#[test]
fn every_page_renders_cleanly_in_chromium() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let driver = here.join("browser");
    assert!(
        driver.join("node_modules/playwright-core").is_dir(),
        "playwright-core is not installed: run `npm ci --prefix tests/browser` (scripts/test.sh does)"
    );
    assert!(
        Path::new("/usr/bin/chromium").exists() || std::env::var_os("PD_CHROMIUM").is_some(),
        "`/usr/bin/chromium` is missing: install the Debian `chromium` package (scripts/test.sh does) or set PD_CHROMIUM"
    );

    let mut specs = layouts::specs();
    specs.push(synthetic_64_nodes());
    let catalog = layouts::build(specs).unwrap_or_else(|e| panic!("catalog: {e}"));
    let synthetic = catalog
        .iter()
        .find(|l| l.name().starts_with("synthetic/"))
        .expect("synthetic layout");
    assert_eq!(
        synthetic.node_count(),
        64,
        "the synthetic layout spans 64 nodes"
    );
    assert!(
        catalog.iter().any(|l| l.node_count() == 1),
        "the catalog has a 1-node layout"
    );
    let guide = layouts::scenarios::scenario_guide();
    let artifacts = render::render_catalog_with(&catalog, Some(&guide)).expect("render catalog");
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("catalog");
    render::write_catalog(&out, &artifacts).expect("write catalog");

    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser-screenshots");
    let _ = std::fs::remove_dir_all(&shots);
    let result = Command::new("node")
        .arg(driver.join("check.mjs"))
        .arg(&out)
        .arg(&shots)
        .output()
        .expect("run node (install the `nodejs` package)");
    let stdout = String::from_utf8_lossy(&result.stdout);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(
        result.status.success(),
        "the browser check failed ({}):\n{stdout}\n{stderr}",
        result.status
    );
    // Every page and picture was looked at: index + (page + svg) per layout,
    // at two widths.
    let expected = 2 * (1 + 2 * catalog.len());
    assert!(
        stdout.contains(&format!("check.mjs: {expected} page loads")),
        "expected {expected} page loads:\n{stdout}"
    );
    assert!(
        stdout.contains(&format!("{} pictures measured", 2 * 2 * catalog.len())),
        "expected every picture measured:\n{stdout}"
    );
    eprintln!("{stdout}");
}
