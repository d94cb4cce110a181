//! Per-role serve settings: options and env from a role's first node, env
//! values, the proxy variables, and the common block every role shares.

use super::{DERIVED_ENV, Fail, NodeIn, P, number};
use crate::import::{Loc, Note};
use crate::spec::{EnvEntry, EnvValue, FlagEntry, GraphMode, Json, ServeSpec, SpeculativeSpec};
use crate::{Spanned, tables};
use std::collections::BTreeMap;

/// The role's settings from its first node's options and env.
pub(super) fn serve_block(
    n: &NodeIn,
    model: &tables::Model,
    served: &mut Option<P<String>>,
    notes: &mut Vec<Note>,
    s: &mut impl FnMut(Loc) -> crate::Site,
) -> Result<ServeSpec, Fail> {
    let mut b = ServeSpec::default();
    for a in &n.args {
        let flag = a.flag.v.as_str();
        let val = || -> Result<&P<String>, Fail> {
            a.value.as_ref().ok_or((
                a.flag.at,
                format!("found `{flag}` without a value, expected one"),
            ))
        };
        let int = |v: &P<String>| number(v, &format!("`{flag}`"));
        let json = |v: &P<String>| -> Result<Json, Fail> {
            serde_json::from_str(&v.v).map_err(|e| {
                (
                    v.at,
                    format!(
                        "found a `{flag}` value that is not JSON ({e}), expected a JSON object"
                    ),
                )
            })
        };
        macro_rules! set_int {
            ($f:ident) => {{
                let v = int(val()?)?;
                b.$f = Some(Spanned::new(v.v, s(v.at)));
            }};
        }
        macro_rules! set_bool {
            ($f:ident, $b:expr) => {
                b.$f = Some(Spanned::new($b, s(a.flag.at)))
            };
        }
        match flag {
            "--kv-transfer-config" => {}
            "--max-model-len" => set_int!(max_model_len),
            "--max-num-batched-tokens" => set_int!(max_num_batched_tokens),
            "--max-num-seqs" => set_int!(max_num_seqs),
            "--block-size" => set_int!(block_size),
            "--seed" => set_int!(seed),
            "--gpu-memory-utilization" => {
                let v = val()?;
                b.gpu_memory_utilization = Some(Spanned::new(v.v.clone(), s(v.at)));
            }
            "--enable-expert-parallel" => set_bool!(expert_parallel, true),
            "--trust-remote-code" => set_bool!(trust_remote_code, true),
            "--async-scheduling" => set_bool!(async_scheduling, true),
            "--enable-prefix-caching" => set_bool!(prefix_caching, true),
            "--no-enable-prefix-caching" => set_bool!(prefix_caching, false),
            "--enforce-eager" => b.graph = Some(Spanned::new(GraphMode::Eager, s(a.flag.at))),
            "--served-model-name" => {
                let v = val()?;
                *served = Some(v.clone());
            }
            "--quantization" => {
                let v = val()?;
                if Some(v.v.as_str()) != model.quantization {
                    notes.push(Note {
                        at: v.at,
                        what: format!("`--quantization {}`", v.v),
                        why: format!(
                            "pd-dsl passes the model table's {} for `{}`",
                            model
                                .quantization
                                .map_or("none".to_owned(), |q| format!("`{q}`")),
                            model.id
                        ),
                    });
                }
            }
            "--compilation-config" => {
                let v = val()?;
                let j = json(v)?;
                let mode = j.get("cudagraph_mode").and_then(Json::as_str);
                let graph = mode.and_then(GraphMode::from_cudagraph_mode);
                match graph {
                    Some(g) => b.graph = Some(Spanned::new(g, s(v.at))),
                    None => {
                        return Err((
                            v.at,
                            format!(
                                "found `--compilation-config` {}, expected `cudagraph_mode` `FULL_DECODE_ONLY`, `FULL` or `PIECEWISE`: pd-dsl renders the graph mode from `graph:`",
                                v.v
                            ),
                        ));
                    }
                }
                // Capture sizes are the layout's `graph: MODE { capture_sizes }`.
                let sizes: Option<Vec<u64>> = j
                    .get("cudagraph_capture_sizes")
                    .and_then(Json::as_array)
                    .and_then(|a| a.iter().map(Json::as_u64).collect());
                if let Some(sizes) = &sizes {
                    b.capture_sizes = sizes.iter().map(|&n| Spanned::new(n, s(v.at))).collect();
                }
                if let Json::Object(o) = &j {
                    let rest: Vec<&String> = o
                        .keys()
                        .filter(|k| {
                            *k != "cudagraph_mode"
                                && !(sizes.is_some() && *k == "cudagraph_capture_sizes")
                        })
                        .collect();
                    if !rest.is_empty() {
                        notes.push(Note {
                            at: v.at,
                            what: format!(
                                "`--compilation-config` keys {} dropped",
                                rest.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                            ),
                            why: "pd-dsl renders only `cudagraph_mode` (from `graph:`); the rest is vLLM's default".into(),
                        });
                    }
                }
            }
            "--speculative-config" => {
                let v = val()?;
                let j = json(v)?;
                let method = j.get("method").and_then(Json::as_str);
                let tokens = j.get("num_speculative_tokens").and_then(Json::as_u64);
                let (Some(method), Some(tokens)) = (method, tokens) else {
                    return Err((
                        v.at,
                        format!(
                            "found `--speculative-config` {}, expected `method` and `num_speculative_tokens`",
                            v.v
                        ),
                    ));
                };
                let site = s(v.at);
                b.speculative = Some(SpeculativeSpec {
                    method: Spanned::new(method.to_owned(), site),
                    tokens: Spanned::new(tokens, site),
                    enforce_eager: j
                        .get("enforce_eager")
                        .and_then(Json::as_bool)
                        .map(|e| Spanned::new(e, site)),
                    site,
                });
                if let Json::Object(o) = &j {
                    let rest: Vec<&String> = o
                        .keys()
                        .filter(|k| {
                            !matches!(
                                k.as_str(),
                                "method" | "num_speculative_tokens" | "enforce_eager"
                            )
                        })
                        .collect();
                    if !rest.is_empty() {
                        notes.push(Note {
                            at: v.at,
                            what: format!(
                                "`--speculative-config` keys {} dropped",
                                rest.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                            ),
                            why: "pd-dsl renders `method`, `num_speculative_tokens` and `enforce_eager`".into(),
                        });
                    }
                }
            }
            "--additional-config" => {
                let v = val()?;
                let Json::Object(o) = json(v)? else {
                    return Err((
                        v.at,
                        "found an `--additional-config` that is not a JSON object, expected `{\"key\": ..}`".into(),
                    ));
                };
                for (k, x) in o {
                    b.additional_config.insert(k, Spanned::new(x, s(v.at)));
                }
            }
            _ => b.flags.push(FlagEntry {
                name: Spanned::new(flag.to_owned(), s(a.flag.at)),
                // A JSON value written over several lines is passed on one
                // (vLLM parses it alike; the round trip compares JSON as
                // JSON): a flag value holds no control characters.
                value: a.value.as_ref().map(|v| {
                    let text = match serde_json::from_str::<Json>(&v.v) {
                        Ok(j @ (Json::Object(_) | Json::Array(_))) if v.v.contains('\n') => {
                            j.to_string()
                        }
                        _ => v.v.clone(),
                    };
                    Spanned::new(Json::String(text), s(v.at))
                }),
            }),
        }
    }
    // pd-dsl binds every API server to all interfaces: the proxy on node 0
    // reaches the ranks of every node.
    for a in n.rank_args.iter().filter(|a| a.flag.v == "--host") {
        if let Some(v) = &a.value
            && v.v != "0.0.0.0"
            && !v.v.contains('$')
        {
            let what = format!("`--host {}`", v.v);
            if !notes.iter().any(|x| x.what == what) {
                notes.push(Note {
                    at: v.at,
                    what,
                    why: "pd-dsl passes `--host 0.0.0.0`: the proxy on node 0 reaches every node's ranks".into(),
                });
            }
        }
    }
    // Flags pd-dsl passes from the model table that the input leaves to
    // vLLM's default: the rendered command differs, so say so.
    let has = |f: &str| n.args.iter().any(|a| a.flag.v == f);
    for (flag, table) in [
        ("--quantization", model.quantization),
        ("--tokenizer-mode", model.tokenizer_mode),
    ] {
        let what = format!("no `{flag}` (vLLM's default)");
        if let Some(t) = table
            && !has(flag)
            && !notes.iter().any(|x| x.what == what)
        {
            notes.push(Note {
                at: n.model.at,
                what,
                why: format!(
                    "pd-dsl passes the model table's `{flag} {t}` for `{}`",
                    model.id
                ),
            });
        }
    }
    // Every proxy variable set, and set empty: `no_proxy` then has no
    // effect (curl and Python consult it only to bypass a proxy).
    let proxies_off = PROXY_ENV
        .iter()
        .all(|p| n.env.iter().any(|(k, v)| k.v == *p && v.v.is_empty()));
    for (k, v) in &n.env {
        if DERIVED_ENV.contains(&k.v.as_str()) {
            continue;
        }
        if proxies_off && k.v.eq_ignore_ascii_case("no_proxy") && v.v.contains('$') {
            let what = format!("env `{}={}`", k.v, v.v);
            if !notes.iter().any(|x| x.what == what) {
                notes.push(Note {
                    at: v.at,
                    what,
                    why: "dropped: it lists addresses known only at run time, which a pd-dsl env value cannot state, and has no effect, since the same env sets every proxy variable (`http_proxy`, `https_proxy`, `all_proxy`, either case) empty".into(),
                });
            }
            continue;
        }
        let value = env_value(&k.v, v)?;
        b.env.push(EnvEntry {
            name: Spanned::new(k.v.clone(), s(k.at)),
            value: Spanned::new(value, s(v.at)),
        });
    }
    Ok(b)
}

/// The proxy variables, both spellings curl and Python read.
pub const PROXY_ENV: &[&str] = &[
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
];

/// `dir:$NAME` (or `dir${NAME:+:$NAME}`) prepends to a path list; any other
/// reference is run-time state the importer cannot follow.
fn env_value(name: &str, v: &P<String>) -> Result<EnvValue, Fail> {
    let text = v.v.as_str();
    for suffix in [
        format!(":${name}"),
        format!(":${{{name}}}"),
        format!("${{{name}:+:${name}}}"),
        format!("${{{name}:+:${{{name}}}}}"),
    ] {
        if let Some(dir) = text.strip_suffix(suffix.as_str())
            && !dir.contains('$')
        {
            return Ok(EnvValue::Prepend {
                prepend: dir.to_owned(),
            });
        }
    }
    if text.contains("$(") || text.contains('`') {
        return Err((
            v.at,
            format!(
                "found env `{name}={text}`, a value computed at run time, expected a literal: the importer never runs commands"
            ),
        ));
    }
    if text.contains('$') {
        return Err((
            v.at,
            format!(
                "found env `{name}={text}`, which reads another variable, expected a literal or `dir:${name}` (a prepend): the importer cannot know that variable's value"
            ),
        ));
    }
    Ok(EnvValue::Literal(text.to_owned()))
}

/// Moves what every role sets alike into the common `serve` block.
pub(super) fn factor_common<K: Ord>(roles: &mut BTreeMap<K, ServeSpec>) -> ServeSpec {
    let mut common = ServeSpec::default();
    if roles.len() < 2 {
        if let Some((_, only)) = roles.pop_first() {
            return only;
        }
        return common;
    }
    macro_rules! field {
        ($f:ident) => {{
            let first = roles.values().next().and_then(|b| b.$f.clone());
            if let Some(v) = first
                && roles
                    .values()
                    .all(|b| b.$f.as_ref().map(|x| &x.value) == Some(&v.value))
            {
                for b in roles.values_mut() {
                    b.$f = None;
                }
                common.$f = Some(v);
            }
        }};
    }
    field!(max_model_len);
    field!(max_num_batched_tokens);
    field!(max_num_seqs);
    field!(gpu_memory_utilization);
    field!(block_size);
    field!(seed);
    field!(expert_parallel);
    field!(trust_remote_code);
    field!(async_scheduling);
    field!(prefix_caching);
    // The graph mode and its capture sizes move together: sizes belong to
    // the block that sets their mode.
    let sizes = |b: &ServeSpec| b.capture_sizes.iter().map(|c| c.value).collect::<Vec<_>>();
    let graph0 = roles
        .values()
        .next()
        .map(|b| (b.graph.clone(), b.capture_sizes.clone()));
    if let Some((Some(g), caps)) = graph0
        && roles.values().all(|b| {
            b.graph.as_ref().map(|x| &x.value) == Some(&g.value)
                && sizes(b) == caps.iter().map(|c| c.value).collect::<Vec<_>>()
        })
    {
        for b in roles.values_mut() {
            b.graph = None;
            b.capture_sizes.clear();
        }
        common.graph = Some(g);
        common.capture_sizes = caps;
    }
    let spec0 = roles.values().next().and_then(|b| b.speculative.clone());
    if let Some(sp) = spec0
        && roles.values().all(|b| {
            b.speculative.as_ref().is_some_and(|x| {
                x.method.value == sp.method.value
                    && x.tokens.value == sp.tokens.value
                    && x.enforce_eager.as_ref().map(|e| e.value)
                        == sp.enforce_eager.as_ref().map(|e| e.value)
            })
        })
    {
        for b in roles.values_mut() {
            b.speculative = None;
        }
        common.speculative = Some(sp);
    }
    let keys: Vec<String> = roles
        .values()
        .next()
        .map(|b| b.additional_config.keys().cloned().collect())
        .unwrap_or_default();
    for k in keys {
        let v0 = roles
            .values()
            .next()
            .and_then(|b| b.additional_config.get(&k).cloned());
        if let Some(v0) = v0
            && roles
                .values()
                .all(|b| b.additional_config.get(&k).map(|x| &x.value) == Some(&v0.value))
        {
            for b in roles.values_mut() {
                b.additional_config.remove(&k);
            }
            common.additional_config.insert(k, v0);
        }
    }
    let env0: Vec<EnvEntry> = roles
        .values()
        .next()
        .map(|b| b.env.clone())
        .unwrap_or_default();
    for e in env0 {
        let everywhere = roles.values().all(|b| {
            b.env
                .iter()
                .any(|x| x.name.value == e.name.value && x.value.value == e.value.value)
        });
        if everywhere {
            for b in roles.values_mut() {
                b.env.retain(|x| x.name.value != e.name.value);
            }
            common.env.push(e);
        }
    }
    let flags0: Vec<FlagEntry> = roles
        .values()
        .next()
        .map(|b| b.flags.clone())
        .unwrap_or_default();
    for f in flags0 {
        let val = |x: &FlagEntry| x.value.as_ref().map(|v| v.value.clone());
        let everywhere = roles.values().all(|b| {
            b.flags
                .iter()
                .any(|x| x.name.value == f.name.value && val(x) == val(&f))
        });
        if everywhere {
            for b in roles.values_mut() {
                b.flags.retain(|x| x.name.value != f.name.value);
            }
            common.flags.push(f);
        }
    }
    common
}
