//! Rules on graph capture sizes with speculative decoding and sequence parallelism, whose answer follows the release's generated facts.

use super::*;

/// MTP 2 (decode step 3) on the TP4 decode engine with a full decode graph
/// and sequence parallelism (env `VLLM_ASCEND_ENABLE_FLASHCOMM1`): vLLM
/// cannot size graphs for both 3 and 4 where vllm-ascend hands it the TP
/// size (generated `sp_graph_alignment` `always`, SP read as the generated
/// `enable_sp` says), and not from v0.29.0rc1 (`never`); MTP 1 (step 2
/// divides 4), no SP, the V2 runner, or `full` on vLLM 0.18.0 (no separate
/// decode routine) start. Shared-expert DP turns SP on up to v0.25.1rc1,
/// not at v0.26.0rc1.
#[test]
fn speculative_steps_and_tp_align_under_sequence_parallelism() {
    let with =
        |image: &str, graph: &str, tokens: u64, env: &[(&str, &str)], config: serde_json::Value| {
            let mut v = pd("deepseek_v3_1_w8a8_mtp_quarot", image);
            v["serve"]["speculative"] = json!({"method": "mtp", "tokens": 1});
            let env: Vec<_> = env
                .iter()
                .map(|(n, x)| json!({"name": n, "value": x}))
                .collect();
            with_role(
                v,
                "decode",
                json!({
                    "graph": graph,
                    "speculative": {"method": "mtp", "tokens": tokens},
                    "env": env,
                    "additional_config": config,
                    "max_num_batched_tokens": 256, "max_num_seqs": 64
                }),
            )
        };
    let sp = [("VLLM_ASCEND_ENABLE_FLASHCOMM1", "1")];
    for image in ["v0.18.0", "v0.23.0", "v0.26.0rc1"] {
        let refused = with(image, "full_decode_only", 2, &sp, json!({}));
        assert_eq!(
            broken(&refused),
            only("speculative_sp_graph_alignment"),
            "{image}"
        );
        let m = messages(&refused, "speculative_sp_graph_alignment");
        assert!(
            m[0].contains("decode step 3")
                && m[0].contains("TP 4")
                && m[0].contains("vllm/config/compilation.py:"),
            "{m:?}"
        );
        assert_eq!(
            broken(&with(image, "full_decode_only", 1, &sp, json!({}))),
            BTreeSet::new(),
            "{image}"
        );
        assert_eq!(
            broken(&with(image, "full_decode_only", 2, &[], json!({}))),
            BTreeSet::new(),
            "{image}"
        );
        let v2 = [sp[0], ("VLLM_USE_V2_MODEL_RUNNER", "1")];
        assert!(
            !broken(&with(image, "full_decode_only", 2, &v2, json!({})))
                .contains("speculative_sp_graph_alignment"),
            "{image}"
        );
    }
    assert_eq!(
        broken(&with("v0.18.0", "full", 2, &sp, json!({}))),
        BTreeSet::new()
    );
    assert_eq!(
        broken(&with("v0.23.0", "full", 2, &sp, json!({}))),
        only("speculative_sp_graph_alignment")
    );
    assert_eq!(
        broken(&with("v0.29.0rc1", "full_decode_only", 2, &sp, json!({}))),
        BTreeSet::new()
    );
    let shared = json!({"enable_shared_expert_dp": true});
    assert_eq!(
        broken(&with("v0.23.0", "full_decode_only", 2, &[], shared.clone())),
        only("speculative_sp_graph_alignment")
    );
    assert_eq!(
        broken(&with("v0.26.0rc1", "full_decode_only", 2, &[], shared)),
        BTreeSet::new()
    );
}

/// Shared-expert DP with `expert_parallel` on the TP4 decode engine and a
/// full decode graph: typed capture sizes none of which 4 divides are
/// refused where the generated `tp_aligned_capture_sizes` lists the
/// requirement (v0.27.1rc1 on), not before; one multiple of 4, or no
/// shared-expert DP, starts.
#[test]
fn shared_expert_dp_needs_a_tp_aligned_capture_size() {
    let with = |image: &str, sizes: serde_json::Value, shared: bool| {
        let v = pd("deepseek_v3_1_w8a8_mtp_quarot", image);
        with_role(
            v,
            "decode",
            json!({
                "graph": "full_decode_only",
                "capture_sizes": sizes,
                "additional_config": {"enable_shared_expert_dp": shared}
            }),
        )
    };
    for image in ["v0.27.1rc1", "v0.30.0rc2"] {
        let refused = with(image, json!([3, 6, 9]), true);
        assert_eq!(
            broken(&refused),
            only("capture_sizes_tp_aligned"),
            "{image}"
        );
        let m = messages(&refused, "capture_sizes_tp_aligned");
        assert!(
            m[0].contains("3, 6, 9")
                && m[0].contains("TP 4")
                && m[0].contains("vllm_ascend/platform.py:"),
            "{m:?}"
        );
        assert_eq!(
            broken(&with(image, json!([3, 8]), true)),
            BTreeSet::new(),
            "{image}"
        );
        assert_eq!(
            broken(&with(image, json!([3, 6, 9]), false)),
            BTreeSet::new(),
            "{image}"
        );
    }
    assert_eq!(
        broken(&with("v0.26.0rc1", json!([3, 6, 9]), true)),
        BTreeSet::new()
    );
}

/// Capture sizes all below the decode step with a full decode graph: MTP 1
/// (step 2) and `capture_sizes: [1]` are refused on every image (vLLM's
/// `spec_decode_rounding`), `full` only from vLLM 0.20.2; a size of 2, the
/// V2 runner, or a `max_num_batched_tokens` below every size are not judged.
#[test]
fn a_capture_size_covers_the_decode_step() {
    let with = |image: &str, graph: &str, sizes: serde_json::Value, extra: serde_json::Value| {
        let mut block = json!({
            "graph": graph,
            "capture_sizes": sizes,
            "speculative": {"method": "mtp", "tokens": 1}
        });
        if let (Some(b), Some(e)) = (block.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        with_role(pd("deepseek_v3_1_w8a8_mtp_quarot", image), "decode", block)
    };
    for image in ["v0.18.0", "v0.23.0", "v0.30.0rc2"] {
        let refused = with(image, "full_decode_only", json!([1]), json!({}));
        assert_eq!(
            broken(&refused),
            only("capture_sizes_cover_decode_step"),
            "{image}"
        );
        let m = messages(&refused, "capture_sizes_cover_decode_step");
        assert!(
            m[0].contains("at least 2") && m[0].contains("vllm/config/compilation.py:"),
            "{m:?}"
        );
        assert_eq!(
            broken(&with(image, "full_decode_only", json!([1, 2]), json!({}))),
            BTreeSet::new(),
            "{image}"
        );
        let v2 = json!({"env": [{"name": "VLLM_USE_V2_MODEL_RUNNER", "value": "1"}]});
        assert!(
            !broken(&with(image, "full_decode_only", json!([1]), v2))
                .contains("capture_sizes_cover_decode_step"),
            "{image}"
        );
    }
    assert_eq!(
        broken(&with("v0.18.0", "full", json!([1]), json!({}))),
        BTreeSet::new()
    );
    assert_eq!(
        broken(&with("v0.23.0", "full", json!([1]), json!({}))),
        only("capture_sizes_cover_decode_step")
    );
    assert_eq!(
        broken(&with("v0.23.0", "piecewise", json!([1]), json!({}))),
        BTreeSet::new()
    );
}
