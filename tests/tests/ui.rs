//! `layout!` compile-fail and pass cases (trybuild), and the guard that every
//! rule has its compile-fail case.

use std::path::Path;

/// Rules no layout can break today, with the reason. Each entry is
/// re-checked below so it leaves this list as soon as it becomes reachable.
const UNREACHABLE: &[(&str, &str)] = &[];

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/fail/*.rs");
    t.pass("ui/pass/*.rs");
}

#[test]
fn every_rule_has_a_compile_fail_case() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/fail");
    let mut missing = Vec::new();
    for rule in pd_dsl::Rule::ALL {
        let name = rule.name();
        let case = dir.join(format!("{name}.rs"));
        let stderr = dir.join(format!("{name}.stderr"));
        if UNREACHABLE.iter().any(|(n, _)| *n == name) {
            assert!(
                !case.exists(),
                "`{name}` has a case; drop it from UNREACHABLE"
            );
            continue;
        }
        if !case.exists() || !stderr.exists() {
            missing.push(name);
            continue;
        }
        let text = std::fs::read_to_string(&stderr).unwrap_or_default();
        assert!(
            text.contains(&format!("[rule `{name}`]")),
            "tests/ui/fail/{name}.stderr does not report rule `{name}`"
        );
    }
    assert!(
        missing.is_empty(),
        "rules without a compile-fail case tests/ui/fail/<rule>.rs: {missing:?}"
    );
    for (name, _) in UNREACHABLE {
        assert!(
            pd_dsl::Rule::from_name(name).is_some(),
            "`{name}` is not a rule"
        );
    }
}

/// The rule table of `pd-dsl-macros/doc/layout.md` names every rule and its
/// compile-fail case.
#[test]
fn the_layout_reference_lists_every_rule() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../pd-dsl-macros/doc/layout.md"),
    )
    .unwrap_or_default();
    let missing: Vec<&str> = pd_dsl::Rule::ALL
        .iter()
        .map(|r| r.name())
        .filter(|name| !doc.contains(&format!("| `{name}` | `tests/ui/fail/{name}.rs`")))
        .collect();
    assert!(
        missing.is_empty(),
        "pd-dsl-macros/doc/layout.md's rule table lacks {missing:?}"
    );
}
