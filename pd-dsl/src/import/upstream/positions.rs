//! Positions inside a folded YAML scalar: a `server_cmd`'s words with the
//! line and column each was written at.

use super::Fail;
use crate::import::Loc;
use crate::import::scripts::Tok;

/// Maps positions inside a scalar's value to positions in the file. YAML
/// folds and indents the value (line breaks become spaces, indentation
/// goes), so a position is found by counting the non-blank characters of
/// the value before it and walking as many non-blank characters of the
/// scalar as written ([`written`]: an escape is one character, quotes and a
/// block header are none).
struct InScalar {
    file: usize,
    /// The value's non-blank characters' positions (line and column in
    /// the value), in order.
    value: Vec<(u64, u64)>,
    /// The same characters' positions in the file.
    text: Vec<(u64, u64)>,
}

impl InScalar {
    /// The scalar with value `value` starting at `start` in `text`.
    fn new(text: &str, value: &str, start: Loc) -> InScalar {
        let mut marks = Vec::new();
        let (mut line, mut column) = (1u64, 1u64);
        for c in value.chars() {
            if !c.is_whitespace() {
                marks.push((line, column));
            }
            if c == '\n' {
                line += 1;
                column = 1;
            } else {
                column += 1;
            }
        }
        InScalar {
            file: start.file,
            value: marks,
            text: written(text, start)
                .into_iter()
                .filter(|(_, blank)| !blank)
                .map(|(pos, _)| pos)
                .collect(),
        }
    }

    /// Where position `at` of the value is in the file; `None` when the
    /// count runs past the file.
    fn at(&self, at: Loc) -> Option<Loc> {
        let before = self.value.partition_point(|p| *p < (at.line, at.column));
        self.text.get(before).map(|&(line, column)| Loc {
            file: self.file,
            line,
            column,
        })
    }
}

/// The characters of the value of the scalar starting at `start`, as
/// written: each with its line and column and whether the value's character
/// is blank. The style is the scalar's first character (YAML 1.2 §7.3, §8.1):
/// a double-quoted scalar's escape (`\"`, `\t`, `\x41`, `\u00e9`) is one
/// character at its backslash and `\` before a line break is none; a
/// single-quoted one's `''` is one `'`; a block scalar's header line (`|`,
/// `>-`, `|2 # note`) is none; a plain scalar is as written.
fn written(text: &str, start: Loc) -> Vec<((u64, u64), bool)> {
    let mut chars = Vec::new();
    let (mut line, mut column) = (1u64, 1u64);
    for c in text.chars() {
        if (line, column) >= (start.line, start.column) {
            chars.push(((line, column), c));
        }
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    let mut out = Vec::new();
    let mut it = chars.into_iter().peekable();
    match it.peek().map_or(' ', |(_, c)| *c) {
        '"' => {
            it.next();
            while let Some((pos, c)) = it.next() {
                match c {
                    '"' => break,
                    '\\' => {
                        let Some((_, e)) = it.next() else { break };
                        let hex = match e {
                            'x' => 2,
                            'u' => 4,
                            'U' => 8,
                            _ => 0,
                        };
                        let escaped = if hex > 0 {
                            let digits: String =
                                (0..hex).filter_map(|_| it.next()).map(|(_, d)| d).collect();
                            u32::from_str_radix(&digits, 16)
                                .ok()
                                .and_then(char::from_u32)
                        } else {
                            match e {
                                '\n' | '\r' => None,
                                't' | '\t' | ' ' | 'n' | 'r' | 'v' | 'f' | 'L' | 'P' | 'N'
                                | '_' => Some(' '),
                                other => Some(other),
                            }
                        };
                        if let Some(v) = escaped {
                            out.push((pos, v.is_whitespace()));
                        }
                    }
                    c => out.push((pos, c.is_whitespace())),
                }
            }
        }
        '\'' => {
            it.next();
            while let Some((pos, c)) = it.next() {
                if c == '\'' {
                    if it.peek().is_some_and(|(_, n)| *n == '\'') {
                        it.next();
                    } else {
                        break;
                    }
                }
                out.push((pos, c.is_whitespace()));
            }
        }
        '|' | '>' => {
            out.extend(
                it.skip_while(|(_, c)| *c != '\n')
                    .map(|(pos, c)| (pos, c.is_whitespace())),
            );
        }
        _ => out.extend(it.map(|(pos, c)| (pos, c.is_whitespace()))),
    }
    out
}

/// Splits a `server_cmd` string into words and gives each word its own
/// line and column in the file, through [`InScalar`] (YAML folds the
/// scalar, so the value's positions are not the file's): a finding on a
/// `--flag value` pair points at the value, as in a script.
pub(super) fn locate_words(
    file: usize,
    text: &str,
    cmd: &str,
    start: Loc,
) -> Result<Vec<Tok>, Fail> {
    let map = InScalar::new(text, cmd, start);
    let cmds = crate::import::shell::commands(file, cmd)
        .map_err(|(l, m)| (map.at(l).unwrap_or(start), m))?;
    // The runner splits the whole string (`shlex.split`): every line is
    // one command's words, not only the first.
    let words: Vec<&crate::import::shell::Word> =
        cmds.iter().flat_map(|c| c.words.iter()).collect();
    if words.is_empty() {
        return Err((
            start,
            "found an empty `server_cmd`, expected `vllm serve MODEL ...`".into(),
        ));
    }
    Ok(words
        .into_iter()
        .map(|w| {
            let mut t = Tok::from_word(w);
            t.at = map.at(w.at).unwrap_or(start);
            t
        })
        .collect())
}
