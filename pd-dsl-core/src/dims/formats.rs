//! Bits per weight class of each quantized build.

use super::*;

/// Bits per 32 parameters (fractional bytes stay integers: MXFP4 is
/// 32 x 4 bits + one 8-bit shared scale = 136 bits per 32, OCP Microscaling
/// Formats v1.0 §5).
pub type BitsPer32 = u64;

/// BF16.
pub const BF16: BitsPer32 = 32 * 16;
/// int8 weights (per-channel scales not counted: under 0.1 % of a 7168-wide row).
pub const INT8: BitsPer32 = 32 * 8;
/// int4 weights (per-group scales not counted).
pub const INT4: BitsPer32 = 32 * 4;
/// MXFP8: 8-bit elements plus one 8-bit scale per 32.
pub const MXFP8: BitsPer32 = 32 * 8 + 8;
/// MXFP4: 4-bit elements plus one 8-bit scale per 32.
pub const MXFP4: BitsPer32 = 32 * 4 + 8;

/// How a build stores each weight class and its KV cache.
#[derive(Debug, PartialEq, Eq, Serialize)]
pub struct WeightFormat {
    /// Name (`w8a8`).
    pub name: &'static str,
    /// Embedding and `lm_head` (msModelSlim keeps them in BF16).
    pub embedding: BitsPer32,
    /// Attention projections.
    pub attention: BitsPer32,
    /// Dense MLP and shared experts.
    pub dense: BitsPer32,
    /// Routed experts.
    pub routed: BitsPer32,
    /// Bytes per cached KV element: 2 (BF16) or 1 ("C8": int8 on A2/A3,
    /// fp8 on 950DT, vllm_ascend/core/kv_cache_interface.py
    /// `_get_c8_k_cache_dtype`).
    pub kv_bytes: u64,
}

/// Unquantized BF16 checkpoint.
pub const FORMAT_BF16: WeightFormat = WeightFormat {
    name: "bf16",
    embedding: BF16,
    attention: BF16,
    dense: BF16,
    routed: BF16,
    kv_bytes: 2,
};
/// Ascend W8A8: int8 linear layers, BF16 embedding/`lm_head`/norms/router.
pub const FORMAT_W8A8: WeightFormat = WeightFormat {
    name: "w8a8",
    embedding: BF16,
    attention: INT8,
    dense: INT8,
    routed: INT8,
    kv_bytes: 2,
};
/// W8A8 with an int8 KV cache (C8).
pub const FORMAT_W8A8C8: WeightFormat = WeightFormat {
    name: "w8a8c8",
    kv_bytes: 1,
    ..FORMAT_W8A8
};
/// Ascend W4A8: int4 routed experts, the rest as W8A8.
pub const FORMAT_W4A8: WeightFormat = WeightFormat {
    name: "w4a8",
    routed: INT4,
    ..FORMAT_W8A8
};
/// W4A8 with C8 KV.
pub const FORMAT_W4A8C8: WeightFormat = WeightFormat {
    name: "w4a8c8",
    kv_bytes: 1,
    ..FORMAT_W4A8
};
/// MXFP4 MLP and MXFP8 attention with C8 KV (`dsk-v3.1-w4a4_mlp-w8a8c8_attn`,
/// DeepSeek-V3.1.md 950DT section).
pub const FORMAT_W4A4C8_MXFP4: WeightFormat = WeightFormat {
    name: "w4a4c8-mxfp4",
    embedding: BF16,
    attention: MXFP8,
    dense: MXFP4,
    routed: MXFP4,
    kv_bytes: 1,
};
/// MXFP8 linear layers with C8 KV.
pub const FORMAT_W8A8C8_MXFP8: WeightFormat = WeightFormat {
    name: "w8a8c8-mxfp8",
    embedding: BF16,
    attention: MXFP8,
    dense: MXFP8,
    routed: MXFP8,
    kv_bytes: 1,
};
/// MXFP8 linear layers, BF16 KV.
pub const FORMAT_W8A8_MXFP8: WeightFormat = WeightFormat {
    name: "w8a8-mxfp8",
    kv_bytes: 2,
    ..FORMAT_W8A8C8_MXFP8
};
