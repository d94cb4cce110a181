//! Text fields and names: the layout's name, paths, served name, env and flag names, dates, and free text that ends up in scripts (no control characters, no template placeholders).

use crate::check::Cx;
use crate::rules::Rule;
use crate::site::Spanned;
use crate::spec::{Json, LayoutSpec};

declare_rules! {
    /// Name not `family/variant` in lowercase.
    NameFormat = "name_format", Hard, "layout names are `family/variant` in `[a-z0-9._-]`";
    /// Path not absolute or with unsafe characters.
    PathFormat = "path_format", Hard, "paths are absolute and free of shell and control characters";
    /// Served name not a plain token.
    ServedNameFormat = "served_name_format", Hard, "served model names are `[A-Za-z0-9._-]`";
    /// Text with control characters.
    TextFormat = "text_format", Hard, "text fields hold no control characters";
    /// Date not `YYYY-MM-DD`.
    DateFormat = "date_format", Hard, "dates are `YYYY-MM-DD`";
}

pub(crate) fn has_control(s: &str) -> bool {
    s.chars().any(|c| c.is_control() && c != '\t')
}

pub(crate) fn text_ok(cx: &mut Cx, s: &Spanned<String>, field: &str) {
    if has_control(&s.value) {
        cx.report(
            Rule::TextFormat,
            s.site,
            field,
            format!(
                "found {:?}, expected text without control characters: generated docs and scripts must show exactly what was written",
                s.value
            ),
        );
    }
}

pub(crate) fn is_valid_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| s.get(r).and_then(|t| t.parse::<u32>().ok());
    match (num(0..4), num(5..7), num(8..10)) {
        (Some(_), Some(m), Some(d)) => (1..=12).contains(&m) && (1..=31).contains(&d),
        _ => false,
    }
}

/// Characters a path may contain: no whitespace, quotes, `$`, backticks,
/// `~` or other shell syntax, so it is also safe to read in docs and logs.
/// Every such path is a bare shell word (the renderer's quoting leaves it as
/// is), so it reads the same inside `"${VAR:-…}"` and in `'…'`.
pub fn is_safe_path(s: &str) -> bool {
    s.starts_with('/')
        && s.len() > 1
        && s.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '/' | '.' | '_' | '-' | '+' | '@' | '=' | ',' | ':')
        })
}

/// The run-time placeholders of the role templates' `kv_transfer_config`
/// (`render::scripts`); user text in that JSON must not contain them.
pub const TEMPLATE_PLACEHOLDERS: [&str; 2] = ["@KV_PORT@", "@ENGINE_ID@"];

/// The first template placeholder in a key or anywhere in a JSON value.
pub(crate) fn find_placeholder(key: &str, v: &Json) -> Option<&'static str> {
    let hit = |s: &str| TEMPLATE_PLACEHOLDERS.into_iter().find(|p| s.contains(p));
    hit(key).or_else(|| match v {
        Json::String(s) => hit(s),
        Json::Array(a) => a.iter().find_map(|x| find_placeholder("", x)),
        Json::Object(o) => o.iter().find_map(|(k, x)| find_placeholder(k, x)),
        _ => None,
    })
}

/// The first key or string with a control character in a JSON value.
pub(crate) fn json_control_text<'a>(key: &'a str, v: &'a Json) -> Option<&'a str> {
    if has_control(key) {
        return Some(key);
    }
    match v {
        Json::String(s) if has_control(s) => Some(s),
        Json::Array(a) => a.iter().find_map(|x| json_control_text("", x)),
        Json::Object(o) => o.iter().find_map(|(k, x)| json_control_text(k, x)),
        _ => None,
    }
}

pub(crate) fn is_layout_name(s: &str) -> bool {
    let part = |p: &str| {
        !p.is_empty()
            && p.chars()
                .next()
                .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            && p.chars().all(|c| {
                c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-')
            })
    };
    match s.split_once('/') {
        Some((a, b)) => part(a) && part(b),
        None => false,
    }
}

/// A POSIX shell name (`[A-Za-z_][A-Za-z0-9_]*`, what `export` takes):
/// lowercase is legal and conventional for `http_proxy` and friends, which
/// curl and Python read only in lowercase. A lowercase spelling of a
/// variable the image reads upper-case is `dead_env_toggle`'s business.
pub(crate) fn is_env_name(s: &str) -> bool {
    let mut it = s.chars();
    it.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && it.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `--kebab-case`, optionally with dotted keys into a JSON option
/// (`--attention-config.indexer_kv_dtype`: vLLM's `FlexibleArgumentParser`
/// merges `--json-arg.key value` into the JSON argument, vllm
/// `vllm/utils/argparse_utils.py` @v0.23.0 L389-416; the keys are passed
/// as written), the last key optionally ending in one `+`, which appends
/// to a list (`--compilation-config.custom_ops+ a,b`: the same function
/// drops the `+` and splits the value at commas, at every pinned vLLM).
pub(crate) fn is_flag(s: &str) -> bool {
    let s = match s.strip_suffix('+') {
        Some(rest) if rest.contains('.') => rest,
        _ => s,
    };
    let mut parts = s.split('.');
    let head = parts.next().unwrap_or_default();
    let kebab = head.strip_prefix("--").is_some_and(|rest| {
        !rest.is_empty()
            && rest.split('-').all(|w| {
                !w.is_empty()
                    && w.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            })
    });
    kebab
        && parts.all(|k| {
            !k.is_empty()
                && k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
}

pub(crate) fn check_texts(spec: &LayoutSpec, cx: &mut Cx) {
    if !is_layout_name(&spec.name.value) {
        cx.report(
            Rule::NameFormat,
            spec.name.site,
            "name",
            format!(
                "found {:?}, expected `family/variant` in lowercase `[a-z0-9._-]`: the name becomes a directory and a CLI argument",
                spec.name.value
            ),
        );
    }
    if let Some(d) = &spec.provenance.derived_from
        && !is_layout_name(&d.value)
    {
        cx.report(
            Rule::NameFormat,
            d.site,
            "provenance.derived_from",
            format!(
                "found {:?}, expected a layout name `family/variant`: it links to that layout",
                d.value
            ),
        );
    }
    if let Some(p) = &spec.model_path
        && !is_safe_path(&p.value)
    {
        cx.report(
                Rule::PathFormat,
                p.site,
                "model_path",
                format!(
                    "found {:?}, expected an absolute path of `[A-Za-z0-9/._+@=,:-]`: it is passed to `vllm serve` on every node",
                    p.value
                ),
            );
    }
    if let Some(n) = &spec.served_model_name {
        let ok = !n.value.is_empty()
            && n.value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        if !ok {
            cx.report(
                Rule::ServedNameFormat,
                n.site,
                "served_model_name",
                format!("found {:?}, expected `[A-Za-z0-9._-]+`: clients send it as the `model` of every request", n.value),
            );
        }
    }
    if !is_valid_date(&spec.provenance.recorded.value) {
        cx.report(
            Rule::DateFormat,
            spec.provenance.recorded.site,
            "provenance.recorded",
            format!(
                "found {:?}, expected a date `YYYY-MM-DD`: the catalog sorts and prints it",
                spec.provenance.recorded.value
            ),
        );
    }
    for (i, s) in spec.summary.iter().enumerate() {
        text_ok(cx, &Spanned::bare(s.clone()), &format!("summary[{i}]"));
    }
    for (i, s) in spec.provenance.sources.iter().enumerate() {
        text_ok(cx, s, &format!("provenance.sources[{i}]"));
    }
    for (i, s) in spec.provenance.refresh.iter().enumerate() {
        text_ok(cx, s, &format!("provenance.refresh[{i}]"));
    }
    for (i, d) in spec.deviations.iter().enumerate() {
        text_ok(cx, &d.what, &format!("deviations[{i}].what"));
        text_ok(cx, &d.why, &format!("deviations[{i}].why"));
    }
    if let Some(w) = &spec.workload {
        text_ok(cx, w, "workload");
    }
    for (i, f) in spec.figures.iter().enumerate() {
        text_ok(cx, &f.metric, &format!("figures[{i}].metric"));
        text_ok(cx, &f.value, &format!("figures[{i}].value"));
        text_ok(cx, &f.context, &format!("figures[{i}].context"));
    }
    if let Some(b) = &spec.bench
        && let Some(r) = &b.request_rate
    {
        let ok = r.value == "inf"
            || r.value
                .parse::<f64>()
                .is_ok_and(|x| x > 0.0 && x.is_finite());
        if !ok {
            cx.report(
                    Rule::TextFormat,
                    r.site,
                    "bench.request_rate",
                    format!("found {:?}, expected a positive number or `inf`: it is passed to `vllm bench serve --request-rate`", r.value),
                );
        }
    }
}

#[cfg(test)]
mod flag_tests {
    use super::is_flag;

    #[test]
    fn flags_are_kebab_with_dotted_keys_and_a_list_append() {
        for ok in [
            "--max-num-seqs",
            "--attention-config.indexer_kv_dtype",
            "--compilation-config.pass_config.fuse_norm_quant",
            "--compilation-config.custom_ops+",
        ] {
            assert!(is_flag(ok), "{ok}");
        }
        for bad in [
            "--max_num_seqs",
            "-max-num-seqs",
            "--Max-num-seqs",
            "--max-num-seqs+",
            "--compilation-config.custom_ops++",
            "--compilation-config.+",
            "--compilation-config.a+.b",
            "--compilation-config.",
        ] {
            assert!(!is_flag(bad), "{bad}");
        }
    }
}
