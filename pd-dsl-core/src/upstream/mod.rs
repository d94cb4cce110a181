//! Facts generated from upstream's released source: one table per
//! vllm-ascend release, `upstream/facts/vllm-ascend/<version>.json`, written
//! by `scripts/upstream/facts.py` from the release's sdist (the whole
//! repository at its tag) and checked for freshness against the corpus. The
//! schema is the one `facts.py` documents; only the parts the rules read are
//! typed here (serde ignores the rest).
//!
//! Each row of [`crate::tables::IMAGES`] embeds its release's table with
//! `include_str!`, so a row without facts does not compile. The vLLM tables,
//! `upstream/facts/vllm/<version>.json` (`vllm serve`'s flags and the
//! speculative methods per vLLM), are embedded by `build.rs`, every file of
//! the directory. This is the one loader: the rules, the documents, the
//! `catalog upstream diff` command and the rehearsal's stand-in `vllm` read
//! the facts through it. The tables are parsed once per process
//! ([`LazyLock`]).

use crate::tables::{IMAGES, Image};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

mod diff;
mod graph_sizes;
mod lookup;
mod release;
mod sp;
mod vllm;

pub use diff::*;
pub use graph_sizes::*;
pub use lookup::*;
pub use release::*;
pub use sp::*;
pub use vllm::*;

#[cfg(test)]
mod tests;
