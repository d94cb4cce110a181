//! Hand-written scripts for one deployment (the shapes of upstream's
//! tutorials): role templates whose `vllm serve` takes `$1..$7` from
//! `launch_online_dp.py` (facts §1.3: devices, port, DP size, DP rank, DP
//! address, DP RPC port, TP size), the launcher lines (one per node, in node
//! order), per-node `vllm serve` commands (native DP, `--headless` workers),
//! the proxy line and `export` lines.

mod launch;
mod script;
mod serve;

use crate::import::build::{Arg, Deployment, NodeIn, P, ProxyIn, normalise_flag, number, p};
use crate::import::{Input, InputProxy, Loc, Note};
use crate::spec::{Json, ProxyScript, Role};
use launch::{Launch, launch, launch_role};
use script::interpret;
use serve::{Facts, role_of, serve_head};
pub(crate) use serve::{Tok, node_from_serve, once_each, split_args, take_rank_flags};
use std::collections::BTreeMap;

type Fail = (Loc, String);

struct TemplateIn {
    file: usize,
    role: Role,
    model: P<String>,
    args: Vec<Arg>,
    facts: Facts,
    env: Vec<(P<String>, P<String>)>,
    shapes: Option<Json>,
}

/// Reads a set of scripts for one deployment.
pub(crate) fn read(inputs: &[Input]) -> Result<Deployment, Fail> {
    let mut templates: Vec<TemplateIn> = Vec::new();
    let mut launches: Vec<(usize, Launch)> = Vec::new();
    let mut nodes: Vec<NodeIn> = Vec::new();
    let mut proxy: Option<ProxyIn> = None;
    let mut proxy_command: Option<InputProxy> = None;
    let mut notes = Vec::new();
    for (file, input) in inputs.iter().enumerate() {
        let s = interpret(file, &input.text)?;
        let env = s.env();
        for toks in &s.serves {
            let positional = toks.iter().any(|t| {
                !t.literal
                    && t.text.len() == 2
                    && t.text.starts_with('$')
                    && t.text.as_bytes()[1].is_ascii_digit()
            });
            if positional {
                let (model, rest) = serve_head(toks)?;
                let mut args = split_args(rest)?;
                let facts = take_rank_flags(&mut args)?;
                facts.positional_contract()?;
                let role = role_of(&args)?;
                let shapes = args
                    .iter()
                    .find(|a| a.flag.v == "--kv-transfer-config")
                    .and_then(|a| a.value.as_ref())
                    .and_then(|v| serde_json::from_str::<Json>(&v.v).ok())
                    .and_then(|j| j.get("kv_connector_extra_config").cloned());
                templates.push(TemplateIn {
                    file,
                    role,
                    model,
                    args,
                    facts,
                    env: env.clone(),
                    shapes,
                });
            } else {
                let mut n = node_from_serve(toks, env.clone(), &mut notes)?;
                n.index = nodes.len();
                nodes.push(n);
            }
        }
        for l in &s.launchers {
            let at = l.first().map_or(
                Loc {
                    file,
                    line: 1,
                    column: 1,
                },
                |t| t.at,
            );
            launches.push((file, launch(l, at)?));
        }
        for (script, toks) in &s.proxies {
            if proxy.is_some() {
                let at = toks.first().map(|t| t.at).unwrap_or_default();
                return Err((
                    at,
                    "found a second proxy line, expected one proxy per deployment".into(),
                ));
            }
            proxy = Some(proxy_of(*script, toks, file, &mut notes)?);
            proxy_command = Some(proxy_command_of(*script, toks));
        }
    }
    if !launches.is_empty() {
        if !nodes.is_empty() {
            return Err((
                nodes[0].at,
                "found a literal `vllm serve` beside `launch_online_dp.py` lines, expected one style per deployment: either every node runs the launcher or every node its own command".into(),
            ));
        }
        if templates.is_empty() {
            return Err((
                launches[0].1.at,
                "found `launch_online_dp.py` lines but no `run_dp_template.sh` (a `vllm serve` taking `$1..$7`), expected the template the launcher runs".into(),
            ));
        }
        // Each launcher line's role: the template whose extra-config shape
        // for its role matches the line's DP and TP.
        let roles: Vec<Role> = launches
            .iter()
            .map(|(_, l)| launch_role(&templates, l))
            .collect::<Result<_, _>>()?;
        let mut used: BTreeMap<Role, usize> = BTreeMap::new();
        for ((_, l), role) in launches.iter().zip(roles.iter().copied()) {
            let of_role: Vec<&TemplateIn> = templates.iter().filter(|t| t.role == role).collect();
            let count = roles.iter().filter(|r| **r == role).count();
            let i = used.entry(role).or_insert(0);
            let t = match of_role.len() {
                1 => of_role[0],
                k if k == count => of_role[*i],
                k => {
                    return Err((
                        l.at,
                        format!(
                            "found {k} {role} templates for {count} {role} nodes, expected one shared template or one per node (in node order)"
                        ),
                    ));
                }
            };
            *i += 1;
            let n = NodeIn {
                at: l.at,
                index: nodes.len(),
                role,
                model: t.model.clone(),
                dp: l.dp.clone(),
                dp_local: l.dp_local.clone(),
                rank_start: l.rank_start.clone(),
                tp: l.tp.clone(),
                api_port: l.port.clone(),
                dp_rpc: Some(l.rpc.clone()),
                master: l.address.clone(),
                args: t.args.clone(),
                rank_args: t.facts.written.clone(),
                env: t.env.clone(),
                headless: false,
            };
            t.facts.agree_with(&n)?;
            let _ = t.file;
            nodes.push(n);
        }
    } else if let Some(t) = templates.first() {
        return Err((
            t.model.at,
            "found a template taking `$1..$7` but no `launch_online_dp.py` line, expected the launcher lines that call it (one per node)".into(),
        ));
    } else {
        // Native DP: workers name the master by a variable; the first node
        // of each role names the engine.
        let mut masters: BTreeMap<Role, String> = BTreeMap::new();
        for n in &mut nodes {
            let m = masters.entry(n.role).or_insert_with(|| n.master.v.clone());
            if n.master.v.is_empty() || n.master.v.starts_with('$') || n.headless {
                n.master.v = m.clone();
            }
        }
    }
    Ok(Deployment {
        nodes,
        npus: None,
        proxy,
        proxy_command,
        notes,
        errors: Vec::new(),
        figures: Vec::new(),
        bench: None,
        pool: None,
    })
}

/// The proxy line as read: its options in order, list values kept in
/// order, `--flag=value` split.
fn proxy_command_of(script: ProxyScript, toks: &[Tok]) -> InputProxy {
    let mut options: Vec<(String, Vec<String>)> = Vec::new();
    let mut open = false;
    for t in toks {
        if t.text.starts_with("--") {
            let (name, inline) = normalise_flag(&t.text);
            open = inline.is_none();
            options.push((name, inline.into_iter().collect()));
        } else if open && let Some((_, values)) = options.last_mut() {
            values.push(t.text.clone());
        }
    }
    InputProxy {
        script: script.file_name().to_owned(),
        options,
    }
}

fn proxy_of(
    script: ProxyScript,
    toks: &[Tok],
    file: usize,
    notes: &mut Vec<Note>,
) -> Result<ProxyIn, Fail> {
    let at = toks.first().map_or(
        Loc {
            file,
            line: 1,
            column: 1,
        },
        |t| t.at,
    );
    let mut lists: BTreeMap<String, Vec<&Tok>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for t in toks {
        if t.text.starts_with("--") {
            let (name, inline) = normalise_flag(&t.text);
            lists.entry(name.clone()).or_default();
            if inline.is_some() {
                current = None;
            } else {
                current = Some(name);
            }
        } else if let Some(c) = &current {
            lists.entry(c.clone()).or_default().push(t);
        }
    }
    let port = match lists.get("--port").and_then(|v| v.first()) {
        Some(t) => number(&p(t.text.clone(), t.at), "the proxy's `--port`")?,
        None => {
            return Err((
                at,
                "found a proxy line without `--port`, expected the port it listens on".into(),
            ));
        }
    };
    // Both proxies zip hosts with ports and refuse lists of different
    // lengths (examples/disaggregated_prefill_v1/
    // load_balance_proxy_server_example.py and its layerwise twin:
    // "Number of decoder hosts must match number of decoder ports").
    for (role, h, q) in [
        ("prefiller", "--prefiller-hosts", "--prefiller-ports"),
        ("decoder", "--decoder-hosts", "--decoder-ports"),
    ] {
        let (hosts, ports) = (lists.get(h), lists.get(q));
        let (nh, np) = (hosts.map_or(0, Vec::len), ports.map_or(0, Vec::len));
        if nh != np {
            let first = |v: Option<&Vec<&Tok>>| v.and_then(|v| v.first()).map(|t| t.at);
            notes.push(Note {
                at: first(hosts).or(first(ports)).unwrap_or(at),
                what: format!("the proxy lists {nh} `{h}` for {np} `{q}`"),
                why: format!(
                    "the proxy refuses to start unless every {role} has one host and one port; pd-dsl lists both for every rank"
                ),
            });
        }
    }
    let count = |h: &str, q: &str| {
        lists
            .get(h)
            .map_or(0, Vec::len)
            .max(lists.get(q).map_or(0, Vec::len))
    };
    Ok(ProxyIn {
        port,
        script: p(script, at),
        prefill_endpoints: count("--prefiller-hosts", "--prefiller-ports"),
        decode_endpoints: count("--decoder-hosts", "--decoder-ports"),
    })
}
