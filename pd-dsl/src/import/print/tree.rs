//! The spec turned into a tree of DSL values ([`V`]): the layout's fields
//! and its serve blocks.

use super::V;
use super::tokens::quoted;
use crate::spec::{EnvValue, HardwareSpec, LayoutSpec, Role, ServeSpec, Verification};

pub(super) fn fields(s: &LayoutSpec) -> Vec<(String, V)> {
    let mut f: Vec<(String, V)> = Vec::new();
    let mut put = |k: &str, v: V| f.push((k.to_owned(), v));
    put("name", V::Str(s.name.value.clone()));
    put("model", ident_or_str(&s.model.value));
    put(
        "hardware",
        match &s.hardware {
            HardwareSpec::All(h) => ident_or_str(&h.value),
            HardwareSpec::PerRole(m) => V::Block(
                m.iter()
                    .map(|(r, h)| (r.as_str().to_owned(), ident_or_str(&h.value)))
                    .collect(),
                false,
            ),
        },
    );
    put("image", V::Str(s.image.value.clone()));
    let groups: Vec<String> = s
        .topology
        .iter()
        .map(|g| {
            let mut t = format!("{} {} x {}", g.role.value, g.count.value, g.shape());
            if let Some(r) = &g.ranks_per_node {
                t.push_str(&format!(" / {}", r.value));
            }
            t.push(';');
            t
        })
        .collect();
    put("topology", V::Word(format!("<{}>", groups.join(" "))));
    if let Some(c) = &s.connector {
        let ports = |v: &[crate::Spanned<u64>]| match v {
            [one] => V::Int(one.value),
            many => V::List(many.iter().map(|x| V::Int(x.value)).collect()),
        };
        let mut kv: Vec<(String, V)> = Vec::new();
        if !c.kv_port.prefill.is_empty() {
            kv.push(("prefill".into(), ports(&c.kv_port.prefill)));
        }
        if !c.kv_port.decode.is_empty() {
            kv.push(("decode".into(), ports(&c.kv_port.decode)));
        }
        let mut body = vec![("kv_port".to_owned(), V::Block(kv, false))];
        if !c.extra.is_empty() {
            body.push((
                "extra".into(),
                V::Block(
                    c.extra
                        .iter()
                        .map(|(k, v)| (quoted(k), V::Json(v.value.clone())))
                        .collect(),
                    false,
                ),
            ));
        }
        if let Some(pool) = &c.pool {
            let map =
                |m: &std::collections::BTreeMap<String, crate::Spanned<crate::spec::Json>>| {
                    V::Block(
                        m.iter()
                            .map(|(k, v)| (quoted(k), V::Json(v.value.clone())))
                            .collect(),
                        false,
                    )
                };
            let mut p = vec![(
                "ports".to_owned(),
                V::Block(
                    pool.ports
                        .iter()
                        .map(|(k, v)| (k.clone(), V::Int(v.value)))
                        .collect(),
                    false,
                ),
            )];
            for (name, m) in [
                ("config", &pool.config),
                ("extra", &pool.extra),
                ("prefill", &pool.prefill),
                ("decode", &pool.decode),
            ] {
                if !m.is_empty() {
                    p.push((name.to_owned(), map(m)));
                }
            }
            body.push((
                "pool".into(),
                V::Kinded(pool.backend.value.as_str().into(), p),
            ));
        }
        put("connector", V::Kinded(c.kind.value.as_str().into(), body));
    }
    let mut ports = Vec::new();
    if let Some(a) = &s.ports.api {
        ports.push(("api".to_owned(), V::Int(a.value)));
    }
    if let Some(r) = &s.ports.dp_rpc {
        ports.push(("dp_rpc".into(), V::Int(r.value)));
    }
    put("ports", V::Block(ports, false));
    if let Some(p) = &s.proxy {
        let mut b = vec![("port".to_owned(), V::Int(p.port.value))];
        if let Some(sc) = &p.script {
            b.push(("script".into(), V::Word(sc.value.as_str().into())));
        }
        put("proxy", V::Block(b, false));
    }
    if let Some(ids) = &s.engine_ids {
        let list = |v: &[crate::spec::EngineId]| {
            V::List(
                v.iter()
                    .map(|e| match e {
                        crate::spec::EngineId::One(x) => V::Int(x.value),
                        crate::spec::EngineId::PerNode(xs) => {
                            V::List(xs.iter().map(|x| V::Int(x.value)).collect())
                        }
                    })
                    .collect(),
            )
        };
        put(
            "engine_ids",
            V::Block(
                vec![
                    ("prefill".into(), list(&ids.prefill)),
                    ("decode".into(), list(&ids.decode)),
                ],
                false,
            ),
        );
    }
    if let Some(p) = &s.model_path {
        put("model_path", V::Str(p.value.clone()));
    }
    if let Some(n) = &s.served_model_name {
        put("served_model_name", V::Str(n.value.clone()));
    }
    if s.serve != ServeSpec::default() {
        put("serve", serve(&s.serve));
    }
    for role in [Role::Prefill, Role::Decode, Role::Mixed] {
        if let Some(b) = s.roles.get(&role) {
            put(role.as_str(), serve(b));
        }
    }
    if !s.nodes.is_empty() {
        put(
            "nodes",
            V::Block(
                s.nodes
                    .iter()
                    .map(|(n, b)| (n.to_string(), serve(b)))
                    .collect(),
                true,
            ),
        );
    }
    let pv = &s.provenance;
    let mut prov = vec![("recorded".to_owned(), V::Str(pv.recorded.value.clone()))];
    if let Some(d) = &pv.derived_from {
        prov.push(("derived_from".into(), V::Str(d.value.clone())));
    }
    if !pv.sources.is_empty() {
        prov.push((
            "sources".into(),
            V::List(pv.sources.iter().map(|x| V::Str(x.value.clone())).collect()),
        ));
    }
    if !pv.refresh.is_empty() {
        prov.push((
            "refresh".into(),
            V::List(pv.refresh.iter().map(|x| V::Str(x.value.clone())).collect()),
        ));
    }
    put("provenance", V::Block(prov, false));
    match &s.verified.value {
        Verification::Never => {}
        Verification::On(t) => put(
            "verified",
            V::Call("on".into(), vec![V::Str(t.value.clone())]),
        ),
        Verification::Before(t) => put(
            "verified",
            V::Call("before".into(), vec![V::Str(t.value.clone())]),
        ),
    }
    if let Some(w) = &s.workload {
        put("workload", V::Str(w.value.clone()));
    }
    if let Some(b) = &s.bench {
        let mut e = vec![
            ("input_len".to_owned(), V::Int(b.input_len.value)),
            ("output_len".to_owned(), V::Int(b.output_len.value)),
            ("num_prompts".to_owned(), V::Int(b.num_prompts.value)),
        ];
        if let Some(r) = &b.request_rate {
            e.push(("request_rate".into(), V::Word(r.value.clone())));
        }
        if let Some(c) = &b.max_concurrency {
            e.push(("max_concurrency".into(), V::Int(c.value)));
        }
        put("bench", V::Block(e, false));
    }
    if !s.figures.is_empty() {
        put(
            "figures",
            V::List(
                s.figures
                    .iter()
                    .map(|f| {
                        V::Block(
                            vec![
                                ("metric".into(), V::Str(f.metric.value.clone())),
                                ("value".into(), V::Str(f.value.value.clone())),
                                ("context".into(), V::Str(f.context.value.clone())),
                            ],
                            false,
                        )
                    })
                    .collect(),
            ),
        );
    }
    for a in &s.allow {
        put(
            "",
            V::Call(
                "allow".into(),
                vec![
                    V::Word(a.rule.value.clone()),
                    V::Str(a.reason.value.clone()),
                ],
            ),
        );
    }
    for d in &s.deviations {
        put(
            "",
            V::Call(
                "deviate".into(),
                vec![V::Str(d.what.value.clone()), V::Str(d.why.value.clone())],
            ),
        );
    }
    f
}

fn serve(b: &ServeSpec) -> V {
    let mut e: Vec<(String, V)> = Vec::new();
    macro_rules! int {
        ($f:ident) => {
            if let Some(v) = &b.$f {
                e.push((stringify!($f).into(), V::Int(v.value)));
            }
        };
    }
    macro_rules! boolean {
        ($f:ident) => {
            if let Some(v) = &b.$f {
                e.push((stringify!($f).into(), V::Word(v.value.to_string())));
            }
        };
    }
    int!(max_model_len);
    int!(max_num_batched_tokens);
    int!(max_num_seqs);
    if let Some(g) = &b.gpu_memory_utilization {
        let t = g.value.as_str();
        let numeric = !t.is_empty()
            && t.chars().all(|c| c.is_ascii_digit() || c == '.')
            && t.starts_with(|c: char| c.is_ascii_digit())
            && t.matches('.').count() <= 1
            && !t.ends_with('.');
        e.push((
            "gpu_memory_utilization".into(),
            if numeric {
                V::Word(t.into())
            } else {
                V::Str(t.into())
            },
        ));
    }
    int!(block_size);
    int!(seed);
    boolean!(expert_parallel);
    boolean!(trust_remote_code);
    boolean!(async_scheduling);
    boolean!(prefix_caching);
    if let Some(g) = &b.graph {
        let mode = g.value.as_str();
        let word = if b.capture_sizes.is_empty() {
            mode.to_owned()
        } else {
            let sizes: Vec<String> = b
                .capture_sizes
                .iter()
                .map(|c| c.value.to_string())
                .collect();
            format!("{mode} {{ capture_sizes: [{}] }}", sizes.join(", "))
        };
        e.push(("graph".into(), V::Word(word)));
    }
    if let Some(sp) = &b.speculative {
        let mut x = vec![
            ("method".to_owned(), ident_or_str(&sp.method.value)),
            ("tokens".to_owned(), V::Int(sp.tokens.value)),
        ];
        if let Some(ee) = &sp.enforce_eager {
            x.push(("enforce_eager".into(), V::Word(ee.value.to_string())));
        }
        e.push(("speculative".into(), V::Block(x, false)));
    }
    if !b.additional_config.is_empty() {
        e.push((
            "additional_config".into(),
            V::Block(
                b.additional_config
                    .iter()
                    .map(|(k, v)| (quoted(k), V::Json(v.value.clone())))
                    .collect(),
                false,
            ),
        ));
    }
    if !b.flags.is_empty() {
        e.push((
            "flags".into(),
            V::List(
                b.flags
                    .iter()
                    .map(|f| match &f.value {
                        None => V::Str(f.name.value.clone()),
                        Some(v) => {
                            V::Assign(f.name.value.clone(), Box::new(V::Json(v.value.clone())))
                        }
                    })
                    .collect(),
            ),
        ));
    }
    if !b.env.is_empty() {
        e.push((
            "env".into(),
            V::Block(
                b.env
                    .iter()
                    .map(|x| {
                        let key = if is_ident(&x.name.value) {
                            x.name.value.clone()
                        } else {
                            quoted(&x.name.value)
                        };
                        let v = match &x.value.value {
                            EnvValue::Literal(t) => V::Str(t.clone()),
                            EnvValue::Prepend { prepend } => {
                                V::Call("prepend".into(), vec![V::Str(prepend.clone())])
                            }
                        };
                        (key, v)
                    })
                    .collect(),
                true,
            ),
        ));
    }
    V::Block(e, true)
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
        && !matches!(
            s,
            "as" | "break"
                | "const"
                | "continue"
                | "crate"
                | "else"
                | "enum"
                | "extern"
                | "false"
                | "fn"
                | "for"
                | "if"
                | "impl"
                | "in"
                | "let"
                | "loop"
                | "match"
                | "mod"
                | "move"
                | "mut"
                | "pub"
                | "ref"
                | "return"
                | "self"
                | "Self"
                | "static"
                | "struct"
                | "super"
                | "trait"
                | "true"
                | "type"
                | "unsafe"
                | "use"
                | "where"
                | "while"
                | "async"
                | "await"
                | "dyn"
                | "_"
        )
}

fn ident_or_str(s: &str) -> V {
    if is_ident(s) {
        V::Word(s.to_owned())
    } else {
        V::Str(s.to_owned())
    }
}
