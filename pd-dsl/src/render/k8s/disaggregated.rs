//! Why `--k8s-disaggregated-set` refuses every layout: LeaderWorkerSet's
//! `DisaggregatedSet` (`disaggregatedset.x-k8s.io/v1`, shipped with the LWS
//! controller from v0.9.0; `scaling`, `slices` and `placementPolicy` from
//! v0.10.0; schema in `tests/k8s/`) cannot hold this product's layouts
//! without lying about how they run.
//!
//! A DisaggregatedSet has 2 to 10 roles (`spec.roles`, `minItems: 2`); each
//! role is one child LeaderWorkerSet of `replicas` identical groups, named by
//! the controller `<set>-<slice>-<revision>-<role>`, where `<revision>` is a
//! hash of the roles' templates that changes on every rollout (kubernetes-sigs/lws
//! `site/content/en/docs/concepts/disaggregatedset/_index.md`: "never rely
//! on hardcoded child LWS names"). Its peers are meant to be found by label.
//!
//! This product's pods and proxy find each other by pod name, written when
//! the manifests are rendered: the proxy lists every prefill and decode rank
//! (`proxy.sh`, `PD_NODE_IPS`), and `run.sh` checks its group against every
//! node's name (`PD_K8S_NODE_HOSTS`). The names of a DisaggregatedSet's pods
//! are unknown until its controller creates them, and change with each
//! rollout. A role's engines would also have to be identical groups, but
//! each engine of a role has its own KV engine id and node index.
//!
//! So: a mixed layout has one role, fewer than the two a DisaggregatedSet
//! needs, and scales with `--k8s-autoscale keda` ([`super::autoscaling`]);
//! a PD layout would need its proxy and `run.sh` to find engines by label.
//! [`refusal`] says which applies; nothing is written.

use super::names::Names;
use crate::{Layout, Role};

/// Fewest roles a DisaggregatedSet holds (`spec.roles` `minItems`).
pub const MIN_ROLES: usize = 2;
/// Most roles (`spec.roles` `maxItems`).
pub const MAX_ROLES: usize = 10;
/// The LeaderWorkerSet release whose controller serves the schema the tests
/// hold (`scaling`, `slices`, `placementPolicy`).
pub const LWS_VERSION: &str = "v0.10.0";

/// Why this layout cannot be a DisaggregatedSet: what was found, what the
/// CRD expects, what to deploy instead.
pub fn refusal(layout: &Layout, names: &Names) -> String {
    let roles: Vec<Role> = {
        let mut r: Vec<Role> = layout.placement.engines.iter().map(|e| e.role).collect();
        r.dedup();
        r
    };
    if !layout.is_pd() {
        return format!(
            "found a mixed layout (one role, `mixed`, {} engine(s)), expected {MIN_ROLES} to {MAX_ROLES} roles: a DisaggregatedSet (`disaggregatedset.x-k8s.io/v1`, LeaderWorkerSet {LWS_VERSION}) holds at least {MIN_ROLES} (`spec.roles` minItems). Deploy the per-engine LeaderWorkerSets (`kubectl apply -k k8s/`); `--k8s-autoscale keda` scales a one-engine mixed layout's groups",
            layout.placement.engines.len()
        );
    }
    let mut why = format!(
        "found a prefill/decode layout whose proxy and `run.sh` find every node by its pod name ({}, ...), expected pods found by label: a DisaggregatedSet (`disaggregatedset.x-k8s.io/v1`, LeaderWorkerSet {LWS_VERSION}) names each role's LeaderWorkerSet `<set>-<slice>-<revision>-<role>` with a revision hash that changes on every rollout, so its pods' names are unknown when the manifests are written and the proxy's prefill/decode lists could not name them",
        names.node_hosts.first().map_or("", String::as_str)
    );
    for role in roles {
        let engines: Vec<_> = layout
            .placement
            .engines
            .iter()
            .filter(|e| e.role == role)
            .collect();
        if engines.len() > 1 {
            let ids: Vec<String> = engines
                .iter()
                .map(|e| {
                    e.engine_id
                        .map_or_else(|| "-".to_owned(), |i| i.to_string())
                })
                .collect();
            why.push_str(&format!(
                "; and its {} {role} engines differ (KV engine ids {}, first nodes {}), while a role's replicas are identical groups",
                engines.len(),
                ids.join(", "),
                engines
                    .iter()
                    .map(|e| e.master().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    why.push_str(". Deploy the per-engine LeaderWorkerSets (`kubectl apply -k k8s/`)");
    why
}
