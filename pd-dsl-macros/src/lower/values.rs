//! Reading values: sites and errors, known keys and blocks, and the literal
//! values (integers, strings, booleans, names, keywords, JSON).

use super::{Cx, error, list};
use crate::parse::{Block, Entry, Key, Range, Value};
use pd_dsl_core::rules::{closest, did_you_mean};
use pd_dsl_core::spec::Json;
use pd_dsl_core::{Site, Spanned};
use proc_macro2::Span;
use std::collections::BTreeMap;
use syn::LitInt;

impl Cx {
    pub(super) fn site(&mut self, range: Range) -> Site {
        self.ranges.push(range);
        Site(u32::try_from(self.ranges.len() - 1).unwrap_or(0))
    }

    pub(super) fn span_site(&mut self, span: Span) -> Site {
        self.site(Range::of(span))
    }

    pub(super) fn err(&mut self, range: Range, message: impl std::fmt::Display) {
        self.errors.push(error(range, message));
    }

    pub(super) fn expected(&mut self, v: &Value, what: &str, field: &str) {
        self.err(
            v.range(),
            format!("found {}, expected {what} for `{field}`", v.describe()),
        );
    }

    /// The entry's field name when it is one of `known` (reported otherwise,
    /// with "did you mean"); `block` names the enclosing block, `None` for
    /// the layout's top level.
    pub(super) fn known_key(
        &mut self,
        e: &Entry,
        known: &[&str],
        block: Option<&str>,
    ) -> Option<String> {
        let key = e.key.text();
        let range = Range::of(e.key.span());
        let within = block.map(|b| format!(" in `{b}`")).unwrap_or_default();
        if let Key::Str(s) = &e.key {
            self.err(
                range,
                format!(
                    "found {:?}, expected a field name without quotes{within}",
                    s.value()
                ),
            );
            return None;
        }
        if let Key::Int(n) = &e.key {
            self.err(
                range,
                format!(
                    "found `{}`, expected a field name{within} (node indexes go in `nodes: {{ N: {{ ... }} }}`)",
                    n.base10_digits()
                ),
            );
            return None;
        }
        if !known.contains(&key.as_str()) {
            // The author meant the suggested field: it is not also missing.
            if let Some(meant) = closest(&key, known.iter().copied()) {
                self.broken.insert(meant.to_owned());
            }
            let hint = did_you_mean(&key, known.iter().copied());
            let msg = match (hint.is_empty(), block) {
                (true, _) => format!(
                    "found unknown field `{key}`{within}, expected one of {}",
                    list(known)
                ),
                (false, Some(_)) => format!("found unknown field `{key}`{within}{hint}"),
                (false, None) => {
                    format!("found unknown field `{key}`, expected a layout field{hint}")
                }
            };
            self.err(range, msg);
            return None;
        }
        Some(key)
    }

    /// Reads a block's entries as named fields: reports unknown and repeated
    /// names and keeps the first of each.
    pub(super) fn fields<'a>(
        &mut self,
        entries: &'a [Entry],
        known: &[&str],
        what: &str,
    ) -> BTreeMap<String, &'a Entry> {
        let mut map: BTreeMap<String, &'a Entry> = BTreeMap::new();
        for e in entries {
            let range = Range::of(e.key.span());
            let Some(key) = self.known_key(e, known, Some(what)) else {
                continue;
            };
            if !e.colon {
                self.err(
                    e.value.range(),
                    format!("found `{key}(...)`, expected `{key}: value`"),
                );
                continue;
            }
            if map.contains_key(&key) {
                self.err(
                    range,
                    format!("found `{key}` twice in `{what}`, expected it once: the second would silently win"),
                );
                continue;
            }
            map.insert(key, e);
        }
        map
    }

    pub(super) fn block<'a>(&mut self, v: &'a Value, field: &str) -> Option<&'a Block> {
        match v {
            Value::Block(b) => {
                self.errors.extend(b.errors.iter().cloned());
                self.broken.extend(b.broken.iter().cloned());
                Some(b)
            }
            _ => {
                self.expected(v, "a block `{ ... }`", field);
                None
            }
        }
    }

    pub(super) fn missing(&mut self, at: Range, what: &str, example: &str) {
        let key = example.split(':').next().unwrap_or(example);
        if !self.broken.contains(key) {
            self.err(at, format!("missing `{example}` in `{what}`"));
        }
    }

    pub(super) fn lit_int(&mut self, lit: &LitInt, allowed_suffix: &str) -> Option<Spanned<u64>> {
        let suffix = lit.suffix();
        if !suffix.is_empty() && suffix != allowed_suffix {
            self.err(
                Range::of(lit.span()),
                format!(
                    "found `{lit}`, expected `{}` without the `{suffix}` suffix: DSL integers are untyped",
                    lit.base10_digits()
                ),
            );
            return None;
        }
        match lit.base10_digits().parse::<u64>() {
            Ok(n) => {
                let site = self.span_site(lit.span());
                Some(Spanned::new(n, site))
            }
            Err(_) => {
                self.err(
                    Range::of(lit.span()),
                    format!("found `{lit}`, expected an integer up to {}", u64::MAX),
                );
                None
            }
        }
    }

    pub(super) fn int(&mut self, v: &Value, field: &str) -> Option<Spanned<u64>> {
        match v {
            Value::Int(lit) => self.lit_int(lit, ""),
            _ => {
                self.expected(v, "an integer", field);
                None
            }
        }
    }

    pub(super) fn ints(&mut self, v: &Value, field: &str) -> Vec<Spanned<u64>> {
        match v {
            Value::List(_, items) => items.iter().filter_map(|i| self.int(i, field)).collect(),
            Value::Int(_) => self.int(v, field).into_iter().collect(),
            _ => {
                self.expected(v, "an integer or a list `[a, b]`", field);
                Vec::new()
            }
        }
    }

    pub(super) fn string(&mut self, v: &Value, field: &str) -> Option<Spanned<String>> {
        match v {
            Value::Str(s) => {
                let site = self.span_site(s.span());
                Some(Spanned::new(s.value(), site))
            }
            _ => {
                self.expected(v, "a string", field);
                None
            }
        }
    }

    pub(super) fn strings(&mut self, v: &Value, field: &str) -> Vec<Spanned<String>> {
        match v {
            Value::List(_, items) => items.iter().filter_map(|i| self.string(i, field)).collect(),
            _ => {
                self.expected(v, "a list of strings `[\"...\"]`", field);
                Vec::new()
            }
        }
    }

    pub(super) fn boolean(&mut self, v: &Value, field: &str) -> Option<Spanned<bool>> {
        match v {
            Value::Bool(b) => {
                let site = self.span_site(b.span);
                Some(Spanned::new(b.value, site))
            }
            _ => {
                self.expected(v, "`true` or `false`", field);
                None
            }
        }
    }

    /// An identifier, or a string where names may need other characters.
    pub(super) fn name(&mut self, v: &Value, field: &str) -> Option<Spanned<String>> {
        match v {
            Value::Ident(i) => {
                let site = self.span_site(i.span());
                Some(Spanned::new(i.to_string(), site))
            }
            _ => {
                self.expected(v, "a name", field);
                None
            }
        }
    }

    /// An identifier from a closed set, with "did you mean".
    pub(super) fn keyword<T>(
        &mut self,
        v: &Value,
        field: &str,
        options: &[&str],
        parse: impl Fn(&str) -> Option<T>,
    ) -> Option<Spanned<T>> {
        let Value::Ident(i) = v else {
            self.expected(v, &format!("one of {}", list(options)), field);
            return None;
        };
        let text = i.to_string();
        match parse(&text) {
            Some(t) => {
                let site = self.span_site(i.span());
                Some(Spanned::new(t, site))
            }
            None => {
                let hint = did_you_mean(&text, options.iter().copied());
                self.err(
                    Range::of(i.span()),
                    format!(
                        "found `{text}`, expected one of {} for `{field}`{hint}",
                        list(options)
                    ),
                );
                None
            }
        }
    }

    pub(super) fn json(&mut self, v: &Value) -> Option<Json> {
        match v {
            Value::Str(s) => Some(Json::String(s.value())),
            // A negative literal token (`-2` built by `quote!`, not the lexer).
            Value::Int(i) if i.base10_digits().starts_with('-') && i.suffix().is_empty() => {
                match i.base10_digits().parse::<i64>() {
                    Ok(n) => Some(Json::from(n)),
                    Err(_) => {
                        self.err(
                            v.range(),
                            format!("found `{i}`, expected an integer from {}", i64::MIN),
                        );
                        None
                    }
                }
            }
            Value::Int(i) => self.lit_int(i, "").map(|n| Json::from(n.value)),
            Value::Float(f) => self.float(f, false),
            Value::Bool(b) => Some(Json::Bool(b.value)),
            Value::Ident(i) if i == "null" => Some(Json::Null),
            Value::Neg(_, inner) => match &**inner {
                Value::Int(i) => {
                    let n = self.lit_int(i, "")?.value;
                    match 0i64.checked_sub_unsigned(n) {
                        Some(neg) => Some(Json::from(neg)),
                        None => {
                            self.err(
                                v.range(),
                                format!("found `-{n}`, expected an integer from {}", i64::MIN),
                            );
                            None
                        }
                    }
                }
                Value::Float(f) => self.float(f, true),
                _ => None,
            },
            Value::Block(b) => {
                self.errors.extend(b.errors.iter().cloned());
                let mut map = serde_json::Map::new();
                for e in &b.entries {
                    if !e.colon {
                        self.err(e.value.range(), "found a call, expected `\"key\": value`");
                        continue;
                    }
                    if let Some(j) = self.json(&e.value) {
                        map.insert(e.key.text(), j);
                    }
                }
                Some(Json::Object(map))
            }
            Value::List(_, items) => {
                let mut out = Vec::new();
                for i in items {
                    out.push(self.json(i)?);
                }
                Some(Json::Array(out))
            }
            _ => {
                self.err(
                    v.range(),
                    format!(
                        "found {}, expected a JSON value: a string, number, `true`, `false`, `null`, `{{ \"key\": value }}` or `[...]`",
                        v.describe()
                    ),
                );
                None
            }
        }
    }

    fn float(&mut self, f: &syn::LitFloat, negative: bool) -> Option<Json> {
        if !f.suffix().is_empty() {
            self.err(
                Range::of(f.span()),
                format!(
                    "found `{f}`, expected `{}` without the suffix: DSL numbers are untyped",
                    f.base10_digits()
                ),
            );
            return None;
        }
        let x: f64 = f.base10_digits().parse().ok()?;
        let x = if negative { -x } else { x };
        serde_json::Number::from_f64(x).map(Json::Number)
    }

    /// `{ "key": json, ... }` keeping each key's site (rules point at keys).
    pub(super) fn json_map(&mut self, v: &Value, field: &str) -> BTreeMap<String, Spanned<Json>> {
        let mut out = BTreeMap::new();
        let Some(b) = self.block(v, field) else {
            return out;
        };
        for e in &b.entries {
            if !e.colon {
                self.err(e.value.range(), "found a call, expected `\"key\": value`");
                continue;
            }
            let key = e.key.text();
            if out.contains_key(&key) {
                self.err(
                    Range::of(e.key.span()),
                    format!("found `{key}` twice in `{field}`, expected it once: the second would silently win"),
                );
                continue;
            }
            let site = self.span_site(e.key.span());
            if let Some(j) = self.json(&e.value) {
                out.insert(key, Spanned::new(j, site));
            }
        }
        out
    }

    /// Sites of the values inside a JSON object, by dotted path, so rules
    /// about an inner value point at it.
    pub(super) fn nested_sites(&mut self, v: &Value, path: &str, out: &mut BTreeMap<String, Site>) {
        let Value::Block(b) = v else { return };
        for e in b.entries.iter().filter(|e| e.colon) {
            let inner = format!("{path}.{}", e.key.text());
            let site = self.site(e.value.range());
            out.insert(inner.clone(), site);
            self.nested_sites(&e.value, &inner, out);
        }
    }
}
