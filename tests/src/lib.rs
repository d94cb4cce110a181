//! Test-only crate: the harness shared by the integration tests.

pub mod harness;
pub mod round_trip;
