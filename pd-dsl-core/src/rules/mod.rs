//! The rules, by stable name. The name is the same in code, in error text, in
//! the compile-fail case (`tests/ui/<name>.rs`) and in the README.

use crate::site::Site;
use serde::Serialize;
use std::fmt;

/// Whether a layout may acknowledge a violation with `allow(rule, "reason")`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The deployment fails or collides: never allowed.
    Hard,
    /// A convention or upstream recommendation: may be acknowledged.
    Convention,
}

impl Severity {
    /// `hard` or `convention`, as the JSON and the references write it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Severity::Hard => "hard",
            Severity::Convention => "convention",
        }
    }
}

macro_rules! rules {
    ($( $concern:ident { $( $(#[doc = $doc:literal])* $variant:ident = $name:literal, $sev:ident, $summary:literal; )* } )*) => {
        /// Every rule the checker knows.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        pub enum Rule {
            $( $( $(#[doc = $doc])* #[serde(rename = $name)] $variant, )* )*
        }

        impl Rule {
            /// Every rule, in table order.
            pub const ALL: &'static [Rule] = &[$($(Rule::$variant,)*)*];

            /// The stable name.
            pub fn name(self) -> &'static str {
                match self { $($(Rule::$variant => $name,)*)* }
            }

            /// Whether it may be acknowledged.
            pub fn severity(self) -> Severity {
                match self { $($(Rule::$variant => Severity::$sev,)*)* }
            }

            /// One line saying what the rule guards.
            pub fn summary(self) -> &'static str {
                match self { $($(Rule::$variant => $summary,)*)* }
            }

            /// The rule's doc comment here, as written (each line starts
            /// with the space after `///`): what it checks and the upstream
            /// source and releases it comes from. [`Rule::explanation`]
            /// reads it as text.
            pub fn doc_source(self) -> &'static str {
                match self { $($(Rule::$variant => concat!($($doc, "\n",)* ""),)*)* }
            }

            /// Looks a rule up by its stable name.
            pub fn from_name(name: &str) -> Option<Rule> {
                match name { $($($name => Some(Rule::$variant),)*)* _ => None }
            }

            /// The concern the rule belongs to: the module under
            /// `pd-dsl-core/src/rules/` that declares it and holds its check.
            pub fn concern(self) -> &'static str {
                match self { $($(Rule::$variant => stringify!($concern),)*)* }
            }
        }
    };
}

/// Declares the rules of one concern, in the concern's module next to its
/// checks: each rule's doc (what it checks, why, the upstream source and
/// releases), `Variant = "name", Severity, "summary";`. The build script
/// (`pd-dsl-core/build.rs`) collects every module's block, in the order the
/// modules are declared below, into the one [`Rule`] enum; here the macro
/// only checks the block's shape at its own site.
macro_rules! declare_rules {
    ($( $(#[doc = $doc:literal])+ $variant:ident = $name:literal, $sev:ident, $summary:literal; )+) => {
        const _: &[$crate::rules::Rule] = &[$($crate::rules::Rule::$variant),+];
    };
}

// The concerns, in the order `catalog rules` lists them. Each module declares
// its rules (`declare_rules!`) and holds the checks that report them; the
// engine (`crate::check`) runs the checks in its own order.

// Names from the closed tables.
pub(crate) mod names;

// Shapes and placement.
pub(crate) mod topology;

// Ports per host.
pub(crate) mod ports;

// KV connector, proxy, engine ids.
pub(crate) mod connector;

// The KV pool next to the connector.
pub mod pool;

// Serve blocks as written.
pub(crate) mod settings;

// Text fields and names.
pub(crate) mod text;

// A role's start-up refusals.
pub(crate) mod serve;

// vllm-ascend features' preconditions.
pub(crate) mod features;

// Context parallelism (PCP, DCP).
pub(crate) mod context_parallel;

// Speculative decoding.
pub(crate) mod speculative;

// Role limits that read model facts.
pub(crate) mod limits;

// Model facts against settings.
pub(crate) mod model;

// The memory budget.
pub(crate) mod budget;

// Acknowledgements.
pub(crate) mod allow;

// `rules! { concern { declarations } ... }`, written by build.rs.
include!(concat!(env!("OUT_DIR"), "/rules.rs"));

impl Rule {
    /// The doc comment as plain text: lines joined into paragraphs, the
    /// `///` margin removed. Empty when the rule has none beyond its summary.
    pub fn explanation(self) -> String {
        let mut out = String::new();
        for line in self.doc_source().lines() {
            let line = line.strip_prefix(' ').unwrap_or(line).trim_end();
            if line.is_empty() {
                out.push_str("\n\n");
            } else {
                if !out.is_empty() && !out.ends_with('\n') {
                    out.push(' ');
                }
                out.push_str(line);
            }
        }
        out.trim().to_owned()
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One violation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The rule.
    pub rule: Rule,
    /// Where to point.
    pub site: Site,
    /// Field path for tools and the runtime loader (`topology[1].tp`).
    pub field: String,
    /// What was found, what was expected, and why (lowercase, no period).
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [rule `{}`]", self.message, self.rule.name())
    }
}

/// Every violation of one layout.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// Records a violation.
    pub fn push(
        &mut self,
        rule: Rule,
        site: Site,
        field: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.0.push(Diagnostic {
            rule,
            site,
            field: field.into(),
            message: message.into(),
        });
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Iterates the violations.
    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.0.iter()
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}: {d}", d.field)?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

/// Edit distance with adjacent transpositions (optimal string alignment),
/// for "did you mean" suggestions: `hsot` is one edit from `host`.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // rows[i][j] = distance between a[..i] and b[..j]
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = d;
        }
    }
    rows[a.len()][b.len()]
}

/// The candidate closest to `word`, if it is similar enough to be what the
/// author meant: at most one edit per three characters of `word` (at least
/// one), the threshold rustc uses for its own suggestions. `host` is two
/// edits from `port`, so it is not offered.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = word.chars().count().max(3) / 3;
    candidates
        .into_iter()
        .filter(|c| *c != word)
        .map(|c| (edit_distance(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, c)| c)
}

/// [`closest`] as "; did you mean `x`?", or an empty string.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, candidates)
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for r in Rule::ALL {
            assert_eq!(Rule::from_name(r.name()), Some(*r));
            assert!(seen.insert(r.name()), "duplicate rule name {}", r.name());
            assert!(
                r.name()
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit())
            );
        }
    }

    #[test]
    fn suggestions() {
        assert_eq!(
            did_you_mean("enable_cpu_bindng", ["enable_cpu_binding", "refresh"]),
            "; did you mean `enable_cpu_binding`?"
        );
        assert_eq!(did_you_mean("zzz", ["enable_cpu_binding"]), "");
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("hsot", "host"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    /// Near misses are offered, unrelated names of the same length are not.
    #[test]
    fn suggestions_need_real_similarity() {
        let fields = ["name", "port", "ports", "proxy", "provenance"];
        assert_eq!(closest("host", fields), None);
        assert_eq!(closest("nam", fields), Some("name"));
        assert_eq!(closest("provenence", fields), Some("provenance"));
        assert_eq!(closest("prot", fields), Some("port"));
        assert_eq!(
            closest("max_num_sqs", ["max_num_seqs", "max_model_len"]),
            Some("max_num_seqs")
        );
        assert_eq!(closest("ab", ["cd"]), None);
    }
}

/// Each rule is declared once, in the concern module that reports it.
#[cfg(test)]
mod declared_next_to_their_checks {
    use super::Rule;

    /// The source of each concern module, by its name.
    const SOURCES: &[(&str, &str)] = &[
        ("names", include_str!("names.rs")),
        ("topology", include_str!("topology.rs")),
        ("ports", include_str!("ports.rs")),
        ("connector", include_str!("connector.rs")),
        ("pool", include_str!("pool.rs")),
        ("settings", include_str!("settings.rs")),
        ("text", include_str!("text.rs")),
        ("serve", include_str!("serve.rs")),
        ("features", include_str!("features.rs")),
        ("context_parallel", include_str!("context_parallel.rs")),
        ("speculative", include_str!("speculative.rs")),
        ("limits", include_str!("limits.rs")),
        ("model", include_str!("model.rs")),
        ("budget", include_str!("budget.rs")),
        ("allow", include_str!("allow.rs")),
    ];

    #[test]
    fn every_rule_is_reported_by_the_module_that_declares_it() {
        let mut concerns: Vec<&str> = Rule::ALL.iter().map(|r| r.concern()).collect();
        concerns.dedup();
        let listed: Vec<&str> = SOURCES.iter().map(|(c, _)| *c).collect();
        assert_eq!(
            concerns, listed,
            "SOURCES lists the concern modules in order"
        );
        let mut stray = Vec::new();
        for rule in Rule::ALL {
            let Some((_, src)) = SOURCES.iter().find(|(c, _)| *c == rule.concern()) else {
                unreachable!("every concern is listed")
            };
            // The code after the declarations names the rule where it reports it.
            let code = src.split_once("\n}\n").map_or("", |(_, code)| code);
            if !code.contains(&format!("Rule::{rule:?}")) {
                stray.push(format!("{} ({})", rule.name(), rule.concern()));
            }
        }
        assert!(
            stray.is_empty(),
            "rules declared in a module that does not report them: {stray:?}"
        );
    }

    #[test]
    fn every_rule_has_a_doc() {
        let bare: Vec<&str> = Rule::ALL
            .iter()
            .filter(|r| r.explanation().is_empty())
            .map(|r| r.name())
            .collect();
        assert!(bare.is_empty(), "rules without a doc: {bare:?}");
    }
}
