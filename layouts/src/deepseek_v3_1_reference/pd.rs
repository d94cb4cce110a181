//! The 2P1D rows of tables 2 (A3) and 4 (950DT), per scenario.

use pd_dsl::LayoutSpec;

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
