//! `max_model_len_within_model` and `batched_tokens_cover_model_len` on
//! models the capacity budget does not size: the length vLLM derives comes
//! from the copy of the checkpoint's config where one exists (the generated
//! checkpoint facts), else from `dims::CONTEXTS`, exact where a source states
//! it and a lower bound where upstream only serves the model at a length.

use super::*;

const WITHIN: &str = "max_model_len_within_model";
const COVER: &str = "batched_tokens_cover_model_len";

/// A mixed layout of `model` with `block` as its role block and no
/// `max_model_len` in `serve`.
fn mixed_with(model: &str, block: Value) -> Value {
    let mut v = mixed(model, "v0.23.0");
    if let Some(serve) = v["serve"].as_object_mut() {
        serve.remove("max_model_len");
    }
    with_role(v, "mixed", block)
}

fn no_chunked(mbt: u64) -> Value {
    json!({
        "max_num_batched_tokens": mbt,
        "flags": [{"name": "--no-enable-chunked-prefill"}]
    })
}

#[test]
fn an_unsized_model_is_held_to_its_derived_length() {
    let glm = |block: Value| broken(&mixed_with("glm_5_1_w8a8c8", block));
    // GLM-5.1 w8a8c8 (unsized for its C8 cache): 202752 positions, the GlmMoeDsaConfig default upstream serves.
    assert!(!glm(json!({"max_model_len": 202752})).contains(WITHIN));
    assert!(glm(json!({"max_model_len": 202753})).contains(WITHIN));
    let m = messages(
        &mixed_with("glm_5_1_w8a8c8", json!({"max_model_len": 262144})),
        WITHIN,
    );
    assert!(
        m.len() == 1
            && m[0].contains("found `max_model_len` 262144 on mixed, expected at most 202752")
            && m[0].contains("VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"),
        "{m:?}"
    );
    // The two ways upstream lets a longer length through.
    let allowed = json!({
        "max_model_len": 262144,
        "env": [{"name": "VLLM_ALLOW_LONG_MAX_MODEL_LEN", "value": "1"}]
    });
    assert!(!glm(allowed).contains(WITHIN));
    let overridden = json!({
        "max_model_len": 262144,
        "flags": [{"name": "--hf-overrides", "value": "{\"max_position_embeddings\": 262144}"}]
    });
    assert!(!glm(overridden).contains(WITHIN));
    // Qwen3.5: 262144 unscaled positions.
    let qwen = |len: u64| {
        broken(&mixed_with(
            "qwen3_5_397b_a17b_w8a8_mtp",
            json!({"max_model_len": len}),
        ))
    };
    assert!(!qwen(262144).contains(WITHIN));
    assert!(qwen(262145).contains(WITHIN));
}

#[test]
fn a_lower_bound_refuses_no_max_model_len() {
    // GLM-4.7 has no copy of its config: it is only known to derive at
    // least the 140000 upstream serves it at.
    for len in [140000, 1_000_000] {
        assert!(
            !broken(&mixed_with("glm_4_7_w8a8c8", json!({"max_model_len": len}))).contains(WITHIN),
            "{len}"
        );
    }
}

/// The copies make exact what upstream's runs only bounded: Qwen3-VL-235B
/// derives 262144 (`max_position_embeddings`, no RoPE scaling),
/// Kimi-K2-Instruct 131072 (YaRN: 4096 x 32, equal to its
/// `max_position_embeddings`), GLM-5.3 1048576; one token more is refused,
/// naming the copy.
#[test]
fn a_copied_config_gives_the_exact_length() {
    for (model, len) in [
        ("qwen3_vl_235b_a22b_instruct_w8a8_quarot", 262144),
        ("kimi_k2_instruct_w8a8", 131072),
        ("glm_5_3_w8a8c8", 1048576),
    ] {
        assert!(
            !broken(&mixed_with(model, json!({"max_model_len": len}))).contains(WITHIN),
            "{model} {len}"
        );
        let m = messages(
            &mixed_with(model, json!({"max_model_len": len + 1})),
            WITHIN,
        );
        assert!(
            m.len() == 1
                && m[0].contains(&format!("expected at most {len}"))
                && m[0].contains("aiconfigurator_core/model_configs/"),
            "{model}: {m:?}"
        );
    }
}

#[test]
fn without_max_model_len_a_batch_covers_the_derived_length() {
    let cover = |model: &str, mbt: u64| broken(&mixed_with(model, no_chunked(mbt)));
    assert!(cover("glm_5_1_w8a8c8", 131072).contains(COVER));
    assert!(!cover("glm_5_1_w8a8c8", 202752).contains(COVER));
    let m = messages(&mixed_with("glm_5_1_w8a8c8", no_chunked(131072)), COVER);
    assert!(
        m.len() == 1
            && m[0].contains(
                "below the model's derived `max_model_len` 202752 (`max_model_len` not set) with `--no-enable-chunked-prefill`, expected at least 202752"
            ),
        "{m:?}"
    );
    // A lower bound is enough to refuse a batch below it.
    let glm47 = "glm_4_7_w8a8c8";
    let m = messages(&mixed_with(glm47, no_chunked(100000)), COVER);
    assert!(
        m.len() == 1 && m[0].contains("derived `max_model_len` at least 140000"),
        "{m:?}"
    );
    // At or above the bound the derived length is unknown: not judged.
    assert!(!cover(glm47, 140000).contains(COVER));
    // `--hf-overrides` may change the derived length: not judged.
    let mut block = no_chunked(131072);
    block["flags"] = json!([
        {"name": "--no-enable-chunked-prefill"},
        {"name": "--hf-overrides", "value": "{\"max_position_embeddings\": 65536}"}
    ]);
    assert!(!broken(&mixed_with("glm_5_1_w8a8c8", block)).contains(COVER));
    // A written `max_model_len` is what the batch must cover.
    let mut block = no_chunked(131072);
    block["max_model_len"] = json!(131072);
    assert!(!broken(&mixed_with("glm_5_1_w8a8c8", block)).contains(COVER));
}
