//! `serve_flag_accepted`: the extra flags against the `vllm serve` of the
//! image, as argparse judges them (names, abbreviations, value shapes,
//! choices), from the generated `serve_flags` facts.

use super::*;
use pd_dsl_core::tables::IMAGES;
use pd_dsl_core::upstream::{Choices, FlagKind, vllm_of};

/// A 1P1D layout on `image` whose prefill role passes `flags`.
fn with_flags(image: &str, flags: Value) -> Value {
    with_role(
        pd("deepseek_r1_0528_w8a8", image),
        "prefill",
        json!({ "flags": flags }),
    )
}

fn flag(name: &str, value: Option<Value>) -> Value {
    match value {
        Some(v) => json!({"name": name, "value": v}),
        None => json!({"name": name}),
    }
}

const RULE: &str = "serve_flag_accepted";

/// The messages of `flags` on `image` (one flag each time).
fn refusals(image: &str, name: &str, value: Option<Value>) -> Vec<String> {
    messages(&with_flags(image, json!([flag(name, value)])), RULE)
}

#[test]
fn an_option_the_images_vllm_lacks_is_refused_with_the_nearest() {
    let m = refusals("v0.23.0", "--max-num-partial-prefils", Some(json!(2)));
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(
        m[0].contains("vLLM 0.23.0 (image `v0.23.0`)")
            && m[0].contains("unrecognized arguments")
            && m[0].ends_with("did you mean `--max-num-partial-prefills`?"),
        "{m:?}"
    );
    assert_eq!(
        refusals("v0.23.0", "--max-num-partial-prefills", Some(json!(2))),
        Vec::<String>::new()
    );
    // Nothing near: no suggestion.
    let m = refusals("v0.23.0", "--frobnicate-everything", None);
    assert!(m.len() == 1 && !m[0].contains("did you mean"), "{m:?}");
}

/// argparse expands a unique prefix; pd-dsl asks for the full name, which
/// it names. A prefix of several options is ambiguous for vLLM too.
#[test]
fn prefixes_are_written_in_full() {
    let m = refusals("v0.23.0", "--max-num-partial-prefil", Some(json!(2)));
    assert!(
        m.len() == 1
            && m[0].contains("expected it written in full, `--max-num-partial-prefills`")
            && m[0].contains("allow_abbrev"),
        "{m:?}"
    );
    let m = refusals("v0.23.0", "--max-num", Some(json!(2)));
    assert!(
        m.len() == 1
            && m[0].contains("ambiguous option")
            && m[0].contains("`--max-num-partial-prefills`")
            && m[0].contains("`--max-num-seqs`"),
        "{m:?}"
    );
}

/// The shapes argparse refuses: a switch with a value, a valued option
/// without one, `--no-X` of a switch that has no such form, a dotted key
/// on a non-JSON option. Which options are which comes from the facts.
#[test]
fn value_shapes_follow_the_option_kind() {
    let v = vllm_of(
        IMAGES
            .iter()
            .find(|i| i.tag == "v0.23.0")
            .unwrap_or_else(|| unreachable!("image v0.23.0")),
    )
    .unwrap_or_else(|e| unreachable!("{e}"));
    let plain_switch = v
        .serve_flags
        .iter()
        .find(|f| f.kind == FlagKind::Switch && !f.negatable && f.name == "disable-log-stats")
        .unwrap_or_else(|| unreachable!("`--disable-log-stats` is a plain switch in vLLM 0.23.0"));
    let name = format!("--{}", plain_switch.name);
    assert_eq!(refusals("v0.23.0", &name, None), Vec::<String>::new());
    let m = refusals("v0.23.0", &name, Some(json!(true)));
    assert!(m.len() == 1 && m[0].contains("takes no value"), "{m:?}");
    let m = refusals("v0.23.0", &format!("--no-{}", plain_switch.name), None);
    assert!(
        m.len() == 1 && m[0].contains("with no `--no-` form"),
        "{m:?}"
    );
    let m = refusals("v0.23.0", "--max-num-partial-prefills", None);
    assert!(
        m.len() == 1 && m[0].contains("expected one argument"),
        "{m:?}"
    );
    let m = refusals("v0.23.0", "--max-num-partial-prefills.x", Some(json!(1)));
    assert!(m.len() == 1 && m[0].contains("not a JSON option"), "{m:?}");
    // A JSON option takes dotted keys.
    assert_eq!(
        refusals(
            "v0.23.0",
            "--hf-overrides.rope_scaling",
            Some(json!("null"))
        ),
        Vec::<String>::new()
    );
}

/// Values outside `choices`, each conversion as argparse runs it: the word
/// itself, `int()`, and the lower-case-and-underscore `type=` of the
/// backend options; `optional_type`'s `None` is never a choice.
#[test]
fn values_are_held_to_the_choices() {
    assert_eq!(
        refusals("v0.23.0", "--all2all-backend", Some(json!("naive"))),
        Vec::<String>::new()
    );
    let m = refusals("v0.23.0", "--all2all-backend", Some(json!("hccl")));
    assert!(
        m.len() == 1
            && m[0].contains("invalid choice: 'hccl' (choose from 'allgather_reducescatter'"),
        "{m:?}"
    );
    assert_eq!(
        refusals("v0.23.0", "--max-lora-rank", Some(json!(16))),
        Vec::<String>::new()
    );
    let m = refusals("v0.23.0", "--max-lora-rank", Some(json!(17)));
    assert!(m.len() == 1 && m[0].contains("invalid choice: 17"), "{m:?}");
    let m = refusals("v0.23.0", "--max-lora-rank", Some(json!("sixteen")));
    assert!(
        m.len() == 1 && m[0].contains("invalid int value: 'sixteen'"),
        "{m:?}"
    );
    // `lambda s: s.lower().replace("-", "_")` before the lookup.
    assert_eq!(
        refusals(
            "v0.23.0",
            "--moe-backend",
            Some(json!("Flashinfer-Cutlass"))
        ),
        Vec::<String>::new()
    );
    let m = refusals("v0.23.0", "--moe-backend", Some(json!("npu")));
    assert!(
        m.len() == 1 && m[0].contains("invalid choice: 'npu'"),
        "{m:?}"
    );
    // vLLM 0.30.0's `--dcp-comm-backend` is `optional_type(str)` with
    // "None" listed: the word becomes None, which is not.
    let m = refusals("v0.30.0rc2", "--dcp-comm-backend", Some(json!("None")));
    assert!(
        m.len() == 1 && m[0].contains("invalid choice: None"),
        "{m:?}"
    );
}

/// Words the option's `type=` cannot convert: `int()` and `float()` as
/// Python runs them; an `optional_type` option takes `None`; a vLLM helper
/// whose conversion is not read (`human_readable_int`) is not judged.
#[test]
fn values_are_converted_as_argparse_does() {
    for ok in ["2", " 2 ", "1_0"] {
        assert_eq!(
            refusals("v0.23.0", "--max-num-partial-prefills", Some(json!(ok))),
            Vec::<String>::new(),
            "{ok:?}"
        );
    }
    let m = refusals("v0.23.0", "--max-num-partial-prefills", Some(json!("2.5")));
    assert!(
        m.len() == 1 && m[0].contains("invalid int value: '2.5'"),
        "{m:?}"
    );
    assert_eq!(
        refusals("v0.23.0", "--cpu-offload-gb", Some(json!(1.5))),
        Vec::<String>::new()
    );
    let m = refusals("v0.23.0", "--cpu-offload-gb", Some(json!("1.5GB")));
    assert!(
        m.len() == 1 && m[0].contains("invalid float value: '1.5GB'"),
        "{m:?}"
    );
    // `--max-log-len` is `int | None`: `optional_type(int)` takes "None".
    assert_eq!(
        refusals("v0.23.0", "--max-log-len", Some(json!("None"))),
        Vec::<String>::new()
    );
}

/// `--kv-cache-dtype`'s choices are vLLM's up to v0.29.0rc1; from
/// v0.30.0rc1 vllm-ascend's platform hook appends its own dtypes to the
/// parser's list, so a dtype vLLM alone refuses is taken there (the rest
/// of the judgement: `widened_choices_are_judged_with_what_the_image_appends`).
#[test]
fn choices_the_platform_widens_take_its_dtypes() {
    let m = refusals("v0.23.0", "--kv-cache-dtype", Some(json!("int8")));
    assert!(
        m.len() == 1 && m[0].contains("invalid choice: 'int8'"),
        "{m:?}"
    );
    let img = IMAGES
        .iter()
        .find(|i| i.tag == "v0.30.0rc2")
        .unwrap_or_else(|| unreachable!("image v0.30.0rc2"));
    let v = vllm_of(img).unwrap_or_else(|e| unreachable!("{e}"));
    let kv = v
        .flag("kv-cache-dtype")
        .unwrap_or_else(|| unreachable!("--kv-cache-dtype"));
    assert!(
        matches!(&kv.choices, Some(Choices::Read { values, .. }) if !values.contains(&json!("int8"))),
        "vLLM 0.30.0 alone would refuse int8"
    );
    assert!(
        img.facts()
            .is_some_and(|r| r.widens_choices("kv-cache-dtype").is_some()),
        "v0.30.0rc2's hook widens it"
    );
    assert_eq!(
        refusals("v0.30.0rc2", "--kv-cache-dtype", Some(json!("int8"))),
        Vec::<String>::new()
    );
}

/// Every flag of every catalog-style block is judged in `serve`, each
/// role and each node block alike.
#[test]
fn every_block_is_judged() {
    let mut v = pd("deepseek_r1_0528_w8a8", "v0.23.0");
    v["serve"]["flags"] = json!([flag("--bogus-one", None)]);
    v["roles"] = json!({"decode": {"flags": [flag("--bogus-two", None)]}});
    v["nodes"] = json!({"1": {"flags": [flag("--bogus-three", None)]}});
    let m = messages(&v, RULE);
    for b in ["--bogus-one", "--bogus-two", "--bogus-three"] {
        assert!(m.iter().any(|x| x.contains(b)), "{b} not judged: {m:?}");
    }
}

/// A word argparse reads as an option leaves the option before it without
/// its value; `-`, negative numbers and words with a space stay values.
#[test]
fn an_option_like_value_is_refused_and_a_negative_number_is_not() {
    for word in ["-n", "--", "-1x", "-O3", "-0.5", "--foo"] {
        let m = refusals("v0.23.0", "--response-role", Some(json!(word)));
        assert_eq!(m.len(), 1, "{word}: {m:?}");
        assert!(
            m[0].contains(&format!("found `--response-role {word}`")),
            "{m:?}"
        );
    }
    for word in ["-", "-1", "-x y", "--foo bar", "assistant"] {
        assert_eq!(
            refusals("v0.23.0", "--response-role", Some(json!(word))),
            Vec::<String>::new(),
            "{word}"
        );
    }
}

/// `--hf-token` may be given bare (`nargs="?"`); `--config` is refused
/// everywhere, its flags being out of the rules' sight.
#[test]
fn a_bare_optional_value_is_taken_and_config_files_are_refused() {
    assert_eq!(
        refusals("v0.30.0rc1", "--hf-token", None),
        Vec::<String>::new()
    );
    assert_eq!(refusals("v0.30.0rc1", "--response-role", None).len(), 1);
    let m = refusals("v0.23.0", "--config", Some(json!("serve.yaml")));
    assert!(
        m.len() == 1 && m[0].contains("_pull_args_from_config"),
        "{m:?}"
    );
}

/// A JSON option's word that is not JSON is refused at the word; one its
/// helper keeps as text (`union_dict_and_str`), or that only vLLM's
/// leniencies read (`80m`, `NaN`), is not.
#[test]
fn a_json_option_takes_json() {
    let m = refusals("v0.23.0", "--allowed-headers", Some(json!("abc")));
    assert!(
        m.len() == 1
            && m[0].contains("found `--allowed-headers abc`, expected a JSON value")
            && m[0].contains("`abc` is not JSON"),
        "{m:?}"
    );
    // Braced, `union_dict_and_str` parses it as JSON.
    let m = refusals("v0.23.0", "--hf-overrides", Some(json!("{bad}")));
    assert!(
        m.len() == 1 && m[0].contains("`{bad}` is not JSON"),
        "{m:?}"
    );
    for (flag, word) in [
        ("--allowed-headers", r#"["x-request-id"]"#),
        ("--pt-load-map-location", "cpu"),
        ("--hf-overrides", r#"{"rope_theta": 1e6}"#),
        ("--allowed-headers", r#"[1k]"#),
    ] {
        assert_eq!(
            refusals("v0.23.0", flag, Some(json!(word))),
            Vec::<String>::new(),
            "{flag} {word}"
        );
    }
}

/// `--kv-cache-dtype` from v0.30.0rc1: vllm-ascend's platform hook appends
/// its patched `CacheConfig.cache_dtype` values to vLLM's choices, and
/// pydantic then validates the patched `Literal`, which lacks vLLM 0.30.0's
/// `nvfp4_ds_mla` (generated `parser_choices_widened`: `added`, `field`).
/// `int8` is taken there and refused on v0.23.0; a word in neither list is
/// refused by argparse; `nvfp4_ds_mla` passes argparse and is refused by
/// pydantic.
#[test]
fn widened_choices_are_judged_with_what_the_image_appends() {
    let flag = "--kv-cache-dtype";
    for image in ["v0.30.0rc1", "v0.30.0rc2"] {
        assert_eq!(
            refusals(image, flag, Some(json!("int8"))),
            Vec::<String>::new(),
            "{image}"
        );
        let m = refusals(image, flag, Some(json!("int9")));
        assert!(
            m.len() == 1
                && m[0].contains("invalid choice: 'int9'")
                && m[0].contains("'mxfp8'")
                && m[0].contains("pre_register_and_update"),
            "{image}: {m:?}"
        );
        let m = refusals(image, flag, Some(json!("nvfp4_ds_mla")));
        assert!(
            m.len() == 1
                && m[0].contains("pydantic refuses it")
                && m[0].contains("literal_error")
                && m[0].contains("patch_kv_cache_dtype.py:"),
            "{image}: {m:?}"
        );
    }
    let m = refusals("v0.23.0", flag, Some(json!("int8")));
    assert!(
        m.len() == 1 && m[0].contains("invalid choice: 'int8'"),
        "{m:?}"
    );
}

/// A dataclass option's JSON is validated by pydantic while vLLM parses
/// it, and vLLM's config classes forbid keys they lack (generated
/// `serve_flags` `keys`): an unknown key is refused, in the JSON or as a
/// dotted sub-key; the class's own keys, and any key of a plain dict
/// option (`--hf-overrides`), are taken.
#[test]
fn a_dataclass_option_takes_only_its_keys() {
    let m = refusals(
        "v0.23.0",
        "--attention-config",
        Some(json!(r#"{"backend": "FLASH_ATTN", "bakcend": 1}"#)),
    );
    assert!(
        m.len() == 1
            && m[0].contains("1 validation error for AttentionConfig: `bakcend`")
            && m[0].contains("`backend`")
            && m[0].contains("vllm/config/attention.py:"),
        "{m:?}"
    );
    let m = refusals("v0.30.0rc2", "--profiler-config.no_such", Some(json!("1")));
    assert!(
        m.len() == 1 && m[0].contains("validation error for ProfilerConfig: `no_such`"),
        "{m:?}"
    );
    // The top-level key of a dotted path, as vLLM's `parse_args` nests it
    // (a trailing `+`, a list append, dropped): judged as that key.
    let m = refusals(
        "v0.30.0rc2",
        "--profiler-config.no_such+",
        Some(json!("a,b")),
    );
    assert!(
        m.len() == 1 && m[0].contains("validation error for ProfilerConfig: `no_such`"),
        "{m:?}"
    );
    let appended = with_flags(
        "v0.30.0rc2",
        json!([flag(
            "--hf-overrides.architectures+",
            Some(json!("Qwen3MoeForCausalLM"))
        )]),
    );
    assert!(
        !broken(&appended).contains(RULE) && !broken(&appended).contains("flag_format"),
        "{:?}",
        messages(&appended, "flag_format")
    );
    assert_eq!(
        pd_dsl_core::upstream::JsonKeys::top_key("backend+"),
        "backend"
    );
    assert_eq!(pd_dsl_core::upstream::JsonKeys::top_key("a.b+"), "a");
    assert_eq!(pd_dsl_core::upstream::JsonKeys::top_key("a"), "a");
    for (flag, word) in [
        ("--attention-config", r#"{"backend": null}"#),
        ("--hf-overrides", r#"{"no_such": 1}"#),
    ] {
        assert_eq!(
            refusals("v0.23.0", flag, Some(json!(word))),
            Vec::<String>::new(),
            "{flag} {word}"
        );
    }
}
