//! The core of pd-dsl: the layout model, the closed tables (hardware, models,
//! images), placement (every derived value), and the one rule engine that the
//! `layout!` macro and the runtime loader both run.
//!
//! This crate has no `syn` and no I/O, so the proc-macro crate can depend on
//! it and run exactly the code the runtime runs.

pub mod capacity;
pub mod check;
pub mod dims;
pub mod estimate;
pub mod layout;
pub mod newer;
pub mod placement;
pub mod preflight;
pub mod rules;
pub mod site;
pub mod spec;
pub mod status;
pub mod tables;
pub mod upstream;

pub use check::{check, check_owned};
pub use layout::{Acknowledged, Layout, Proxy, Serve, Socket, SocketKind, Speculative};
pub use placement::{
    Devices, Endpoint, EnginePlan, NodePlan, NodeRanks, Placement, ProxyLists, RankPlan,
};
pub use rules::{Diagnostic, Diagnostics, Rule, Severity};
pub use site::{Site, Spanned};
pub use spec::*;
pub use status::DeployStatus;
