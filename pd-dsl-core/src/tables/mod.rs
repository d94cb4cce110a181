//! The closed tables: hardware, models and vllm-ascend images.
//!
//! A layout names entries of these tables by identifier; the macro checks the
//! names at compile time. A new model, image or hardware kind is one entry here.

use serde::Serialize;
use std::cmp::Ordering;
use std::fmt;

mod config_keys;
mod deepseek_builds;
mod hardware;
mod images;
mod models;
mod other_builds;

pub use config_keys::*;
pub use deepseek_builds::*;
pub use hardware::*;
pub use images::*;
pub use models::*;
pub use other_builds::*;

#[cfg(test)]
mod tests;
