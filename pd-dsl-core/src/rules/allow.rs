//! `allow(rule, "reason")`: each names a convention rule the layout breaks, once, with a reason; what is left unacknowledged becomes an error.

use super::text::text_ok;
use crate::check::Cx;
use crate::layout::Acknowledged;
use crate::rules::{Diagnostic, Rule, Severity, did_you_mean};
use crate::spec::LayoutSpec;
use std::collections::BTreeSet;

declare_rules! {
    /// `allow` names no rule.
    AllowUnknownRule = "allow_unknown_rule", Hard, "`allow` names a rule";
    /// `allow` of a hard rule.
    AllowHardRule = "allow_hard_rule", Hard, "hard rules cannot be allowed";
    /// `allow` matching no violation.
    AllowUnused = "allow_unused", Hard, "an `allow` must match a violation (no stale excuses)";
    /// The same rule allowed twice.
    AllowDuplicate = "allow_duplicate", Hard, "a rule is allowed once";
}

pub(crate) fn settle_allows(spec: &LayoutSpec, cx: &mut Cx) -> Vec<Acknowledged> {
    let mut acknowledged = Vec::new();
    let mut seen: BTreeSet<Rule> = BTreeSet::new();
    for (i, a) in spec.allow.iter().enumerate() {
        let field = format!("allow[{i}]");
        text_ok(cx, &a.reason, &format!("{field}.reason"));
        if a.reason.value.trim().is_empty() {
            cx.report(
                Rule::TextFormat,
                a.reason.site,
                format!("{field}.reason"),
                "found an empty reason, expected why the layout breaks the rule: an acknowledged deviation is printed with its reason",
            );
        }
        let Some(rule) = Rule::from_name(&a.rule.value) else {
            let hint = did_you_mean(&a.rule.value, Rule::ALL.iter().map(|r| r.name()));
            cx.report(
                Rule::AllowUnknownRule,
                a.rule.site,
                field,
                format!(
                    "found `allow({})`, expected the name of a rule: no rule has that name{hint}",
                    a.rule.value
                ),
            );
            continue;
        };
        if rule.severity() == Severity::Hard {
            cx.report(
                Rule::AllowHardRule,
                a.rule.site,
                field,
                format!(
                    "found `allow({})`, expected a convention rule: `{}` is a hard rule ({}) and cannot be acknowledged",
                    rule.name(),
                    rule.name(),
                    rule.summary()
                ),
            );
            continue;
        }
        if !seen.insert(rule) {
            cx.report(
                Rule::AllowDuplicate,
                a.rule.site,
                field,
                format!(
                    "found a second `allow({})`, expected one per rule: give all reasons in one",
                    rule.name()
                ),
            );
            continue;
        }
        let findings: Vec<String> = cx
            .conventions
            .iter()
            .filter(|d| d.rule == rule)
            .map(|d| d.message.clone())
            .collect();
        if findings.is_empty() {
            cx.report(
                Rule::AllowUnused,
                a.rule.site,
                field,
                format!(
                    "found `allow({})` but the layout does not break it, expected no `allow`: stale excuses hide real deviations",
                    rule.name()
                ),
            );
            continue;
        }
        acknowledged.push(Acknowledged {
            rule,
            reason: a.reason.value.clone(),
            findings,
        });
    }
    let unacknowledged: Vec<Diagnostic> = cx
        .conventions
        .iter()
        .filter(|d| !seen.contains(&d.rule))
        .map(|d| Diagnostic {
            message: format!(
                "{}; acknowledge it with `allow({}, \"reason\")` if intended",
                d.message,
                d.rule.name()
            ),
            ..d.clone()
        })
        .collect();
    cx.errors.0.extend(unacknowledged);
    acknowledged
}
