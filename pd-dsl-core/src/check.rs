//! The one rule engine. The `layout!` macro and the runtime loader both call
//! [`check`]; nothing else decides whether a layout is valid.

pub mod pool;

use crate::capacity;
use crate::dims;
use crate::layout::{Acknowledged, Layout, Proxy, Serve, SocketKind};
use crate::placement::{self, GroupShape, PlacementInput};
use crate::rules::{Diagnostic, Diagnostics, Rule, Severity, did_you_mean};
use crate::site::{Site, Spanned};
use crate::spec::{
    ConnectorKind, EnvValue, GraphMode, HardwareSpec, Json, LayoutSpec, Role, ServeSpec,
    Verification,
};
use crate::tables::{self, Hardware, Image, Model, RecomputeRoles, Version};
use std::collections::{BTreeMap, BTreeSet};

/// Checks a layout and derives everything from it. Returns every violation
/// that is not acknowledged, in the order written.
pub fn check(spec: &LayoutSpec) -> Result<Layout, Diagnostics> {
    let mut cx = Cx::default();
    let out = derive(spec, &mut cx);
    let acknowledged = settle_allows(spec, &mut cx);
    if !cx.errors.is_empty() {
        cx.errors.0.sort_by_key(|d| d.site);
        return Err(cx.errors);
    }
    match out {
        Some(mut layout) => {
            layout.acknowledged = acknowledged;
            Ok(layout)
        }
        // `derive` only returns None after recording an error.
        None => Err(cx.errors),
    }
}

/// Every finding of the rules on `spec`, hard or convention, before any
/// `allow` is settled (hard ones first, each group in the checker's order).
/// What a newer image changes for a layout compares these.
pub fn findings(spec: &LayoutSpec) -> Vec<Diagnostic> {
    let mut cx = Cx::default();
    let _ = derive(spec, &mut cx);
    let mut out = cx.errors.0;
    out.extend(cx.conventions);
    out
}

/// Every rule `spec` violates, hard or convention, before any `allow` is
/// settled (sorted, deduplicated). The deployment status asks it whether a
/// later image clears an acknowledged rule.
pub fn violations(spec: &LayoutSpec) -> Vec<Rule> {
    let mut rules: Vec<Rule> = findings(spec).into_iter().map(|d| d.rule).collect();
    rules.sort_unstable();
    rules.dedup();
    rules
}

#[derive(Default)]
struct Cx {
    /// Violations of convention rules, to settle against `allow`s.
    conventions: Vec<Diagnostic>,
    /// Final errors.
    errors: Diagnostics,
}

impl Cx {
    fn report(
        &mut self,
        rule: Rule,
        site: Site,
        field: impl Into<String>,
        message: impl Into<String>,
    ) {
        let d = Diagnostic {
            rule,
            site,
            field: field.into(),
            message: message.into(),
        };
        match rule.severity() {
            Severity::Hard => {
                if !self.errors.0.contains(&d) {
                    self.errors.0.push(d);
                }
            }
            Severity::Convention => {
                if !self.conventions.contains(&d) {
                    self.conventions.push(d);
                }
            }
        }
    }
}

fn settle_allows(spec: &LayoutSpec, cx: &mut Cx) -> Vec<Acknowledged> {
    let mut acknowledged = Vec::new();
    let mut seen: BTreeSet<Rule> = BTreeSet::new();
    for (i, a) in spec.allow.iter().enumerate() {
        let field = format!("allow[{i}]");
        text_ok(cx, &a.reason, &format!("{field}.reason"));
        if a.reason.value.trim().is_empty() {
            cx.report(
                Rule::TextFormat,
                a.reason.site,
                format!("{field}.reason"),
                "found an empty reason, expected why the layout breaks the rule: an acknowledged deviation is printed with its reason",
            );
        }
        let Some(rule) = Rule::from_name(&a.rule.value) else {
            let hint = did_you_mean(&a.rule.value, Rule::ALL.iter().map(|r| r.name()));
            cx.report(
                Rule::AllowUnknownRule,
                a.rule.site,
                field,
                format!(
                    "found `allow({})`, expected the name of a rule: no rule has that name{hint}",
                    a.rule.value
                ),
            );
            continue;
        };
        if rule.severity() == Severity::Hard {
            cx.report(
                Rule::AllowHardRule,
                a.rule.site,
                field,
                format!(
                    "found `allow({})`, expected a convention rule: `{}` is a hard rule ({}) and cannot be acknowledged",
                    rule.name(),
                    rule.name(),
                    rule.summary()
                ),
            );
            continue;
        }
        if !seen.insert(rule) {
            cx.report(
                Rule::AllowDuplicate,
                a.rule.site,
                field,
                format!(
                    "found a second `allow({})`, expected one per rule: give all reasons in one",
                    rule.name()
                ),
            );
            continue;
        }
        let findings: Vec<String> = cx
            .conventions
            .iter()
            .filter(|d| d.rule == rule)
            .map(|d| d.message.clone())
            .collect();
        if findings.is_empty() {
            cx.report(
                Rule::AllowUnused,
                a.rule.site,
                field,
                format!(
                    "found `allow({})` but the layout does not break it, expected no `allow`: stale excuses hide real deviations",
                    rule.name()
                ),
            );
            continue;
        }
        acknowledged.push(Acknowledged {
            rule,
            reason: a.reason.value.clone(),
            findings,
        });
    }
    let unacknowledged: Vec<Diagnostic> = cx
        .conventions
        .iter()
        .filter(|d| !seen.contains(&d.rule))
        .map(|d| Diagnostic {
            message: format!(
                "{}; acknowledge it with `allow({}, \"reason\")` if intended",
                d.message,
                d.rule.name()
            ),
            ..d.clone()
        })
        .collect();
    cx.errors.0.extend(unacknowledged);
    acknowledged
}

// ---------------------------------------------------------------------------
// Text fields
// ---------------------------------------------------------------------------

fn has_control(s: &str) -> bool {
    s.chars().any(|c| c.is_control() && c != '\t')
}

fn text_ok(cx: &mut Cx, s: &Spanned<String>, field: &str) {
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

fn is_valid_date(s: &str) -> bool {
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
fn find_placeholder(key: &str, v: &Json) -> Option<&'static str> {
    let hit = |s: &str| TEMPLATE_PLACEHOLDERS.into_iter().find(|p| s.contains(p));
    hit(key).or_else(|| match v {
        Json::String(s) => hit(s),
        Json::Array(a) => a.iter().find_map(|x| find_placeholder("", x)),
        Json::Object(o) => o.iter().find_map(|(k, x)| find_placeholder(k, x)),
        _ => None,
    })
}

/// The first key or string with a control character in a JSON value.
fn json_control_text<'a>(key: &'a str, v: &'a Json) -> Option<&'a str> {
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

fn is_layout_name(s: &str) -> bool {
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
fn is_env_name(s: &str) -> bool {
    let mut it = s.chars();
    it.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && it.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `--kebab-case`, optionally with dotted keys into a JSON option
/// (`--attention-config.indexer_kv_dtype`: vLLM's `FlexibleArgumentParser`
/// merges `--json-arg.key value` into the JSON argument, vllm
/// `vllm/utils/argparse_utils.py` @v0.23.0 L389-416; the keys are passed
/// as written).
fn is_flag(s: &str) -> bool {
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

fn check_texts(spec: &LayoutSpec, cx: &mut Cx) {
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

// ---------------------------------------------------------------------------
// Tables
// ---------------------------------------------------------------------------

fn lookup_tables(
    spec: &LayoutSpec,
    cx: &mut Cx,
) -> (
    Option<&'static Model>,
    Option<&'static Hardware>,
    Option<&'static Image>,
) {
    let model = tables::model(&spec.model.value);
    if model.is_none() {
        let hint = model_hint(&spec.model.value);
        cx.report(
            Rule::UnknownModel,
            spec.model.site,
            "model",
            format!(
                "found model `{}`, expected {}: models are a closed table{hint}",
                spec.model.value,
                model_choices(&spec.model.value)
            ),
        );
    }
    let hw_of = |cx: &mut Cx, id: &Spanned<String>, field: &str| {
        let hw = tables::hardware(&id.value);
        if hw.is_none() {
            let hint = did_you_mean(&id.value, tables::HARDWARE.iter().map(|h| h.id));
            cx.report(
                Rule::UnknownHardware,
                id.site,
                field,
                format!(
                    "found hardware `{}`, expected one of {}: hardware is a closed table{hint}",
                    id.value,
                    list(tables::HARDWARE.iter().map(|h| h.id))
                ),
            );
        }
        hw
    };
    let hardware = match &spec.hardware {
        HardwareSpec::All(id) => hw_of(cx, id, "hardware"),
        HardwareSpec::PerRole(map) => {
            let mut first: Option<(&'static Hardware, Role)> = None;
            let mut result = None;
            for (role, id) in map {
                let Some(hw) = hw_of(cx, id, &format!("hardware.{role}")) else {
                    continue;
                };
                match first {
                    None => {
                        first = Some((hw, *role));
                        result = Some(hw);
                    }
                    Some((f, frole)) if f.family != hw.family => cx.report(
                        Rule::HardwareHomogeneous,
                        id.site,
                        format!("hardware.{role}"),
                        format!(
                            "found {role} on {} and {frole} on {}, expected one hardware family: KV transfer between families is not supported (disaggregated_prefill.md limitations)",
                            hw.product, f.product
                        ),
                    ),
                    Some((f, frole)) if f.npus_per_node != hw.npus_per_node => cx.report(
                        Rule::HardwareHomogeneous,
                        id.site,
                        format!("hardware.{role}"),
                        format!(
                            "found {role} on {} and {frole} on {}, expected one node kind: placement and the kv port table assume one NPU count per node",
                            hw.product, f.product
                        ),
                    ),
                    Some(_) => {}
                }
            }
            result
        }
    };
    let image = tables::image(&spec.image.value);
    if image.is_none() {
        let hint = did_you_mean(&spec.image.value, tables::IMAGES.iter().map(|i| i.tag));
        cx.report(
            Rule::UnknownImage,
            spec.image.site,
            "image",
            format!(
                "found image `{}`, expected one of {}: per-version rules need the image's facts{hint}",
                spec.image.value,
                list(tables::IMAGES.iter().map(|i| i.tag))
            ),
        );
    }
    if let (Some(hw), Some(img)) = (hardware, image)
        && img.reference(hw).is_none()
    {
        cx.report(
                Rule::ImageHardwareUnavailable,
                spec.image.site,
                "image",
                format!(
                    "found image `{}` on {}, expected an image built for {}: {} ships none for it (installation.md, image workflow)",
                    img.tag, hw.product, hw.product, img.tag
                ),
            );
    }
    (model, hardware, image)
}

/// "did you mean" for a model id. Ids are long (`family_version_quant_...`)
/// and authors often write a prefix (`deepseek_v4_flash`), so each id is
/// compared on its first `word.len()` characters, then on the whole id.
fn model_hint(word: &str) -> String {
    let n = word.chars().count();
    let limit = (n / 3).max(2);
    tables::MODELS
        .iter()
        .map(|m| {
            let head: String = m.id.chars().take(n).collect();
            (
                crate::rules::edit_distance(word, &head),
                crate::rules::edit_distance(word, m.id),
                m.id,
            )
        })
        .filter(|(d, _, _)| *d <= limit)
        .min()
        .map(|(_, _, id)| format!("; did you mean `{id}`?"))
        .unwrap_or_default()
}

/// The model ids to offer for an unknown `word`: those sharing its longest
/// `_`-separated prefix (`deepseek_v5_flash` -> every `deepseek_v...`), or
/// one id per family when no family matches, so the list stays readable as
/// the table grows.
fn model_choices(word: &str) -> String {
    let ids = || tables::MODELS.iter().map(|m| m.id);
    let tokens: Vec<&str> = word.split('_').collect();
    for n in (1..=tokens.len()).rev() {
        let prefix = tokens[..n].join("_");
        let same: Vec<&str> = ids()
            .filter(|id| *id == prefix || id.starts_with(&format!("{prefix}_")))
            .collect();
        if !same.is_empty() {
            return format!("one of {}", list(same.into_iter()));
        }
    }
    let mut families: Vec<String> = Vec::new();
    for id in ids() {
        let f = format!("{}_*", id.split('_').next().unwrap_or(id));
        if !families.contains(&f) {
            families.push(f);
        }
    }
    format!(
        "a model-table id of the families {}",
        list(families.iter().map(String::as_str))
    )
}

fn list<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

// ---------------------------------------------------------------------------
// Topology
// ---------------------------------------------------------------------------

fn u32_of(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// Checks shapes; returns the placeable groups when every shape is sound.
fn check_topology(
    spec: &LayoutSpec,
    hw: Option<&Hardware>,
    cx: &mut Cx,
) -> Option<Vec<GroupShape>> {
    let mut ok = true;
    let roles: BTreeSet<Role> = spec.topology.iter().map(|g| g.role.value).collect();
    let pd = roles.contains(&Role::Prefill) || roles.contains(&Role::Decode);
    if spec.topology.is_empty() {
        cx.report(
            Rule::TopologyRoles,
            spec.topology_site,
            "topology",
            "found no engines, expected `prefill` and `decode` groups or a `mixed` group: a layout deploys at least one engine",
        );
        ok = false;
    } else if pd && roles.contains(&Role::Mixed) {
        let g = spec.topology.iter().find(|g| g.role.value == Role::Mixed);
        cx.report(
            Rule::TopologyRoles,
            g.map_or(spec.topology_site, |g| g.role.site),
            "topology",
            "found `mixed` next to `prefill`/`decode`, expected a PD layout or a mixed one: a mixed engine has no kv role",
        );
        ok = false;
    } else if pd {
        for (need, other) in [(Role::Prefill, Role::Decode), (Role::Decode, Role::Prefill)] {
            if !roles.contains(&need) {
                let g = spec.topology.iter().find(|g| g.role.value == other);
                cx.report(
                    Rule::TopologyRoles,
                    g.map_or(spec.topology_site, |g| g.role.site),
                    "topology",
                    format!("found `{other}` engines without `{need}` engines, expected both: a PD layout needs a kv producer and a kv consumer"),
                );
                ok = false;
            }
        }
    }
    let mut shapes = Vec::new();
    let mut first_shape: BTreeMap<Role, (u64, u64, u64, usize)> = BTreeMap::new();
    for (i, g) in spec.topology.iter().enumerate() {
        let f = |s: &str| format!("topology[{i}].{s}");
        let mut good = true;
        let pcp_size = g.pcp.iter().map(|p| (p, "pcp"));
        for (v, name) in [(&g.count, "count"), (&g.dp, "dp"), (&g.tp, "tp")]
            .into_iter()
            .chain(pcp_size)
        {
            if v.value == 0 || v.value > 4096 {
                cx.report(
                    Rule::TopologySizes,
                    v.site,
                    f(name),
                    format!("found {name} {}, expected 1 to 4096: an engine has at least one rank of at least one NPU", v.value),
                );
                good = false;
            }
        }
        if let Some(r) = &g.ranks_per_node
            && (r.value == 0 || r.value > 4096)
        {
            cx.report(
                Rule::TopologySizes,
                r.site,
                f("ranks_per_node"),
                format!("found {} ranks per node, expected 1 to 4096: a node of an engine runs at least one rank", r.value),
            );
            good = false;
        }
        match first_shape.get(&g.role.value) {
            None => {
                first_shape.insert(g.role.value, (g.dp.value, g.tp.value, g.pcp(), i));
            }
            Some(&(dp, tp, pcp, j)) if (dp, tp, pcp) != (g.dp.value, g.tp.value, g.pcp()) => cx.report(
                Rule::RoleShapeUniform,
                g.shape_site,
                f("shape"),
                format!(
                    "found {} engines `{}` next to `{}` (topology[{j}]), expected one shape per role: `kv_connector_extra_config` describes one {} shape and every engine checks it against its own",
                    g.role.value,
                    g.shape(),
                    crate::spec::shape_text(dp, tp, pcp),
                    g.role.value
                ),
            ),
            Some(_) => {}
        }
        let Some(hw) = hw else {
            ok = false;
            continue;
        };
        if !good {
            ok = false;
            continue;
        }
        let n = u64::from(hw.npus_per_node);
        let (dp, tp, pcp) = (g.dp.value, g.tp.value, g.pcp());
        if tp > n || n % tp != 0 {
            cx.report(
                Rule::TpDividesNode,
                g.tp.site,
                f("tp"),
                format!(
                    "found `tp{tp}` on {} ({n} NPUs per node), expected a TP size dividing {n}: a TP group never spans nodes and ranks tile a node",
                    hw.product
                ),
            );
            ok = false;
            continue;
        }
        // A rank's NPUs: tp x pcp (vllm/config/parallel.py `world_size`).
        let width = tp * pcp;
        if let Some(p) = &g.pcp
            && (width > n || n % width != 0)
        {
            cx.report(
                Rule::TpDividesNode,
                p.site,
                f("pcp"),
                format!(
                    "found `tp{tp}pcp{pcp}` = {width} NPUs per rank on {} ({n} NPUs per node), expected tp x pcp dividing {n}: a rank's TP x PCP group never spans nodes and ranks tile a node",
                    hw.product
                ),
            );
            ok = false;
            continue;
        }
        let rank_text = if pcp > 1 {
            format!("TP{tp} x PCP{pcp}")
        } else {
            format!("TP{tp}")
        };
        let rpn = match &g.ranks_per_node {
            Some(r) => {
                if r.value * width > n {
                    cx.report(
                        Rule::NodeOversubscribed,
                        r.site,
                        f("ranks_per_node"),
                        format!(
                            "found {} ranks of {rank_text} per node = {} NPUs, expected at most {n} on {}: ranks would share NPUs",
                            r.value,
                            r.value * width,
                            hw.product
                        ),
                    );
                    ok = false;
                    continue;
                }
                if r.value > dp || dp % r.value != 0 {
                    cx.report(
                        Rule::DpRanksTile,
                        r.site,
                        f("ranks_per_node"),
                        format!(
                            "found {} ranks per node for DP{dp}, expected a divisor of {dp}: every node of an engine runs the same number of ranks so the rank ranges tile `[0, {dp})`",
                            r.value
                        ),
                    );
                    ok = false;
                    continue;
                }
                r.value
            }
            None => {
                let npus = dp * width;
                if npus > n && npus % n != 0 {
                    cx.report(
                        Rule::EngineWholeNodes,
                        g.shape_site,
                        f("shape"),
                        format!(
                            "found `{}` = {npus} NPUs on {} ({n} per node), expected at most {n} or a multiple of {n}: an engine fits in one node or fills whole nodes (say `/ ranks` per node to spread it)",
                            g.shape(),
                            hw.product
                        ),
                    );
                    ok = false;
                    continue;
                }
                u64::from(placement::default_ranks_per_node(
                    u32_of(dp),
                    u32_of(width),
                    hw.npus_per_node,
                ))
            }
        };
        shapes.push(GroupShape {
            role: g.role.value,
            count: u32_of(g.count.value),
            dp: u32_of(dp),
            tp: u32_of(tp),
            pcp: u32_of(pcp),
            ranks_per_node: u32_of(rpn),
        });
    }
    if let (Some(p), Some(d)) = (
        first_shape.get(&Role::Prefill),
        first_shape.get(&Role::Decode),
    ) {
        let (ptp, dtp) = (p.1, d.1);
        if ptp > 0 && dtp > 0 && (ptp < dtp || ptp % dtp != 0) {
            let g = &spec.topology[d.3];
            cx.report(
                Rule::PrefillTpGeDecodeTp,
                g.tp.site,
                format!("topology[{}].tp", d.3),
                format!(
                    "found prefill TP{ptp} with decode TP{dtp}, expected decode TP to divide prefill TP: Mooncake V1/Hybrid raise when prefill TP < decode TP and assert `P_tp % D_tp == 0` (mooncake_connector.py L2055-2059)"
                ),
            );
            ok = false;
        }
    }
    ok.then_some(shapes)
}

// ---------------------------------------------------------------------------
// Connector, ports, engine ids
// ---------------------------------------------------------------------------

fn port_of(cx: &mut Cx, p: &Spanned<u64>, field: &str, what: &str) -> Option<u32> {
    if p.value == 0 || p.value > 65535 {
        cx.report(
            Rule::PortRange,
            p.site,
            field,
            format!(
                "found {what} {}, expected 1 to 65535: it is a TCP port",
                p.value
            ),
        );
        None
    } else {
        Some(u32_of(p.value))
    }
}

struct Wiring {
    input: PlacementInput,
    proxy: Option<Proxy>,
    dp_rpc: Option<u32>,
}

fn check_wiring(
    spec: &LayoutSpec,
    spec_model: Option<&Model>,
    shapes: Option<&[GroupShape]>,
    hw: Option<&Hardware>,
    image: Option<&Image>,
    cx: &mut Cx,
) -> Option<Wiring> {
    let mut ok = true;
    let pd = spec.topology.iter().any(|g| g.role.value != Role::Mixed);
    let count_of = |role: Role| -> usize {
        spec.topology
            .iter()
            .filter(|g| g.role.value == role)
            .map(|g| usize::try_from(g.count.value).unwrap_or(0))
            .sum()
    };
    let present: BTreeSet<Role> = spec.topology.iter().map(|g| g.role.value).collect();
    let (api, dp_rpc, role_ports, ports_ok) = check_port_bases(spec, &present, pd, shapes, cx);
    ok &= ports_ok;
    let mut input = PlacementInput {
        api_port: api.unwrap_or(0),
        dp_rpc_port: dp_rpc,
        role_ports,
        ..PlacementInput::default()
    };
    let mut proxy = None;
    match (&spec.connector, pd) {
        (None, true) => {
            cx.report(
                Rule::ConnectorRoleMismatch,
                spec.topology_site,
                "connector",
                "found a PD topology without `connector`, expected `connector: mooncake_v1 | mooncake_hybrid | mooncake_layerwise { ... }`: prefill and decode exchange KV through it",
            );
            ok = false;
        }
        (Some(c), false) => {
            cx.report(
                Rule::ConnectorRoleMismatch,
                c.kind.site,
                "connector",
                "found a `connector` in a mixed layout, expected none: a mixed engine keeps its KV local",
            );
            ok = false;
        }
        (Some(c), true) => {
            let kind = c.kind.value;
            input.connector = Some(kind);
            if let Some(img) = image
                && kind == ConnectorKind::MooncakeHybrid
                && !img.hybrid_connector()
            {
                cx.report(
                        Rule::ConnectorUnavailable,
                        c.kind.site,
                        "connector",
                        format!(
                            "found `mooncake_hybrid` on image `{}`, expected `mooncake_v1` or an image that registers `MooncakeHybridConnector` ({}, #9270)",
                            img.tag,
                            crate::upstream::describe(&tables::IMAGES.iter().filter(|i| i.hybrid_connector()).collect::<Vec<_>>())
                        ),
                    );
            }
            // #10342 (first in v0.22.1rc1): "the Mooncake connector supports
            // DeepSeek-V4 and hybrid KV"; before that only the Hybrid connector did.
            if let (Some(img), Some(m)) = (image, spec_model)
                && kind == ConnectorKind::MooncakeV1
                && m.hybrid_kv
                && !img.v1_hybrid_kv
            {
                cx.report(
                    Rule::ConnectorHybridKv,
                    c.kind.site,
                    "connector",
                    format!(
                        "found `mooncake_v1` carrying `{}` (hybrid KV) on image `{}`, expected `mooncake_hybrid` or an image from v0.22.1rc1: V1 supports DeepSeek-V4 hybrid KV from v0.22.1rc1 (#10342)",
                        m.weights, img.tag
                    ),
                );
            }
            for (role, ports, field) in [
                (Role::Prefill, &c.kv_port.prefill, "prefill"),
                (Role::Decode, &c.kv_port.decode, "decode"),
            ] {
                let n = count_of(role);
                if ports.is_empty() || (ports.len() != 1 && ports.len() != n) {
                    cx.report(
                        Rule::KvPortCount,
                        ports.get(n.min(ports.len().saturating_sub(1))).map_or(c.kind.site, |p| p.site),
                        format!("connector.kv_port.{field}"),
                        format!(
                            "found {} {field} kv ports for {n} {field} engines, expected one for all or one per engine: each engine needs a kv port",
                            ports.len()
                        ),
                    );
                    ok = false;
                }
                let mut values = Vec::new();
                for (i, p) in ports.iter().enumerate() {
                    match port_of(cx, p, &format!("connector.kv_port.{field}[{i}]"), "kv port") {
                        Some(v) => values.push(v),
                        None => ok = false,
                    }
                }
                match role {
                    Role::Prefill => input.kv_prefill = values,
                    _ => input.kv_decode = values,
                }
            }
            for (k, v) in &c.extra {
                match k.as_str() {
                    "prefill" | "decode" => {
                        cx.report(
                            Rule::ConnectorExtraDerived,
                            v.site,
                            format!("connector.extra.{k}"),
                            format!("found `{k}` in the connector extras, expected it left out: the `{k}` shape is derived from the topology so it always matches the engines"),
                        );
                        ok = false;
                    }
                    "ascend_local_comm_res_path" => {
                        if hw.is_some_and(|h| h.family != tables::HardwareFamily::Ascend950) {
                            cx.report(
                                Rule::CommResPathHardware,
                                v.site,
                                format!("connector.extra.{k}"),
                                format!(
                                    "found `ascend_local_comm_res_path` on {}, expected it only on Ascend 950DT: it loads `ub_endpoint_npu_<id>.json` files that exist only there (utils.py L536-571)",
                                    hw.map_or("", |h| h.product)
                                ),
                            );
                        }
                        let ok_path = matches!(&v.value, Json::String(s) if is_safe_path(s));
                        if !ok_path {
                            cx.report(
                                Rule::PathFormat,
                                v.site,
                                format!("connector.extra.{k}"),
                                format!(
                                    "found {}, expected an absolute directory path string of `[A-Za-z0-9/._+@=,:-]`: vllm-ascend loads `ub_endpoint_npu_<id>.json` from that directory",
                                    v.value
                                ),
                            );
                        }
                    }
                    _ => {}
                }
                if let Some(t) = json_control_text(k, &v.value) {
                    cx.report(
                        Rule::TextFormat,
                        v.site,
                        format!("connector.extra.{k}"),
                        format!("found {t:?} in the connector extras, expected text without control characters: generated docs and scripts must show exactly what was written"),
                    );
                }
                if let Some(p) = find_placeholder(k, &v.value) {
                    cx.report(
                        Rule::TextFormat,
                        v.site,
                        format!("connector.extra.{k}"),
                        format!("found `{p}` in the connector extras, expected text without it: the role templates fill `{p}` in at run time, so the value would be rewritten"),
                    );
                    ok = false;
                }
            }
            if let Some(pool) = &c.pool {
                ok &= pool::check_pool(pool, cx);
            }
            match &spec.proxy {
                None => {
                    cx.report(
                        Rule::ConnectorRoleMismatch,
                        c.kind.site,
                        "proxy",
                        "found a PD layout without `proxy`, expected `proxy: { port: N }`: clients reach prefill and decode through it",
                    );
                    ok = false;
                }
                Some(p) => {
                    let script = p.script.as_ref().map_or(kind.proxy_script(), |s| s.value);
                    if let Some(s) = &p.script
                        && s.value != kind.proxy_script()
                    {
                        cx.report(
                                Rule::ConnectorProxyPairing,
                                s.site,
                                "proxy.script",
                                format!(
                                    "found proxy `{}` with `{}`, expected `{}`: {} is {} and needs `{}` (multi-node doc L720-730)",
                                    s.value.as_str(),
                                    kind.as_str(),
                                    kind.proxy_script().as_str(),
                                    kind.kv_connector(),
                                    if kind == ConnectorKind::MooncakeLayerwise { "push mode" } else { "pull mode" },
                                    kind.proxy_script().file_name()
                                ),
                            );
                        ok = false;
                    }
                    match port_of(cx, &p.port, "proxy.port", "proxy port") {
                        Some(port) => proxy = Some(Proxy { port, script }),
                        None => ok = false,
                    }
                }
            }
            if let Some(ids) = &spec.engine_ids {
                let mut all: Vec<(Role, &Spanned<u64>, bool)> = Vec::new();
                for (role, list, field) in [
                    (Role::Prefill, &ids.prefill, "prefill"),
                    (Role::Decode, &ids.decode, "decode"),
                ] {
                    let n = count_of(role);
                    if list.len() != n {
                        cx.report(
                            Rule::EngineIdCount,
                            list.last()
                                .and_then(|l| l.ids().last())
                                .map_or(ids.site, |l| l.site),
                            format!("engine_ids.{field}"),
                            format!("found {} {field} engine ids for {n} {field} engines, expected {n}: every engine gets its own id (one, or one per node `[a, b]`)", list.len()),
                        );
                        ok = false;
                    }
                    all.extend(list.iter().flat_map(|v| {
                        let per_node = matches!(v, crate::spec::EngineId::PerNode(_));
                        v.ids().iter().map(move |id| (role, id, per_node))
                    }));
                }
                let mut seen: BTreeMap<u64, Role> = BTreeMap::new();
                for &(role, id, per_node) in &all {
                    if let Some(prev) = seen.get(&id.value) {
                        cx.report(
                            Rule::EngineIdUnique,
                            id.site,
                            format!("engine_ids.{role}"),
                            format!(
                                "found engine id {} on a {role} engine and a {prev} engine, expected unique ids: the docs ask for unique ids and releases before v0.12.0rc1 need them",
                                id.value
                            ),
                        );
                    } else {
                        seen.insert(id.value, role);
                    }
                    // The parity is the catalog's numbering of engines; ids
                    // given per node number nodes the way upstream's docs
                    // ask (one id per node of a multi-node engine) and are
                    // not held to it.
                    let even = id.value % 2 == 0;
                    if !per_node && (role == Role::Prefill) != even {
                        cx.report(
                            Rule::EngineIdParity,
                            id.site,
                            format!("engine_ids.{role}"),
                            format!(
                                "found {role} engine id {}, expected an {} id: the catalog's convention is prefill even (0, 2, 4), decode odd (1, 3, 5)",
                                id.value,
                                if role == Role::Prefill { "even" } else { "odd" }
                            ),
                        );
                    }
                }
                let values = |l: &[crate::spec::EngineId]| -> Vec<Vec<u64>> {
                    l.iter()
                        .map(|e| e.ids().iter().map(|v| v.value).collect())
                        .collect()
                };
                input.ids_prefill = Some(values(&ids.prefill));
                input.ids_decode = Some(values(&ids.decode));
            }
        }
        (None, false) => {
            if let Some(p) = &spec.proxy {
                cx.report(
                    Rule::ConnectorRoleMismatch,
                    p.port.site,
                    "proxy",
                    "found a `proxy` in a mixed layout, expected none: the PD proxy needs prefill and decode backends",
                );
                ok = false;
            }
            if let Some(ids) = &spec.engine_ids {
                cx.report(
                    Rule::EngineIdCount,
                    ids.site,
                    "engine_ids",
                    "found `engine_ids` in a mixed layout, expected none: engine ids belong to the kv connector",
                );
                ok = false;
            }
        }
    }
    (ok && api.is_some()).then_some(Wiring {
        input,
        proxy,
        dp_rpc,
    })
}

/// The API and DP RPC ports of every role: the common `ports: { api, dp_rpc }`
/// and the per-role blocks overriding them. Returns the layout's API and DP
/// RPC port (the common ones, else the first role's), the roles with their
/// own ports, and whether every engine has an API port in range.
fn check_port_bases(
    spec: &LayoutSpec,
    present: &BTreeSet<Role>,
    pd: bool,
    shapes: Option<&[GroupShape]>,
    cx: &mut Cx,
) -> (
    Option<u32>,
    Option<u32>,
    BTreeMap<Role, placement::RolePorts>,
    bool,
) {
    let ports = &spec.ports;
    let mut ok = true;
    let common_api = match &ports.api {
        Some(p) => {
            let v = port_of(cx, p, "ports.api", "API port");
            ok &= v.is_some();
            v
        }
        None => None,
    };
    let common_rpc = match &ports.dp_rpc {
        Some(p) => port_of(cx, p, "ports.dp_rpc", "DP RPC port"),
        None => None,
    };
    let mut role_ports = BTreeMap::new();
    for role in [Role::Prefill, Role::Decode] {
        let Some(b) = ports.role(role) else { continue };
        if !present.contains(&role) {
            cx.report(
                Rule::TopologyRoles,
                b.site,
                format!("ports.{role}"),
                format!("found `ports.{role}` but no `{role}` engines in the topology, expected per-role ports only for roles that run: they would be silently unused"),
            );
            continue;
        }
        let api = match &b.api {
            Some(p) => {
                let v = port_of(cx, p, &format!("ports.{role}.api"), "API port");
                ok &= v.is_some();
                v
            }
            None => common_api,
        };
        let dp_rpc = match &b.dp_rpc {
            Some(p) => port_of(cx, p, &format!("ports.{role}.dp_rpc"), "DP RPC port"),
            None => common_rpc,
        };
        if let Some(api) = api {
            role_ports.insert(role, placement::RolePorts { api, dp_rpc });
        }
    }
    // Where a "missing" finding points: the ports block, else the layout.
    let block_site = if ports.site.is_known() {
        ports.site
    } else {
        ports.api.as_ref().map_or(Site::NONE, |p| p.site)
    };
    for role in present {
        if ports.api_of(*role).is_none() {
            cx.report(
                Rule::ApiPortRequired,
                block_site,
                "ports.api",
                if *role == Role::Mixed {
                    "found no API port, expected `ports: { api: N }`: the engine serves its API on it".to_owned()
                } else {
                    format!("found no API port for the {role} engines, expected `ports: {{ api: N }}` or `ports: {{ {role}: {{ api: N }} }}`: each rank serves its API on the start port + its local index")
                },
            );
            ok = false;
        }
    }
    let multi_node_mixed = shapes.is_some_and(|s| {
        s.iter()
            .any(|g| g.role == Role::Mixed && g.dp > g.ranks_per_node)
    });
    let needs_rpc: Vec<Role> = present
        .iter()
        .copied()
        .filter(|r| *r != Role::Mixed || multi_node_mixed)
        .collect();
    let missing_rpc: Vec<Role> = needs_rpc
        .iter()
        .copied()
        .filter(|r| ports.dp_rpc_of(*r).is_none())
        .collect();
    let rpc_site = ports.api.as_ref().map_or(block_site, |p| p.site);
    if !missing_rpc.is_empty() && missing_rpc.len() == needs_rpc.len() {
        cx.report(
            Rule::DpRpcPortRequired,
            rpc_site,
            "ports.dp_rpc",
            if pd {
                "found no `dp_rpc` port, expected `ports: { dp_rpc: N }`: `launch_online_dp.py`'s default is an int that crashes `subprocess` (launch_online_dp.py L15, L40)"
            } else {
                "found no `dp_rpc` port for a mixed engine spanning nodes, expected `ports: { dp_rpc: N }`: every node must pass the same `--data-parallel-rpc-port`"
            },
        );
        ok = false;
    } else {
        for role in missing_rpc {
            let site = ports.role(role).map_or(rpc_site, |b| b.site);
            cx.report(
                Rule::DpRpcPortRequired,
                site,
                format!("ports.{role}.dp_rpc"),
                format!("found no `dp_rpc` port for the {role} engines, expected `ports: {{ dp_rpc: N }}` or `ports: {{ {role}: {{ dp_rpc: N }} }}`: `launch_online_dp.py`'s default is an int that crashes `subprocess` (launch_online_dp.py L15, L40)"),
            );
            ok = false;
        }
    }
    let first = present.iter().next().copied();
    let first_ports = first.and_then(|r| role_ports.get(&r));
    let api = common_api.or(first_ports.map(|p| p.api));
    let dp_rpc = common_rpc.or(first_ports.and_then(|p| p.dp_rpc));
    (api, dp_rpc, role_ports, ok)
}

/// One socket as the port rules see it: what it is, and which written value
/// moves it.
struct PortUse {
    lo: u32,
    hi: u32,
    /// The socket, for its description and field path.
    sock: SocketKind,
    /// What kind of socket, for grouping one mistake's findings.
    kind: &'static str,
    /// Which moves first when two collide: a single port (proxy, DP RPC) is
    /// cheaper to move than a kv base, a kv base cheaper than the API base
    /// that the proxy lists and every rank derive from.
    weight: u8,
    /// The DP rank it belongs to, if any.
    rank: Option<(usize, u32)>,
    site: Site,
}

/// Findings of one mistake: the first occurrence and every rank it hits.
struct Finding {
    rule: Rule,
    site: Site,
    field: String,
    /// The kinds of socket involved (`kv/api`), so different clashes of one
    /// value stay apart.
    kinds: String,
    /// The first occurrence, as a "found ..." clause.
    first: String,
    expected: &'static str,
    ranks: BTreeSet<(usize, u32)>,
    nodes: BTreeSet<usize>,
}

/// Groups findings that come from one written value and one kind of clash,
/// so a mistake that hits many ranks is one diagnostic.
#[derive(Default)]
struct Findings(Vec<Finding>);

impl Findings {
    /// Records one occurrence of `rule` at the value `site` / `field`.
    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        rule: Rule,
        site: Site,
        field: &str,
        kinds: &str,
        first: impl FnOnce() -> String,
        expected: &'static str,
        ranks: impl IntoIterator<Item = (usize, u32)>,
        node: usize,
    ) {
        let i =
            match self.0.iter().position(|f| {
                f.rule == rule && f.site == site && f.field == field && f.kinds == kinds
            }) {
                Some(i) => i,
                None => {
                    self.0.push(Finding {
                        rule,
                        site,
                        field: field.to_owned(),
                        kinds: kinds.to_owned(),
                        first: first(),
                        expected,
                        ranks: BTreeSet::new(),
                        nodes: BTreeSet::new(),
                    });
                    self.0.len() - 1
                }
            };
        let f = &mut self.0[i];
        f.ranks.extend(ranks);
        f.nodes.insert(node);
    }

    fn report(self, cx: &mut Cx) {
        for f in self.0 {
            let count = f.ranks.len();
            let more = if count > 1 {
                let nodes: Vec<String> = f.nodes.iter().map(usize::to_string).collect();
                format!(
                    ", and the same on {} more ranks ({count} ranks on node{} {})",
                    count - 1,
                    if nodes.len() > 1 { "s" } else { "" },
                    nodes.join(", ")
                )
            } else {
                String::new()
            };
            cx.report(
                f.rule,
                f.site,
                f.field,
                format!("found {}{more}, expected {}", f.first, f.expected),
            );
        }
    }
}

/// Port rules over a placement: collisions per host, ranges, the ADXL range.
/// One written value that collides with or overflows on many ranks is one
/// diagnostic naming the first rank and the count.
fn check_ports(spec: &LayoutSpec, layout: &Layout, hw: &Hardware, cx: &mut Cx) {
    // Where a role's kv_port was written, and its field path (written only
    // for a finding: the site is needed for every socket).
    let kv_at = |role: Role, role_index: usize| -> Option<(Site, &'static str, usize)> {
        let c = spec.connector.as_ref()?;
        let (list, field) = match role {
            Role::Prefill => (&c.kv_port.prefill, "prefill"),
            _ => (&c.kv_port.decode, "decode"),
        };
        let i = if list.len() > 1 { role_index } else { 0 };
        Some((list.get(i).map_or(c.kind.site, |p| p.site), field, i))
    };
    let kv_site = |role: Role, role_index: usize| -> (Site, String) {
        match kv_at(role, role_index) {
            None => (Site::NONE, "connector".into()),
            Some((site, field, i)) => (site, format!("connector.kv_port.{field}[{i}]")),
        }
    };
    // A role's API / DP RPC port: its own block's value, else the common
    // one; `true` when the role's own block has it.
    let port_at = |role: Role, rpc: bool| -> (Site, bool) {
        let own = spec.ports.role(role).and_then(|b| {
            if rpc {
                b.dp_rpc.as_ref()
            } else {
                b.api.as_ref()
            }
        });
        match own {
            Some(p) => (p.site, true),
            None => {
                let common = if rpc {
                    spec.ports.dp_rpc.as_ref()
                } else {
                    spec.ports.api.as_ref()
                };
                (common.map_or(spec.ports.site, |p| p.site), false)
            }
        }
    };
    let port_site = |role: Role, rpc: bool| -> (Site, String) {
        let name = if rpc { "dp_rpc" } else { "api" };
        match port_at(role, rpc) {
            (site, true) => (site, format!("ports.{role}.{name}")),
            (site, false) => (site, format!("ports.{name}")),
        }
    };
    if let Some(pool) = layout.pool() {
        pool::check_placeholders(pool, layout.placement.nodes.len(), cx);
    }
    let mut findings = Findings::default();
    for node in &layout.placement.nodes {
        let engine = &layout.placement.engines[node.engine];
        // Descriptions and field paths are written only for a finding.
        let uses: Vec<PortUse> = layout
            .node_sockets(node.index)
            .into_iter()
            .map(|sock| {
                let (kind, weight, rank, site) = match sock.kind {
                    SocketKind::Api { dp_rank } => (
                        "api",
                        0,
                        Some((engine.index, dp_rank)),
                        port_at(engine.role, false).0,
                    ),
                    // Both roles compute the span (facts §10.5): it counts
                    // whichever role binds it.
                    SocketKind::Kv { dp_rank, .. } => (
                        "kv",
                        1,
                        Some((engine.index, dp_rank)),
                        kv_at(engine.role, engine.role_index).map_or(Site::NONE, |k| k.0),
                    ),
                    SocketKind::DpRpc => ("dp_rpc", 2, None, port_at(engine.role, true).0),
                    SocketKind::Proxy => (
                        "proxy",
                        3,
                        None,
                        spec.proxy.as_ref().map_or(Site::NONE, |p| p.port.site),
                    ),
                    SocketKind::Pool { name } => (
                        "pool",
                        4,
                        None,
                        layout
                            .pool()
                            .and_then(|p| p.ports.get(name))
                            .map_or(Site::NONE, |p| p.site),
                    ),
                };
                PortUse {
                    lo: sock.first,
                    hi: sock.last,
                    sock: sock.kind,
                    kind,
                    weight,
                    rank,
                    site,
                }
            })
            .collect();
        // What a socket is, and the field its value was written at.
        let what = |u: &PortUse| -> String {
            let lo = u.lo;
            match u.sock {
                SocketKind::Api { dp_rank } => format!("API port {lo} of DP rank {dp_rank}"),
                SocketKind::Kv { dp_rank, .. } => {
                    format!("kv span {lo}-{} of DP rank {dp_rank}", u.hi)
                }
                SocketKind::DpRpc => format!("DP RPC port {lo}"),
                SocketKind::Proxy => format!("proxy port {lo}"),
                SocketKind::Pool { name } => format!("KV pool {name} {lo}"),
            }
        };
        let field = |u: &PortUse| -> String {
            match u.sock {
                SocketKind::Api { .. } => port_site(engine.role, false).1,
                SocketKind::Kv { .. } => kv_site(engine.role, engine.role_index).1,
                SocketKind::DpRpc => port_site(engine.role, true).1,
                SocketKind::Proxy => "proxy.port".to_owned(),
                SocketKind::Pool { name } => format!("pool.ports.{name}"),
            }
        };
        for u in &uses {
            if u.hi > 65535 {
                findings.add(
                    Rule::PortRange,
                    u.site,
                    &field(u),
                    u.kind,
                    || format!("{} on node {} reaching port {}", what(u), node.index, u.hi),
                    "at most 65535: it is a TCP port",
                    u.rank,
                    node.index,
                );
            }
        }
        // Each colliding pair once, at the value that moves first (see
        // `PortUse::weight`; the later-written value between equals).
        for (i, a) in uses.iter().enumerate() {
            for b in uses[..i].iter().filter(|b| a.lo <= b.hi && b.lo <= a.hi) {
                let (at, other) = if (a.weight, a.site) >= (b.weight, b.site) {
                    (a, b)
                } else {
                    (b, a)
                };
                let kinds = format!("{}/{}", at.kind, other.kind);
                findings.add(
                    Rule::PortCollision,
                    at.site,
                    &field(at),
                    &kinds,
                    || {
                        format!(
                            "{} overlapping {} on node {}",
                            what(at),
                            what(other),
                            node.index
                        )
                    },
                    "disjoint ports per host: the second bind fails with `Address already in use`",
                    at.rank.into_iter().chain(other.rank),
                    node.index,
                );
            }
        }
    }
    findings.report(cx);
    // ADXL dynamic range [20000, 20000 + 1000·NPUs) per the doc table, with
    // Mooncake's inclusive upper bound as its own rule (facts §3.4, §10.6).
    let lo = 20000u32;
    let hi = lo + 1000 * hw.npus_per_node;
    for e in &layout.placement.engines {
        let spans: Vec<(u32, u32)> = layout
            .placement
            .nodes
            .iter()
            .filter(|n| n.engine == e.index)
            .flat_map(|n| n.ranks.iter().filter_map(|r| r.kv_span))
            .collect();
        let (Some(first), Some(last)) = (
            spans.iter().map(|s| s.0).min(),
            spans.iter().map(|s| s.1).max(),
        ) else {
            continue;
        };
        let (site, field) = kv_site(e.role, e.role_index);
        if first < hi && last >= lo {
            cx.report(
                Rule::KvPortInAdxlRange,
                site,
                field,
                format!(
                    "found {} kv ports {first}-{last}, expected ports outside [{lo}, {hi}) on {} ({} NPUs): AscendDirectTransport draws random ports there, causing intermittent `Address already in use` (multi-node doc kv_port table)",
                    e.role, hw.product, hw.npus_per_node
                ),
            );
        } else if first <= hi && last >= hi {
            cx.report(
                Rule::KvPortOnAdxlEdge,
                site,
                field,
                format!(
                    "found {} kv ports {first}-{last} including {hi}, expected ports above {hi} on {}: Mooncake's `findAdxlListenPort` draws up to {hi} inclusive (ascend_direct_transport.cpp)",
                    e.role, hw.product
                ),
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Serve settings
// ---------------------------------------------------------------------------

/// Flags the library derives; `Some(field)` names the typed field to use.
const DERIVED_FLAGS: &[(&str, Option<&str>)] = &[
    ("--host", None),
    ("--port", None),
    ("--data-parallel-size", None),
    ("--data-parallel-rank", None),
    ("--data-parallel-address", None),
    ("--data-parallel-rpc-port", None),
    ("--data-parallel-size-local", None),
    ("--data-parallel-start-rank", None),
    ("--tensor-parallel-size", None),
    ("--headless", None),
    ("--kv-transfer-config", None),
    ("--model", Some("model_path")),
    ("--served-model-name", Some("served_model_name")),
    ("--quantization", Some("model")),
    ("--max-model-len", Some("max_model_len")),
    ("--max-num-batched-tokens", Some("max_num_batched_tokens")),
    ("--max-num-seqs", Some("max_num_seqs")),
    ("--gpu-memory-utilization", Some("gpu_memory_utilization")),
    ("--block-size", Some("block_size")),
    ("--seed", Some("seed")),
    ("--enable-expert-parallel", Some("expert_parallel")),
    ("--trust-remote-code", Some("trust_remote_code")),
    ("--async-scheduling", Some("async_scheduling")),
    ("--enable-prefix-caching", Some("prefix_caching")),
    ("--no-enable-prefix-caching", Some("prefix_caching")),
    ("--enforce-eager", Some("graph")),
    ("--compilation-config", Some("graph")),
    ("--speculative-config", Some("speculative")),
    ("--additional-config", Some("additional_config")),
];

/// Parallel groups that multiply a rank's NPUs and kv ports, which a flag
/// cannot state (rule `parallel_groups_expressible`): the short name, and
/// where a size above 1 is written instead, if anywhere.
const UNEXPRESSED_GROUPS: &[(&str, &str, Option<&str>)] = &[
    ("--pipeline-parallel-size", "pp", None),
    (
        "--prefill-context-parallel-size",
        "pcp",
        Some("the topology shape (`dp1tp8pcp2`)"),
    ),
];

/// The PCP flag, rendered from the topology's `pcp<N>`.
pub const PCP_FLAG: &str = "--prefill-context-parallel-size";

/// Env the spine derives per node or rank.
const DERIVED_ENV: &[&str] = &[
    "ASCEND_RT_VISIBLE_DEVICES",
    "HCCL_IF_IP",
    "GLOO_SOCKET_IFNAME",
    "TP_SOCKET_IFNAME",
    "HCCL_SOCKET_IFNAME",
    "ENGINE_ID",
    "KV_PORT",
];

fn check_serve_block(block: &ServeSpec, scope: &str, cx: &mut Cx) {
    let mut flags: BTreeSet<&str> = BTreeSet::new();
    for (i, f) in block.flags.iter().enumerate() {
        let field = format!("{scope}.flags[{i}]");
        let name = f.name.value.as_str();
        if !is_flag(name) {
            let dashed = format!(
                "--{}",
                name.trim_start_matches('-')
                    .replace('_', "-")
                    .to_lowercase()
            );
            cx.report(
                Rule::FlagFormat,
                f.name.site,
                field.clone(),
                format!("found flag {name:?}, expected `--kebab-case`: one spelling lets the rules find derived and duplicate flags{}", if is_flag(&dashed) { format!("; did you mean `{dashed}`?") } else { String::new() }),
            );
            continue;
        }
        // `--speculative-config.method x`: vLLM gathers the dotted keys of a
        // JSON option into one more `--speculative-config {...}` placed after
        // every other argument, so it replaces the JSON pd-dsl renders
        // instead of merging into it (vllm/utils/argparse_utils.py
        // `FlexibleArgumentParser.parse_args` @v0.30.0 L392-446).
        if let Some((base, _)) = name.split_once('.')
            && let Some((_, typed)) = DERIVED_FLAGS.iter().find(|(n, _)| *n == base)
        {
            cx.report(
                Rule::DerivedSetting,
                f.name.site,
                field.clone(),
                format!(
                    "found flag `{name}`, expected {}: vLLM gathers dotted keys into one more `{base}` JSON after the one pd-dsl renders, which it then replaces (vllm/utils/argparse_utils.py `FlexibleArgumentParser.parse_args`)",
                    match typed {
                        Some(t) => format!("the key in the `{t}:` setting"),
                        None => "it left out: that JSON is derived for every rank".to_owned(),
                    }
                ),
            );
        }
        if let Some((_, typed)) = DERIVED_FLAGS.iter().find(|(n, _)| *n == name) {
            cx.report(
                Rule::DerivedSetting,
                f.name.site,
                field.clone(),
                match typed {
                    Some(t) => format!("found flag `{name}`, expected the `{t}:` setting: it is rendered from the typed setting so the rules can see it"),
                    None => format!("found flag `{name}`, expected it left out: it is derived from the topology for every rank"),
                },
            );
        }
        if let Some((_, what, instead)) = UNEXPRESSED_GROUPS.iter().find(|(n, _, _)| *n == name) {
            let size = f.value.as_ref().map(|v| match &v.value {
                Json::String(s) => s.trim().to_owned(),
                other => other.to_string(),
            });
            if size.as_deref() != Some("1") {
                cx.report(
                    Rule::ParallelGroupsExpressible,
                    f.value.as_ref().map_or(f.name.site, |v| v.site),
                    field.clone(),
                    match instead {
                        Some(there) => format!(
                            "found `{name} {}`, expected 1 or the flag left out: a {what} size above 1 is written in {there}, where the placement derives a rank's tp x {what} NPUs and kv ports (vllm/config/parallel.py `world_size`, mooncake_connector.py)",
                            size.as_deref().unwrap_or("(no value)")
                        ),
                        None => format!(
                            "found `{name} {}`, expected 1 or the flag left out: with {what} above 1 a rank spans tp x {what} NPUs and tp x {what} kv ports (vllm/config/parallel.py `world_size`, mooncake_connector.py), and pd-dsl derives device lists and kv port spans for TP, PCP and DP only",
                            size.as_deref().unwrap_or("(no value)")
                        ),
                    },
                );
            }
        }
        if !flags.insert(name) {
            cx.report(
                Rule::DuplicateSetting,
                f.name.site,
                field.clone(),
                format!("found flag `{name}` twice in `{scope}`, expected once: the later one would silently win"),
            );
        }
        if let Some(v) = &f.value
            && let Json::String(s) = &v.value
            && has_control(s)
        {
            cx.report(
                Rule::TextFormat,
                v.site,
                field,
                format!("found {s:?}, expected a flag value without control characters: generated scripts must show exactly what was written"),
            );
        }
    }
    let mut names: BTreeSet<&str> = BTreeSet::new();
    for (i, e) in block.env.iter().enumerate() {
        let field = format!("{scope}.env[{i}]");
        let name = e.name.value.as_str();
        if !is_env_name(name) {
            cx.report(
                Rule::EnvNameFormat,
                e.name.site,
                field.clone(),
                format!("found env name {name:?}, expected `[A-Za-z_][A-Za-z0-9_]*`: it becomes a shell `export`"),
            );
            continue;
        }
        if DERIVED_ENV.contains(&name) {
            cx.report(
                Rule::DerivedSetting,
                e.name.site,
                field.clone(),
                format!("found env `{name}`, expected it left out: the spine derives it per node or rank"),
            );
        }
        if !names.insert(name) {
            cx.report(
                Rule::DuplicateSetting,
                e.name.site,
                field.clone(),
                format!("found env `{name}` twice in `{scope}`, expected once: the later one would silently win"),
            );
        }
        if has_control(e.value.value.text()) {
            cx.report(
                Rule::TextFormat,
                e.value.site,
                field.clone(),
                format!(
                    "found {:?}, expected an env value without control characters: generated scripts must show exactly what was written",
                    e.value.value.text()
                ),
            );
        }
        if let EnvValue::Prepend { prepend } = &e.value.value
            && !is_safe_path(prepend)
        {
            cx.report(
                Rule::PathFormat,
                e.value.site,
                field,
                format!("found {prepend:?}, expected an absolute path of `[A-Za-z0-9/._+@=,:-]` to put in front of `{name}`: it is spliced into a path list in every role template"),
            );
        }
    }
    for (k, v) in &block.additional_config {
        if let Some(t) = json_control_text(k, &v.value) {
            cx.report(
                Rule::TextFormat,
                v.site,
                format!("{scope}.additional_config.{k}"),
                format!("found {t:?} in `additional_config`, expected text without control characters: generated docs and scripts must show exactly what was written"),
            );
        }
    }
    check_capture_sizes(block, scope, cx);
    if let Some(g) = &block.gpu_memory_utilization {
        let ok = g.value.parse::<f64>().is_ok_and(|x| x > 0.0 && x <= 1.0);
        if !ok {
            cx.report(
                Rule::GpuMemoryUtilization,
                g.site,
                format!("{scope}.gpu_memory_utilization"),
                format!("found {}, expected a number in (0, 1]: it is the fraction of NPU memory vLLM may use", g.value),
            );
        }
    }
}

/// Capture sizes as written in one block: with the cudagraph mode they
/// belong to, each at least 1 and listed once.
fn check_capture_sizes(block: &ServeSpec, scope: &str, cx: &mut Cx) {
    let Some(first) = block.capture_sizes.first() else {
        return;
    };
    let field = format!("{scope}.graph.capture_sizes");
    match block.graph.as_ref().map(|g| g.value) {
        Some(GraphMode::Eager) | None => cx.report(
            Rule::GraphCaptureSizes,
            first.site,
            field.clone(),
            format!(
                "found capture sizes with {} in `{scope}`, expected them with a cudagraph mode like `graph: full_decode_only {{ capture_sizes: [...] }}`: without graphs they would be silently unused",
                if block.graph.is_some() { "`graph: eager`" } else { "no `graph`" }
            ),
        ),
        Some(_) => {}
    }
    let mut seen = BTreeSet::new();
    for c in &block.capture_sizes {
        if c.value == 0 {
            cx.report(
                Rule::GraphCaptureSizes,
                c.site,
                field.clone(),
                "found capture size 0, expected sizes of at least 1: each is the token count of one captured graph",
            );
        } else if !seen.insert(c.value) {
            cx.report(
                Rule::GraphCaptureSizes,
                c.site,
                field.clone(),
                format!("found capture size {} twice, expected each size once: a graph is captured once per size", c.value),
            );
        }
    }
}

/// Where in the spec a role's setting was written: the role block if it sets
/// it, else the common block.
fn site_in<'a, T: 'a>(
    spec: &'a LayoutSpec,
    role: Role,
    get: impl Fn(&'a ServeSpec) -> Option<&'a Spanned<T>>,
) -> Site {
    spec.roles
        .get(&role)
        .and_then(&get)
        .or_else(|| get(&spec.serve))
        .map_or(Site::NONE, |s| s.site)
}

fn config_site(spec: &LayoutSpec, role: Role, key: &str) -> Site {
    site_in(spec, role, |b| b.additional_config.get(key))
}

/// Where a nested `additional_config` value (`top.inner`) was written, in
/// the block its top-level key comes from; its top key when not known.
fn config_value_site(spec: &LayoutSpec, role: Role, path: &str) -> Site {
    let top = path.split('.').next().unwrap_or(path);
    let block = spec
        .roles
        .get(&role)
        .filter(|b| b.additional_config.contains_key(top))
        .unwrap_or(&spec.serve);
    block
        .additional_config_sites
        .get(path)
        .copied()
        .filter(|s| s.is_known())
        .unwrap_or_else(|| config_site(spec, role, top))
}

fn env_site(spec: &LayoutSpec, role: Role, name: &str) -> Site {
    let find = |b: &ServeSpec| {
        b.env
            .iter()
            .find(|e| e.name.value == name)
            .map(|e| e.name.site)
    };
    spec.roles
        .get(&role)
        .and_then(find)
        .or_else(|| find(&spec.serve))
        .unwrap_or(Site::NONE)
}

/// `additional_config.finegrained_tp_config` against what the image's
/// `FinegrainedTPConfig` requires of each size (rule
/// `finegrained_tp_preconditions`, from the generated facts).
fn check_finegrained_tp(
    facts: &Facts<'_>,
    role: Role,
    serve: &Serve,
    dp_tp: Option<(u32, u32)>,
    pcp: u32,
    cx: &mut Cx,
) {
    let (Some(img), Some((dp, tp))) = (facts.image, dp_tp) else {
        return;
    };
    let Some(ft) = img.facts().and_then(|r| r.finegrained_tp.as_ref()) else {
        return;
    };
    let Some(cfg) = serve.additional_config.get("finegrained_tp_config") else {
        return;
    };
    let spec = facts.spec;
    let scope = role.as_str();
    let site = |key: &str| config_value_site(spec, role, &format!("finegrained_tp_config.{key}"));
    for (key, need) in &ft.sizes {
        let Some(size) = cfg.get(key).and_then(Json::as_u64) else {
            continue;
        };
        if size <= need.above {
            continue;
        }
        let mut unmet = Vec::new();
        for n in &need.needs {
            match n.as_str() {
                "decode" if !(facts.pd && role == Role::Decode) => {
                    unmet.push(format!(
                        "a decode engine of a PD layout (a kv_consumer), not a {role} engine"
                    ));
                }
                "graph" if serve.graph == Some(GraphMode::Eager) => {
                    unmet.push("graph mode, not `graph: eager`".to_owned());
                }
                "tp1" if tp > 1 => unmet.push(format!("TP 1, not TP{tp}")),
                "no_pcp" if pcp > 1 => unmet.push(format!("PCP 1, not pcp{pcp}")),
                _ => {}
            }
        }
        if !unmet.is_empty() {
            cx.report(
                Rule::FinegrainedTpPreconditions,
                site(key),
                format!("{scope}.additional_config.finegrained_tp_config.{key}"),
                format!(
                    "found `{key}` {size} on a {role} engine, expected it on {}: vllm-ascend asserts that at start on image `{}` (`FinegrainedTPConfig`, {})",
                    unmet.join(", "),
                    img.tag,
                    need.source
                ),
            );
        }
    }
    for key in &ft.divide_dp {
        // lmhead's has its own rule.
        if key == "lmhead_tensor_parallel_size" {
            continue;
        }
        if let Some(size) = cfg.get(key).and_then(Json::as_u64)
            && size > 0
            && u64::from(dp) % size != 0
        {
            cx.report(
                Rule::FinegrainedTpPreconditions,
                site(key),
                format!("{scope}.additional_config.finegrained_tp_config.{key}"),
                format!(
                    "found `{key}` {size} on a {role} engine of DP{dp}, expected a size dividing DP{dp}: vllm-ascend groups it over DP ranks and asserts that at start on image `{}` (`FinegrainedTPConfig`, {})",
                    img.tag,
                    ft.source
                ),
            );
        }
    }
}

/// `--cp-kv-cache-interleave-size` against the block size on a PD engine
/// with context parallelism (rule `cp_interleave_matches_block`).
fn check_cp_interleave(facts: &Facts<'_>, role: Role, serve: &Serve, pcp: u32, cx: &mut Cx) {
    const DCP_FLAG: &str = "--decode-context-parallel-size";
    const INTERLEAVE_FLAG: &str = "--cp-kv-cache-interleave-size";
    if !facts.pd {
        return;
    }
    let Some(img) = facts.image else {
        return;
    };
    let Some(r) = img.facts().and_then(|r| r.cp_interleave_refusal.as_ref()) else {
        return;
    };
    let reads = |n: &str| r.reads.iter().any(|x| x == n);
    let dcp = capacity::flag_u64(serve, DCP_FLAG).unwrap_or(1);
    let why = if pcp > 1 && reads("prefill_context_parallel_size") {
        format!("pcp{pcp}")
    } else if dcp > 1 && reads("decode_context_parallel_size") {
        format!("`{DCP_FLAG} {dcp}`")
    } else {
        return;
    };
    // vLLM's defaults: interleave 1 (`ParallelConfig.cp_kv_cache_interleave_size`,
    // vllm/config/parallel.py), block 128 (vllm-ascend `refresh_block_size`).
    let interleave = capacity::flag_u64(serve, INTERLEAVE_FLAG).unwrap_or(1);
    let block = serve.block_size.unwrap_or(capacity::DEFAULT_BLOCK_SIZE);
    if interleave == block {
        return;
    }
    let spec = facts.spec;
    let site = flag_site(spec, role, INTERLEAVE_FLAG, true)
        .or_else(|| {
            spec.topology
                .iter()
                .find(|g| g.role.value == role)
                .map(|g| g.pcp.as_ref().map_or(g.shape_site, |p| p.site))
        })
        .unwrap_or(Site::NONE);
    cx.report(
        Rule::CpInterleaveMatchesBlock,
        site,
        format!("{role}.flags"),
        format!(
            "found a {role} engine of a PD layout with {why} and {}, expected `{INTERLEAVE_FLAG} {block}` (its block size): vllm-ascend asserts they are equal at start on image `{}` ({})",
            if capacity::flag_u64(serve, INTERLEAVE_FLAG).is_some() {
                format!("`{INTERLEAVE_FLAG} {interleave}`")
            } else {
                format!("no `{INTERLEAVE_FLAG}` (vLLM's default 1)")
            },
            img.tag,
            r.source
        ),
    );
}

/// An env switch read as `os.getenv(name, "false").lower() in ("true", "1")`
/// (vllm_ascend/platform.py `_validate_eplb_config`, ascend_config.py's
/// `DYNAMIC_EPLB` read).
fn env_is_true(serve: &Serve, name: &str) -> bool {
    matches!(serve.env_value(name), Some(EnvValue::Literal(v)) if v == "1" || v.eq_ignore_ascii_case("true"))
}

/// The site of flag `name` in the role's block, else in `serve`.
fn flag_site(spec: &LayoutSpec, role: Role, name: &str, value: bool) -> Option<Site> {
    let find = |b: &ServeSpec| {
        b.flags.iter().find(|f| f.name.value == name).map(|f| {
            if value {
                f.value.as_ref().map_or(f.name.site, |v| v.site)
            } else {
                f.name.site
            }
        })
    };
    spec.roles
        .get(&role)
        .and_then(find)
        .or_else(|| find(&spec.serve))
}

/// Whether the engine runs vLLM's V2 model runner: on Ascend chosen by
/// `VLLM_USE_V2_MODEL_RUNNER` alone
/// (vllm_ascend/patch/platform/patch_use_v2_model_runner.py), parsed as
/// `bool(int(value))` (vllm/envs.py `maybe_convert_bool`).
fn v2_runner_on(serve: &Serve) -> bool {
    match serve.env_value("VLLM_USE_V2_MODEL_RUNNER") {
        Some(EnvValue::Literal(v)) => v.trim().parse::<i64>().is_ok_and(|n| n != 0),
        Some(_) => true,
        None => false,
    }
}

/// EPLB settings against the model runner the engine runs (rule
/// `eplb_config_model_runner`, from the facts' `eplb_runner`).
fn check_eplb_runner(facts: &Facts<'_>, role: Role, serve: &Serve, cx: &mut Cx) {
    let Some(img) = facts.image else {
        return;
    };
    let Some(er) = img.facts().and_then(|r| r.eplb_runner.as_ref()) else {
        return;
    };
    let spec = facts.spec;
    let scope = role.as_str();
    let v2 = v2_runner_on(serve);
    let map = serve
        .additional_config
        .get("eplb_config")
        .and_then(Json::as_object);
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_owned()
        } else {
            v.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    if v2 {
        if let Some(map) = map {
            let bad: Vec<String> = map
                .keys()
                .filter(|k| !er.v2_fields.contains(k))
                .cloned()
                .collect();
            if !bad.is_empty() {
                cx.report(
                    Rule::EplbConfigModelRunner,
                    config_site(spec, role, "eplb_config"),
                    format!("{scope}.additional_config.eplb_config"),
                    format!(
                        "found `eplb_config` {} on a {role} engine running the V2 model runner (env `VLLM_USE_V2_MODEL_RUNNER`), expected only {}: vllm-ascend refuses the V1 runner's EPLB fields there at start on image `{}` ({})",
                        list(&bad),
                        list(&er.v2_fields),
                        img.tag,
                        er.source
                    ),
                );
            }
        }
        for name in &er.v2_refused_env {
            if env_is_true(serve, name) {
                cx.report(
                    Rule::EplbConfigModelRunner,
                    env_site(spec, role, name),
                    format!("{scope}.env.{name}"),
                    format!(
                        "found env `{name}` set true on a {role} engine running the V2 model runner, expected it unset: it is a V1 runner control, and vllm-ascend refuses it with the V2 runner at start on image `{}` ({})",
                        img.tag, er.source
                    ),
                );
            }
        }
    } else if let Some(map) = map {
        let bad: Vec<String> = er
            .v1_refused_fields
            .iter()
            .filter(|k| map.contains_key(k.as_str()))
            .cloned()
            .collect();
        if !bad.is_empty() {
            cx.report(
                Rule::EplbConfigModelRunner,
                config_site(spec, role, "eplb_config"),
                format!("{scope}.additional_config.eplb_config"),
                format!(
                    "found `eplb_config` {} on a {role} engine running the V1 model runner, expected them only with env `VLLM_USE_V2_MODEL_RUNNER=1`: vllm-ascend refuses them on the V1 runner at start on image `{}` ({})",
                    list(&bad),
                    img.tag,
                    er.source
                ),
            );
        }
    }
}

/// A role whose topology says `pcp<N>` above 1 (rule
/// `prefill_context_parallel_supported`), and the PCP flag it renders.
fn check_pcp(facts: &Facts<'_>, role: Role, serve: &Serve, dp: u32, pcp: u32, cx: &mut Cx) {
    let spec = facts.spec;
    let Some(g) = spec.topology.iter().find(|g| g.role.value == role) else {
        return;
    };
    let site = g.pcp.as_ref().map_or(g.shape_site, |p| p.site);
    let field = "topology.pcp";
    if serve.flags.iter().any(|(name, _)| name == PCP_FLAG) {
        let at = flag_site(spec, role, PCP_FLAG, false).unwrap_or(site);
        cx.report(
            Rule::DerivedSetting,
            at,
            format!("{role}.flags"),
            format!("found flag `{PCP_FLAG}` on a {role} engine of `{}`, expected it left out: it is rendered from the topology's `pcp{pcp}`", g.shape()),
        );
    }
    let Some(img) = facts.image else {
        return;
    };
    let Some(rel) = img.facts() else {
        return;
    };
    let v2 = v2_runner_on(serve);
    let vllm = img.vllm();
    let message = match crate::upstream::pcp_verdict(rel, vllm, dp, pcp, v2) {
        None => return,
        Some(crate::upstream::PcpVerdict::WithDp(r)) => format!(
            "found `{}` (PCP{pcp} with DP{dp}) on image {}, expected DP1 with PCP: vllm-ascend {} refuses PCP and DP together at start-up ({} `{}`)",
            g.shape(),
            img.tag,
            rel.version,
            r.source,
            r.condition
        ),
        Some(crate::upstream::PcpVerdict::V1Runner(r)) => format!(
            "found `{}` on a {role} engine without env `VLLM_USE_V2_MODEL_RUNNER=1` on image {}, expected both: vllm-ascend {} refuses PCP on the V1 model runner ({} `{}`), and on Ascend only that env selects the V2 runner",
            g.shape(),
            img.tag,
            rel.version,
            r.source,
            r.condition
        ),
        Some(crate::upstream::PcpVerdict::V2Runner { v1, runner }) => format!(
            "found `{}` on image {}, expected PCP1: vLLM {vllm}'s V2 model runner refuses \"{}\" ({} `_get_v2_model_runner_unsupported_features`) and vllm-ascend {} refuses PCP on the V1 runner ({}), so no PCP starts on this image",
            g.shape(),
            img.tag,
            crate::upstream::PCP_FEATURE,
            runner.source,
            rel.version,
            v1.source
        ),
    };
    cx.report(Rule::PrefillContextParallelSupported, site, field, message);
}

/// What `check_serve` needs besides the role's settings.
#[derive(Clone, Copy)]
struct Facts<'a> {
    spec: &'a LayoutSpec,
    model: Option<&'static Model>,
    hw: Option<&'static Hardware>,
    image: Option<&'static Image>,
    pd: bool,
}

/// `additional_config.mlapo_keep_prefill_weights` on a model that is not
/// DeepSeek MLA: vllm-ascend refuses it at start ("only supported for MLA
/// models", vllm_ascend/ascend_config.py `AscendConfig` @v0.27.1rc1+, on
/// every image whose facts list the key). The table's GQA models are the
/// ones `is_deepseek_mla` is false for.
fn check_mlapo_keep(facts: &Facts<'_>, role: Role, serve: &Serve, cx: &mut Cx) {
    const KEY: &str = "mlapo_keep_prefill_weights";
    let Facts {
        spec, model, image, ..
    } = *facts;
    let (Some(m), Some(img)) = (model, image) else {
        return;
    };
    if m.attention != tables::Attention::Gqa
        || !serve.config_flag(KEY)
        || !img.reads_config_key(KEY)
    {
        return;
    }
    cx.report(
        Rule::MlapoKeepNeedsMla,
        config_site(spec, role, KEY),
        format!("{}.additional_config.{KEY}", role.as_str()),
        format!(
            "found `{KEY}` on {role} with `{}` ({} attention), expected it only on an MLA model: vllm-ascend refuses it at start on image `{}` (\"mlapo_keep_prefill_weights=True is only supported for MLA models\", vllm_ascend/ascend_config.py `AscendConfig`)",
            m.weights,
            m.attention.as_str(),
            img.tag
        ),
    );
}

/// `additional_config.enable_kvpp` with TP x PCP above 1 turns on KV layer
/// parallelism, whose preconditions vllm-ascend checks at start
/// (`KVPPConfig.validate`, generated facts `kvpp` @v0.28.0rc1+): its own PD
/// connector (which no layout renders, so only mixed engines can use it),
/// eager (or piecewise) graphs, an MLA model, its speculative methods, no
/// DCP.
fn check_kvpp(facts: &Facts<'_>, role: Role, serve: &Serve, tp: u32, pcp: u32, cx: &mut Cx) {
    let Facts {
        spec, model, image, ..
    } = *facts;
    let Some(img) = image else { return };
    let Some(k) = img.facts().and_then(|r| r.kvpp.as_ref()) else {
        return;
    };
    if !serve.config_flag("enable_kvpp") || u64::from(tp) * u64::from(pcp) <= 1 {
        return;
    }
    let scope = role.as_str();
    let site = config_site(spec, role, "enable_kvpp");
    let field = format!("{scope}.additional_config.enable_kvpp");
    let mut refuse = |what: String, expected: String| {
        cx.report(
            Rule::KvppPreconditions,
            site,
            field.clone(),
            format!(
                "found `enable_kvpp` on {role} (TP {tp} x PCP {pcp}) with {what}, expected {expected}: vllm-ascend refuses it at start on image `{}` ({})",
                img.tag, k.source
            ),
        );
    };
    if role != Role::Mixed {
        let own = spec
            .connector
            .as_ref()
            .map_or("no connector", |c| c.kind.value.kv_connector());
        refuse(
            format!("the PD connector `{own}`"),
            format!(
                "a mixed engine: KVPP in a PD layout needs `{}`{}, which a layout does not render",
                k.connector,
                if k.decode_refused && role == Role::Decode {
                    " and never runs on a decode engine"
                } else {
                    ""
                }
            ),
        );
    }
    let graph = serve.graph.map(GraphMode::as_str);
    if !graph.is_some_and(|g| k.graphs.iter().any(|x| x == g)) {
        refuse(
            format!("graph `{}`", graph.unwrap_or("unset (a CUDA graph mode)")),
            format!("`graph: {}`", k.graphs.join("` or `graph: ")),
        );
    }
    if k.mla_only
        && let Some(m) = model
        && m.attention == tables::Attention::Gqa
    {
        refuse(
            format!("`{}` ({} attention)", m.weights, m.attention.as_str()),
            "an MLA model".into(),
        );
    }
    if let Some(s) = &serve.speculative {
        let method = if s.method.ends_with("_mtp") {
            "mtp"
        } else {
            s.method.as_str()
        };
        if !k.methods.iter().any(|m| m == method) {
            refuse(
                format!("speculative method `{}`", s.method),
                format!("one of `{}`", k.methods.join("`, `")),
            );
        }
    }
    let dcp = crate::capacity::flag_u64(serve, "--decode-context-parallel-size").unwrap_or(1);
    if k.dcp_refused && dcp > 1 {
        refuse(format!("DCP {dcp}"), "DCP 1".into());
    }
}

/// `additional_config.sparse_kv_offload_config` with `enabled`: vllm-ascend
/// refuses it at start on a model with compressed caches (`compress_ratios`:
/// DeepSeek-V4, V4.1) or without the DSA indexer (`index_topk`: every MLA
/// and GQA model but DeepSeek-V3.2 and GLM-5.x), and with context
/// parallelism (PCP from the topology, DCP from its flag)
/// (vllm_ascend/ascend_config.py `SparseKVOffloadConfig.__init__`
/// @v0.26.0rc1, `_validate_preconditions` @v0.27.1rc1-v0.30.0rc2). Only on
/// images whose vllm-ascend reads the key (generated facts); elsewhere
/// `unknown_additional_config_key` says it is ignored.
fn check_sparse_kv_offload(facts: &Facts<'_>, role: Role, serve: &Serve, pcp: u32, cx: &mut Cx) {
    const KEY: &str = "sparse_kv_offload_config";
    let Facts {
        spec, model, image, ..
    } = *facts;
    let (Some(m), Some(img)) = (model, image) else {
        return;
    };
    let enabled = serve
        .additional_config
        .get(KEY)
        .and_then(|c| c.get("enabled"))
        .is_some_and(|v| {
            matches!(v, Json::Bool(true)) || matches!(v, Json::String(s) if !s.is_empty())
        });
    if !enabled || !img.reads_config_key(KEY) {
        return;
    }
    let scope = role.as_str();
    let site = config_site(spec, role, KEY);
    let field = format!("{scope}.additional_config.{KEY}.enabled");
    let why = match m.attention {
        tables::Attention::DsaSparse => None,
        tables::Attention::V4Hybrid | tables::Attention::V41Ced => Some(
            "its config has `compress_ratios`, and vllm-ascend refuses sparse KV offload with compressed caches (\"Sparse KV offload don't support compress now\")",
        ),
        tables::Attention::Mla | tables::Attention::Gqa => Some(
            "its config has no `index_topk`, and vllm-ascend offloads only sparse-attention (DSA) KV (\"Sparse KV offload only support sparse attention model\")",
        ),
    };
    if let Some(why) = why {
        cx.report(
            Rule::SparseKvOffloadNeedsDsa,
            site,
            field.clone(),
            format!(
                "found sparse KV offload on {role} with `{}` ({} attention), expected a DSA-sparse model (DeepSeek-V3.2, GLM-5.x): {why} at start on image `{}` (vllm_ascend/ascend_config.py `SparseKVOffloadConfig`)",
                m.weights,
                m.attention.as_str(),
                img.tag
            ),
        );
    }
    let dcp = crate::capacity::flag_u64(serve, "--decode-context-parallel-size").unwrap_or(1);
    if u64::from(pcp) * dcp > 1 {
        cx.report(
            Rule::SparseKvOffloadWithoutCp,
            site,
            field,
            format!(
                "found sparse KV offload on {role} with context parallelism (PCP {pcp}, DCP {dcp}), expected PCP x DCP 1: vllm-ascend refuses it at start on image `{}` (\"Sparse KV offload don't support context parallel now\", vllm_ascend/ascend_config.py `SparseKVOffloadConfig`)",
                img.tag
            ),
        );
    }
}

fn check_serve(
    facts: &Facts<'_>,
    role: Role,
    serve: &Serve,
    dp_tp: Option<(u32, u32)>,
    pcp: u32,
    cx: &mut Cx,
) {
    let Facts {
        spec,
        model,
        hw,
        image,
        pd,
    } = *facts;
    let scope = role.as_str();
    if pcp > 1 {
        check_pcp(facts, role, serve, dp_tp.map_or(1, |(dp, _)| dp), pcp, cx);
    }
    check_sparse_kv_offload(facts, role, serve, pcp, cx);
    check_mlapo_keep(facts, role, serve, cx);
    if let Some((_, tp)) = dp_tp {
        check_kvpp(facts, role, serve, tp, pcp, cx);
    }
    // Balance scheduling: ValueError on P and D (platform.py @v0.18.0 L456,
    // @v0.23.0 L682, @v0.26.0rc1 L639, @v0.30.0rc2 L1034).
    let env_balance = matches!(serve.env_value("VLLM_ASCEND_BALANCE_SCHEDULING"), Some(EnvValue::Literal(v)) if v == "1" || v.eq_ignore_ascii_case("true"));
    if pd && (serve.config_flag("enable_balance_scheduling") || env_balance) {
        let site = if env_balance {
            env_site(spec, role, "VLLM_ASCEND_BALANCE_SCHEDULING")
        } else if serve
            .additional_config
            .contains_key("enable_balance_scheduling")
        {
            config_site(spec, role, "enable_balance_scheduling")
        } else {
            config_site(spec, role, "scheduler_config")
        };
        cx.report(
            Rule::BalanceSchedulingInPd,
            site,
            format!("{scope}.additional_config"),
            format!("found balance scheduling on a {role} engine, expected it only in mixed layouts: vllm-ascend raises ValueError on kv_producer and kv_consumer (platform.py L815-830)"),
        );
    }
    if serve.config_flag("recompute_scheduler_enable") {
        let site = if serve
            .additional_config
            .contains_key("recompute_scheduler_enable")
        {
            config_site(spec, role, "recompute_scheduler_enable")
        } else {
            config_site(spec, role, "scheduler_config")
        };
        if role == Role::Mixed {
            cx.report(
                Rule::RecomputeSchedulerMixed,
                site,
                format!("{scope}.additional_config.recompute_scheduler_enable"),
                "found `recompute_scheduler_enable` in a mixed layout, expected it only on decode engines: without a kv_consumer it is a ValueError (platform.py L896-920)",
            );
        } else if role == Role::Prefill
            && image.is_some_and(|i| i.recompute == RecomputeRoles::DecodeOnly)
        {
            cx.report(
                Rule::RecomputeSchedulerOnPrefill,
                site,
                format!("{scope}.additional_config.recompute_scheduler_enable"),
                format!(
                    "found `recompute_scheduler_enable` on prefill with image `{}`, expected it on decode only: from v0.23.0rc1 it is ignored on kv_producer with a warning (#11537)",
                    image.map_or("", |i| i.tag)
                ),
            );
        }
    }
    // MLAPO decode-only: `enabling_mlapo` (vllm_ascend/attention/utils.py
    // @v0.18.0 L327-333, @v0.19.1rc1 L353-360, @v0.23.0 L511-521,
    // @v0.30.0rc2 L581-591) turns it on only for a pure kv_consumer, except
    // on A5 from v0.19.1rc1. Only the MLA backend asks it (mla_v1.py
    // `self.enable_mlapo = enabling_mlapo(...)` @v0.18.0 L720 … @v0.30.0rc2
    // L910); the SFA backend of DSA models reads the raw switch on every
    // role (sfa_v1.py @v0.18.0 L412 `envs.VLLM_ASCEND_ENABLE_MLAPO`,
    // @v0.20.2rc1 L428, @v0.25.1rc1 L622, @v0.30.0rc2 L898), so the
    // restriction is for MLA models only. Each switch counts on the images
    // that read it (the facts).
    let env_mlapo = image.is_some_and(|i| i.reads_env("VLLM_ASCEND_ENABLE_MLAPO"))
        && matches!(serve.env_value("VLLM_ASCEND_ENABLE_MLAPO"), Some(EnvValue::Literal(v)) if v == "1");
    let key_mlapo = image.is_some_and(|i| i.reads_config_key("enable_mlapo"))
        && serve.config_flag("enable_mlapo");
    if let (Some(h), Some(img), Some(m)) = (hw, image, model)
        && m.attention == tables::Attention::Mla
        && tables::mlapo_decode_only(h, img)
        && role != Role::Decode
        && (key_mlapo || env_mlapo)
    {
        let site = if env_mlapo {
            env_site(spec, role, "VLLM_ASCEND_ENABLE_MLAPO")
        } else {
            config_site(spec, role, "enable_mlapo")
        };
        cx.report(
            Rule::MlapoDecodeOnly,
            site,
            format!("{scope}.additional_config.enable_mlapo"),
            format!(
                "found MLAPO enabled on a {role} engine of `{}` (MLA) on {} with image `{}`, expected it on decode engines only: the MLA backend takes it only on pure decode instances there (attention/utils.py `enabling_mlapo`)",
                m.weights, h.product, img.tag
            ),
        );
    }
    if let (Some(size), Some((dp, tp))) = (
        serve
            .additional_config
            .get("finegrained_tp_config")
            .and_then(|f| f.get("lmhead_tensor_parallel_size"))
            .and_then(Json::as_u64),
        dp_tp,
    ) && size > 0
        && u64::from(dp) % size != 0
    {
        cx.report(
                Rule::LmheadTensorParallel,
                config_value_site(spec, role, "finegrained_tp_config.lmhead_tensor_parallel_size"),
                format!("{scope}.additional_config.finegrained_tp_config"),
                format!(
                    "found `lmhead_tensor_parallel_size` {size} on a {role} engine with DP{dp} TP{tp}, expected a size dividing DP{dp}: vllm-ascend groups the lmhead over DP ranks and refuses \"finegrained tp sizes must divide by data_parallel_size\" (ascend_config.py)"
                ),
            );
    }
    check_finegrained_tp(facts, role, serve, dp_tp, pcp, cx);
    check_cp_interleave(facts, role, serve, pcp, cx);
    // ascend_config.py `AscendConfig` @v0.30.0rc1 L703-714 (also rc2).
    if serve.config_flag("enable_dsa_cp")
        && let Some(img) = image
        && img.version()
            >= (tables::Version {
                major: 0,
                minor: 30,
                patch: 0,
                rc: Some(1),
            })
    {
        let with = if pcp > 1 {
            Some(format!("PCP (pcp{pcp})"))
        } else if v2_runner_on(serve) {
            Some("the V2 model runner (env `VLLM_USE_V2_MODEL_RUNNER`)".to_owned())
        } else {
            None
        };
        if let Some(with) = with {
            cx.report(
                Rule::DsaCpConflicts,
                config_site(spec, role, "enable_dsa_cp"),
                format!("{scope}.additional_config.enable_dsa_cp"),
                format!(
                    "found `enable_dsa_cp` with {with} on a {role} engine, expected one of them: vllm-ascend refuses DSA CP together with PCP or the V2 model runner at start on image `{}` (ascend_config.py `AscendConfig`); PCP replaces DSA CP there",
                    img.tag
                ),
            );
        }
    }
    let dynamic_eplb = serve
        .additional_config
        .get("eplb_config")
        .and_then(|e| e.get("dynamic_eplb"))
        .is_some_and(|v| matches!(v, Json::Bool(true)));
    // On the V2 runner the V1 switches are refused instead
    // (`eplb_config_model_runner`).
    let v2_eplb = v2_runner_on(serve)
        && image.is_some_and(|i| i.facts().is_some_and(|r| r.eplb_runner.is_some()));
    check_eplb_runner(facts, role, serve, cx);
    if dynamic_eplb
        && !v2_eplb
        && !env_is_true(serve, "DYNAMIC_EPLB")
        && !env_is_true(serve, "EXPERT_MAP_RECORD")
    {
        cx.report(
            Rule::EplbRequiresEnv,
            config_site(spec, role, "eplb_config"),
            format!("{scope}.additional_config.eplb_config"),
            format!("found `eplb_config.dynamic_eplb: true` on {role} without env `DYNAMIC_EPLB=true`, expected both: model runner v1 refuses dynamic EPLB without it (ascend_config.py L1049-1052)"),
        );
    }
    if let Some(img) = image {
        // The keys and variables each image reads are the generated facts
        // (upstream/facts/vllm-ascend/<release>.json: `additional_config`
        // from vllm_ascend/ascend_config.py and the other readers in the
        // package, `env` from vllm_ascend/envs.py and direct reads), so the
        // verdict holds at every release of the table.
        for key in serve.additional_config.keys() {
            let site = config_site(spec, role, key);
            let Some(why) = tables::config_key_ignored(key, img) else {
                continue;
            };
            let message = if tables::config_key_known(key) {
                format!(
                    "found `additional_config.{key}` on image `{}`, expected a key that image reads: {why}; it is silently ignored",
                    img.tag
                )
            } else {
                let known = crate::upstream::known_config_keys();
                let hint = did_you_mean(key, known.iter().copied());
                format!(
                    "found `additional_config.{key}`, expected a key vllm-ascend reads: {why}; unknown keys are silently ignored{hint}"
                )
            };
            cx.report(
                Rule::UnknownAdditionalConfigKey,
                site,
                format!("{scope}.additional_config.{key}"),
                message,
            );
        }
        for (name, _) in &serve.env {
            if let Some(why) = tables::dead_env(name, img) {
                cx.report(
                    Rule::DeadEnvToggle,
                    env_site(spec, role, name),
                    format!("{scope}.env.{name}"),
                    match tables::upper_spelling_read(name, img) {
                        Some(upper) => format!(
                            "found env `{name}` on image `{}`, expected `{upper}`: {why}",
                            img.tag
                        ),
                        None => format!(
                            "found env `{name}` on image `{}`, expected it dropped: {why}",
                            img.tag
                        ),
                    },
                );
            }
        }
    }
    if let Some(s) = &serve.speculative {
        let sp = spec
            .roles
            .get(&role)
            .and_then(|b| b.speculative.as_ref())
            .or(spec.serve.speculative.as_ref());
        let (msite, tsite) = sp.map_or((Site::NONE, Site::NONE), |sp| {
            (sp.method.site, sp.tokens.site)
        });
        // `SpeculativeMethod` of vllm/config/speculative.py at the image's vLLM.
        let methods = tables::speculative_methods(image);
        if !methods.contains(&s.method.as_str()) {
            let hint = did_you_mean(&s.method, methods.iter().copied());
            let on = image.map_or(String::new(), |img| {
                format!(" on image `{}` (vLLM {})", img.tag, img.vllm())
            });
            let named = methods.iter().copied().filter(|m| !m.ends_with("_mtp"));
            cx.report(
                Rule::SpeculativeMethodUnknown,
                msite,
                format!("{scope}.speculative.method"),
                format!("found speculative method `{}`{on}, expected one of {} or an MTP model type (`deepseek_mtp`, ...): that vLLM's `SpeculativeConfig` rejects other methods (vllm/config/speculative.py `SpeculativeMethod`){hint}", s.method, list(named)),
            );
        } else if s.method != "mtp" && s.method.ends_with("_mtp") {
            cx.report(
                Rule::SpeculativeMethodDeprecated,
                msite,
                format!("{scope}.speculative.method"),
                format!("found speculative method `{}`, expected `mtp`: vLLM rewrites `*_mtp` to `mtp` with a deprecation warning (vllm/config/speculative.py)", s.method),
            );
        }
        // Every `*_mtp` model type is rewritten to `mtp` (vllm/config/
        // speculative.py), so each needs the MTP layer.
        if (s.method == "mtp" || s.method.ends_with("_mtp")) && model.is_some_and(|m| !m.mtp) {
            cx.report(
                Rule::SpeculativeNeedsMtp,
                msite,
                format!("{scope}.speculative.method"),
                format!("found `{}` with weights `{}`, expected weights with an MTP layer: the draft model is the MTP layer", s.method, model.map_or("", |m| m.weights)),
            );
        }
        if s.tokens == 0 || s.tokens > 15 {
            cx.report(
                Rule::SpeculativeTokenLimit,
                tsite,
                format!("{scope}.speculative.tokens"),
                format!("found {} speculative tokens, expected 1 to 15: the FIA operator needs `num_speculative_tokens + 1 <= 16` (speculative_decoding.md L63-64)", s.tokens),
            );
        } else if role == Role::Prefill && s.tokens != 1 {
            cx.report(
                Rule::SpeculativePrefillTokens,
                tsite,
                format!("{scope}.speculative.tokens"),
                format!("found {} speculative tokens on prefill, expected 1: prefill emits one token per request (multi-node doc L258-260)", s.tokens),
            );
        }
    }
    check_role_limits(facts, role, serve, cx);
    check_model_settings(facts, role, serve, dp_tp, cx);
    // Full graphs with several speculative tokens: each capture size must be
    // a multiple of `num_speculative_tokens + 1`
    // (docs/source/user_guide/feature_guide/speculative_decoding.md
    // @182b75ea84 L220; the V3.2 decode example uses [3, 6, 9, 12] with 2).
    if let (Some(g @ (GraphMode::Full | GraphMode::FullDecodeOnly)), Some(s)) =
        (serve.graph, &serve.speculative)
        && s.tokens > 1
    {
        let step = s.tokens.saturating_add(1);
        let block = match spec.roles.get(&role) {
            Some(b) if b.graph.is_some() => b,
            _ => &spec.serve,
        };
        let off: Vec<&Spanned<u64>> = block
            .capture_sizes
            .iter()
            .filter(|c| c.value % step != 0)
            .collect();
        if let Some(first) = off.first() {
            let sizes: Vec<String> = off.iter().map(|c| c.value.to_string()).collect();
            cx.report(
                Rule::CaptureSizesSpeculative,
                first.site,
                format!("{scope}.graph.capture_sizes"),
                format!(
                    "found capture size{} {} with `{}` graphs and {} speculative tokens on {role}, expected multiples of {step} (`num_speculative_tokens + 1`): in full-graph mode every captured graph holds whole decode steps of {step} tokens per sequence (speculative_decoding.md L220)",
                    if off.len() > 1 { "s" } else { "" },
                    sizes.join(", "),
                    g.as_str(),
                    s.tokens
                ),
            );
        }
    }
    if role == Role::Decode
        && let (Some(mbt), Some(seqs)) = (serve.max_num_batched_tokens, serve.max_num_seqs)
    {
        let spec_tokens = serve.speculative.as_ref().map_or(0, |s| s.tokens);
        let need = seqs.saturating_mul(spec_tokens.saturating_add(1));
        if mbt < need {
            cx.report(
                    Rule::DecodeBatchBudget,
                    site_in(spec, role, |b| b.max_num_batched_tokens.as_ref()),
                    "decode.max_num_batched_tokens",
                    format!(
                        "found decode `max_num_batched_tokens` {mbt}, expected at least {need} = {seqs} seqs x (1 + {spec_tokens}): every running sequence schedules its speculative tokens each step"
                    ),
                );
        }
    }
}

/// Role restrictions and limits vllm-ascend enforces at start-up that read
/// model facts: `enable_kv_nz`, `enable_reduce_sample`, `eplb_config`,
/// `max_num_seqs`, `block_size`, draft models.
fn check_role_limits(facts: &Facts<'_>, role: Role, serve: &Serve, cx: &mut Cx) {
    let Facts {
        spec, model, image, ..
    } = *facts;
    let scope = role.as_str();
    // enable_kv_nz: RuntimeError unless `is_deepseek_mla` and not sparse,
    // NotImplementedError unless kv_consumer (ascend_config.py @v0.18.0
    // L143-149, @v0.23.0 L274, @v0.26.0rc1 L280, @v0.30.0rc2 L900: the same
    // check at every release of the table).
    if serve.config_flag("enable_kv_nz") {
        let site = config_site(spec, role, "enable_kv_nz");
        let field = format!("{scope}.additional_config.enable_kv_nz");
        if role != Role::Decode {
            cx.report(
                Rule::KvNzDecodeOnly,
                site,
                field.clone(),
                format!("found `enable_kv_nz` on a {role} engine, expected it on decode engines of a PD layout only: vllm-ascend raises NotImplementedError unless the engine is a kv_consumer (ascend_config.py L251-259)"),
            );
        }
        if let Some(m) = model
            && m.attention != tables::Attention::Mla
        {
            cx.report(
                Rule::KvNzNeedsMla,
                site,
                field,
                format!(
                    "found `enable_kv_nz` with `{}` ({} attention), expected an MLA model without sparse attention: vllm-ascend raises RuntimeError \"only supported for mla\" (ascend_config.py L251-256)",
                    m.weights,
                    m.attention.as_str()
                ),
            );
        }
    }
    // enable_reduce_sample: ValueError on kv_producer and with lmhead TP
    // (ascend_config.py @v0.23.0 L318-340, @v0.27.1rc1 L729, @v0.29.0rc1
    // L819); the other images that read the key (v0.20.2rc1 to v0.29.0rc1,
    // the facts) run it unchecked, with the silent wrong results the check
    // was added for. v0.30.0rc1 no longer reads it (unknown key there).
    if serve.config_flag("enable_reduce_sample")
        && image.is_some_and(|i| i.reads_config_key("enable_reduce_sample"))
    {
        let site = config_site(spec, role, "enable_reduce_sample");
        let field = format!("{scope}.additional_config.enable_reduce_sample");
        if role == Role::Prefill {
            cx.report(
                Rule::ReduceSampleDecodeOnly,
                site,
                field.clone(),
                "found `enable_reduce_sample` on a prefill engine, expected it on decode or mixed engines only: reduce sampling is wrong on a kv_producer, which vllm-ascend rejects with ValueError (ascend_config.py L318-340 at v0.23.0)",
            );
        }
        let lmhead = serve
            .additional_config
            .get("finegrained_tp_config")
            .and_then(|f| f.get("lmhead_tensor_parallel_size"))
            .and_then(Json::as_u64)
            .is_some_and(|n| n > 0);
        if lmhead {
            cx.report(
                Rule::ReduceSampleDecodeOnly,
                site,
                field,
                format!("found `enable_reduce_sample` with `finegrained_tp_config.lmhead_tensor_parallel_size` on {role}, expected one of them: they are incompatible and vllm-ascend raises ValueError (ascend_config.py L327-332 at v0.23.0)"),
            );
        }
    }
    if let (Some(img), Some(eplb)) = (image, serve.additional_config.get("eplb_config")) {
        check_eplb_config(spec, role, img, eplb, cx);
    }
    if serve.max_model_len == Some(0) {
        cx.report(
            Rule::MaxModelLenPositive,
            site_in(spec, role, |b| b.max_model_len.as_ref()),
            format!("{scope}.max_model_len"),
            format!("found `max_model_len` 0 on {role}, expected at least 1: vLLM refuses it from 0.23.0 (vllm/config/model.py `validate_model_config_after`), and before that an engine of length 0 takes no request"),
        );
    }
    // max_num_seqs: `Field(ge=1)` in vllm/config/scheduler.py.
    if serve.max_num_seqs == Some(0) {
        cx.report(
            Rule::MaxNumSeqsPositive,
            site_in(spec, role, |b| b.max_num_seqs.as_ref()),
            format!("{scope}.max_num_seqs"),
            format!("found `max_num_seqs` 0 on {role}, expected at least 1: vLLM rejects it (`ge=1` in vllm/config/scheduler.py) and an engine must run a sequence"),
        );
    }
    if let (Some(bs), Some(m), Some(img)) = (serve.block_size, model, image) {
        let site = site_in(spec, role, |b| b.block_size.as_ref());
        let field = format!("{scope}.block_size");
        if m.attention == tables::Attention::V4Hybrid {
            let ok = tables::dsv4_block_sizes(img.tag);
            if !ok.contains(&bs) {
                cx.report(
                    Rule::BlockSizeBackend,
                    site,
                    field,
                    format!(
                        "found `block_size` {bs} for `{}` on image `{}`, expected one of {}: vllm-ascend replaces any other block size for DeepSeek-V4 with a warning (utils.py `refresh_block_size`)",
                        m.weights,
                        img.tag,
                        ok.iter().map(|b| format!("`{b}`")).collect::<Vec<_>>().join(", ")
                    ),
                );
            }
        } else if bs != 128 {
            // Every other model: 128 whenever prefix caching or chunked
            // prefill is on, and both are on unless turned off (utils.py
            // @v0.18.0 L1186-1189, @v0.23.0 L1404, @v0.30.0rc2 L1461).
            let no_chunked = serve
                .flags
                .iter()
                .any(|(n, _)| n == "--no-enable-chunked-prefill");
            if serve.prefix_caching != Some(false) || !no_chunked {
                cx.report(
                    Rule::BlockSizeBackend,
                    site,
                    field,
                    format!(
                        "found `block_size` {bs} for `{}`, expected `128`: vllm-ascend sets 128 whenever prefix caching or chunked prefill is on (utils.py `refresh_block_size`), so {bs} would never run",
                        m.weights
                    ),
                );
            }
        }
    }
    // A method vLLM runs only with a draft `model` (generated facts: the
    // image's vLLM, vllm/config/speculative.py `__post_init__`), which
    // pd-dsl renders from the model table's drafts alone.
    let needs_model = |method: &str| {
        image
            .and_then(|img| crate::upstream::vllm_of(img).ok())
            .and_then(|r| r.speculative_methods.iter().find(|x| x.name == method))
            .map_or(tables::DRAFT_METHODS.contains(&method), |x| x.needs_model)
    };
    if let (Some(s), Some(m)) = (&serve.speculative, model)
        && needs_model(&s.method)
        && !(tables::DRAFT_METHODS.contains(&s.method.as_str()) && m.draft(&s.method).is_some())
    {
        let site = spec
            .roles
            .get(&role)
            .and_then(|b| b.speculative.as_ref())
            .or(spec.serve.speculative.as_ref())
            .map_or(Site::NONE, |sp| sp.method.site);
        let known: Vec<&str> = m.drafts.iter().map(|d| d.method).collect();
        let expected = if known.is_empty() && m.mtp {
            "`mtp` (these weights carry an MTP layer)".to_owned()
        } else if known.is_empty() {
            "a method without a draft model (`ngram`, `suffix`)".to_owned()
        } else {
            format!("one of {}", list(known.into_iter()))
        };
        let why = if tables::DRAFT_METHODS.contains(&s.method.as_str()) {
            format!(
                "`{}` runs a separate draft model and the model table names none for these weights",
                s.method
            )
        } else {
            format!(
                "vLLM refuses `{}` without a draft `model` (vllm/config/speculative.py `SpeculativeConfig.__post_init__`), and a layout renders `model` only for the table's drafts ({})",
                s.method,
                tables::DRAFT_METHODS.join(", ")
            )
        };
        cx.report(
            Rule::SpeculativeNeedsDraft,
            site,
            format!("{scope}.speculative.method"),
            format!(
                "found speculative method `{}` with `{}`, expected {expected}: {why}",
                s.method, m.weights
            ),
        );
    }
}

/// Model-fact rules on one role's settings that are not about limits:
/// attention-specific keys, `enable_dsa_cp` without an indexer or without
/// sequence parallelism and the C8 KV + GQA + V1 transfer corruption.
fn check_model_settings(
    facts: &Facts<'_>,
    role: Role,
    serve: &Serve,
    dp_tp: Option<(u32, u32)>,
    cx: &mut Cx,
) {
    let Facts {
        spec, model, image, ..
    } = *facts;
    let Some(m) = model else { return };
    let scope = role.as_str();
    for k in tables::ATTENTION_CONFIG_KEYS {
        if serve.config_flag(k.name) && !k.attention.contains(&m.attention) {
            cx.report(
                Rule::ConfigKeyAttention,
                config_site(spec, role, k.name),
                format!("{scope}.additional_config.{}", k.name),
                format!(
                    "found `{}` with `{}` ({} attention), expected it only for {} models: {}, so here it is silently ignored",
                    k.name,
                    m.weights,
                    m.attention.as_str(),
                    k.attention
                        .iter()
                        .map(|a| a.as_str())
                        .collect::<Vec<_>>()
                        .join(" or "),
                    k.source
                ),
            );
        }
    }
    // enable_dsa_cp: `utils.enable_dsa_cp()` returns False before it reads
    // the key unless the model config has `index_topk` (vllm_ascend/utils.py
    // @v0.20.2rc1 L1389-1409, @v0.25.1rc1 L1374-1394, @v0.26.0rc1 L1386);
    // from v0.27.1rc1 `AscendConfig` ANDs the key with `has_indexer`
    // (ascend_config.py @v0.27.1rc1 L578-584, @v0.30.0rc2 L800-806), so on
    // any other model DSA context parallel never runs. (platform.py
    // @v0.30.0rc2 L531, L1279 also passes the key on, but only to round
    // capture sizes to TP multiples, not to turn context parallel on.)
    if serve.config_flag("enable_dsa_cp") && !m.attention.has_indexer() {
        cx.report(
            Rule::DsaCpNeedsIndexer,
            config_site(spec, role, "enable_dsa_cp"),
            format!("{scope}.additional_config.enable_dsa_cp"),
            format!(
                "found `enable_dsa_cp` with `{}` ({} attention), expected it only for models with the DSA indexer (DeepSeek-V3.2, GLM-5.x, DeepSeek-V4): vllm-ascend turns DSA context parallel on only when the model config has `index_topk` (utils.py `enable_dsa_cp`), so here it is silently ignored",
                m.weights,
                m.attention.as_str()
            ),
        );
    }
    // DSA CP needs SP: on the images whose row says `dsa_cp_checks_sp`
    // (v0.20.2rc1 to v0.26.0rc1, utils.py `enable_dsa_cp`; see the field),
    // `utils.enable_dsa_cp()` raises a ValueError when an indexer model sets
    // the key and `enable_sp()` is false, and the engine never starts.
    if python_truthy(serve.additional_config.get("enable_dsa_cp"))
        && m.attention.has_indexer()
        && let Some(img) = image.filter(|i| i.dsa_cp_checks_sp())
        && !sequence_parallel(serve, dp_tp.map(|(_, tp)| tp))
    {
        cx.report(
            Rule::DsaCpNeedsSp,
            config_site(spec, role, "enable_dsa_cp"),
            format!("{scope}.additional_config.enable_dsa_cp"),
            format!(
                "found `enable_dsa_cp` on {scope} with `{}` and sequence parallelism off, expected SP on: `additional_config.enable_flashcomm1: true`, env `VLLM_ASCEND_ENABLE_FLASHCOMM1: 1` (when the key is absent), or `enable_shared_expert_dp` with `expert_parallel` and TP > 1: image `{}` refuses to start with \"DSA CP requires SP to be enabled\" (utils.py `enable_dsa_cp`)",
                m.weights, img.tag
            ),
        );
    }
    // ascend_config.py `_check_mooncake_c8_kv_cache_quant` (@v0.23.0rc1 L35,
    // @v0.26.0rc1 L64, @v0.30.0rc2 L715; from v0.23.0rc1): the producer keeps bf16 KV while the consumer
    // allocates int8, and V1 moves raw bytes. Earlier images have no check
    // and transfer garbage, so this holds on every image.
    if role == Role::Decode
        && m.kv_c8
        && m.attention == tables::Attention::Gqa
        && let Some(c) = &spec.connector
        && c.kind.value == ConnectorKind::MooncakeV1
    {
        cx.report(
            Rule::C8KvGqaConnector,
            c.kind.site,
            "connector",
            format!(
                "found `mooncake_v1` moving the int8 (C8) KV cache of `{}`, a GQA model, expected `mooncake_layerwise`: the producer keeps bf16 KV and V1 copies raw bytes into the consumer's int8 cache{}",
                m.weights,
                if image.is_some_and(|i| i.version() >= tables::Version { major: 0, minor: 23, patch: 0, rc: Some(1) }) {
                    " (ValueError at start-up, ascend_config.py L374-398)"
                } else {
                    " (silent corruption: this image does not check it)"
                }
            ),
        );
    }
}

/// Python's `bool()` of a JSON value as vllm-ascend reads `additional_config`
/// (`bool(additional_config[key])`): absent, `false`, `null`, `0`, `""`, `[]`
/// and `{}` are false.
fn python_truthy(v: Option<&Json>) -> bool {
    match v {
        None | Some(Json::Null) | Some(Json::Bool(false)) => false,
        Some(Json::Bool(true)) => true,
        Some(Json::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Json::String(s)) => !s.is_empty(),
        Some(Json::Array(a)) => !a.is_empty(),
        Some(Json::Object(o)) => !o.is_empty(),
    }
}

/// Whether vllm-ascend's `enable_sp()` is true for a role, as the images of
/// `dsa_cp_checks_sp` images compute it (vllm_ascend/utils.py `enable_sp` @v0.20.2rc1
/// L906-932, @v0.23.0 L903-929, @v0.25.1rc1 L859-885, the same at every tag
/// in between): `additional_config.enable_flashcomm1` when the key is present
/// (even `false` wins over the env), else env `VLLM_ASCEND_ENABLE_FLASHCOMM1`
/// as an integer (envs.py @v0.23.0 L75); and `AscendConfig` forces it on when
/// `enable_shared_expert_dp` holds, which needs `--enable-expert-parallel` and
/// TP > 1 (ascend_config.py @v0.20.2rc1 L106-114, @v0.23.0 L114-122,
/// @v0.25.1rc1 L101-109). `ascend_config.enable_flashcomm1` reads the same key
/// and env (`_get_config_value`), so it is no separate switch.
fn sequence_parallel(serve: &Serve, tp: Option<u32>) -> bool {
    let flashcomm1 = match serve.additional_config.get("enable_flashcomm1") {
        Some(v) => python_truthy(Some(v)),
        None => serve
            .env_value("VLLM_ASCEND_ENABLE_FLASHCOMM1")
            .and_then(|v| match v {
                EnvValue::Literal(s) => s.trim().parse::<i64>().ok(),
                EnvValue::Prepend { .. } => None,
            })
            .is_some_and(|n| n != 0),
    };
    let shared_expert_dp = python_truthy(serve.additional_config.get("enable_shared_expert_dp"))
        && serve.expert_parallel
        && tp.is_some_and(|tp| tp > 1);
    flashcomm1 || shared_expert_dp
}

/// `eplb_config` is validated strictly by `EplbConfig` in
/// vllm_ascend/ascend_config.py: unknown sub-keys raise (`Config has no
/// attribute` @v0.18.0 L391 … @v0.26.0rc1 L884; a pydantic model with
/// `extra="forbid"` from @v0.27.1rc1 L110), and so do bad values. The
/// accepted sub-keys and `strict` are the facts' `eplb_config` entry.
fn check_eplb_config(spec: &LayoutSpec, role: Role, img: &Image, eplb: &Json, cx: &mut Cx) {
    let scope = role.as_str();
    let site = config_site(spec, role, "eplb_config");
    let field = format!("{scope}.additional_config.eplb_config");
    let Some(map) = eplb.as_object() else {
        cx.report(
            Rule::EplbConfigStrict,
            site,
            field,
            format!("found `eplb_config` {eplb}, expected a mapping of EPLB settings: vllm-ascend reads it as a dict (ascend_config.py `EplbConfig`)"),
        );
        return;
    };
    let known: Vec<&str> = tables::eplb_config_keys(img);
    // `strict` in the facts: `EplbConfig` raises for an unknown sub-key.
    let strict = img
        .facts()
        .and_then(|r| r.config_key("eplb_config"))
        .is_some_and(|k| k.strict);
    for (k, v) in map {
        if strict && !known.contains(&k.as_str()) {
            let hint = did_you_mean(k, known.iter().copied());
            let readers = tables::eplb_config_key_readers(k);
            let note = if readers.is_empty() {
                String::new()
            } else {
                format!(" (read by {})", crate::upstream::describe(&readers))
            };
            cx.report(
                Rule::EplbConfigStrict,
                site,
                format!("{field}.{k}"),
                format!(
                    "found `eplb_config.{k}` on image `{}`{note}, expected one of {}: vllm-ascend rejects any other key (`EplbConfig`: ValueError \"Config has no attribute\" to v0.26.0rc1, pydantic `extra=\"forbid\"` from v0.27.1rc1){hint}",
                    img.tag,
                    list(known.iter().copied())
                ),
            );
            continue;
        }
        let bad = match k.as_str() {
            "expert_heat_collection_interval"
            | "algorithm_execution_interval"
            | "num_redundant_experts" => {
                (!v.is_u64()).then_some("a non-negative integer (TypeError/ValueError otherwise)")
            }
            "eplb_policy_type" => v
                .as_u64()
                .is_none_or(|n| n > 3)
                .then_some("one of `0`, `1`, `2`, `3` (ValueError otherwise)"),
            "eplb_heat_collection_stage" => {
                (!matches!(v.as_str(), Some("all" | "prefill" | "decode"))).then_some(
                    "one of `\"all\"`, `\"prefill\"`, `\"decode\"` (ValueError otherwise)",
                )
            }
            "expert_map_path" | "expert_map_record_path" => (!v.is_null()
                && !v.as_str().is_some_and(|p| p.ends_with(".json")))
            .then_some("a path ending in `.json` (TypeError otherwise)"),
            // Not type-checked upstream: any non-empty string is truthy
            // there, so `"false"` would switch dynamic EPLB on.
            "dynamic_eplb" => (!v.is_boolean())
                .then_some("`true` or `false` (vllm-ascend reads it as a Python truth value, so `\"false\"` is on)"),
            _ => None,
        };
        if let Some(expected) = bad {
            cx.report(
                Rule::EplbConfigStrict,
                site,
                format!("{field}.{k}"),
                format!("found `eplb_config.{k}: {v}`, expected {expected}: `EplbConfig` checks its values at start-up (ascend_config.py L1028-1056)"),
            );
        }
    }
}

fn check_verification(spec: &LayoutSpec, image: Option<&Image>, cx: &mut Cx) -> bool {
    let (tag, on) = match &spec.verified.value {
        Verification::Never => return false,
        Verification::On(t) => (t, true),
        Verification::Before(t) => (t, false),
    };
    let Some(v) = Version::parse(&tag.value) else {
        cx.report(
            Rule::VerificationImage,
            tag.site,
            "verified",
            format!("found image {:?}, expected a vllm-ascend version like `v0.21.0rc1`: verification belongs to an image", tag.value),
        );
        return false;
    };
    let Some(img) = image else { return false };
    let newer = v > img.version();
    if newer {
        cx.report(
            Rule::VerificationImage,
            tag.site,
            "verified",
            format!("found verification on `{}`, expected an image no newer than the layout's `{}`: a layout cannot have been verified on a later image than it runs", tag.value, img.tag),
        );
        return false;
    }
    on && v == img.version()
}

// ---------------------------------------------------------------------------
// The whole pass
// ---------------------------------------------------------------------------

fn derive(spec: &LayoutSpec, cx: &mut Cx) -> Option<Layout> {
    check_texts(spec, cx);
    let (model, hw, image) = lookup_tables(spec, cx);
    let shapes = check_topology(spec, hw, cx);
    let wiring = check_wiring(spec, model, shapes.as_deref(), hw, image, cx);
    check_serve_block(&spec.serve, "serve", cx);
    for (role, block) in &spec.roles {
        check_serve_block(block, role.as_str(), cx);
    }
    for (node, block) in &spec.nodes {
        check_serve_block(block, &format!("nodes.{node}"), cx);
    }
    let verified = check_verification(spec, image, cx);
    let pd = spec.topology.iter().any(|g| g.role.value != Role::Mixed);
    let present: BTreeSet<Role> = spec.topology.iter().map(|g| g.role.value).collect();
    for role in spec.roles.keys() {
        if !present.contains(role) {
            let site = spec.roles.get(role).map_or(Site::NONE, |b| b.site);
            cx.report(
                Rule::TopologyRoles,
                site,
                role.as_str(),
                format!("found `{role}` settings but no `{role}` engines in the topology, expected settings only for roles that run: they would be silently unused"),
            );
        }
    }
    let facts = Facts {
        spec,
        model,
        hw,
        image,
        pd,
    };
    let mut serve = BTreeMap::new();
    for role in &present {
        let s = Serve::resolve(&spec.serve, spec.roles.get(role));
        let dp_tp = spec
            .topology
            .iter()
            .find(|g| g.role.value == *role)
            .map(|g| (u32_of(g.dp.value), u32_of(g.tp.value)));
        let pcp = spec
            .topology
            .iter()
            .find(|g| g.role.value == *role)
            .map_or(1, |g| u32_of(g.pcp()));
        check_serve(&facts, *role, &s, dp_tp, pcp, cx);
        serve.insert(*role, s);
    }
    let (model, hw, image, shapes, wiring) = (model?, hw?, image?, shapes?, wiring?);
    let image_ref = image.reference(hw)?;
    let placement = placement::place(&shapes, &wiring.input);
    // One id per node: as many as the engine has nodes.
    if let Some(ids) = &spec.engine_ids {
        for (role, list) in [(Role::Prefill, &ids.prefill), (Role::Decode, &ids.decode)] {
            let engines = placement.engines.iter().filter(|e| e.role == role);
            for (e, id) in engines.zip(list) {
                if let crate::spec::EngineId::PerNode(per) = id
                    && per.len() != e.nodes.len()
                {
                    cx.report(
                        Rule::EngineIdCount,
                        per.last().map_or(ids.site, |l| l.site),
                        format!("engine_ids.{role}"),
                        format!(
                            "found {} per-node engine ids for {role} engine {} on {} nodes, expected {}: one id per node of the engine (or one for the engine)",
                            per.len(),
                            e.role_index,
                            e.nodes.len(),
                            e.nodes.len()
                        ),
                    );
                }
            }
        }
    }
    // Settings per node: each names a node of the layout, and the node's
    // ranks run common + role + node settings, checked like a role's.
    let mut node_serve = BTreeMap::new();
    for (&node, block) in &spec.nodes {
        let Some(plan) = placement.nodes.get(node as usize) else {
            cx.report(
                Rule::NodeSettingsExist,
                block.site,
                format!("nodes.{node}"),
                format!(
                    "found settings for node {node}, expected a node of the layout (0 to {}): they would be silently unused",
                    placement.nodes.len().saturating_sub(1)
                ),
            );
            continue;
        };
        let role = plan.role;
        let (view, s) = node_view(spec, node, role);
        let facts = Facts {
            spec: &view,
            model: Some(model),
            hw: Some(hw),
            image: Some(image),
            pd,
        };
        let dp_tp = placement.engines.get(plan.engine).map(|e| (e.dp, e.tp));
        let pcp = placement.engines.get(plan.engine).map_or(1, |e| e.pcp);
        check_serve(&facts, role, &s, dp_tp, pcp, cx);
        node_serve.insert(node as usize, s);
    }
    let layout = Layout {
        spec: spec.clone(),
        model,
        hardware: hw,
        image,
        image_ref,
        placement,
        connector: wiring.input.connector,
        proxy: wiring.proxy,
        api_port: wiring.input.api_port,
        dp_rpc_port: wiring.dp_rpc,
        model_path: spec
            .model_path
            .as_ref()
            .map_or(model.default_path.to_owned(), |p| p.value.clone()),
        served_model_name: spec
            .served_model_name
            .as_ref()
            .map_or(model.served_name.to_owned(), |n| n.value.clone()),
        serve,
        node_serve,
        acknowledged: Vec::new(),
        verified,
    };
    check_ports(spec, &layout, hw, cx);
    check_capacity(spec, &layout, cx);
    for (&node, s) in &layout.node_serve {
        let Some(role) = layout.placement.nodes.get(node).map(|n| n.role) else {
            continue;
        };
        let (view, _) = node_view(spec, node as u32, role);
        let mut variant = layout.clone();
        variant.serve.insert(role, s.clone());
        variant.serve.retain(|r, _| *r == role);
        check_capacity(&view, &variant, cx);
    }
    Some(layout)
}

/// The layout as node `node`'s ranks see it: its role's block with the
/// node's block written on top (sites kept, so findings point at the
/// setting that causes them), and the settings those ranks run.
fn node_view(spec: &LayoutSpec, node: u32, role: Role) -> (LayoutSpec, Serve) {
    let mut view = spec.clone();
    let empty = ServeSpec::default();
    let over = spec.nodes.get(&node).unwrap_or(&empty);
    let merged = spec.roles.get(&role).unwrap_or(&empty).overlay(over);
    view.roles.insert(role, merged);
    let s = Serve::resolve(&view.serve, view.roles.get(&role));
    (view, s)
}

/// The memory budget of each role (capacity.rs) and vLLM's scheduler
/// checks that read `max_model_len`: weights must fit, one `max_model_len`
/// request must fit the KV cache, `max_model_len` stays within the model,
/// the batch limits agree, and the declared workload fits.
fn check_capacity(spec: &LayoutSpec, layout: &Layout, cx: &mut Cx) {
    let budgets = capacity::budget(layout);
    for (role, serve) in &layout.serve {
        let role = *role;
        let scope = role.as_str();
        let len_site = site_in(spec, role, |b| b.max_model_len.as_ref());
        let mbt_site = site_in(spec, role, |b| b.max_num_batched_tokens.as_ref());
        let seqs_site = site_in(spec, role, |b| b.max_num_seqs.as_ref());
        let (default_mbt, default_seqs) = capacity::default_batching(layout.hardware);
        let mbt = serve.max_num_batched_tokens.unwrap_or(default_mbt);
        let seqs = serve.max_num_seqs.unwrap_or(default_seqs);
        let unset = |set: bool| if set { "" } else { " (vLLM's default: unset)" };
        // vllm/config/scheduler.py `verify_max_model_len`: ValueError at
        // every vLLM the images ship (0.18.0 to 0.25.1).
        if mbt < seqs {
            cx.report(
                Rule::BatchedTokensCoverSeqs,
                if serve.max_num_batched_tokens.is_some() { mbt_site } else { seqs_site },
                format!("{scope}.max_num_batched_tokens"),
                format!(
                    "found {role} `max_num_batched_tokens` {mbt}{} below `max_num_seqs` {seqs}{}, expected at least {seqs}: vLLM raises ValueError \"max_num_batched_tokens must be greater than or equal to max_num_seqs\" (vllm/config/scheduler.py `verify_max_model_len`)",
                    unset(serve.max_num_batched_tokens.is_some()),
                    unset(serve.max_num_seqs.is_some()),
                ),
            );
        }
        let model_max = dims::dims_for(layout.model.id).map(|d| d.arch.max_model_len);
        let max_model_len = serve.max_model_len.or(model_max);
        let no_chunked = serve
            .flags
            .iter()
            .any(|(n, _)| n == "--no-enable-chunked-prefill");
        if no_chunked
            && let Some(len) = max_model_len
            && mbt < len
        {
            cx.report(
                Rule::BatchedTokensCoverModelLen,
                mbt_site,
                format!("{scope}.max_num_batched_tokens"),
                format!(
                    "found {role} `max_num_batched_tokens` {mbt}{} below `max_model_len` {len} with `--no-enable-chunked-prefill`, expected at least {len}: without chunked prefill a prompt is scheduled whole, and vLLM raises ValueError at start-up (vllm/config/scheduler.py `verify_max_model_len`)",
                    unset(serve.max_num_batched_tokens.is_some()),
                ),
            );
        }
        // vllm/config/model.py `_get_and_verify_max_len`: ValueError unless
        // VLLM_ALLOW_LONG_MAX_MODEL_LEN (vllm/envs.py); `--hf-overrides`
        // can change the derived length, so it is not judged then.
        let overrides = serve.flags.iter().any(|(n, _)| n == "--hf-overrides");
        if let (Some(len), Some(max)) = (serve.max_model_len, model_max)
            && len > max
            && !overrides
            && !capacity::allows_long_max_model_len(serve)
        {
            cx.report(
                Rule::MaxModelLenWithinModel,
                len_site,
                format!("{scope}.max_model_len"),
                format!(
                    "found `max_model_len` {len} on {role}, expected at most {max} for `{}` (its `max_position_embeddings` with RoPE scaling): vLLM raises ValueError \"User-specified max_model_len is greater than the derived max_model_len\" unless env `VLLM_ALLOW_LONG_MAX_MODEL_LEN=1` is set (vllm/config/model.py `_get_and_verify_max_len`)",
                    layout.model.weights
                ),
            );
        }
        let Some(b) = budgets.iter().find(|b| b.role == role) else {
            continue;
        };
        let over_total = b.kv_cache_memory_bytes.is_some() && b.requested_bytes > b.total_bytes;
        if b.kv_bytes <= 0 || over_total {
            cx.report(
                Rule::WeightsFit,
                site_in(spec, role, |b| b.gpu_memory_utilization.as_ref()),
                format!("{scope}.gpu_memory_utilization"),
                format!(
                    "found {role} weights of {} GiB and reserves of {} GiB per rank, expected them within the {} GiB vLLM may use: with no memory left for the KV cache vLLM raises \"No available memory for the cache blocks\" at start-up (vllm/v1/core/kv_cache_utils.py `_check_enough_kv_cache_memory`); spread the weights over more ranks or raise `gpu_memory_utilization`; budget: {}",
                    capacity::gib(b.weights.total()),
                    capacity::gib(b.reserves.total()),
                    capacity::gib(b.requested_bytes.min(b.total_bytes)),
                    b.summary()
                ),
            );
            continue;
        }
        if b.max_len_fits < b.max_model_len {
            let need = b
                .max_model_len
                .div_ceil(b.block_size)
                .saturating_mul(b.block_bytes)
                .saturating_add(b.kv_bytes_per_request);
            cx.report(
                Rule::MaxModelLenFitsKv,
                len_site,
                format!("{scope}.max_model_len"),
                format!(
                    "found `max_model_len` {} on {role}, expected at most {}: one request of that length needs {} GiB of KV cache ({} B per token) and a rank has {} GiB, so vLLM refuses to start (vllm/v1/core/kv_cache_utils.py `_check_enough_kv_cache_memory`); budget: {}",
                    b.max_model_len,
                    b.max_len_fits,
                    capacity::gib(need),
                    b.kv_bytes_per_token,
                    capacity::gib_signed(b.kv_bytes),
                    b.summary()
                ),
            );
        }
        if role == Role::Prefill {
            continue;
        }
        if let (Some(w), Some(bench)) = (b.workload, spec.bench.as_ref())
            && let Some(concurrency) = capacity::workload(layout).and_then(|(_, c)| c)
        {
            let site = bench
                .max_concurrency
                .as_ref()
                .map_or(bench.num_prompts.site, |c| c.site);
            if concurrency > w.seqs_total || concurrency > w.fit_total {
                let limit = w.seqs_total.min(w.fit_total);
                cx.report(
                    Rule::WorkloadConcurrency,
                    site,
                    "bench",
                    format!(
                        "found a workload of {concurrency} concurrent requests of {} tokens, expected at most {limit} on the {} {role} ranks: they run `max_num_seqs` {} each ({} in all) and their KV caches hold {} such requests ({} per rank of {} tokens); the rest queue",
                        w.tokens_per_request,
                        w.ranks,
                        b.max_num_seqs,
                        w.seqs_total,
                        w.fit_total,
                        w.fit_per_rank,
                        b.kv_tokens
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::UNEXPRESSED_GROUPS;

    /// The parallel-group flags the rule refuses are real `vllm serve`
    /// flags at every vLLM of the embedded tables, so the rule cannot
    /// silently match nothing after an upstream rename.
    #[test]
    fn unexpressed_groups_are_vllm_flags_everywhere() {
        for v in crate::upstream::vllm_versions() {
            let Ok(t) = crate::upstream::vllm(v) else {
                unreachable!("vllm {v} table parses")
            };
            for (flag, _, _) in UNEXPRESSED_GROUPS {
                let name = flag.trim_start_matches("--");
                assert!(t.flag(name).is_some(), "vllm {v} has no `{flag}`");
            }
        }
    }
}
