//! Layouts kept in files: YAML or JSON, validated by the same rules as
//! `layout!`, with errors pointing at `file:line:column`.
//!
//! The document is read twice: once into a [`LayoutSpec`] (serde), once into
//! a small position tree (every mapping key, mapping value and sequence item
//! with its line and column). Every [`Spanned`] value of the spec then gets a
//! [`Site`] whose position is recorded in a table, so a rule's diagnostic maps
//! back to the exact value it is about — the same mechanism the macro uses
//! with token spans. JSON positions come from the same YAML reader (JSON is
//! YAML's flow style); where the two readers disagree on a document, its
//! diagnostics fall back to the field path.
//!
//! ```
//! let text = r#"{ "name": "x" }"#;
//! let err = pd_dsl::load::from_json("l.json", text).unwrap_err();
//! assert!(err.to_string().starts_with("l.json:1:"), "{err}");
//! ```

use crate::spec::{EngineGroup, FlagEntry, ServeSpec, Verification};
use crate::{Diagnostic, Diagnostics, Layout, LayoutSpec, Site, Spanned, check};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// A 1-based line and column in a layout file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    /// Line, from 1.
    pub line: u64,
    /// Column (in characters), from 1.
    pub column: u64,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// Why a layout file could not be used.
#[derive(Debug)]
pub enum LoadError {
    /// The text is not a well-formed layout document.
    Parse {
        /// File name (or `<input>`).
        file: String,
        /// Where the parser stopped, when it says.
        position: Option<Position>,
        /// What the parser said.
        message: String,
    },
    /// The layout parsed but breaks rules.
    Rules {
        /// File name (or `<input>`).
        file: String,
        /// Every violation.
        diagnostics: Diagnostics,
        /// Where each violation points, in the order of `diagnostics`.
        positions: Vec<Option<Position>>,
    },
}

impl LoadError {
    /// Every error as `file:line:col: message`, one per line item.
    pub fn lines(&self) -> Vec<String> {
        match self {
            LoadError::Parse {
                file,
                position,
                message,
            } => vec![match position {
                Some(p) => format!("{file}:{p}: {message}"),
                None => format!("{file}: {message}"),
            }],
            LoadError::Rules {
                file,
                diagnostics,
                positions,
            } => diagnostics
                .iter()
                .enumerate()
                .map(|(i, d)| match positions.get(i).copied().flatten() {
                    Some(p) => format!("{file}:{p}: {d}"),
                    None => format!("{file}: {}: {d}", d.field),
                })
                .collect(),
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.lines().join("\n"))
    }
}

impl std::error::Error for LoadError {}

/// Parses a YAML layout document (JSON is YAML too) without checking rules.
/// Values carry no sites; [`from_yaml`] adds them. A carriage return without
/// a line feed is refused where it is ([`lone_carriage_return`]).
pub fn parse_yaml(file: &str, text: &str) -> Result<LayoutSpec, LoadError> {
    if let Some(position) = lone_carriage_return(text) {
        return Err(LoadError::Parse {
            file: file.to_owned(),
            position: Some(position),
            message: LONE_CR.to_owned(),
        });
    }
    serde_saphyr::from_str(text).map_err(|e| {
        let position = e.location().and_then(position_of);
        LoadError::Parse {
            file: file.to_owned(),
            position,
            message: first_line(&e.to_string()),
        }
    })
}

/// Parses a JSON layout document without checking rules.
pub fn parse_json(file: &str, text: &str) -> Result<LayoutSpec, LoadError> {
    serde_json::from_str(text).map_err(|e| {
        let position = (e.line() > 0).then(|| Position {
            line: e.line() as u64,
            column: e.column() as u64,
        });
        LoadError::Parse {
            file: file.to_owned(),
            position,
            message: strip_json_position(&e.to_string()),
        }
    })
}

/// Parses and checks a YAML (or JSON) layout document.
pub fn from_yaml(file: &str, text: &str) -> Result<Layout, LoadError> {
    checked(file, text, parse_yaml(file, text)?)
}

/// Parses and checks a JSON layout document.
pub fn from_json(file: &str, text: &str) -> Result<Layout, LoadError> {
    checked(file, text, parse_json(file, text)?)
}

fn checked(file: &str, text: &str, mut spec: LayoutSpec) -> Result<Layout, LoadError> {
    // The position tree is read as YAML, which counts a lone `\r` as a line
    // break. A YAML document with one was refused above; in JSON it is
    // whitespace (serde_json counts lines on `\n`), so it reads as a space:
    // same meaning, same columns.
    let blanked;
    let text = if lone_carriage_return(text).is_some() {
        blanked = blank_lone_carriage_returns(text);
        blanked.as_str()
    } else {
        text
    };
    let tree = position_tree(text);
    let mut table = Sites::default();
    if let Some(root) = &tree {
        table.layout(&mut spec, root);
    }
    check(&spec).map_err(|diagnostics| {
        let positions = diagnostics
            .iter()
            .map(|d| table.position(d).or_else(|| by_field(tree.as_ref(), d)))
            .collect();
        LoadError::Rules {
            file: file.to_owned(),
            diagnostics,
            positions,
        }
    })
}

/// Why a lone `\r` is refused (the loader's and the importer's message).
pub(crate) const LONE_CR: &str = "found a carriage return (`\\r`) without a line feed, expected `\\n` or `\\r\\n` line ends: YAML reads a lone `\\r` as a line break where editors and shells do not, so every position after it would be wrong";

/// The first carriage return not followed by a line feed, if any. YAML 1.2
/// counts one as a line break (spec §5.4, production `b-break`), editors,
/// `grep -n` and every position here count lines on `\n`: after it, every
/// reported position would be on the wrong line. `\r\n` is one line end.
pub(crate) fn lone_carriage_return(text: &str) -> Option<Position> {
    let mut lines = text.split('\n').peekable();
    let mut line = 0;
    while let Some(l) = lines.next() {
        line += 1;
        let body = match lines.peek() {
            Some(_) => l.strip_suffix('\r').unwrap_or(l),
            None => l,
        };
        if let Some(k) = body.find('\r') {
            return Some(Position {
                line,
                column: body[..k].chars().count() as u64 + 1,
            });
        }
    }
    None
}

/// `text` with every lone `\r` (see [`lone_carriage_return`]) replaced by a
/// space, `\r\n` kept.
fn blank_lone_carriage_returns(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() != Some(&'\n') {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

fn position_of(l: serde_saphyr::Location) -> Option<Position> {
    (l.line() > 0).then(|| Position {
        line: l.line(),
        column: l.column(),
    })
}

/// saphyr renders a source snippet after the message; the message is the
/// first line, minus any position it repeats. The importer reads YAML
/// errors through it too.
pub(crate) fn first_line(s: &str) -> String {
    let line = s
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or(s);
    let line = line.trim_start_matches("error: ");
    match line.split_once(": ") {
        Some((at, rest)) if at.starts_with("line ") && at.contains(" column ") => rest.to_owned(),
        _ => line.to_owned(),
    }
}

/// serde_json appends " at line L column C", which the prefix already says.
fn strip_json_position(s: &str) -> String {
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_owned(),
        None => s.to_owned(),
    }
}

// ---------------------------------------------------------------------------
// The position tree
// ---------------------------------------------------------------------------

/// One node of the document: where it was written and what it holds.
#[derive(Debug, Default)]
struct Node {
    at: Option<Position>,
    kind: Kind,
}

#[derive(Debug, Default)]
enum Kind {
    #[default]
    Scalar,
    /// Entries with the key's position.
    Map(Vec<(String, Option<Position>, Node)>),
    Seq(Vec<Node>),
}

impl Node {
    fn get(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            Kind::Map(entries) => entries.iter().find(|(k, _, _)| k == key).map(|e| &e.2),
            _ => None,
        }
    }

    fn key_at(&self, key: &str) -> Option<Position> {
        match &self.kind {
            Kind::Map(entries) => entries.iter().find(|(k, _, _)| k == key).and_then(|e| e.1),
            _ => None,
        }
    }

    fn item(&self, i: usize) -> Option<&Node> {
        match &self.kind {
            Kind::Seq(items) => items.get(i),
            _ => None,
        }
    }
}

fn position_tree(text: &str) -> Option<Node> {
    let root: serde_saphyr::Spanned<Tree> = serde_saphyr::from_str(text).ok()?;
    let mut node = root.value.0;
    node.at = position_of(root.referenced);
    Some(node)
}

/// Deserializes any YAML into [`Node`]s, children with their positions.
struct Tree(Node);

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TreeVisitor).map(Tree)
    }
}

fn child(s: serde_saphyr::Spanned<Tree>) -> Node {
    let mut n = s.value.0;
    n.at = position_of(s.referenced);
    n
}

struct TreeVisitor;

macro_rules! scalars {
    ($($f:ident: $t:ty),*) => {
        $(fn $f<E: de::Error>(self, _: $t) -> Result<Node, E> { Ok(Node::default()) })*
    };
}

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    scalars!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_i128: i128,
             visit_u128: u128, visit_f64: f64, visit_str: &str, visit_bytes: &[u8]);

    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::default())
    }

    fn visit_none<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::default())
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        d.deserialize_any(TreeVisitor)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(s) = seq.next_element::<serde_saphyr::Spanned<Tree>>()? {
            items.push(child(s));
        }
        Ok(Node {
            at: None,
            kind: Kind::Seq(items),
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(k) = map.next_key::<serde_saphyr::Spanned<Key>>()? {
            let v = map.next_value::<serde_saphyr::Spanned<Tree>>()?;
            entries.push((k.value.0, position_of(k.referenced), child(v)));
        }
        Ok(Node {
            at: None,
            kind: Kind::Map(entries),
        })
    }
}

/// A mapping key as text (scalars), or empty for a complex key.
struct Key(String);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(KeyVisitor).map(Key)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        Ok(v.to_owned())
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_unit<E: de::Error>(self) -> Result<String, E> {
        Ok(String::new())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<String, A::Error> {
        while seq.next_element::<de::IgnoredAny>()?.is_some() {}
        Ok(String::new())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<String, A::Error> {
        while map
            .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
            .is_some()
        {}
        Ok(String::new())
    }
}

// ---------------------------------------------------------------------------
// Sites for the spec's values
// ---------------------------------------------------------------------------

/// Positions by site: `Site(i + 1)` is `positions[i]`.
#[derive(Default)]
struct Sites {
    positions: Vec<Position>,
}

impl Sites {
    fn site(&mut self, at: Option<Position>) -> Site {
        let Some(p) = at else { return Site::NONE };
        self.positions.push(p);
        u32::try_from(self.positions.len()).map_or(Site::NONE, Site)
    }

    fn position(&self, d: &Diagnostic) -> Option<Position> {
        let i = usize::try_from(d.site.0).ok()?.checked_sub(1)?;
        self.positions.get(i).copied()
    }

    fn set<T>(&mut self, v: &mut Spanned<T>, n: Option<&Node>) {
        v.site = self.site(n.and_then(|n| n.at));
    }

    fn opt<T>(&mut self, v: &mut Option<Spanned<T>>, n: Option<&Node>) {
        if let Some(v) = v {
            self.set(v, n);
        }
    }

    fn list<T>(&mut self, v: &mut [Spanned<T>], n: Option<&Node>) {
        for (i, x) in v.iter_mut().enumerate() {
            self.set(x, n.and_then(|n| n.item(i)));
        }
    }

    fn layout(&mut self, s: &mut LayoutSpec, r: &Node) {
        let g = |k: &str| r.get(k);
        self.set(&mut s.name, g("name"));
        self.set(&mut s.model, g("model"));
        self.set(&mut s.image, g("image"));
        match &mut s.hardware {
            crate::HardwareSpec::All(h) => self.set(h, g("hardware")),
            crate::HardwareSpec::PerRole(m) => {
                for (role, h) in m.iter_mut() {
                    self.set(h, g("hardware").and_then(|n| n.get(role.as_str())));
                }
            }
        }
        s.topology_site = self.site(g("topology").and_then(|n| n.at));
        for (i, e) in s.topology.iter_mut().enumerate() {
            self.group(e, g("topology").and_then(|n| n.item(i)));
        }
        if let Some(c) = &mut s.connector {
            let n = g("connector");
            c.site = self.site(n.and_then(|n| n.at));
            self.set(&mut c.kind, n.and_then(|n| n.get("kind")));
            let kv = n.and_then(|n| n.get("kv_port"));
            self.list(&mut c.kv_port.prefill, kv.and_then(|n| n.get("prefill")));
            self.list(&mut c.kv_port.decode, kv.and_then(|n| n.get("decode")));
            let extra = n.and_then(|n| n.get("extra"));
            for (k, v) in c.extra.iter_mut() {
                v.site = self.site(extra.and_then(|n| n.key_at(k)));
            }
        }
        let ports = g("ports");
        s.ports.site = self.site(ports.and_then(|n| n.at));
        self.opt(&mut s.ports.api, ports.and_then(|n| n.get("api")));
        self.opt(&mut s.ports.dp_rpc, ports.and_then(|n| n.get("dp_rpc")));
        for (role, block) in [
            ("prefill", &mut s.ports.prefill),
            ("decode", &mut s.ports.decode),
        ] {
            if let Some(b) = block {
                let n = ports.and_then(|n| n.get(role));
                b.site = self.site(n.and_then(|n| n.at));
                self.opt(&mut b.api, n.and_then(|n| n.get("api")));
                self.opt(&mut b.dp_rpc, n.and_then(|n| n.get("dp_rpc")));
            }
        }
        if let Some(p) = &mut s.proxy {
            let n = g("proxy");
            p.site = self.site(n.and_then(|n| n.at));
            self.set(&mut p.port, n.and_then(|n| n.get("port")));
            self.opt(&mut p.script, n.and_then(|n| n.get("script")));
        }
        if let Some(ids) = &mut s.engine_ids {
            let n = g("engine_ids");
            ids.site = self.site(n.and_then(|n| n.at));
            for (list, key) in [(&mut ids.prefill, "prefill"), (&mut ids.decode, "decode")] {
                let l = n.and_then(|n| n.get(key));
                for (i, id) in list.iter_mut().enumerate() {
                    let item = l.and_then(|l| l.item(i));
                    match id {
                        crate::spec::EngineId::One(v) => self.set(v, item),
                        crate::spec::EngineId::PerNode(v) => self.list(v, item),
                    }
                }
            }
        }
        self.opt(&mut s.model_path, g("model_path"));
        self.opt(&mut s.served_model_name, g("served_model_name"));
        self.serve(&mut s.serve, g("serve"));
        for (role, block) in s.roles.iter_mut() {
            self.serve(block, g("roles").and_then(|n| n.get(role.as_str())));
        }
        for (node, block) in s.nodes.iter_mut() {
            self.serve(block, g("nodes").and_then(|n| n.get(&node.to_string())));
        }
        let p = g("provenance");
        self.set(
            &mut s.provenance.recorded,
            p.and_then(|n| n.get("recorded")),
        );
        self.opt(
            &mut s.provenance.derived_from,
            p.and_then(|n| n.get("derived_from")),
        );
        self.list(&mut s.provenance.sources, p.and_then(|n| n.get("sources")));
        self.list(&mut s.provenance.refresh, p.and_then(|n| n.get("refresh")));
        let v = g("verified");
        s.verified.site = self.site(v.and_then(|n| n.at));
        match &mut s.verified.value {
            Verification::On(t) => self.set(t, v.and_then(|n| n.get("on"))),
            Verification::Before(t) => self.set(t, v.and_then(|n| n.get("before"))),
            Verification::Never => {}
        }
        for (i, a) in s.allow.iter_mut().enumerate() {
            let n = g("allow").and_then(|n| n.item(i));
            self.set(&mut a.rule, n.and_then(|n| n.get("rule")));
            self.set(&mut a.reason, n.and_then(|n| n.get("reason")));
        }
        for (i, d) in s.deviations.iter_mut().enumerate() {
            let n = g("deviations").and_then(|n| n.item(i));
            self.set(&mut d.what, n.and_then(|n| n.get("what")));
            self.set(&mut d.why, n.and_then(|n| n.get("why")));
        }
        self.opt(&mut s.workload, g("workload"));
        if let Some(b) = &mut s.bench {
            let n = g("bench");
            let f = |k: &str| n.and_then(|n| n.get(k));
            self.set(&mut b.input_len, f("input_len"));
            self.set(&mut b.output_len, f("output_len"));
            self.set(&mut b.num_prompts, f("num_prompts"));
            self.opt(&mut b.request_rate, f("request_rate"));
            self.opt(&mut b.max_concurrency, f("max_concurrency"));
        }
        for (i, x) in s.figures.iter_mut().enumerate() {
            let n = g("figures").and_then(|n| n.item(i));
            self.set(&mut x.metric, n.and_then(|n| n.get("metric")));
            self.set(&mut x.value, n.and_then(|n| n.get("value")));
            self.set(&mut x.context, n.and_then(|n| n.get("context")));
        }
    }

    fn group(&mut self, e: &mut EngineGroup, n: Option<&Node>) {
        let f = |k: &str| n.and_then(|n| n.get(k));
        self.set(&mut e.role, f("role"));
        self.set(&mut e.count, f("count"));
        self.set(&mut e.dp, f("dp"));
        self.set(&mut e.tp, f("tp"));
        self.opt(&mut e.pcp, f("pcp"));
        self.opt(&mut e.ranks_per_node, f("ranks_per_node"));
        e.shape_site = self.site(f("dp").or(n).and_then(|n| n.at));
    }

    fn serve(&mut self, b: &mut ServeSpec, n: Option<&Node>) {
        let f = |k: &str| n.and_then(|n| n.get(k));
        b.site = self.site(n.and_then(|n| n.at));
        self.opt(&mut b.max_model_len, f("max_model_len"));
        self.opt(&mut b.max_num_batched_tokens, f("max_num_batched_tokens"));
        self.opt(&mut b.max_num_seqs, f("max_num_seqs"));
        self.opt(&mut b.gpu_memory_utilization, f("gpu_memory_utilization"));
        self.opt(&mut b.block_size, f("block_size"));
        self.opt(&mut b.seed, f("seed"));
        self.opt(&mut b.expert_parallel, f("expert_parallel"));
        self.opt(&mut b.trust_remote_code, f("trust_remote_code"));
        self.opt(&mut b.async_scheduling, f("async_scheduling"));
        self.opt(&mut b.prefix_caching, f("prefix_caching"));
        self.opt(&mut b.graph, f("graph"));
        self.list(&mut b.capture_sizes, f("capture_sizes"));
        if let Some(sp) = &mut b.speculative {
            let n = f("speculative");
            sp.site = self.site(n.and_then(|n| n.at));
            self.set(&mut sp.method, n.and_then(|n| n.get("method")));
            self.set(&mut sp.tokens, n.and_then(|n| n.get("tokens")));
            self.opt(
                &mut sp.enforce_eager,
                n.and_then(|n| n.get("enforce_eager")),
            );
        }
        let ac = f("additional_config");
        for (k, v) in b.additional_config.iter_mut() {
            v.site = self.site(ac.and_then(|n| n.key_at(k)));
            if let Some(inner) = ac.and_then(|n| n.get(k)) {
                self.nested(inner, k, &mut b.additional_config_sites);
            }
        }
        for (i, x) in b.flags.iter_mut().enumerate() {
            self.flag(x, f("flags").and_then(|n| n.item(i)));
        }
        for (i, e) in b.env.iter_mut().enumerate() {
            let n = f("env").and_then(|n| n.item(i));
            self.set(&mut e.name, n.and_then(|n| n.get("name")));
            self.set(&mut e.value, n.and_then(|n| n.get("value")));
        }
    }

    /// Sites of the values inside a mapping, by dotted path.
    fn nested(&mut self, n: &Node, path: &str, out: &mut std::collections::BTreeMap<String, Site>) {
        if let Kind::Map(entries) = &n.kind {
            for (k, _, child) in entries {
                let inner = format!("{path}.{k}");
                let site = self.site(child.at);
                out.insert(inner.clone(), site);
                self.nested(child, &inner, out);
            }
        }
    }

    fn flag(&mut self, x: &mut FlagEntry, n: Option<&Node>) {
        self.set(&mut x.name, n.and_then(|n| n.get("name")));
        self.opt(&mut x.value, n.and_then(|n| n.get("value")));
    }
}

/// A diagnostic without a site (e.g. about the summary, which has none, or
/// about something missing) points at its field path when the document has
/// it, else at the nearest enclosing field that it has.
fn by_field(tree: Option<&Node>, d: &Diagnostic) -> Option<Position> {
    let root = tree?;
    let mut path: Vec<Step> = Vec::new();
    for part in d.field.split('.') {
        let (name, rest) = part.split_once('[').unwrap_or((part, ""));
        if !name.is_empty() {
            path.push(Step::Key(name));
        }
        for idx in rest.split('[') {
            if let Ok(i) = idx.trim_end_matches(']').parse::<usize>() {
                path.push(Step::Index(i));
            }
        }
    }
    // Role blocks are written under `roles` in files.
    if let Some(Step::Key(k)) = path.first()
        && crate::Role::parse(k).is_some()
        && root.get(k).is_none()
    {
        path.insert(0, Step::Key("roles"));
    }
    let mut node = root;
    let mut best = root.at;
    for step in path {
        let next = match step {
            Step::Key(k) => node.get(k),
            Step::Index(i) => node.item(i),
        };
        match next {
            Some(n) => {
                node = n;
                best = n.at.or(best);
            }
            None => break,
        }
    }
    best
}

enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_records_positions() {
        let t = position_tree("a: 1\nb:\n  - x\n  - { c: 2 }\n");
        let t = t.as_ref().and_then(|t| t.get("b")).and_then(|b| b.item(1));
        let c = t.and_then(|n| n.get("c")).and_then(|n| n.at);
        assert_eq!(
            c,
            Some(Position {
                line: 4,
                column: 10
            })
        );
    }
}
