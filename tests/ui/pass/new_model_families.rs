//! Model families beyond DeepSeek: Kimi-K2.6 PD with its dflash draft (the
//! upstream 1P1D shape), Qwen3-235B mixed, GLM-5.1 with MTP, DeepSeek-V3.2
//! with its tokenizer mode. Facts come from the model table, never the layout.
use pd_dsl::layout;

fn options(layout: &pd_dsl::Layout, role: pd_dsl::Role) -> Vec<(String, Option<String>)> {
    layout.serve[&role].options(layout.model, &layout.served_model_name)
}

fn value<'a>(opts: &'a [(String, Option<String>)], flag: &str) -> Option<&'a str> {
    opts.iter()
        .find(|(n, _)| n == flag)
        .and_then(|(_, v)| v.as_deref())
}

fn main() {
    let kimi = layout! {
        name: "kimi-k2.6-w4a8/a3-1p1d",
        model: kimi_k2_6_w4a8,
        hardware: a3,
        image: "v0.23.0",
        topology: <prefill 1 x dp2tp8; decode 1 x dp4tp4;>,
        connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        serve: { expert_parallel: true, trust_remote_code: true },
        prefill: { speculative: { method: dflash, tokens: 1 } },
        // Upstream's decode batch (max_num_seqs 16, max_num_batched_tokens 256):
        // vLLM's defaults leave no slot after dflash's drafting reserve.
        decode: {
            max_num_batched_tokens: 256,
            max_num_seqs: 16,
            speculative: { method: dflash, tokens: 15 },
        },
        provenance: { recorded: "2026-08-20" },
    };
    let Ok(kimi) = pd_dsl::check(&kimi) else {
        std::process::exit(1)
    };
    let d = options(&kimi, pd_dsl::Role::Decode);
    assert_eq!(value(&d, "--served-model-name"), Some("kimi_k26"));
    assert_eq!(value(&d, "--quantization"), Some("ascend"));
    assert_eq!(
        value(&d, "--speculative-config"),
        Some(r#"{"num_speculative_tokens":15,"method":"dflash","model":"z-lab/Kimi-K2.5-DFlash"}"#)
    );
    assert_eq!(value(&d, "--tokenizer-mode"), None);
    assert!(kimi.model_path.ends_with("/Eco-Tech/Kimi-K2.6-w4a8"));

    let qwen = layout! {
        name: "qwen3-235b-a22b/a3-mixed",
        model: qwen3_235b_a22b,
        hardware: a3,
        image: "v0.23.0",
        topology: <mixed 1 x dp4tp4>,
        ports: { api: 8000 },
        serve: { expert_parallel: true },
        mixed: { max_num_seqs: 1, block_size: 128 },
        provenance: { recorded: "2026-08-20" },
    };
    let Ok(qwen) = pd_dsl::check(&qwen) else {
        std::process::exit(1)
    };
    let m = options(&qwen, pd_dsl::Role::Mixed);
    assert_eq!(value(&m, "--quantization"), None, "BF16 runs without `--quantization`");
    assert_eq!(value(&m, "--served-model-name"), Some("qwen3"));

    let glm = layout! {
        name: "glm-5.1-w8a8c8/a3-mixed",
        model: glm_5_1_w8a8c8,
        hardware: a3,
        image: "v0.23.0",
        topology: <mixed 1 x dp1tp16>,
        ports: { api: 8000 },
        mixed: {
            speculative: { method: mtp, tokens: 3 },
            additional_config: { "enable_sparse_li_c8": true, "enable_reduce_sample": true },
        },
        provenance: { recorded: "2026-08-20" },
    };
    let Ok(glm) = pd_dsl::check(&glm) else {
        std::process::exit(1)
    };
    assert_eq!(glm.served_model_name, "glm-5");

    let v32 = layout! {
        name: "deepseek-v3.2-w8a8/a3-mixed",
        model: deepseek_v3_2_w8a8,
        hardware: a3,
        image: "v0.23.0",
        topology: <mixed 1 x dp2tp8>,
        ports: { api: 8000 },
        serve: { expert_parallel: true, max_model_len: 32768 },
        mixed: { additional_config: { "eplb_config": { "eplb_policy_type": 3, "eplb_heat_collection_stage": "decode" } } },
        provenance: { recorded: "2026-08-20" },
    };
    let Ok(v32) = pd_dsl::check(&v32) else {
        std::process::exit(1)
    };
    let m = options(&v32, pd_dsl::Role::Mixed);
    assert_eq!(value(&m, "--tokenizer-mode"), Some("deepseek_v32"));
}
