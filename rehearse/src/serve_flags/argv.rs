//! A `vllm serve` argv parsed against one version's flags, as vLLM's
//! `FlexibleArgumentParser` does: the rewrite of each word, the forms of each
//! kind of flag, and the suggestion for a flag the version lacks.

use super::{Flags, Kind, ServeArgs};
use pd_dsl::upstream::{reads_as_option, value_word_refusal};
use serde_json::{Map, Value as Json};

/// A dotted sub-key's value: JSON when it parses, else the string.
fn loose(text: &str) -> Json {
    serde_json::from_str(text).unwrap_or_else(|_| Json::String(text.to_string()))
}

fn set_dotted(root: &mut Json, path: &[&str], v: Json) {
    if !root.is_object() {
        *root = Json::Object(Map::new());
    }
    let Some((first, rest)) = path.split_first() else {
        *root = v;
        return;
    };
    if let Json::Object(m) = root {
        let slot = m.entry(first.to_string()).or_insert(Json::Null);
        if rest.is_empty() {
            *slot = v;
        } else {
            set_dotted(slot, rest, v);
        }
    }
}

fn take(
    flags: &Flags,
    args: &[String],
    i: &mut usize,
    inline: &Option<String>,
    name: &str,
) -> Result<String, String> {
    if let Some(v) = inline {
        return Ok(v.clone());
    }
    match args
        .get(*i)
        .map(|v| (v, value_word_refusal(flags.flags(), v)))
    {
        Some((v, None)) => {
            *i += 1;
            Ok(v.clone())
        }
        Some((_, Some(why))) => Err(format!("argument --{name}: expected one argument ({why})")),
        None => Err(format!("argument --{name}: expected one argument")),
    }
}

/// vLLM's rewrite of one argv word before argparse sees it
/// (`FlexibleArgumentParser.parse_args`): `_` → `-` between `--` and the
/// first `.`, and the `-O` shorthands as `--optimization-level`.
fn normalise(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    for (i, arg) in args.iter().enumerate() {
        if let Some(rest) = arg.strip_prefix("--") {
            let (key, value) = match rest.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (rest, None),
            };
            let (head, tail) = match key.split_once('.') {
                Some((h, t)) => (h, Some(t)),
                None => (key, None),
            };
            let mut w = format!("--{}", head.replace('_', "-"));
            if let Some(t) = tail {
                w.push('.');
                w.push_str(t);
            }
            if let Some(v) = value {
                w.push('=');
                w.push_str(v);
            }
            out.push(w);
        } else if let Some(level) = arg.strip_prefix("-O").filter(|l| !l.is_empty()) {
            out.push("--optimization-level".into());
            out.push(level.strip_prefix('=').unwrap_or(level).to_owned());
        } else if arg == "-O"
            && args
                .get(i + 1)
                .is_some_and(|n| ["0", "1", "2", "3"].contains(&n.as_str()))
        {
            out.push("--optimization-level".into());
        } else {
            out.push(arg.clone());
        }
    }
    out
}

/// Parses the argv after `serve` against the flags of one vLLM version.
/// `Err` carries the message printed before exit 2.
pub fn parse(flags: &Flags, args: &[String]) -> Result<ServeArgs, String> {
    let args = normalise(args);
    let v = &flags.version;
    let mut out = ServeArgs::default();
    let mut i = 0;
    while i < args.len() {
        let raw = args[i].as_str();
        i += 1;
        if !reads_as_option(flags.flags(), raw) {
            if out.model.is_some() {
                return Err(format!("unrecognized arguments: {raw}"));
            }
            out.model = Some(raw.to_string());
            continue;
        }
        // `--flag=value`.
        let (flag_part, mut inline) = match raw.split_once('=') {
            Some((f, v)) => (f, Some(v.to_string())),
            None => (raw, None),
        };
        // `--json-flag.key[.key…][+]` (also after a short alias: `-cc.mode`).
        let (spelling, dotted) = match flag_part.split_once('.') {
            Some((f, path)) => (f, Some(path.to_string())),
            None => (flag_part, None),
        };
        let Some((flag, negated)) = flags.lookup(spelling) else {
            return Err(format!(
                "unrecognized argument {flag_part}: vLLM {v} has no such `vllm serve` flag{}",
                suggestion(flags, spelling)
            ));
        };
        let name = flag.name.clone();
        // vllm/utils/argparse_utils.py `FlexibleArgumentParser.parse_args`
        // reads the YAML file `--config` names while parsing.
        if name == "config" {
            let file = inline
                .clone()
                .or_else(|| args.get(i).cloned())
                .unwrap_or_default();
            if !(file.ends_with(".yaml") || file.ends_with(".yml")) {
                return Err(format!(
                    "ValueError: Config file must be of a yaml/yml type. {file} supplied"
                ));
            }
            if !std::path::Path::new(&file).is_file() {
                return Err(format!(
                    "FileNotFoundError: [Errno 2] No such file or directory: '{file}'"
                ));
            }
            return Err(format!(
                "--config {file}: the stand-in does not read config files (pd-dsl layouts never pass one: rule serve_flag_accepted)"
            ));
        }
        if dotted.is_some() && flag.kind != Kind::Json {
            return Err(format!(
                "unrecognized argument {flag_part}: `--{name}` of vLLM {v} takes no dotted sub-keys (it is not a JSON/config flag)"
            ));
        }
        match flag.kind {
            Kind::Switch => {
                if inline.is_some() {
                    return Err(format!("argument {flag_part}: ignored explicit argument"));
                }
                out.switches.insert(name, !negated);
            }
            Kind::Value
                if flag.value_optional
                    && inline.is_none()
                    && args
                        .get(i)
                        .is_none_or(|w| reads_as_option(flags.flags(), w)) =>
            {
                // `nargs="?"`: bare, it takes its `const`.
                out.values.entry(name).or_default().push(String::new());
            }
            Kind::Value => {
                let v = take(flags, &args, &mut i, &inline, &name)?;
                if let Some(why) = flags.value_refusal(flag, &v) {
                    return Err(format!("argument --{name}: {why}"));
                }
                out.values.entry(name).or_default().push(v);
            }
            Kind::Many => {
                let first = take(flags, &args, &mut i, &inline, &name)?;
                let mut group = vec![first];
                if inline.take().is_none() {
                    while let Some(v) = args
                        .get(i)
                        .filter(|v| value_word_refusal(flags.flags(), v).is_none())
                    {
                        group.push(v.clone());
                        i += 1;
                    }
                }
                if let Some(why) = group.iter().find_map(|w| flags.value_refusal(flag, w)) {
                    return Err(format!("argument --{name}: {why}"));
                }
                let slot = out.values.entry(name).or_default();
                slot.clear();
                slot.extend(group);
            }
            Kind::Json => {
                let text = take(flags, &args, &mut i, &inline, &name)?;
                let slot = out.json.entry(name.clone()).or_insert(Json::Null);
                match dotted {
                    Some(path) => {
                        let (path, list) = match path.strip_suffix('+') {
                            Some(p) => (p.to_owned(), true),
                            None => (path, false),
                        };
                        let value = if list {
                            Json::Array(text.split(',').map(|s| Json::String(s.into())).collect())
                        } else {
                            loose(&text)
                        };
                        let parts: Vec<&str> = path.split('.').collect();
                        set_dotted(slot, &parts, value);
                    }
                    // `union_dict_and_str` keeps a word that is not
                    // `{...}` as text (the option's `text_unless`).
                    None if !flag.is_json_word(&text)? => *slot = Json::String(text),
                    None => {
                        if let Some(why) = flag.json_word_refusal(&text) {
                            return Err(format!("argument --{name}: invalid JSON: {why}"));
                        }
                        // What only vLLM's leniencies read (`NaN`, `80m`)
                        // is kept as written.
                        *slot = serde_json::from_str(&text).unwrap_or(Json::String(text));
                    }
                }
            }
        }
    }
    // A dataclass option's object, dotted keys gathered: pydantic validates
    // it as the option's `type=` and refuses keys the class lacks.
    for (name, value) in &out.json {
        if let (Json::Object(map), Some((flag, _))) = (value, flags.lookup(&format!("--{name}")))
            && let Some(why) = flag
                .keys
                .as_ref()
                .and_then(|k| k.refusal(map.keys().map(String::as_str)))
        {
            return Err(format!("argument --{name}: {why}"));
        }
    }
    if out.model.is_none()
        && let Some(m) = out.value("model")
    {
        out.model = Some(m.to_string());
    }
    Ok(out)
}

/// `; did you mean --x?` for a near spelling of the same version.
fn suggestion(flags: &Flags, spelling: &str) -> String {
    pd_dsl::upstream::nearest_flag(flags.flags(), spelling)
        .map_or_else(String::new, |n| format!("; did you mean --{n}?"))
}
