//! The catalog
