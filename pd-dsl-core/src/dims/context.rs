//! The longest context vLLM derives for each model-table entry, sized or not.
//!
//! vLLM derives `max_model_len` from the model's `config.json`
//! (`max_position_embeddings`, times the YaRN factor where the config
//! scales RoPE: vllm/config/model.py `_get_and_verify_max_len`) and refuses
//! a longer `--max-model-len` unless `VLLM_ALLOW_LONG_MAX_MODEL_LEN` is set;
//! without `--max-model-len` it serves that length. A sized entry takes it
//! from the copy of its checkpoint's config where the build names one
//! ([`config_of`]), else from its [`Architecture`]. An unsized entry without
//! a copy has one of its own here: the exact length where a source states
//! it, or else the longest length upstream serves it at without overriding
//! the derivation, which the derived length is at least.

use super::*;

/// What is known of the length vLLM derives from a model's config.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "tokens")]
pub enum DerivedLen {
    /// The derived length itself.
    Exact(u64),
    /// Only a lower bound: upstream serves the model at this length with
    /// neither `--hf-overrides` nor `VLLM_ALLOW_LONG_MAX_MODEL_LEN`, so
    /// vLLM derives at least this much.
    AtLeast(u64),
}

impl DerivedLen {
    /// The derived length when it is known exactly.
    pub const fn exact(self) -> Option<u64> {
        match self {
            Self::Exact(n) => Some(n),
            Self::AtLeast(_) => None,
        }
    }

    /// A length vLLM derives at least (the exact one when known).
    pub const fn at_least(self) -> u64 {
        match self {
            Self::Exact(n) | Self::AtLeast(n) => n,
        }
    }
}

impl std::fmt::Display for DerivedLen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Exact(n) => write!(f, "{n}"),
            Self::AtLeast(n) => write!(f, "at least {n}"),
        }
    }
}

/// The derived length of an unsized model-table entry, with its source.
#[derive(Debug, Serialize)]
pub struct Context {
    /// Model-table id (an entry of [`UNSIZED`] without a checkpoint copy).
    pub model: &'static str,
    /// The derived length.
    pub len: DerivedLen,
    /// Where it comes from.
    pub source: &'static str,
}

/// DeepSeek-V4.1-Flash: "a context length of up to one million tokens"
/// (DeepSeek-V4.1-Flash.md @v0.30.0rc1 L7), served at `--max-model-len
/// 1048576` with no override (L401, L491, L691).
const V4_1: &str =
    "DeepSeek-V4.1-Flash.md L7 \"up to one million tokens\", served at 1048576 (L401, L491, L691)";

/// GLM-4.7: served at 140000 (GLM4.x.md @v0.30.0rc2 L201, the
/// `GLM-4.7-W8A8-floatmtp` build of the same model); no upstream file
/// states its config's length.
const GLM_4_7: &str = "served at 140000 (GLM4.x.md L201, GLM-4.7-W8A8-floatmtp)";

macro_rules! contexts {
    ($($id:literal => $len:expr, $source:expr;)*) => {
        /// The derived length of every unsized model-table entry without a
        /// checkpoint copy.
        pub static CONTEXTS: &[Context] = &[
            $(Context { model: $id, len: $len, source: $source },)*
        ];
    };
}

use DerivedLen::{AtLeast, Exact};

contexts! {
    "deepseek_v4_1_flash_w8a8" => Exact(1048576), V4_1;
    "glm_4_7_w8a8c8" => AtLeast(140000), GLM_4_7;
}

/// The length vLLM derives for a model-table entry and its source: the one
/// vLLM derives from the copy of its checkpoint's config where the build
/// has one ([`config_of`]; every pinned vLLM derives the same), else its
/// architecture's for a sized entry, else [`CONTEXTS`]'.
pub fn derived_len(model_id: &str) -> Option<(DerivedLen, &'static str)> {
    if let Some(c) = crate::tables::model(model_id).and_then(config_of)
        && let Some(n) = c.derived_len()
    {
        return Some((DerivedLen::Exact(n), c.source.as_str()));
    }
    if let Some(d) = dims_for(model_id) {
        return Some((DerivedLen::Exact(d.arch.max_model_len), d.arch.source));
    }
    CONTEXTS
        .iter()
        .find(|c| c.model == model_id)
        .map(|c| (c.len, c.source))
}
