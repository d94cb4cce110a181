//! `layout!` compile-fail and pass cases (trybuild), and the guards that every
//! rule has its compile-fail case and, beside it, the minimal fix of it
//! (compiled by `fixed.rs`).

use std::path::Path;

/// Rules no layout can break today, with the reason. Each entry is
/// re-checked below so it leaves this list as soon as it becomes reachable.
const UNREACHABLE: &[(&str, &str)] = &[];

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/fail/*.rs");
    t.pass("ui/pass/*.rs");
    // The fixed cases compile in one binary: tests/fixed.rs.
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

/// Lines a fixed case may change in its compile-fail case (a changed line
/// counts once), so the fix shown next to the rule stays the fix.
const MAX_FIX_LINES: usize = 6;

/// The layout of a case without its leading `//!` doc lines.
fn layout_of(case: &str) -> String {
    case.lines()
        .skip_while(|l| l.starts_with("//!"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Lines changed from `a` to `b`: a replaced run counts its longer side.
fn changed_lines(a: &str, b: &str) -> usize {
    similar::TextDiff::from_lines(a, b)
        .ops()
        .iter()
        .map(|op| match op.as_tag_tuple() {
            (similar::DiffTag::Equal, _, _) => 0,
            (_, old, new) => old.len().max(new.len()),
        })
        .sum()
}

/// Every rule's compile-fail case `ui/fail/<rule>.rs` has its fix
/// `ui/fixed/<rule>.rs` (compiled by `tests/fixed.rs`): the same layout with at
/// most [`MAX_FIX_LINES`] lines changed, its first line `//! ` and the one
/// sentence saying what changed and why. Every fixed case fixes a rule's
/// compile-fail case.
#[test]
fn every_compile_fail_case_has_its_minimal_fix() {
    let ui = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui");
    let mut missing = Vec::new();
    for rule in pd_dsl::Rule::ALL {
        let name = rule.name();
        let Ok(fail) = std::fs::read_to_string(ui.join(format!("fail/{name}.rs"))) else {
            // UNREACHABLE: no case to fix (the guard above holds the list).
            continue;
        };
        let Ok(fixed) = std::fs::read_to_string(ui.join(format!("fixed/{name}.rs"))) else {
            missing.push(name);
            continue;
        };
        let first = fixed.lines().next().unwrap_or_default();
        let sentence = first.strip_prefix("//! ").unwrap_or_default();
        assert!(
            !sentence.trim().is_empty()
                && fixed.lines().nth(1).is_some_and(|l| !l.starts_with("//!")),
            "tests/ui/fixed/{name}.rs: the first line is `//! ` and one sentence saying what changed and why, and the only doc line; found {first:?}"
        );
        let (fail, fixed) = (layout_of(&fail), layout_of(&fixed));
        assert_ne!(
            fail, fixed,
            "tests/ui/fixed/{name}.rs is its compile-fail case unchanged"
        );
        let changed = changed_lines(&fail, &fixed);
        assert!(
            changed <= MAX_FIX_LINES,
            "tests/ui/fixed/{name}.rs changes {changed} lines of tests/ui/fail/{name}.rs, expected at most {MAX_FIX_LINES}: the fix shown beside the rule is the minimal one"
        );
    }
    assert!(
        missing.is_empty(),
        "rules whose compile-fail case has no fixed case tests/ui/fixed/<rule>.rs: {missing:?}"
    );
    let mut strays = Vec::new();
    for entry in std::fs::read_dir(ui.join("fixed"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let path = entry.path();
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        let is_fix = path.extension().is_some_and(|e| e == "rs")
            && pd_dsl::Rule::from_name(stem).is_some()
            && ui.join(format!("fail/{stem}.rs")).is_file();
        if !is_fix {
            strays.push(path.display().to_string());
        }
    }
    assert!(
        strays.is_empty(),
        "files in tests/ui/fixed/ that fix no rule's compile-fail case tests/ui/fail/<rule>.rs: {strays:?}"
    );
}

#[test]
fn changed_lines_count_a_replaced_line_once() {
    assert_eq!(changed_lines("a\nb\nc\n", "a\nb\nc\n"), 0);
    assert_eq!(changed_lines("a\nb\nc\n", "a\nB\nc\n"), 1);
    assert_eq!(changed_lines("a\nb\nc\n", "a\nc\n"), 1);
    assert_eq!(changed_lines("a\nb\nc\n", "A\nb\nC\nd\n"), 3);
    assert_eq!(layout_of("//! why\n//! more\nuse x;\n"), "use x;\n");
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
