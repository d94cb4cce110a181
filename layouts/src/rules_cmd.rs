//! `catalog rules` and `catalog explain RULE`: every rule the checker runs,
//! from its one declaration (`pd_dsl::rules`: name, severity, summary, and
//! its doc comment with the upstream source and releases), with the layout
//! of its compile-fail case, the error the compiler prints for it and its
//! fix (the files `tests/ui/fail/` and `tests/ui/fixed/` the `ui` and `fixed` tests
//! compile, embedded at build time: `pd_dsl::render::rules_doc`).

use pd_dsl::rules::{Rule, Severity};
use serde::Serialize;
use std::fmt::Write as _;

pub use pd_dsl::render::rules_doc::{Case, Fix, MAX_CASES, cases, fix};

/// A rule as `catalog rules --format json` lists it.
#[derive(Debug, Serialize)]
pub struct RuleDoc {
    /// Stable name.
    pub name: &'static str,
    /// `hard` or `convention`.
    pub severity: Severity,
    /// One line.
    pub summary: &'static str,
    /// The doc: what it checks, upstream source and releases.
    pub explanation: String,
    /// Its compile-fail cases.
    pub cases: Vec<Case>,
    /// The fix of its own compile-fail case.
    pub fix: Option<Fix>,
}

/// Every rule, in table order.
pub fn docs() -> Vec<RuleDoc> {
    Rule::ALL
        .iter()
        .map(|&r| RuleDoc {
            name: r.name(),
            severity: r.severity(),
            summary: r.summary(),
            explanation: r.explanation(),
            cases: cases(r),
            fix: fix(r),
        })
        .collect()
}

/// `catalog rules`: one line per rule, narrow enough for a terminal.
pub fn table() -> String {
    let width = Rule::ALL.iter().map(|r| r.name().len()).max().unwrap_or(0);
    let mut out = String::new();
    let _ = writeln!(out, "{:<width$}  {:<10}  SUMMARY", "RULE", "SEVERITY");
    for r in Rule::ALL {
        let _ = writeln!(
            out,
            "{:<width$}  {:<10}  {}",
            r.name(),
            r.severity().as_str(),
            r.summary()
        );
    }
    let _ = writeln!(
        out,
        "\n{} rules; `catalog explain RULE` prints one in full. A convention may be acknowledged in a layout with `allow(RULE, \"reason\")`; a hard rule may not.",
        Rule::ALL.len()
    );
    out
}

/// `catalog explain RULE`, or why not: the name's near misses.
pub fn explain(name: &str) -> Result<String, String> {
    let Some(rule) = Rule::from_name(name) else {
        // The checker's own "did you mean" (rules::closest), then the
        // rules whose name holds the word given.
        let names = Rule::ALL.iter().map(|r| r.name());
        let hint = match pd_dsl::rules::closest(name, names.clone()) {
            Some(c) => format!("did you mean {c}?"),
            None => {
                let mut near: Vec<&str> = names
                    .filter(|n| !name.is_empty() && n.contains(name))
                    .collect();
                near.truncate(8);
                if near.is_empty() {
                    "`catalog rules` lists every rule".to_owned()
                } else {
                    format!("did you mean {}?", near.join(", "))
                }
            }
        };
        return Err(format!("found rule `{name}`, expected a rule name: {hint}"));
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({})\n\n{}.",
        rule.name(),
        match rule.severity() {
            Severity::Hard => "hard: a layout that breaks it does not compile",
            Severity::Convention =>
                "convention: a layout that breaks it compiles only with `allow(rule, \"reason\")`",
        },
        rule.summary()
    );
    let text = rule.explanation();
    if !text.is_empty() {
        let _ = writeln!(out, "\n{}", wrap(&text, 78));
    }
    for case in cases(rule) {
        let _ = writeln!(
            out,
            "\nA layout that breaks it (tests/ui/fail/{}.rs):\n\n{}\nwhat the compiler says:\n\n{}",
            case.file,
            indent(case.source),
            indent(case.error)
        );
    }
    if let Some(f) = fix(rule) {
        let _ = writeln!(
            out,
            "\n{}\n\n{}",
            wrap(
                &format!("The fix (tests/ui/fixed/{}.rs): {}.", f.file, f.why),
                78
            ),
            indent(&f.diff)
        );
    }
    Ok(out)
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("    {l}\n")).collect()
}

/// Paragraphs of `text` wrapped at `width` columns.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    for (i, para) in text.split("\n\n").enumerate() {
        if i > 0 {
            out.push_str("\n\n");
        }
        let mut col = 0;
        for word in para.split_whitespace() {
            if col > 0 && col + 1 + word.len() > width {
                out.push('\n');
                col = 0;
            } else if col > 0 {
                out.push(' ');
                col += 1;
            }
            out.push_str(word);
            col += word.len();
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::expect_used, clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_explains_itself_with_its_compile_fail_case() {
        for &r in Rule::ALL {
            let text = explain(r.name()).expect("a rule explains");
            assert!(text.starts_with(r.name()), "{text}");
            assert!(text.contains(r.summary()), "{text}");
            // The coverage test holds one compile-fail case per rule; each
            // is shown with the error naming the rule.
            let cases = cases(r);
            assert!(
                !cases.is_empty(),
                "rule `{}` has no compile-fail case",
                r.name()
            );
            for c in cases {
                assert!(
                    text.contains(c.error.lines().next().unwrap_or("")),
                    "{text}"
                );
            }
            // Each case has its fix (the `ui` test holds them), shown
            // after the failing layout and its error.
            let fix = fix(r).expect("a fixed case");
            let at = text
                .find(&format!("The fix (tests/ui/fixed/{}.rs):", r.name()))
                .expect("the fix is shown");
            assert!(
                at > text.find("what the compiler says:").unwrap_or(usize::MAX),
                "{text}"
            );
            assert!(text[at..].contains(&indent(&fix.diff)), "{text}");
        }
    }

    #[test]
    fn the_doc_comment_reaches_the_explanation() {
        let e = Rule::MaxModelLenWithinModel.explanation();
        assert!(
            e.contains("the length vLLM derives from the model's config"),
            "{e}"
        );
        let e = Rule::DsaCpNeedsSp.explanation();
        assert!(
            e.contains("vllm_ascend/utils.py") && !e.contains("///"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_rule_is_refused_with_near_misses() {
        let e = explain("tp_divides").expect_err("not a rule");
        assert!(e.contains("did you mean tp_divides_node"), "{e}");
        let e = explain("zzz").expect_err("not a rule");
        assert!(e.contains("`catalog rules` lists every rule"), "{e}");
    }
}
