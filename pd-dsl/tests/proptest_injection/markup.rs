//! The HTML catalog and the topology picture.

use crate::free_text::{TEXT_FIELDS, fill};
use crate::{MIXED, PD, PIECES, config, spec};
use pd_dsl::{LayoutSpec, render};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::path::Path;

/// Markup pieces on top of [`PIECES`]: text that would open a tag, close an
/// attribute, start a comment or a script URL if it were not escaped.
const MARKUP: &[&str] = &[
    "<script>alert(1)</script>",
    "</p><b>",
    "\"><img src=x onerror=alert(1)>",
    "' onmouseover='alert(1)",
    "<!--",
    "-->",
    "]]>",
    "<![CDATA[",
    "</svg>",
    "&amp;",
    "&#60;",
    "javascript:alert(1)",
    "[x](javascript:alert(1))",
    "<",
    ">",
    "&",
];

fn hostile_markup() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        2 => proptest::sample::select(PIECES).prop_map(str::to_owned),
        2 => proptest::sample::select(MARKUP).prop_map(str::to_owned),
        1 => any::<char>()
            .prop_filter("no control characters", |c| !c.is_control())
            .prop_map(String::from),
    ];
    proptest::collection::vec(piece, 0..6).prop_map(|v| v.concat())
}

/// HTML escaping of text and attribute values, as askama's HTML escaper
/// documents it (numeric references for all five characters).
fn escaped(s: &str) -> String {
    s.replace('&', "&#38;")
        .replace('<', "&#60;")
        .replace('>', "&#62;")
        .replace('"', "&#34;")
        .replace('\'', "&#39;")
}

/// `s` as a page shows prose: escaped, and each pair of backticks around a
/// span a `<code>` element (an odd last backtick stays text).
fn with_code_spans(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    loop {
        let Some(open) = rest.find('`') else {
            out.push_str(&escaped(rest));
            return out;
        };
        let Some(len) = rest[open + 1..].find('`') else {
            out.push_str(&escaped(rest));
            return out;
        };
        out.push_str(&escaped(&rest[..open]));
        out.push_str("<code>");
        out.push_str(&escaped(&rest[open + 1..open + 1 + len]));
        out.push_str("</code>");
        rest = &rest[open + 2 + len..];
    }
}

/// Elements our pages, pictures and the Markdown guide use; anything else
/// was injected.
const TAGS: &[&str] = &[
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "nav",
    "main",
    "h1",
    "h2",
    "h3",
    "h4",
    "p",
    "a",
    "div",
    "table",
    "caption",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "figure",
    "figcaption",
    "code",
    "ol",
    "ul",
    "li",
    "strong",
    "em",
    "section",
    "form",
    "label",
    "select",
    "option",
    "output",
    "input",
    "script",
    "svg",
    "desc",
    "defs",
    "marker",
    "path",
    "rect",
    "text",
    "g",
    "pre",
    // What the scenario guide's Markdown can produce besides the above.
    "blockquote",
    "hr",
    "br",
    "img",
    "h5",
    "h6",
    "del",
    "sup",
];

/// Scans markup: every `<` opens an allowed element (or the doctype), every
/// attribute is quoted with `"` and is not an event handler, no `href` is a
/// script URL, and the only scripts are our own (`scripts` of them).
fn check_markup(what: &str, doc: &str, scripts: usize) -> Result<(), TestCaseError> {
    let err = |m: String| TestCaseError::fail(format!("{what}: {m}"));
    let mut rest = doc;
    let mut seen_scripts = 0;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        if let Some(r) = rest.strip_prefix("!DOCTYPE html>") {
            rest = r;
            continue;
        }
        let closing = rest.starts_with('/');
        let body = rest.trim_start_matches('/');
        let name: String = body
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect();
        if !TAGS.contains(&name.as_str()) {
            let ctx: String = rest.chars().take(40).collect();
            return Err(err(format!("unexpected markup `<{ctx}`")));
        }
        let end = body
            .find('>')
            .ok_or_else(|| err(format!("unterminated `<{name}`")))?;
        let mut attrs = &body[name.len()..end];
        while let Some(eq) = attrs.find('=') {
            let key = attrs[..eq].trim().trim_end_matches('/');
            let key = key.rsplit(' ').next().unwrap_or(key);
            let value_and_rest = &attrs[eq + 1..];
            let Some(v) = value_and_rest.strip_prefix('"') else {
                return Err(err(format!("unquoted attribute `{key}` in `<{name}`")));
            };
            let close = v
                .find('"')
                .ok_or_else(|| err(format!("unterminated attribute `{key}`")))?;
            let value = &v[..close];
            if key.to_ascii_lowercase().starts_with("on") {
                return Err(err(format!("event handler attribute `{key}`")));
            }
            if (key == "href" || key == "src")
                && value.trim().to_ascii_lowercase().starts_with("javascript:")
            {
                return Err(err(format!("script URL in `{key}`")));
            }
            attrs = &v[close + 1..];
        }
        rest = &body[end + 1..];
        if !closing && (name == "script" || name == "style") {
            seen_scripts += usize::from(name == "script");
            let close = format!("</{name}>");
            let at = rest
                .find(&close)
                .ok_or_else(|| err(format!("unterminated `<{name}>`")))?;
            if rest[..at].contains('<') {
                return Err(err(format!("markup inside `<{name}>`")));
            }
            rest = &rest[at..];
        }
    }
    if seen_scripts != scripts {
        return Err(err(format!(
            "{seen_scripts} script element(s), expected {scripts}"
        )));
    }
    Ok(())
}

/// Renders `spec` with the catalog's HTML (`guide` as the scenario guide) and
/// checks every page and picture; `texts` must show up escaped.
fn render_site(spec: &LayoutSpec, texts: &[String], guide: &str) -> Result<(), TestCaseError> {
    let layout =
        pd_dsl::check(spec).map_err(|d| TestCaseError::fail(format!("free text rejected: {d}")))?;
    let artifacts = render::render_catalog_with(std::slice::from_ref(&layout), Some(guide))
        .map_err(|e| TestCaseError::fail(format!("checked layout does not render: {e}")))?;
    let find = |p: &str| {
        artifacts
            .iter()
            .find(|a| a.path == Path::new(p))
            .map(|a| a.contents.as_str())
            .ok_or_else(|| TestCaseError::fail(format!("no `{p}` rendered")))
    };
    let name = layout.name();
    let page = find(&format!("{name}/index.html"))?;
    let svg = find(&format!("{name}/topology.svg"))?;
    let index = find("index.html")?;
    // Our own scripts only: every page's copy buttons (base.html), and the
    // index's filters; a text that smuggled one in would add to the count.
    check_markup("layout page", page, 1)?;
    check_markup("topology.svg", svg, 0)?;
    check_markup("index.html", index, 2)?;
    // The free texts the page shows (summary, workload, deviations, figures,
    // provenance, the allow reason), each escaped, never raw.
    for (i, t) in texts.iter().enumerate().skip(4) {
        let shown = match i {
            4 | 5 => t.trim().to_owned(),
            12 => format!("why {t}"),
            _ => t.clone(),
        };
        prop_assert!(
            page.contains(&escaped(&shown)) || page.contains(&with_code_spans(&shown)),
            "field {} not shown escaped on the page: {:?}",
            i,
            shown
        );
    }
    // The guide's links keep no script URL, and its raw HTML is text.
    prop_assert!(!index.contains("href=\"javascript:"));
    Ok(())
}

fn markup_texts() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(hostile_markup(), TEXT_FIELDS).prop_map(super::free_text::flag_word)
}

proptest! {
    #![proptest_config(config(64))]

    /// Every free-text field and the scenario guide hostile at once: the
    /// pages and the picture hold only our markup, every text escaped.
    #[test]
    fn html_and_svg_escape_every_text(mut t in markup_texts(), guide in hostile_markup()) {
        if pd_dsl::check::TEMPLATE_PLACEHOLDERS.iter().any(|p| t[3].contains(p)) {
            t[3] = t[3].replace('@', "(at)");
        }
        let mut s = spec(PD);
        fill(&mut s, &t);
        render_site(&s, &t, &format!("## Guide\n\n{guide}\n\n[start]({guide})\n"))?;
        let mut s = spec(MIXED);
        s.connector = None;
        fill(&mut s, &t);
        render_site(&s, &t, &guide)?;
    }
}
