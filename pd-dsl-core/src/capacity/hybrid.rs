//! The KV cache of a hybrid model whose linear-attention layers are Gated
//! DeltaNet (Qwen3.5) on one rank: the attention block and page the release
//! settles on, the KV cache groups vLLM forms, the blocks the pool holds and
//! what one request needs of it.
//!
//! The arithmetic is upstream's, step by step; `tests/hybrid_kv_oracle.rs`
//! holds every number here to the released code of every image, run from the
//! sdists (`scripts/upstream/hybrid_kv_oracle.py`):
//! 1. The attention block. Where vllm-ascend sizes it (the generated
//!    `hybrid_attn_block`, up to v0.29.0rc1: patch_mamba_config.py
//!    `verify_and_update_config`) it is [`dims::gdn_attn_block`], and the
//!    Mamba page is padded to the attention page plus the smaller state page;
//!    the model runner pads the attention page up to it
//!    (vllm_ascend/worker/model_runner_v1.py `get_kv_cache_spec`). Where vLLM
//!    sizes it (the generated `hybrid_block_vllm`, v0.30.0rc1 on:
//!    vllm/platforms/interface.py `_align_hybrid_block_size`) the block is
//!    the alignment (the kernel block, or a larger typed block) times
//!    `cdiv(both states, alignment x per-token K and V page)`, and the Mamba
//!    page is padded to the attention page.
//! 2. The groups (vllm/v1/core/kv_cache_utils.py
//!    `_get_kv_cache_groups_uniform_page_size`): the group size is the larger
//!    layer count when it is under 1.5 x the smaller, else the smaller; each
//!    kind's layers fill `cdiv(layers, group size)` groups.
//! 3. The pool (`get_kv_cache_config_from_groups`, `get_num_blocks`):
//!    `available // (group size x page)` blocks, shared by every group.
//! 4. One request (`_max_memory_usage_bytes_from_groups`, the generated
//!    `kv_memory_check`): `cdiv(len, block)` blocks of each attention group
//!    and `1 + num_spec` of each Mamba group (`MambaSpec`'s
//!    `num_speculative_blocks`), or the first group's alone (vLLM 0.18),
//!    against the available memory less one pool block where vLLM keeps it
//!    back.
//!
//! In Mamba cache mode 'align' (prefix caching, or a KV store where the
//! image forces it) only the check changes: a request takes `2 + num_spec`
//! blocks of each Mamba group (`MambaSpec.max_memory_usage_bytes`).

use super::*;
use crate::dims::GdnDims;
use crate::upstream::{BlocksPerRequest, KvMemoryCheck};

/// Who sizes a hybrid model's attention block at a release, and the kernel
/// block it aligns to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "by")]
pub enum HybridSizing {
    /// vllm-ascend's patch_mamba_config.py (`hybrid_attn_block`).
    VllmAscend {
        /// `kernel_block_size`.
        kernel: u64,
    },
    /// vLLM's `_align_hybrid_block_size` (`hybrid_block_vllm`).
    Vllm {
        /// The attention backend's smallest kernel block.
        kernel: u64,
    },
}

impl HybridSizing {
    /// The sizing of a release, from its generated facts; `None` where
    /// neither fact is read.
    pub fn of(rel: &crate::upstream::Release) -> Option<HybridSizing> {
        if let Some(b) = &rel.hybrid_attn_block {
            return Some(HybridSizing::VllmAscend {
                kernel: b.kernel_block_size,
            });
        }
        rel.hybrid_block_vllm.as_ref().map(|b| HybridSizing::Vllm {
            kernel: b.kernel_block_size,
        })
    }
}

/// One rank's hybrid KV cache plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct HybridKv {
    /// Tokens per attention block.
    pub block: u64,
    /// Bytes of one block of one layer, every group's (the pages unified).
    pub page: u64,
    /// A request's linear-attention state in one layer, before padding.
    pub mamba_state: u64,
    /// Layers per KV cache group.
    pub group_size: u64,
    /// Full-attention groups.
    pub attn_groups: u64,
    /// Mamba (Gated DeltaNet) groups.
    pub mamba_groups: u64,
    /// Blocks one request takes of each Mamba group: `1 + num_spec`, one
    /// more in 'align' mode.
    pub mamba_blocks_per_request: u64,
    /// The one-request check counts the first group only.
    pub first_group_only: bool,
    /// The check keeps one pool block back.
    pub reserves_pool_block: bool,
}

impl HybridKv {
    /// The plan of a rank at tensor-parallel size `tp` with `num_spec`
    /// speculative tokens and a typed block (`None`: unset), for
    /// `full_layers` attention layers (the MTP draft's included) and
    /// `mamba_layers` Gated DeltaNet layers, the KV cache in the model's
    /// 2-byte dtype, the Mamba cache in 'align' mode or not (`align`).
    /// `None` where upstream refuses (a head count TP does not divide,
    /// vllm-ascend's "Cannot align") or a layer count is 0.
    #[allow(clippy::too_many_arguments)]
    pub fn plan(
        d: &GdnDims,
        tp: u64,
        num_spec: u64,
        typed_block: Option<u64>,
        sizing: HybridSizing,
        check: &KvMemoryCheck,
        full_layers: u64,
        mamba_layers: u64,
        align: bool,
    ) -> Option<HybridKv> {
        if full_layers == 0 || mamba_layers == 0 {
            return None;
        }
        let crate::dims::GdnState {
            conv,
            temporal,
            k_token,
        } = crate::dims::gdn_state(d, tp, num_spec)?;
        let typed = typed_block.unwrap_or(0);
        let (block, page) = match sizing {
            HybridSizing::VllmAscend { kernel } => {
                let b = crate::dims::gdn_attn_block(d, tp, num_spec, kernel)?;
                let block = typed.max(b.block);
                (block, block * 2 * k_token + conv.min(temporal))
            }
            HybridSizing::Vllm { kernel } => {
                let unit = kernel.max(typed).max(1);
                let b = unit * (conv + temporal).div_ceil(unit * 2 * k_token);
                let block = typed.max(b);
                (block, block * 2 * k_token)
            }
        };
        let (lo, hi) = (full_layers.min(mamba_layers), full_layers.max(mamba_layers));
        let group_size = if 2 * hi < 3 * lo { hi } else { lo };
        Some(HybridKv {
            block,
            page,
            mamba_state: conv + temporal,
            group_size,
            attn_groups: full_layers.div_ceil(group_size),
            mamba_groups: mamba_layers.div_ceil(group_size),
            mamba_blocks_per_request: 1 + num_spec + u64::from(align),
            first_group_only: check.blocks_per_request == BlocksPerRequest::FirstGroup,
            reserves_pool_block: check.reserves_pool_block,
        })
    }

    /// Bytes of one block of the shared pool (one page per layer of a
    /// group).
    pub const fn pool_block(&self) -> u64 {
        self.group_size.saturating_mul(self.page)
    }

    /// Blocks the pool holds in `available` bytes.
    pub const fn num_blocks(&self, available: u64) -> u64 {
        match available.checked_div(self.pool_block()) {
            Some(n) => n,
            None => 0,
        }
    }

    /// Pool blocks one request of `len` tokens takes.
    pub const fn blocks_per_request(&self, len: u64) -> u64 {
        let attn = len.div_ceil(self.block);
        if self.first_group_only {
            attn
        } else {
            self.attn_groups.saturating_mul(attn).saturating_add(
                self.mamba_groups
                    .saturating_mul(self.mamba_blocks_per_request),
            )
        }
    }

    /// Bytes vLLM's one-request check needs for `len` tokens.
    pub const fn request_bytes(&self, len: u64) -> u64 {
        self.blocks_per_request(len)
            .saturating_mul(self.pool_block())
    }

    /// What the check compares that with, out of `available` bytes.
    pub const fn check_bytes(&self, available: u64) -> u64 {
        if self.reserves_pool_block {
            available.saturating_sub(self.pool_block())
        } else {
            available
        }
    }

    /// Whether one request of `len` tokens passes vLLM's check.
    pub const fn fits(&self, len: u64, available: u64) -> bool {
        let check = self.check_bytes(available);
        check > 0 && self.request_bytes(len) <= check
    }
}
