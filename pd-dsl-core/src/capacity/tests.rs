//! Tests of `capacity`.

use super::*;
use crate::tables::{self, A3};

fn input<'a>(model: &'a Model, serve: &'a Serve, dp: u32, tp: u32) -> RoleInput<'a> {
    RoleInput {
        model,
        hardware: &A3,
        image: tables::image("v0.23.0").expect("image"),
        role: Role::Mixed,
        serve,
        dp,
        tp,
        pcp: 1,
        engines: 1,
        workload: None,
        kv_pool: false,
    }
}

fn model(id: &str) -> &'static Model {
    tables::MODELS
        .iter()
        .copied()
        .find(|m| m.id == id)
        .expect("model")
}

/// Routed experts are split over all `dp x tp` ranks whether or not
/// expert parallelism is on (vLLM flattens TP across DP for the MoE
/// layers): MiniMax-M2.7 w8a8 at DP4 TP4 holds a sixteenth of its
/// 224.7B int8 expert parameters per rank either way, and only the
/// dense part is split over TP alone.
#[test]
fn experts_over_every_rank_with_or_without_ep() {
    let m = model("minimax_m2_7_w8a8_quarot");
    let serve = Serve {
        gpu_memory_utilization: Some("0.5".into()),
        ..Serve::default()
    };
    let flat = role_budget(&input(m, &serve, 4, 4)).expect("sized");
    assert_eq!(flat.ep, 16);
    assert!(
        flat.weights.routed < 15 * GIB,
        "{}",
        gib(flat.weights.routed)
    );
    assert!(flat.kv_bytes > 0, "{}", flat.summary());
    let ep = Serve {
        expert_parallel: true,
        ..serve.clone()
    };
    let b = role_budget(&input(m, &ep, 4, 4)).expect("sized");
    assert_eq!(b.ep, 16);
    assert_eq!(b.weights.routed, flat.weights.routed);
    // One DP rank alone: the experts go over its TP ranks only.
    let one = role_budget(&input(m, &serve, 1, 4)).expect("sized");
    assert_eq!(one.ep, 4);
    assert!(one.weights.routed > 52 * GIB, "{}", gib(one.weights.routed));
    assert!(one.kv_bytes < 0, "{}", one.summary());
}

/// MLA caches one latent head per layer whatever the TP size; GQA
/// splits KV heads over TP down to one per rank.
#[test]
fn kv_per_token_by_attention_kind() {
    let serve = Serve::default();
    let v3 = dims::dims_for("deepseek_v3_1_w8a8_mtp_quarot").expect("dims");
    for tp in [1, 4, 8, 16] {
        assert_eq!(kv_per_token(v3.arch, v3.format, &serve, &A3, tp), (1152, 0));
    }
    let c8 = dims::dims_for("deepseek_v3_1_w8a8c8_mxfp8").expect("dims");
    assert_eq!(kv_per_token(c8.arch, c8.format, &serve, &A3, 4).0, 640);
    let q = dims::dims_for("qwen3_235b_a22b_w8a8").expect("dims");
    let per = |tp| kv_per_token(q.arch, q.format, &serve, &A3, tp).0;
    assert_eq!((per(1), per(2), per(4), per(8)), (2048, 1024, 512, 512));
    let ds = dims::dims_for("deepseek_v3_2_w8a8").expect("dims");
    assert_eq!(kv_per_token(ds.arch, ds.format, &serve, &A3, 8).0, 1408);
    let mut li = Serve::default();
    li.additional_config
        .insert("enable_sparse_li_c8".into(), Json::Bool(true));
    assert_eq!(kv_per_token(ds.arch, ds.format, &li, &A3, 8).0, 1152 + 130);
    li.additional_config
        .insert("enable_sparse_sfa_c8".into(), Json::Bool(true));
    assert_eq!(kv_per_token(ds.arch, ds.format, &li, &A3, 8).0, 656 + 130);
}

/// EPLB redundant experts add physical experts over the EP group.
#[test]
fn redundant_experts_add_weight() {
    let m = model("deepseek_v3_1_w8a8_mtp_quarot");
    let plain = Serve {
        expert_parallel: true,
        ..Serve::default()
    };
    let mut eplb = plain.clone();
    eplb.additional_config.insert(
        "eplb_config".into(),
        serde_json::json!({ "num_redundant_experts": 16 }),
    );
    let a = role_budget(&input(m, &plain, 4, 4)).expect("sized");
    let b = role_budget(&input(m, &eplb, 4, 4)).expect("sized");
    assert_eq!(b.redundant_experts, 16);
    // 16 more experts of 44.04M int8 parameters over 58 layers, over 16 ranks.
    let per_expert = dims::DEEPSEEK_V3.expert_params();
    assert_eq!(
        b.weights.routed - a.weights.routed,
        (58 * 272 * per_expert).div_ceil(16) - (58 * 256 * per_expert).div_ceil(16)
    );
}

/// The largest `max_model_len` that fits is the last one whose blocks
/// fit, and the block count follows vLLM's integer division.
#[test]
fn block_math() {
    let m = model("deepseek_v3_1_w8a8_mtp_quarot");
    let serve = Serve {
        expert_parallel: true,
        max_model_len: Some(16384),
        ..Serve::default()
    };
    let b = role_budget(&input(m, &serve, 4, 4)).expect("sized");
    let page = 1152 * 128;
    assert_eq!(b.kv_blocks, b.kv_bytes as u64 / page / 61);
    assert_eq!(b.kv_tokens, b.kv_blocks * 128);
    let fits = |len: u64| len.div_ceil(128) * page * 61 <= b.kv_bytes as u64;
    assert!(fits(b.max_len_fits));
    assert!(b.max_len_fits == 163840 || !fits(b.max_len_fits + 1));
    assert_eq!(
        b.requests_at_max_len,
        b.kv_bytes as u64 / (16384 * 1152 * 61)
    );
}

/// Decode context parallelism: a rank keeps cdiv(len, dcp) tokens of a
/// request, so at DCP 4 four times the requests of a length fit and a
/// request may be four times longer (up to the model's context).
#[test]
fn decode_context_parallel_shards_a_request() {
    let m = model("deepseek_v3_1_w8a8_mtp_quarot");
    let serve = Serve {
        expert_parallel: true,
        max_model_len: Some(16384),
        ..Serve::default()
    };
    let one = role_budget(&input(m, &serve, 4, 4)).expect("sized");
    let mut sharded = serve.clone();
    sharded
        .flags
        .push(("--decode-context-parallel-size".into(), Some(Json::from(4))));
    let four = role_budget(&input(m, &sharded, 4, 4)).expect("sized");
    assert_eq!(four.kv_bytes, one.kv_bytes);
    let page = 1152 * 128 * 61;
    assert_eq!(
        four.requests_at_max_len,
        four.kv_bytes as u64 / (4096 / 128 * page)
    );
    assert!(four.requests_at_max_len >= 4 * one.requests_at_max_len);
    assert!(
        four.max_len_fits == 163840 || four.max_len_fits >= 4 * one.max_len_fits,
        "{} vs {}",
        four.max_len_fits,
        one.max_len_fits
    );
}

fn on<'a>(
    hw: &'static Hardware,
    model: &'a Model,
    serve: &'a Serve,
    dp: u32,
    tp: u32,
) -> RoleBudget {
    let input = RoleInput {
        hardware: hw,
        ..input(model, serve, dp, tp)
    };
    role_budget(&input).expect("sized")
}

fn ep(len: u64, util: &str, mtp: bool) -> Serve {
    Serve {
        expert_parallel: true,
        max_model_len: Some(len),
        gpu_memory_utilization: Some(util.into()),
        speculative: mtp.then(|| crate::layout::Speculative {
            method: "mtp".into(),
            tokens: 1,
            enforce_eager: None,
        }),
        ..Serve::default()
    }
}

/// The budget against the sizing statements of the vllm-ascend
/// tutorials (docs/source/tutorials/models/*.md at v0.23.0; the figures
/// are in BENCHMARKS.md, "Capacity"). Each assertion is one statement.
#[test]
fn published_sizing_statements() {
    use crate::tables::{A2, A950DT};
    let show = |what: &str, b: &RoleBudget| {
        eprintln!(
            "{what}: weights {} GiB, KV {} GiB, {} tokens, {} blocks of {}, fits {}",
            gib(b.weights.total()),
            gib_signed(b.kv_bytes),
            b.kv_tokens,
            b.kv_blocks,
            b.block_size,
            b.max_len_fits
        )
    };
    let v31 = model("deepseek_v3_1_w8a8_mtp_quarot");
    // DeepSeek-V3.1.md: "`DeepSeek-V3.1-w8a8-mtp-QuaRot`: require at
    // least 2 Atlas 800 A2 (64GB x 8)".
    let s = ep(16384, "0.92", true);
    let one_a2 = on(&A2, v31, &s, 1, 8);
    show("V3.1 w8a8 1xA2 dp1tp8", &one_a2);
    assert!(one_a2.kv_bytes < 0);
    let two_a2 = on(&A2, v31, &s, 4, 4);
    show("V3.1 w8a8 2xA2 dp4tp4", &two_a2);
    assert!(two_a2.max_len_fits >= 16384);
    // Table 2 (A3, one machine): TP4 DP4 up to 39K, TP8 DP2 up to 132K.
    let s = ep(39936, "0.92", true);
    let b = on(&A3, v31, &s, 4, 4);
    show("V3.1 w8a8 A3 dp4tp4", &b);
    assert!(b.max_len_fits >= 39936);
    let s = ep(135168, "0.92", true);
    let b = on(&A3, v31, &s, 2, 8);
    show("V3.1 w8a8 A3 dp2tp8", &b);
    assert!(b.max_len_fits >= 135168);
    // "we recommend to deploy 2P1D (4 nodes) rather than 1P1D (2 nodes),
    // because there is no enough NPU memory to serve high concurrency in
    // 1P1D": one decode node holds far fewer tokens than two.
    let s = ep(65536, "0.92", true);
    let one_node = on(&A3, v31, &s, 16, 1);
    show("V3.1 w8a8 A3 decode dp16tp1", &one_node);
    assert!(
        one_node.kv_bytes < 0,
        "dp16tp1 on one node does not even load"
    );
    let four = on(&A3, v31, &s, 4, 4);
    let two_nodes = on(&A3, v31, &s, 32, 1);
    show("V3.1 w8a8 A3 decode dp4tp4", &four);
    show("V3.1 w8a8 A3 decode dp32tp1", &two_nodes);
    assert!(32 * two_nodes.kv_tokens > 8 * 4 * four.kv_tokens);
    // 950DT: table 4, one machine TP8 with 132K on the w4a4 MLP / w8a8c8
    // attention weights.
    let mx = model("deepseek_v3_1_w4a4c8_mxfp4");
    let s = ep(135168, "0.9", true);
    let b = on(&A950DT, mx, &s, 1, 8);
    show("V3.1 mxfp4 950DT dp1tp8", &b);
    assert!(b.max_len_fits >= 135168);
    // DeepSeek-V4-Flash.md: w8a8-mtp "requires ... 1 Atlas 800 A2 (64GB
    // x 8) node", max-model-len up to 1048576.
    let v4 = model("deepseek_v4_flash_w8a8_mtp");
    let s = ep(1_048_576, "0.9", true);
    let b = on(&A2, v4, &s, 1, 8);
    show("V4-Flash w8a8 1xA2 dp1tp8", &b);
    assert!(b.max_len_fits >= 1_048_576);
    // Kimi-K2.5.md: w4a8 "requires 1 Atlas 800 A3 (64G x 16) node or 2
    // Atlas 800 A2 (64G x 8) nodes".
    let kimi = model("kimi_k2_5_w4a8");
    let s = ep(32768, "0.9", false);
    let a3 = on(&A3, kimi, &s, 1, 16);
    let a2 = on(&A2, kimi, &s, 1, 8);
    show("Kimi-K2.5 w4a8 1xA3 dp1tp16", &a3);
    show("Kimi-K2.5 w4a8 1xA2 dp1tp8", &a2);
    assert!(a3.max_len_fits >= 32768);
    assert!(a2.kv_bytes < 0);
    // MiniMax-M2.md: M2.7 w8a8 "1x Atlas 800 A3 (64GB x 16) or 1x Atlas
    // 800I A2 (64GB x 8)", max-model-len 40690 at 0.85.
    let mm = model("minimax_m2_7_w8a8_quarot");
    let s = ep(40690, "0.85", false);
    let b = on(&A2, mm, &s, 1, 8);
    show("MiniMax-M2.7 w8a8 1xA2 dp1tp8", &b);
    assert!(b.max_len_fits >= 40690);
    // GLM5.md: "`glm-5-w4a8` and `glm-5.1-w4a8` can be deployed on 1 Atlas
    // 800 A3 (64GB x 16)" at DP1 x TP16, 200000, 0.95, MTP (L258-297);
    // the w8a8 builds at 40960 (L299-338); "`glm-5-w4a8` can be deployed on
    // 1 Atlas 800 A2 (64GB x 8)" at DP1 x TP8, 32768 (L340-379); BF16
    // "require at least 2 Atlas 800 A3" (L420).
    let s = ep(200_000, "0.95", true);
    let b = on(&A3, model("glm_5_1_w4a8"), &s, 1, 16);
    show("GLM-5.1 w4a8 1xA3 dp1tp16", &b);
    assert!(b.max_len_fits >= 200_000);
    let s = ep(40960, "0.95", true);
    let b = on(&A3, model("glm_5_1_w8a8"), &s, 1, 16);
    show("GLM-5.1 w8a8 1xA3 dp1tp16", &b);
    assert!(b.max_len_fits >= 40960);
    let s = ep(32768, "0.95", true);
    let b = on(&A2, model("glm_5_w4a8"), &s, 1, 8);
    show("GLM-5 w4a8 1xA2 dp1tp8", &b);
    assert!(b.max_len_fits >= 32768);
    let b = on(&A3, model("glm_5"), &s, 1, 16);
    show("GLM-5 BF16 1xA3 dp1tp16", &b);
    assert!(b.kv_bytes < 0);
    // Qwen3-235B-A22B.md: BF16 on "1 Atlas 800I A2 (64GB x 8)". The
    // budget disagrees at the e2e's 0.9: 470 GB of BF16 weights leave
    // no KV room on 8 x 60.96 GiB (recorded in BENCHMARKS.md).
    let q = model("qwen3_235b_a22b");
    let s = ep(40960, "0.9", false);
    let b = on(&A2, q, &s, 1, 8);
    show("Qwen3-235B BF16 1xA2 dp1tp8", &b);
    assert!(b.kv_bytes < 0);
    // Qwen3.5-397B-A17B.md: w8a8 "requires 1 Atlas 800 A3 (64GB x 16) node
    // or 2 Atlas 800 A2 (64GB x 8) nodes", with the commands' settings:
    // A3 DP1 x TP16, 133000 at 0.90, prefix caching, `qwen3_5_mtp` 3,
    // FULL_DECODE_ONLY, 128 sequences (L267-289); two A2 DP2 x TP8, 32768
    // at 0.9, no prefix caching, 16 sequences (L340-364); HCCL_BUFFSIZE
    // 1024 in both. Each fits its length, and the graph's Mamba blocks
    // cover its sequences (`mamba_blocks_cover_seqs`).
    let qwen35 = |len: u64, prefix: bool, seqs: u64, batched: u64| Serve {
        max_num_seqs: Some(seqs),
        max_num_batched_tokens: Some(batched),
        prefix_caching: Some(prefix),
        graph: Some(crate::spec::GraphMode::FullDecodeOnly),
        speculative: Some(crate::layout::Speculative {
            method: "qwen3_5_mtp".into(),
            tokens: 3,
            enforce_eager: None,
        }),
        env: vec![(
            "HCCL_BUFFSIZE".into(),
            crate::spec::EnvValue::Literal("1024".into()),
        )],
        ..ep(len, "0.9", false)
    };
    let w8a8 = model("qwen3_5_397b_a17b_w8a8_mtp");
    let s = qwen35(133_000, true, 128, 16384);
    let b = on(&A3, w8a8, &s, 1, 16);
    show("Qwen3.5-397B w8a8 1xA3 dp1tp16", &b);
    assert!(b.max_len_fits >= 133_000, "{}", b.summary());
    assert!(b.kv_blocks >= 128, "{}", b.summary());
    let s = qwen35(32768, false, 16, 4096);
    let b = on(&A2, w8a8, &s, 2, 8);
    show("Qwen3.5-397B w8a8 2xA2 dp2tp8", &b);
    assert!(b.max_len_fits >= 32768, "{}", b.summary());
    assert!(b.kv_blocks >= 16, "{}", b.summary());
    // The budget disagrees with "2 A2 nodes" as the least: on one (DP1 x
    // TP8, the experts over 8 ranks) it leaves the cache under a tenth of
    // the usable memory, more than one 32768 request needs. That margin is
    // within what the budget models rather than reproduces (the fitted
    // activations and runtime overhead, the uncounted 0.4B vision tower);
    // recorded in BENCHMARKS.md.
    let b = on(&A2, w8a8, &s, 1, 8);
    show("Qwen3.5-397B w8a8 1xA2 dp1tp8", &b);
    assert!(
        b.kv_bytes > 0 && (b.kv_bytes as u64) < b.requested_bytes / 10,
        "{}",
        b.summary()
    );
}

/// A Qwen3.5 role's budget is its hybrid plan: the MTP draft of any
/// `*_mtp` method joins the attention layers (group size 16 for 15 full and
/// 45 linear layers, 15 without it), the pool's blocks are the plan's of
/// the KV memory, one request of `max_model_len` needs the plan's blocks,
/// and prefix caching ('align' mode) adds one Mamba block per group to it.
#[test]
fn qwen3_5_budget_is_its_hybrid_plan() {
    let m = model("qwen3_5_397b_a17b_w8a8_mtp");
    let d = crate::dims::config_of(m)
        .and_then(|c| c.gdn())
        .expect("GDN dims");
    let img = tables::image("v0.23.0").expect("image");
    let sizing = HybridSizing::of(img.facts().expect("facts")).expect("sizing");
    let check = &crate::upstream::vllm_of(img).expect("vllm").kv_memory_check;
    let serve = |method: Option<&str>, prefix: Option<bool>| Serve {
        expert_parallel: true,
        max_model_len: Some(32768),
        prefix_caching: prefix,
        speculative: method.map(|m| crate::layout::Speculative {
            method: m.into(),
            tokens: 1,
            enforce_eager: None,
        }),
        ..Serve::default()
    };
    for (method, full) in [(None, 15), (Some("qwen3_5_mtp"), 16), (Some("mtp"), 16)] {
        for prefix in [None, Some(true)] {
            let s = serve(method, prefix);
            let b = role_budget(&input(m, &s, 2, 8)).expect("sized");
            let want = HybridKv::plan(
                &d,
                8,
                u64::from(method.is_some()),
                None,
                sizing,
                check,
                full,
                45,
                prefix == Some(true),
            )
            .expect("plan");
            assert_eq!(b.hybrid, Some(want), "{method:?} {prefix:?}");
            assert_eq!(want.group_size, full);
            let kv = b.kv_bytes.max(0) as u64;
            assert_eq!(b.kv_blocks, want.num_blocks(kv));
            assert_eq!(b.block_size, want.block);
            assert_eq!(
                b.requests_at_max_len,
                kv / want.request_bytes(32768),
                "{}",
                b.summary()
            );
            assert_eq!(b.max_len_fits >= 32768, want.fits(32768, kv));
        }
    }
    let none = role_budget(&input(m, &serve(None, None), 2, 8)).expect("sized");
    let align = role_budget(&input(m, &serve(None, Some(true)), 2, 8)).expect("sized");
    let (n, a) = (none.hybrid.expect("plan"), align.hybrid.expect("plan"));
    assert_eq!(a.mamba_blocks_per_request, n.mamba_blocks_per_request + 1);
    assert_eq!(
        a.request_bytes(32768) - n.request_bytes(32768),
        n.mamba_groups * n.pool_block()
    );
}

/// A Qwen3.5 role the release's block sizing refuses (TP 3 does not divide
/// its 64 linear-attention value heads) has no budget, rather than numbers
/// from the uniform-cache path; the same layout at TP 4 has one.
#[test]
fn qwen3_5_has_no_budget_where_its_cache_has_no_plan() {
    let m = model("qwen3_5_397b_a17b_w8a8_mtp");
    let s = ep(32768, "0.9", false);
    assert!(role_budget(&input(m, &s, 1, 3)).is_none());
    let b = role_budget(&input(m, &s, 1, 4)).expect("planned at TP 4");
    assert!(b.hybrid.is_some(), "{}", b.summary());
}
