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

/// A3 single node, high throughput at 3.5k input (table 2 row 1).
pub fn a3_1node_dp4tp4_3_5k_throughput() -> LayoutSpec {
    v3_1_a3_1node! {
        /// DeepSeek-V3.1 on one Atlas 800 A3 (64 GB x 16) for high throughput
        /// at 3.5k input: DP=4 x TP=4, 39k context, 3 MTP tokens, balance
        /// scheduling on.
        name: "deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp4tp4-3.5k-throughput",
        topology: <mixed 1 x dp4tp4;>,
        mixed: {
            max_model_len: 39936,
            speculative: { method: mtp, tokens: 3 },
            additional_config: { "enable_balance_scheduling": true },
        },
        provenance: {
            recorded: "2026-11-30",
            derived_from: "deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp4tp4",
            sources: ["docs/source/tutorials/models/DeepSeek-V3.1.md §9.1 table 2 (A3), 高吞吐（3.5k） 服务器 / 单机; table 1 row 1"],
        },
        deviate(
            "top-level `enable_balance_scheduling: true` instead of the base's nested `scheduler_config` form",
            "the table leaves scheduling open; §5.1 enables balance scheduling for throughput, and images before v0.25.1rc1 ignore the nested form (#12177)"
        ),
        deviate(
            "bench: 3500 in / 1500 out, 200 prompts sent at once",
            "the table gives only the input length; 1.5k output is the tutorial's published benchmark (§8.1), and all-at-once measures throughput"
        ),
        workload: "one A3 node, high throughput with prompts up to 3.5k tokens; also long enough (39k) for the tutorial's accuracy runs",
        allow(workload_concurrency, "the throughput benchmark sends all 200 prompts at once to saturate the engines; what the ranks cannot hold queues by design"),
        bench: { input_len: 3500, output_len: 1500, num_prompts: 200, request_rate: inf },
        figures: [
            { metric: "ceval accuracy", value: "90.94", context: "needs `max_model_len` >= 35000 (tutorial §5.1); DeepSeek-V3.1-w8a8-mtp-QuaRot, vllm-ascend 0.18.0, the §5.1 A3 command (DP4 x TP4, MTP 3) on 1 Atlas 800 A3 (64GB x 16), AISBench vllm-api-general-chat" },
            { metric: "gsm8k accuracy", value: "96.28", context: "needs `max_model_len` >= 35000 (tutorial §5.1); DeepSeek-V3.1-w8a8-mtp-QuaRot, vllm-ascend 0.18.0, the §5.1 A3 command (DP4 x TP4, MTP 3) on 1 Atlas 800 A3 (64GB x 16), AISBench vllm-api-general-chat" },
        ],
    }
}

/// A3 single node, high throughput at 16k input (table 2 row 2).
pub fn a3_1node_dp4tp4_16k_throughput() -> LayoutSpec {
    v3_1_a3_1node! {
        /// DeepSeek-V3.1 on one Atlas 800 A3 (64 GB x 16) for high throughput
        /// at 16k input: DP=4 x TP=4, 36k context, 3 MTP tokens, balance
        /// scheduling on.
        name: "deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp4tp4-16k-throughput",
        topology: <mixed 1 x dp4tp4;>,
        mixed: {
            max_model_len: 36864,
            speculative: { method: mtp, tokens: 3 },
            additional_config: { "enable_balance_scheduling": true },
        },
        provenance: {
            recorded: "2026-11-30",
            derived_from: "deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp4tp4",
            sources: ["docs/source/tutorials/models/DeepSeek-V3.1.md §9.1 table 2 (A3), 高吞吐（16k） 服务器 / 单机; table 1 row 1"],
        },
        deviate(
            "top-level `enable_balance_scheduling: true` instead of the base's nested `scheduler_config` form",
            "the table leaves scheduling open; §5.1 enables balance scheduling for throughput, and images before v0.25.1rc1 ignore the nested form (#12177)"
        ),
        deviate(
            "bench: 16384 in / 1500 out, 200 prompts sent at once",
            "the table gives only the input length; 1.5k output is the tutorial's published benchmark (§8.1), and all-at-once measures throughput"
        ),
        workload: "one A3 node, high throughput with prompts up to 16k tokens",
        allow(workload_concurrency, "the throughput benchmark sends all 200 prompts at once to saturate the engines; what the ranks cannot hold queues by design"),
        bench: { input_len: 16384, output_len: 1500, num_prompts: 200, request_rate: inf },
    }
}

/// A3 single node, low latency at 3.5k and 16k input (table 2 rows 3-4).
pub fn a3_1node_dp2tp8_16k_low_latency() -> LayoutSpec {
    v3_1_a3_1node! {
        /// DeepSeek-V3.1 on one Atlas 800 A3 (64 GB x 16) for low latency at
        /// 3.5k or 16k input: DP=2 x TP=8, 36k context, 3 MTP tokens.
        name: "deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp2tp8-16k-low-latency",
        topology: <mixed 1 x dp2tp8;>,
        mixed: {
            max_model_len: 36864,
            speculative: { method: mtp, tokens: 3 },
        },
        provenance: {
            recorded: "2026-11-30",
            derived_from: "deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp4tp4",
            sources: ["docs/source/tutorials/models/DeepSeek-V3.1.md §9.1 table 2 (A3), 低延迟（3.5k） and 低延迟（16k） 服务器 / 单机 (identical rows); table 1 row 2"],
        },
        deviate(
            "balance scheduling off",
            "the table leaves scheduling open; §5.1 warns that balance scheduling can worsen TTFT, which a low-latency deployment is judged on"
        ),
        deviate(
            "bench: 16384 in / 1500 out, one request per second",
            "the table gives only the input length (3.5k and 16k share these settings, the longer is benched); 1.5k output is the tutorial's published benchmark (§8.1), and a light request rate measures latency"
        ),
        workload: "one A3 node, low latency (TTFT and TPOT first) with prompts up to 16k tokens",
        bench: { input_len: 16384, output_len: 1500, num_prompts: 200, request_rate: 1 },
    }
}

/// A3 single node, high throughput or low latency at 64k input (table 2 row 5).
pub fn a3_1node_dp2tp8_64k() -> LayoutSpec {
    v3_1_a3_1node! {
        /// DeepSeek-V3.1 on one Atlas 800 A3 (64 GB x 16) for 64k input:
        /// DP=2 x TP=8, 132k context, 3 MTP tokens, balance scheduling on.
        name: "deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp2tp8-64k",
        topology: <mixed 1 x dp2tp8;>,
        mixed: {
            max_model_len: 135168,
            speculative: { method: mtp, tokens: 3 },
            additional_config: { "enable_balance_scheduling": true },
        },
        provenance: {
            recorded: "2026-11-30",
            derived_from: "deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp4tp4",
            sources: ["docs/source/tutorials/models/DeepSeek-V3.1.md §9.1 table 2 (A3), 高吞吐 / 低延迟（64k） 服务器 / 单机; table 1 row 3"],
        },
        deviate(
            "top-level `enable_balance_scheduling: true` instead of the base's nested `scheduler_config` form",
            "the table serves throughput and latency with one row and leaves scheduling open; the base intends balance scheduling, and images before v0.25.1rc1 ignore the nested form (#12177)"
        ),
        deviate(
            "bench: 65536 in / 1500 out, one request per second",
            "the table gives only the input length; 1.5k output is the tutorial's published benchmark (§8.1)"
        ),
        workload: "one A3 node with prompts up to 64k tokens",
        bench: { input_len: 65536, output_len: 1500, num_prompts: 200, request_rate: 1 },
    }
}

/// 950DT single node, high throughput at 3.5k input (table 4 row 1).
pub fn ascend_950dt_1node_tp8_3_5k_throughput() -> LayoutSpec {
    v3_1_950dt_1node! {
        /// DeepSeek-V3.1 w4a4c8 on one Ascend 950DT (96 GB x 8) for high
        /// throughput at 3.5k input: TP=8, 39k context, 3 MTP tokens,
        /// balance scheduling and MLAPO.
        name: "deepseek-v3.1-w4a4c8-mxfp4/950dt-1node-tp8-3.5k-throughput",
        mixed: {
            max_model_len: 39936,
            speculative: { method: mtp, tokens: 3 },
            additional_config: {
                "enable_cpu_binding": true,
                "multistream_overlap_shared_expert": true,
                "enable_balance_scheduling": true,
                "enable_mlapo": true
            },
        },
        provenance: {
            recorded: "2026-11-30",
            derived_from: "deepseek-v3.1-w4a4c8-mxfp4/950dt-1node-tp8",
            sources: ["docs/source/tutorials/models/DeepSeek-V3.1.md §9.1 table 4 (950DT), 高吞吐（3.5k） 服务器 / 单机; table 3 row 1"],
        },
        deviate(
            "bench: 3500 in / 1500 out, 200 prompts sent at once",
            "the table gives only the input length; 1.5k output is the tutorial's published benchmark (§8.1), and all-at-once measures throughput"
        ),
        workload: "one 950DT node, high throughput with prompts up to 3.5k tokens",
        allow(workload_concurrency, "the throughput benchmark sends all 200 prompts at once to saturate the engines; what the ranks cannot hold queues by design"),
        bench: { input_len: 3500, output_len: 1500, num_prompts: 200, request_rate: inf },
    }
}

/// 950DT single node, high throughput at 16k input (table 4 row 2).
pub fn ascend_950dt_1node_tp8_16k_throughput() -> LayoutSpec {
    v3_1_950dt_1node! {
        /// DeepSeek-V3.1 w4a4c8 on one Ascend 950DT (96 GB x 8) for high
        /// throughput at 16k input: TP=8, 36k context, 3 MTP tokens,
        /// balance scheduling and MLAPO.
        name: "deepseek-v3.1-w4a4c8-mxfp4/950dt-1node-tp8-16k-throughput",
        mixed: {
            max_model_len: 36864,
            speculative: { method: mtp, tokens: 3 },
            additional_config: {
                "enable_cpu_binding": true,
                "multistream_overlap_shared_expert": true,
                "enable_balance_scheduling": true,
                "enable_mlapo": true
            },
        },
        provenance: {
            recorded: "2026-11-30",
            derived_from: "deepseek-v3.1-w4a4c8-mxfp4/950dt-1node-tp8",
            sources: ["docs/source/tutorials/models/DeepSeek-V3.1.md §9.1 table 4 (950DT), 高吞吐（16k） 服务器 / 单机; table 3 row 1"],
        },
        deviate(
            "bench: 16384 in / 1500 out, 200 prompts sent at once",
            "the table gives only the input length; 1.5k output is the tutorial's published benchmark (§8.1), and all-at-once measures throughput"
        ),
        workload: "one 950DT node, high throughput with prompts up to 16k tokens",
        allow(workload_concurrency, "the throughput benchmark sends all 200 prompts at once to saturate the engines; what the ranks cannot hold queues by design"),
        bench: { input_len: 16384, output_len: 1500, num_prompts: 200, request_rate: inf },
    }
}

/// 950DT single node, low latency at 3.5k and 16k input (table 4 rows 3-4).
pub fn ascend_950dt_1node_tp8_16k_low_latency() -> LayoutSpec {
    v3_1_950dt_1node! {
        /// DeepSeek-V3.1 w4a4c8 on one Ascend 950DT (96 GB x 8) for low
        /// latency at 3.5k or 16k input: TP=8, 36k context, 3 MTP tokens,
        /// MLAPO, no balance scheduling.
        name: "deepseek-v3.1-w4a4c8-mxfp4/950dt-1node-tp8-16k-low-latency",
        mixed: {
            max_model_len: 36864,
            speculative: { method: mtp, tokens: 3 },
            additional_config: {
                "enable_cpu_binding": true,
                "multistream_overlap_shared_expert": true,
                "enable_mlapo": true
            },
        },
        provenance: {
            recorded: "2026-11-30",
            derived_from: "deepseek-v3.1-w4a4c8-mxfp4/950dt-1node-tp8",
            sources: ["docs/source/tutorials/models/DeepSeek-V3.1.md §9.1 table 4 (950DT), 低延迟（3.5k） and 低延迟（16k） 服务器 / 单机 (identical rows); table 3 row 2"],
        },
        deviate(
            "balance scheduling off (the base enables it)",
            "the table leaves scheduling open; §5.1 warns that balance scheduling can worsen TTFT, which a low-latency deployment is judged on"
        ),
        deviate(
            "bench: 16384 in / 1500 out, one request per second",
            "the table gives only the input length (3.5k and 16k share these settings, the longer is benched); 1.5k output is the tutorial's published benchmark (§8.1), and a light request rate measures latency"
        ),
        workload: "one 950DT node, low latency (TTFT and TPOT first) with prompts up to 16k tokens",
        bench: { input_len: 16384, output_len: 1500, num_prompts: 200, request_rate: 1 },
    }
}

/// A3 2P1D, high throughput at 16k input (table 2 rows 6-7).
pub fn a3_2p1d_16k_throughput() -> LayoutSpec {
    v3_1_a3_pd! {
        max_model_len: 36864,
        decode_mtp: 1,
        /// DeepSeek-V3.1 2P1D on four Atlas 800 A3 (64 GB x 16) for high
        /// throughput at 16k input: two single-node prefill engines (DP=2 x
        /// TP=8) and one decode engine of DP=8 x TP=4 over two nodes; 36k
        /// context, 1 MTP token.
        name: "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d-16k-throughput",
        topology: <prefill 2 x dp2tp8; decode 1 x dp8tp4;>,
        provenance: {
            recorded: "2026-11-30",
            derived_from: "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d",
            sources: ["docs/source/tutorials/models/DeepSeek-V3.1.md §9.1 table 2 (A3), 高吞吐（16k） Server-P 节点 / Server-D 节点; table 1 row 5"],
        },
        deviate(
            "the decode engine DP8 x TP4 takes 32 NPUs over two nodes (4 nodes, 64 NPUs in all)",
            "table 2 lists the D node as 16 NPUs, which DP8 x TP4 cannot fit; table 1 gives 2P1D on 64 NPUs, which two 16-NPU prefill engines and a 32-NPU decode engine fill"
        ),
        deviate(
            "no decode `finegrained_tp_config` (the base sets `lmhead_tensor_parallel_size` 16)",
            "lmhead TP works only at decode TP1 (ascend_config.py); this decode runs TP4"
        ),
        deviate(
            "bench: 16384 in / 1500 out, 200 prompts sent at once",
            "the table gives only the input length; 1.5k output is the tutorial's published benchmark (§8.1), and all-at-once measures throughput"
        ),
        workload: "PD on four A3 nodes, high throughput with prompts up to 16k tokens",
        allow(workload_concurrency, "the throughput benchmark sends all 200 prompts at once to saturate the engines; what the ranks cannot hold queues by design"),
        bench: { input_len: 16384, output_len: 1500, num_prompts: 200, request_rate: inf },
    }
}

/// A3 2P1D, low latency at 16k input (table 2 rows 8-9).
pub fn a3_2p1d_16k_low_latency() -> LayoutSpec {
    v3_1_a3_pd! {
        max_model_len: 36864,
        decode_mtp: 3,
        /// DeepSeek-V3.1 2P1D on four Atlas 800 A3 (64 GB x 16) for low
        /// latency at 16k input: two single-node prefill engines (DP=2 x TP=8)
        /// and one decode engine of DP=8 x TP=4 over two nodes; 36k context,
        /// 3 MTP tokens on decode.
        name: "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d-16k-low-latency",
        topology: <prefill 2 x dp2tp8; decode 1 x dp8tp4;>,
        provenance: {
            recorded: "2026-11-30",
            derived_from: "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d",
            sources: ["docs/source/tutorials/models/DeepSeek-V3.1.md §9.1 table 2 (A3), 低延迟（16k） Server-P 节点 / Server-D 节点; table 1 row 5"],
        },
        deviate(
            "the decode engine DP8 x TP4 takes 32 NPUs over two nodes (4 nodes, 64 NPUs in all)",
            "table 2 lists the D node as 16 NPUs, which DP8 x TP4 cannot fit; table 1 gives 2P1D on 64 NPUs, which two 16-NPU prefill engines and a 32-NPU decode engine fill"
        ),
        deviate(
            "prefill runs 1 MTP token, decode 3 (the table lists 3 for both)",
            "prefill emits one token per request, so its draft tokens are never used; upstream's PD rule is prefill 1, decode >= 1 (multi-node doc L258-260)"
        ),
        deviate(
            "no decode `finegrained_tp_config` (the base sets `lmhead_tensor_parallel_size` 16)",
            "lmhead TP works only at decode TP1 (ascend_config.py); this decode runs TP4"
        ),
        deviate(
            "bench: 16384 in / 1500 out, one request per second",
            "the table gives only the input length; 1.5k output is the tutorial's published benchmark (§8.1), and a light request rate measures latency"
        ),
        workload: "PD on four A3 nodes, low latency (TTFT and TPOT first) with prompts up to 16k tokens",
        bench: { input_len: 16384, output_len: 1500, num_prompts: 200, request_rate: 1 },
    }
}

/// A3 2P1D, long context at 64k input (table 2 rows 10-11).
pub fn a3_2p1d_64k() -> LayoutSpec {
    v3_1_a3_pd! {
        max_model_len: 135168,
        decode_mtp: 3,
        /// DeepSeek-V3.1 2P1D on four Atlas 800 A3 (64 GB x 16) for 64k input
        /// without prefix cache: two single-node prefill engines of DP=1 x
        /// TP=16 and one decode engine of DP=8 x TP=4 over two nodes; 132k
        /// context, 3 MTP tokens on decode.
        name: "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d-64k",
        topology: <prefill 2 x dp1tp16; decode 1 x dp8tp4;>,
        provenance: {
            recorded: "2026-11-30",
            derived_from: "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d",
            sources: ["docs/source/tutorials/models/DeepSeek-V3.1.md §9.1 table 2 (A3), 长上下文（64k） Server-P 节点 / Server-D 节点; table 1 row 6"],
        },
        deviate(
            "prefill engines of DP1 x TP16 (table 2), not table 1's \"dp1 tp8\"",
            "table 1 says dp1 tp8 but also 64 NPUs for 2P1D; only table 2's TP16 prefill (two 16-NPU engines) with a 32-NPU decode fills 64"
        ),
        deviate(
            "the decode engine DP8 x TP4 takes 32 NPUs over two nodes (4 nodes, 64 NPUs in all)",
            "table 2 lists the D node as 16 NPUs, which DP8 x TP4 cannot fit; table 1 gives 2P1D on 64 NPUs"
        ),
        deviate(
            "prefill runs 1 MTP token, decode 3 (the table lists 3 for both)",
            "prefill emits one token per request, so its draft tokens are never used; upstream's PD rule is prefill 1, decode >= 1 (multi-node doc L258-260)"
        ),
        deviate(
            "no decode `finegrained_tp_config` (the base sets `lmhead_tensor_parallel_size` 16)",
            "lmhead TP works only at decode TP1 (ascend_config.py); this decode runs TP4"
        ),
        deviate(
            "bench: 65536 in / 1500 out, one request per second",
            "the table gives only the input length; 1.5k output is the tutorial's published benchmark (§8.1)"
        ),
        workload: "PD on four A3 nodes for long prompts (64k tokens) without prefix cache",
        bench: { input_len: 65536, output_len: 1500, num_prompts: 200, request_rate: 1 },
    }
}

/// 950DT 2P1D, high throughput at 16k input (table 4 rows 6-7).
pub fn ascend_950dt_2p1d_16k_throughput() -> LayoutSpec {
    v3_1_950dt_pd! {
        max_model_len: 36864,
        decode_mtp: 1,
        decode_max_num_batched_tokens: 256,
        /// DeepSeek-V3.1 w8a8c8 2P1D on eight Ascend 950DT (96 GB x 8) for
        /// high throughput at 16k input: two prefill engines of DP=4 x TP=4
        /// over two nodes each, one decode engine of DP=32 x TP=1 over four
        /// nodes; 36k context, 1 MTP token.
        name: "deepseek-v3.1-w8a8c8-mxfp8/950dt-2p1d-16k-throughput",
        provenance: {
            recorded: "2026-11-30",
            derived_from: "deepseek-v3.1-w8a8c8-mxfp8/950dt-2p1d",
            sources: ["docs/source/tutorials/models/DeepSeek-V3.1.md §9.1 table 4 (950DT), 高吞吐（16k） Server-P 节点 / Server-D 节点; table 3 row 5"],
        },
        deviate(
            "bench: 16384 in / 1500 out, 200 prompts sent at once",
            "the table gives only the input length; 1.5k output is the tutorial's published benchmark (§8.1), and all-at-once measures throughput"
        ),
        workload: "PD on eight 950DT nodes, high throughput with prompts up to 16k tokens",
        bench: { input_len: 16384, output_len: 1500, num_prompts: 200, request_rate: inf },
    }
}

/// 950DT 2P1D, low latency at 16k input (table 4 rows 8-9).
pub fn ascend_950dt_2p1d_16k_low_latency() -> LayoutSpec {
    v3_1_950dt_pd! {
        max_model_len: 36864,
        decode_mtp: 3,
        decode_max_num_batched_tokens: 384,
        /// DeepSeek-V3.1 w8a8c8 2P1D on eight Ascend 950DT (96 GB x 8) for
        /// low latency at 16k input: two prefill engines of DP=4 x TP=4 over
        /// two nodes each, one decode engine of DP=32 x TP=1 over four nodes;
        /// 36k context, 3 MTP tokens on decode.
        name: "deepseek-v3.1-w8a8c8-mxfp8/950dt-2p1d-16k-low-latency",
        provenance: {
            recorded: "2026-11-30",
            derived_from: "deepseek-v3.1-w8a8c8-mxfp8/950dt-2p1d",
            sources: ["docs/source/tutorials/models/DeepSeek-V3.1.md §9.1 table 4 (950DT), 低延迟（16k） Server-P 节点 / Server-D 节点; table 3 row 5"],
        },
        deviate(
            "prefill runs 1 MTP token, decode 3 (the table lists 3 for both)",
            "prefill emits one token per request, so its draft tokens are never used; upstream's PD rule is prefill 1, decode >= 1 (multi-node doc L258-260)"
        ),
        deviate(
            "decode `max_num_batched_tokens` 384 instead of the base's 256",
            "with 3 MTP tokens each of the base's 96 decode sequences schedules 4 tokens a step (96 x 4 = 384); 256 would stall a third of them"
        ),
        deviate(
            "bench: 16384 in / 1500 out, one request per second",
            "the table gives only the input length; 1.5k output is the tutorial's published benchmark (§8.1), and a light request rate measures latency"
        ),
        workload: "PD on eight 950DT nodes, low latency (TTFT and TPOT first) with prompts up to 16k tokens",
        bench: { input_len: 16384, output_len: 1500, num_prompts: 200, request_rate: 1 },
    }
}

/// 950DT 2P1D, long context at 64k input (table 4 rows 10-11).
pub fn ascend_950dt_2p1d_64k() -> LayoutSpec {
    v3_1_950dt_pd! {
        max_model_len: 135168,
        decode_mtp: 3,
        decode_max_num_batched_tokens: 384,
        /// DeepSeek-V3.1 w8a8c8 2P1D on eight Ascend 950DT (96 GB x 8) for
        /// 64k input without prefix cache: two prefill engines of DP=4 x TP=4
        /// over two nodes each, one decode engine of DP=32 x TP=1 over four
        /// nodes; 132k context, 3 MTP tokens on decode.
        name: "deepseek-v3.1-w8a8c8-mxfp8/950dt-2p1d-64k",
        provenance: {
            recorded: "2026-11-30",
            derived_from: "deepseek-v3.1-w8a8c8-mxfp8/950dt-2p1d",
            sources: ["docs/source/tutorials/models/DeepSeek-V3.1.md §9.1 table 4 (950DT), 长上下文（64k） Server-P 节点 / Server-D 节点; table 3 row 6"],
        },
        deviate(
            "prefill runs 1 MTP token, decode 3 (the table lists 3 for both)",
            "prefill emits one token per request, so its draft tokens are never used; upstream's PD rule is prefill 1, decode >= 1 (multi-node doc L258-260)"
        ),
        deviate(
            "decode `max_num_batched_tokens` 384 instead of the base's 256",
            "with 3 MTP tokens each of the base's 96 decode sequences schedules 4 tokens a step (96 x 4 = 384); 256 would stall a third of them"
        ),
        deviate(
            "bench: 65536 in / 1500 out, one request per second",
            "the table gives only the input length; 1.5k output is the tutorial's published benchmark (§8.1)"
        ),
        workload: "PD on eight 950DT nodes for long prompts (64k tokens) without prefix cache",
        bench: { input_len: 65536, output_len: 1500, num_prompts: 200, request_rate: 1 },
    }
}

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
