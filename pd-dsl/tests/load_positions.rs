//! The runtime loader reports `file:line:column: message [rule `name`]`, with
//! the same rule names as the macro, for YAML and JSON alike.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl::load::{self, LoadError, Position};

const JSON: &str = include_str!("fixtures/v4_flash_a3_1p1d.json");
const YAML: &str = include_str!("../../examples/layouts/a3-1p1d.yaml");

/// 1-based line and column of the `n`th (from 0) occurrence of `needle`.
fn find(text: &str, needle: &str, n: usize) -> Position {
    let (at, _) = text
        .match_indices(needle)
        .nth(n)
        .unwrap_or_else(|| panic!("{needle:?} not in text"));
    let before = &text[..at];
    let line = before.matches('\n').count() as u64 + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() as u64 + 1;
    Position { line, column: col }
}

fn rules(e: &LoadError) -> Vec<(String, Option<Position>)> {
    match e {
        LoadError::Rules {
            diagnostics,
            positions,
            ..
        } => diagnostics
            .iter()
            .zip(positions)
            .map(|(d, p)| (d.rule.name().to_owned(), *p))
            .collect(),
        LoadError::Parse { .. } => panic!("expected rule errors, got {e}"),
    }
}

#[test]
fn yaml_rule_errors_point_at_the_value() {
    let text = YAML.replace("tp: 4 }", "tp: 3 }");
    let e = load::from_yaml("a3.yaml", &text).expect_err("tp3");
    let at = find(&text, "3 }", 0);
    assert_eq!(rules(&e), [("tp_divides_node".to_owned(), Some(at))]);
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!("a3.yaml:{at}: found `tp3`"))
            && msg.ends_with("[rule `tp_divides_node`]"),
        "{msg}"
    );
}

#[test]
fn json_rule_errors_point_at_the_value() {
    let text = JSON
        .replace("\"tp\": 4", "\"tp\": 3")
        .replace("\"api\": 7100", "\"api\": 36010");
    let e = load::from_json("l.json", &text).expect_err("rules");
    let got = rules(&e);
    assert!(
        got.contains(&("tp_divides_node".to_owned(), Some(find(&text, "3}", 0)))),
        "{got:?}"
    );
    // Every diagnostic has a position, each line is `file:line:col: ... [rule]`.
    assert!(got.iter().all(|(_, p)| p.is_some()), "{got:?}");
    for line in e.lines() {
        assert!(
            line.starts_with("l.json:") && line.contains("[rule `"),
            "{line}"
        );
    }
    // The same text read as YAML gives the same rules at the same places.
    let y = load::from_yaml("l.json", &text).expect_err("rules");
    assert_eq!(rules(&y), got);
}

#[test]
fn hostile_values_are_rejected_with_their_position() {
    let text = JSON
        .replace("\"/root/model\"", "\"/root/$(reboot)\"")
        .replace(
            "\"served_model_name\": \"dsv4\"",
            "\"served_model_name\": \"a b\"",
        );
    let e = load::from_json("h.json", &text).expect_err("path_format");
    let got = rules(&e);
    assert!(
        got.contains(&(
            "path_format".to_owned(),
            Some(find(&text, "\"/root/$(reboot)\"", 0))
        )),
        "{got:?}"
    );
}

#[test]
fn a_value_without_a_site_points_at_its_field() {
    // The summary has no site; the diagnostic's field path finds it.
    let text = JSON.replace("\"summary\": [\n    \"", "\"summary\": [\n    \"\\u0007");
    let e = load::from_json("s.json", &text).expect_err("text_format");
    let got = rules(&e);
    assert_eq!(
        got,
        [("text_format".to_owned(), Some(find(&text, "\"\\u0007", 0)))]
    );
}

#[test]
fn parse_errors_carry_line_and_column() {
    let e = load::from_yaml("p.yaml", "name: demo/x\nmodel: [\n").expect_err("syntax");
    let LoadError::Parse { position, .. } = &e else {
        panic!("{e}")
    };
    assert!(position.is_some(), "{e}");
    assert!(e.to_string().starts_with("p.yaml:"), "{e}");

    let text = YAML.replace("image:", "imgae:");
    let e = load::from_yaml("u.yaml", &text).expect_err("unknown field");
    let at = find(&text, "imgae", 0);
    assert_eq!(
        e.to_string().lines().next(),
        Some(format!("u.yaml:{at}: unknown field `imgae`, expected one of summary, name, model, hardware, image, topology, connector, ports, proxy, engine_ids, model_path, served_model_name, serve, roles, nodes, provenance, verified, allow, deviations, workload, bench, figures").as_str())
    );

    let e = load::from_json("p.json", "{\n  \"name\": }").expect_err("syntax");
    assert_eq!(e.to_string(), "p.json:2:11: expected value");
    let e = load::from_json("p.json", "").expect_err("empty");
    assert!(
        e.to_string().starts_with("p.json:1:0: EOF") || e.to_string().starts_with("p.json"),
        "{e}"
    );
}

#[test]
fn the_valid_files_load() {
    assert!(load::from_yaml("a3.yaml", YAML).is_ok());
    assert!(load::from_json("l.json", JSON).is_ok());
    assert!(load::from_yaml("l.json", JSON).is_ok());
}

/// Files take the macro's new fields: per-role ports and capture sizes, with
/// errors at the offending value.
#[test]
fn yaml_per_role_ports_and_capture_sizes() {
    let text = YAML
        .replace(
            "ports: { api: 7100, dp_rpc: 12321 }",
            "ports: { api: 7100, dp_rpc: 12321, decode: { api: 9000, dp_rpc: 13000 } }",
        )
        .replace(
            "graph: full_decode_only }",
            "graph: full_decode_only, capture_sizes: [8, 0] }",
        );
    let e = load::from_yaml("a3.yaml", &text).expect_err("size 0");
    let comma = find(&text, "[8, 0]", 0);
    let zero = Position {
        line: comma.line,
        column: comma.column + 4,
    };
    assert_eq!(rules(&e), [("graph_capture_sizes".to_owned(), Some(zero))]);
    let ok = text.replace("[8, 0]", "[8, 16]");
    let layout = load::from_yaml("a3.yaml", &ok).expect("valid");
    let decode = layout
        .placement
        .engines
        .iter()
        .find(|e| e.role == pd_dsl::Role::Decode)
        .expect("decode engine");
    assert_eq!((decode.api_port, decode.dp_rpc_port), (9000, Some(13000)));
    assert_eq!(layout.serve[&pd_dsl::Role::Decode].capture_sizes, [8, 16]);
}

/// YAML reads a lone `\r` as a line break, editors and `grep -n` do not: the
/// loader refuses it where it is (the importer's rule, one function), so no
/// position after it is reported on a shifted line.
#[test]
fn a_lone_carriage_return_is_refused_where_it_is() {
    // In a comment, so YAML alone would accept the document.
    let text = YAML.replacen("# A layout kept", "# A layout\r# kept", 1);
    let text = text.replace("tp: 4 }", "tp: 3 }");
    let at = Position {
        line: 1,
        column: 11,
    };
    assert_eq!(find(&text, "\r", 0), at);
    for e in [
        load::from_yaml("cr.yaml", &text).expect_err("lone cr"),
        load::parse_yaml("cr.yaml", &text).expect_err("lone cr"),
    ] {
        let LoadError::Parse { position, .. } = &e else {
            panic!("expected the lone `\\r` refused, got {e}")
        };
        assert_eq!(*position, Some(at), "{e}");
        assert_eq!(
            e.to_string(),
            format!(
                "cr.yaml:{at}: found a carriage return (`\\r`) without a line feed, expected `\\n` or `\\r\\n` line ends: YAML reads a lone `\\r` as a line break where editors and shells do not, so every position after it would be wrong"
            )
        );
    }
    // On a later line, inside a value, at its column.
    let text = YAML.replacen("demo/a3-1p1d-from-yaml", "demo/a3-1p1d\r-from-yaml", 1);
    let e = load::from_yaml("cr.yaml", &text).expect_err("lone cr");
    let at = find(&text, "\r", 0);
    assert_eq!((at.line, at.column), (2, 19));
    assert!(
        e.to_string()
            .starts_with(&format!("cr.yaml:{at}: found a carriage return")),
        "{e}"
    );
    // CRLF line ends are not lone: the same rule at the same place as LF.
    let lf = YAML.replace("tp: 4 }", "tp: 3 }");
    let crlf = lf.replace('\n', "\r\n");
    let e = load::from_yaml("crlf.yaml", &crlf).expect_err("tp3");
    assert_eq!(
        rules(&e),
        [("tp_divides_node".to_owned(), Some(find(&lf, "3 }", 0)))]
    );
    // JSON counts `\r` as whitespace, never a line break: accepted, and a
    // rule after it points at its line as counted on `\n`.
    let text = JSON
        .replacen("{\n", "{\r\n", 1)
        .replacen(",\n", ",\r \n", 1)
        .replace("\"tp\": 4", "\"tp\": 3");
    let text = text.replacen(": ", ":\r", 1);
    let e = load::from_json("cr.json", &text).expect_err("tp3");
    assert_eq!(
        rules(&e),
        [("tp_divides_node".to_owned(), Some(find(&text, "3}", 0)))]
    );
}

/// Numbers far past any real workload or cache (found by the `macro_splice`
/// fuzz target: `input_len + output_len` overflowed in the budget) are
/// judged by the rules, never overflow: the rules still speak of them.
#[test]
fn extreme_budget_numbers_are_judged_not_overflowed() {
    let max = u64::MAX.to_string();
    for (from, to, rule) in [
        // The fit is judged at `max_model_len`, where 16 requests fit.
        ("\"input_len\": 3500", format!("\"input_len\": {max}"), None),
        (
            "\"max_concurrency\": 16",
            format!("\"max_concurrency\": {max}"),
            Some("workload_concurrency"),
        ),
        (
            "\"max_model_len\": 32768",
            format!("\"max_model_len\": {max}"),
            Some("max_model_len_fits_kv"),
        ),
    ] {
        assert!(JSON.contains(from), "{from}");
        let text = JSON.replace(from, &to);
        match load::from_json("x.json", &text) {
            Ok(_) => assert!(rule.is_none(), "{to}: loaded, expected {rule:?}"),
            Err(e) => {
                let got = rules(&e);
                let rule = rule.unwrap_or_else(|| panic!("{to}: expected to load, got {got:?}"));
                assert!(got.iter().any(|(r, _)| r == rule), "{to}: {got:?}");
            }
        }
    }
}

/// `text` with `from` replaced by `to`. `from` must be in it: an edit of
/// the fixture that misses would test the unedited layout and pass.
fn edit(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "the fixture has no `{from}`");
    text.replace(from, to)
}

/// The fixture's decode block.
const DECODE: &str =
    "  decode: { max_num_batched_tokens: 120, max_num_seqs: 60, graph: full_decode_only }";

/// The fixture's decode block with `more` added to its settings.
fn decode_with(text: &str, more: &str) -> String {
    edit(
        text,
        DECODE,
        &format!(
            "  decode: {{ max_num_batched_tokens: 120, max_num_seqs: 60, graph: full_decode_only, {more} }}"
        ),
    )
}

/// Loads `text`, or fails the test with what refused it.
fn loads(text: &str, what: &str) {
    if let Err(e) = load::from_yaml("l.yaml", text) {
        panic!("{what}: expected to load, got: {e}");
    }
}

/// `text` refused by exactly `rule`, at the position of `needle` (its
/// first occurrence) moved `offset` characters on; the error.
fn refused_at(text: &str, rule: &str, needle: &str, offset: u64) -> LoadError {
    let e = load::from_yaml("l.yaml", text).expect_err("refused");
    let at = find(text, needle, 0);
    let at = load::Position {
        column: at.column + offset,
        ..at
    };
    assert_eq!(rules(&e), [(rule.to_owned(), Some(at))], "{e}");
    e
}

/// `eplb_config.load_collection_phase` off `all` on the V2 model runner
/// needs vLLM's `--enable-eplb` (rule `eplb_config_model_runner`, from the
/// generated facts' `v2_fields_need_flag`): refused at the value without the
/// flag or when a later `--no-enable-eplb` turns it off again; accepted with
/// it, or with the phase left at `all`.
#[test]
fn the_v2_runners_collection_phase_needs_enable_eplb() {
    let base = edit(
        &edit(YAML, "image: v0.21.0rc1", "image: v0.30.0rc2"),
        "  speculative: { method: mtp, tokens: 1, enforce_eager: true }\n",
        "",
    );
    let with = |phase: &str, flags: &str| {
        decode_with(
            &base,
            &format!(
                "env: [{{ name: VLLM_USE_V2_MODEL_RUNNER, value: \"1\" }}], additional_config: {{ eplb_config: {{ load_collection_phase: {phase} }} }}, flags: [{flags}]"
            ),
        )
    };
    for flags in ["", "{ name: --enable-eplb }, { name: --no-enable-eplb }"] {
        let text = with("decode", flags);
        let e = refused_at(
            &text,
            "eplb_config_model_runner",
            "load_collection_phase: decode",
            "load_collection_phase: ".len() as u64,
        );
        assert!(
            e.to_string()
                .contains("load_collection_phase requires --enable-eplb"),
            "{flags}: {e}"
        );
    }
    for (phase, flags) in [("decode", "{ name: --enable-eplb }"), ("all", "")] {
        loads(&with(phase, flags), &format!("{phase} {flags}"));
    }
}

/// A speculative method vLLM's V2 model runner refuses, on a role whose env
/// turns that runner on (rule `v2_runner_unsupported`, from the generated
/// vLLM facts' `v2_speculative_methods`): refused at the method's value for
/// the decode engine only, in vLLM 0.22.1's words; accepted with the env
/// `0` or with MTP.
#[test]
fn the_v2_runners_speculative_methods_are_judged_at_the_method() {
    let with = |method: &str, env: &str| {
        decode_with(
            &edit(YAML, "method: mtp", &format!("method: {method}")),
            &format!("env: [{{ name: VLLM_USE_V2_MODEL_RUNNER, value: \"{env}\" }}]"),
        )
    };
    let e = refused_at(&with("suffix", "1"), "v2_runner_unsupported", "suffix", 0);
    assert!(
        e.to_string().contains("decode engine")
            && e.to_string().contains("vLLM 0.22.1")
            && e.to_string().contains(
                "VLLM_USE_V2_MODEL_RUNNER does not yet support: speculative method 'suffix'"
            ),
        "{e}"
    );
    for (method, env) in [("suffix", "0"), ("mtp", "1")] {
        loads(&with(method, env), &format!("{method} {env}"));
    }
}

/// A full decode graph with MTP 2 (decode step 3), TP4 and FlashComm1
/// sequence parallelism (rule `speculative_sp_graph_alignment`, from the
/// generated facts' `spec_decode_sp_alignment`, `sp_graph_alignment` and
/// `enable_sp`): refused at the decode role's `tokens`; accepted with MTP 3
/// (step 4) or without the env.
#[test]
fn the_decode_step_and_tp_align_under_sequence_parallelism() {
    let tp4 = edit(
        YAML,
        "{ role: decode, count: 1, dp: 16, tp: 1 }",
        "{ role: decode, count: 1, dp: 4, tp: 4 }",
    );
    let with = |tokens: u32, env: &str| {
        edit(
            &tp4,
            DECODE,
            &format!(
                "  decode: {{ max_num_batched_tokens: 240, max_num_seqs: 60, graph: full_decode_only, speculative: {{ method: mtp, tokens: {tokens} }}, env: [{{ name: VLLM_ASCEND_ENABLE_FLASHCOMM1, value: \"{env}\" }}] }}"
            ),
        )
    };
    let e = refused_at(
        &with(2, "1"),
        "speculative_sp_graph_alignment",
        "tokens: 2 }",
        "tokens: ".len() as u64,
    );
    assert!(e.to_string().contains("decode step 3"), "{e}");
    for (tokens, env) in [(3, "1"), (2, "0")] {
        loads(&with(tokens, env), &format!("{tokens} {env}"));
    }
}

/// Shared-expert DP with capture sizes none of which TP divides (rule
/// `capture_sizes_tp_aligned`, from the generated facts'
/// `tp_aligned_capture_sizes`): refused at the first size on v0.30.0rc2;
/// accepted with a multiple of TP among them.
#[test]
fn shared_expert_dp_capture_sizes_are_judged_at_the_first_size() {
    let base = edit(
        &edit(YAML, "image: v0.21.0rc1", "image: v0.30.0rc2"),
        "{ role: decode, count: 1, dp: 16, tp: 1 }",
        "{ role: decode, count: 1, dp: 4, tp: 4 }",
    );
    let with = |sizes: &str| {
        decode_with(
            &base,
            &format!(
                "capture_sizes: [{sizes}], additional_config: {{ enable_shared_expert_dp: true }}"
            ),
        )
    };
    refused_at(
        &with("6, 10, 14"),
        "capture_sizes_tp_aligned",
        "6, 10, 14",
        0,
    );
    loads(&with("6, 8, 14"), "6, 8, 14");
}

/// Capture sizes all below the decode step with a full decode graph (rule
/// `capture_sizes_cover_decode_step`, from the generated vLLM facts'
/// `spec_decode_rounding`): MTP 1 and `capture_sizes: [1]` refused at the
/// size; `[1, 2]` accepted.
#[test]
fn capture_sizes_below_the_decode_step_are_judged_at_the_size() {
    let with = |sizes: &str| decode_with(YAML, &format!("capture_sizes: [{sizes}]"));
    refused_at(&with("1"), "capture_sizes_cover_decode_step", "[1]", 1);
    loads(&with("1, 2"), "1, 2");
}
