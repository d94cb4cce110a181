//! Env (literal, integer, `prepend`), extra flags with JSON values, additional_config.
use pd_dsl::layout;

fn main() {
    let spec = layout! {
        name: "demo/a3-env",
        model: deepseek_v4_flash_w8a8_mtp,
        hardware: a3,
        image: "v0.21.0rc1",
        topology: <prefill 1 x dp4tp4; decode 1 x dp16tp1;>,
        connector: mooncake_hybrid {
            kv_port: { prefill: 36100, decode: 36200 },
        },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        serve: { expert_parallel: true,
            env: { HCCL_BUFFSIZE: 1024, OMP_NUM_THREADS: "1", LD_LIBRARY_PATH: prepend("/usr/local/Ascend/lib64") },
            flags: ["--disable-log-stats", "--tokenizer-mode" = "slow", "--hf-overrides" = { "rope_scaling": null, "x": [1, -2, 0.5] }],
            additional_config: { "enable_cpu_binding": true, "ascend_compilation_config": { "fuse_norm_quant": true } },
        },
        decode: { env: { DYNAMIC_EPLB: "true" }, additional_config: { "eplb_config": { "dynamic_eplb": true, "num_redundant_experts": 16 } } },
        provenance: { recorded: "2026-06-27" },
    };
    let Ok(layout) = pd_dsl::check(&spec) else {
        std::process::exit(1)
    };
    let decode = &layout.serve[&pd_dsl::Role::Decode];
    assert_eq!(decode.env.len(), 4);
    assert_eq!(decode.flags.len(), 3);
    assert_eq!(decode.additional_config.len(), 3);
}
