//! `serve_flag_accepted` against vLLM's own parser: for every vLLM the
//! images ship, every `vllm serve` option is written into a layout's
//! `flags` with no value and with words chosen to reach each branch of the
//! parser (words that start with `-`, negative numbers, words with spaces
//! or dots, `-O<level>`, words its `type=` or `choices` refuse), and the
//! rule's verdict is compared with what the parser `vllm serve` builds from
//! the release's source says of the same argv
//! (`scripts/upstream/crosscheck_vllm_parser.py argv`, which runs vLLM's
//! `ServeSubcommand.subparser_init` and `FlexibleArgumentParser.parse_args`
//! from the corpus sdist). Two directions:
//!
//! - whatever vLLM's parser refuses, the layout is refused (by this rule or
//!   another), unless the refusal is about a value whose `type=` or
//!   `choices` the generated facts mark as unread, or about a JSON value
//!   the config class's validation refuses;
//! - whatever `serve_flag_accepted` refuses, vLLM's parser refuses too,
//!   except a bare-able option (`--hf-token`) before an option-like word,
//!   which vLLM takes bare, losing the layout's value.
//!
//! Choices vllm-ascend widens in the image are not compared (the oracle's
//! parser is vLLM's without the platform plugin).
//!
//! The rehearsal's stand-in `vllm` parses the same argv with the image's
//! flag table (`pd_rehearse::serve_flags::parse`) and must refuse whatever
//! vLLM's parser refuses (never looser) and take whatever it takes (never
//! stricter), with the same exemptions.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl::check::check;
use pd_dsl::spec::LayoutSpec;
use pd_dsl::tables::IMAGES;
use pd_dsl::upstream::{Choices, FlagKind, ServeFlag, ValueType, vllm_of};
use pd_dsl_tests::harness::workspace_python;
use pd_rehearse::serve_flags::{Flags, parse};
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// Words given as the value of every valued option: each reaches a
/// different branch of `FlexibleArgumentParser.parse_args` and argparse's
/// `_parse_optional`.
const WORDS: &[&str] = &[
    "-n",
    "--",
    "-",
    "-1",
    "-0.5",
    "-.5",
    "-1x",
    "-x y",
    "-x.y",
    "-O3",
    "-O",
    "--foo_bar",
    "--max bar",
    "abc",
    "1",
    "2.5",
    "1_000",
];

/// A JSON object with a key no vLLM config class has: vLLM's parser
/// validates a dataclass option's JSON with pydantic as its `type=`, and
/// the classes forbid other keys, so it refuses this word for those
/// options and takes it for plain dict options. Judged strictly (no
/// content exemption): `serve_flag_accepted` and the stand-in refuse it
/// exactly where vLLM does.
const UNKNOWN_KEY: &str = r#"{"pd_dsl_no_such_key": 1}"#;

/// The layout every case starts from: a 1P1D layout the rules accept on
/// every image, whose prefill role passes `flags`.
fn layout(image: &str, flags: Value) -> Value {
    json!({
        "name": "demo/a3-1p1d",
        "model": "deepseek_r1_0528_w8a8",
        "hardware": "a3",
        "image": image,
        "topology": [
            {"role": "prefill", "count": 1, "dp": 2, "tp": 8},
            {"role": "decode", "count": 1, "dp": 4, "tp": 4}
        ],
        "connector": {"kind": "mooncake_v1", "kv_port": {"prefill": [36100], "decode": [36200]}},
        "ports": {"api": 7100, "dp_rpc": 12321},
        "proxy": {"port": 1999},
        "serve": {"expert_parallel": true, "max_model_len": 32768},
        "roles": {"prefill": {"flags": flags}},
        "provenance": {"recorded": "2026-08-20"}
    })
}

/// The findings of a layout, as (rule, field, message).
fn findings(v: &Value) -> BTreeSet<(String, String, String)> {
    let spec: LayoutSpec = serde_json::from_value(v.clone()).expect("test layout parses");
    match check(&spec) {
        Ok(_) => BTreeSet::new(),
        Err(d) => d
            .iter()
            .map(|d| {
                (
                    d.rule.name().to_string(),
                    d.field.clone(),
                    d.message.clone(),
                )
            })
            .collect(),
    }
}

/// What vLLM's parser says of each argv (`None`: it takes it).
fn oracle(version: &str, cases: &[Vec<String>]) -> Vec<Option<String>> {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("cases.json");
    std::fs::write(&path, serde_json::to_string(cases).unwrap()).unwrap();
    // A parser that cannot be built says why (a missing module of vLLM's
    // docs build: scripts/test.sh installs them).
    let path = path.to_str().expect("UTF-8 temp path");
    let out = workspace_python(&[
        "scripts/upstream/crosscheck_vllm_parser.py",
        "argv",
        version,
        path,
    ]);
    let verdicts: Vec<Option<String>> = serde_json::from_str(&out).expect("JSON verdicts");
    assert_eq!(verdicts.len(), cases.len());
    verdicts
}

/// Whether the facts leave `word`, given to the option, unjudged: its
/// `type=` or its `choices` could not be read, or it is a JSON option and
/// the word parses as JSON (or is read only by vLLM's leniencies): what
/// vLLM then refuses is the config class's validation of the value, which
/// the rule does not repeat. A JSON option's word that is not JSON is
/// judged (the rule's `ServeFlag::json_word_refusal`, written again here
/// so the exemption does not lean on the code it tests).
fn words_unread(f: &ServeFlag, word: Option<&str>) -> bool {
    if f.kind == FlagKind::Json {
        // Independent of the rule's own test: JSON by serde, or a word with
        // what only vLLM's leniencies read, or one its helper keeps as text.
        return word.is_some_and(|w| {
            serde_json::from_str::<Value>(w).is_ok()
                || w.contains("NaN")
                || w.contains("Infinity")
                || w.as_bytes()
                    .windows(2)
                    .any(|p| p[0].is_ascii_digit() && b"kKmMgGtT".contains(&p[1]))
                || f.is_json_word(w) == Ok(false)
        });
    }
    matches!(f.value_type, Some(ValueType::Unread { .. }) | None)
        || matches!(f.choices, Some(Choices::Unread { .. }))
}

/// Whether a refusal of vLLM's parser is about the value's content
/// (`type=`, `choices` or a custom action) rather than its shape.
fn about_content(refusal: &str) -> bool {
    !(refusal.contains("expected one argument")
        || refusal.contains("expected at least one argument")
        || refusal.contains("unrecognized arguments")
        || refusal.contains("ambiguous option")
        || refusal.starts_with("IndexError"))
}

#[test]
fn serve_flag_accepted_agrees_with_vllms_parser() {
    let mut seen = BTreeSet::new();
    let mut disagreements = Vec::new();
    let mut compared = 0;
    let mut unknown_key_refused = 0;
    for img in &IMAGES {
        let Ok(vllm) = vllm_of(img) else { continue };
        if !seen.insert(vllm.version.clone()) {
            continue;
        }
        let baseline = findings(&layout(img.tag, json!([])));
        assert!(
            baseline.is_empty(),
            "{}: the base layout is refused: {baseline:?}",
            img.tag
        );
        let mut cases: Vec<(Vec<String>, Value, &ServeFlag)> = Vec::new();
        for f in &vllm.serve_flags {
            let name = format!("--{}", f.name);
            cases.push((vec![name.clone()], json!({ "name": name }), f));
            let words: Vec<String> = match f.kind {
                FlagKind::Switch => vec!["x".into()],
                FlagKind::Json => {
                    let mut w: Vec<String> = WORDS.iter().map(|s| (*s).to_string()).collect();
                    w.push(UNKNOWN_KEY.into());
                    w
                }
                _ => {
                    let mut w: Vec<String> = WORDS.iter().map(|s| (*s).to_string()).collect();
                    if let Some(Choices::Read { values }) = &f.choices {
                        w.extend(values.iter().take(1).map(|v| match v {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        }));
                        w.push("not-a-choice".into());
                    }
                    w
                }
            };
            for word in words {
                cases.push((
                    vec![name.clone(), word.clone()],
                    json!({ "name": name, "value": word }),
                    f,
                ));
            }
        }
        let argv: Vec<Vec<String>> = cases.iter().map(|(a, _, _)| a.clone()).collect();
        let verdicts = oracle(&vllm.version, &argv);
        let standin = Flags::of_image(img.tag).expect("the stand-in's flag table");
        for ((argv, flag, f), real) in cases.iter().zip(verdicts) {
            let ours = findings(&layout(img.tag, json!([flag])));
            let ours_flag: Vec<&String> = ours
                .iter()
                .filter(|(rule, _, _)| rule == "serve_flag_accepted")
                .map(|(_, _, m)| m)
                .collect();
            compared += 1;
            let word = argv.get(1).map(String::as_str);
            // vllm-ascend widens these choices in the image (the generated
            // `parser_choices_widened`); the oracle's parser is vLLM's alone.
            let widened = img
                .facts()
                .is_some_and(|r| r.widens_choices(&f.name).is_some());
            // A bare-able option before an option-like word: vLLM takes the
            // option bare and the word as an option of its own, so the
            // layout's value is lost, which the rule refuses.
            let value_lost =
                f.value_optional && word.is_some_and(|w| vllm.value_word_refusal(w).is_some());
            let mut words = vec!["/model".to_string()];
            words.extend(argv.iter().cloned());
            let standin_says = parse(standin, &words).err();
            let strict = word == Some(UNKNOWN_KEY);
            if strict && real.is_some() {
                unknown_key_refused += 1;
            }
            let exempt_content =
                |why: &str| !strict && about_content(why) && (words_unread(f, word) || widened);
            match (&real, &standin_says) {
                (Some(why), None) if !exempt_content(why) => disagreements.push(format!(
                    "vLLM {}: `{}`: vLLM refuses ({why}), the stand-in takes it",
                    vllm.version,
                    argv.join(" ")
                )),
                (None, Some(why)) if !value_lost => disagreements.push(format!(
                    "vLLM {}: `{}`: vLLM takes it, the stand-in refuses: {why}",
                    vllm.version,
                    argv.join(" ")
                )),
                _ => {}
            }
            match (&real, ours.is_empty()) {
                (Some(why), true) if !exempt_content(why) => {
                    disagreements.push(format!(
                        "vLLM {}: `{}`: vLLM refuses ({why}), the layout is accepted",
                        vllm.version,
                        argv.join(" ")
                    ));
                }
                (None, _) if !ours_flag.is_empty() && !value_lost => disagreements.push(format!(
                    "vLLM {}: `{}`: vLLM takes it, serve_flag_accepted refuses: {}",
                    vllm.version,
                    argv.join(" "),
                    ours_flag[0]
                )),
                _ => {}
            }
        }
    }
    assert!(compared > 10_000, "only {compared} cases compared");
    // Every vLLM refuses the unknown key for its dataclass options (at
    // least attention, compilation, EPLB, kernel, profiler and structured
    // outputs at each of the 12 versions).
    assert!(
        unknown_key_refused >= 12 * 6,
        "only {unknown_key_refused} dataclass options refused the unknown key"
    );
    assert!(
        disagreements.is_empty(),
        "{} of {compared} cases disagree:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}
