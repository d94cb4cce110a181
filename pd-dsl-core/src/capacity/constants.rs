//! The budget's constants, each with its source or that it is a fit, and its types.

use super::*;

/// Bytes in a GiB.
pub const GIB: u64 = 1 << 30;
/// Bytes in a MiB (`HCCL_BUFFSIZE` is in MB = MiB).
pub const MIB: u64 = 1 << 20;

/// Total memory the runtime reports for a "64GB" Atlas 800 A2/A3 NPU
/// (`torch.npu.mem_get_info` as vllm-ascend's worker logs it, "total memory:
/// 65452113920", in public vllm-ascend startup logs of A2 and A3 runs): 60.96
/// GiB, not 64. vLLM multiplies this by `gpu_memory_utilization`.
pub const TOTAL_BYTES_64GB: u64 = 65_452_113_920;

/// Total memory per NPU: the reported figure for 64 GB parts; for other
/// sizes (the 950DT's 96 GB) the same ratio to the nominal size, an estimate.
pub const fn total_bytes(hw: &Hardware) -> u64 {
    if hw.hbm_gb_per_npu == 64 {
        TOTAL_BYTES_64GB
    } else {
        TOTAL_BYTES_64GB / 64 * hw.hbm_gb_per_npu as u64
    }
}

/// Runtime memory outside torch that the profile run sees besides HCCL
/// buffers: the ACL context, ATB/op workspaces and allocator slack. A fit:
/// 1 GiB matches the public start-up logs of 8-rank MoE runs (weights
/// 27.49 GiB, 28.14 GB left for KV at utilization 0.9 on 60.96 GiB: 1.16 GiB
/// besides weights for activations and runtime), and vllm-ascend itself keeps
/// a 150 MiB margin because profiling underestimates these allocations
/// (worker.py `compile_or_warm_up_model`, `redundancy_buffer`).
pub const RUNTIME_OVERHEAD_BYTES: u64 = GIB;

/// HCCL buffer per process group that vllm-ascend creates with
/// `hccl_buffer_size` (`_DEFAULT_BUFFER_SIZE` = 200 MB, vllm_ascend/utils.py).
pub const HCCL_DEFAULT_GROUP_MB: u64 = 200;
/// HCCL buffer of the DP group (`_MIN_DP_BUFFER_SIZE` = 50 MB,
/// vllm_ascend/utils.py `calculate_dp_buffer_size`).
pub const HCCL_DP_GROUP_MB: u64 = 50;
/// `HCCL_BUFFSIZE` when unset: 200 MB (CANN's default; the MC2 group of the
/// MoE dispatch/combine uses it, vllm_ascend/utils.py
/// `get_hccl_config_for_pg_options`: "mc2 operators only perform communication
/// space partitioning based on HCCL_BUFFSIZE").
pub const HCCL_BUFFSIZE_DEFAULT_MB: u64 = 200;
/// Each HCCL communicator holds an input and an output buffer of its size
/// (CANN HCCL environment-variable reference for `HCCL_BUFFSIZE`; not in the
/// corpus, stated as the assumption).
pub const HCCL_BUFFERS_PER_GROUP: u64 = 2;

/// Activation bytes per batched token besides the MoE: hidden-sized BF16
/// buffers alive at the peak of the profile run (residual, norm output,
/// attention output, MoE input and output, the TP all-gather/reduce-scatter
/// pair, one spare). A fit: 8 buffers. The catalog's tightest layout
/// (`deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d-64k` prefill) fits its
/// `max_model_len` with up to 15.
pub const ACTIVATION_HIDDEN_BUFFERS: u64 = 8;

/// Graph memory vLLM's memory profiler reserves before the KV cache where
/// the image estimates it (`profile_cudagraph_memory`, applied when
/// `VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS` is on, its default, in
/// vllm-ascend v0.21.0rc1 and v0.22.1rc1; skipped for DeepSeek-V4; the other
/// images capture after the KV cache is allocated). A fit: 0.5 GiB (a public
/// log of an 8-rank full-decode capture: "took 0.29 GiB").
pub const GRAPH_RESERVE_BYTES: u64 = GIB / 2;

/// vLLM's `max_num_batched_tokens` and `max_num_seqs` for `vllm serve` when
/// unset (vllm/engine/arg_utils.py `_set_default_args`): 8192 / 1024 on
/// devices with at least 70 GiB, else 2048 / 256.
pub const fn default_batching(hw: &Hardware) -> (u64, u64) {
    if total_bytes(hw) >= 70 * GIB {
        (8192, 1024)
    } else {
        (2048, 256)
    }
}

/// vLLM's `block_size` when unset: vllm-ascend sets 128 (utils.py
/// `refresh_block_size`).
pub const DEFAULT_BLOCK_SIZE: u64 = 128;

/// Weight bytes held by one rank, by class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Weights {
    /// Embedding and `lm_head`, vocab-parallel over TP.
    pub embedding: u64,
    /// Attention, dense MLP and shared experts, split over TP.
    pub dense: u64,
    /// Routed experts over the expert-parallel group, with redundant experts.
    pub routed: u64,
    /// Router gates, replicated.
    pub router: u64,
    /// The MTP layer (its routed experts over EP like the others).
    pub mtp: u64,
}

impl Weights {
    /// All of them.
    pub const fn total(&self) -> u64 {
        self.embedding + self.dense + self.routed + self.router + self.mtp
    }
}

/// Memory one rank keeps besides weights and KV.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Reserves {
    /// Peak activations of the profile run over `max_num_batched_tokens`.
    pub activations: u64,
    /// The sampler's float32 logits for `max_num_seqs` requests
    /// (vLLM's `_dummy_sampler_run` in the profile run).
    pub sampler: u64,
    /// HCCL buffers.
    pub hccl: u64,
    /// Graph memory reserved before the KV cache (0 where captured after).
    pub graph: u64,
    /// [`RUNTIME_OVERHEAD_BYTES`].
    pub runtime: u64,
}

impl Reserves {
    /// All of them.
    pub const fn total(&self) -> u64 {
        self.activations
            .saturating_add(self.sampler)
            .saturating_add(self.hccl)
            .saturating_add(self.graph)
            .saturating_add(self.runtime)
    }
}

/// One role's budget per rank (every rank of a role has the same shape).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RoleBudget {
    /// The role.
    pub role: Role,
    /// DP size of each engine.
    pub dp: u32,
    /// TP size.
    pub tp: u32,
    /// PCP size (1 when not used).
    pub pcp: u32,
    /// Ranks that split the routed experts (DP x TP with expert parallelism,
    /// else TP).
    pub ep: u32,
    /// EPLB redundant experts per layer.
    pub redundant_experts: u64,
    /// Total memory per NPU as the runtime reports it.
    pub total_bytes: u64,
    /// `gpu_memory_utilization` in thousandths.
    pub utilization_milli: u64,
    /// What vLLM may use: utilization x total, or `--kv-cache-memory-bytes`
    /// plus the non-KV memory when that is given.
    pub requested_bytes: u64,
    /// `--kv-cache-memory-bytes`, when set.
    pub kv_cache_memory_bytes: Option<u64>,
    /// Weights per rank.
    pub weights: Weights,
    /// Reserves per rank.
    pub reserves: Reserves,
    /// Bytes left for the KV cache (negative: the weights and reserves alone
    /// exceed the budget).
    pub kv_bytes: i64,
    /// KV bytes per token on this rank over every layer (MTP included).
    pub kv_bytes_per_token: u64,
    /// KV bytes per request that do not grow with its length (DeepSeek-V4's
    /// sliding-window caches).
    pub kv_bytes_per_request: u64,
    /// `block_size`.
    pub block_size: u64,
    /// Bytes of one block over every layer.
    pub block_bytes: u64,
    /// Blocks per layer (`available // page_size // num_layers`).
    pub kv_blocks: u64,
    /// Tokens the cache holds (`blocks x block_size`).
    pub kv_tokens: u64,
    /// `max_model_len` as configured (or the model's when unset).
    pub max_model_len: u64,
    /// The model's own limit (`max_position_embeddings` with RoPE scaling).
    pub model_max_len: u64,
    /// The largest `max_model_len` one request of which fits the cache.
    pub max_len_fits: u64,
    /// `max_model_len` requests the cache holds at once.
    pub requests_at_max_len: u64,
    /// `max_num_batched_tokens` (configured or vLLM's default).
    pub max_num_batched_tokens: u64,
    /// `max_num_seqs` (configured or vLLM's default).
    pub max_num_seqs: u64,
    /// The declared workload, if any.
    pub workload: Option<WorkloadFit>,
    /// True when the DeepSeek-V4 hybrid cache is estimated rather than
    /// reproduced (see [`kv_per_token`]).
    pub estimate: bool,
    /// A hybrid Gated-DeltaNet model's plan ([`HybridKv`]): its blocks
    /// (`kv_blocks`) are shared by the attention and Mamba groups, and each
    /// running request holds at least one of each Mamba group.
    pub hybrid: Option<HybridKv>,
    /// Bytes vLLM's one-request check keeps back from the KV memory (one
    /// pool block, where the image's vLLM does: the generated
    /// `kv_memory_check`).
    pub check_reserve_bytes: u64,
}

/// How the layout's declared workload (`bench`) fits one role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct WorkloadFit {
    /// Tokens one request holds at its end (input + output).
    pub tokens_per_request: u64,
    /// Requests the layout runs at once, if it says ([`workload`]).
    pub concurrency: Option<u64>,
    /// Requests of that size one rank's KV cache holds.
    pub fit_per_rank: u64,
    /// Over all ranks of the role (DP ranks x engines).
    pub fit_total: u64,
    /// `max_num_seqs` x DP ranks of the role.
    pub seqs_total: u64,
    /// DP ranks of the role (engines x DP).
    pub ranks: u64,
}

/// The inputs the budget reads for one role.
#[derive(Clone, Copy, Debug)]
pub struct RoleInput<'a> {
    /// Model-table entry.
    pub model: &'a Model,
    /// Hardware.
    pub hardware: &'a Hardware,
    /// Image.
    pub image: &'a Image,
    /// The role.
    pub role: Role,
    /// Resolved serve settings.
    pub serve: &'a Serve,
    /// DP size.
    pub dp: u32,
    /// TP size.
    pub tp: u32,
    /// PCP size (1 when not used): each of a rank's `tp x pcp` NPUs holds
    /// a TP shard of the dense weights.
    pub pcp: u32,
    /// Engines of the role.
    pub engines: u32,
    /// The declared workload `(input_len + output_len, concurrency)`.
    pub workload: Option<(u64, Option<u64>)>,
    /// The layout runs a KV pool (`AscendStoreConnector`), which puts a
    /// hybrid model's Mamba cache in 'align' mode on the images that do so.
    pub kv_pool: bool,
}
