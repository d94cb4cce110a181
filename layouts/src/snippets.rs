//! Findings shown the way rustc shows errors: the message, the file and
//! position, the source line with a caret under the offending token
//! (annotate-snippets, the renderer rustc uses), coloured on a terminal and
//! plain under `NO_COLOR`, in a pipe or with `--color never`.

use annotate_snippets::{AnnotationKind, Level, Renderer, Snippet};
use pd_dsl::import::{self, Finding};
use std::io::IsTerminal;

/// `--color`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Color {
    /// On a terminal, unless `NO_COLOR` is set.
    #[default]
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl Color {
    /// Whether to colour standard output.
    pub fn enabled(self) -> bool {
        match self {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stdout().is_terminal()
            }
        }
    }
}

/// The byte range of the token at `line`:`column` (both from 1) of `text`:
/// from the column to the next space, comma, closing bracket or the line's
/// end (at least one character). `None` when the position is not in `text`.
pub fn token_span(text: &str, line: u64, column: u64) -> Option<std::ops::Range<usize>> {
    let line_idx = usize::try_from(line.checked_sub(1)?).ok()?;
    let col_idx = usize::try_from(column.checked_sub(1)?).ok()?;
    let mut start = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i == line_idx {
            let body = l.trim_end_matches(['\n', '\r']);
            // Columns count characters.
            let (off, _) = body
                .char_indices()
                .nth(col_idx)
                .or_else(|| (body.chars().count() == col_idx).then_some((body.len(), ' ')))?;
            let rest = &body[off..];
            let len = rest
                .find([' ', ',', ']', '}', '\t'])
                .filter(|&n| n > 0)
                .unwrap_or(rest.len())
                .max(1);
            return Some(start + off..start + (off + len).min(body.len().max(off)));
        }
        start += l.len();
    }
    None
}

/// One finding, with its source line when `text` is the file it names.
pub fn render(f: &Finding, text: Option<&str>, color: bool) -> String {
    let level = match f.level {
        import::Level::Error => Level::ERROR,
        import::Level::Warning => Level::WARNING,
    };
    let mut title = level.primary_title(f.message.as_str());
    if let Some(rule) = &f.rule {
        title = title.id(rule.as_str());
    }
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let span = text.and_then(|t| token_span(t, f.line, f.column).map(|s| (t, s)));
    let report = match span {
        Some((t, s)) => {
            let s = if s.is_empty() {
                s.start..s.start + 1
            } else {
                s
            };
            let s = s.start.min(t.len())..s.end.min(t.len());
            vec![
                title.element(
                    Snippet::source(t)
                        .path(f.file.as_str())
                        .fold(true)
                        .annotation(AnnotationKind::Primary.span(s)),
                ),
            ]
        }
        None => {
            let at = if f.line == 0 {
                f.file.clone()
            } else {
                format!("{}:{}:{}", f.file, f.line, f.column)
            };
            vec![title.element(annotate_snippets::Origin::path(at))]
        }
    };
    renderer.render(&report)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_caret_sits_under_the_token_at_the_position() {
        let text = "a: 1\nports: { api: 70000, dp: 1 }\n";
        let s = token_span(text, 2, 15).unwrap();
        assert_eq!(&text[s], "70000");
        assert!(token_span(text, 9, 1).is_none());
        let f = Finding {
            file: "x.yaml".into(),
            line: 2,
            column: 15,
            level: import::Level::Error,
            rule: Some("port_range".into()),
            message: "found port 70000, expected 1 to 65535".into(),
        };
        let out = render(&f, Some(text), false);
        assert!(
            out.starts_with("error[port_range]: found port 70000"),
            "{out}"
        );
        assert!(out.contains("--> x.yaml:2:15"), "{out}");
        assert!(out.contains("2 | ports: { api: 70000, dp: 1 }"), "{out}");
        let caret = out.lines().find(|l| l.contains('^')).unwrap();
        let source = out.lines().find(|l| l.starts_with("2 |")).unwrap();
        assert_eq!(caret.find('^'), source.find("70000"), "{out}");
        assert!(
            !out.contains('\u{1b}'),
            "plain output has no escapes: {out}"
        );
        assert!(render(&f, Some(text), true).contains('\u{1b}'));
        // Without the file's text, the position alone.
        let out = render(&f, None, false);
        assert!(out.contains("--> x.yaml:2:15"), "{out}");
    }
}
