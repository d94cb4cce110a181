//! One script file interpreted: its variables, `vllm serve` commands,
//! launcher lines and proxy lines.

use super::Fail;
use super::serve::Tok;
use crate::import::build::{P, p};
use crate::import::shell::{Seg, Word};
use crate::import::{Loc, shell};
use crate::spec::ProxyScript;

/// One script file, interpreted.
#[derive(Default)]
pub(super) struct Script {
    /// Variables in assignment order: name, value, exported.
    pub(super) vars: Vec<(String, Word, bool)>,
    pub(super) serves: Vec<Vec<Tok>>,
    pub(super) launchers: Vec<Vec<Tok>>,
    pub(super) proxies: Vec<(ProxyScript, Vec<Tok>)>,
}

impl Script {
    fn var(&self, name: &str) -> Option<&Word> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _, _)| n == name)
            .map(|(_, w, _)| w)
    }

    /// A word with the file's literal variables substituted. `$NAME` of an
    /// unknown or non-literal variable, and positional `$1..$9`, stay.
    fn resolve(&self, w: &Word, own: Option<&str>) -> Tok {
        let mut text = String::new();
        let mut literal = true;
        for seg in &w.segs {
            match seg {
                Seg::Lit(t) => text.push_str(t),
                Seg::Var(v) if Some(v.as_str()) != own => {
                    match self.var(v).and_then(Word::literal) {
                        Some(t) => text.push_str(&t),
                        None => {
                            literal = false;
                            text.push('$');
                            text.push_str(v);
                        }
                    }
                }
                Seg::Var(v) => {
                    literal = false;
                    text.push('$');
                    text.push_str(v);
                }
                Seg::Computed(c) => {
                    literal = false;
                    text.push_str(c);
                }
            }
        }
        Tok {
            text,
            at: w.at,
            literal,
        }
    }

    pub(super) fn env(&self) -> Vec<(P<String>, P<String>)> {
        let mut out: Vec<(P<String>, P<String>)> = Vec::new();
        for (name, w, exported) in &self.vars {
            if !exported {
                continue;
            }
            let t = self.resolve(w, Some(name));
            let name_at = Loc {
                column: w.at.column.saturating_sub(name.len() as u64 + 1).max(1),
                ..w.at
            };
            match out.iter_mut().find(|(k, _)| k.v == *name) {
                Some(slot) => slot.1 = p(t.text, t.at),
                None => out.push((p(name.clone(), name_at), p(t.text, t.at))),
            }
        }
        out
    }
}

pub(super) fn interpret(file: usize, text: &str) -> Result<Script, Fail> {
    let mut s = Script::default();
    for c in shell::commands(file, text)? {
        let mut words: &[Word] = &c.words;
        // Leading assignments (`A=1 B=2 cmd` or a bare `A=1`).
        let mut exported = false;
        if words.first().and_then(Word::literal).as_deref() == Some("export") {
            exported = true;
            words = &words[1..];
        }
        while let Some(w) = words.first() {
            match assignment(w) {
                Some((name, value)) => {
                    s.vars.push((name, value, exported));
                    words = &words[1..];
                }
                None => break,
            }
        }
        if exported {
            continue;
        }
        while let Some(w) = words.first() {
            match w.literal().as_deref() {
                Some("nohup" | "exec" | "time") => words = &words[1..],
                _ => break,
            }
        }
        let toks: Vec<Tok> = words.iter().map(|w| s.resolve(w, None)).collect();
        let first = toks.first().map(|t| t.text.as_str()).unwrap_or_default();
        let second = toks.get(1).map(|t| t.text.as_str()).unwrap_or_default();
        if first == "vllm" && second == "serve" {
            s.serves.push(toks);
        } else if first.starts_with("python") {
            let rest = &toks[1..];
            let script = rest.first().map(|t| t.text.as_str()).unwrap_or_default();
            let base = script.rsplit('/').next().unwrap_or(script);
            if base == "launch_online_dp.py" {
                s.launchers.push(toks[2..].to_vec());
            } else if base == ProxyScript::LoadBalance.file_name() {
                s.proxies
                    .push((ProxyScript::LoadBalance, toks[2..].to_vec()));
            } else if base == ProxyScript::Layerwise.file_name() {
                s.proxies.push((ProxyScript::Layerwise, toks[2..].to_vec()));
            }
        }
    }
    Ok(s)
}

/// `NAME=value` as a word: the name and the value's pieces.
fn assignment(w: &Word) -> Option<(String, Word)> {
    let Some(Seg::Lit(first)) = w.segs.first() else {
        return None;
    };
    let (name, rest) = first.split_once('=')?;
    if name.is_empty()
        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        || name.starts_with(|c: char| c.is_ascii_digit())
    {
        return None;
    }
    let mut segs = Vec::new();
    if !rest.is_empty() {
        segs.push(Seg::Lit(rest.to_owned()));
    }
    segs.extend(w.segs[1..].iter().cloned());
    let col = w.at.column + name.len() as u64 + 1;
    Some((
        name.to_owned(),
        Word {
            segs,
            at: Loc {
                column: col,
                ..w.at
            },
        },
    ))
}
