//! Hand-written scripts for one deployment (the shapes of upstream's
//! tutorials): role templates whose `vllm serve` takes `$1..$7` from
//! `launch_online_dp.py` (facts §1.3: devices, port, DP size, DP rank, DP
//! address, DP RPC port, TP size), the launcher lines (one per node, in node
//! order), per-node `vllm serve` commands (native DP, `--headless` workers),
//! the proxy line and `export` lines.

use super::build::{
    Arg, Deployment, NodeIn, P, ProxyIn, RANK_FLAGS, is_switch, normalise_flag, number, p,
};
use super::shell::{self, Seg, Word};
use super::{Input, InputProxy, Loc, Note};
use crate::spec::{Json, ProxyScript, Role};
use std::collections::BTreeMap;

type Fail = (Loc, String);

/// A word of a command line: its text (as written when not literal).
#[derive(Clone, Debug)]
pub(crate) struct Tok {
    pub text: String,
    pub at: Loc,
    pub literal: bool,
}

impl Tok {
    /// A token of an e2e template: `$X`/`${X}` are the harness's placeholders.
    pub fn from_text(text: &str, at: Loc) -> Tok {
        Tok {
            text: text.to_owned(),
            at,
            literal: !text.contains('$'),
        }
    }

    /// A shell word as written.
    pub fn from_word(w: &Word) -> Tok {
        match w.literal() {
            Some(t) => Tok {
                text: t,
                at: w.at,
                literal: true,
            },
            None => Tok {
                text: w.shown(),
                at: w.at,
                literal: false,
            },
        }
    }
}

/// Pairs `--flag value` / `--flag=value` / switches. Values of derived
/// flags may be placeholders; every other value must be literal.
pub(crate) fn split_args(toks: &[Tok]) -> Result<Vec<Arg>, Fail> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        if !t.literal {
            return Err((
                t.at,
                format!(
                    "found `{}` where a `--flag` was expected, a value only known at run time: the importer follows literal flags only",
                    t.text
                ),
            ));
        }
        if !t.text.starts_with("--") {
            return Err((
                t.at,
                format!(
                    "found `{}`, expected a `--flag`: every `vllm serve` option after the model is a flag with an optional value",
                    t.text
                ),
            ));
        }
        let (name, inline) = normalise_flag(&t.text);
        let value = match inline {
            Some(v) => Some((v, t.at, t.literal)),
            None if is_switch(&name) => None,
            None => match toks.get(i + 1) {
                Some(n) if !n.text.starts_with("--") => {
                    i += 1;
                    Some((n.text.clone(), n.at, n.literal))
                }
                _ => None,
            },
        };
        if let Some((v, at, literal)) = &value
            && !literal
            && !RANK_FLAGS.contains(&name.as_str())
        {
            return Err((*at, run_time_value(&name, v)));
        }
        out.push(Arg {
            flag: p(name, t.at),
            value: value.map(|(v, at, _)| p(v, at)),
        });
        i += 1;
    }
    Ok(out)
}

/// Why a flag's value known only at run time cannot be imported. A JSON
/// value names the key holding the placeholder: upstream's kv-pool configs
/// give `--kv-transfer-config` an `engine_id` of `${DP_RANK}`, one id per
/// DP rank, which no engine-id form of a layout (per engine, per node)
/// states.
fn run_time_value(name: &str, v: &str) -> String {
    fn find(v: &serde_json::Value, path: &mut Vec<String>) -> Option<String> {
        match v {
            serde_json::Value::String(s) if s.contains('$') => Some(s.clone()),
            serde_json::Value::Object(m) => m.iter().find_map(|(k, x)| {
                path.push(k.clone());
                let hit = find(x, path);
                if hit.is_none() {
                    path.pop();
                }
                hit
            }),
            serde_json::Value::Array(a) => a.iter().enumerate().find_map(|(i, x)| {
                path.push(i.to_string());
                let hit = find(x, path);
                if hit.is_none() {
                    path.pop();
                }
                hit
            }),
            _ => None,
        }
    }
    let mut path = Vec::new();
    let hit = serde_json::from_str::<serde_json::Value>(v)
        .ok()
        .and_then(|j| find(&j, &mut path));
    match hit {
        Some(text) if path.last().map(String::as_str) == Some("engine_id") => format!(
            "found `engine_id` = `{text}` in `{name}` ({}), an id the runner fills per rank, expected a literal: pd-dsl states engine ids per engine or per node (`engine_ids`), not one per DP rank",
            path.join(".")
        ),
        Some(text) => format!(
            "found `{text}` at `{}` in `{name}`, a value filled at run time, expected a literal: the importer never runs the script, so it cannot know the value",
            path.join(".")
        ),
        None => format!(
            "found `{name} {v}`, a value computed or read at run time, expected a literal: the importer never runs the script, so it cannot know the value"
        ),
    }
}

/// A flag given more than once (per-rank flags are refused twice by
/// [`take_rank_flags`]): vLLM's argparse keeps the last value, so the import
/// keeps it and reports every earlier one.
pub(crate) fn once_each(args: &mut Vec<Arg>, notes: &mut Vec<Note>) {
    let mut i = 0;
    while i < args.len() {
        let flag = args[i].flag.v.clone();
        if RANK_FLAGS.contains(&flag.as_str()) {
            i += 1;
            continue;
        }
        if let Some(j) = args[i + 1..].iter().position(|a| a.flag.v == flag) {
            let later = &args[i + 1 + j];
            let show = |a: &Arg| {
                a.value
                    .as_ref()
                    .map_or(String::new(), |v| format!(" {}", v.v))
            };
            notes.push(Note {
                at: later.flag.at,
                what: format!(
                    "`{flag}` given twice (`{flag}{}` at line {}, then `{flag}{}`)",
                    show(&args[i]),
                    args[i].flag.at.line,
                    show(later)
                ),
                why: "vLLM's argparse keeps the last; pd-dsl passes it once, with that value"
                    .into(),
            });
            args.remove(i);
        } else {
            i += 1;
        }
    }
}

/// The per-rank flags of a serve command (derived by pd-dsl).
#[derive(Default, Debug)]
pub(crate) struct Facts {
    by_flag: BTreeMap<String, P<String>>,
    pub headless: bool,
    /// The per-rank flags as written, in order.
    pub written: Vec<Arg>,
}

impl Facts {
    fn get(&self, flag: &str) -> Option<&P<String>> {
        self.by_flag.get(flag)
    }

    fn literal(&self, flag: &str) -> Option<&P<String>> {
        self.get(flag).filter(|v| !v.v.contains('$'))
    }

    fn num(&self, flag: &str) -> Result<Option<P<u64>>, Fail> {
        self.literal(flag)
            .map(|v| number(v, &format!("`{flag}`")))
            .transpose()
    }

    /// The number a per-node command passes, refusing a value only known at
    /// run time (`--port $SERVER_PORT` the runner does not fill): no
    /// launcher stands behind the command to give it.
    fn num_now(&self, flag: &str) -> Result<Option<P<u64>>, Fail> {
        match self.get(flag) {
            Some(v) if v.v.contains('$') => Err((
                v.at,
                format!(
                    "found `{flag} {}`, a value only known at run time, expected a number: nothing the importer reads sets it",
                    v.v
                ),
            )),
            Some(v) => number(v, &format!("`{flag}`")).map(Some),
            None => Ok(None),
        }
    }

    /// Literal per-rank flags must say what the node's facts say.
    pub fn agree_with(&self, n: &NodeIn) -> Result<(), Fail> {
        let checks: [(&str, Option<u64>); 5] = [
            ("--data-parallel-size", Some(n.dp.v)),
            ("--tensor-parallel-size", Some(n.tp.v)),
            ("--data-parallel-size-local", Some(n.dp_local.v)),
            ("--data-parallel-rpc-port", n.dp_rpc.as_ref().map(|r| r.v)),
            ("--port", (n.dp_local.v == 1).then_some(n.api_port.v)),
        ];
        for (flag, want) in checks {
            if let (Some(got), Some(want)) = (self.num(flag)?, want)
                && got.v != want
            {
                return Err((
                    got.at,
                    format!(
                        "found `{flag} {}` in the serve command but {want} for the node, expected one value: the launcher and the command disagree",
                        got.v
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Checks a template's placeholders follow the launcher's `$1..$7`
    /// contract (facts §1.3).
    fn positional_contract(&self) -> Result<(), Fail> {
        for (flag, want) in [
            ("--port", "2"),
            ("--data-parallel-size", "3"),
            ("--data-parallel-rank", "4"),
            ("--data-parallel-address", "5"),
            ("--data-parallel-rpc-port", "6"),
            ("--tensor-parallel-size", "7"),
        ] {
            if let Some(v) = self.get(flag)
                && let Some(n) = v.v.strip_prefix('$')
                && n.len() == 1
                && n != want
            {
                return Err((
                    v.at,
                    format!(
                        "found `{flag} {}`, expected `${want}`: `launch_online_dp.py` passes devices, port, DP size, DP rank, DP address, DP RPC port and TP size as `$1..$7`",
                        v.v
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Removes the per-rank flags from `args`, returning them.
pub(crate) fn take_rank_flags(args: &mut Vec<Arg>) -> Result<Facts, Fail> {
    let mut f = Facts::default();
    let mut kept = Vec::new();
    for a in args.drain(..) {
        if RANK_FLAGS.contains(&a.flag.v.as_str()) {
            f.written.push(a.clone());
            if a.flag.v == "--headless" {
                f.headless = true;
                continue;
            }
            let Some(v) = a.value.clone() else {
                return Err((
                    a.flag.at,
                    format!("found `{}` without a value, expected one", a.flag.v),
                ));
            };
            if f.by_flag.insert(a.flag.v.clone(), v).is_some() {
                return Err((
                    a.flag.at,
                    format!(
                        "found `{}` twice, expected it once: the later one would silently win",
                        a.flag.v
                    ),
                ));
            }
        } else {
            kept.push(a);
        }
    }
    *args = kept;
    Ok(f)
}

fn role_of(args: &[Arg]) -> Result<Role, Fail> {
    let Some(a) = args.iter().find(|a| a.flag.v == "--kv-transfer-config") else {
        return Ok(Role::Mixed);
    };
    let Some(v) = &a.value else {
        return Ok(Role::Mixed);
    };
    let j: Json = serde_json::from_str(&v.v).map_err(|e| {
        (
            v.at,
            format!(
                "found a `--kv-transfer-config` that is not JSON ({e}), expected a JSON object"
            ),
        )
    })?;
    match j.get("kv_role").and_then(Json::as_str) {
        Some("kv_producer") => Ok(Role::Prefill),
        Some("kv_consumer") => Ok(Role::Decode),
        other => Err((
            v.at,
            format!(
                "found `kv_role` {}, expected `kv_producer` or `kv_consumer`: pd-dsl engines are prefill or decode",
                other.map_or("missing".to_owned(), |r| format!("`{r}`"))
            ),
        )),
    }
}

/// A node from a literal `vllm serve MODEL ...` command.
pub(crate) fn node_from_serve(
    toks: &[Tok],
    env: Vec<(P<String>, P<String>)>,
    notes: &mut Vec<Note>,
) -> Result<NodeIn, Fail> {
    let (model, rest) = serve_head(toks)?;
    let mut args = split_args(rest)?;
    once_each(&mut args, notes);
    let facts = take_rank_flags(&mut args)?;
    let role = role_of(&args)?;
    let one = |at: Loc| p(1u64, at);
    let dp = facts
        .num_now("--data-parallel-size")?
        .unwrap_or(one(model.at));
    let tp = facts
        .num_now("--tensor-parallel-size")?
        .unwrap_or(one(model.at));
    let dp_local = facts
        .num_now("--data-parallel-size-local")?
        .unwrap_or(p(dp.v, dp.at));
    let rank_start = facts
        .num_now("--data-parallel-start-rank")?
        .or(facts.num_now("--data-parallel-rank")?)
        .unwrap_or(p(0, model.at));
    // vLLM's default API port.
    let api_port = facts.num_now("--port")?.unwrap_or(p(8000, model.at));
    let dp_rpc = facts.num_now("--data-parallel-rpc-port")?;
    let master = facts
        .get("--data-parallel-address")
        .cloned()
        .unwrap_or(p(String::new(), model.at));
    Ok(NodeIn {
        at: toks.first().map_or(model.at, |t| t.at),
        // The caller places it.
        index: 0,
        role,
        model,
        dp,
        dp_local,
        rank_start,
        tp,
        api_port,
        dp_rpc,
        master,
        args,
        rank_args: facts.written,
        env,
        headless: facts.headless,
    })
}

fn serve_head(toks: &[Tok]) -> Result<(P<String>, &[Tok]), Fail> {
    let at = toks.first().map(|t| t.at).unwrap_or_default();
    match toks {
        [v, s, m, rest @ ..] if v.text == "vllm" && s.text == "serve" => {
            if !m.literal {
                return Err((
                    m.at,
                    format!(
                        "found model `{}`, a value read at run time, expected a literal path or hub id",
                        m.text
                    ),
                ));
            }
            Ok((p(m.text.clone(), m.at), rest))
        }
        _ => Err((
            at,
            "found a command that is not `vllm serve MODEL ...`, expected one".into(),
        )),
    }
}

/// One script file, interpreted.
#[derive(Default)]
struct Script {
    /// Variables in assignment order: name, value, exported.
    vars: Vec<(String, Word, bool)>,
    serves: Vec<Vec<Tok>>,
    launchers: Vec<Vec<Tok>>,
    proxies: Vec<(ProxyScript, Vec<Tok>)>,
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

    fn env(&self) -> Vec<(P<String>, P<String>)> {
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

fn interpret(file: usize, text: &str) -> Result<Script, Fail> {
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

struct Launch {
    at: Loc,
    dp: P<u64>,
    tp: P<u64>,
    dp_local: P<u64>,
    rank_start: P<u64>,
    address: P<String>,
    rpc: P<u64>,
    port: P<u64>,
}

const LAUNCHER_FLAGS: &[&str] = &[
    "--dp-size",
    "--tp-size",
    "--dp-size-local",
    "--dp-rank-start",
    "--dp-address",
    "--dp-rpc-port",
    "--vllm-start-port",
];

fn launch(toks: &[Tok], at: Loc) -> Result<Launch, Fail> {
    let args = split_args(toks)?;
    let mut m: BTreeMap<&str, P<String>> = BTreeMap::new();
    for a in &args {
        let Some(key) = LAUNCHER_FLAGS.iter().find(|f| **f == a.flag.v) else {
            return Err((
                a.flag.at,
                format!(
                    "found `{}` on a `launch_online_dp.py` line, expected one of `{}`{}",
                    a.flag.v,
                    LAUNCHER_FLAGS.join("`, `"),
                    crate::rules::did_you_mean(&a.flag.v, LAUNCHER_FLAGS.iter().copied())
                ),
            ));
        };
        let Some(v) = &a.value else {
            return Err((
                a.flag.at,
                format!("found `{key}` without a value, expected one"),
            ));
        };
        if v.v.contains('$') {
            if *key == "--dp-address" {
                m.insert(key, v.clone());
                continue;
            }
            return Err((
                v.at,
                format!(
                    "found `{key} {}`, a value read at run time, expected a literal: the importer never runs the script",
                    v.v
                ),
            ));
        }
        m.insert(key, v.clone());
    }
    let need = |k: &str, dflt: Option<u64>| -> Result<P<u64>, Fail> {
        match m.get(k) {
            Some(v) => number(v, &format!("`{k}`")),
            None => dflt.map(|d| p(d, at)).ok_or((
                at,
                format!(
                    "found a `launch_online_dp.py` line without `{k}`, expected it: the node's ranks depend on it"
                ),
            )),
        }
    };
    let dp = need("--dp-size", None)?;
    let dp_local = need("--dp-size-local", Some(dp.v))?;
    // launch_online_dp.py defaults: --dp-rpc-port 12345, --vllm-start-port 9000.
    Ok(Launch {
        at,
        tp: need("--tp-size", None)?,
        rank_start: need("--dp-rank-start", Some(0))?,
        address: m
            .get("--dp-address")
            .cloned()
            .ok_or((at, "found a `launch_online_dp.py` line without `--dp-address`, expected the DP master's address".to_owned()))?,
        rpc: need("--dp-rpc-port", Some(12345))?,
        port: need("--vllm-start-port", Some(9000))?,
        dp,
        dp_local,
    })
}

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

fn launch_role(templates: &[TemplateIn], l: &Launch) -> Result<Role, Fail> {
    let roles: Vec<Role> = {
        let mut r: Vec<Role> = templates.iter().map(|t| t.role).collect();
        r.dedup();
        r.sort();
        r.dedup();
        r
    };
    if let [only] = roles.as_slice() {
        return Ok(*only);
    }
    let fits: Vec<Role> = roles
        .iter()
        .copied()
        .filter(|role| {
            templates.iter().any(|t| {
                t.role == *role
                    && t.shapes
                        .as_ref()
                        .and_then(|s| s.get(role.as_str()))
                        .is_some_and(|s| {
                            s.get("dp_size").and_then(Json::as_u64) == Some(l.dp.v)
                                && s.get("tp_size").and_then(Json::as_u64) == Some(l.tp.v)
                        })
            })
        })
        .collect();
    match fits.as_slice() {
        [one] => Ok(*one),
        _ => Err((
            l.at,
            format!(
                "found a launcher line for dp{}tp{} matching {} templates, expected exactly one: its role comes from the template whose `kv_connector_extra_config` shape for its role is dp{}tp{}",
                l.dp.v,
                l.tp.v,
                if fits.is_empty() { "no" } else { "several" },
                l.dp.v,
                l.tp.v
            ),
        )),
    }
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
