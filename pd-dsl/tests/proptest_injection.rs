//! Property tests: hostile text in every user-supplied string field of a
//! layout either is rejected by a rule at check time, or renders to scripts
//! that still parse (`bash -n`) and that, when their value-handling parts
//! run (role templates and `run_mixed.sh` against a stub `vllm`, `run.sh` and
//! `proxy.sh` with `PD_DRY_RUN=1`, `verify.sh` against a stub `curl`,
//! `bench.sh` against the stub `vllm`), pass every value through exactly as
//! written and never execute any of it (a marker file is never created).
//!
//! Case counts stay moderate for CI (`PROPTEST_CASES` overrides them).

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl::render::{self, shell};
use pd_dsl::spec::{AllowSpec, DeviationSpec, EnvEntry, EnvValue, FigureSpec, FlagEntry};
use pd_dsl::{LayoutSpec, Rule, Spanned};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::LazyLock;

const PD: &str = include_str!("fixtures/v4_flash_a3_1p1d.json");
const MIXED: &str = include_str!("fixtures/v3_1_a2_mixed_2node.json");

fn spec(json: &str) -> LayoutSpec {
    serde_json::from_str(json).expect("fixture parses")
}

/// A scratch directory for the whole test binary: stubs, marker, outputs.
struct Scratch {
    _dir: tempfile::TempDir,
    root: PathBuf,
    bin: PathBuf,
    marker: PathBuf,
}

static SCRATCH: LazyLock<Scratch> = LazyLock::new(|| {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().to_path_buf();
    let bin = root.join("bin");
    std::fs::create_dir(&bin).expect("mkdir");
    // Stubs record their argv NUL-separated, plus the env var the layout sets.
    let vllm = "#!/usr/bin/env bash\n\
        printf '%s\\0' \"$@\" >\"$PD_TEST_OUT/argv.$(basename \"$0\").$$\"\n\
        printf '%s' \"${PD_HOSTILE-}\" >\"$PD_TEST_OUT/env.$$\"\n";
    let curl = "#!/usr/bin/env bash\n\
        printf '%s\\0' \"$@\" >\"$PD_TEST_OUT/argv.curl.$$\"\n\
        out=\nwhile (($#)); do if [[ $1 == -o ]]; then out=$2; fi; shift; done\n\
        printf '{\"choices\": [1]}' >\"$out\"\nprintf 200\n";
    for (name, text) in [("vllm", vllm), ("curl", curl)] {
        let p = bin.join(name);
        std::fs::write(&p, text).expect("stub");
        set_exec(&p);
    }
    let marker = root.join("PWNED");
    Scratch {
        _dir: dir,
        root,
        bin,
        marker,
    }
});

#[cfg(unix)]
fn set_exec(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// Pieces of hostile text; `MARK` becomes the marker path.
const PIECES: &[&str] = &[
    "'",
    "\"",
    "\\",
    "$(touch MARK)",
    "`touch MARK`",
    "; touch MARK",
    "' ; touch MARK ; '",
    "\" ; touch MARK ; \"",
    "$(touch MARK)'\"",
    "&& touch MARK",
    "| touch MARK",
    "${IFS}touch${IFS}MARK",
    "$((1+1))",
    "${HOME}",
    "$1",
    "$@",
    "!!",
    "*",
    "?",
    "~",
    "#",
    "%s%n",
    "--",
    "-n",
    " ",
    "\t",
    "模型",
    "🚀",
    "é",
    "@KV_PORT@",
    "@ENGINE_ID@",
    "{\"a\": [1]}",
    "\\'",
    "=",
    ",",
];

fn hostile() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => proptest::sample::select(PIECES).prop_map(str::to_owned),
        1 => any::<char>()
            .prop_filter("no control characters", |c| !c.is_control())
            .prop_map(String::from),
    ];
    proptest::collection::vec(piece, 0..6).prop_map(|v| {
        v.concat()
            .replace("MARK", &SCRATCH.marker.display().to_string())
    })
}

/// Text with one control character somewhere (never allowed in text).
fn with_control() -> impl Strategy<Value = String> {
    (
        hostile(),
        proptest::sample::select(&['\n', '\r', '\0', '\u{1b}', '\u{7f}', '\u{85}'][..]),
        hostile(),
    )
        .prop_map(|(a, c, b)| format!("{a}{c}{b}"))
}

fn config(cases: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

fn rules_of(spec: &LayoutSpec) -> Result<(), BTreeSet<&'static str>> {
    pd_dsl::check(spec)
        .map(drop)
        .map_err(|d| d.iter().map(|d| d.rule.name()).collect())
}

// ---------------------------------------------------------------------------
// Fields that cannot hold such text: rejected by their rule, or plain words
// ---------------------------------------------------------------------------

type Setter = fn(&mut LayoutSpec, String);

/// Fields whose values must be plain words, with the rule that guards each.
const PLAIN_FIELDS: &[(&str, Setter, &str)] = &[
    ("name", |s, v| s.name = v.into(), "name_format"),
    (
        "model_path",
        |s, v| s.model_path = Some(v.into()),
        "path_format",
    ),
    (
        "served_model_name",
        |s, v| s.served_model_name = Some(v.into()),
        "served_name_format",
    ),
    (
        "env name",
        |s, v| {
            s.serve.env.push(EnvEntry {
                name: v.into(),
                value: Spanned::bare(EnvValue::Literal("1".into())),
            })
        },
        "env_name_format",
    ),
    (
        "env prepend",
        |s, v| {
            s.serve.env.push(EnvEntry {
                name: "PD_EXTRA_PATH".into(),
                value: Spanned::bare(EnvValue::Prepend { prepend: v }),
            })
        },
        "path_format",
    ),
    (
        "flag name",
        |s, v| {
            s.serve.flags.push(FlagEntry {
                name: v.into(),
                value: None,
            })
        },
        "flag_format",
    ),
    (
        "derived_from",
        |s, v| s.provenance.derived_from = Some(v.into()),
        "name_format",
    ),
    (
        "recorded",
        |s, v| s.provenance.recorded = v.into(),
        "date_format",
    ),
    (
        "request_rate",
        |s, v| {
            if let Some(b) = &mut s.bench {
                b.request_rate = Some(v.into());
            }
        },
        "text_format",
    ),
    (
        "gpu_memory_utilization",
        |s, v| s.serve.gpu_memory_utilization = Some(v.into()),
        "gpu_memory_utilization",
    ),
    ("image", |s, v| s.image = v.into(), "unknown_image"),
    ("model", |s, v| s.model = v.into(), "unknown_model"),
    (
        "speculative method",
        |s, v| {
            if let Some(sp) = &mut s.serve.speculative {
                sp.method = v.into();
            }
        },
        "speculative_method_unknown",
    ),
];

proptest! {
    #![proptest_config(config(256))]

    /// Each plain field either passes check with a value the shell reads as
    /// one bare word (nothing to quote, so nothing to inject), or is rejected
    /// naming its rule.
    #[test]
    fn plain_fields_are_words_or_rejected(v in hostile(), which in 0..PLAIN_FIELDS.len()) {
        let (field, set, rule) = PLAIN_FIELDS[which];
        let mut s = spec(PD);
        set(&mut s, v.clone());
        match rules_of(&s) {
            Ok(()) => prop_assert_eq!(
                shell::quote(&v), v.clone(),
                "{} accepted {:?}, which needs quoting", field, v
            ),
            Err(rules) => prop_assert!(
                rules.contains(rule),
                "{} = {:?} rejected by {:?}, expected `{}`", field, v, rules, rule
            ),
        }
    }

    /// Control characters in any free-text field are rejected by
    /// `text_format`, whatever else the text holds.
    #[test]
    fn control_characters_are_rejected(v in with_control(), which in 0..TEXT_FIELDS) {
        let mut s = spec(PD);
        set_text(&mut s, which, v.clone());
        let rules = rules_of(&s).err().unwrap_or_default();
        prop_assert!(rules.contains("text_format"), "text field {} = {:?}: {:?}", which, v, rules);
    }
}

// ---------------------------------------------------------------------------
// Free text: accepted, rendered, and inert
// ---------------------------------------------------------------------------

/// How many free-text fields [`set_text`] knows.
const TEXT_FIELDS: usize = 13;

/// Puts `v` in free-text field `which` (env value, flag value,
/// additional_config string, connector extra, allow reason, summary,
/// workload, deviation, figure, provenance source and refresh).
fn set_text(s: &mut LayoutSpec, which: usize, v: String) {
    match which {
        0 => s.serve.env.push(EnvEntry {
            name: "PD_HOSTILE".into(),
            value: Spanned::bare(EnvValue::Literal(v)),
        }),
        1 => s.serve.flags.push(FlagEntry {
            name: "--hostile-value".into(),
            value: Some(Spanned::bare(v.into())),
        }),
        2 => {
            s.serve
                .additional_config
                .insert("pd_hostile".into(), Spanned::bare(v.into()));
        }
        3 => {
            if let Some(c) = &mut s.connector {
                c.extra.insert("pd_hostile".into(), Spanned::bare(v.into()));
            }
        }
        4 => s.summary.push(v),
        5 => s.workload = Some(v.into()),
        6 => s.deviations.push(DeviationSpec {
            what: v.into(),
            why: "hostile".into(),
        }),
        7 => s.deviations.push(DeviationSpec {
            what: "hostile".into(),
            why: v.into(),
        }),
        8 => s.figures.push(FigureSpec {
            metric: v.into(),
            value: "1 s".into(),
            context: "test".into(),
        }),
        9 => s.figures.push(FigureSpec {
            metric: "TTFT".into(),
            value: v.clone().into(),
            context: v.into(),
        }),
        10 => s.provenance.sources.push(v.into()),
        11 => s.provenance.refresh.push(v.into()),
        _ => s.allow.push(AllowSpec {
            rule: Rule::UnknownAdditionalConfigKey.name().into(),
            // A reason is never empty (`text_format`); the rest is hostile.
            reason: format!("why {v}").into(),
        }),
    }
}

/// Every free-text field at once, each with its own text. The
/// `additional_config` key is unknown to the image, so the layout
/// acknowledges that with a (hostile) reason.
fn fill(s: &mut LayoutSpec, texts: &[String]) {
    for (i, t) in texts.iter().enumerate() {
        set_text(s, i, t.clone());
    }
}

fn bash(dir: &Path, script: &str, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let sc = &*SCRATCH;
    let path = format!(
        "{}:{}",
        sc.bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut c = Command::new("bash");
    c.arg(dir.join(script))
        .args(args)
        .current_dir(dir)
        .env("PATH", path)
        .env("PD_TEST_OUT", dir)
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("bash runs")
}

fn fail(what: &str, o: &std::process::Output) -> TestCaseError {
    TestCaseError::fail(format!(
        "{what}: exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    ))
}

/// argv (NUL-separated) of every call a stub recorded under `dir`.
fn recorded(dir: &Path, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(prefix) {
            let bytes = std::fs::read(e.path()).expect("read");
            let text = String::from_utf8(bytes).expect("utf8 argv");
            out.push(text.split_terminator('\0').map(str::to_owned).collect());
            std::fs::remove_file(e.path()).expect("rm");
        }
    }
    out
}

/// Renders `spec`, checks every script with `bash -n`, runs the parts that
/// handle the layout's values and returns what the stub `vllm` saw.
fn render_and_run(spec: &LayoutSpec, texts: &[String]) -> Result<(), TestCaseError> {
    let layout =
        pd_dsl::check(spec).map_err(|d| TestCaseError::fail(format!("free text rejected: {d}")))?;
    let artifacts = render::render_layout(&layout)
        .map_err(|e| TestCaseError::fail(format!("checked layout does not render: {e}")))?;
    let tmp = tempfile::tempdir_in(&SCRATCH.root).expect("tempdir");
    let dir = tmp.path().join("layout");
    let local: Vec<render::Artifact> = artifacts
        .into_iter()
        .map(|mut a| {
            if let Ok(rest) = a.path.strip_prefix(layout.name()) {
                a.path = rest.to_path_buf();
            }
            a
        })
        .collect();
    render::write_catalog(&dir, &local).expect("write");
    for a in &local {
        if render::parse_check(a).is_err() {
            return Err(TestCaseError::fail(format!(
                "{} does not parse: {:?}",
                a.path.display(),
                render::parse_check(a)
            )));
        }
        if a.path.extension().is_some_and(|e| e == "sh") {
            let o = Command::new("bash")
                .arg("-n")
                .arg(dir.join(&a.path))
                .output()
                .expect("bash -n");
            if !o.status.success() {
                return Err(fail(&format!("bash -n {}", a.path.display()), &o));
            }
        }
    }
    // Distinct addresses: run.sh refuses two nodes with the same one.
    let node_ips = (1..=layout.node_count())
        .map(|i| format!("127.0.0.{i}"))
        .collect::<Vec<_>>()
        .join(",");
    let net = [
        ("HCCL_IF_IP", "127.0.0.1"),
        ("GLOO_SOCKET_IFNAME", "lo"),
        ("TP_SOCKET_IFNAME", "lo"),
        ("HCCL_SOCKET_IFNAME", "lo"),
        ("ENGINE_ID", "0"),
        ("KV_PORT", "36010"),
        ("PD_NODE_IPS", node_ips.as_str()),
        ("PD_NODE_INDEX", "0"),
        ("PD_LOCAL_IP", "127.0.0.1"),
        ("PD_NIC", "lo"),
    ];
    let mut vllm_runs: Vec<Vec<String>> = Vec::new();
    if layout.is_pd() {
        for t in ["run_dp_template_prefill.sh", "run_dp_template_decode.sh"] {
            let o = bash(
                &dir,
                t,
                &["0,1,2,3", "7100", "4", "0", "127.0.0.1", "12321", "4"],
                &net,
            );
            if !o.status.success() {
                return Err(fail(t, &o));
            }
        }
    } else {
        let o = bash(&dir, "run_mixed.sh", &["4", "0", "127.0.0.1", "0"], &net);
        if !o.status.success() {
            return Err(fail("run_mixed.sh", &o));
        }
    }
    vllm_runs.extend(recorded(&dir, "argv.vllm"));
    let env_seen: Vec<String> = std::fs::read_dir(&dir)
        .expect("read_dir")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("env."))
        .map(|e| std::fs::read_to_string(e.path()).expect("env"))
        .collect();
    let mut dry = net.to_vec();
    dry.push(("PD_DRY_RUN", "1"));
    let o = bash(&dir, "run.sh", &[], &dry);
    if !o.status.success() {
        return Err(fail("run.sh PD_DRY_RUN=1", &o));
    }
    let o = bash(&dir, "verify.sh", &["127.0.0.1"], &[]);
    if !o.status.success() {
        return Err(fail("verify.sh", &o));
    }
    let curl = recorded(&dir, "argv.curl");
    let o = bash(&dir, "bench.sh", &["127.0.0.1"], &[]);
    if !o.status.success() {
        return Err(fail("bench.sh", &o));
    }
    let bench = recorded(&dir, "argv.vllm");

    // Nothing ran.
    prop_assert!(
        !SCRATCH.marker.exists(),
        "injected text ran: the marker exists; texts {:?}",
        texts
    );
    // Every value arrived exactly as written.
    prop_assert!(!vllm_runs.is_empty(), "vllm was not started");
    for argv in &vllm_runs {
        let after = |flag: &str| {
            argv.iter()
                .position(|a| a == flag)
                .and_then(|i| argv.get(i + 1))
                .cloned()
        };
        prop_assert_eq!(after("--hostile-value"), Some(texts[1].clone()));
        let ac: serde_json::Value =
            serde_json::from_str(&after("--additional-config").unwrap_or_default())
                .map_err(|e| TestCaseError::fail(format!("--additional-config: {e}")))?;
        prop_assert_eq!(
            &ac["pd_hostile"],
            &serde_json::Value::from(texts[2].clone())
        );
        if layout.is_pd() {
            let kv: serde_json::Value =
                serde_json::from_str(&after("--kv-transfer-config").unwrap_or_default())
                    .map_err(|e| TestCaseError::fail(format!("--kv-transfer-config: {e}")))?;
            prop_assert_eq!(
                &kv["kv_connector_extra_config"]["pd_hostile"],
                &serde_json::Value::from(texts[3].clone())
            );
            prop_assert_eq!(&kv["kv_port"], &serde_json::Value::from("36010"));
        }
    }
    for e in &env_seen {
        prop_assert_eq!(e, &texts[0]);
    }
    prop_assert_eq!(curl.len(), 1, "verify.sh called curl once");
    prop_assert_eq!(bench.len(), 1, "bench.sh called vllm once");
    Ok(())
}

fn texts() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(hostile(), TEXT_FIELDS)
}

proptest! {
    #![proptest_config(config(24))]

    /// PD layout: every free-text field hostile at once.
    #[test]
    fn pd_scripts_pass_values_through_and_run_nothing(mut t in texts()) {
        // The role templates fill `@KV_PORT@` / `@ENGINE_ID@` into the
        // kv_transfer_config at run time: extras holding them are rejected.
        if pd_dsl::check::TEMPLATE_PLACEHOLDERS.iter().any(|p| t[3].contains(p)) {
            let mut s = spec(PD);
            fill(&mut s, &t);
            let rules = rules_of(&s).err().unwrap_or_default();
            prop_assert_eq!(rules, BTreeSet::from(["text_format"]));
            t[3] = t[3].replace('@', "(at)");
        }
        let mut s = spec(PD);
        fill(&mut s, &t);
        render_and_run(&s, &t)?;
    }

    /// Mixed layout (native DP over two nodes): the same.
    #[test]
    fn mixed_scripts_pass_values_through_and_run_nothing(t in texts()) {
        let mut s = spec(MIXED);
        s.connector = None;
        fill(&mut s, &t);
        render_and_run(&s, &t)?;
    }
}

// ---------------------------------------------------------------------------
// The HTML catalog and the topology picture
// ---------------------------------------------------------------------------

/// Markup pieces on top of [`PIECES`]: text that would open a tag, close an
/// attribute, start a comment or a script URL if it were not escaped.
const MARKUP: &[&str] = &[
    "<script>alert(1)</script>",
    "</p><b>",
    "\"><img src=x onerror=alert(1)>",
    "' onmouseover='alert(1)",
    "<!--",
    "-->",
    "]]>",
    "<![CDATA[",
    "</svg>",
    "&amp;",
    "&#60;",
    "javascript:alert(1)",
    "[x](javascript:alert(1))",
    "<",
    ">",
    "&",
];

fn hostile_markup() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        2 => proptest::sample::select(PIECES).prop_map(str::to_owned),
        2 => proptest::sample::select(MARKUP).prop_map(str::to_owned),
        1 => any::<char>()
            .prop_filter("no control characters", |c| !c.is_control())
            .prop_map(String::from),
    ];
    proptest::collection::vec(piece, 0..6).prop_map(|v| v.concat())
}

/// HTML escaping of text and attribute values, as askama's HTML escaper
/// documents it (numeric references for all five characters).
fn escaped(s: &str) -> String {
    s.replace('&', "&#38;")
        .replace('<', "&#60;")
        .replace('>', "&#62;")
        .replace('"', "&#34;")
        .replace('\'', "&#39;")
}

/// `s` as a page shows prose: escaped, and each pair of backticks around a
/// span a `<code>` element (an odd last backtick stays text).
fn with_code_spans(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    loop {
        let Some(open) = rest.find('`') else {
            out.push_str(&escaped(rest));
            return out;
        };
        let Some(len) = rest[open + 1..].find('`') else {
            out.push_str(&escaped(rest));
            return out;
        };
        out.push_str(&escaped(&rest[..open]));
        out.push_str("<code>");
        out.push_str(&escaped(&rest[open + 1..open + 1 + len]));
        out.push_str("</code>");
        rest = &rest[open + 2 + len..];
    }
}

/// Elements our pages, pictures and the Markdown guide use; anything else
/// was injected.
const TAGS: &[&str] = &[
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "nav",
    "main",
    "h1",
    "h2",
    "h3",
    "h4",
    "p",
    "a",
    "div",
    "table",
    "caption",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "figure",
    "figcaption",
    "code",
    "ol",
    "ul",
    "li",
    "strong",
    "em",
    "section",
    "form",
    "label",
    "select",
    "option",
    "output",
    "input",
    "script",
    "svg",
    "desc",
    "defs",
    "marker",
    "path",
    "rect",
    "text",
    "g",
    "pre",
    // What the scenario guide's Markdown can produce besides the above.
    "blockquote",
    "hr",
    "br",
    "img",
    "h5",
    "h6",
    "del",
    "sup",
];

/// Scans markup: every `<` opens an allowed element (or the doctype), every
/// attribute is quoted with `"` and is not an event handler, no `href` is a
/// script URL, and the only scripts are our own (`scripts` of them).
fn check_markup(what: &str, doc: &str, scripts: usize) -> Result<(), TestCaseError> {
    let err = |m: String| TestCaseError::fail(format!("{what}: {m}"));
    let mut rest = doc;
    let mut seen_scripts = 0;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        if let Some(r) = rest.strip_prefix("!DOCTYPE html>") {
            rest = r;
            continue;
        }
        let closing = rest.starts_with('/');
        let body = rest.trim_start_matches('/');
        let name: String = body
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect();
        if !TAGS.contains(&name.as_str()) {
            let ctx: String = rest.chars().take(40).collect();
            return Err(err(format!("unexpected markup `<{ctx}`")));
        }
        let end = body
            .find('>')
            .ok_or_else(|| err(format!("unterminated `<{name}`")))?;
        let mut attrs = &body[name.len()..end];
        while let Some(eq) = attrs.find('=') {
            let key = attrs[..eq].trim().trim_end_matches('/');
            let key = key.rsplit(' ').next().unwrap_or(key);
            let value_and_rest = &attrs[eq + 1..];
            let Some(v) = value_and_rest.strip_prefix('"') else {
                return Err(err(format!("unquoted attribute `{key}` in `<{name}`")));
            };
            let close = v
                .find('"')
                .ok_or_else(|| err(format!("unterminated attribute `{key}`")))?;
            let value = &v[..close];
            if key.to_ascii_lowercase().starts_with("on") {
                return Err(err(format!("event handler attribute `{key}`")));
            }
            if (key == "href" || key == "src")
                && value.trim().to_ascii_lowercase().starts_with("javascript:")
            {
                return Err(err(format!("script URL in `{key}`")));
            }
            attrs = &v[close + 1..];
        }
        rest = &body[end + 1..];
        if !closing && (name == "script" || name == "style") {
            seen_scripts += usize::from(name == "script");
            let close = format!("</{name}>");
            let at = rest
                .find(&close)
                .ok_or_else(|| err(format!("unterminated `<{name}>`")))?;
            if rest[..at].contains('<') {
                return Err(err(format!("markup inside `<{name}>`")));
            }
            rest = &rest[at..];
        }
    }
    if seen_scripts != scripts {
        return Err(err(format!(
            "{seen_scripts} script element(s), expected {scripts}"
        )));
    }
    Ok(())
}

/// Renders `spec` with the catalog's HTML (`guide` as the scenario guide) and
/// checks every page and picture; `texts` must show up escaped.
fn render_site(spec: &LayoutSpec, texts: &[String], guide: &str) -> Result<(), TestCaseError> {
    let layout =
        pd_dsl::check(spec).map_err(|d| TestCaseError::fail(format!("free text rejected: {d}")))?;
    let artifacts = render::render_catalog_with(std::slice::from_ref(&layout), Some(guide))
        .map_err(|e| TestCaseError::fail(format!("checked layout does not render: {e}")))?;
    let find = |p: &str| {
        artifacts
            .iter()
            .find(|a| a.path == Path::new(p))
            .map(|a| a.contents.as_str())
            .ok_or_else(|| TestCaseError::fail(format!("no `{p}` rendered")))
    };
    let name = layout.name();
    let page = find(&format!("{name}/index.html"))?;
    let svg = find(&format!("{name}/topology.svg"))?;
    let index = find("index.html")?;
    // Our own scripts only: every page's copy buttons (base.html), and the
    // index's filters; a text that smuggled one in would add to the count.
    check_markup("layout page", page, 1)?;
    check_markup("topology.svg", svg, 0)?;
    check_markup("index.html", index, 2)?;
    // The free texts the page shows (summary, workload, deviations, figures,
    // provenance, the allow reason), each escaped, never raw.
    for (i, t) in texts.iter().enumerate().skip(4) {
        let shown = match i {
            4 | 5 => t.trim().to_owned(),
            12 => format!("why {t}"),
            _ => t.clone(),
        };
        prop_assert!(
            page.contains(&escaped(&shown)) || page.contains(&with_code_spans(&shown)),
            "field {} not shown escaped on the page: {:?}",
            i,
            shown
        );
    }
    // The guide's links keep no script URL, and its raw HTML is text.
    prop_assert!(!index.contains("href=\"javascript:"));
    Ok(())
}

fn markup_texts() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(hostile_markup(), TEXT_FIELDS)
}

proptest! {
    #![proptest_config(config(64))]

    /// Every free-text field and the scenario guide hostile at once: the
    /// pages and the picture hold only our markup, every text escaped.
    #[test]
    fn html_and_svg_escape_every_text(mut t in markup_texts(), guide in hostile_markup()) {
        if pd_dsl::check::TEMPLATE_PLACEHOLDERS.iter().any(|p| t[3].contains(p)) {
            t[3] = t[3].replace('@', "(at)");
        }
        let mut s = spec(PD);
        fill(&mut s, &t);
        render_site(&s, &t, &format!("## Guide\n\n{guide}\n\n[start]({guide})\n"))?;
        let mut s = spec(MIXED);
        s.connector = None;
        fill(&mut s, &t);
        render_site(&s, &t, &guide)?;
    }
}
