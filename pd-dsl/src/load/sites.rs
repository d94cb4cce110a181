//! Sites for the spec's values: every [`Spanned`] value gets a [`Site`]
//! whose position in the document is recorded; a diagnostic without one
//! points at its field path.

use super::Position;
use super::tree::{Kind, Node};
use crate::spec::{EngineGroup, FlagEntry, ServeSpec, Verification};
use crate::{Diagnostic, LayoutSpec, Site, Spanned};

/// Positions by site: `Site(i + 1)` is `positions[i]`.
#[derive(Default)]
pub(super) struct Sites {
    positions: Vec<Position>,
}

impl Sites {
    fn site(&mut self, at: Option<Position>) -> Site {
        let Some(p) = at else { return Site::NONE };
        self.positions.push(p);
        u32::try_from(self.positions.len()).map_or(Site::NONE, Site)
    }

    pub(super) fn position(&self, d: &Diagnostic) -> Option<Position> {
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

    pub(super) fn layout(&mut self, s: &mut LayoutSpec, r: &Node) {
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
pub(super) fn by_field(tree: Option<&Node>, d: &Diagnostic) -> Option<Position> {
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
