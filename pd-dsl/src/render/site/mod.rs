//! The static HTML catalog: `index.html` (topology first, with filters by
//! model, hardware, image and verified status, and the scenario guide) and one
//! `NAME/index.html` per layout (everything its README says, plus the
//! topology picture, which is also written as `NAME/topology.svg` for the
//! README).
//!
//! Pages come from the checked askama templates in `templates/site/`, which
//! escape every value by construction; the only markup inserted unescaped is
//! our own rendered SVG and the scenario guide converted from Markdown with
//! its raw HTML turned into text ([`guide_html`]). No server, no network, no
//! script from elsewhere: a few lines of inline JS drive the index filters
//! and the page works without them.

mod index;
mod page;
pub mod topology;

pub use index::{IndexPage, IndexRow, guide_html, index_html};
pub use page::{Fact, FileLink, LayoutPage, NodeRow, layout_page, layout_site};

use super::RenderError;

pub use topology::{Picture, topology_svg};

#[derive(askama::Template)]
#[template(path = "site/rules.html")]
struct RulesPage<'a> {
    rules: &'a [crate::render::rules_doc::RuleEntry],
}

/// `rules.html`.
pub fn rules_html(rules: &[crate::render::rules_doc::RuleEntry]) -> Result<String, RenderError> {
    askama::Template::render(&RulesPage { rules }).map_err(|e| failed("(catalog)", "rules.html", e))
}

/// Filters of the HTML templates.
pub(crate) mod filters {
    use askama::filters::Safe;
    use std::fmt::Display;

    /// Prose written with Markdown code spans (`` `x` ``), as HTML: the text
    /// escaped, each balanced pair of backticks a `<code>` element, so no raw
    /// Markdown reaches a page.
    #[askama::filter_fn]
    pub fn code_spans(value: impl Display, _: &dyn askama::Values) -> askama::Result<Safe<String>> {
        Ok(Safe(code_spans_html(&value.to_string())))
    }

    pub(crate) fn code_spans_html(s: &str) -> String {
        // askama's HTML escaping, character for character.
        let escape = |t: &str| {
            t.replace('&', "&#38;")
                .replace('<', "&#60;")
                .replace('>', "&#62;")
                .replace('"', "&#34;")
                .replace('\'', "&#39;")
        };
        let parts: Vec<&str> = s.split('`').collect();
        // An odd number of backticks: the last one is text.
        let pairs = (parts.len() - 1) / 2;
        let mut out = String::with_capacity(s.len() + 16);
        for (i, p) in parts.iter().enumerate() {
            if i % 2 == 1 && i <= 2 * pairs {
                out.push_str("<code>");
                out.push_str(&escape(p));
                out.push_str("</code>");
            } else {
                if i > 2 * pairs {
                    out.push('`');
                }
                out.push_str(&escape(p));
            }
        }
        out
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn code_spans_become_code_and_the_rest_is_escaped() {
            assert_eq!(
                super::code_spans_html("expect `Address already in use` <here> & `x`"),
                "expect <code>Address already in use</code> &#60;here&#62; &#38; <code>x</code>"
            );
            assert_eq!(super::code_spans_html("a `b"), "a `b");
            assert_eq!(super::code_spans_html("`<b>`"), "<code>&#60;b&#62;</code>");
        }
    }
}

/// File name of the picture in a layout's directory.
pub const TOPOLOGY_SVG: &str = "topology.svg";
/// File name of every page.
pub const PAGE: &str = "index.html";

fn failed(layout: &str, what: &str, e: askama::Error) -> RenderError {
    RenderError::Layout {
        layout: layout.to_owned(),
        message: format!("cannot render {what}: {e}"),
    }
}

/// Percent-encodes a relative path for an `href` (keeps `/`), so a layout
/// name is a working link whatever it contains.
pub fn href_path(path: &str) -> String {
    let mut s = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            s.push(char::from(b));
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// `../` once per path component of the layout's directory.
pub(crate) fn root_of(name: &str) -> String {
    "../".repeat(name.split('/').count())
}

/// Replaces characters XML 1.0 does not allow (the standalone SVG is XML)
/// with U+FFFD; rules already reject control characters in text fields.
fn xml_safe(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => '\u{FFFD}',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guide_links_and_raw_html() {
        let html = guide_html(
            "## Guide\n\n<script>alert(1)</script>\n\n[a](fam/a/README.md) [b](javascript:alert(1)) [c](https://x.org/y) [d](//evil)",
        );
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(html.contains(r#"href="fam/a/index.html""#), "{html}");
        assert!(!html.contains("javascript:"), "{html}");
        assert!(html.contains(r#"href="https://x.org/y""#), "{html}");
        assert!(!html.contains("//evil"), "{html}");
    }

    #[test]
    fn hrefs_are_encoded() {
        assert_eq!(href_path("a b/c\"d"), "a%20b/c%22d");
        assert_eq!(root_of("fam/variant"), "../../");
    }
}
