//! The P:D balance of a PD layout: which role idles at a workload, by how
//! much, and the engine ratio that would balance the two (issue 22's
//! balance lint, shown by `catalog lint`, the README and the page).

use super::RoleEstimate;
use crate::layout::Layout;
use crate::spec::Role;
use serde::Serialize;

/// One role of a PD layout idles: the other bounds the deployment.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Balance {
    /// The role with capacity to spare (`prefill` or `decode`).
    pub idle: &'static str,
    /// Its capacity over the other role's (requests/s).
    pub ratio: f64,
    /// Engines of the bound role per engine of the idle role that would
    /// balance the two at this workload.
    pub engines: f64,
}

impl Balance {
    /// One line for documents and `catalog show`.
    pub fn summary(&self) -> String {
        let bound = if self.idle == "prefill" {
            "decode"
        } else {
            "prefill"
        };
        format!(
            "{bound}-bound at full load: the {idle} engines could take {:.1}x the requests the {bound} engines complete at these lengths; ~{:.1} {bound} engines per {idle} engine would balance them",
            self.ratio,
            self.engines,
            idle = self.idle
        )
    }
}

/// How far one role's capacity must exceed the other's before the layout is
/// called unbalanced: beyond the estimate's error band on both sides.
pub const BALANCE_RATIO: f64 = 1.5;

/// The P:D balance of a PD layout from its roles' capacities.
pub(super) fn balance(layout: &Layout, roles: &[RoleEstimate]) -> Option<Balance> {
    let cap = |r: Role| roles.iter().find(|x| x.role == r).map(|x| x.capacity_rps);
    let (p, d) = (cap(Role::Prefill)?, cap(Role::Decode)?);
    let (ep, ed) = (
        super::engines_of(layout, Role::Prefill) as f64,
        super::engines_of(layout, Role::Decode) as f64,
    );
    if !(p.is_finite() && d.is_finite() && p > 0.0 && d > 0.0) {
        return None;
    }
    if d >= p * BALANCE_RATIO {
        Some(Balance {
            idle: "decode",
            ratio: d / p,
            engines: ep * d / p / ed,
        })
    } else if p >= d * BALANCE_RATIO {
        Some(Balance {
            idle: "prefill",
            ratio: p / d,
            engines: ed * p / d / ep,
        })
    } else {
        None
    }
}
