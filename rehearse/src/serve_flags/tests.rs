//! Tests of the argv parser: its forms and errors on a small table, and every
//! embedded version's table.

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
      "speculative_methods": [{"name": "mtp", "needs_model": false, "source": "t"}],
      "checkpoint_reads": {"max_len_keys": ["max_position_embeddings"], "unscaled_rope_types": [],
        "yarn_from_original": false, "expert_keys": ["num_experts"], "max_len_source": "t", "experts_source": "t"},
      "kv_memory_check": {"blocks_per_request": "every_group", "reserves_pool_block": false, "source": "t"}
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

/// A value for flag `f`, as argv words: one of its choices where it has
/// them (argparse refuses anything else), else one of its kind and type.
fn value_of(f: &ServeFlag) -> Vec<String> {
    let choices: Vec<String> = match &f.choices {
        Some(pd_dsl::upstream::Choices::Read { values, .. }) => values
            .iter()
            .filter(|v| v.as_str() != Some("None"))
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    let pick = |n: usize, dflt: &[&str]| -> Vec<String> {
        if choices.len() >= n {
            choices[..n].to_vec()
        } else {
            dflt.iter().map(|s| (*s).to_owned()).collect()
        }
    };
    let numeric = matches!(
        f.value_type,
        Some(pd_dsl::upstream::ValueType::Read {
            convert: pd_dsl::upstream::Convert::Int | pd_dsl::upstream::Convert::Float,
            ..
        })
    );
    match f.kind {
        Kind::Switch => vec![],
        Kind::Value => pick(1, &["7"]),
        Kind::Many if numeric => pick(2, &["7", "8"]),
        Kind::Many => pick(2, &["a", "b"]),
        Kind::Json => vec![format!(r#"{{"{}": 1}}"#, json_key(f))],
    }
}

/// A top-level key the JSON option takes: one of its config class's
/// fields, or any key for a plain dict option.
fn json_key(f: &ServeFlag) -> String {
    f.keys
        .as_ref()
        .and_then(|k| k.fields.first().cloned())
        .unwrap_or_else(|| "a".into())
}

fn recorded(a: &ServeArgs, f: &ServeFlag, negated: bool) -> bool {
    let want = value_of(f);
    match f.kind {
        Kind::Switch => a.switches.get(&f.name) == Some(&!negated),
        Kind::Value => a.value(&f.name) == want.first().map(String::as_str),
        Kind::Many => a.values.get(&f.name).is_some_and(|v| v == &want),
        Kind::Json => a.json(&f.name) == Some(&serde_json::json!({ json_key(f): 1 })),
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
            if f.name == "config" {
                // Read while parsing: `config_files_are_refused_as_vllm_refuses_them`.
                continue;
            }
            let value = value_of(f);
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
                let k = json_key(f);
                let a = parse(t, &argv(&["/m", &format!("--{}.{k}.j", f.name), "3"]));
                assert!(
                    a.as_ref().is_ok_and(
                        |a| a.json(&f.name) == Some(&serde_json::json!({ k.clone(): {"j": 3}}))
                    ),
                    "vLLM {}: dotted --{}.{k}.j: {a:?}",
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
                    args.extend(value_of(f));
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
            let k = t
                .lookup(&format!("--{f}"))
                .map_or_else(|| "a".to_owned(), |(flag, _)| json_key(flag));
            let a = parse(
                t,
                &argv(&["/m", &format!("--{f}"), &format!(r#"{{"{k}": 1}}"#)]),
            );
            assert!(
                a.is_ok_and(|a| a.json(f) == Some(&serde_json::json!({ k.clone(): 1 }))),
                "{tag}: {f}"
            );
        }
    }
    assert!(Flags::of_image("v9.9.9").is_err_and(|e| e.contains("not in the image table")));
}

/// Argparse's `type=` and `choices`, as the compile-time rule judges them
/// (one function, [`ServeFlag::value_refusal`]): a value outside them is
/// refused with vLLM's words, a listed one (after the `type=` conversion)
/// is taken, and an option whose choices the image's vllm-ascend widens
/// is judged against vLLM's list and the values it appends
/// (`--kv-cache-dtype int8` taken on v0.30.0rc2, refused on v0.23.0; a
/// word in neither refused on both), and then against the patched field's
/// narrower `Literal` (vLLM 0.30.0's `nvfp4_ds_mla`, which argparse takes
/// there and pydantic refuses).
#[test]
fn values_are_converted_and_held_to_the_choices() {
    let t = Flags::of_image("v0.23.0").unwrap_or_else(|e| panic!("{e}"));
    let e = parse(t, &argv(&["/m", "--all2all-backend", "hccl"])).err();
    assert!(
        e.as_deref()
            .is_some_and(|e| e.starts_with("argument --all2all-backend: invalid choice: 'hccl'")),
        "{e:?}"
    );
    assert!(parse(t, &argv(&["/m", "--all2all-backend=naive"])).is_ok());
    assert!(parse(t, &argv(&["/m", "--moe-backend", "Flashinfer-Cutlass"])).is_ok());
    let e = parse(t, &argv(&["/m", "--max-lora-rank", "17"])).err();
    assert!(
        e.as_deref()
            .is_some_and(|e| e.contains("invalid choice: 17")),
        "{e:?}"
    );
    let e = parse(t, &argv(&["/m", "--kv-cache-dtype", "int8"])).err();
    assert!(
        e.as_deref()
            .is_some_and(|e| e.contains("invalid choice: 'int8'")),
        "{e:?}"
    );
    let e = parse(t, &argv(&["/m", "--max-num-partial-prefills", "2.5"])).err();
    assert!(
        e.as_deref()
            .is_some_and(|e| e == "argument --max-num-partial-prefills: invalid int value: '2.5'"),
        "{e:?}"
    );
    let widened = Flags::of_image("v0.30.0rc2").unwrap_or_else(|e| panic!("{e}"));
    let args = parse(widened, &argv(&["/m", "--kv-cache-dtype", "int8"]));
    assert!(
        args.as_ref()
            .is_ok_and(|a| widened.field_refusal(a).is_none()),
        "{args:?}"
    );
    let e = parse(widened, &argv(&["/m", "--kv-cache-dtype", "int9"])).err();
    assert!(
        e.as_deref()
            .is_some_and(|e| e.contains("invalid choice: 'int9'") && e.contains("'mxfp8'")),
        "{e:?}"
    );
    let args = parse(widened, &argv(&["/m", "--kv-cache-dtype", "nvfp4_ds_mla"]))
        .unwrap_or_else(|e| panic!("{e}"));
    let why = widened.field_refusal(&args);
    assert!(
        why.as_deref().is_some_and(|w| w.contains("literal_error")
            && w.contains("input_value='nvfp4_ds_mla'")
            && w.contains("patch_kv_cache_dtype.py:")),
        "{why:?}"
    );
    // The same vLLM's table alone still judges it.
    let alone = Flags::of_version(&widened.version).unwrap_or_else(|e| panic!("{e}"));
    assert!(parse(alone, &argv(&["/m", "--kv-cache-dtype", "int8"])).is_err());
}

/// `nargs="?"` options (vLLM's `bool | str | None` fields, `--hf-token`)
/// are taken bare, before another flag and at the end, as vLLM's parser
/// takes them (scripts/upstream/crosscheck_vllm_parser.py argv).
#[test]
fn an_optional_value_may_be_left_out() {
    let t = Flags::of_image("v0.30.0rc1").unwrap_or_else(|e| panic!("{e}"));
    let ok = |args: &[&str]| parse(t, &argv(args)).map(|_| ()).map_err(|e| e.to_string());
    assert_eq!(ok(&["/m", "--hf-token"]), Ok(()));
    assert_eq!(ok(&["/m", "--hf-token", "--enforce-eager"]), Ok(()));
    let a = parse(t, &argv(&["/m", "--hf-token", "abc"])).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.value("hf-token"), Some("abc"));
    // A plain valued option still needs its word.
    assert!(ok(&["/m", "--max-num-seqs"]).is_err_and(|e| e.contains("expected one argument")));
}

/// `--config FILE`: vLLM reads the YAML file while parsing and refuses a
/// name without `.yaml`/`.yml` or a missing file; the stand-in refuses
/// those as vLLM does, and any other (layouts never pass one).
#[test]
fn config_files_are_refused_as_vllm_refuses_them() {
    let t = Flags::of_image("v0.23.0").unwrap_or_else(|e| panic!("{e}"));
    let err = |args: &[&str]| parse(t, &argv(args)).err().unwrap_or_default();
    assert!(err(&["/m", "--config", "serve.json"]).contains("must be of a yaml/yml type"));
    assert!(err(&["/m", "--config", "/nonexistent/serve.yaml"]).contains("No such file"));
    let dir = std::env::temp_dir().join(format!("pd-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let file = dir.join("serve.yaml");
    std::fs::write(&file, "max-num-seqs: 4\n").unwrap_or_else(|e| panic!("{e}"));
    let path = file.display().to_string();
    assert!(err(&["/m", "--config", &path]).contains("does not read config files"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A JSON option whose helper keeps text (`union_dict_and_str`) takes a
/// word that is not `{...}` as a string, and one that is as JSON; the
/// others refuse a word that is not JSON.
#[test]
fn text_or_json_options_keep_text() {
    let t = Flags::of_image("v0.23.0").unwrap_or_else(|e| panic!("{e}"));
    let a =
        parse(t, &argv(&["/m", "--pt-load-map-location", "cpu"])).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        a.json("pt-load-map-location"),
        Some(&serde_json::json!("cpu"))
    );
    let a = parse(t, &argv(&["/m", "--hf-overrides", " {\"a\": 1} "]))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.json("hf-overrides"), Some(&serde_json::json!({"a": 1})));
    assert!(parse(t, &argv(&["/m", "--hf-overrides", "{bad}"])).is_err());
    assert!(parse(t, &argv(&["/m", "--compilation-config", "cpu"])).is_err());
}

/// A `nargs="+"` option's words end where vLLM would read a word as an
/// option or a dotted key: `-0.5` ends the group and is then refused.
#[test]
fn a_dotted_dash_word_ends_a_list_and_is_refused() {
    let t = Flags::of_image("v0.23.0").unwrap_or_else(|e| panic!("{e}"));
    let a = parse(t, &argv(&["/m", "--served-model-name", "a", "-1"]))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.values.get("served-model-name").map(Vec::len), Some(2));
    let e = parse(t, &argv(&["/m", "--served-model-name", "a", "-0.5"]))
        .err()
        .unwrap_or_default();
    assert!(e.contains("unrecognized arguments: -0.5"), "{e}");
}

/// A config-class option's JSON, dotted keys gathered, holds only the
/// class's keys (`JsonKeys::refusal`, the rule's function): vLLM's parser
/// validates it with pydantic, and the classes forbid other keys.
#[test]
fn a_dataclass_option_takes_only_its_keys() {
    let t = Flags::of_image("v0.23.0").unwrap_or_else(|e| panic!("{e}"));
    for words in [
        &["/m", "--attention-config", r#"{"bakcend": 1}"#][..],
        &["/m", "--attention-config.bakcend", "1"][..],
        &[
            "/m",
            "--attention-config.backend",
            "FLASH_ATTN",
            "--attention-config.x",
            "1",
        ][..],
    ] {
        let e = parse(t, &argv(words)).err();
        assert!(
            e.as_deref().is_some_and(|e| e.starts_with(
                "argument --attention-config: 1 validation error for AttentionConfig"
            )),
            "{words:?}: {e:?}"
        );
    }
    assert!(
        parse(
            t,
            &argv(&["/m", "--attention-config.backend", "FLASH_ATTN"])
        )
        .is_ok()
    );
    assert!(parse(t, &argv(&["/m", "--hf-overrides", r#"{"anything": 1}"#])).is_ok());
}
