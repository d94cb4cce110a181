//! Serve settings: per node, per role and common, graph options,
//! speculative decoding, extra flags and env.

use super::{Cx, SERVE_FIELDS};
use crate::parse::{Block, Entry, Key, Range, Value};
use pd_dsl_core::Spanned;
use pd_dsl_core::spec::{EnvEntry, EnvValue, FlagEntry, GraphMode, ServeSpec, SpeculativeSpec};
use std::collections::BTreeMap;

impl Cx {
    /// `nodes: { 1: { ... }, 3: { ... } }`: serve settings per node index.
    pub(super) fn nodes(&mut self, v: &Value) -> BTreeMap<u32, ServeSpec> {
        let mut out = BTreeMap::new();
        let Some(b) = self.block(v, "nodes") else {
            return out;
        };
        for e in &b.entries {
            let range = Range::of(e.key.span());
            let Key::Int(n) = &e.key else {
                self.err(
                    range,
                    format!(
                        "found `{}` in `nodes`, expected a node index: `nodes: {{ 1: {{ gpu_memory_utilization: 0.92 }} }}`",
                        e.key.text()
                    ),
                );
                continue;
            };
            let Ok(node) = n.base10_parse::<u32>() else {
                self.err(
                    range,
                    format!(
                        "found node index `{}`, expected an unsuffixed integer from 0",
                        n.base10_digits()
                    ),
                );
                continue;
            };
            if !e.colon {
                self.err(
                    e.value.range(),
                    format!("found `{node}(...)`, expected `{node}: {{ ... }}`"),
                );
                continue;
            }
            if out.contains_key(&node) {
                self.err(
                    range,
                    format!("found node {node} twice in `nodes`, expected it once: the second would silently win"),
                );
                continue;
            }
            let block = self.serve(&e.value, &format!("nodes.{node}"));
            out.insert(node, block);
        }
        out
    }

    pub(super) fn serve(&mut self, v: &Value, what: &str) -> ServeSpec {
        let mut s = ServeSpec::default();
        let Some(b) = self.block(v, what) else {
            return s;
        };
        s.site = self.span_site(b.span);
        let f = self.fields(&b.entries, SERVE_FIELDS, what);
        // In source order, so errors read top to bottom.
        let mut ordered: Vec<(&String, &Entry)> = f.iter().map(|(k, e)| (k, *e)).collect();
        ordered.sort_by_key(|(_, e)| {
            b.entries
                .iter()
                .position(|x| std::ptr::eq(x, *e))
                .unwrap_or(usize::MAX)
        });
        for (key, e) in ordered {
            let v = &e.value;
            let k = key.as_str();
            match k {
                "max_model_len" => s.max_model_len = self.int(v, k),
                "max_num_batched_tokens" => s.max_num_batched_tokens = self.int(v, k),
                "max_num_seqs" => s.max_num_seqs = self.int(v, k),
                "block_size" => s.block_size = self.int(v, k),
                "seed" => s.seed = self.int(v, k),
                "gpu_memory_utilization" => {
                    s.gpu_memory_utilization = match v {
                        Value::Float(x) if x.suffix().is_empty() => {
                            let site = self.span_site(x.span());
                            Some(Spanned::new(x.base10_digits().to_owned(), site))
                        }
                        Value::Int(x) if x.suffix().is_empty() => {
                            let site = self.span_site(x.span());
                            Some(Spanned::new(x.base10_digits().to_owned(), site))
                        }
                        _ => {
                            self.expected(v, "a number like `0.9`", k);
                            None
                        }
                    }
                }
                "expert_parallel" => s.expert_parallel = self.boolean(v, k),
                "trust_remote_code" => s.trust_remote_code = self.boolean(v, k),
                "async_scheduling" => s.async_scheduling = self.boolean(v, k),
                "prefix_caching" => s.prefix_caching = self.boolean(v, k),
                "graph" => {
                    const MODES: &[&str] = &["eager", "full_decode_only", "full", "piecewise"];
                    match v {
                        Value::Kinded(mode, block) => {
                            let mode = Value::Ident(mode.clone());
                            s.graph = self.keyword(&mode, k, MODES, GraphMode::parse);
                            s.capture_sizes = self.graph_options(block);
                        }
                        _ => s.graph = self.keyword(v, k, MODES, GraphMode::parse),
                    }
                }
                "speculative" => s.speculative = self.speculative(v),
                "additional_config" => {
                    s.additional_config = self.json_map(v, k);
                    if let Value::Block(b) = v {
                        for e in &b.entries {
                            self.nested_sites(
                                &e.value,
                                &e.key.text(),
                                &mut s.additional_config_sites,
                            );
                        }
                    }
                }
                "flags" => s.flags = self.flags(v),
                "env" => s.env = self.env(v),
                _ => {}
            }
        }
        s
    }

    /// `{ capture_sizes: [4, 8, 16] }` after a graph mode.
    fn graph_options(&mut self, b: &Block) -> Vec<Spanned<u64>> {
        self.errors.extend(b.errors.iter().cloned());
        self.broken.extend(b.broken.iter().cloned());
        let f = self.fields(&b.entries, &["capture_sizes"], "graph");
        let Some(e) = f.get("capture_sizes") else {
            self.missing(Range::of(b.span), "graph", "capture_sizes: [4, 8, 16]");
            return Vec::new();
        };
        match &e.value {
            Value::List(span, items) if items.is_empty() => {
                self.err(
                    Range::of(*span),
                    "found an empty `capture_sizes` list, expected at least one size: leave the block out to use vLLM's default sizes",
                );
                Vec::new()
            }
            Value::List(_, items) => items
                .iter()
                .filter_map(|i| self.int(i, "capture_sizes"))
                .collect(),
            other => {
                self.expected(other, "a list of sizes like `[4, 8, 16]`", "capture_sizes");
                Vec::new()
            }
        }
    }

    fn speculative(&mut self, v: &Value) -> Option<SpeculativeSpec> {
        let b = self.block(v, "speculative")?;
        let f = self.fields(
            &b.entries,
            &["method", "tokens", "enforce_eager"],
            "speculative",
        );
        let method = match f.get("method") {
            Some(e) => match &e.value {
                Value::Str(_) => self.string(&e.value, "method"),
                other => self.name(other, "method"),
            },
            None => {
                self.missing(Range::of(b.span), "speculative", "method: mtp");
                None
            }
        };
        let tokens = match f.get("tokens") {
            Some(e) => self.int(&e.value, "tokens"),
            None => {
                self.missing(Range::of(b.span), "speculative", "tokens: 1");
                None
            }
        };
        let enforce_eager = match f.get("enforce_eager") {
            Some(e) => self.boolean(&e.value, "enforce_eager"),
            None => None,
        };
        let site = self.span_site(b.span);
        Some(SpeculativeSpec {
            method: method?,
            tokens: tokens?,
            enforce_eager,
            site,
        })
    }

    fn flags(&mut self, v: &Value) -> Vec<FlagEntry> {
        let Value::List(_, items) = v else {
            self.expected(v, "a list `[\"--flag\", \"--flag\" = value]`", "flags");
            return Vec::new();
        };
        let mut out = Vec::new();
        for item in items {
            match item {
                Value::Str(s) => out.push(FlagEntry {
                    name: Spanned::new(s.value(), self.span_site(s.span())),
                    value: None,
                }),
                Value::Assign(s, value) => {
                    let name = Spanned::new(s.value(), self.span_site(s.span()));
                    let site = self.site(value.range());
                    if let Some(j) = self.json(value) {
                        out.push(FlagEntry {
                            name,
                            value: Some(Spanned::new(j, site)),
                        });
                    }
                }
                _ => self.expected(item, "`\"--flag\"` or `\"--flag\" = value`", "flags"),
            }
        }
        out
    }

    fn env(&mut self, v: &Value) -> Vec<EnvEntry> {
        let mut out = Vec::new();
        let Some(b) = self.block(v, "env") else {
            return out;
        };
        for e in &b.entries {
            if !e.colon {
                self.err(e.value.range(), "found a call, expected `NAME: \"value\"`");
                continue;
            }
            let name = Spanned::new(e.key.text(), self.span_site(e.key.span()));
            let value = match &e.value {
                Value::Str(s) => EnvValue::Literal(s.value()),
                Value::Int(i) => match self.lit_int(i, "") {
                    Some(n) => EnvValue::Literal(n.value.to_string()),
                    None => continue,
                },
                Value::Call(f, _, args) if f == "prepend" => match args.as_slice() {
                    [Value::Str(s)] => EnvValue::Prepend { prepend: s.value() },
                    _ => {
                        self.expected(&e.value, "`prepend(\"/path\")`", &name.value);
                        continue;
                    }
                },
                other => {
                    self.expected(
                        other,
                        "a string, an integer or `prepend(\"/path\")`",
                        &name.value,
                    );
                    continue;
                }
            };
            let site = self.site(e.value.range());
            out.push(EnvEntry {
                name,
                value: Spanned::new(value, site),
            });
        }
        out
    }
}
