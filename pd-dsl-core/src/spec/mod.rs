//! The layout as written: what the `layout!` macro lowers to and what a
//! YAML/JSON layout file deserializes into. Nothing here is derived; see
//! [`crate::placement`] and [`crate::layout`] for what is computed from it.

use crate::site::{Site, Spanned};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// A JSON value (additional_config entries, flag values, connector extras).
pub type Json = serde_json::Value;

mod connector;
mod layout_spec;
mod ports;
mod serve;
mod topology;

pub use connector::*;
pub use layout_spec::*;
pub use ports::*;
pub use serve::*;
pub use topology::*;
