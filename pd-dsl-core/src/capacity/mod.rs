//! The memory budget of one rank: what its weights, reserves and KV cache
//! take out of the NPU's HBM, and what is left for requests.
//!
//! It follows what vllm-ascend does at start-up (`NPUWorker.determine_available_memory`,
//! vllm_ascend/worker/worker.py at every image): the KV cache gets
//! `gpu_memory_utilization x total memory - (weights + peak activations +
//! non-torch memory)` (or `--kv-cache-memory-bytes` as given), vLLM divides
//! it into blocks of `block_size` tokens per layer
//! (vllm/v1/core/kv_cache_utils.py `get_num_blocks`) and refuses to start
//! unless one `max_model_len` request fits (`_check_enough_kv_cache_memory`).
//! Weights and KV bytes per token are computed from [`crate::dims`]; the
//! activation, HCCL and runtime reserves are estimates whose constants below
//! each say where they come from or that they are a fit.
//!
//! Pure functions of the checked layout: no I/O.

use crate::dims::{self, Architecture, AttentionDims, ModelDims, WeightFormat};
use crate::layout::{Layout, Serve};
use crate::spec::{EnvValue, GraphMode, Json, Role};
use crate::tables::{Hardware, HardwareFamily, Image, Model};
use serde::Serialize;

mod budget;
mod constants;
mod hybrid;
mod sizes;

pub use budget::*;
pub use constants::*;
pub use hybrid::*;
pub use sizes::*;

#[cfg(test)]
#[allow(clippy::expect_used, clippy::panic)]
mod tests;
