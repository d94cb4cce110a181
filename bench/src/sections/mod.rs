//! The sections of `BENCHMARKS.md`, one module each: every section measures
//! and prints its figures as markdown.

mod cli;
mod compile;
mod corpus;
mod import;
mod render;
mod synthetic;

pub(crate) use cli::section_cli;
pub(crate) use compile::section_compile;
pub(crate) use corpus::{section_corpus, section_plan};
pub(crate) use import::section_import;
pub(crate) use render::section_render;
pub(crate) use synthetic::{profile_seed, section_synthetic, synth_child};
