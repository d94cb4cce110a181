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

#[doc(hidden)]
pub mod __private {
    pub use serde_json;
}
