//! Test-only crate.
