//! A reader for the shell operators write by hand: enough of POSIX shell
//! word splitting to follow `export` lines, `vllm serve` commands with `\`
//! continuations, `launch_online_dp.py` and proxy lines, with the position of
//! every word. It never runs anything and never guesses: a value built by
//! `$(...)`, `$((...))` or backquotes is kept as [`Seg::Computed`] so the
//! importer can refuse it where it matters, pointing at it.

use super::Loc;

/// One piece of a word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    /// Literal text (quotes removed).
    Lit(String),
    /// `$NAME`, `${NAME}` or `$1`.
    Var(String),
    /// `$(...)`, `$((...))` or a backquoted command: the text as written.
    Computed(String),
}

/// A shell word with where it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    /// Its pieces in order.
    pub segs: Vec<Seg>,
    /// Where the word starts.
    pub at: Loc,
}

impl Word {
    /// The text when the word has no expansion.
    pub fn literal(&self) -> Option<String> {
        let mut s = String::new();
        for seg in &self.segs {
            match seg {
                Seg::Lit(t) => s.push_str(t),
                _ => return None,
            }
        }
        Some(s)
    }

    /// The word as written back (`$NAME` for a variable), for messages.
    pub fn shown(&self) -> String {
        let mut s = String::new();
        for seg in &self.segs {
            match seg {
                Seg::Lit(t) => s.push_str(t),
                Seg::Var(v) => {
                    s.push('$');
                    s.push_str(v);
                }
                Seg::Computed(c) => s.push_str(c),
            }
        }
        s
    }

    /// The variable name when the word is exactly one expansion (`$2`, `${X}`).
    pub fn sole_var(&self) -> Option<&str> {
        match self.segs.as_slice() {
            [Seg::Var(v)] => Some(v),
            _ => None,
        }
    }
}

/// One simple command: its words, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// The words; never empty.
    pub words: Vec<Word>,
}

/// Splits a script into simple commands. Comments, blank lines and control
/// operators (`;`, `&`, `&&`, `||`, `|`) separate commands; redirections are
/// dropped. Unterminated quotes and expansions are errors with a position.
pub fn commands(file: usize, text: &str) -> Result<Vec<Command>, (Loc, String)> {
    let mut lx = Lexer {
        chars: text.chars().collect(),
        i: 0,
        line: 1,
        col: 1,
        file,
    };
    let mut out = Vec::new();
    let mut cur: Vec<Word> = Vec::new();
    loop {
        lx.skip_blanks();
        let Some(c) = lx.peek() else { break };
        match c {
            '\n' | ';' | '&' | '|' => {
                lx.bump();
                if !cur.is_empty() {
                    out.push(Command {
                        words: std::mem::take(&mut cur),
                    });
                }
            }
            '#' => {
                while lx.peek().is_some_and(|c| c != '\n') {
                    lx.bump();
                }
            }
            '>' | '<' => {
                // A redirection: drop the operator and its target.
                while matches!(lx.peek(), Some('>' | '<' | '&')) {
                    lx.bump();
                }
                lx.skip_blanks();
                if lx.peek().is_some_and(|c| !is_break(c)) {
                    lx.word()?;
                }
            }
            _ => {
                let w = lx.word()?;
                // `2>&1`, `1>log`: a word that is a digit followed by `>`.
                if lx.peek() == Some('>')
                    && w.literal()
                        .is_some_and(|t| t.chars().all(|c| c.is_ascii_digit()))
                {
                    continue;
                }
                cur.push(w);
            }
        }
    }
    if !cur.is_empty() {
        out.push(Command { words: cur });
    }
    Ok(out)
}

fn is_break(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | ';' | '&' | '|' | '>' | '<')
}

struct Lexer {
    chars: Vec<char>,
    i: usize,
    line: u64,
    col: u64,
    file: usize,
}

impl Lexer {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.chars.get(self.i + k).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn at(&self) -> Loc {
        Loc {
            file: self.file,
            line: self.line,
            column: self.col,
        }
    }

    /// Blanks and backslash-newline continuations.
    fn skip_blanks(&mut self) {
        loop {
            match self.peek() {
                Some(' ' | '\t' | '\r') => {
                    self.bump();
                }
                Some('\\') if matches!(self.peek_at(1), Some('\n')) => {
                    self.bump();
                    self.bump();
                }
                Some('\\') if self.peek_at(1) == Some('\r') && self.peek_at(2) == Some('\n') => {
                    self.bump();
                    self.bump();
                    self.bump();
                }
                _ => return,
            }
        }
    }

    fn word(&mut self) -> Result<Word, (Loc, String)> {
        let at = self.at();
        let mut segs: Vec<Seg> = Vec::new();
        let mut lit = String::new();
        let flush = |lit: &mut String, segs: &mut Vec<Seg>| {
            if !lit.is_empty() {
                segs.push(Seg::Lit(std::mem::take(lit)));
            }
        };
        while let Some(c) = self.peek() {
            match c {
                c if is_break(c) || c == '\r' => break,
                '\\' => {
                    self.bump();
                    match self.bump() {
                        Some('\n') | None => {}
                        Some(n) => lit.push(n),
                    }
                }
                '\'' => {
                    let start = self.at();
                    self.bump();
                    loop {
                        match self.bump() {
                            Some('\'') => break,
                            Some(n) => lit.push(n),
                            None => return Err((start, "found an unterminated `'` quote, expected a closing `'`: the rest of the file would be one word".into())),
                        }
                    }
                    // `''` is an empty word, still a word.
                    if lit.is_empty() && segs.is_empty() {
                        segs.push(Seg::Lit(String::new()));
                    }
                }
                '"' => {
                    let start = self.at();
                    self.bump();
                    if self.peek() == Some('"') && segs.is_empty() && lit.is_empty() {
                        segs.push(Seg::Lit(String::new()));
                    }
                    loop {
                        match self.peek() {
                            Some('"') => {
                                self.bump();
                                break;
                            }
                            Some('\\')
                                if matches!(self.peek_at(1), Some('"' | '\\' | '$' | '`')) =>
                            {
                                self.bump();
                                lit.extend(self.bump());
                            }
                            Some('\\') if self.peek_at(1) == Some('\n') => {
                                self.bump();
                                self.bump();
                            }
                            Some('$') => {
                                flush(&mut lit, &mut segs);
                                segs.push(self.dollar()?);
                            }
                            Some('`') => {
                                flush(&mut lit, &mut segs);
                                segs.push(self.backquote()?);
                            }
                            Some(n) => {
                                self.bump();
                                lit.push(n);
                            }
                            None => return Err((start, "found an unterminated `\"` quote, expected a closing `\"`: the rest of the file would be one word".into())),
                        }
                    }
                }
                '$' => {
                    flush(&mut lit, &mut segs);
                    segs.push(self.dollar()?);
                }
                '`' => {
                    flush(&mut lit, &mut segs);
                    segs.push(self.backquote()?);
                }
                _ => {
                    self.bump();
                    lit.push(c);
                }
            }
        }
        flush(&mut lit, &mut segs);
        Ok(Word { segs, at })
    }

    fn dollar(&mut self) -> Result<Seg, (Loc, String)> {
        let start = self.at();
        self.bump();
        match self.peek() {
            Some('(') => {
                let mut depth = 0usize;
                let mut text = String::from("$");
                loop {
                    match self.bump() {
                        Some(c @ '(') => {
                            depth += 1;
                            text.push(c);
                        }
                        Some(c @ ')') => {
                            text.push(c);
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        Some(c) => text.push(c),
                        None => {
                            return Err((
                                start,
                                "found an unterminated `$(`, expected a closing `)`".into(),
                            ));
                        }
                    }
                }
                // `$((a))` closes with `))`: the loop ends after the outer one.
                Ok(Seg::Computed(text))
            }
            Some('{') => {
                self.bump();
                let mut name = String::new();
                loop {
                    match self.bump() {
                        Some('}') => break,
                        Some(c) => name.push(c),
                        None => {
                            return Err((
                                start,
                                "found an unterminated `${`, expected a closing `}`".into(),
                            ));
                        }
                    }
                }
                if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !name.is_empty() {
                    Ok(Seg::Var(name))
                } else {
                    // `${X:-default}`, `${#X}`: parameter operators.
                    Ok(Seg::Computed(format!("${{{name}}}")))
                }
            }
            Some(c) if c.is_ascii_digit() => {
                self.bump();
                Ok(Seg::Var(c.to_string()))
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let mut name = String::new();
                while let Some(c) = self.peek() {
                    if c.is_ascii_alphanumeric() || c == '_' {
                        name.push(c);
                        self.bump();
                    } else {
                        break;
                    }
                }
                Ok(Seg::Var(name))
            }
            _ => Ok(Seg::Lit("$".into())),
        }
    }

    fn backquote(&mut self) -> Result<Seg, (Loc, String)> {
        let start = self.at();
        self.bump();
        let mut text = String::from("`");
        loop {
            match self.bump() {
                Some('`') => break,
                Some(c) => text.push(c),
                None => {
                    return Err((
                        start,
                        "found an unterminated backquote, expected a closing backquote".into(),
                    ));
                }
            }
        }
        text.push('`');
        Ok(Seg::Computed(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Vec<String>> {
        commands(0, text)
            .unwrap_or_default()
            .into_iter()
            .map(|c| c.words.iter().map(Word::shown).collect())
            .collect()
    }

    #[test]
    fn continuations_quotes_comments_and_positions() {
        let text = "# c\nexport A=\"x y\" # note\nvllm serve /m \\\n  --kv '{\"a\": 1}' --port $2 > log 2>&1 &\n";
        assert_eq!(
            words(text),
            vec![
                vec!["export".to_owned(), "A=x y".to_owned()],
                vec![
                    "vllm".to_owned(),
                    "serve".to_owned(),
                    "/m".to_owned(),
                    "--kv".to_owned(),
                    "{\"a\": 1}".to_owned(),
                    "--port".to_owned(),
                    "$2".to_owned()
                ],
            ]
        );
        let cmds = commands(0, text).unwrap_or_default();
        let port = &cmds[1].words[6];
        assert_eq!((port.at.line, port.at.column), (4, 26));
        assert_eq!(port.sole_var(), Some("2"));
    }

    #[test]
    fn computed_values_are_kept_as_written() {
        let cmds = commands(0, "X=$((1 + 2))\nY=$(hostname -I)\n").unwrap_or_default();
        assert_eq!(
            cmds[0].words[0].segs,
            vec![Seg::Lit("X=".into()), Seg::Computed("$((1 + 2))".into())]
        );
        assert_eq!(
            cmds[1].words[0].segs[1],
            Seg::Computed("$(hostname -I)".into())
        );
    }

    #[test]
    fn unterminated_quote_is_an_error_at_the_quote() {
        let e = commands(0, "echo ok\nvllm serve '/m\n").err();
        assert_eq!(e.map(|(l, _)| (l.line, l.column)), Some((2, 12)));
    }
}
