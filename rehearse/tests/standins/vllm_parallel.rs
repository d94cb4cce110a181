//! The vllm stand-in's refusals of parallel and batch settings, each as its
//! image's vLLM refuses them: external DP at DP 1, prefill context
//! parallelism, decode context parallelism off TP, and a batch the drafting
//! reserve uses up.

use crate::{VLLM, rank_argv, run, s};

/// `--data-parallel-rank` at DP 1 is refused as vLLM refuses it
/// (external load balancing needs DP > 1, vllm/config/parallel.py), and PCP
/// as each image's platform does (the release facts' `pcp_refusals`).
#[test]
fn vllm_refuses_external_dp_at_dp_1_and_pcp_where_the_image_does() {
    let mut argv = rank_argv(7100, 1, 0, 12321, 8, None);
    argv.extend(s(&["--data-parallel-rank", "0"]));
    let (code, _, err) = run(
        VLLM,
        &argv,
        &[("ASCEND_RT_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7".into())],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("data_parallel_external_lb can only be set when data_parallel_size > 1"),
        "{err}"
    );
    let with_pcp = |dp: u32, rank: u32| {
        let mut a = rank_argv(7100, dp, rank, 12321, 8, None);
        a.extend(s(&["--prefill-context-parallel-size", "2"]));
        a
    };
    let devices = (
        "ASCEND_RT_VISIBLE_DEVICES",
        (0..16).map(|d| d.to_string()).collect::<Vec<_>>().join(","),
    );
    // v0.23.0: PCP with DP 2 refused.
    let (code, _, err) = run(
        VLLM,
        &with_pcp(2, 0),
        &[("PD_STANDIN_IMAGE", "v0.23.0".into()), devices.clone()],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("PCP (Prefill Context Parallelism) and DP (Data Parallelism) cannot be enabled simultaneously"), "{err}");
    // v0.30.0rc2: PCP without the V2 runner refused; a bad value is int()'s error.
    let (code, _, err) = run(
        VLLM,
        &with_pcp(2, 0),
        &[("PD_STANDIN_IMAGE", "v0.30.0rc2".into()), devices.clone()],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("PCP (Prefill Context Parallelism) is not supported by vLLM Ascend"),
        "{err}"
    );
    let (code, _, err) = run(
        VLLM,
        &with_pcp(2, 0),
        &[
            ("PD_STANDIN_IMAGE", "v0.30.0rc2".into()),
            ("VLLM_USE_V2_MODEL_RUNNER", "true".into()),
            devices.clone(),
        ],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("invalid literal for int()"), "{err}");
    // v0.26.0rc1 with the V2 runner: vLLM 0.26.0's own ParallelConfig
    // refuses PCP with DP 2 first (the facts' `context_parallel.pcp_with_dp`),
    // and at DP 1 its V2 runner refuses PCP.
    let v2_on_0_26 = [
        ("PD_STANDIN_IMAGE", "v0.26.0rc1".to_owned()),
        ("VLLM_USE_V2_MODEL_RUNNER", "1".to_owned()),
        devices,
    ];
    let (code, _, err) = run(VLLM, &with_pcp(2, 0), &v2_on_0_26);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("PCP does not support data parallelism yet"),
        "{err}"
    );
    let (code, _, err) = run(VLLM, &with_pcp(1, 0), &v2_on_0_26);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("Model Runner V2 does not yet support: prefill context parallelism"),
        "{err}"
    );
}

/// A batch budget the speculative method's drafting reserve uses up is
/// refused as the image's vLLM refuses it (the facts' `drafting_slots`:
/// (tokens - 1) x `max_num_seqs` for `dflash` up to vLLM 0.27.1, `tokens` per
/// request from 0.28.0), and a DCP size that does not divide TP as vLLM's
/// `ParallelConfig` does (`context_parallel`).
#[test]
fn vllm_refuses_a_batch_the_drafting_reserve_uses_up_and_dcp_off_tp() {
    let argv = |mbt: &str, extra: &[&str]| {
        let mut a = rank_argv(7100, 1, 0, 12321, 8, None);
        let at = a
            .iter()
            .position(|w| w == "--max_num_batched_tokens")
            .expect("rank_argv sets the batch budget");
        a[at + 1] = mbt.to_owned();
        let at = a
            .iter()
            .position(|w| w == "--max-num-seqs=16")
            .expect("rank_argv sets max_num_seqs");
        a[at] = "--max-num-seqs=32".to_owned();
        a.extend(s(&[
            "--speculative-config",
            r#"{"method": "dflash", "num_speculative_tokens": 8}"#,
        ]));
        a.extend(s(extra));
        a
    };
    let image = |tag: &str| ("PD_STANDIN_IMAGE", tag.to_owned());
    let eight = ("ASCEND_RT_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7".to_owned());
    // Four devices for TP 8: the device check, which comes after the
    // drafting reserve, says the reserve let the argv through.
    let four = ("ASCEND_RT_VISIBLE_DEVICES", "0,1,2,3".to_owned());
    // vLLM 0.27.1: (8 - 1) x 32 = 224 slots; 224 leaves none, 225 one.
    let (code, _, err) = run(
        VLLM,
        &argv("224", &[]),
        &[image("v0.27.1rc1"), eight.clone()],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("max_num_batched_tokens=224 leaves no slot to schedule after the 224 drafting slots of speculative method dflash with num_speculative_tokens=8 and max_num_seqs=32"),
        "{err}"
    );
    let (code, _, err) = run(
        VLLM,
        &argv("225", &[]),
        &[image("v0.27.1rc1"), four.clone()],
    );
    assert_eq!(code, Some(6), "{err}");
    // vLLM 0.30.0: 8 slots per request, whatever max_num_seqs.
    let (code, _, err) = run(VLLM, &argv("224", &[]), &[image("v0.30.0rc2"), four]);
    assert_eq!(code, Some(6), "{err}");
    let (code, _, err) = run(VLLM, &argv("8", &[]), &[image("v0.30.0rc2"), eight.clone()]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("after the 8 drafting slots"), "{err}");
    assert!(!err.contains("max_num_seqs="), "{err}");
    // `--max-num-seqs` unset: the stand-in takes the most sequences of
    // vLLM's default pairs (1024 on a node of 70 GiB or more per NPU,
    // `capacity::default_batching`), 7 x 1024 = 7168 slots.
    let mut unset = argv("4096", &[]);
    unset.retain(|w| w != "--max-num-seqs=32");
    let (code, _, err) = run(VLLM, &unset, &[image("v0.27.1rc1"), eight.clone()]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("after the 7168 drafting slots") && err.contains("max_num_seqs=1024"),
        "{err}"
    );
    // DCP 3 does not divide TP 8.
    let (code, _, err) = run(
        VLLM,
        &argv("4096", &["--decode-context-parallel-size", "3"]),
        &[image("v0.30.0rc2"), eight],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("tp_size=8 must be divisible by dcp_size=3"),
        "{err}"
    );
}

/// A speculative method vLLM's V2 model runner refuses (the facts'
/// `v2_speculative_methods`, as rule `v2_runner_unsupported` reads them) is
/// refused with `VLLM_USE_V2_MODEL_RUNNER` on, in each vLLM's own words:
/// "VLLM_USE_V2_MODEL_RUNNER does not yet support: ..." at vLLM 0.22.1
/// (vllm/config/vllm.py L2064, ngram's feature from L2001), "Model Runner
/// V2 does not yet support: ..." at 0.30.0 (L3086, L2850). MTP, and the
/// same methods on the V1 runner, pass this check: with a bad device list
/// they stop at the next one, the devices.
#[test]
fn vllm_refuses_the_v2_runners_speculative_methods_in_its_words() {
    let with = |method: &str| {
        let mut a = rank_argv(7100, 1, 0, 12321, 8, None);
        a.extend(s(&[
            "--speculative-config",
            &format!(r#"{{"method": "{method}", "num_speculative_tokens": 1}}"#),
        ]));
        a
    };
    let env = |image: &str, v2: bool, devices: &str| {
        let mut e = vec![
            ("PD_STANDIN_IMAGE", image.to_owned()),
            ("ASCEND_RT_VISIBLE_DEVICES", devices.to_owned()),
        ];
        if v2 {
            e.push(("VLLM_USE_V2_MODEL_RUNNER", "1".to_owned()));
        }
        e
    };
    let good = "0,1,2,3,4,5,6,7";
    for (image, method, said) in [
        (
            "v0.21.0rc1",
            "ngram",
            "ValueError: VLLM_USE_V2_MODEL_RUNNER does not yet support: ngram/ngram_gpu speculative decoding",
        ),
        (
            "v0.30.0rc2",
            "suffix",
            "ValueError: Model Runner V2 does not yet support: speculative method 'suffix'",
        ),
    ] {
        let (code, _, err) = run(VLLM, &with(method), &env(image, true, good));
        assert_eq!(code, Some(1), "{image} {method}: {err}");
        assert!(err.contains(said), "{image} {method}: {err}");
        let (_, _, err) = run(VLLM, &with(method), &env(image, false, "x"));
        assert!(
            !err.contains("does not yet support") && err.contains("is not a device id"),
            "{image} {method} on V1: {err}"
        );
    }
    let (_, _, err) = run(VLLM, &with("mtp"), &env("v0.30.0rc2", true, "x"));
    assert!(
        !err.contains("does not yet support") && err.contains("is not a device id"),
        "mtp: {err}"
    );
}

/// Typed capture sizes all below the decode step with a full decode graph
/// are refused as vLLM refuses them (`decode_step_refusal`, the verdict rule
/// `capture_sizes_cover_decode_step` reads): MTP 1 (step 2) with sizes [1]
/// under `FULL_DECODE_ONLY`; [1, 2], the V2 runner, and `FULL` on vLLM
/// 0.18.0 (no separate decode routine, so no call) pass this check: it comes
/// when the model runner starts on the devices, so they stop at the next
/// one, the expectation file (here missing).
#[test]
fn vllm_refuses_capture_sizes_below_the_decode_step() {
    let with = |mode: &str, sizes: &str| {
        let mut a = rank_argv(7100, 1, 0, 12321, 8, None);
        a.extend(s(&[
            "--speculative-config",
            r#"{"method": "mtp", "num_speculative_tokens": 1}"#,
            "--compilation-config",
            &format!(r#"{{"cudagraph_mode": "{mode}", "cudagraph_capture_sizes": [{sizes}]}}"#),
        ]));
        a
    };
    let env = |image: &str, v2: bool| {
        let mut e = vec![
            ("PD_STANDIN_IMAGE", image.to_owned()),
            ("ASCEND_RT_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7".to_owned()),
            ("PD_STANDIN_EXPECT", "/nonexistent/expect".to_owned()),
        ];
        if v2 {
            e.push(("VLLM_USE_V2_MODEL_RUNNER", "1".to_owned()));
        }
        e
    };
    let (code, _, err) = run(
        VLLM,
        &with("FULL_DECODE_ONLY", "1"),
        &env("v0.30.0rc2", false),
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("ValueError: No valid cudagraph sizes after rounding to multiple of 2")
            && err.contains("vllm/config/compilation.py:"),
        "{err}"
    );
    for (mode, sizes, image, v2) in [
        ("FULL_DECODE_ONLY", "1, 2", "v0.30.0rc2", false),
        ("FULL_DECODE_ONLY", "1", "v0.30.0rc2", true),
        ("FULL", "1", "v0.18.0", false),
    ] {
        let (_, _, err) = run(VLLM, &with(mode, sizes), &env(image, v2));
        assert!(
            !err.contains("No valid cudagraph sizes")
                && err.contains("cannot read PD_STANDIN_EXPECT"),
            "{mode} [{sizes}] {image} v2={v2}: {err}"
        );
    }
    // vLLM 0.20.2 calls it for `FULL` too.
    let (code, _, err) = run(VLLM, &with("FULL", "1"), &env("v0.20.2rc1", false));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("No valid cudagraph sizes"), "{err}");
}

/// Without typed capture sizes the stand-in sizes the graphs from the
/// image's defaults (`Release::default_capture_sizes`): MTP 2 (step 3) with
/// `--max-num-seqs 1` lists 1, 2 up to v0.29.0rc1 and is refused as vLLM
/// refuses it; v0.30.0rc2 adds the cap 3 and passes, and so do
/// `--max-num-seqs 2` (1, 2, 4) and a `max_cudagraph_capture_size` set in
/// the compilation config (sizes set another way are not judged).
#[test]
fn vllm_refuses_default_capture_sizes_below_the_decode_step() {
    let with = |seqs: &str, compilation: &str| {
        let mut a = rank_argv(7100, 1, 0, 12321, 8, None);
        a.extend(s(&[
            "--speculative-config",
            r#"{"method": "mtp", "num_speculative_tokens": 2}"#,
            "--max-num-seqs",
            seqs,
            "--compilation-config",
            compilation,
        ]));
        a
    };
    let env = |image: &str| {
        vec![
            ("PD_STANDIN_IMAGE", image.to_owned()),
            ("ASCEND_RT_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7".to_owned()),
            ("PD_STANDIN_EXPECT", "/nonexistent/expect".to_owned()),
        ]
    };
    let full = r#"{"cudagraph_mode": "FULL_DECODE_ONLY"}"#;
    for image in ["v0.23.0", "v0.29.0rc1"] {
        let (code, _, err) = run(VLLM, &with("1", full), &env(image));
        assert_eq!(code, Some(1), "{image}: {err}");
        assert!(
            err.contains("No valid cudagraph sizes after rounding to multiple of 3")
                && err.contains("cudagraph_capture_sizes ([1, 2])"),
            "{image}: {err}"
        );
    }
    let capped = r#"{"cudagraph_mode": "FULL_DECODE_ONLY", "max_cudagraph_capture_size": 2}"#;
    for (seqs, compilation, image) in [
        ("1", full, "v0.30.0rc2"),
        ("2", full, "v0.23.0"),
        ("1", capped, "v0.23.0"),
    ] {
        let (_, _, err) = run(VLLM, &with(seqs, compilation), &env(image));
        assert!(
            !err.contains("No valid cudagraph sizes")
                && err.contains("cannot read PD_STANDIN_EXPECT"),
            "{seqs} {compilation} {image}: {err}"
        );
    }
}

/// Typed capture sizes all above a typed `--max-num-batched-tokens` are
/// refused as vLLM's assert on the largest size kept refuses them
/// (`batch_refusal`, the rule `capture_sizes_within_batched_tokens`), on
/// every image; one size within the batch passes this check.
#[test]
fn vllm_refuses_capture_sizes_all_above_the_batch() {
    let with = |sizes: &str| {
        let mut a = rank_argv(7100, 1, 0, 12321, 8, None);
        a.extend(s(&[
            "--max-num-batched-tokens",
            "2048",
            "--compilation-config",
            &format!(
                r#"{{"cudagraph_mode": "FULL_DECODE_ONLY", "cudagraph_capture_sizes": [{sizes}]}}"#
            ),
        ]));
        a
    };
    let env = |image: &str| {
        vec![
            ("PD_STANDIN_IMAGE", image.to_owned()),
            ("ASCEND_RT_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7".to_owned()),
            ("PD_STANDIN_EXPECT", "/nonexistent/expect".to_owned()),
        ]
    };
    for image in ["v0.18.0", "v0.30.0rc2"] {
        let (code, _, err) = run(VLLM, &with("4096"), &env(image));
        assert_eq!(code, Some(1), "{image}: {err}");
        assert!(
            err.contains(
                "AssertionError: Maximum cudagraph size should be greater than or equal to 1"
            ) && err.contains("vllm/config/vllm.py:"),
            "{image}: {err}"
        );
        let (_, _, err) = run(VLLM, &with("1024, 4096"), &env(image));
        assert!(
            !err.contains("Maximum cudagraph size")
                && err.contains("cannot read PD_STANDIN_EXPECT"),
            "{image}: {err}"
        );
    }
}

/// FlashComm1 (env) on a TP1 rank is refused up to v0.26.0rc1 as
/// vllm-ascend's assert refuses it (`sp_assert_refusal`, the rule
/// `sequence_parallel_needs_tp_ep`), and so is a TP4 rank without
/// `--enable-expert-parallel`; from v0.27.1rc1 it goes on (sequence-parallel
/// MoE is off there instead), and so does a TP4 rank with expert parallelism.
#[test]
fn vllm_refuses_flashcomm1_at_tp1_or_without_expert_parallelism_up_to_v0_26_0rc1() {
    let env = |image: &str, devices: &str| {
        vec![
            ("PD_STANDIN_IMAGE", image.to_owned()),
            ("ASCEND_RT_VISIBLE_DEVICES", devices.to_owned()),
            ("PD_STANDIN_EXPECT", "/nonexistent/expect".to_owned()),
            ("VLLM_ASCEND_ENABLE_FLASHCOMM1", "1".to_owned()),
        ]
    };
    let tp1 = rank_argv(7100, 2, 0, 12321, 1, None);
    let mut no_ep = rank_argv(7100, 2, 0, 12321, 4, None);
    no_ep.retain(|a| a != "--enable-expert-parallel");
    for image in ["v0.23.0", "v0.26.0rc1"] {
        let (code, _, err) = run(VLLM, &tp1, &env(image, "0"));
        assert_eq!(code, Some(1), "{image}: {err}");
        assert!(
            err.contains("only supported when tp_size > 1")
                && err.contains("vllm_ascend/platform.py:"),
            "{image}: {err}"
        );
        let (code, _, err) = run(VLLM, &no_ep, &env(image, "0,1,2,3"));
        assert_eq!(code, Some(1), "{image}: {err}");
        assert!(
            err.contains("requires enable_expert_parallel=True"),
            "{image}: {err}"
        );
        let (_, _, err) = run(
            VLLM,
            &rank_argv(7100, 2, 0, 12321, 4, None),
            &env(image, "0,1,2,3"),
        );
        assert!(
            err.contains("cannot read PD_STANDIN_EXPECT"),
            "{image}: {err}"
        );
    }
    let (_, _, err) = run(VLLM, &tp1, &env("v0.30.0rc2", "0"));
    assert!(
        !err.contains("Flash Comm") && err.contains("cannot read PD_STANDIN_EXPECT"),
        "{err}"
    );
}

/// The environment of a TP4 rank on `image` with four devices and a missing
/// expectation file (the check after the ones under test), with FlashComm1
/// switched on by env when `fc`.
fn sp_env(image: &str, fc: bool) -> Vec<(&'static str, String)> {
    let mut e = vec![
        ("PD_STANDIN_IMAGE", image.to_owned()),
        ("ASCEND_RT_VISIBLE_DEVICES", "0,1,2,3".to_owned()),
        ("PD_STANDIN_EXPECT", "/nonexistent/expect".to_owned()),
    ];
    if fc {
        e.push(("VLLM_ASCEND_ENABLE_FLASHCOMM1", "1".to_owned()));
    }
    e
}

/// The stand-in runs the rules' sequence-parallel decision on argv and its
/// environment (`Release::sequence_parallel`, `tp_aligned_refusal`): at
/// TP4 with `--enable-expert-parallel`, FlashComm1 (key or env) turns
/// sequence-parallel MoE on from v0.27.1rc1, and capture sizes none of which
/// 4 divides are refused as vllm-ascend refuses them; without FlashComm1 or
/// with `--all2all-backend flashinfer_all2allv` the engine goes on to the
/// next check, the expectation file. On v0.26.0rc1 `enable_sp()` reads the
/// env and `check_and_update_config` asserts the same (L513).
#[test]
fn vllm_refuses_capture_sizes_tp_does_not_divide_under_sequence_parallelism() {
    let with = |extra: &[&str]| {
        let mut a = rank_argv(7100, 2, 0, 12321, 4, None);
        a.extend(s(&[
            "--compilation-config",
            r#"{"cudagraph_mode": "FULL_DECODE_ONLY", "cudagraph_capture_sizes": [3, 6, 9]}"#,
        ]));
        a.extend(s(extra));
        a
    };
    let env = sp_env;
    let key = ["--additional-config", r#"{"enable_flashcomm1": true}"#];
    for (extra, fc) in [(&[][..], true), (&key[..], false)] {
        let (code, _, err) = run(VLLM, &with(extra), &env("v0.30.0rc2", fc));
        assert_eq!(code, Some(1), "{err}");
        assert!(
            err.contains("AssertionError: cudagraph_capture_sizes [3, 6, 9] does not containvalues that are multiples of tp_size 4")
                && err.contains("vllm_ascend/platform.py:"),
            "{err}"
        );
    }
    let (code, _, err) = run(VLLM, &with(&[]), &env("v0.26.0rc1", true));
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("does not containvalues that are multiples of tp_size 4")
            && err.contains("vllm_ascend/platform.py:513"),
        "{err}"
    );
    let other = ["--all2all-backend", "flashinfer_all2allv"];
    for (extra, image, fc) in [
        (&[][..], "v0.30.0rc2", false),
        (&other[..], "v0.30.0rc2", true),
        (&[][..], "v0.26.0rc1", false),
    ] {
        let (_, _, err) = run(VLLM, &with(extra), &env(image, fc));
        assert!(
            !err.contains("does not containvalues")
                && err.contains("cannot read PD_STANDIN_EXPECT"),
            "{extra:?} {image} fc={fc}: {err}"
        );
    }
}

/// MTP 2 (decode step 3) at TP4 with FlashComm1 and a full decode graph is
/// refused as vLLM refuses it where vllm-ascend hands it the TP size
/// (`Release::sp_alignment_refusal`): at v0.27.1rc1 unless the capture sizes
/// are all multiples of 12, not without FlashComm1; from v0.29.0rc1 the
/// sizes are rounded to 12 instead, refused when none reaches it
/// (`Release::decode_graph_multiple`).
#[test]
fn vllm_refuses_a_decode_step_tp_does_not_align_with_under_sequence_parallelism() {
    let with = |sizes: &str| {
        let mut a = rank_argv(7100, 2, 0, 12321, 4, None);
        a.extend(s(&[
            "--speculative-config",
            r#"{"method": "mtp", "num_speculative_tokens": 2}"#,
            "--compilation-config",
            &format!(
                r#"{{"cudagraph_mode": "FULL_DECODE_ONLY", "cudagraph_capture_sizes": [{sizes}]}}"#
            ),
        ]));
        a
    };
    let env = sp_env;
    let (code, _, err) = run(VLLM, &with("4, 8"), &env("v0.27.1rc1", true));
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("ValueError: Can't determine cudagraph shapes that are both a multiple of 3 (num_speculative_tokens + 1) required by spec-decode and 4 (tensor_parallel_size)")
            && err.contains("vllm/config/compilation.py:"),
        "{err}"
    );
    // From v0.29.0rc1 vllm-ascend aligns the sizes to lcm(3, 4) itself,
    // and vLLM finds none at or under the largest.
    let (code, _, err) = run(VLLM, &with("4, 8"), &env("v0.29.0rc1", true));
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("ValueError: No valid cudagraph sizes after rounding to multiple of 12"),
        "{err}"
    );
    for (sizes, image, fc) in [
        ("12, 24", "v0.27.1rc1", true),
        ("4, 12", "v0.29.0rc1", true),
        ("4, 8", "v0.27.1rc1", false),
    ] {
        let (_, _, err) = run(VLLM, &with(sizes), &env(image, fc));
        assert!(
            !err.contains("Can't determine cudagraph shapes")
                && err.contains("cannot read PD_STANDIN_EXPECT"),
            "[{sizes}] {image} fc={fc}: {err}"
        );
    }
}

/// A Qwen3.5 checkpoint (its `config.json` names
/// `Qwen3_5MoeForConditionalGeneration`, a hybrid linear-attention class
/// without Mamba prefix caching) with prefix caching on and env
/// `VLLM_USE_V2_MODEL_RUNNER=1` is refused on vLLM 0.22.1 to 0.24.0 as
/// vLLM's assert refuses it (`mamba_align_refusal`, the rule
/// `mamba_align_v2_runner`); it goes on with prefix caching off, with the
/// env `0`, on a DeepSeek checkpoint, and on v0.25.1rc1.
#[test]
fn vllm_refuses_the_v2_runner_on_qwen3_5_in_mamba_align_mode() {
    let dir = crate::tmpdir("qwen3_5_model");
    let model_dir = |arch: &str| {
        let d = dir.join(arch);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("config.json"),
            format!("{{\"architectures\": [\"{arch}\"]}}"),
        )
        .unwrap();
        // A ModelSlim build (the argv passes `--quantization ascend`).
        std::fs::write(d.join("quant_model_description.json"), "{}").unwrap();
        d.display().to_string()
    };
    let qwen = model_dir("Qwen3_5MoeForConditionalGeneration");
    let deepseek = model_dir("DeepseekV3ForCausalLM");
    let argv = |model: &str, prefix: &str| {
        let mut a = rank_argv(7100, 2, 0, 12321, 4, None);
        a[1] = model.to_owned();
        for x in a.iter_mut() {
            if x == "--no-enable-prefix-caching" {
                *x = prefix.to_owned();
            }
        }
        a
    };
    let env = |image: &str, v2: &str| {
        vec![
            ("PD_STANDIN_IMAGE", image.to_owned()),
            ("ASCEND_RT_VISIBLE_DEVICES", "0,1,2,3".to_owned()),
            ("PD_STANDIN_EXPECT", "/nonexistent/expect".to_owned()),
            ("VLLM_USE_V2_MODEL_RUNNER", v2.to_owned()),
        ]
    };
    let on = "--enable-prefix-caching";
    let off = "--no-enable-prefix-caching";
    for image in ["v0.22.1rc1", "v0.24.0rc1"] {
        let (code, _, err) = run(VLLM, &argv(&qwen, on), &env(image, "1"));
        assert_eq!(code, Some(1), "{image}: {err}");
        assert!(
            err.contains("mamba_cache_mode='align'") && err.contains("vllm/config/vllm.py:"),
            "{image}: {err}"
        );
        for (model, prefix, v2) in [(&qwen, off, "1"), (&qwen, on, "0"), (&deepseek, on, "1")] {
            let (_, _, err) = run(VLLM, &argv(model, prefix), &env(image, v2));
            assert!(
                err.contains("cannot read PD_STANDIN_EXPECT"),
                "{image} {model} {prefix} {v2}: {err}"
            );
        }
    }
    let (_, _, err) = run(VLLM, &argv(&qwen, on), &env("v0.25.1rc1", "1"));
    assert!(err.contains("cannot read PD_STANDIN_EXPECT"), "{err}");
}

/// The stand-in `vllm` refuses what vLLM 0.18.0 to 0.26.0 assert in Mamba
/// 'align' mode: the attention block vllm-ascend raised to carry a request's
/// Gated-DeltaNet state above `max_num_batched_tokens`
/// (`MambaAlign::block_refusal`, as the rule `mamba_align_block_within_batch`).
/// The model directory's `config.json` has Qwen3.5-397B's dimensions in its
/// `text_config`; by hand: at TP2 the state is 32 x 128 x 128 x 4 = 2097152 B
/// and the K page 256 x 1 x 2 = 512 B, a 4096-token block above the 2048 the
/// argv types; at TP4 2048, which fits.
#[test]
fn vllm_refuses_a_mamba_align_block_above_the_batch() {
    let dir = crate::tmpdir("qwen3_5_gdn_model");
    crate::qwen3_5_weights(&dir);
    let model = dir.display().to_string();
    let argv = |tp: u32, extra: &[&str]| {
        let mut a = rank_argv(7100, 2, 0, 12321, tp, None);
        a[1] = model.clone();
        for x in a.iter_mut() {
            if x == "--no-enable-prefix-caching" {
                *x = "--enable-prefix-caching".to_owned();
            }
        }
        a.extend(extra.iter().map(|x| (*x).to_owned()));
        a
    };
    let env = |image: &str, tp: u32| {
        vec![
            ("PD_STANDIN_IMAGE", image.to_owned()),
            (
                "ASCEND_RT_VISIBLE_DEVICES",
                (0..tp).map(|d| d.to_string()).collect::<Vec<_>>().join(","),
            ),
            ("PD_STANDIN_EXPECT", "/nonexistent/expect".to_owned()),
        ]
    };
    let started = |err: &str| err.contains("cannot read PD_STANDIN_EXPECT");
    for image in ["v0.18.0", "v0.23.0", "v0.26.0rc1"] {
        let (code, _, err) = run(VLLM, &argv(2, &[]), &env(image, 2));
        assert_eq!(code, Some(1), "{image}: {err}");
        assert!(
            err.contains("In Mamba cache align mode, block_size (4096) must be <= max_num_batched_tokens (2048)")
                && err.contains("vllm/config/vllm.py:"),
            "{image}: {err}"
        );
        let (_, _, err) = run(VLLM, &argv(4, &[]), &env(image, 4));
        assert!(started(&err), "{image}: {err}");
        let (code, _, err) = run(VLLM, &argv(4, &["--block-size", "4096"]), &env(image, 4));
        assert_eq!(code, Some(1), "{image}: {err}");
        let (_, _, err) = run(
            VLLM,
            &argv(2, &["--mamba-cache-mode", "all"]),
            &env(image, 2),
        );
        assert!(started(&err), "{image}: {err}");
    }
    let (_, _, err) = run(VLLM, &argv(2, &[]), &env("v0.27.1rc1", 2));
    assert!(started(&err), "{err}");
}

/// The stand-in `vllm` refuses `--quantization ascend` on weights without
/// the ModelSlim description, as every image's vllm-ascend does
/// (`ModelSlimConfig.maybe_update_config`, the generated
/// `modelslim_description`); with the file, or without the flag, it goes on.
#[test]
fn vllm_refuses_modelslim_quantization_without_its_description() {
    let dir = crate::tmpdir("modelslim_model");
    std::fs::write(dir.join("config.json"), r#"{"model_type": "deepseek_v3"}"#).unwrap();
    let model = dir.display().to_string();
    // `rank_argv` passes `--quantization ascend`; `plain` drops it.
    let argv = |quantized: bool| {
        let mut a = rank_argv(7100, 2, 0, 12321, 4, None);
        a[1] = model.clone();
        if !quantized {
            let at = a.iter().position(|x| x == "--quantization").unwrap();
            a.drain(at..at + 2);
        }
        a
    };
    let env = |image: &str| {
        vec![
            ("PD_STANDIN_IMAGE", image.to_owned()),
            ("ASCEND_RT_VISIBLE_DEVICES", "0,1,2,3".to_owned()),
            ("PD_STANDIN_EXPECT", "/nonexistent/expect".to_owned()),
        ]
    };
    let started = |err: &str| err.contains("cannot read PD_STANDIN_EXPECT");
    for (image, source) in [
        (
            "v0.18.0",
            "vllm_ascend/quantization/modelslim_config.py:625",
        ),
        (
            "v0.30.0rc2",
            "vllm_ascend/quantization/configs/modelslim_config.py:928",
        ),
    ] {
        let (code, _, err) = run(VLLM, &argv(true), &env(image));
        assert_eq!(code, Some(1), "{image}: {err}");
        assert!(
            err.contains("ModelSlim Quantization Config Not Found")
                && err.contains("('quant_model_description.json')")
                && err.contains(source),
            "{image}: {err}"
        );
        let (_, _, err) = run(VLLM, &argv(false), &env(image));
        assert!(started(&err), "{image}: {err}");
    }
    std::fs::write(dir.join("quant_model_description.json"), "{}").unwrap();
    let (_, _, err) = run(VLLM, &argv(true), &env("v0.30.0rc2"));
    assert!(started(&err), "{err}");
}

/// vLLM reads the model's `config.json` before anything else of its config:
/// the stand-in refuses a model path without one ("Invalid repository ID or
/// local directory", whatever else the argv asks) and a `config.json` that is
/// not a JSON object, and goes on with a readable one.
#[test]
fn vllm_refuses_a_model_without_a_readable_config() {
    let dir = crate::tmpdir("model_config_read");
    let model = dir.join("weights");
    let argv = |quantized: bool| {
        let mut a = rank_argv(7100, 2, 0, 12321, 4, None);
        a[1] = model.display().to_string();
        if !quantized {
            let at = a.iter().position(|x| x == "--quantization").unwrap();
            a.drain(at..at + 2);
        }
        a
    };
    let env = vec![
        ("PD_STANDIN_IMAGE", "v0.23.0".to_owned()),
        ("ASCEND_RT_VISIBLE_DEVICES", "0,1,2,3".to_owned()),
        ("PD_STANDIN_EXPECT", "/nonexistent/expect".to_owned()),
    ];
    let refused = |err: &str| {
        err.contains(&format!(
            "Invalid repository ID or local directory specified: '{}'",
            model.display()
        )) && err.contains("vllm/transformers_utils/config.py get_config")
    };
    // No directory, then a directory without config.json.
    for quantized in [true, false] {
        let (code, _, err) = run(VLLM, &argv(quantized), &env);
        assert_eq!(code, Some(1), "{err}");
        assert!(refused(&err), "{err}");
    }
    std::fs::create_dir_all(&model).unwrap();
    let (code, _, err) = run(VLLM, &argv(false), &env);
    assert_eq!(code, Some(1), "{err}");
    assert!(refused(&err), "{err}");
    for broken in ["{\"model_type\": ", "[1, 2]"] {
        std::fs::write(model.join("config.json"), broken).unwrap();
        let (code, _, err) = run(VLLM, &argv(false), &env);
        assert_eq!(code, Some(1), "{broken}: {err}");
        assert!(err.contains("is not a valid JSON file"), "{broken}: {err}");
    }
    std::fs::write(
        model.join("config.json"),
        r#"{"model_type": "deepseek_v3"}"#,
    )
    .unwrap();
    let (_, _, err) = run(VLLM, &argv(false), &env);
    assert!(err.contains("cannot read PD_STANDIN_EXPECT"), "{err}");
}

/// The stand-in judges the weights' `config.json` as vLLM and vllm-ascend do
/// at start, with the generated preflight's own reading and conditions: a
/// typed `max_model_len` above the derived length (DeepSeek-V3's YaRN
/// config, read per image: vLLM 0.23 scales the original length, 0.30 takes
/// `max_position_embeddings` as already scaled), unless
/// `VLLM_ALLOW_LONG_MAX_MODEL_LEN` is true or `--hf-overrides` lengthens it;
/// a speculative method whose aux-hidden-states gate the model type does not
/// meet; hierarchy MC2 on more experts than the image allows. Each at the
/// limit and one past it.
#[test]
fn vllm_judges_the_weights_config_as_vllm_does() {
    let dir = crate::tmpdir("checkpoint_refusal");
    let model = dir.join("weights");
    std::fs::create_dir_all(&model).unwrap();
    std::fs::write(model.join("quant_model_description.json"), "{}").unwrap();
    let len = pd_dsl::dims::DEEPSEEK_V3.max_model_len;
    let write = |extra: serde_json::Value| {
        let mut c = serde_json::json!({
            "architectures": ["DeepseekV3ForCausalLM"],
            "model_type": "deepseek_v3",
            "max_position_embeddings": len,
            "rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": len / 40},
        });
        c.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        std::fs::write(model.join("config.json"), c.to_string()).unwrap();
    };
    let argv = |sets: &[(&str, String)], adds: &[&str]| {
        let mut a = rank_argv(7110, 1, 0, 12331, 4, None);
        a[1] = model.display().to_string();
        for (flag, value) in sets {
            let at = a.iter().position(|x| x == flag).unwrap();
            a[at + 1] = value.clone();
        }
        a.extend(adds.iter().map(|s| (*s).to_owned()));
        a
    };
    let env = |image: &str, extra: &[(&'static str, &str)]| {
        let mut e = vec![
            ("PD_STANDIN_IMAGE", image.to_owned()),
            ("ASCEND_RT_VISIBLE_DEVICES", "0,1,2,3".to_owned()),
            ("PD_STANDIN_EXPECT", "/nonexistent/expect".to_owned()),
        ];
        e.extend(extra.iter().map(|(k, v)| (*k, (*v).to_owned())));
        e
    };
    // Past every start-up check of the config, the stand-in looks for its
    // expectation file.
    let passes = |a: &[String], e: &[(&str, String)]| {
        let (_, _, err) = run(VLLM, a, e);
        assert!(
            err.contains("cannot read PD_STANDIN_EXPECT"),
            "{a:?}: {err}"
        );
    };
    let refused = |a: &[String], e: &[(&str, String)], needles: &[String]| {
        let (code, _, err) = run(VLLM, a, e);
        assert_eq!(code, Some(1), "{a:?}: {err}");
        for n in needles {
            assert!(err.contains(n.as_str()), "{a:?}: no {n:?} in {err}");
        }
    };

    write(serde_json::json!({}));
    let at = |n: u64| argv(&[("--max-model-len", n.to_string())], &[]);
    for image in ["v0.23.0", "v0.30.0rc2"] {
        let vllm = pd_dsl::tables::image(image).unwrap().vllm();
        passes(&at(len), &env(image, &[]));
        refused(
            &at(len + 1),
            &env(image, &[]),
            &[format!(
                "mixed max_model_len {} is above the {len} vLLM {vllm} derives",
                len + 1
            )],
        );
        passes(
            &at(len + 1),
            &env(image, &[("VLLM_ALLOW_LONG_MAX_MODEL_LEN", " True ")]),
        );
        refused(
            &at(len + 1),
            &env(image, &[("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "0")]),
            &[format!("is above the {len}")],
        );
    }
    // `--hf-overrides` lengthens what vLLM 0.30 reads as already scaled; vLLM
    // 0.23 derives YaRN's length from the original, which it leaves alone.
    let overridden = |n: u64| {
        argv(
            &[("--max-model-len", n.to_string())],
            &[
                "--hf-overrides",
                &format!(r#"{{"max_position_embeddings": {n}}}"#),
            ],
        )
    };
    passes(&overridden(2 * len), &env("v0.30.0rc2", &[]));
    refused(
        &overridden(2 * len),
        &env("v0.23.0", &[]),
        &[format!("is above the {len}")],
    );

    // The aux-hidden-states gate, on an image whose vLLM has it.
    let (gated, gate) = pd_dsl::tables::IMAGES
        .iter()
        .find_map(|i| {
            let v = pd_dsl::upstream::vllm_of(i).ok()?;
            Some((i.tag, v.aux_hidden_states.as_ref()?))
        })
        .expect("an image whose vLLM gates aux hidden states");
    let method = &gate.methods[0];
    let spec = |m: &str| {
        argv(
            &[(
                "--speculative-config",
                format!(r#"{{"num_speculative_tokens": 1, "method": "{m}"}}"#),
            )],
            &[],
        )
    };
    write(serde_json::json!({"model_type": "pd_other_model"}));
    refused(
        &spec(method),
        &env(gated, &[]),
        &[format!(
            "mixed speculative method {method} needs a model type containing one of"
        )],
    );
    passes(&spec("mtp"), &env(gated, &[]));
    write(serde_json::json!({"model_type": gate.model_types[0]}));
    passes(&spec(method), &env(gated, &[]));

    // Hierarchy MC2's expert limit, on an image that has it.
    let (mc2_image, limit) = pd_dsl::tables::IMAGES
        .iter()
        .find_map(|i| Some((i.tag, i.facts()?.mc2_hierarchy_experts.as_ref()?)))
        .expect("an image with hierarchy MC2's limit");
    let key = pd_dsl::upstream::vllm_of(pd_dsl::tables::image(mc2_image).unwrap())
        .unwrap()
        .checkpoint_reads
        .expert_keys[0]
        .clone();
    let mc2 = argv(
        &[],
        &[
            "--additional-config",
            &format!(r#"{{"mc2_comm_alg": "{}"}}"#, limit.alg),
        ],
    );
    write(serde_json::json!({ key.clone(): limit.max_experts }));
    passes(&mc2, &env(mc2_image, &[]));
    write(serde_json::json!({ key: limit.max_experts + 1 }));
    refused(
        &mc2,
        &env(mc2_image, &[]),
        &[format!(
            "runs hierarchy MC2 (mc2_comm_alg) on {} experts",
            limit.max_experts + 1
        )],
    );
    passes(&argv(&[], &[]), &env(mc2_image, &[]));
}
