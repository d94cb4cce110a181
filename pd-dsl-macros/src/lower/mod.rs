//! Syntax tree → `pd_dsl_core::LayoutSpec`. Every value gets a `Site`; the
//! matching source range is kept in `Lowered::ranges` so the check stage can
//! turn a rule's site back into a span. Lowering checks only what the spec's
//! types need (field names, literal kinds, integer ranges); every rule about
//! the values is left to `pd_dsl_core::check`, the code the runtime runs too.

mod connector;
mod record;
mod serve;
mod values;

use crate::parse::{Entry, Group, Layout, Range, Value};
use pd_dsl_core::rules::did_you_mean;
use pd_dsl_core::spec::{EngineGroup, HardwareSpec, LayoutSpec, Role};
use pd_dsl_core::{Rule, Site, Spanned};
use proc_macro2::Span;
use std::collections::{BTreeMap, BTreeSet};
use syn::Error;

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
