//! `catalog upstream diff`: what changed between two releases' facts.

use super::*;

/// What changed from release `a` to release `b`, one line per change, in
/// the format of `scripts/upstream/facts.py diff` (a title line `what:`
/// followed by `  + x` / `  - x` lines, or `what: OLD -> NEW` with JSON
/// values): the vLLM and its `vllm serve` flags and speculative methods,
/// the `additional_config` keys and sub-keys, the env reads, the KV
/// connectors, each image's contract and tag suffix, the proxies' and
/// launcher's flags, and the e2e config format.
pub fn diff_releases(a: &'static Release, b: &'static Release) -> Vec<String> {
    let mut out = vec![format!("vllm-ascend {} -> {}", a.version, b.version)];
    scalar(&mut out, "vllm version", &a.vllm.version, &b.vllm.version);
    scalar(
        &mut out,
        "version module",
        &a.version_module,
        &b.version_module,
    );
    match (vllm(&a.vllm.version), vllm(&b.vllm.version)) {
        (Ok(va), Ok(vb)) => {
            let fa: BTreeMap<&str, &ServeFlag> = va
                .serve_flags
                .iter()
                .map(|f| (f.name.as_str(), f))
                .collect();
            let fb: BTreeMap<&str, &ServeFlag> = vb
                .serve_flags
                .iter()
                .map(|f| (f.name.as_str(), f))
                .collect();
            set_diff(
                &mut out,
                &format!("serve flags (vllm {} -> {})", va.version, vb.version),
                fa.keys().copied(),
                fb.keys().copied(),
            );
            let shape = |f: &ServeFlag| serde_json::json!({"kind": f.kind, "aliases": f.aliases, "negatable": f.negatable});
            let changed: Vec<String> = fa
                .iter()
                .filter_map(|(n, x)| {
                    let y = fb.get(n)?;
                    (shape(x) != shape(y)).then(|| format!("  ~ {n}: {} -> {}", shape(x), shape(y)))
                })
                .collect();
            if !changed.is_empty() {
                out.push("serve flags changed:".into());
                out.extend(changed);
            }
            let mut choices: Vec<String> = Vec::new();
            for (n, x) in &fa {
                let Some(y) = fb.get(n) else { continue };
                let values = |c: Option<&Choices>| -> BTreeSet<String> {
                    match c {
                        Some(Choices::Read { values, .. }) => {
                            values.iter().map(ToString::to_string).collect()
                        }
                        _ => BTreeSet::new(),
                    }
                };
                let (va_, vb_) = (values(x.choices.as_ref()), values(y.choices.as_ref()));
                let (sa, sb) = (
                    choices_summary(x.choices.as_ref()),
                    choices_summary(y.choices.as_ref()),
                );
                // Two unread lists differ only in where they were found.
                if sa == sb && va_ == vb_ {
                    continue;
                }
                choices.push(format!("  ~ {n}: {sa} -> {sb}"));
                choices.extend(vb_.difference(&va_).map(|v| format!("    + {v}")));
                choices.extend(va_.difference(&vb_).map(|v| format!("    - {v}")));
            }
            if !choices.is_empty() {
                out.push(format!(
                    "serve flag choices (vllm {} -> {}):",
                    va.version, vb.version
                ));
                out.extend(choices);
            }
            set_diff(
                &mut out,
                &format!(
                    "speculative methods (vllm {} -> {})",
                    va.version, vb.version
                ),
                va.speculative_methods.iter().map(|m| m.name.as_str()),
                vb.speculative_methods.iter().map(|m| m.name.as_str()),
            );
        }
        (ra, rb) => {
            let missing: Vec<&str> = [
                (&a.vllm.version, ra.is_err()),
                (&b.vllm.version, rb.is_err()),
            ]
            .into_iter()
            .filter(|(_, bad)| *bad)
            .map(|(v, _)| v.as_str())
            .collect();
            out.push(format!(
                "serve flags: no vllm table for {}",
                missing.join(", ")
            ));
        }
    }
    let ka: BTreeMap<&str, &ConfigKeyFact> = a
        .additional_config
        .iter()
        .map(|k| (k.key.as_str(), k))
        .collect();
    let kb: BTreeMap<&str, &ConfigKeyFact> = b
        .additional_config
        .iter()
        .map(|k| (k.key.as_str(), k))
        .collect();
    set_diff(
        &mut out,
        "additional_config keys",
        ka.keys().copied(),
        kb.keys().copied(),
    );
    for (k, x) in &ka {
        let Some(y) = kb.get(k) else { continue };
        let subs = |c: &'static ConfigKeyFact| c.sub_keys.iter().flatten().map(String::as_str);
        set_diff(
            &mut out,
            &format!("additional_config.{k} sub-keys"),
            subs(x),
            subs(y),
        );
        scalar(
            &mut out,
            &format!("additional_config.{k} strict"),
            &x.strict,
            &y.strict,
        );
    }
    let names = |v: &'static [Named]| v.iter().map(|e| e.name.as_str());
    set_diff(&mut out, "env reads", names(&a.env), names(&b.env));
    set_diff(
        &mut out,
        "kv connectors",
        names(&a.kv_connectors),
        names(&b.kv_connectors),
    );
    set_diff(
        &mut out,
        "serve flag choices widened by the platform",
        a.parser_choices_widened.iter().map(|w| w.flag.as_str()),
        b.parser_choices_widened.iter().map(|w| w.flag.as_str()),
    );
    let keys: BTreeSet<&str> = a
        .images
        .keys()
        .chain(b.images.keys())
        .map(String::as_str)
        .collect();
    for key in keys {
        let (ia, ib) = (
            a.images.get(key).and_then(Option::as_ref),
            b.images.get(key).and_then(Option::as_ref),
        );
        let (ia, ib) = match (ia, ib) {
            (Some(x), Some(y)) => (x, y),
            (None, Some(y)) => {
                out.push(format!("image {key}: added ({})", y.dockerfile));
                continue;
            }
            (Some(x), None) => {
                out.push(format!("image {key}: removed ({})", x.dockerfile));
                continue;
            }
            (None, None) => continue,
        };
        scalar(&mut out, &format!("image {key} FROM"), &ia.from, &ib.from);
        let strs = |v: &'static [String]| v.iter().map(String::as_str);
        set_diff(
            &mut out,
            &format!("image {key} apt packages"),
            strs(&ia.apt_packages),
            strs(&ib.apt_packages),
        );
        for (t, has) in &ia.tools {
            let theirs = ib.tools.get(t).copied().flatten();
            if *has != theirs {
                out.push(format!(
                    "image {key} tool {t}: {} -> {}",
                    json(has),
                    json(&theirs)
                ));
            }
        }
        let env = |m: &'static BTreeMap<String, String>| m.iter().map(|(k, v)| format!("{k}={v}"));
        set_diff(
            &mut out,
            &format!("image {key} ENV"),
            env(&ia.env),
            env(&ib.env),
        );
        set_diff(
            &mut out,
            &format!("image {key} ~/.bashrc lines"),
            strs(&ia.bashrc),
            strs(&ib.bashrc),
        );
        set_diff(
            &mut out,
            &format!("image {key} set_env scripts"),
            strs(&ia.set_env_scripts),
            strs(&ib.set_env_scripts),
        );
        scalar(
            &mut out,
            &format!("image {key} WORKDIR"),
            &ia.workdir,
            &ib.workdir,
        );
        scalar(&mut out, &format!("image {key} CMD"), &ia.cmd, &ib.cmd);
        scalar(
            &mut out,
            &format!("image {key} mooncake"),
            &ia.mooncake,
            &ib.mooncake,
        );
    }
    for key in ["950dt", "a2", "a3"] {
        scalar(
            &mut out,
            &format!("image {key} tag suffix"),
            &a.image_suffixes.get(key),
            &b.image_suffixes.get(key),
        );
    }
    let scripts: BTreeSet<&str> = a
        .scripts
        .keys()
        .chain(b.scripts.keys())
        .map(String::as_str)
        .collect();
    for name in scripts {
        let (sa, sb) = match (a.scripts.get(name), b.scripts.get(name)) {
            (Some(x), Some(y)) => (x, y),
            (None, Some(_)) => {
                out.push(format!("script {name}: added"));
                continue;
            }
            (Some(_), None) => {
                out.push(format!("script {name}: removed"));
                continue;
            }
            (None, None) => continue,
        };
        let fa: BTreeMap<&str, &FlagFact> = sa.flags.iter().map(|f| (f.name.as_str(), f)).collect();
        let fb: BTreeMap<&str, &FlagFact> = sb.flags.iter().map(|f| (f.name.as_str(), f)).collect();
        set_diff(
            &mut out,
            &format!("script {name} flags"),
            fa.keys().copied(),
            fb.keys().copied(),
        );
        for (n, x) in &fa {
            if let Some(y) = fb.get(n)
                && x != y
            {
                out.push(format!("script {name} {n}: {} -> {}", json(x), json(y)));
            }
        }
    }
    let (ea, eb) = (&a.e2e, &b.e2e);
    let strs = |v: &'static [String]| v.iter().map(String::as_str);
    set_diff(
        &mut out,
        "e2e config dirs",
        strs(&ea.config_dirs),
        strs(&eb.config_dirs),
    );
    scalar(&mut out, "e2e multi-node configs", &ea.configs, &eb.configs);
    set_diff(
        &mut out,
        "e2e config root keys",
        strs(&ea.root_keys),
        strs(&eb.root_keys),
    );
    set_diff(
        &mut out,
        "e2e runner files",
        strs(&ea.runner),
        strs(&eb.runner),
    );
    startup_facts(&mut out, a, b);
    if out.len() == 1 {
        out.push("no change".into());
    }
    out
}

/// The top-level facts [`diff_releases`] shows in their own sections.
const DIFFED_ABOVE: &[&str] = &[
    "package",
    "version",
    "vllm",
    "version_module",
    "additional_config",
    "env",
    "kv_connectors",
    "images",
    "image_suffixes",
    "scripts",
    "e2e",
];

/// The start-up checks and the other facts: every top-level fact not shown
/// above, compared without its `source` lines, which move every release.
fn startup_facts(out: &mut Vec<String>, a: &Release, b: &Release) {
    let raw = |r: &Release| {
        crate::tables::IMAGES
            .iter()
            .find(|i| i.tag.strip_prefix('v') == Some(r.version.as_str()))
            .and_then(|i| serde_json::from_str::<serde_json::Value>(i.facts_json).ok())
            .unwrap_or(serde_json::Value::Null)
    };
    let (ja, jb) = (raw(a), raw(b));
    let keys: BTreeSet<&str> = [&ja, &jb]
        .into_iter()
        .filter_map(serde_json::Value::as_object)
        .flat_map(|o| o.keys().map(String::as_str))
        .filter(|k| !DIFFED_ABOVE.contains(k))
        .collect();
    let null = serde_json::Value::Null;
    for key in keys {
        let (x, y) = (
            sourceless(ja.get(key).unwrap_or(&null)),
            sourceless(jb.get(key).unwrap_or(&null)),
        );
        scalar(out, &format!("start-up fact {key}"), &x, &y);
    }
}

/// `v` without its `source` and `*_source` entries (`path:line`).
fn sourceless(v: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| *k != "source" && !k.ends_with("_source"))
                .map(|(k, x)| (k.clone(), sourceless(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(sourceless).collect()),
        x => x.clone(),
    }
}

fn json<T: Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

fn scalar<T: Serialize + PartialEq + ?Sized>(out: &mut Vec<String>, title: &str, a: &T, b: &T) {
    if a != b {
        out.push(format!("{title}: {} -> {}", json(a), json(b)));
    }
}

/// One option's choices in a line of the diff (as `facts.py diff` says it).
fn choices_summary(c: Option<&Choices>) -> String {
    match c {
        None => "none".into(),
        Some(Choices::Unread { .. }) => "unread".into(),
        Some(Choices::Read { values }) => format!("{} values", values.len()),
    }
}

fn set_diff<S: AsRef<str> + Ord>(
    out: &mut Vec<String>,
    title: &str,
    a: impl Iterator<Item = S>,
    b: impl Iterator<Item = S>,
) {
    let a: BTreeSet<S> = a.collect();
    let b: BTreeSet<S> = b.collect();
    let added: Vec<&S> = b.difference(&a).collect();
    let removed: Vec<&S> = a.difference(&b).collect();
    if added.is_empty() && removed.is_empty() {
        return;
    }
    out.push(format!("{title}:"));
    out.extend(added.iter().map(|x| format!("  + {}", x.as_ref())));
    out.extend(removed.iter().map(|x| format!("  - {}", x.as_ref())));
}
