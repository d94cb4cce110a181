//! `vllm serve`'s flags at one vLLM version, from the generated table
//! `upstream/facts/vllm/<version>.json` ([`crate::facts`]; nothing here is
//! typed by hand), parsed the way vLLM's `FlexibleArgumentParser` does
//! (`vllm/utils/argparse_utils.py`, `parse_args`): `_` and `-` are
//! interchangeable between `--` and the first `.`, `--flag=value` works,
//! `--no-NAME` exists only for a `BooleanOptionalAction` (negatable) flag,
//! aliases (`-tp`) are the table's, `-O3`/`-O=3`/`-O 3` mean
//! `--optimization-level 3`, and JSON flags take dotted sub-keys
//! (`--compilation-config.cudagraph_mode FULL`, `--x.key+ a,b` for a list).
//! Anything else is refused naming the flag and the vLLM version. Stricter
//! than argparse in one respect: an unambiguous prefix of a long flag
//! (argparse's `allow_abbrev`) is refused too, since a generated script
//! spells every flag in full.

use crate::facts::{self, ServeFlag};
use serde_json::{Map, Value as Json};
use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

/// How a flag consumes argv (the table's `kind`).
pub use pd_dsl::upstream::FlagKind as Kind;

/// The flags of one vLLM version, indexed by every spelling.
#[derive(Debug)]
pub struct Flags {
    /// The vLLM version.
    pub version: String,
    flags: Vec<ServeFlag>,
    /// `--name`, `--no-name`, `-tp`, … → (index into `flags`, negated).
    index: HashMap<String, (usize, bool)>,
}

impl Flags {
    /// Builds the index of a parsed table.
    pub fn new(version: &str, flags: Vec<ServeFlag>) -> Flags {
        let mut index = HashMap::new();
        for (i, f) in flags.iter().enumerate() {
            let mut longs = vec![f.name.clone()];
            for a in &f.aliases {
                match a.strip_prefix("--") {
                    Some(long) => longs.push(long.to_owned()),
                    None if a.starts_with('-') => {
                        index.insert(a.clone(), (i, false));
                    }
                    None => longs.push(a.clone()),
                }
            }
            for long in longs {
                // argparse's BooleanOptionalAction adds `--no-X` for every
                // `--X` spelling.
                if f.negatable {
                    index.insert(format!("--no-{long}"), (i, true));
                }
                index.insert(format!("--{long}"), (i, false));
            }
        }
        Flags {
            version: version.to_owned(),
            flags,
            index,
        }
    }

    /// Parses a table's JSON text (`upstream/facts/vllm/<v>.json`).
    pub fn from_json(text: &str) -> Result<Flags, String> {
        let f: facts::VllmRelease =
            serde_json::from_str(text).map_err(|e| format!("a vllm fact table: {e}"))?;
        Ok(Flags::new(&f.version, f.serve_flags))
    }

    /// The table of vLLM `version` (embedded, parsed once).
    pub fn of_version(version: &str) -> Result<&'static Flags, String> {
        static TABLES: LazyLock<BTreeMap<&'static str, Result<Flags, String>>> =
            LazyLock::new(|| {
                facts::vllm_versions()
                    .into_iter()
                    .map(|v| {
                        let t =
                            facts::vllm(v).map(|f| Flags::new(&f.version, f.serve_flags.clone()));
                        (v, t)
                    })
                    .collect()
            });
        match TABLES.get(version) {
            Some(Ok(t)) => Ok(t),
            Some(Err(e)) => Err(e.clone()),
            None => Err(facts::vllm(version).err().unwrap_or_default()),
        }
    }

    /// The table of the vLLM version image `tag` ships.
    pub fn of_image(tag: &str) -> Result<&'static Flags, String> {
        let v = facts::vllm_version_of_image(tag)?;
        Flags::of_version(&v).map_err(|e| format!("image `{tag}` ships vLLM {v}: {e}"))
    }

    /// Every flag, sorted by name.
    pub fn flags(&self) -> &[ServeFlag] {
        &self.flags
    }

    /// The flag spelled `spelling` (`--max-model-len`, `--no-x`, `-tp`) and
    /// whether that spelling negates it.
    pub fn lookup(&self, spelling: &str) -> Option<(&ServeFlag, bool)> {
        self.index
            .get(spelling)
            .and_then(|&(i, neg)| self.flags.get(i).map(|f| (f, neg)))
    }
}

/// Parsed `vllm serve` argv.
#[derive(Clone, Debug, Default)]
pub struct ServeArgs {
    /// The positional model path (or `--model`).
    pub model: Option<String>,
    /// Value flags: every occurrence, in order (the last wins).
    pub values: BTreeMap<String, Vec<String>>,
    /// Switches.
    pub switches: BTreeMap<String, bool>,
    /// JSON flags, parsed; dotted sub-keys merged in.
    pub json: BTreeMap<String, Json>,
}

impl ServeArgs {
    /// Last value of a value flag (the first of a `Many` flag's last group is not kept separately).
    pub fn value(&self, name: &str) -> Option<&str> {
        self.values
            .get(name)
            .and_then(|v| v.last())
            .map(String::as_str)
    }

    /// Whether a switch is on.
    pub fn switch(&self, name: &str) -> bool {
        self.switches.get(name).copied().unwrap_or(false)
    }

    /// An integer flag, `Ok(None)` when absent.
    pub fn int(&self, name: &str) -> Result<Option<i64>, String> {
        match self.value(name) {
            None => Ok(None),
            Some(v) => v
                .parse()
                .map(Some)
                .map_err(|_| format!("argument --{name}: invalid int value: '{v}'")),
        }
    }

    /// A port flag.
    pub fn port(&self, name: &str) -> Result<Option<u16>, String> {
        match self.int(name)? {
            None => Ok(None),
            Some(p) => u16::try_from(p)
                .map(Some)
                .map_err(|_| format!("argument --{name}: port out of range: {p}")),
        }
    }

    /// A JSON flag's value.
    pub fn json(&self, name: &str) -> Option<&Json> {
        self.json.get(name)
    }
}

fn looks_like_flag(s: &str) -> bool {
    s.starts_with('-')
        && s.len() > 1
        && !s[1..].starts_with(|c: char| c.is_ascii_digit() || c == '.')
}

fn parse_json_value(flag: &str, text: &str) -> Result<Json, String> {
    serde_json::from_str(text).map_err(|e| format!("argument --{flag}: invalid JSON ({e}): {text}"))
}

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
    args: &[String],
    i: &mut usize,
    inline: &Option<String>,
    name: &str,
) -> Result<String, String> {
    if let Some(v) = inline {
        return Ok(v.clone());
    }
    match args.get(*i) {
        Some(v) if !looks_like_flag(v) => {
            *i += 1;
            Ok(v.clone())
        }
        _ => Err(format!("argument --{name}: expected one argument")),
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
        if !looks_like_flag(raw) {
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
            Kind::Value => {
                let v = take(&args, &mut i, &inline, &name)?;
                out.values.entry(name).or_default().push(v);
            }
            Kind::Many => {
                let first = take(&args, &mut i, &inline, &name)?;
                let mut group = vec![first];
                if inline.take().is_none() {
                    while let Some(v) = args.get(i).filter(|v| !looks_like_flag(v)) {
                        group.push(v.clone());
                        i += 1;
                    }
                }
                let slot = out.values.entry(name).or_default();
                slot.clear();
                slot.extend(group);
            }
            Kind::Json => {
                let text = take(&args, &mut i, &inline, &name)?;
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
                    None => *slot = parse_json_value(&name, &text)?,
                }
            }
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
    let want = spelling.trim_start_matches('-');
    let best = flags
        .flags()
        .iter()
        .map(|f| (edit_distance(want, &f.name), &f.name))
        .filter(|(d, n)| *d <= 2.max(n.len() / 6))
        .min();
    best.map_or_else(String::new, |(_, n)| format!("; did you mean --{n}?"))
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
#[allow(clippy::panic)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn argv(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// A small table in the schema of `upstream/facts/vllm/<v>.json`, for
    /// the parser's forms (the embedded tables are tested below).
    const TABLE: &str = r#"{
      "package": "vllm", "version": "9.9.9",
      "serve_flags": [
        {"name": "compilation-config", "kind": "json", "aliases": ["-cc"], "negatable": false, "source": "t"},
        {"name": "enable-prefix-caching", "kind": "switch", "aliases": [], "negatable": true, "source": "t"},
        {"name": "enforce-eager", "kind": "switch", "aliases": [], "negatable": false, "source": "t"},
        {"name": "optimization-level", "kind": "value", "aliases": [], "negatable": false, "source": "t"},
        {"name": "port", "kind": "value", "aliases": [], "negatable": false, "source": "t"},
        {"name": "seed", "kind": "value", "aliases": [], "negatable": false, "source": "t"},
        {"name": "served-model-name", "kind": "many", "aliases": [], "negatable": false, "source": "t"},
        {"name": "tensor-parallel-size", "kind": "value", "aliases": ["-tp"], "negatable": false, "source": "t"}
      ],
      "speculative_methods": [{"name": "mtp", "needs_model": false, "source": "t"}]
    }"#;

    fn table() -> Flags {
        Flags::from_json(TABLE).unwrap_or_else(|e| Flags::new(&e, Vec::new()))
    }

    #[test]
    fn forms_and_errors() {
        let t = table();
        let a = parse(
            &t,
            &argv(&[
                "/m",
                "-tp=4",
                "--port=9",
                "-O3",
                "--compilation-config.cudagraph_mode",
                "FULL",
                "-cc.sizes+",
                "1,2",
                "--served_model_name",
                "a",
                "b",
                "--seed",
                "-1",
                "--no-enable-prefix-caching",
            ]),
        );
        let Ok(a) = a else {
            return assert!(a.is_ok(), "{a:?}");
        };
        assert_eq!(a.value("tensor-parallel-size"), Some("4"));
        assert_eq!(a.value("port"), Some("9"));
        assert_eq!(a.value("seed"), Some("-1"));
        // vLLM: `-O3` is `--optimization-level 3`.
        assert_eq!(a.value("optimization-level"), Some("3"));
        assert_eq!(a.values.get("served-model-name").map(Vec::len), Some(2));
        assert_eq!(
            a.json("compilation-config"),
            Some(&serde_json::json!({"cudagraph_mode": "FULL", "sizes": ["1", "2"]}))
        );
        assert!(!a.switch("enable-prefix-caching"));
        assert!(a.switches.contains_key("enable-prefix-caching"));
        assert_eq!(a.model.as_deref(), Some("/m"));
        let err = |args: &[&str]| parse(&t, &argv(args)).err().unwrap_or_default();
        assert_eq!(
            err(&["/m", "--nope"]),
            "unrecognized argument --nope: vLLM 9.9.9 has no such `vllm serve` flag"
        );
        assert!(err(&["/m", "--prot", "1"]).ends_with("; did you mean --port?"));
        // Not negatable: no `--no-` form.
        assert!(err(&["/m", "--no-enforce-eager"]).contains("--no-enforce-eager: vLLM 9.9.9"));
        assert!(err(&["/m", "--no-port"]).contains("--no-port"));
        assert!(err(&["/m", "--port.x", "1"]).contains("takes no dotted sub-keys"));
        assert!(err(&["/m", "--enforce-eager=1"]).contains("ignored explicit argument"));
        assert!(err(&["/m", "--port"]).contains("expected one argument"));
        assert!(err(&["/m", "/n"]).contains("unrecognized arguments: /n"));
        assert!(err(&["/m", "--compilation-config", "{bad"]).contains("invalid JSON"));
    }

    /// A value for a flag of `kind`, as argv words.
    fn value_of(kind: Kind) -> Vec<&'static str> {
        match kind {
            Kind::Switch => vec![],
            Kind::Value => vec!["7"],
            Kind::Many => vec!["a", "b"],
            Kind::Json => vec![r#"{"a": 1}"#],
        }
    }

    fn recorded(a: &ServeArgs, f: &ServeFlag, negated: bool) -> bool {
        match f.kind {
            Kind::Switch => a.switches.get(&f.name) == Some(&!negated),
            Kind::Value => a.value(&f.name) == Some("7"),
            Kind::Many => a.values.get(&f.name).is_some_and(|v| v == &["a", "b"]),
            Kind::Json => a.json(&f.name) == Some(&serde_json::json!({"a": 1})),
        }
    }

    /// Every embedded version's table; fails (never skips) when the build
    /// has none.
    fn embedded() -> Vec<&'static Flags> {
        let versions = facts::vllm_versions();
        assert!(
            !versions.is_empty(),
            "no upstream/facts/vllm/*.json embedded: generate them with scripts/upstream/facts.py"
        );
        versions
            .into_iter()
            .map(|v| Flags::of_version(v).unwrap_or_else(|e| panic!("{e}")))
            .collect()
    }

    /// Every flag of every embedded version, in every spelling vLLM
    /// accepts for it, is accepted and lands under its name.
    #[test]
    fn every_flag_of_a_version_is_accepted_in_every_spelling() {
        for t in embedded() {
            assert!(!t.flags().is_empty(), "vLLM {} has no flags", t.version);
            for f in t.flags() {
                let value = value_of(f.kind);
                let mut spellings: Vec<(Vec<String>, bool)> = Vec::new();
                let mut names = vec![format!("--{}", f.name)];
                names.extend(f.aliases.iter().map(|a| {
                    if a.starts_with('-') {
                        a.clone()
                    } else {
                        format!("--{a}")
                    }
                }));
                for n in &names {
                    let with = |flag: String| {
                        let mut v = vec![flag];
                        v.extend(value.iter().map(|s| s.to_string()));
                        v
                    };
                    spellings.push((with(n.clone()), false));
                    if let Some(long) = n.strip_prefix("--") {
                        spellings.push((with(format!("--{}", long.replace('-', "_"))), false));
                        if f.negatable {
                            spellings.push((vec![format!("--no-{long}")], true));
                        }
                    }
                    if value.len() == 1 {
                        spellings.push((vec![format!("{n}={}", value[0])], false));
                    }
                }
                for (words, negated) in spellings {
                    let mut args = vec!["/m".to_string()];
                    args.extend(words.iter().cloned());
                    match parse(t, &args) {
                        Ok(a) => assert!(
                            recorded(&a, f, negated),
                            "vLLM {}: {words:?} parsed but not as `{}`: {a:?}",
                            t.version,
                            f.name
                        ),
                        Err(e) => panic!("vLLM {}: {words:?} refused: {e}", t.version),
                    }
                }
                if f.kind == Kind::Json {
                    let a = parse(t, &argv(&["/m", &format!("--{}.k.j", f.name), "3"]));
                    assert!(
                        a.as_ref().is_ok_and(
                            |a| a.json(&f.name) == Some(&serde_json::json!({"k": {"j": 3}}))
                        ),
                        "vLLM {}: dotted --{}.k.j: {a:?}",
                        t.version,
                        f.name
                    );
                }
            }
        }
    }

    /// A spelling one embedded version accepts and another does not is
    /// refused by the other, naming the flag and that version.
    #[test]
    fn a_flag_of_another_version_is_refused() {
        let tables = embedded();
        let spellings = |t: &Flags| -> BTreeSet<String> { t.index.keys().cloned().collect() };
        let mut differences = 0;
        for a in &tables {
            let own = spellings(a);
            for b in &tables {
                for s in spellings(b).difference(&own) {
                    let Some((f, _)) = b.lookup(s) else { continue };
                    let mut args = vec!["/m".to_string(), s.clone()];
                    if !s.starts_with("--no-") {
                        args.extend(value_of(f.kind).iter().map(|v| v.to_string()));
                    }
                    let e = parse(a, &args).err().unwrap_or_else(|| {
                        panic!(
                            "vLLM {} accepted {s} (a flag of vLLM {} only)",
                            a.version, b.version
                        )
                    });
                    assert!(
                        e.contains(s.as_str()) && e.contains(&format!("vLLM {}", a.version)),
                        "vLLM {}: {s}: {e}",
                        a.version
                    );
                    differences += 1;
                }
            }
        }
        if tables.len() > 1 {
            assert!(
                differences > 0,
                "every embedded vLLM version has the same flags"
            );
        }
    }

    /// `--profiler-config` is a `vllm serve` flag from vLLM 0.21 on, and the
    /// flags the catalog's scripts use exist at the images' versions.
    #[test]
    fn the_images_versions_accept_the_catalogs_flags() {
        for tag in ["v0.21.0rc1", "v0.23.0"] {
            let t = Flags::of_image(tag).unwrap_or_else(|e| panic!("{e}"));
            let a = parse(t, &argv(&["/m", "--profiler-config", "{}"]));
            assert!(a.is_ok(), "{tag} (vLLM {}): {a:?}", t.version);
            let values = [
                "host",
                "port",
                "data-parallel-size",
                "data-parallel-rank",
                "data-parallel-address",
                "data-parallel-rpc-port",
                "tensor-parallel-size",
                "seed",
                "max-model-len",
                "max-num-batched-tokens",
                "max-num-seqs",
                "gpu-memory-utilization",
                "block-size",
                "quantization",
                "tokenizer-mode",
                "tool-call-parser",
                "reasoning-parser",
                "safetensors-load-strategy",
            ];
            for f in values {
                let a = parse(
                    t,
                    &argv(&["/m", &format!("--{}", f.replace('-', "_")), "7"]),
                );
                assert!(a.is_ok_and(|a| a.value(f) == Some("7")), "{tag}: {f}");
            }
            for f in [
                "enable-expert-parallel",
                "trust-remote-code",
                "async-scheduling",
                "enforce-eager",
                "enable-auto-tool-choice",
                "no-enable-prefix-caching",
                "no-disable-hybrid-kv-cache-manager",
            ] {
                assert!(
                    parse(t, &argv(&["/m", &format!("--{f}")])).is_ok(),
                    "{tag}: {f}"
                );
            }
            for f in [
                "compilation-config",
                "speculative-config",
                "additional-config",
                "kv-transfer-config",
                "model-loader-extra-config",
            ] {
                let a = parse(t, &argv(&["/m", &format!("--{f}"), r#"{"a": 1}"#]));
                assert!(
                    a.is_ok_and(|a| a.json(f) == Some(&serde_json::json!({"a": 1}))),
                    "{tag}: {f}"
                );
            }
        }
        assert!(Flags::of_image("v9.9.9").is_err_and(|e| e.contains("not in the image table")));
    }
}
