//! The one shell escaping helper. Every value the renderer interpolates into
//! a generated script goes through [`quote`]; nothing else builds shell words
//! from data.

use std::fmt;

/// Quotes `s` as one shell word, single-quote style (like Python's
/// `shlex.quote`): a word made only of `[A-Za-z0-9_./:,=@+%-]` stays bare for
/// readability; anything else is wrapped in `'…'`, with each `'` written as
/// `'\''`. Inside single quotes the shell expands nothing (`$`, backticks,
/// `\`, newlines and non-ASCII text are all literal).
///
/// ```
/// use pd_dsl::render::shell::quote;
/// assert_eq!(quote("7100"), "7100");
/// assert_eq!(quote("it's $(rm -rf /)"), r#"'it'\''s $(rm -rf /)'"#);
/// assert_eq!(quote(""), "''");
/// ```
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    // Writing into a `String` cannot fail.
    let _ = write_quoted(&mut out, s);
    out
}

/// [`quote`] written into `dest` without an intermediate allocation.
pub fn write_quoted<W: fmt::Write + ?Sized>(dest: &mut W, s: &str) -> fmt::Result {
    let safe = |c: char| {
        c.is_ascii_alphanumeric()
            || matches!(c, '_' | '.' | '/' | ':' | ',' | '=' | '@' | '+' | '%' | '-')
    };
    if !s.is_empty() && s.chars().all(safe) {
        return dest.write_str(s);
    }
    dest.write_char('\'')?;
    for (i, part) in s.split('\'').enumerate() {
        if i > 0 {
            dest.write_str("'\\''")?;
        }
        dest.write_str(part)?;
    }
    dest.write_char('\'')
}

/// The askama escaper of every `.sh` template (registered in
/// `pd-dsl/askama.toml`): each `{{ value }}` becomes one quoted shell word
/// through [`write_quoted`]. Text that must reach the script unquoted goes
/// through a named filter (`comment`, `ident`, `words`, …) that says why.
#[derive(Clone, Copy, Debug, Default)]
pub struct Shell;

impl askama::filters::Escaper for Shell {
    fn write_escaped_str<W: fmt::Write>(&self, mut dest: W, s: &str) -> fmt::Result {
        write_quoted(&mut dest, s)
    }
}

/// Quotes every word and joins them with spaces.
pub fn quote_all<I, S>(words: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    words
        .into_iter()
        .map(|w| quote(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// Runs `printf '%s' <quoted>` through bash and returns what it printed.
    fn round_trip(s: &str) -> String {
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!("printf '%s' {}", quote(s)))
            .output();
        match out {
            Ok(o) => String::from_utf8_lossy(&o.stdout).into_owned(),
            Err(e) => format!("<bash failed: {e}>"),
        }
    }

    #[test]
    fn plain_words_stay_bare() {
        assert_eq!(quote("0,1,2,3"), "0,1,2,3");
        assert_eq!(quote("/weights/DeepSeek-V3.1"), "/weights/DeepSeek-V3.1");
        assert_eq!(
            quote("--enable-expert-parallel"),
            "--enable-expert-parallel"
        );
        assert_eq!(
            quote("expandable_segments:True"),
            "expandable_segments:True"
        );
    }

    #[test]
    fn special_text_is_single_quoted() {
        assert_eq!(quote(""), "''");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("'"), r"''\'''");
        assert_eq!(quote("$(id)"), "'$(id)'");
        assert_eq!(quote("`id`"), "'`id`'");
        assert_eq!(quote("a\nb"), "'a\nb'");
        assert_eq!(quote("~"), "'~'");
        assert_eq!(quote("*"), "'*'");
        assert_eq!(quote("模型"), "'模型'");
        assert_eq!(quote(r#"{"method": "mtp"}"#), r#"'{"method": "mtp"}'"#);
    }

    #[test]
    fn bash_reads_back_exactly_what_was_quoted() {
        for s in [
            "",
            "plain",
            "it's",
            "''",
            "$(touch /tmp/pd-dsl-pwned)",
            "`touch /tmp/pd-dsl-pwned`",
            "${HOME}",
            "a\nb\n",
            "tab\there",
            "back\\slash",
            "双引号\"和'单引号'",
            "emoji 🚀",
            "-n",
            "!event",
        ] {
            assert_eq!(round_trip(s), s, "quoting {s:?}");
        }
    }

    #[test]
    fn quote_all_joins_words() {
        assert_eq!(quote_all(["a", "b c"]), "a 'b c'");
    }
}
