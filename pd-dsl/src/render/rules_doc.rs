//! The rules reference of the catalog: `RULES.md` and `rules.html`, from
//! each rule's one declaration ([`crate::rules`]: name, severity, summary,
//! doc comment). Every README and page cites a rule by a link to its entry.
//! `catalog explain RULE` prints the same text with the rule's compile-fail
//! layout and the compiler's error for it.

use super::docs::rules_md;
use super::site::rules_html;
use super::{Artifact, RenderError};
use crate::rules::Rule;

/// File name of the Markdown reference at the catalog root.
pub const RULES_MD: &str = "RULES.md";
/// File name of the HTML reference at the catalog root.
pub const RULES_HTML: &str = "rules.html";

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
