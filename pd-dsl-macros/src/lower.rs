//! Syntax tree → `pd_dsl_core::LayoutSpec`. Every value gets a `Site`; the
//! matching source range is kept in `Lowered::ranges` so the check stage can
//! turn a rule's site back into a span. Lowering checks only what the spec's
//! types need (field names, literal kinds, integer ranges); every rule about
//! the values is left to `pd_dsl_core::check`, the code the runtime runs too.

use crate::parse::{Block, Entry, Group, Key, Layout, Range, Value};
use pd_dsl_core::rules::{closest, did_you_mean};
use pd_dsl_core::spec::{
    AllowSpec, BenchSpec, ConnectorKind, ConnectorSpec, DeviationSpec, EngineGroup, EngineId,
    EngineIdsSpec, EnvEntry, EnvValue, FigureSpec, FlagEntry, GraphMode, HardwareSpec, Json,
    KvPorts, LayoutSpec, PoolBackend, PoolSpec, PortsSpec, ProvenanceSpec, ProxyScript, ProxySpec,
    Role, RolePortsSpec, ServeSpec, SpeculativeSpec, Verification,
};
use pd_dsl_core::{Rule, Site, Spanned};
use proc_macro2::Span;
use std::collections::{BTreeMap, BTreeSet};
use syn::{Error, LitInt};

/// The lowered layout, the source range of every site, and what went wrong.
#[derive(Debug)]
pub struct Lowered {
    pub spec: LayoutSpec,
    /// `ranges[n]` is where `Site(n)` was written; `ranges[0]` is the call site.
    pub ranges: Vec<Range>,
    pub errors: Vec<Error>,
    /// An engine group was dropped (unknown role): rules that count roles or
    /// engines would only echo that error.
    pub topology_incomplete: bool,
}

impl Lowered {
    /// Whether a rule's finding can be trusted given the lowering errors.
    pub fn trusts(&self, rule: Rule) -> bool {
        !self.topology_incomplete
            || !matches!(
                rule,
                Rule::TopologyRoles
                    | Rule::ConnectorRoleMismatch
                    | Rule::KvPortCount
                    | Rule::EngineIdCount
                    | Rule::DpRpcPortRequired
                    | Rule::RoleShapeUniform
                    | Rule::PrefillTpGeDecodeTp
            )
    }

    /// The source range of a site (the call site for `Site::NONE`).
    pub fn range(&self, site: Site) -> Range {
        usize::try_from(site.0)
            .ok()
            .and_then(|i| self.ranges.get(i))
            .copied()
            .unwrap_or(Range::of(Span::call_site()))
    }
}

/// Builds a `syn::Error` underlining `range`.
pub fn error(range: Range, message: impl std::fmt::Display) -> Error {
    struct Tokens(Range);
    impl quote::ToTokens for Tokens {
        fn to_tokens(&self, tokens: &mut proc_macro2::TokenStream) {
            let mut a = proc_macro2::Punct::new('<', proc_macro2::Spacing::Alone);
            a.set_span(self.0.start);
            let mut b = proc_macro2::Punct::new('>', proc_macro2::Spacing::Alone);
            b.set_span(self.0.end);
            tokens.extend([proc_macro2::TokenTree::from(a), b.into()]);
        }
    }
    Error::new_spanned(Tokens(range), message)
}

const FIELDS: &[&str] = &[
    "name",
    "model",
    "hardware",
    "image",
    "topology",
    "connector",
    "ports",
    "proxy",
    "engine_ids",
    "model_path",
    "served_model_name",
    "serve",
    "prefill",
    "decode",
    "mixed",
    "nodes",
    "provenance",
    "verified",
    "workload",
    "bench",
    "figures",
    "deviate",
    "allow",
];

/// Required top-level fields and how the "missing" message shows them.
const REQUIRED: &[(&str, &str)] = &[
    ("name", "name: \"family/variant\""),
    ("model", "model: model_id"),
    ("hardware", "hardware: a3"),
    ("image", "image: \"v0.21.0rc1\""),
    (
        "topology",
        "topology: <prefill 1 x dp4tp4; decode 1 x dp16tp1;>",
    ),
    ("ports", "ports: { api: 7100, dp_rpc: 12321 }"),
    ("provenance", "provenance: { recorded: \"YYYY-MM-DD\" }"),
];

const SERVE_FIELDS: &[&str] = &[
    "max_model_len",
    "max_num_batched_tokens",
    "max_num_seqs",
    "gpu_memory_utilization",
    "block_size",
    "seed",
    "expert_parallel",
    "trust_remote_code",
    "async_scheduling",
    "prefix_caching",
    "graph",
    "speculative",
    "additional_config",
    "flags",
    "env",
];

const ROLES: &[&str] = &["prefill", "decode", "mixed"];

/// Lowers a parsed layout.
pub fn lower(layout: &Layout) -> Lowered {
    let mut cx = Cx {
        ranges: vec![Range::of(Span::call_site())],
        errors: layout.errors.clone(),
        topology_incomplete: false,
        broken: layout.broken.iter().cloned().collect(),
    };
    let spec = cx.layout(layout);
    Lowered {
        spec,
        ranges: cx.ranges,
        errors: cx.errors,
        topology_incomplete: cx.topology_incomplete,
    }
}

struct Cx {
    ranges: Vec<Range>,
    errors: Vec<Error>,
    topology_incomplete: bool,
    /// Keys whose entries did not parse (already reported, never "missing").
    broken: BTreeSet<String>,
}

fn list(items: &[&str]) -> String {
    items
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Cx {
    fn site(&mut self, range: Range) -> Site {
        self.ranges.push(range);
        Site(u32::try_from(self.ranges.len() - 1).unwrap_or(0))
    }

    fn span_site(&mut self, span: Span) -> Site {
        self.site(Range::of(span))
    }

    fn err(&mut self, range: Range, message: impl std::fmt::Display) {
        self.errors.push(error(range, message));
    }

    fn expected(&mut self, v: &Value, what: &str, field: &str) {
        self.err(
            v.range(),
            format!("found {}, expected {what} for `{field}`", v.describe()),
        );
    }

    /// The entry's field name when it is one of `known` (reported otherwise,
    /// with "did you mean"); `block` names the enclosing block, `None` for
    /// the layout's top level.
    fn known_key(&mut self, e: &Entry, known: &[&str], block: Option<&str>) -> Option<String> {
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
    fn fields<'a>(
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

    fn block<'a>(&mut self, v: &'a Value, field: &str) -> Option<&'a Block> {
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

    fn missing(&mut self, at: Range, what: &str, example: &str) {
        let key = example.split(':').next().unwrap_or(example);
        if !self.broken.contains(key) {
            self.err(at, format!("missing `{example}` in `{what}`"));
        }
    }

    fn lit_int(&mut self, lit: &LitInt, allowed_suffix: &str) -> Option<Spanned<u64>> {
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

    fn int(&mut self, v: &Value, field: &str) -> Option<Spanned<u64>> {
        match v {
            Value::Int(lit) => self.lit_int(lit, ""),
            _ => {
                self.expected(v, "an integer", field);
                None
            }
        }
    }

    fn ints(&mut self, v: &Value, field: &str) -> Vec<Spanned<u64>> {
        match v {
            Value::List(_, items) => items.iter().filter_map(|i| self.int(i, field)).collect(),
            Value::Int(_) => self.int(v, field).into_iter().collect(),
            _ => {
                self.expected(v, "an integer or a list `[a, b]`", field);
                Vec::new()
            }
        }
    }

    fn string(&mut self, v: &Value, field: &str) -> Option<Spanned<String>> {
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

    fn strings(&mut self, v: &Value, field: &str) -> Vec<Spanned<String>> {
        match v {
            Value::List(_, items) => items.iter().filter_map(|i| self.string(i, field)).collect(),
            _ => {
                self.expected(v, "a list of strings `[\"...\"]`", field);
                Vec::new()
            }
        }
    }

    fn boolean(&mut self, v: &Value, field: &str) -> Option<Spanned<bool>> {
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
    fn name(&mut self, v: &Value, field: &str) -> Option<Spanned<String>> {
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
    fn keyword<T>(
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

    fn json(&mut self, v: &Value) -> Option<Json> {
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
    fn json_map(&mut self, v: &Value, field: &str) -> BTreeMap<String, Spanned<Json>> {
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
    fn nested_sites(&mut self, v: &Value, path: &str, out: &mut BTreeMap<String, Site>) {
        let Value::Block(b) = v else { return };
        for e in b.entries.iter().filter(|e| e.colon) {
            let inner = format!("{path}.{}", e.key.text());
            let site = self.site(e.value.range());
            out.insert(inner.clone(), site);
            self.nested_sites(&e.value, &inner, out);
        }
    }

    fn layout(&mut self, layout: &Layout) -> LayoutSpec {
        let mut spec = LayoutSpec {
            summary: paragraphs(layout.docs.iter().map(|d| d.value())),
            ..LayoutSpec::default()
        };
        let mut seen: BTreeMap<String, Span> = BTreeMap::new();
        for e in &layout.entries {
            let range = Range::of(e.key.span());
            let Some(key) = self.known_key(e, FIELDS, None) else {
                continue;
            };
            let repeatable = matches!(key.as_str(), "allow" | "deviate");
            if repeatable {
                if e.colon {
                    self.err(
                        range,
                        format!("found `{key}:`, expected `{key}(...)` without a colon"),
                    );
                    continue;
                }
            } else {
                if !e.colon {
                    self.err(
                        e.value.range(),
                        format!("found `{key}(...)`, expected `{key}: value`"),
                    );
                    continue;
                }
                if seen.contains_key(&key) {
                    self.err(
                        range,
                        format!("found `{key}` twice, expected each field once: the second would silently win"),
                    );
                    continue;
                }
                seen.insert(key.clone(), e.key.span());
            }
            self.field(&mut spec, &key, e);
        }
        for (key, example) in REQUIRED {
            if !seen.contains_key(*key) && !self.broken.contains(*key) {
                self.err(
                    Range::of(Span::call_site()),
                    format!("missing `{example}`: every layout states its {key}"),
                );
            }
        }
        spec
    }

    fn field(&mut self, spec: &mut LayoutSpec, key: &str, e: &Entry) {
        let v = &e.value;
        match key {
            "name" => spec.name = self.string(v, key).unwrap_or_default(),
            "model" => spec.model = self.name(v, key).unwrap_or_default(),
            "image" => spec.image = self.string(v, key).unwrap_or_default(),
            "model_path" => spec.model_path = self.string(v, key),
            "served_model_name" => spec.served_model_name = self.string(v, key),
            "workload" => spec.workload = self.string(v, key),
            "hardware" => spec.hardware = self.hardware(v),
            "topology" => {
                if let Value::Topology(t) = v {
                    spec.topology_site = self.site(t.range);
                    spec.topology = t.groups.iter().filter_map(|g| self.group(g)).collect();
                } else {
                    self.expected(v, "`<prefill 1 x dp4tp4; decode 1 x dp16tp1;>`", key);
                }
            }
            "connector" => spec.connector = self.connector(v),
            "ports" => spec.ports = self.ports(v),
            "proxy" => spec.proxy = self.proxy(v),
            "engine_ids" => spec.engine_ids = self.engine_ids(v),
            "serve" => spec.serve = self.serve(v, key),
            "prefill" | "decode" | "mixed" => {
                let serve = self.serve(v, key);
                if let Some(role) = Role::parse(key) {
                    spec.roles.insert(role, serve);
                }
            }
            "nodes" => spec.nodes = self.nodes(v),
            "provenance" => spec.provenance = self.provenance(v),
            "verified" => spec.verified = self.verified(v),
            "bench" => spec.bench = self.bench(v),
            "figures" => spec.figures = self.figures(v),
            "deviate" => {
                if let Some(d) = self.deviate(v) {
                    spec.deviations.push(d);
                }
            }
            "allow" => {
                if let Some(a) = self.allow(v) {
                    spec.allow.push(a);
                }
            }
            _ => {}
        }
    }

    fn hardware(&mut self, v: &Value) -> HardwareSpec {
        match v {
            Value::Ident(_) => HardwareSpec::All(self.name(v, "hardware").unwrap_or_default()),
            Value::Block(b) => {
                self.errors.extend(b.errors.iter().cloned());
                let fields = self.fields(&b.entries, ROLES, "hardware");
                let mut map = BTreeMap::new();
                for (k, e) in fields {
                    if let (Some(role), Some(hw)) = (Role::parse(&k), self.name(&e.value, &k)) {
                        map.insert(role, hw);
                    }
                }
                HardwareSpec::PerRole(map)
            }
            _ => {
                self.expected(
                    v,
                    "a hardware id like `a3` or `{ prefill: a3, decode: a3 }`",
                    "hardware",
                );
                HardwareSpec::default()
            }
        }
    }

    fn group(&mut self, g: &Group) -> Option<EngineGroup> {
        let role_text = g.role.to_string();
        let role = match Role::parse(&role_text) {
            Some(r) => Spanned::new(r, self.span_site(g.role.span())),
            None => {
                let hint = did_you_mean(&role_text, ROLES.iter().copied());
                self.err(
                    Range::of(g.role.span()),
                    format!(
                        "found role `{role_text}`, expected one of {}{hint}",
                        list(ROLES)
                    ),
                );
                self.topology_incomplete = true;
                return None;
            }
        };
        let count = self.lit_int(&g.count, "x")?;
        let shape = g.shape.to_string();
        let Some((dp, tp, pcp)) = split_shape(&shape) else {
            self.err(
                Range::of(g.shape.span()),
                format!("found `{shape}`, expected `dp<N>tp<M>` like `dp4tp4`, or `dp<N>tp<M>pcp<K>` like `dp1tp8pcp2`: the shape is the DP size, the TP size, and an optional PCP size"),
            );
            // Keep the group with unknown sizes: rules about it then point
            // nowhere and are dropped, instead of "no prefill engines".
            return Some(EngineGroup {
                role,
                count,
                ..EngineGroup::default()
            });
        };
        let shape_site = self.span_site(g.shape.span());
        let dp = Spanned::new(dp, self.span_site(g.shape.span()));
        let tp = Spanned::new(tp, self.span_site(g.shape.span()));
        let pcp = pcp.map(|p| Spanned::new(p, self.span_site(g.shape.span())));
        let ranks_per_node = match &g.ranks_per_node {
            Some(lit) => Some(self.lit_int(lit, "")?),
            None => None,
        };
        Some(EngineGroup {
            role,
            count,
            dp,
            tp,
            pcp,
            ranks_per_node,
            shape_site,
        })
    }

    fn connector(&mut self, v: &Value) -> Option<ConnectorSpec> {
        const KINDS: &[&str] = &["mooncake_v1", "mooncake_hybrid", "mooncake_layerwise"];
        let Value::Kinded(kind_ident, block) = v else {
            self.expected(
                v,
                "`mooncake_v1 | mooncake_hybrid | mooncake_layerwise { kv_port: { ... } }`",
                "connector",
            );
            return None;
        };
        self.errors.extend(block.errors.iter().cloned());
        self.broken.extend(block.broken.iter().cloned());
        let kind = self.keyword(
            &Value::Ident(kind_ident.clone()),
            "connector",
            KINDS,
            ConnectorKind::parse,
        );
        let fields = self.fields(&block.entries, &["kv_port", "extra", "pool"], "connector");
        let mut kv_port = KvPorts::default();
        match fields.get("kv_port") {
            Some(e) => {
                if let Some(b) = self.block(&e.value, "kv_port") {
                    let f = self.fields(&b.entries, &["prefill", "decode"], "kv_port");
                    if let Some(e) = f.get("prefill") {
                        kv_port.prefill = self.ints(&e.value, "kv_port.prefill");
                    }
                    if let Some(e) = f.get("decode") {
                        kv_port.decode = self.ints(&e.value, "kv_port.decode");
                    }
                }
            }
            None => self.missing(
                Range::of(block.span),
                "connector",
                "kv_port: { prefill: 36100, decode: 36200 }",
            ),
        }
        let extra = match fields.get("extra") {
            Some(e) => self.json_map(&e.value, "extra"),
            None => BTreeMap::new(),
        };
        let pool = match fields.get("pool") {
            Some(e) => self.pool(&e.value),
            None => None,
        };
        let kind = kind?;
        let site = self.site(Range {
            start: kind_ident.span(),
            end: block.span,
        });
        Some(ConnectorSpec {
            kind,
            kv_port,
            extra,
            pool,
            site,
        })
    }

    /// `pool: memcache { ports: { .. }, config: { .. }, extra: { .. }, prefill: { .. }, decode: { .. } }`.
    fn pool(&mut self, v: &Value) -> Option<PoolSpec> {
        const BACKENDS: &[&str] = &["memcache", "mooncake"];
        let Value::Kinded(backend_ident, block) = v else {
            self.expected(
                v,
                "`memcache | mooncake { ports: { ... }, config: { ... } }`",
                "pool",
            );
            return None;
        };
        self.errors.extend(block.errors.iter().cloned());
        self.broken.extend(block.broken.iter().cloned());
        let backend = self.keyword(
            &Value::Ident(backend_ident.clone()),
            "pool",
            BACKENDS,
            PoolBackend::parse,
        );
        let fields = self.fields(
            &block.entries,
            &["ports", "config", "extra", "prefill", "decode"],
            "pool",
        );
        let mut ports = BTreeMap::new();
        match fields.get("ports") {
            Some(e) => {
                if let Some(b) = self.block(&e.value, "pool.ports") {
                    for p in &b.entries {
                        let name = p.key.text();
                        if ports.contains_key(&name) {
                            self.err(
                                Range::of(p.key.span()),
                                format!("found `{name}` twice in `pool.ports`, expected it once: the second would silently win"),
                            );
                            continue;
                        }
                        if let Some(port) = self.int(&p.value, &format!("pool.ports.{name}")) {
                            // The rule points at the name (`kv_pool_ports`).
                            let site = self.span_site(p.key.span());
                            ports.insert(name, Spanned::new(port.value, site));
                        }
                    }
                }
            }
            None => self.missing(
                Range::of(block.span),
                "pool",
                "ports: { meta_service_port: 5000, config_store_port: 6000 }",
            ),
        }
        let mut maps = ["config", "extra", "prefill", "decode"].map(|f| match fields.get(f) {
            Some(e) => self.json_map(&e.value, &format!("pool.{f}")),
            None => BTreeMap::new(),
        });
        let backend = backend?;
        let site = self.site(Range {
            start: backend_ident.span(),
            end: block.span,
        });
        Some(PoolSpec {
            backend,
            ports,
            config: std::mem::take(&mut maps[0]),
            extra: std::mem::take(&mut maps[1]),
            prefill: std::mem::take(&mut maps[2]),
            decode: std::mem::take(&mut maps[3]),
            site,
        })
    }

    fn ports(&mut self, v: &Value) -> PortsSpec {
        let mut ports = PortsSpec::default();
        let Some(b) = self.block(v, "ports") else {
            return ports;
        };
        ports.site = self.span_site(b.span);
        let f = self.fields(&b.entries, &["api", "dp_rpc", "prefill", "decode"], "ports");
        if let Some(e) = f.get("api") {
            ports.api = self.int(&e.value, "api");
        }
        if let Some(e) = f.get("dp_rpc") {
            ports.dp_rpc = self.int(&e.value, "dp_rpc");
        }
        if let Some(e) = f.get("prefill") {
            ports.prefill = self.role_ports(&e.value, "prefill");
        }
        if let Some(e) = f.get("decode") {
            ports.decode = self.role_ports(&e.value, "decode");
        }
        ports
    }

    /// `prefill: { api: 7100, dp_rpc: 12321 }` inside `ports`.
    fn role_ports(&mut self, v: &Value, role: &str) -> Option<RolePortsSpec> {
        let what = format!("ports.{role}");
        let b = self.block(v, &what)?;
        let f = self.fields(&b.entries, &["api", "dp_rpc"], &what);
        let mut p = RolePortsSpec {
            site: self.span_site(b.span),
            ..RolePortsSpec::default()
        };
        if let Some(e) = f.get("api") {
            p.api = self.int(&e.value, "api");
        }
        if let Some(e) = f.get("dp_rpc") {
            p.dp_rpc = self.int(&e.value, "dp_rpc");
        }
        if p.api.is_none() && p.dp_rpc.is_none() && f.is_empty() && b.errors.is_empty() {
            self.err(
                Range::of(b.span),
                format!("found an empty `{what}` block, expected `api: N` and/or `dp_rpc: N`: the {role} engines otherwise use the common ports"),
            );
        }
        Some(p)
    }

    fn proxy(&mut self, v: &Value) -> Option<ProxySpec> {
        let b = self.block(v, "proxy")?;
        let f = self.fields(&b.entries, &["port", "script"], "proxy");
        let script = match f.get("script") {
            Some(e) => self.keyword(
                &e.value,
                "script",
                &["load_balance", "layerwise"],
                ProxyScript::parse,
            ),
            None => None,
        };
        let port = match f.get("port") {
            Some(e) => self.int(&e.value, "port")?,
            None => {
                self.missing(Range::of(b.span), "proxy", "port: 1999");
                return None;
            }
        };
        let site = self.span_site(b.span);
        Some(ProxySpec { port, script, site })
    }

    fn engine_ids(&mut self, v: &Value) -> Option<EngineIdsSpec> {
        let b = self.block(v, "engine_ids")?;
        let f = self.fields(&b.entries, &["prefill", "decode"], "engine_ids");
        let mut ids = EngineIdsSpec {
            site: self.span_site(b.span),
            ..EngineIdsSpec::default()
        };
        if let Some(e) = f.get("prefill") {
            ids.prefill = self.engine_id_list(&e.value, "engine_ids.prefill");
        }
        if let Some(e) = f.get("decode") {
            ids.decode = self.engine_id_list(&e.value, "engine_ids.decode");
        }
        Some(ids)
    }

    /// `[a, b]` (one id per engine), `a`, or `[a, [b, c]]` (one engine's
    /// ids per node).
    fn engine_id_list(&mut self, v: &Value, field: &str) -> Vec<EngineId> {
        match v {
            Value::List(_, items) => items
                .iter()
                .filter_map(|i| match i {
                    Value::List(..) => Some(EngineId::PerNode(self.ints(i, field))),
                    _ => self.int(i, field).map(EngineId::One),
                })
                .collect(),
            Value::Int(_) => self.int(v, field).map(EngineId::One).into_iter().collect(),
            _ => {
                self.expected(
                    v,
                    "an integer, a list `[a, b]`, or per-node ids `[[a, b]]`",
                    field,
                );
                Vec::new()
            }
        }
    }

    /// `nodes: { 1: { ... }, 3: { ... } }`: serve settings per node index.
    fn nodes(&mut self, v: &Value) -> BTreeMap<u32, ServeSpec> {
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

    fn serve(&mut self, v: &Value, what: &str) -> ServeSpec {
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

    fn provenance(&mut self, v: &Value) -> ProvenanceSpec {
        let mut p = ProvenanceSpec::default();
        let Some(b) = self.block(v, "provenance") else {
            return p;
        };
        let f = self.fields(
            &b.entries,
            &["recorded", "derived_from", "sources", "refresh"],
            "provenance",
        );
        match f.get("recorded") {
            Some(e) => p.recorded = self.string(&e.value, "recorded").unwrap_or_default(),
            None => self.missing(Range::of(b.span), "provenance", "recorded: \"YYYY-MM-DD\""),
        }
        if let Some(e) = f.get("derived_from") {
            p.derived_from = self.string(&e.value, "derived_from");
        }
        if let Some(e) = f.get("sources") {
            p.sources = self.strings(&e.value, "sources");
        }
        if let Some(e) = f.get("refresh") {
            p.refresh = self.strings(&e.value, "refresh");
        }
        p
    }

    fn verified(&mut self, v: &Value) -> Spanned<Verification> {
        const FORMS: &str = "`never`, `on(\"v0.21.0rc1\")` or `before(\"v0.21.0rc1\")`";
        match v {
            Value::Ident(i) if i == "never" => {
                Spanned::new(Verification::Never, self.span_site(i.span()))
            }
            Value::Call(f, _, args) if f == "on" || f == "before" => {
                let site = self.span_site(f.span());
                let tag = match args.as_slice() {
                    [a] => self.string(a, "verified"),
                    _ => {
                        self.expected(v, &format!("one image tag, like {FORMS}"), "verified");
                        None
                    }
                };
                match tag {
                    Some(t) if f == "on" => Spanned::new(Verification::On(t), site),
                    Some(t) => Spanned::new(Verification::Before(t), site),
                    None => Spanned::default(),
                }
            }
            _ => {
                let hint = match v {
                    Value::Ident(i) | Value::Call(i, _, _) => {
                        did_you_mean(&i.to_string(), ["never", "on", "before"])
                    }
                    _ => String::new(),
                };
                self.err(
                    v.range(),
                    format!("found {}, expected {FORMS}{hint}", v.describe()),
                );
                Spanned::default()
            }
        }
    }

    fn bench(&mut self, v: &Value) -> Option<BenchSpec> {
        let b = self.block(v, "bench")?;
        let f = self.fields(
            &b.entries,
            &[
                "input_len",
                "output_len",
                "num_prompts",
                "request_rate",
                "max_concurrency",
            ],
            "bench",
        );
        let req = |cx: &mut Cx, k: &str| match f.get(k) {
            Some(e) => cx.int(&e.value, k),
            None => {
                cx.missing(Range::of(b.span), "bench", &format!("{k}: N"));
                None
            }
        };
        let input_len = req(self, "input_len");
        let output_len = req(self, "output_len");
        let num_prompts = req(self, "num_prompts");
        let request_rate = match f.get("request_rate") {
            Some(e) => match &e.value {
                Value::Int(i) if i.suffix().is_empty() => Some(Spanned::new(
                    i.base10_digits().to_owned(),
                    self.span_site(i.span()),
                )),
                Value::Float(x) if x.suffix().is_empty() => Some(Spanned::new(
                    x.base10_digits().to_owned(),
                    self.span_site(x.span()),
                )),
                Value::Ident(i) if i == "inf" => {
                    Some(Spanned::new("inf".to_owned(), self.span_site(i.span())))
                }
                other => {
                    self.expected(other, "a number or `inf`", "request_rate");
                    None
                }
            },
            None => None,
        };
        let max_concurrency = match f.get("max_concurrency") {
            Some(e) => self.int(&e.value, "max_concurrency"),
            None => None,
        };
        Some(BenchSpec {
            input_len: input_len?,
            output_len: output_len?,
            num_prompts: num_prompts?,
            request_rate,
            max_concurrency,
        })
    }

    fn figures(&mut self, v: &Value) -> Vec<FigureSpec> {
        let Value::List(_, items) = v else {
            self.expected(
                v,
                "a list `[{ metric: ..., value: ..., context: ... }]`",
                "figures",
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for item in items {
            let Some(b) = self.block(item, "figures") else {
                continue;
            };
            let f = self.fields(&b.entries, &["metric", "value", "context"], "figures");
            let get = |cx: &mut Cx, k: &str| match f.get(k) {
                Some(e) => cx.string(&e.value, k),
                None => {
                    cx.missing(Range::of(b.span), "figures", &format!("{k}: \"...\""));
                    None
                }
            };
            let (metric, value, context) = (
                get(self, "metric"),
                get(self, "value"),
                get(self, "context"),
            );
            if let (Some(metric), Some(value), Some(context)) = (metric, value, context) {
                out.push(FigureSpec {
                    metric,
                    value,
                    context,
                });
            }
        }
        out
    }

    fn deviate(&mut self, v: &Value) -> Option<DeviationSpec> {
        match v {
            Value::Call(_, _, args) if args.len() == 2 => {
                let what = self.string(&args[0], "deviate");
                let why = self.string(&args[1], "deviate");
                Some(DeviationSpec {
                    what: what?,
                    why: why?,
                })
            }
            _ => {
                self.err(
                    v.range(),
                    format!(
                        "found {}, expected `deviate(\"what differs\", \"why\")`: a deviation states what differs from upstream and why",
                        call_shape(v)
                    ),
                );
                None
            }
        }
    }

    fn allow(&mut self, v: &Value) -> Option<AllowSpec> {
        match v {
            Value::Call(_, _, args) if args.len() == 2 => {
                let rule = match &args[0] {
                    Value::Ident(_) => self.name(&args[0], "allow"),
                    other => {
                        self.expected(other, "a rule name like `kv_port_in_adxl_range`", "allow");
                        None
                    }
                };
                let reason = self.string(&args[1], "allow");
                Some(AllowSpec {
                    rule: rule?,
                    reason: reason?,
                })
            }
            _ => {
                self.err(
                    v.range(),
                    format!(
                        "found {}, expected `allow(rule_name, \"reason\")`: an acknowledged deviation names its rule and gives a reason",
                        call_shape(v)
                    ),
                );
                None
            }
        }
    }
}

/// `dp16tp1` → (16, 1, None); `dp1tp8pcp2` → (1, 8, Some(2)).
fn split_shape(s: &str) -> Option<(u64, u64, Option<u64>)> {
    let rest = s.strip_prefix("dp")?;
    let (dp, rest) = rest.split_once("tp")?;
    let (tp, pcp) = match rest.split_once("pcp") {
        Some((tp, pcp)) => (tp, Some(pcp)),
        None => (rest, None),
    };
    let digits = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_digit());
    if !digits(dp) || !digits(tp) || pcp.is_some_and(|p| !digits(p)) {
        return None;
    }
    let pcp = match pcp {
        Some(p) => Some(p.parse().ok()?),
        None => None,
    };
    Some((dp.parse().ok()?, tp.parse().ok()?, pcp))
}

/// "`allow(...)` with 1 argument" for a call, else the value's description.
fn call_shape(v: &Value) -> String {
    match v {
        Value::Call(_, _, args) => format!(
            "{} with {} argument{}",
            v.describe(),
            args.len(),
            if args.len() == 1 { "" } else { "s" }
        ),
        _ => v.describe(),
    }
}

/// Doc comment lines joined into paragraphs (a blank line separates them),
/// as rustdoc reads them.
fn paragraphs(lines: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    for line in lines {
        let line = line.trim();
        if line.is_empty() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        } else {
            if !cur.is_empty() {
                cur.push(' ');
            }
            cur.push_str(line);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::split_shape;

    #[test]
    fn shapes() {
        assert_eq!(split_shape("dp16tp1"), Some((16, 1, None)));
        assert_eq!(split_shape("dp4tp"), None);
        assert_eq!(split_shape("tp4dp4"), None);
        assert_eq!(split_shape("dp0tp4"), Some((0, 4, None)));
        assert_eq!(split_shape("dp1tp8pcp2"), Some((1, 8, Some(2))));
        assert_eq!(split_shape("dp1tp8pcp"), None);
        assert_eq!(split_shape("dp1tp8pcpx"), None);
        assert_eq!(split_shape("dp1tp8pp2"), None);
    }
}
