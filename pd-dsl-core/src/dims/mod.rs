//! Model dimensions: what the capacity budget ([`crate::capacity`]) needs to
//! know about a model's size, one `const` per architecture family, and the
//! bytes per weight class of each quantized build.
//!
//! Every number is a field of the model's Hugging Face `config.json`. Where
//! a primary source holds it the comment names it: the defaults of
//! `DeepseekV3Config` in the `transformers` sdist
//! (`src/transformers/models/deepseek_v3/configuration_deepseek_v3.py`, 4.57.1,
//! which are DeepSeek-V3's own values) and of `GlmMoeDsaConfig`
//! (`models/glm_moe_dsa/configuration_glm_moe_dsa.py`, 5.25.0, GLM-5's
//! own: they give its published 744B), vLLM's `DeepseekV4Config`
//! (`vllm/transformers_utils/configs/deepseek_v4.py`, vllm 0.23.0 sdist). The
//! rest are third-party copies of the `config.json` ("cfg-copy"), each
//! cross-checked against a second copy (`shared/domain/model-facts.md` lists
//! them). Every one of these numbers is also held equal, by a test, to the
//! copy of the build's checkpoint config in the generated checkpoint facts
//! ([`checkpoints`](self::CHECKPOINTS), from a pinned package), which is
//! where the builds without dimensions take their context length, text
//! model type and routed experts from. Parameter counts are never typed: [`Architecture::params`] computes
//! them from these dimensions the way the model code lays out its weights
//! (vllm/model_executor/models/deepseek_v2.py, qwen3_moe.py), and a test
//! checks the totals against the published sizes.
//!
//! Models are looked up by model-table id ([`dims_for`]), so this module adds
//! nothing to the model table (`tables/`); a test requires every model-table entry to be
//! covered or listed in [`UNSIZED`] with the reason. Every entry, sized or
//! not, has the context length vLLM derives for it ([`derived_len`]).

use serde::Serialize;

mod architectures;
mod checkpoints;
mod context;
mod entries;
mod formats;
mod geometry;

pub use architectures::*;
pub use checkpoints::*;
pub use context::*;
pub use entries::*;
pub use formats::*;
pub use geometry::*;

#[cfg(test)]
mod tests;
