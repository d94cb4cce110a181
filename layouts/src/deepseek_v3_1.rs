//! DeepSeek-V3.1 layouts of upstream's tutorial
//! (`docs/source/tutorials/models/DeepSeek-V3.1.md`, the snapshot of
//! 2026-08-22; images of its docker section: `v0.23.0`).
//!
//! Every value is the tutorial's; where it breaks a rule for its image the
//! layout keeps it and says why.

use pd_dsl::{LayoutSpec, layout};

/// A3 single node, DP4 x TP4 (tutorial §5.1, A3 tab).
pub fn a3_1node_dp4tp4() -> LayoutSpec {
    layout! {
        /// DeepSeek-V3.1-w8a8-mtp-QuaRot on one Atlas 800 A3 (64 GB x 16),
        /// DP=4 x TP=4 with internal DP and balance scheduling; the tutorial
        /// recommends dp4tp4 over dp2tp8 for a single node.
        name: "deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp4tp4",
        model: deepseek_v3_1_w8a8_mtp_quarot,
        hardware: a3,
        image: "v0.23.0",
        topology: <mixed 1 x dp4tp4;>,
        ports: { api: 8015 },
        serve: {
            seed: 1024,
            expert_parallel: true,
            trust_remote_code: true,
            max_num_seqs: 16,
            max_model_len: 16384,
            max_num_batched_tokens: 4096,
            prefix_caching: false,
            gpu_memory_utilization: 0.92,
            speculative: { method: mtp, tokens: 3 },
            graph: full_decode_only,
            additional_config: { "scheduler_config": { "enable_balance_scheduling": true } },
            env: {
                HCCL_OP_EXPANSION_MODE: "AIV",
                PYTORCH_NPU_ALLOC_CONF: "expandable_segments:True",
            },
        },
        provenance: {
            recorded: "2026-08-22",
            sources: ["docs/source/tutorials/models/DeepSeek-V3.1.md §5.1 (A3)"],
        },
        verified: on("v0.9.1rc3"),
        allow(
            unknown_additional_config_key,
            "the tutorial writes the nested `scheduler_config` form, which images before v0.25.1rc1 silently ignore (#12177): on v0.23.0 balance scheduling stays off; kept as published, use top-level `enable_balance_scheduling` to really enable it"
        ),
        workload: "the tutorial's one-node A3 command: 3.5k in / 1.5k out performance runs, for which 16384 tokens suffice (§5.1); too short for the tutorial's accuracy runs, which need `max_model_len` >= 35000: their ceval/gsm8k figures sit on `a3-1node-dp4tp4-3.5k-throughput` (39936). Table 2's tuned rows are the `a3-1node-*` layouts derived from this one",
        bench: { input_len: 3500, output_len: 1500, num_prompts: 200, request_rate: 1 },
    }
}

/// 950DT single node, TP8 (tutorial §5.1, 950DT tab).
pub fn ascend_950dt_1node_tp8() -> LayoutSpec {
    layout! {
        /// DeepSeek-V3.1 w4a4 (MLP) / w8a8c8 (attention) on one Ascend 950DT
        /// (96 GB x 8), TP=8 with balance scheduling and MLAPO; 135k context.
        name: "deepseek-v3.1-w4a4c8-mxfp4/950dt-1node-tp8",
        model: deepseek_v3_1_w4a4c8_mxfp4,
        hardware: ascend_950dt,
        image: "v0.23.0",
        topology: <mixed 1 x dp1tp8;>,
        ports: { api: 8015 },
        serve: {
            max_model_len: 135168,
            max_num_batched_tokens: 16384,
            gpu_memory_utilization: 0.9,
            expert_parallel: true,
            async_scheduling: true,
            max_num_seqs: 96,
            prefix_caching: false,
            trust_remote_code: true,
            graph: full_decode_only,
            speculative: { method: deepseek_mtp, tokens: 3 },
            additional_config: {
                "enable_cpu_binding": true,
                "multistream_overlap_shared_expert": true,
                "enable_balance_scheduling": true,
                "enable_mlapo": true
            },
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
        provenance: {
            recorded: "2026-08-22",
            sources: ["docs/source/tutorials/models/DeepSeek-V3.1.md §5.1 (950DT; supported on 950DT since v0.23.0rc1)"],
        },
        deviate(
            "image `v0.23.0-a5` instead of the tutorial's plain `v0.23.0`",
            "the plain tag is the A2 build; 950DT images are tagged `-a5` at v0.23.0 (installation.md @v0.23.0, image workflow)"
        ),
        allow(
            speculative_method_deprecated,
            "the tutorial's 950DT command uses `deepseek_mtp`; vLLM rewrites it to `mtp` with a warning, kept as published"
        ),
        workload: "the tutorial's one-node 950DT command, which is also table 4's 64k row (dp1 tp8, 132k context, 3 MTP tokens); the 3.5k and 16k rows are the `950dt-1node-tp8-*` layouts derived from this one",
        bench: { input_len: 3500, output_len: 1500, num_prompts: 200, request_rate: 1 },
    }
}

/// Two A2 nodes, native multi-node DP (tutorial §5.2).
pub fn a2x2_mixed_dp4tp4() -> LayoutSpec {
    layout! {
        /// DeepSeek-V3.1-w8a8-mtp-QuaRot on two Atlas 800 A2 (64 GB x 8):
        /// DP=4 x TP=4, two ranks per node; node 1 runs `--headless` from
        /// start rank 2; DP RPC port 13389.
        name: "deepseek-v3.1-w8a8-mtp-quarot/a2x2-mixed-dp4tp4",
        model: deepseek_v3_1_w8a8_mtp_quarot,
        hardware: a2,
        image: "v0.23.0",
        topology: <mixed 1 x dp4tp4;>,
        ports: { api: 8004, dp_rpc: 13389 },
        serve: {
            seed: 1024,
            expert_parallel: true,
            trust_remote_code: true,
            max_num_seqs: 16,
            max_model_len: 16384,
            max_num_batched_tokens: 4096,
            prefix_caching: false,
            gpu_memory_utilization: 0.92,
            speculative: { method: mtp, tokens: 3 },
            graph: full_decode_only,
            additional_config: { "scheduler_config": { "enable_balance_scheduling": true } },
            env: {
                OMP_PROC_BIND: "false",
                OMP_NUM_THREADS: 1,
                HCCL_BUFFSIZE: 200,
                PYTORCH_NPU_ALLOC_CONF: "expandable_segments:True",
                HCCL_INTRA_PCIE_ENABLE: 1,
                HCCL_INTRA_ROCE_ENABLE: 0,
            },
        },
        provenance: {
            recorded: "2026-08-22",
            sources: ["docs/source/tutorials/models/DeepSeek-V3.1.md §5.2"],
        },
        verified: on("v0.9.1rc3"),
        allow(
            unknown_additional_config_key,
            "the tutorial writes the nested `scheduler_config` form, which images before v0.25.1rc1 silently ignore (#12177): on v0.23.0 balance scheduling stays off; kept as published"
        ),
        workload: "the smallest cluster for the w8a8 weights on A2: two nodes, no PD",
        bench: { input_len: 3500, output_len: 1500, num_prompts: 200, request_rate: 1 },
    }
}

/// A3 2P1D on four nodes (tutorial §5.3, A3 tab).
pub fn a3_2p1d() -> LayoutSpec {
    layout! {
        /// DeepSeek-V3.1-w8a8-mtp-QuaRot 2P1D on four Atlas 800 A3 (64 GB x
        /// 16): two independent single-node prefill engines (DP=2 x TP=8) and
        /// one decode engine (DP=32 x TP=1) over two nodes, MooncakeConnectorV1,
        /// proxy on the first prefill node. The tutorial recommends 2P1D over
        /// 1P1D, whose NPU memory cannot serve high concurrency.
        name: "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d",
        model: deepseek_v3_1_w8a8_mtp_quarot,
        hardware: a3,
        image: "v0.23.0",
        topology: <prefill 2 x dp2tp8; decode 1 x dp32tp1;>,
        connector: mooncake_v1 { kv_port: { prefill: [30000, 30100], decode: 30200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        serve: {
            expert_parallel: true,
            seed: 1024,
            max_model_len: 65536,
            trust_remote_code: true,
            prefix_caching: false,
            speculative: { method: mtp, tokens: 1 },
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
            additional_config: { "recompute_scheduler_enable": true },
            env: { HCCL_BUFFSIZE: 256 },
        },
        decode: {
            max_num_batched_tokens: 256,
            max_num_seqs: 28,
            gpu_memory_utilization: 0.92,
            graph: full_decode_only,
            additional_config: {
                "recompute_scheduler_enable": true,
                "multistream_overlap_shared_expert": true,
                "finegrained_tp_config": { "lmhead_tensor_parallel_size": 16 }
            },
            env: { HCCL_BUFFSIZE: 1100 },
        },
        provenance: {
            recorded: "2026-08-22",
            sources: ["docs/source/tutorials/models/DeepSeek-V3.1.md §5.3 (A3 run_dp_template.sh, launcher lines p0/p1/d0/d1, proxy.sh)"],
        },
        verified: on("v0.9.1rc3"),
        deviate(
            "engine ids 0 and 2 (prefill) and 1 (decode) in `kv_transfer_config`",
            "the tutorial sets none and relies on the uuid suffix; the docs ask for unique ids, and explicit ones keep logs readable"
        ),
        allow(
            kv_port_in_adxl_range,
            "the tutorial's kv ports 30000/30100/30200 are preserved; on 16-NPU nodes they sit in AscendDirectTransport's reserved range [20000, 36000), so expect intermittent `Address already in use` until moved to 36001+"
        ),
        allow(
            recompute_scheduler_on_prefill,
            "the tutorial enables the recompute scheduler on prefill too; since v0.23.0rc1 vllm-ascend ignores it there with a warning"
        ),
        workload: "the tutorial's A3 PD commands: 2P1D for high throughput or low latency at 3.5k input (table 1), the setup of its published TTFT/TPOT figures; the 16k and 64k rows of table 2 are the `a3-2p1d-*` layouts derived from this one",
        bench: { input_len: 3500, output_len: 1500, num_prompts: 200, request_rate: 1 },
        figures: [
            { metric: "TTFT", value: "6.16 s", context: "A3-752T, 4 nodes, 2P1D (prefill DP2+TP8, decode DP32+TP1), input/output 3.5k/1.5k, AISBench; the same figure is published at v0.18.0, v0.23.0 and v0.25.1rc1" },
            { metric: "TPOT", value: "48.82 ms", context: "A3-752T, 4 nodes, 2P1D, 3.5k/1.5k" },
            { metric: "output throughput", value: "478 TPS per card", context: "A3-752T, 4 nodes, 2P1D, 3.5k/1.5k" },
        ],
    }
}

/// 950DT 2P1D on eight nodes (tutorial §5.3, 950DT tab).
pub fn ascend_950dt_2p1d() -> LayoutSpec {
    layout! {
        /// DeepSeek-V3.1-Terminus w8a8c8 2P1D on eight Ascend 950DT (96 GB x
        /// 8): two prefill engines of DP=4 x TP=4, each over two nodes, and
        /// one decode engine of DP=32 x TP=1 over four nodes; MooncakeConnectorV1
        /// with `ascend_local_comm_res_path`, dynamic EPLB on prefill.
        name: "deepseek-v3.1-w8a8c8-mxfp8/950dt-2p1d",
        model: deepseek_v3_1_w8a8c8_mxfp8,
        hardware: ascend_950dt,
        image: "v0.23.0",
        topology: <prefill 2 x dp4tp4; decode 1 x dp32tp1;>,
        connector: mooncake_v1 {
            kv_port: { prefill: 30100, decode: 30300 },
            extra: { "ascend_local_comm_res_path": "/etc/hixlep" },
        },
        engine_ids: { prefill: [1, 1], decode: [3] },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        serve: {
            max_model_len: 135168,
            gpu_memory_utilization: 0.9,
            expert_parallel: true,
            async_scheduling: true,
            prefix_caching: false,
            trust_remote_code: true,
            speculative: { method: deepseek_mtp, tokens: 1 },
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
                "enable_cpu_binding": "True",
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
            env: { DYNAMIC_EPLB: "true" },
        },
        decode: {
            max_num_batched_tokens: 256,
            max_num_seqs: 96,
            graph: full_decode_only,
            additional_config: {
                "enable_cpu_binding": "True",
                "recompute_scheduler_enable": true,
                "multistream_overlap_shared_expert": true,
                "enable_mlapo": true,
                "finegrained_tp_config": { "lmhead_tensor_parallel_size": 8 }
            },
            flags: ["--safetensors-load-strategy" = "prefetch"],
        },
        provenance: {
            recorded: "2026-08-22",
            sources: ["docs/source/tutorials/models/DeepSeek-V3.1.md §5.3 (950DT run_dp_template.sh, launcher lines p0_0..d0_3; proxy.sh as on A3)"],
        },
        deviate(
            "image `v0.23.0-a5` instead of the tutorial's plain `v0.23.0`",
            "the plain tag is the A2 build; 950DT images are tagged `-a5` at v0.23.0 (installation.md @v0.23.0, image workflow)"
        ),
        deviate(
            "the proxy lists all 8 prefill ranks (two per prefill node) and all 32 decode ranks",
            "the tutorial says the 950DT proxy.sh is the A3 one, whose lists (4 prefill, 2 x 16 decode) miss half the prefill ranks and point at wrong ports here; the lists are derived from this placement"
        ),
        deviate(
            "`enable_cpu_binding` is the string \"True\"",
            "kept as published; it is merely truthy (\"False\" would be truthy too), and binding is on by default anyway"
        ),
        allow(
            engine_id_unique,
            "the tutorial gives both prefill engines engine_id \"1\" and the same kv port on distinct nodes; since v0.12.0rc1 the uuid suffix keeps them apart"
        ),
        allow(
            engine_id_parity,
            "the tutorial numbers prefill \"1\" and decode \"3\"; kept so logs match the published commands"
        ),
        allow(
            speculative_method_deprecated,
            "the tutorial's 950DT templates use `deepseek_mtp`; vLLM rewrites it to `mtp` with a warning, kept as published"
        ),
        workload: "the tutorial's 950DT PD commands: 2P1D for high throughput or low latency at 3.5k input (table 3: dp4 tp4 prefill, dp32 tp1 decode); the 16k and 64k rows of table 4 are the `950dt-2p1d-*` layouts derived from this one",
        bench: { input_len: 3500, output_len: 1500, num_prompts: 200, request_rate: 1 },
    }
}

/// Every V3.1 layout.
pub fn all() -> Vec<LayoutSpec> {
    vec![
        a3_1node_dp4tp4(),
        ascend_950dt_1node_tp8(),
        a2x2_mixed_dp4tp4(),
        a3_2p1d(),
        ascend_950dt_2p1d(),
    ]
}
