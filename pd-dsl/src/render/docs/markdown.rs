//! Escaping for the Markdown templates (`templates/docs/*.md`).
//!
//! `pd-dsl/askama.toml` registers [`Markdown`] as the escaper of every `.md`
//! template, so `{{ value }}` is table-cell text by construction: a pipe is
//! escaped and a line break becomes a space, so a value can neither end a
//! table cell nor start a new block. The named filters say what else a value
//! is: [`filters::code`] an inline code span. A value placed as Markdown
//! (summary paragraphs, the scenario guide, our own rendered partials) must
//! say so with `|safe`.

use std::fmt;

/// The `.md` escaper: table-cell text.
#[derive(Clone, Copy, Debug, Default)]
pub struct Markdown;

impl askama::filters::Escaper for Markdown {
    fn write_escaped_str<W: fmt::Write>(&self, mut dest: W, string: &str) -> fmt::Result {
        let mut rest = string;
        while let Some(i) = rest.find(['|', '\n', '\r']) {
            dest.write_str(&rest[..i])?;
            dest.write_str(if rest[i..].starts_with('|') {
                "\\|"
            } else {
                " "
            })?;
            rest = &rest[i + 1..];
        }
        dest.write_str(rest)
    }
}

/// Named filters of the `.md` templates.
pub mod filters {
    use askama::filters::Safe;
    use std::fmt::Display;

    /// An inline code span that survives backticks in the text: fenced with
    /// two backticks and a space when the text has one.
    #[askama::filter_fn]
    pub fn code(value: impl Display, _: &dyn askama::Values) -> askama::Result<Safe<String>> {
        let s = value.to_string();
        Ok(Safe(if s.contains('`') {
            format!("`` {s} ``")
        } else {
            format!("`{s}`")
        }))
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::filters;
    use askama::Template;

    #[derive(Template)]
    #[template(
        source = "| {{ text }} | {{ text|code }} | {{ tick|code }} | {{ text|safe }} |",
        ext = "md"
    )]
    struct Probe<'a> {
        text: &'a str,
        tick: &'a str,
    }

    #[test]
    fn a_plain_value_stays_in_its_cell_and_a_raw_one_is_marked_safe() {
        let out = Probe {
            text: "a|b\r\nc",
            tick: "x`y",
        }
        .render()
        .expect("renders");
        assert_eq!(out, "| a\\|b  c | `a|b\r\nc` | `` x`y `` | a|b\r\nc |");
    }
}
