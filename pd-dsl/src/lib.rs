//! pd-dsl: deployment layouts for prefill/decode-disaggregated vllm-ascend
//! serving, written as compact Rust, checked by the compiler, and rendered to
//! every script and document a deployment needs.
//!
//! - [`layout!`] writes a layout; the compiler runs every rule on it.
//! - [`check`] runs the very same rules on a [`LayoutSpec`] built at run time
//!   (see [`load`] for YAML/JSON files).

pub use pd_dsl_core::*;
pub use pd_dsl_macros::layout;

pub mod import;
pub mod load;
pub mod plan;
pub mod render;

/// How vLLM reads a checkpoint's `config.json` and what the layout's settings
/// ask of it (`templates/py/`): generated preflight scripts include both files
/// verbatim (`templates/sh/model_config.sh`), and the rehearsal's stand-in
/// vllm runs the same code on the weights it is given.
pub mod checkpoint_py {
    /// `checkpoint_config.py`: `text_config`, `derived_len`, `num_experts`.
    pub const READING: &str = include_str!("../templates/py/checkpoint_config.py");
    /// `model_config_judge.py`: `judge`, `judge_config` (needs [`READING`]).
    pub const JUDGE: &str = include_str!("../templates/py/model_config_judge.py");
}

#[doc(hidden)]
pub mod __private {
    pub use serde_json;
}
