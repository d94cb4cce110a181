//! The rules reference of the catalog: `RULES.md` and `rules.html`, from
//! each rule's one declaration ([`crate::rules`]: name, severity, summary,
//! doc comment) and its fix: the layout of its compile-fail case
//! (`tests/ui/fail/<rule>.rs`) changed as an operator would to satisfy it
//! (`tests/ui/fixed/<rule>.rs`), compiled by the `ui` and `fixed` tests and
//! embedded here at build time. Every README and page cites a rule by a
//! link to its entry. `catalog explain RULE` prints the same text with the
//! rule's compile-fail layout, the compiler's error for it and the fix.

use super::docs::rules_md;
use super::site::rules_html;
use super::{Artifact, RenderError};
use crate::rules::Rule;
use serde::Serialize;
use std::fmt::Write as _;

include!(concat!(env!("OUT_DIR"), "/ui_cases.rs"));

/// File name of the Markdown reference at the catalog root.
pub const RULES_MD: &str = "RULES.md";
/// File name of the HTML reference at the catalog root.
pub const RULES_HTML: &str = "rules.html";

/// One compile-fail case of a rule.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Case {
    /// `tests/ui/fail/<file>.rs`.
    pub file: &'static str,
    /// The layout that breaks the rule.
    pub source: &'static str,
    /// What the compiler prints for it.
    pub error: &'static str,
}

/// Cases shown per rule.
pub const MAX_CASES: usize = 2;

/// The compile-fail cases whose expected error names `rule`: the rule's
/// own case first, then those that break it alone, at most [`MAX_CASES`].
pub fn cases(rule: Rule) -> Vec<Case> {
    let tag = format!("[rule `{}`]", rule.name());
    let mut found: Vec<Case> = UI_CASES
        .iter()
        .filter(|(_, _, err)| err.contains(&tag))
        .map(|&(file, source, error)| Case {
            file,
            source,
            error,
        })
        .collect();
    found.sort_by_key(|c| {
        (
            c.file != rule.name(),
            c.error.matches("error:").count(),
            c.file,
        )
    });
    found.truncate(MAX_CASES);
    found
}

/// The fix of a rule's compile-fail case: `tests/ui/fixed/<rule>.rs`.
#[derive(Clone, Debug, Serialize)]
pub struct Fix {
    /// `tests/ui/fixed/<file>.rs`, and `tests/ui/fail/<file>.rs` it fixes.
    pub file: &'static str,
    /// What changed and why: the case's first line, after `//! `.
    pub why: &'static str,
    /// The unified diff from the compile-fail layout to the fixed one.
    pub diff: String,
}

/// The fix of `rule`'s own compile-fail case, when it has both.
pub fn fix(rule: Rule) -> Option<Fix> {
    let name = rule.name();
    let (_, fail, _) = UI_CASES.iter().find(|(file, _, _)| *file == name)?;
    let (_, fixed) = UI_FIXES.iter().find(|(file, _)| *file == name)?;
    let why = fixed
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("//! "))
        .unwrap_or_default();
    Some(Fix {
        file: name,
        why,
        diff: unified_diff(name, fail, fixed),
    })
}

/// Lines of context around each change of a diff.
const CONTEXT: usize = 2;

/// The unified diff of two cases' layouts, the leading `//!` doc lines left
/// out (the fixed case's is the sentence shown beside the diff); hunk line
/// numbers are those of the files.
pub fn unified_diff(name: &str, fail: &str, fixed: &str) -> String {
    fn split(s: &str) -> (usize, &str) {
        let doc: usize = s
            .split_inclusive('\n')
            .take_while(|l| l.starts_with("//!"))
            .map(str::len)
            .sum();
        (s[..doc].lines().count(), &s[doc..])
    }
    let (fail_doc, fail) = split(fail);
    let (fixed_doc, fixed) = split(fixed);
    let diff = similar::TextDiff::from_lines(fail, fixed);
    let mut out = format!("--- tests/ui/fail/{name}.rs\n+++ tests/ui/fixed/{name}.rs\n");
    // `@@ -start,len`: a range's first line, or the line before an empty one.
    let range = |r: std::ops::Range<usize>, doc: usize| {
        let start = doc + r.start + usize::from(!r.is_empty());
        format!("{start},{}", r.len())
    };
    for group in diff.grouped_ops(CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let _ = writeln!(
            out,
            "@@ -{} +{} @@",
            range(first.old_range().start..last.old_range().end, fail_doc),
            range(first.new_range().start..last.new_range().end, fixed_doc)
        );
        for op in &group {
            for change in diff.iter_changes(op) {
                out.push(match change.tag() {
                    similar::ChangeTag::Equal => ' ',
                    similar::ChangeTag::Delete => '-',
                    similar::ChangeTag::Insert => '+',
                });
                out.push_str(change.value());
                if change.missing_newline() {
                    out.push('\n');
                }
            }
        }
    }
    out
}

/// One rule as the references show it.
#[derive(Clone, Debug)]
pub struct RuleEntry {
    /// Stable name (the anchor).
    pub name: &'static str,
    /// `hard` or `convention`.
    pub severity: &'static str,
    /// One line.
    pub summary: &'static str,
    /// The doc comment as text (may be empty).
    pub explanation: String,
    /// The fix of its compile-fail case.
    pub fix: Option<Fix>,
}

impl RuleEntry {
    /// A Markdown code fence longer than any run of backticks in the fix's
    /// diff, so no line of it can close the block.
    pub fn fence(&self) -> String {
        let longest = self.fix.as_ref().map_or(0, |f| {
            f.diff.split(|c| c != '`').map(str::len).max().unwrap_or(0)
        });
        "`".repeat(longest.max(2) + 1)
    }
}

/// Every rule, in table order.
pub fn entries() -> Vec<RuleEntry> {
    Rule::ALL
        .iter()
        .map(|&r| RuleEntry {
            name: r.name(),
            severity: r.severity().as_str(),
            summary: r.summary(),
            explanation: r.explanation(),
            fix: fix(r),
        })
        .collect()
}

/// `RULES.md` and `rules.html`.
pub fn artifacts() -> Result<Vec<Artifact>, RenderError> {
    let e = entries();
    Ok(vec![
        Artifact::new(RULES_MD, rules_md(&e)?),
        Artifact::new(RULES_HTML, rules_html(&e)?),
    ])
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_diff_leaves_the_doc_lines_out_and_numbers_the_files_lines() {
        let fail = "//! breaks it\n//! (two lines)\nuse x;\n\nfn main() {\n    a: 1,\n    b: 2,\n    c: 3,\n}\n";
        let fixed = "//! b set to 3\nuse x;\n\nfn main() {\n    a: 1,\n    b: 3,\n    c: 3,\n}\n";
        assert_eq!(
            unified_diff("r", fail, fixed),
            "--- tests/ui/fail/r.rs\n+++ tests/ui/fixed/r.rs\n@@ -5,5 +4,5 @@\n fn main() {\n     a: 1,\n-    b: 2,\n+    b: 3,\n     c: 3,\n }\n"
        );
    }

    #[test]
    fn every_rule_with_a_fixed_case_shows_its_fix() {
        for &r in Rule::ALL {
            let has_case = UI_FIXES.iter().any(|(f, _)| *f == r.name());
            let fix = fix(r);
            assert_eq!(fix.is_some(), has_case, "{}", r.name());
            if let Some(f) = fix {
                assert!(!f.why.is_empty(), "{}", r.name());
                assert!(
                    f.diff.lines().skip(2).any(|l| l.starts_with(['-', '+'])),
                    "{}",
                    r.name()
                );
            }
        }
    }

    #[test]
    fn the_fence_outlasts_the_backticks_of_the_diff() {
        let mut e = entries().remove(0);
        assert_eq!(e.fence(), "```");
        e.fix = Some(Fix {
            file: "x",
            why: "",
            diff: "+ a ```` b\n".into(),
        });
        assert_eq!(e.fence(), "`````");
    }
}
