//! One input rank against what ours ran for it: model, options and env,
//! with the normalisations that apply to a rank (1-3, 5-9, 12).

use super::{Diff, Ran, diff};
use crate::harness::flags;
use pd_dsl::import::InputRank;
use serde_json::Value;
use std::collections::BTreeMap;

/// Variables of the harness itself (the recording stand-in, the shell).
pub const HARNESS_ENV: &[&str] = &["PATH", "STUB_OUT", "PWD", "SHLVL", "_", "OLDPWD"];

/// Derived per node or rank, checked on their own (normalisation 6).
pub const DERIVED_ENV: &[&str] = &[
    "ASCEND_RT_VISIBLE_DEVICES",
    "HCCL_IF_IP",
    "GLOO_SOCKET_IFNAME",
    "TP_SOCKET_IFNAME",
    "HCCL_SOCKET_IFNAME",
    "ENGINE_ID",
    "KV_PORT",
    // The node index run.sh exports where some node has its own settings.
    "PD_NODE",
    // Where run.sh wrote this node's KV pool config (its content is
    // compared on its own).
    "MMC_LOCAL_CONFIG_PATH",
    "MOONCAKE_CONFIG_PATH",
    "MOONCAKE_MASTER",
];

/// Expands `$NAME` and `${NAME}` in an input env value against `env`
/// (unset: empty), as the shell would at `export` time.
pub fn expand(value: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, tail) = if let Some(b) = after.strip_prefix('{') {
            match b.find('}') {
                Some(j) => (&b[..j], &b[j + 1..]),
                None => ("", after),
            }
        } else {
            let j = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..j], &after[j..])
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
        } else {
            out.push_str(env.get(name).map_or("", String::as_str));
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// Normalisation 5: `dir:$NAME` with `NAME` unset leaves a trailing `:`
/// in the shell (an empty entry: the current directory, for
/// `LD_LIBRARY_PATH`); pd-dsl's prepend leaves none.
pub fn prepend_onto_nothing(
    name: &str,
    value: &str,
    start: &BTreeMap<String, String>,
) -> Option<String> {
    if start.contains_key(name) {
        return None;
    }
    [format!(":${name}"), format!(":${{{name}}}")]
        .iter()
        .find_map(|suffix| value.strip_suffix(suffix.as_str()))
        .filter(|dir| !dir.contains('$'))
        .map(str::to_owned)
}

/// Flags with one value each (or none): the input's and ours.
pub fn option_map(
    options: &[(String, Option<String>)],
    what: &str,
    diffs: &mut Vec<Diff>,
) -> BTreeMap<String, Option<String>> {
    let mut m = BTreeMap::new();
    for (f, v) in options {
        if m.insert(f.clone(), v.clone()).is_some() {
            diffs.push(diff(format!("`{f}"), format!("{what} passes `{f}` twice")));
        }
    }
    m
}

/// Our argv after the model as `(flag, value)` pairs, spelled as the
/// importer spells them.
pub fn our_options(argv: &[String]) -> Vec<(String, Option<String>)> {
    flags(argv)
        .into_iter()
        .map(|(f, v)| (f, v.into_iter().next()))
        .collect()
}

pub fn is_json(v: &str) -> bool {
    v.trim_start().starts_with('{')
}

/// Normalisation 8: options at vLLM's default value, which one side may
/// pass and the other leave out (`--host` unset binds every interface).
pub const VLLM_DEFAULTS: &[(&str, &str)] = &[
    ("--host", "0.0.0.0"),
    ("--data-parallel-size", "1"),
    ("--tensor-parallel-size", "1"),
    ("--data-parallel-start-rank", "0"),
];

/// Normalisation 9: options a `--headless` worker ignores (it runs no API
/// server).
pub const HEADLESS_IGNORES: &[&str] = &["--host", "--port"];

pub fn is_default(flag: &str, value: Option<&str>) -> bool {
    VLLM_DEFAULTS
        .iter()
        .any(|(f, v)| *f == flag && Some(*v) == value)
}

/// Every difference between an input rank and what the rendered layout ran
/// for it (empty: they agree, modulo the normalisations). `start` is the
/// environment the scripts started with.
pub fn compare(input: &InputRank, ran: &Ran, start: &BTreeMap<String, String>) -> Vec<Diff> {
    let mut diffs = Vec::new();
    let argv = &ran.served.argv;
    if argv.first().map(String::as_str) != Some("serve") {
        diffs.push(diff(
            "vllm",
            format!("ours runs `vllm {argv:?}`, expected `vllm serve`"),
        ));
        return diffs;
    }
    if argv.get(1) != Some(&input.model) {
        diffs.push(diff(
            format!("model `{}`", input.model),
            format!(
                "model: the input serves `{}`, ours `{}`",
                input.model,
                argv.get(1).map_or("", String::as_str)
            ),
        ));
    }
    let mut want = option_map(&input.options, "the input", &mut diffs);
    let mut got = option_map(&our_options(&argv[2..]), "ours", &mut diffs);
    if want.contains_key("--headless") && got.contains_key("--headless") {
        for f in HEADLESS_IGNORES {
            want.remove(*f);
            got.remove(*f);
        }
    }
    for (flag, w) in &want {
        let Some(g) = got.get(flag) else {
            if !is_default(flag, w.as_deref()) {
                diffs.push(diff(
                    format!("`{flag}"),
                    format!(
                        "`{flag}{}`: the input passes it, ours does not",
                        w.as_ref().map_or(String::new(), |v| format!(" {v}"))
                    ),
                ));
            }
            continue;
        };
        match (w, g) {
            (Some(w), Some(g)) if is_json(w) => {
                let (wj, gj) = (
                    serde_json::from_str::<Value>(w),
                    serde_json::from_str::<Value>(g),
                );
                let about = format!("`{flag}");
                match (wj, gj) {
                    (Ok(mut wj), Ok(gj)) => {
                        if flag == "--kv-transfer-config" {
                            // A KV pool's MultiConnector: its PD connector
                            // carries the kv port and engine id.
                            const PD: &str = "/kv_connector_extra_config/connectors/0";
                            let multi = wj["kv_connector"] == "MultiConnector";
                            let g_pd = if multi {
                                gj.pointer(PD).cloned()
                            } else {
                                Some(gj.clone())
                            };
                            let w_pd = if multi {
                                wj.pointer_mut(PD)
                            } else {
                                Some(&mut wj)
                            };
                            if let (Some(w_pd), Some(g_pd)) = (w_pd, g_pd) {
                                normalise_engine_id(w_pd, &g_pd, ran, &mut diffs);
                                normalise_kv_port(w_pd, &g_pd);
                            }
                        }
                        if wj != gj {
                            diffs.push(diff(
                                about,
                                format!("`{flag}`: the input passes {wj}, ours {gj}"),
                            ));
                        }
                    }
                    (Err(e), _) => {
                        diffs.push(diff(about, format!("`{flag}`: the input's JSON: {e}")))
                    }
                    (_, Err(e)) => diffs.push(diff(about, format!("`{flag}`: our JSON: {e}"))),
                }
            }
            (w, g) if w != g => diffs.push(diff(
                format!("`{flag}"),
                format!(
                    "`{flag}`: the input passes {}, ours {}",
                    show(w.as_deref()),
                    show(g.as_deref())
                ),
            )),
            _ => {}
        }
    }
    for (flag, g) in &got {
        if !want.contains_key(flag) && !is_default(flag, g.as_deref()) {
            diffs.push(diff(
                format!("`{flag}"),
                format!(
                    "`{flag}{}`: ours passes it, the input does not",
                    g.as_ref().map_or(String::new(), |v| format!(" {v}"))
                ),
            ));
        }
    }
    compare_env(input, ran, start, &mut diffs);
    diffs
}

pub fn compare_env(
    input: &InputRank,
    ran: &Ran,
    start: &BTreeMap<String, String>,
    diffs: &mut Vec<Diff>,
) {
    let env = &ran.served.env;
    let theirs: BTreeMap<&str, &str> = input
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    for (k, v) in &theirs {
        let want = prepend_onto_nothing(k, v, start).unwrap_or_else(|| expand(v, start));
        let about = format!("env `{k}");
        match env.get(*k) {
            None => diffs.push(diff(
                about,
                format!("env `{k}={v}`: the input sets it, ours does not"),
            )),
            Some(g) if *g != want => diffs.push(diff(
                about,
                format!("env `{k}`: the input sets `{want}` (written `{v}`), ours `{g}`"),
            )),
            Some(_) => {}
        }
    }
    for (k, g) in env {
        let k = k.as_str();
        let inherited = start.get(k) == Some(g);
        if theirs.contains_key(k)
            || inherited
            || HARNESS_ENV.contains(&k)
            || DERIVED_ENV.contains(&k)
        {
            continue;
        }
        diffs.push(diff(
            format!("env `{k}"),
            format!("env `{k}={g}`: ours sets it, the input does not"),
        ));
    }
    if let Some(devices) = &ran.devices {
        let got = env.get("ASCEND_RT_VISIBLE_DEVICES");
        if got != Some(devices) {
            diffs.push(diff(
                "env `ASCEND_RT_VISIBLE_DEVICES",
                format!(
                    "env `ASCEND_RT_VISIBLE_DEVICES`: the launcher gives `{devices}`, ours `{}`",
                    got.map_or("", String::as_str)
                ),
            ));
        }
    }
    if let Some(id) = &ran.engine_id
        && env.get("ENGINE_ID") != Some(id)
    {
        diffs.push(diff(
            "env `ENGINE_ID",
            format!(
                "env `ENGINE_ID`: run.sh exports `{id}`, ours {:?}",
                env.get("ENGINE_ID")
            ),
        ));
    }
}

pub fn show(v: Option<&str>) -> String {
    v.map_or("no value".to_owned(), |v| format!("`{v}`"))
}

/// Normalisation 12: `kv_port` as a number or a numeric string (vLLM's
/// `KVTransferConfig.kv_port` is an `int`; pydantic reads `"30000"` as
/// 30000).
pub fn normalise_kv_port(want: &mut Value, got: &Value) {
    let (Some(w), Some(g)) = (want.as_object_mut(), got.as_object()) else {
        return;
    };
    let number = |v: &Value| -> Option<u64> {
        v.as_u64()
            .or_else(|| v.as_str().and_then(|s| s.parse::<u64>().ok()))
    };
    if let (Some(wp), Some(gp)) = (w.get("kv_port"), g.get("kv_port"))
        && number(wp).is_some()
        && number(wp) == number(gp)
    {
        let gp = gp.clone();
        w.insert("kv_port".into(), gp);
    }
}

/// Normalisation 3: an `engine_id` the input leaves out is pd-dsl's
/// derived one, which must be the `ENGINE_ID` run.sh exports.
pub fn normalise_engine_id(want: &mut Value, got: &Value, ran: &Ran, diffs: &mut Vec<Diff>) {
    let (Some(w), Some(g)) = (want.as_object_mut(), got.as_object()) else {
        return;
    };
    if w.contains_key("engine_id") {
        return;
    }
    if let Some(id) = g.get("engine_id") {
        if id.as_str() != ran.engine_id.as_deref() {
            diffs.push(diff(
                "`--kv-transfer-config",
                format!(
                    "`--kv-transfer-config`: ours passes `engine_id` {id}, run.sh exports {:?}",
                    ran.engine_id
                ),
            ));
        }
        w.insert("engine_id".into(), id.clone());
    }
}
