//! Free text: accepted, rendered, and inert.

use crate::{MIXED, PD, SCRATCH, config, hostile, rules_of, spec};
use pd_dsl::spec::{AllowSpec, DeviationSpec, EnvEntry, EnvValue, FigureSpec, FlagEntry};
use pd_dsl::{LayoutSpec, Rule, Spanned, render};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};

/// How many free-text fields [`set_text`] knows.
pub(crate) const TEXT_FIELDS: usize = 13;

/// The flag that carries hostile text: an option of every image's vLLM
/// that takes any string (`type=str`, no choices), so that
/// `serve_flag_accepted` lets it through as vLLM's parser does.
pub(crate) const TEXT_FLAG: &str = "--response-role";

/// Puts `v` in free-text field `which` (env value, flag value,
/// additional_config string, connector extra, allow reason, summary,
/// workload, deviation, figure, provenance source and refresh).
pub(crate) fn set_text(s: &mut LayoutSpec, which: usize, v: String) {
    match which {
        0 => s.serve.env.push(EnvEntry {
            name: "PD_HOSTILE".into(),
            value: Spanned::bare(EnvValue::Literal(v)),
        }),
        1 => s.serve.flags.push(FlagEntry {
            name: TEXT_FLAG.into(),
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
pub(crate) fn fill(s: &mut LayoutSpec, texts: &[String]) {
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
        prop_assert_eq!(after(TEXT_FLAG), Some(texts[1].clone()));
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

/// The flag's text (field 1) as a word argparse takes as the option's
/// value: one that starts with `-` is read as an option, which
/// `serve_flag_accepted` refuses (tests/tests/serve_flags_oracle.rs), so it
/// gets a leading `x`; the rest stays as hostile as generated.
pub(crate) fn flag_word(mut v: Vec<String>) -> Vec<String> {
    if let Some(t) = v.get_mut(1)
        && t.starts_with('-')
    {
        t.insert(0, 'x');
    }
    v
}

fn texts() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(hostile(), TEXT_FIELDS).prop_map(flag_word)
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
