//! Tokens → syntax tree. The tree is deliberately close to the tokens: a
//! layout is a list of `key: value` entries, values are JSON-like Rust tokens
//! plus identifiers, calls (`before("v0.21.0rc1")`), kinded blocks
//! (`mooncake_hybrid { ... }`) and the card's topology notation. What a key
//! means is decided in `lower`, which can then say "found X, expected Y".
//!
//! Entries are parsed one at a time on a fork, so one malformed entry is
//! reported and skipped while the rest of the layout is still read.

use proc_macro2::{Span, TokenTree};
use syn::ext::IdentExt;
use syn::parse::discouraged::Speculative;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Error, Ident, LitBool, LitFloat, LitInt, LitStr, Result, Token, braced, bracketed};

pub mod kw {
    syn::custom_keyword!(x);
    syn::custom_keyword!(doc);
}

/// A source range: rustc underlines from `start` to `end`.
#[derive(Clone, Copy, Debug)]
pub struct Range {
    pub start: Span,
    pub end: Span,
}

impl Range {
    pub fn of(span: Span) -> Range {
        Range {
            start: span,
            end: span,
        }
    }
}

/// The whole macro input: doc comments, then entries.
pub struct Layout {
    /// `/// ...` lines, as written after `doc =`.
    pub docs: Vec<LitStr>,
    pub entries: Vec<Entry>,
    /// Entries that could not be parsed.
    pub errors: Vec<Error>,
    /// Keys of those entries, so they are not also reported as missing.
    pub broken: Vec<String>,
}

impl Parse for Layout {
    fn parse(input: ParseStream) -> Result<Self> {
        let mut docs = Vec::new();
        while input.peek(Token![#]) {
            docs.push(input.parse::<DocAttr>()?.text);
        }
        let (entries, errors, broken) = entries(input);
        Ok(Layout {
            docs,
            entries,
            errors,
            broken,
        })
    }
}

/// `#[doc = "..."]`, which is what `/// ...` turns into.
struct DocAttr {
    text: LitStr,
}

impl Parse for DocAttr {
    fn parse(input: ParseStream) -> Result<Self> {
        input.parse::<Token![#]>()?;
        let content;
        bracketed!(content in input);
        content.parse::<kw::doc>()?;
        content.parse::<Token![=]>()?;
        let text = content.parse()?;
        Ok(DocAttr { text })
    }
}

/// A key: a field name, or a string (JSON objects, `additional_config`).
#[derive(Clone)]
pub enum Key {
    Ident(Ident),
    Str(LitStr),
    /// A node index (`nodes: { 1: { ... } }`).
    Int(LitInt),
}

impl Key {
    pub fn text(&self) -> String {
        match self {
            Key::Ident(i) => i.unraw().to_string(),
            Key::Str(s) => s.value(),
            Key::Int(n) => n.base10_digits().to_owned(),
        }
    }

    pub fn span(&self) -> Span {
        match self {
            Key::Ident(i) => i.span(),
            Key::Str(s) => s.span(),
            Key::Int(n) => n.span(),
        }
    }
}

/// `key: value`, or the call form `allow(rule, "reason")` (then `colon` is
/// false and `value` is the call).
pub struct Entry {
    pub key: Key,
    pub colon: bool,
    pub value: Value,
}

impl Parse for Entry {
    fn parse(input: ParseStream) -> Result<Self> {
        let lookahead = input.lookahead1();
        let key = if lookahead.peek(LitStr) {
            Key::Str(input.parse()?)
        } else if lookahead.peek(LitInt) {
            Key::Int(input.parse()?)
        } else if lookahead.peek(Ident::peek_any) {
            Key::Ident(Ident::parse_any(input)?)
        } else {
            return Err(lookahead.error());
        };
        if let Key::Ident(name) = &key
            && input.peek(syn::token::Paren)
        {
            let (span, args) = call_args(input)?;
            return Ok(Entry {
                key: key.clone(),
                colon: false,
                value: Value::Call(name.clone(), span, args),
            });
        }
        if !input.peek(Token![:]) {
            return Err(input.error(format!(
                "found {}, expected `:` after `{}`",
                found(input),
                key.text()
            )));
        }
        input.parse::<Token![:]>()?;
        if input.is_empty() || input.peek(Token![,]) {
            return Err(input.error(format!(
                "found {}, expected a value for `{}`",
                found(input),
                key.text()
            )));
        }
        let value = input.parse()?;
        Ok(Entry {
            key,
            colon: true,
            value,
        })
    }
}

/// Comma-separated entries up to the end of `input`, each parsed on a fork
/// so that an error skips only to the next comma.
fn entries(input: ParseStream) -> (Vec<Entry>, Vec<Error>, Vec<String>) {
    let mut items = Vec::new();
    let mut errors = Vec::new();
    let mut broken = Vec::new();
    while !input.is_empty() {
        let fork = input.fork();
        match fork.parse::<Entry>() {
            Ok(entry) => {
                input.advance_to(&fork);
                items.push(entry);
                if !input.is_empty() && !input.peek(Token![,]) {
                    // Read on as if the comma were there: a forgotten comma
                    // should not also lose the next field.
                    errors.push(input.error(format!(
                        "found {}, expected `,` between fields",
                        found(input)
                    )));
                }
            }
            Err(e) => {
                errors.push(e);
                if let Ok(key) = input.fork().call(Ident::parse_any) {
                    broken.push(key.unraw().to_string());
                }
                skip_to_comma(input);
            }
        }
        if input.peek(Token![,]) {
            let _ = input.parse::<Token![,]>();
        }
    }
    (items, errors, broken)
}

fn skip_to_comma(input: ParseStream) {
    while !input.is_empty() && !input.peek(Token![,]) {
        if input.parse::<TokenTree>().is_err() {
            break;
        }
    }
}

/// Describes the next token for a "found ..." message.
pub fn found(input: ParseStream) -> String {
    match input.cursor().token_tree() {
        None => "the end of the block".to_owned(),
        Some((TokenTree::Group(g), _)) => match g.delimiter() {
            proc_macro2::Delimiter::Brace => "`{ ... }`".to_owned(),
            proc_macro2::Delimiter::Bracket => "`[ ... ]`".to_owned(),
            proc_macro2::Delimiter::Parenthesis => "`( ... )`".to_owned(),
            proc_macro2::Delimiter::None => format!("`{g}`"),
        },
        Some((tt, _)) => format!("`{tt}`"),
    }
}

fn call_args(input: ParseStream) -> Result<(Span, Vec<Value>)> {
    let content;
    let paren = syn::parenthesized!(content in input);
    let args = Punctuated::<Value, Token![,]>::parse_terminated(&content)?;
    Ok((paren.span.join(), args.into_iter().collect()))
}

/// `{ key: value, ... }`.
pub struct Block {
    /// The braces.
    pub span: Span,
    pub entries: Vec<Entry>,
    /// Entries that could not be parsed.
    pub errors: Vec<Error>,
    /// Keys of those entries, so they are not also reported as missing.
    pub broken: Vec<String>,
}

impl Parse for Block {
    fn parse(input: ParseStream) -> Result<Self> {
        let content;
        let brace = braced!(content in input);
        let (entries, errors, broken) = entries(&content);
        Ok(Block {
            span: brace.span.join(),
            entries,
            errors,
            broken,
        })
    }
}

/// Any value the DSL writes.
pub enum Value {
    Str(LitStr),
    Int(LitInt),
    Float(LitFloat),
    Bool(LitBool),
    /// `-1`, `-0.5` (JSON only).
    Neg(Span, Box<Value>),
    /// `a3`, `mtp`, `inf`, `null`.
    Ident(Ident),
    /// `before("v0.21.0rc1")`, `prepend("/path")`.
    Call(Ident, Span, Vec<Value>),
    /// `mooncake_hybrid { ... }`.
    Kinded(Ident, Block),
    Block(Block),
    /// `[a, b]`; the span is the brackets.
    List(Span, Vec<Value>),
    /// `"--flag" = value` inside `flags: [...]`.
    Assign(LitStr, Box<Value>),
    Topology(Topology),
}

impl Value {
    /// What to underline when the value is wrong.
    pub fn range(&self) -> Range {
        match self {
            Value::Str(s) => Range::of(s.span()),
            Value::Int(i) => Range::of(i.span()),
            Value::Float(f) => Range::of(f.span()),
            Value::Bool(b) => Range::of(b.span),
            Value::Neg(s, v) => Range {
                start: *s,
                end: v.range().end,
            },
            Value::Ident(i) => Range::of(i.span()),
            Value::Call(i, s, _) => Range {
                start: i.span(),
                end: *s,
            },
            Value::Kinded(i, b) => Range {
                start: i.span(),
                end: b.span,
            },
            Value::Block(b) => Range::of(b.span),
            Value::List(s, _) => Range::of(*s),
            Value::Assign(s, v) => Range {
                start: s.span(),
                end: v.range().end,
            },
            Value::Topology(t) => t.range,
        }
    }

    /// How a "found ..." message names it.
    pub fn describe(&self) -> String {
        match self {
            Value::Str(s) => format!("`{:?}`", s.value()),
            Value::Int(i) => format!("`{i}`"),
            Value::Float(f) => format!("`{f}`"),
            Value::Bool(b) => format!("`{}`", b.value),
            Value::Neg(_, v) => format!("`-{}`", v.describe().trim_matches('`')),
            Value::Ident(i) => format!("`{i}`"),
            Value::Call(i, _, _) => format!("`{i}(...)`"),
            Value::Kinded(i, _) => format!("`{i} {{ ... }}`"),
            Value::Block(_) => "`{ ... }`".to_owned(),
            Value::List(_, _) => "`[ ... ]`".to_owned(),
            Value::Assign(s, _) => format!("`{:?} = ...`", s.value()),
            Value::Topology(_) => "a topology `< ... >`".to_owned(),
        }
    }
}

impl Parse for Value {
    fn parse(input: ParseStream) -> Result<Self> {
        let lookahead = input.lookahead1();
        if lookahead.peek(LitStr) {
            let s: LitStr = input.parse()?;
            if input.peek(Token![=]) && !input.peek(Token![==]) {
                input.parse::<Token![=]>()?;
                let v: Value = input.parse()?;
                return Ok(Value::Assign(s, Box::new(v)));
            }
            Ok(Value::Str(s))
        } else if lookahead.peek(LitInt) {
            Ok(Value::Int(input.parse()?))
        } else if lookahead.peek(LitFloat) {
            Ok(Value::Float(input.parse()?))
        } else if lookahead.peek(LitBool) {
            Ok(Value::Bool(input.parse()?))
        } else if lookahead.peek(Token![-]) {
            let minus: Token![-] = input.parse()?;
            let v: Value = if input.peek(LitInt) {
                Value::Int(input.parse()?)
            } else if input.peek(LitFloat) {
                Value::Float(input.parse()?)
            } else {
                return Err(input.error(format!(
                    "found {} after `-`, expected a number",
                    found(input)
                )));
            };
            Ok(Value::Neg(minus.span, Box::new(v)))
        } else if lookahead.peek(syn::token::Brace) {
            Ok(Value::Block(input.parse()?))
        } else if lookahead.peek(syn::token::Bracket) {
            let content;
            let bracket = bracketed!(content in input);
            let items = Punctuated::<Value, Token![,]>::parse_terminated(&content)?;
            Ok(Value::List(
                bracket.span.join(),
                items.into_iter().collect(),
            ))
        } else if lookahead.peek(Token![<]) {
            Ok(Value::Topology(input.parse()?))
        } else if lookahead.peek(Ident::peek_any) {
            let ident = Ident::parse_any(input)?;
            if input.peek(syn::token::Paren) {
                let (span, args) = call_args(input)?;
                Ok(Value::Call(ident, span, args))
            } else if input.peek(syn::token::Brace) {
                Ok(Value::Kinded(ident, input.parse()?))
            } else {
                Ok(Value::Ident(ident))
            }
        } else {
            Err(lookahead.error())
        }
    }
}

/// `<prefill 1 x dp4tp4; decode 3 x dp16tp1;>`.
pub struct Topology {
    pub range: Range,
    pub groups: Vec<Group>,
}

impl Parse for Topology {
    fn parse(input: ParseStream) -> Result<Self> {
        let open: Token![<] = input.parse()?;
        let mut groups = Vec::new();
        loop {
            if input.peek(Token![>]) {
                break;
            }
            groups.push(input.parse::<Group>()?);
            let lookahead = input.lookahead1();
            if lookahead.peek(Token![;]) {
                input.parse::<Token![;]>()?;
            } else if lookahead.peek(Token![>]) {
                break;
            } else {
                return Err(lookahead.error());
            }
        }
        let close: Token![>] = input.parse()?;
        Ok(Topology {
            range: Range {
                start: open.span,
                end: close.span,
            },
            groups,
        })
    }
}

/// `prefill 3 x dp4tp4` with an optional `/ 2` ranks per node.
pub struct Group {
    pub role: Ident,
    pub count: LitInt,
    /// `dp4tp4`, split into sizes by `lower`.
    pub shape: Ident,
    pub ranks_per_node: Option<LitInt>,
}

impl Parse for Group {
    fn parse(input: ParseStream) -> Result<Self> {
        if !input.peek(Ident::peek_any) {
            return Err(input.error(format!(
                "found {}, expected an engine group like `prefill 1 x dp4tp4`",
                found(input)
            )));
        }
        let role = Ident::parse_any(input)?;
        if !input.peek(LitInt) {
            return Err(input.error(format!(
                "found {}, expected the engine count after `{role}`, like `{role} 1 x dp4tp4`",
                found(input)
            )));
        }
        let count: LitInt = input.parse()?;
        // `3x` lexes as the integer 3 with suffix `x`: accept it as `3 x`.
        if count.suffix() != "x" {
            if !input.peek(kw::x) {
                return Err(input.error(format!(
                    "found {}, expected `x` between the engine count and the shape, like `{role} {count} x dp4tp4`",
                    found(input)
                )));
            }
            input.parse::<kw::x>()?;
        }
        if !input.peek(Ident::peek_any) {
            return Err(input.error(format!(
                "found {}, expected an engine shape `dp<N>tp<M>` like `dp4tp4`",
                found(input)
            )));
        }
        let shape = Ident::parse_any(input)?;
        let ranks_per_node = if input.peek(Token![/]) {
            input.parse::<Token![/]>()?;
            if !input.peek(LitInt) {
                return Err(input.error(format!(
                    "found {} after `/`, expected the ranks per node, like `{shape} / 2`",
                    found(input)
                )));
            }
            Some(input.parse()?)
        } else {
            None
        };
        Ok(Group {
            role,
            count,
            shape,
            ranks_per_node,
        })
    }
}
