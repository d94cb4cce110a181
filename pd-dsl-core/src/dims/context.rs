//! The longest context vLLM derives for each model-table entry, sized or not.
//!
//! vLLM derives `max_model_len` from the model's `config.json`
//! (`max_position_embeddings`, times the YaRN factor where the config
//! scales RoPE: vllm/config/model.py `_get_and_verify_max_len`) and refuses
//! a longer `--max-model-len` unless `VLLM_ALLOW_LONG_MAX_MODEL_LEN` is set;
//! without `--max-model-len` it serves that length. A sized entry takes it
//! from its [`Architecture`]. An unsized entry ([`UNSIZED`]) has one of its
//! own here: the exact length where a source states it, or else the longest
//! length upstream serves it at without overriding the derivation, which the
//! derived length is at least.

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
    /// Model-table id (an entry of [`UNSIZED`]).
    pub model: &'static str,
    /// The derived length.
    pub len: DerivedLen,
    /// Where it comes from.
    pub source: &'static str,
}

/// DeepSeek-V4-Pro: the `DeepseekV4Config` default
/// (vllm/transformers_utils/configs/deepseek_v4.py, also transformers
/// 5.25.0 `configuration_deepseek_v4.py`), which a third-party copy of the
/// V4-Pro `config.json` repeats; upstream serves it at exactly that length
/// (docs/source/tutorials/models/DeepSeek-V4-Pro.md @v0.30.0rc2 L1485-1486,
/// `--max-model-len 1048576`, "~1M input").
const V4_PRO: &str = "DeepseekV4Config default 1048576 (vllm/transformers_utils/configs/deepseek_v4.py), served at 1048576 in DeepSeek-V4-Pro.md L1485-1486";

/// DeepSeek-V4.1-Flash: "a context length of up to one million tokens"
/// (DeepSeek-V4.1-Flash.md @v0.30.0rc1 L7), served at `--max-model-len
/// 1048576` with no override (L401, L491, L691).
const V4_1: &str =
    "DeepSeek-V4.1-Flash.md L7 \"up to one million tokens\", served at 1048576 (L401, L491, L691)";

/// GLM-5.2: "1M context" (GLM5.2.md @v0.30.0rc2 §5.2, served at
/// `--max-model-len 1024000`, L1053); `max_position_embeddings` 1048576 in a
/// third-party copy of its `config.json`, the same as upstream's own GLM-5.3-Flash
/// test config (tests/e2e/pull_request/four_card/glm53flash_assets/config.json L69).
const GLM_5_2: &str = "1048576: GLM5.2.md §5.2 \"1M context\" served at 1024000; cfg-copy max_position_embeddings 1048576";

/// GLM-5.3: served at 202752 (GLM5.3.md @v0.30.0rc2 L190, L245); its 1M
/// deployments "have not yet [been] tested" and point at GLM-5.2's (L410-412),
/// so no exact length is stated.
const GLM_5_3: &str = "served at 202752 (GLM5.3.md L190); 1M context untested upstream (L412)";

/// GLM-4.7: served at 140000 (GLM4.x.md @v0.30.0rc2 L201, the
/// `GLM-4.7-W8A8-floatmtp` build of the same model); no upstream file
/// states its config's length.
const GLM_4_7: &str = "served at 140000 (GLM4.x.md L201, GLM-4.7-W8A8-floatmtp)";

/// Qwen3.5: upstream's own YaRN overrides for its 986k/984k runs name the
/// config's unscaled length, `"original_max_position_embeddings": 262144`
/// (tests/e2e/cases/models/configs/Qwen/Qwen3.5-397B-w4a8_986k-function-PD.yaml
/// L99, Qwen3.5-122B-A10B-w4a8-984k-1k-0-PD.yaml L85 @v0.30.0rc2), and
/// serves it at 133000 without one (Qwen3.5-397B-A17B.md L209).
const QWEN3_5: &str = "original_max_position_embeddings 262144 in upstream's YaRN overrides (Qwen3.5-397B-w4a8_986k-function-PD.yaml L99)";

/// Qwen3-VL-235B: served at 262144 without an override
/// (Qwen3-VL-235B-A22B-Instruct.md @v0.30.0rc2 L341, L391, L646); no upstream
/// file states its config's length.
const QWEN3_VL: &str = "served at 262144 (Qwen3-VL-235B-A22B-Instruct.md L341)";

/// Kimi-K2-Instruct: served at 8192 (tests/e2e/nightly/multi_node/config/
/// Kimi-K2-Instruct-W8A8.yaml @v0.19.1rc1 L29); no upstream file states its
/// config's length.
const KIMI_K2_INSTRUCT: &str = "served at 8192 (Kimi-K2-Instruct-W8A8.yaml L29)";

macro_rules! contexts {
    ($($id:literal => $len:expr, $source:expr;)*) => {
        /// The derived length of every unsized model-table entry.
        pub static CONTEXTS: &[Context] = &[
            $(Context { model: $id, len: $len, source: $source },)*
        ];
    };
}

use DerivedLen::{AtLeast, Exact};

contexts! {
    "deepseek_v4_1_flash_w8a8" => Exact(1048576), V4_1;
    "deepseek_v4_pro_w4a8_mtp" => Exact(1048576), V4_PRO;
    // GLM-5.1 in the GLM-5 architecture; unsized only for its C8 cache.
    "glm_5_1_w8a8c8" => Exact(GLM_5.max_model_len), GLM_5.source;
    "glm_5_2" => Exact(1048576), GLM_5_2;
    "glm_5_2_w8a8" => Exact(1048576), GLM_5_2;
    "glm_5_2_w8a8c8" => Exact(1048576), GLM_5_2;
    "glm_5_2_w4a8c8" => Exact(1048576), GLM_5_2;
    "glm_5_3_w8a8c8" => AtLeast(202752), GLM_5_3;
    "glm_4_7_w8a8c8" => AtLeast(140000), GLM_4_7;
    // The same model as the sized Qwen3-235B builds; only its weight format
    // is undocumented.
    "qwen3_235b_a22b_w8a8_mxfp0" => Exact(QWEN3_235B.max_model_len), QWEN3_235B.source;
    "qwen3_vl_235b_a22b_instruct" => AtLeast(262144), QWEN3_VL;
    "qwen3_vl_235b_a22b_instruct_w8a8_quarot" => AtLeast(262144), QWEN3_VL;
    "qwen3_vl_235b_a22b_instruct_w8a8_mxfp8" => AtLeast(262144), QWEN3_VL;
    "qwen3_5_397b_a17b_w8a8_mtp" => Exact(262144), QWEN3_5;
    "qwen3_5_397b_a17b_w4a8_mtp" => Exact(262144), QWEN3_5;
    "qwen3_5_122b_a10b_w4a8" => Exact(262144), QWEN3_5;
    "kimi_k2_instruct_w8a8" => AtLeast(8192), KIMI_K2_INSTRUCT;
}

/// The length vLLM derives for a model-table entry and its source: the
/// architecture's for a sized entry, [`CONTEXTS`]' otherwise.
pub fn derived_len(model_id: &str) -> Option<(DerivedLen, &'static str)> {
    if let Some(d) = dims_for(model_id) {
        return Some((DerivedLen::Exact(d.arch.max_model_len), d.arch.source));
    }
    CONTEXTS
        .iter()
        .find(|c| c.model == model_id)
        .map(|c| (c.len, c.source))
}
