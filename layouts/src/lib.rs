//! The registered catalog: every layout, one module per model family.
//!
//! Layouts are checked twice by the same rule code: by the compiler (each
//! `layout!` call) and once more when the registry builds them, which also
//! checks what no single layout can see (unique names, `derived_from` links).

use pd_dsl::{Layout, LayoutSpec};
use std::collections::BTreeSet;
use std::sync::LazyLock;

pub mod calibrate_cmd;
pub mod cli;
pub mod deepseek_v3_1;
pub mod deepseek_v3_1_reference;
pub mod deepseek_v4_flash;
pub mod diff_cmd;
pub mod plan_cmd;
pub mod rules_cmd;
pub mod scenarios;
pub mod snippets;
pub mod upstream;

/// Every registered layout as written, in registration order.
pub fn specs() -> Vec<LayoutSpec> {
    let mut all = deepseek_v4_flash::all();
    all.extend(deepseek_v3_1::all());
    all.extend(deepseek_v3_1_reference::all());
    all.extend(upstream::all());
    all
}

static CATALOG: LazyLock<Result<Vec<Layout>, String>> = LazyLock::new(|| build(specs()));

/// Checks and derives a set of layouts as one catalog: every layout passes
/// its rules, names are unique, and every `derived_from` names a layout of
/// the set. Sorted by name.
pub fn build(specs: Vec<LayoutSpec>) -> Result<Vec<Layout>, String> {
    let mut errors = Vec::new();
    let mut layouts = Vec::new();
    for spec in specs {
        match pd_dsl::check(&spec) {
            Ok(layout) => layouts.push(layout),
            Err(d) => errors.push(format!("layout `{}`:\n{d}", spec.name.value)),
        }
    }
    layouts.sort_by(|a, b| a.name().cmp(b.name()));
    let mut names = BTreeSet::new();
    for l in &layouts {
        if !names.insert(l.name().to_owned()) {
            errors.push(format!(
                "layout `{}` is registered twice, expected unique names: each layout renders to its own directory",
                l.name()
            ));
        }
    }
    for l in &layouts {
        if let Some(d) = &l.spec.provenance.derived_from
            && !names.contains(&d.value)
        {
            errors.push(format!(
                "layout `{}` is derived from `{}`, expected a registered layout{}",
                l.name(),
                d.value,
                pd_dsl::rules::did_you_mean(&d.value, names.iter().map(String::as_str))
            ));
        }
    }
    if errors.is_empty() {
        Ok(layouts)
    } else {
        Err(errors.join("\n"))
    }
}

/// The registered catalog, checked once per process.
pub fn catalog() -> Result<&'static [Layout], String> {
    CATALOG.as_deref().map_err(Clone::clone)
}
