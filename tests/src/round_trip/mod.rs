//! The import round trip's comparison: what a rendered layout runs, rank by
//! rank and for the proxy, against what an input runs (the importer's
//! reading of a fixture, `tests/tests/import_round_trip/`, or what
//! upstream's own e2e runner starts, `tests/tests/upstream_import/`).
//!
//! # Normalisations (the only differences allowed)
//! 1. Argument order, `--flag=value` vs `--flag value`, and `--flag_name`
//!    vs `--flag-name` (vLLM's argparse reads them alike).
//! 2. JSON option values (`--kv-transfer-config`, `--additional-config`,
//!    `--speculative-config`, `--compilation-config`) compare as JSON: key
//!    order and whitespace do not count.
//! 3. `engine_id` in `--kv-transfer-config`: where the input leaves it out
//!    (vLLM then draws a random one per process), pd-dsl passes the
//!    engine's derived id, which must equal the `ENGINE_ID` run.sh exports.
//! 4. DP master addresses: run.sh is given, as the address of each
//!    engine's first node, the address the input names for that engine's DP
//!    master, so `--data-parallel-address` must come out identical. Where
//!    the input names it by a placeholder the e2e runner fills at run time
//!    (`${NODE_k_IP}`, `$LOCAL_IP`, `$MASTER_IP`; run.sh takes addresses
//!    only), the placeholder is bound to a test address first.
//! 5. Env values that reference other variables (`/x:$LD_LIBRARY_PATH`)
//!    are expanded against the environment the script started with; a
//!    prepend onto an unset variable has no trailing `:` in ours.
//! 6. Env that is derived rather than written, and is checked otherwise:
//!    `ASCEND_RT_VISIBLE_DEVICES` must be the devices the upstream launcher
//!    gives the rank (local rank × TP onwards, TP devices); `ENGINE_ID`
//!    must be the value run.sh exports (its kv port is compared inside
//!    `--kv-transfer-config`); `HCCL_IF_IP`, `GLOO_SOCKET_IFNAME`,
//!    `TP_SOCKET_IFNAME`, `HCCL_SOCKET_IFNAME` are not compared: run.sh
//!    resolves them on each node at run time, the input wrote one
//!    machine's.
//! 7. pd-dsl adds no env of its own: a variable ours sets that the input
//!    does not (beyond 6 and the harness's own) is a difference. Env the
//!    script inherits unchanged is set by neither side.
//! 8. Options at vLLM's default value that one side passes and the other
//!    leaves out: [`VLLM_DEFAULTS`].
//! 9. `--host`/`--port` on a `--headless` worker (no API server runs).
//! 10. A difference the importer reported — a `deviate(...)` in the
//!     imported layout and a `catalog lint` warning — about the same model,
//!     flag or variable (e.g. a hub id served from the model table's path,
//!     `--host 127.0.0.1`, `--quantization` the input leaves out), or, for
//!     the proxy, about its script (the e2e runner starts the load-balance
//!     proxy whatever the connector) or its lists ("the proxy lists ...":
//!     a count that is not one per rank, hosts and ports of different
//!     lengths, which the proxy refuses, endpoints out of node order).
//! 11. The proxy: the interpreter (`python`, `python3`, the e2e runner's
//!     own) and the script's directory are not compared, its file name is.
//!     Each endpoint list compares as ordered `host:port` pairs: the proxy
//!     balances over them in that order, so the same endpoints in another
//!     order are a difference (the imported layout derives the lists,
//!     every rank in node order, then port; the importer records the
//!     input's order and reports one that differs, normalisation 10).
//!     Hosts compare as the addresses run.sh is given: a host the input
//!     names as an engine's DP master (address or placeholder,
//!     normalisation 4) is that node's address; a host named nowhere else (a non-master node's address,
//!     `${NODE_k_IP}` of such a node) stands for the next node of the
//!     list's role the input gives no address, by first appearance, so the
//!     order among two such nodes of one role is not checked. `--host` is
//!     resolved the same way (a DP master's address only); `--port` and
//!     every other flag compare as written.
//!
//! 12. `kv_port` in `--kv-transfer-config` as a number or a numeric
//!     string: vLLM's `KVTransferConfig.kv_port` is an `int`, which
//!     pydantic reads from either.
//!
//! Anything else that differs — a flag missing, added or changed, an env
//! variable missing, added or changed, another model, a proxy endpoint
//! missing, added, changed or moved — fails the test with the unit, node,
//! rank (or `proxy`) and value.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod addresses;
mod proxy;
mod rank;
mod run;

pub use addresses::{Addresses, bind_addresses};
pub use proxy::{PROXY_LISTS, compare_proxy, pairs, proxy_failures};
pub use rank::{
    DERIVED_ENV, HARNESS_ENV, HEADLESS_IGNORES, VLLM_DEFAULTS, compare, compare_env, expand,
    is_default, is_json, normalise_engine_id, normalise_kv_port, option_map, our_options,
    prepend_onto_nothing, show,
};
pub use run::{Ran, START_ENV, run_layout, start_env};

use pd_dsl::import::{Imported, InputProxy, InputRank};
use std::collections::BTreeMap;

/// One difference between an input rank and ours: what it is about
/// (``model `M` ``, `` `--flag ``, `` env `NAME ``) and the message.
#[derive(Debug, PartialEq, Eq)]
pub struct Diff {
    /// What it is about (``model `M` ``, `` `--flag ``, `` env `NAME ``).
    pub about: String,
    /// The message.
    pub message: String,
}

pub fn diff(about: impl Into<String>, message: String) -> Diff {
    Diff {
        about: about.into(),
        message,
    }
}

/// Normalisation 10: a difference the importer reported (a `deviate(...)`
/// in the imported layout, a warning of `catalog lint`) about the same
/// model, flag or variable.
pub fn acknowledged(d: &Diff, imported: &Imported) -> bool {
    imported.notes.iter().any(|n| names(&n.what, &d.about))
}

/// Whether `text` names `about` as a whole word (`` `--port `` is not in
/// `` `--portable ``).
pub fn names(text: &str, about: &str) -> bool {
    text.match_indices(about).any(|(i, _)| {
        !text[i + about.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    })
}

/// Every difference between what `ranks` and `proxy` (the input side) run
/// and what `layout`, rendered and run with node addresses `ips`, runs,
/// that `imported`'s notes do not acknowledge (normalisation 10), as
/// `NAME: node N DP rank R: message` or `NAME: proxy: message`; and the
/// number of ranks compared. `named` maps the addresses (or placeholders)
/// the input names to their nodes (normalisation 11); `start` is the
/// environment the scripts start with (normalisation 5).
#[allow(clippy::too_many_arguments)]
pub fn compare_run(
    name: &str,
    layout: &pd_dsl::Layout,
    imported: &Imported,
    ranks: &[InputRank],
    proxy: Option<&InputProxy>,
    ips: &[String],
    named: &BTreeMap<String, usize>,
    start: &[(&str, &str)],
) -> (usize, Vec<String>) {
    let (ran, ours_proxy) = run_layout(layout, ips, start);
    let start_map = start_env(start);
    let mut failures = Vec::new();
    if ran.len() != ranks.len() {
        failures.push(format!(
            "{name}: ours runs {} ranks, the input {}",
            ran.len(),
            ranks.len()
        ));
    }
    let mut compared = 0;
    for i in ranks {
        let at = format!("{name}: node {} DP rank {}", i.node, i.dp_rank);
        let Some(ours) = ran
            .iter()
            .find(|r| r.node == i.node && r.dp_rank == i.dp_rank)
        else {
            failures.push(format!("{at}: ours runs no such rank"));
            continue;
        };
        compared += 1;
        for d in compare(i, ours, &start_map) {
            if !acknowledged(&d, imported) {
                failures.push(format!("{at}: {}", d.message));
            }
        }
    }
    let addresses = Addresses::new(layout, ips, named);
    failures.extend(proxy_failures(
        name,
        imported,
        proxy,
        ours_proxy.as_deref(),
        &addresses,
    ));
    (compared, failures)
}
