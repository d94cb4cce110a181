//! Template filters. In a `.sh` template every plain `{{ value }}` is one
//! quoted shell word (the [`Shell`](super::shell::Shell) escaper); the
//! filters here are the only ways text reaches a script otherwise, each for
//! one stated reason, so a raw value is visible in review.

use super::shell;
use askama::Values;
use askama::filters::Safe;
use std::fmt::{Display, Write as _};

/// Text safe inside a one-line `#` comment: line breaks become spaces.
#[askama::filter_fn]
pub fn comment(s: impl Display, _: &dyn Values) -> askama::Result<Safe<String>> {
    Ok(Safe(s.to_string().replace(['\n', '\r'], " ")))
}

/// A shell variable name, written bare; anything but `[A-Za-z_][A-Za-z0-9_]*`
/// is a render error (rule `env_name_format` already refuses it upstream).
#[askama::filter_fn]
pub fn ident(s: impl Display, _: &dyn Values) -> askama::Result<Safe<String>> {
    let s = s.to_string();
    check_ident(&s)?;
    Ok(Safe(s))
}

/// `${NAME:+:$NAME}`: the inherited value of a path list, appended after a
/// prepended directory.
#[askama::filter_fn]
pub fn inherit(s: impl Display, _: &dyn Values) -> askama::Result<Safe<String>> {
    let s = s.to_string();
    check_ident(&s)?;
    Ok(Safe(format!("${{{s}:+:${s}}}")))
}

fn check_ident(s: &str) -> askama::Result<()> {
    let mut chars = s.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if first_ok && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        Ok(())
    } else {
        Err(askama::Error::custom(format!(
            "found env var name `{s}`, expected `[A-Za-z_][A-Za-z0-9_]*`: it is written bare in a script"
        )))
    }
}

/// Every item as a quoted shell word, joined by spaces (a bash array body).
#[askama::filter_fn]
pub fn words<T: Display>(items: &[T], _: &dyn Values) -> askama::Result<Safe<String>> {
    wrapped(items, usize::MAX, 0)
}

/// [`words`] wrapped 16 to a line, continuation lines indented by `indent`
/// spaces (under the first item of `NAME=(`).
#[askama::filter_fn]
pub fn wrap<T: Display>(
    items: &[T],
    _: &dyn Values,
    indent: usize,
) -> askama::Result<Safe<String>> {
    wrapped(items, 16, indent)
}

fn wrapped<T: Display>(
    items: &[T],
    per_line: usize,
    indent: usize,
) -> askama::Result<Safe<String>> {
    let mut out = String::new();
    let mut word = String::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            if i % per_line == 0 {
                out.push('\n');
                out.extend(std::iter::repeat_n(' ', indent));
            } else {
                out.push(' ');
            }
        }
        word.clear();
        write!(word, "{item}")?;
        shell::write_quoted(&mut out, &word)?;
    }
    Ok(Safe(out))
}

/// `1` for true, `0` for false (shell flags).
#[askama::filter_fn]
pub fn bit(b: impl std::borrow::Borrow<bool>, _: &dyn Values) -> askama::Result<u8> {
    Ok(u8::from(*b.borrow()))
}

/// The value, or the empty string for `None` (quoted as `''` like any
/// other empty word).
#[askama::filter_fn]
pub fn or_empty<T: Display>(v: &Option<T>, _: &dyn Values) -> askama::Result<String> {
    Ok(v.as_ref().map(T::to_string).unwrap_or_default())
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::super::filters;
    use askama::Template;

    /// A shell template as the renderer's are: `{{ }}` is quoted.
    #[derive(Template)]
    #[template(
        source = "A={{ a }} B={{ b }} N={{ n }} C={{ c|comment }} I={{ i|ident }} P={{ i|inherit }} W=({{ w|words }}) O={{ o|or_empty }}",
        ext = "sh"
    )]
    struct Probe<'a> {
        a: &'a str,
        b: String,
        n: u32,
        c: &'a str,
        i: &'a str,
        w: Vec<&'a str>,
        o: Option<u32>,
    }

    fn probe(i: &str) -> Result<String, askama::Error> {
        Probe {
            a: "it's $(id)",
            b: String::new(),
            n: 7100,
            c: "two\nlines",
            i,
            w: vec!["x", "a b", ""],
            o: None,
        }
        .render()
    }

    #[test]
    fn every_plain_value_is_one_quoted_word() {
        assert_eq!(
            probe("LD_LIBRARY_PATH").expect("renders"),
            r"A='it'\''s $(id)' B='' N=7100 C=two lines I=LD_LIBRARY_PATH P=${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} W=(x 'a b' '') O=''"
        );
    }

    #[test]
    fn a_bad_variable_name_is_an_error_not_shell() {
        let e = probe("A;rm -rf /").expect_err("refused");
        assert!(
            e.to_string().contains("found env var name `A;rm -rf /`"),
            "{e}"
        );
        assert!(probe("9LIVES").is_err());
    }

    #[test]
    fn wrap_puts_sixteen_words_on_a_line() {
        let items: Vec<u32> = (0..17).collect();
        let out = super::wrapped(&items, 16, 3).expect("wraps").0;
        assert_eq!(out, "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n   16");
    }
}
