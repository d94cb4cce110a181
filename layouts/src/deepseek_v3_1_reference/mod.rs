//! The reference configurations of upstream's DeepSeek-V3.1 tutorial
//! (`docs/source/tutorials/models/DeepSeek-V3.1.md` §9.1, tables 1-4, the
//! snapshot of 2026-08-22), one layout per distinct table row, each derived
//! from the tutorial's base layout of its hardware and deployment mode
//! (`deepseek_v3_1`).
//!
//! The tables give, per scenario and node kind: NPUs, TP, DP, max model
//! length and MTP tokens. Everything else is the base's, and what the tables
//! leave open (balance scheduling, batch sizes, ports, bench workload) is
//! stated in each layout as a deviation with the choice made and why.
//! "k" in the tables is 1024 tokens: the tutorial's own 950DT command writes
//! "132k" as `--max_model_len 135168`.
//!
//! Rows the tables list twice with identical settings (A3 low latency at 3.5k
//! and 16k; 950DT low latency at 3.5k and 16k) share one layout; the 950DT
//! single-node 64k row is the 950DT base itself (`950dt-1node-tp8`, 135168
//! tokens, MTP 3), so it gets no copy. `scenarios.rs` maps every row to its
//! layout, and `tests/tests/reference_configs.rs` checks each against the
//! tables pasted from the tutorial.

use pd_dsl::LayoutSpec;

/// Settings every A3 single-node row shares with the §5.1 A3 base
/// (`a3-1node-dp4tp4`); rows add topology, context, MTP and scheduling.
macro_rules! v3_1_a3_1node {
    ($($body:tt)*) => {
        ::pd_dsl::layout! {
            $($body)*
            model: deepseek_v3_1_w8a8_mtp_quarot,
            hardware: a3,
            image: "v0.23.0",
            ports: { api: 8015 },
            serve: {
                seed: 1024,
                expert_parallel: true,
                trust_remote_code: true,
                max_num_seqs: 16,
                max_num_batched_tokens: 4096,
                prefix_caching: false,
                gpu_memory_utilization: 0.92,
                graph: full_decode_only,
                env: {
                    HCCL_OP_EXPANSION_MODE: "AIV",
                    PYTORCH_NPU_ALLOC_CONF: "expandable_segments:True",
                },
            },
            deviate(
                "weights `DeepSeek-V3.1-w8a8-mtp-QuaRot` instead of the table's `DeepSeek-V3.1-w4a8-perchannel`",
                "§3.1 publishes no w4a8-perchannel weights; the base's w8a8 weights take more memory per NPU, so expect less KV room than the measured setup"
            ),
            deviate(
                "`max_num_seqs` 16 and `max_num_batched_tokens` 4096 kept from the §5.1 base",
                "the table leaves them open and its note asks to size `max-num-seqs` for the real traffic"
            ),
        }
    };
}

/// Settings every 950DT single-node row shares with the §5.1 950DT base
/// (`950dt-1node-tp8`); rows add context, MTP and scheduling.
macro_rules! v3_1_950dt_1node {
    ($($body:tt)*) => {
        ::pd_dsl::layout! {
            $($body)*
            model: deepseek_v3_1_w4a4c8_mxfp4,
            hardware: ascend_950dt,
            image: "v0.23.0",
            topology: <mixed 1 x dp1tp8;>,
            ports: { api: 8015 },
            serve: {
                max_num_batched_tokens: 16384,
                gpu_memory_utilization: 0.9,
                expert_parallel: true,
                async_scheduling: true,
                max_num_seqs: 96,
                prefix_caching: false,
                trust_remote_code: true,
                graph: full_decode_only,
                env: {
                    HCCL_BUFFSIZE: 512,
                    HCCL_CONNECT_TIMEOUT: 600,
                    HCCL_EXEC_TIMEOUT: 600,
                    OMP_PROC_BIND: "false",
                    OMP_NUM_THREADS: 10,
                    PYTORCH_NPU_ALLOC_CONF: "expandable_segments:True",
                    TASK_QUEUE_ENABLE: 1,
                },
            },
            deviate(
                "image `v0.23.0-a5` instead of the tutorial's plain `v0.23.0`",
                "the plain tag is the A2 build; 950DT images are tagged `-a5` at v0.23.0 (installation.md @v0.23.0, image workflow)"
            ),
            deviate(
                "weights `DeepSeek-V3.1-w4a4c8-mxfp4` (w4a4 MLP, w8a8c8 attention) for the table's `DeepseekV3.1-w8a8c8_attn`",
                "the table names only the attention quantization; these are the weights of the §5.1 950DT command"
            ),
            deviate(
                "speculative method `mtp` instead of the base's `deepseek_mtp`",
                "vLLM rewrites `deepseek_mtp` to `mtp` with a warning; the table gives only the token count"
            ),
            deviate(
                "`max_num_seqs` 96 and `max_num_batched_tokens` 16384 kept from the §5.1 base",
                "the table leaves them open and its note asks to size `max-num-seqs` for the real traffic"
            ),
        }
    };
}

/// Settings every A3 PD row shares with the §5.3 A3 base (`a3-2p1d`); rows
/// add topology, context, MTP and the role settings the topology implies.
macro_rules! v3_1_a3_pd {
    (max_model_len: $len:tt, decode_mtp: $mtp:tt, $($body:tt)*) => {
        ::pd_dsl::layout! {
            $($body)*
            model: deepseek_v3_1_w8a8_mtp_quarot,
            hardware: a3,
            image: "v0.23.0",
            connector: mooncake_v1 { kv_port: { prefill: [36100, 36200], decode: 36300 } },
            ports: { api: 7100, dp_rpc: 12321 },
            proxy: { port: 1999 },
            serve: {
                max_model_len: $len,
                expert_parallel: true,
                seed: 1024,
                trust_remote_code: true,
                prefix_caching: false,
                env: {
                    VLLM_RPC_TIMEOUT: 3600000,
                    VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS: 30000,
                    HCCL_EXEC_TIMEOUT: 204,
                    HCCL_CONNECT_TIMEOUT: 120,
                    OMP_PROC_BIND: "false",
                    OMP_NUM_THREADS: 10,
                    PYTORCH_NPU_ALLOC_CONF: "expandable_segments:True",
                    TASK_QUEUE_ENABLE: 1,
                    HCCL_OP_EXPANSION_MODE: "AIV",
                    VLLM_USE_V1: 1,
                    LD_LIBRARY_PATH: prepend("/usr/local/Ascend/ascend-toolkit/latest/python/site-packages/mooncake"),
                },
            },
            prefill: {
                max_num_batched_tokens: 16384,
                max_num_seqs: 8,
                graph: eager,
                gpu_memory_utilization: 0.9,
                speculative: { method: mtp, tokens: 1 },
                env: { HCCL_BUFFSIZE: 256 },
            },
            decode: {
                max_num_batched_tokens: 256,
                max_num_seqs: 28,
                gpu_memory_utilization: 0.92,
                graph: full_decode_only,
                speculative: { method: mtp, tokens: $mtp },
                additional_config: {
                    "recompute_scheduler_enable": true,
                    "multistream_overlap_shared_expert": true
                },
                env: { HCCL_BUFFSIZE: 1100 },
            },
            deviate(
                "weights `DeepSeek-V3.1-w8a8-mtp-QuaRot` instead of the table's `DeepSeek-V3.1-w4a8-perchannel`",
                "§3.1 publishes no w4a8-perchannel weights; the base's w8a8 weights take more memory per NPU, so expect less KV room than the measured setup"
            ),
            deviate(
                "kv ports 36100/36200 (prefill) and 36300 (decode) instead of the base's 30000/30100/30200",
                "the table sets no ports; the base's sit in AscendDirectTransport's reserved range [20000, 36000) on 16-NPU nodes and fail intermittently with `Address already in use`"
            ),
            deviate(
                "no `recompute_scheduler_enable` on prefill",
                "the base sets it there too, but since v0.23.0rc1 vllm-ascend ignores it on prefill with a warning"
            ),
            deviate(
                "prefill `max_num_seqs` 8 / `max_num_batched_tokens` 16384 and decode 28 / 256 kept from the §5.3 base",
                "the table leaves batch sizes open and its note asks to size `max-num-seqs` for the real traffic"
            ),
        }
    };
}

/// Settings every 950DT PD row shares with the §5.3 950DT base
/// (`950dt-2p1d`); rows add context, MTP and decode batch sizes.
macro_rules! v3_1_950dt_pd {
    (max_model_len: $len:tt, decode_mtp: $mtp:tt, decode_max_num_batched_tokens: $bt:tt, $($body:tt)*) => {
        ::pd_dsl::layout! {
            $($body)*
            model: deepseek_v3_1_w8a8c8_mxfp8,
            hardware: ascend_950dt,
            image: "v0.23.0",
            topology: <prefill 2 x dp4tp4; decode 1 x dp32tp1;>,
            connector: mooncake_v1 {
                kv_port: { prefill: 30100, decode: 30300 },
                extra: { "ascend_local_comm_res_path": "/etc/hixlep" },
            },
            ports: { api: 7100, dp_rpc: 12321 },
            proxy: { port: 1999 },
            serve: {
                max_model_len: $len,
                gpu_memory_utilization: 0.9,
                expert_parallel: true,
                async_scheduling: true,
                prefix_caching: false,
                trust_remote_code: true,
                env: {
                    VLLM_RPC_TIMEOUT: 3600000,
                    VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS: 30000,
                    HCCL_EXEC_TIMEOUT: 204,
                    HCCL_CONNECT_TIMEOUT: 120,
                    HCCL_BUFFSIZE: 1024,
                    OMP_PROC_BIND: "false",
                    OMP_NUM_THREADS: 10,
                    PYTORCH_NPU_ALLOC_CONF: "expandable_segments:True",
                    TASK_QUEUE_ENABLE: 1,
                },
            },
            prefill: {
                max_num_batched_tokens: 16384,
                max_num_seqs: 128,
                graph: eager,
                additional_config: {
                    "enable_cpu_binding": true,
                    "multistream_overlap_shared_expert": false,
                    "enable_shared_expert_dp": true,
                    "enable_mlapo": true,
                    "eplb_config": {
                        "dynamic_eplb": true,
                        "expert_heat_collection_interval": 50,
                        "algorithm_execution_interval": 5,
                        "eplb_policy_type": 2,
                        "num_redundant_experts": 16
                    }
                },
                speculative: { method: mtp, tokens: 1 },
                env: { DYNAMIC_EPLB: "true" },
            },
            decode: {
                max_num_batched_tokens: $bt,
                max_num_seqs: 96,
                graph: full_decode_only,
                speculative: { method: mtp, tokens: $mtp },
                additional_config: {
                    "enable_cpu_binding": true,
                    "recompute_scheduler_enable": true,
                    "multistream_overlap_shared_expert": true,
                    "enable_mlapo": true,
                    "finegrained_tp_config": { "lmhead_tensor_parallel_size": 8 }
                },
                flags: ["--safetensors-load-strategy" = "prefetch"],
            },
            deviate(
                "image `v0.23.0-a5` instead of the tutorial's plain `v0.23.0`",
                "the plain tag is the A2 build; 950DT images are tagged `-a5` at v0.23.0 (installation.md @v0.23.0, image workflow)"
            ),
            deviate(
                "weights `DeepSeek-V3.1-w8a8c8-mxfp8` for the table's `DeepseekV3.1-w8a8c8_attn`",
                "the table names only the attention quantization; these are the weights of the §5.3 950DT templates"
            ),
            deviate(
                "derived engine ids (prefill 0 and 2, decode 1), speculative method `mtp` and `enable_cpu_binding` as the boolean `true`",
                "the base keeps the tutorial's ids 1/1/3, `deepseek_mtp` and the string \"True\" only to match the published commands; the table sets none of them"
            ),
            deviate(
                "prefill `max_num_seqs` 128 / `max_num_batched_tokens` 16384 and decode `max_num_seqs` 96 kept from the §5.3 base",
                "the table leaves batch sizes open and its note asks to size `max-num-seqs` for the real traffic"
            ),
        }
    };
}

mod pd;
mod single_node;

pub use pd::*;
pub use single_node::*;

/// Every reference configuration, in table order.
pub fn all() -> Vec<LayoutSpec> {
    vec![
        a3_1node_dp4tp4_3_5k_throughput(),
        a3_1node_dp4tp4_16k_throughput(),
        a3_1node_dp2tp8_16k_low_latency(),
        a3_1node_dp2tp8_64k(),
        ascend_950dt_1node_tp8_3_5k_throughput(),
        ascend_950dt_1node_tp8_16k_throughput(),
        ascend_950dt_1node_tp8_16k_low_latency(),
        a3_2p1d_16k_throughput(),
        a3_2p1d_16k_low_latency(),
        a3_2p1d_64k(),
        ascend_950dt_2p1d_16k_throughput(),
        ascend_950dt_2p1d_16k_low_latency(),
        ascend_950dt_2p1d_64k(),
    ]
}
