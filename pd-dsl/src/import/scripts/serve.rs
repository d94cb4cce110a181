//! A `vllm serve` command as read: its words, options and run-time values,
//! the per-rank flags pd-dsl derives (node facts), its role and its node.

use super::Fail;
use crate::import::build::{Arg, NodeIn, P, RANK_FLAGS, is_switch, normalise_flag, number, p};
use crate::import::shell::Word;
use crate::import::{Loc, Note};
use crate::spec::{Json, Role};
use std::collections::BTreeMap;

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
    pub(super) fn positional_contract(&self) -> Result<(), Fail> {
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

pub(super) fn role_of(args: &[Arg]) -> Result<Role, Fail> {
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

pub(super) fn serve_head(toks: &[Tok]) -> Result<(P<String>, &[Tok]), Fail> {
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
