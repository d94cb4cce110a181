//! The single-node rows of tables 2 (A3, DP x TP on one node) and 4 (950DT,
//! TP8), per scenario.

use pd_dsl::LayoutSpec;

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
