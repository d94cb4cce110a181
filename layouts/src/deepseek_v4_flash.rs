//! DeepSeek-V4-Flash-w8a8-mtp on Atlas 800 A3 at vllm-ascend v0.21.0rc1: the
//! seven layouts of the seed catalog page.
//!
//! Serve settings are upstream's `docs/source/tutorials/models/DeepSeek-V4-Flash.md`
//! @v0.21.0rc1 (see `shared/domain/deepseek-v4-flash-v0.21.0rc1.md`); what the
//! catalog changes relative to it is stated in each layout with its reason.

use pd_dsl::LayoutSpec;

/// Settings every V4-Flash layout shares: the tutorial's common flags and env
/// plus the catalog's deployment deviations. Everything the tutorial sets per
/// role lives in the role blocks of each layout (or of `v4_flash_pd!`).
macro_rules! v4_flash_a3 {
    ($($body:tt)*) => {
        ::pd_dsl::layout! {
            $($body)*
            model: deepseek_v4_flash_w8a8_mtp,
            hardware: a3,
            image: "v0.21.0rc1",
            model_path: "/root/model",
            serve: {
                expert_parallel: true,
                seed: 1024,
                trust_remote_code: true,
                block_size: 128,
                gpu_memory_utilization: 0.9,
                speculative: { method: mtp, tokens: 1, enforce_eager: true },
                flags: [
                    "--tokenizer-mode" = "deepseek_v4",
                    "--tool-call-parser" = "deepseek_v4",
                    "--enable-auto-tool-choice",
                    "--reasoning-parser" = "deepseek_v4",
                    "--safetensors-load-strategy" = "prefetch",
                    "--model-loader-extra-config" = { "enable_multithread_load": "true", "num_threads": 128 },
                ],
                env: {
                    OMP_PROC_BIND: "false",
                    OMP_NUM_THREADS: 10,
                    PYTORCH_NPU_ALLOC_CONF: "expandable_segments:True",
                    TASK_QUEUE_ENABLE: 1,
                    HCCL_OP_EXPANSION_MODE: "AIV",
                    LD_PRELOAD: prepend("/usr/lib/aarch64-linux-gnu/libjemalloc.so.2"),
                    LD_LIBRARY_PATH: prepend("/usr/local/lib"),
                },
            },
            deviate(
                "model path `/root/model` instead of the ModelScope cache path",
                "the ModelArts job mounts the weights at `/root/model` on every node"
            ),
            deviate(
                "NIC and IP resolved at run time by `run.sh` instead of typed into each node's script",
                "the spine reads the route to each engine's DP master, so one script serves every node"
            ),
            deviate(
                "`LD_LIBRARY_PATH=/usr/local/lib` prepended",
                "Mooncake's `ascend_transport.so` is installed there when the image is launched by ModelArts `sh`"
            ),
        }
    };
}

/// The PD layouts derived from the verified 1P1D: identical per-engine sizing,
/// flags, ports and connector; only the number of engines per role differs.
macro_rules! v4_flash_pd {
    ($($body:tt)*) => {
        v4_flash_a3! {
            $($body)*
            connector: mooncake_hybrid { kv_port: { prefill: 36000, decode: 36100 } },
            ports: { api: 7100, dp_rpc: 12321 },
            proxy: { port: 1999 },
            prefill: {
                max_model_len: 1048576,
                max_num_batched_tokens: 8192,
                max_num_seqs: 16,
                graph: eager,
                prefix_caching: false,
                additional_config: {
                    "enable_cpu_binding": true,
                    "enable_shared_expert_dp": true,
                    "enable_dsa_cp": true
                },
                flags: ["--no-disable-hybrid-kv-cache-manager"],
                env: {
                    HCCL_BUFFSIZE: 2560,
                    HCCL_CONNECT_TIMEOUT: 120,
                    HCCL_EXEC_TIMEOUT: 204,
                    VLLM_ASCEND_ENABLE_FLASHCOMM1: 1,
                    VLLM_RPC_TIMEOUT: 3600000,
                    VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS: 30000,
                },
            },
            decode: {
                max_model_len: 1048576,
                max_num_batched_tokens: 120,
                max_num_seqs: 60,
                graph: full_decode_only,
                async_scheduling: true,
                prefix_caching: false,
                additional_config: {
                    "ascend_compilation_config": { "enable_npugraph_ex": true, "enable_static_kernel": false },
                    "enable_cpu_binding": true,
                    "multistream_overlap_shared_expert": true,
                    "recompute_scheduler_enable": true
                },
                flags: ["--no-disable-hybrid-kv-cache-manager"],
                env: {
                    HCCL_BUFFSIZE: 1024,
                    HCCL_CONNECT_TIMEOUT: 1200,
                    HCCL_EXEC_TIMEOUT: 204,
                    VLLM_RPC_TIMEOUT: 3600000,
                    VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS: 30000,
                },
            },
            deviate(
                "kv ports 36000 (prefill) / 36100 (decode) instead of upstream 30000 / 30100",
                "the official kv_port table reserves [20000, 36000) for AscendDirectTransport on 16-NPU nodes"
            ),
            allow(
                kv_port_on_adxl_edge,
                "the catalog follows the kv_port table's `>= 36000`; Mooncake's inclusive bound can still draw 36000, so move prefill to 36001+ when re-verifying"
            ),
        }
    };
}

/// The tutorial's single-node (mixed) settings, shared by the one- and
/// two-node mixed layouts; `flags` are the extra flags of the layout.
macro_rules! v4_flash_mixed {
    (flags: [$($flag:tt)*], $($body:tt)*) => {
        v4_flash_a3! {
            $($body)*
            mixed: {
                max_model_len: 1048576,
                max_num_batched_tokens: 10240,
                max_num_seqs: 64,
                async_scheduling: true,
                graph: full_decode_only,
                additional_config: {
                    "ascend_compilation_config": { "enable_npugraph_ex": true, "enable_static_kernel": false },
                    "enable_cpu_binding": true,
                    "multistream_overlap_shared_expert": true
                },
                flags: [$($flag)*],
                env: { HCCL_BUFFSIZE: 1024, VLLM_ASCEND_ENABLE_FLASHCOMM1: 1 },
            },
        }
    };
}

/// Single-node A3, DP4 x TP4, one engine doing prefill and decode.
pub fn a3_1node_dp4tp4() -> LayoutSpec {
    v4_flash_mixed! {
        flags: ["--api-server-count" = 1],
        /// Single-node A3, DP=4 x TP=4 (internal DP, one API server). Already
        /// aligned with the v0.21.0rc1 reference (mtp/enforce_eager); this
        /// pass only refreshes provenance.
        name: "deepseek-v4-flash-w8a8-mtp/a3-1node-dp4tp4",
        topology: <mixed 1 x dp4tp4;>,
        ports: { api: 8900 },
        provenance: {
            recorded: "2026-06-27",
            sources: ["docs/source/tutorials/models/DeepSeek-V4-Flash.md @v0.21.0rc1 (single node, A3)"],
            refresh: ["provenance refreshed for v0.21.0rc1; settings already matched the reference"],
        },
        verified: before("v0.21.0rc1"),
        workload: "one node, no PD: the simplest start, and the baseline to compare PD layouts against",
        bench: { input_len: 3500, output_len: 1500, num_prompts: 200, request_rate: 1 },
    }
}

/// 1P1D on two A3 nodes, external online DP.
pub fn a3_1p1d() -> LayoutSpec {
    v4_flash_pd! {
        /// A3 1P1D PD separation with external online DP: one prefill engine
        /// (DP=4 x TP=4) and one decode engine (DP=16 x TP=1),
        /// MooncakeHybridConnector. Already aligned with the v0.21.0rc1
        /// reference (mtp/enforce_eager).
        name: "deepseek-v4-flash-w8a8-mtp/a3-1p1d",
        topology: <prefill 1 x dp4tp4; decode 1 x dp16tp1;>,
        provenance: {
            recorded: "2026-06-27",
            sources: ["docs/source/tutorials/models/DeepSeek-V4-Flash.md @v0.21.0rc1 (1P1D, A3)"],
        },
        verified: before("v0.21.0rc1"),
        workload: "balanced PD start: the verified base the multi-engine fan-outs are derived from",
        bench: { input_len: 3500, output_len: 1500, num_prompts: 200, request_rate: 1 },
    }
}

/// Decode-heavy 1P3D on four A3 nodes.
pub fn a3_1p3d() -> LayoutSpec {
    v4_flash_pd! {
        /// DeepSeek-V4-Flash-w8a8-mtp PD on 4x A3, decode-heavy: 1
        /// single-node prefill engine (DP=4 x TP=4) + 3 independent
        /// single-node decode engines (each DP=16 x TP=1).
        name: "deepseek-v4-flash-w8a8-mtp/a3-1p3d",
        topology: <prefill 1 x dp4tp4; decode 3 x dp16tp1;>,
        provenance: {
            recorded: "2026-06-30",
            derived_from: "deepseek-v4-flash-w8a8-mtp/a3-1p1d",
            sources: ["docs/source/tutorials/models/DeepSeek-V4-Flash.md @v0.21.0rc1 (documents only 1P1D)"],
        },
        workload: "decode-heavy: use when decode is the bottleneck (short prompts, long outputs), the usual PD imbalance for chat; treat as a starting point",
        bench: { input_len: 1024, output_len: 2048, num_prompts: 400, request_rate: 4 },
    }
}

/// Two A3 nodes, one mixed engine DP8 x TP4 with native multi-node DP.
pub fn a3x2_mixed_dp8tp4() -> LayoutSpec {
    v4_flash_mixed! {
        flags: [],
        /// 2x A3 mixed engine, DP=8 x TP=4 (the single-node layout doubled
        /// across 2 nodes with native multi-node DP: node 1 runs `--headless`
        /// from start rank 4).
        name: "deepseek-v4-flash-w8a8-mtp/a3x2-mixed-dp8tp4",
        topology: <mixed 1 x dp8tp4;>,
        ports: { api: 8900, dp_rpc: 13389 },
        provenance: {
            recorded: "2026-06-27",
            derived_from: "deepseek-v4-flash-w8a8-mtp/a3-1node-dp4tp4",
            sources: ["DeepSeek-V3.1.md multi-node DP section (native `--headless` DP, rpc 13389)"],
            refresh: [
                "migrated speculative method deepseek_mtp -> mtp (enforce_eager: true)",
                "dropped dead env toggles ACL_OP_INIT_MODE, ASCEND_A3_ENABLE, USE_MULTI_BLOCK_POOL, VLLM_ASCEND_ENABLE_FUSED_MC2, USE_MULTI_GROUPS_KV_CACHE",
            ],
        },
        verified: before("v0.21.0rc1"),
        workload: "two nodes without PD: more KV capacity and throughput than one node when prompts and outputs are balanced",
        bench: { input_len: 3500, output_len: 1500, num_prompts: 400, request_rate: 2 },
    }
}

/// Two single-node DP16 prefill engines and one DP32 decode engine over two
/// nodes, MooncakeConnectorV1, from its own upstream origin.
pub fn a3_2p1d_v1() -> LayoutSpec {
    v4_flash_a3! {
        /// 2 single-node prefill engines (DP=16 x TP=1) + 1 decode engine
        /// spanning 2 A3 nodes (DP=32 x TP=1), MooncakeConnectorV1, kv ports
        /// 30000/30100/30200. Topology, ports and engine ids preserved.
        name: "deepseek-v4-flash-w8a8-mtp/a3-2p1d-v1",
        topology: <prefill 2 x dp16tp1; decode 1 x dp32tp1;>,
        connector: mooncake_v1 { kv_port: { prefill: [30000, 30100], decode: 30200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        prefill: {
            max_model_len: 1048576,
            max_num_batched_tokens: 8192,
            max_num_seqs: 16,
            graph: eager,
            prefix_caching: false,
            additional_config: { "enable_cpu_binding": true },
            env: {
                HCCL_BUFFSIZE: 2560,
                HCCL_CONNECT_TIMEOUT: 120,
                HCCL_EXEC_TIMEOUT: 204,
                VLLM_RPC_TIMEOUT: 3600000,
                VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS: 30000,
            },
        },
        decode: {
            max_model_len: 1048576,
            max_num_batched_tokens: 120,
            max_num_seqs: 40,
            graph: full_decode_only,
            async_scheduling: true,
            prefix_caching: false,
            speculative: { method: mtp, tokens: 2, enforce_eager: true },
            additional_config: {
                "ascend_compilation_config": { "enable_npugraph_ex": true, "enable_static_kernel": false },
                "enable_cpu_binding": true,
                "multistream_overlap_shared_expert": true,
                "recompute_scheduler_enable": true
            },
            env: {
                HCCL_BUFFSIZE: 1024,
                HCCL_CONNECT_TIMEOUT: 1200,
                HCCL_EXEC_TIMEOUT: 204,
                VLLM_RPC_TIMEOUT: 3600000,
                VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS: 30000,
            },
        },
        provenance: {
            recorded: "2026-06-27",
            sources: ["its own upstream origin (MooncakeConnectorV1, kv 30000/30100/30200); serve settings from DeepSeek-V4-Flash.md @v0.21.0rc1"],
            refresh: [
                "migrated speculative method deepseek_mtp -> mtp (enforce_eager: true); decode keeps num_speculative_tokens 2",
                "dropped dead env toggles USE_MULTI_BLOCK_POOL, VLLM_ASCEND_ENABLE_FUSED_MC2",
            ],
        },
        deviate(
            "decode `max_num_seqs` 40 with `max_num_batched_tokens` 120",
            "two speculative tokens need 3 tokens per sequence per step: 40 x (1 + 2) = 120 keeps the reference's batch budget"
        ),
        allow(
            kv_port_in_adxl_range,
            "kv ports 30000/30100/30200 preserved from the layout's upstream origin; they sit in AscendDirectTransport's reserved range on 16-NPU nodes, so expect intermittent `Address already in use` until moved to 36001+"
        ),
        allow(
            connector_hybrid_kv,
            "the layout records MooncakeConnectorV1 from its origin; on v0.21.0rc1 use the Hybrid layouts, or move this one to v0.22.1rc1+ where V1 carries hybrid KV (#10342)"
        ),
        workload: "prefill capacity of two full nodes against one large decode group: long prompts with moderate outputs",
        bench: { input_len: 8192, output_len: 1024, num_prompts: 200, request_rate: 1 },
    }
}

/// 2P2D on four A3 nodes.
pub fn a3_2p2d() -> LayoutSpec {
    v4_flash_pd! {
        /// DeepSeek-V4-Flash-w8a8-mtp PD on 4x A3: 2 independent single-node
        /// prefill engines (each DP=4 x TP=4) + 2 independent single-node
        /// decode engines (each DP=16 x TP=1).
        name: "deepseek-v4-flash-w8a8-mtp/a3-2p2d",
        topology: <prefill 2 x dp4tp4; decode 2 x dp16tp1;>,
        provenance: {
            recorded: "2026-06-30",
            derived_from: "deepseek-v4-flash-w8a8-mtp/a3-1p1d",
            sources: ["docs/source/tutorials/models/DeepSeek-V4-Flash.md @v0.21.0rc1 (documents only 1P1D)"],
        },
        workload: "balanced traffic at twice the 1P1D capacity; a multi-P/multi-D fan-out can still hit a KV-transport clash or proxy mis-route that 1P1D would not, so treat as a starting point",
        bench: { input_len: 3500, output_len: 1500, num_prompts: 400, request_rate: 4 },
    }
}

/// Prefill-heavy 3P1D on four A3 nodes.
pub fn a3_3p1d() -> LayoutSpec {
    v4_flash_pd! {
        /// DeepSeek-V4-Flash-w8a8-mtp PD on 4x A3, prefill-heavy: 3
        /// independent single-node prefill engines (each DP=4 x TP=4) + 1
        /// single-node decode engine (DP=16 x TP=1).
        name: "deepseek-v4-flash-w8a8-mtp/a3-3p1d",
        topology: <prefill 3 x dp4tp4; decode 1 x dp16tp1;>,
        provenance: {
            recorded: "2026-06-30",
            derived_from: "deepseek-v4-flash-w8a8-mtp/a3-1p1d",
            sources: ["docs/source/tutorials/models/DeepSeek-V4-Flash.md @v0.21.0rc1 (documents only 1P1D)"],
        },
        workload: "prefill-heavy: use when prefill is the bottleneck (long prompts, short outputs), e.g. RAG and summarisation; treat as a starting point",
        bench: { input_len: 16384, output_len: 256, num_prompts: 200, request_rate: 1 },
    }
}

/// Every V4-Flash layout.
pub fn all() -> Vec<LayoutSpec> {
    vec![
        a3_1node_dp4tp4(),
        a3_1p1d(),
        a3_1p3d(),
        a3x2_mixed_dp8tp4(),
        a3_2p1d_v1(),
        a3_2p2d(),
        a3_3p1d(),
    ]
}
