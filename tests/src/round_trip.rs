//! The import round trip's comparison: what a rendered layout runs, rank by
//! rank and for the proxy, against what an input runs (the importer's
//! reading of a fixture, `tests/tests/import_round_trip.rs`, or what
//! upstream's own e2e runner starts, `tests/tests/upstream_import.rs`).
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

use crate::harness::{Served, dry_run, flags, ranks, render_layout, serve};
use pd_dsl::Role;
use pd_dsl::import::{Imported, InputProxy, InputRank};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Variables of the harness itself (the recording stand-in, the shell).
pub const HARNESS_ENV: &[&str] = &["PATH", "STUB_OUT", "PWD", "SHLVL", "_", "OLDPWD"];

/// Derived per node or rank, checked on their own (normalisation 6).
pub const DERIVED_ENV: &[&str] = &[
    "ASCEND_RT_VISIBLE_DEVICES",
    "HCCL_IF_IP",
    "GLOO_SOCKET_IFNAME",
    "TP_SOCKET_IFNAME",
    "HCCL_SOCKET_IFNAME",
    "ENGINE_ID",
    "KV_PORT",
    // The node index run.sh exports where some node has its own settings.
    "PD_NODE",
    // Where run.sh wrote this node's KV pool config (its content is
    // compared on its own).
    "MMC_LOCAL_CONFIG_PATH",
    "MOONCAKE_CONFIG_PATH",
    "MOONCAKE_MASTER",
];

/// What one rank of the rendered layout runs.
#[derive(Debug)]
pub struct Ran {
    /// Node index (pd-dsl order).
    pub node: usize,
    /// Global DP rank.
    pub dp_rank: u64,
    /// What the recording `vllm` saw.
    pub served: Served,
    /// `ENGINE_ID` run.sh exports (PD).
    pub engine_id: Option<String>,
    /// The devices the upstream launcher would give this rank.
    pub devices: Option<String>,
}

/// The start environment of every script the harness runs.
pub fn start_env(extra: &[(&str, &str)]) -> BTreeMap<String, String> {
    let mut m: BTreeMap<String, String> = [
        ("HCCL_IF_IP", "192.xx.xx.1"),
        ("GLOO_SOCKET_IFNAME", "eth0"),
        ("TP_SOCKET_IFNAME", "eth0"),
        ("HCCL_SOCKET_IFNAME", "eth0"),
        ("MMC_LOCAL_CONFIG_PATH", "/tmp/runtime/mmc-local.conf"),
        ("MOONCAKE_CONFIG_PATH", "/tmp/runtime/mooncake.json"),
        ("MOONCAKE_MASTER", "192.xx.xx.1:50088"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    m.extend(
        extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    m
}

/// Runs every node of the rendered layout; `ips` are the node addresses
/// given to run.sh. Also returns the proxy command run.sh of node 0 runs.
/// `start` is the environment every script starts with (besides the
/// harness's own, [`start_env`]).
pub fn run_layout(
    layout: &pd_dsl::Layout,
    ips: &[String],
    start: &[(&str, &str)],
) -> (Vec<Ran>, Option<Vec<String>>) {
    let r = render_layout(layout);
    let ips: Vec<&str> = ips.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    let mut proxy = None;
    for node in 0..layout.node_count() {
        let d = dry_run(&r, node, &ips);
        if let Some(cmd) = d.proxy_command.clone() {
            assert!(proxy.is_none(), "two nodes run the proxy");
            proxy = Some(cmd);
        }
        let script = Path::new(&d.node_command[0])
            .file_name()
            .and_then(|f| f.to_str())
            .unwrap_or_default()
            .to_owned();
        let placed = &layout.placement.nodes[node];
        // run.sh exports the node index where some node runs its own
        // settings (`nodes:`); the rank scripts pick them by it.
        let index = node.to_string();
        let mut start = start.to_vec();
        if !layout.node_serve.is_empty() {
            start.push(("PD_NODE", index.as_str()));
        }
        let start = start.as_slice();
        if script == "run_mixed.sh" {
            let served = serve(&r, "run_mixed.sh", &d.node_command[1..], start);
            for rank in &placed.ranks {
                out.push(Ran {
                    node,
                    dp_rank: u64::from(rank.dp_rank),
                    served: Served {
                        argv: served.argv.clone(),
                        env: served.env.clone(),
                    },
                    engine_id: None,
                    devices: None,
                });
            }
            continue;
        }
        // A PD node: the launcher runs one template per rank.
        let engine_id = d.engine_id.clone().expect("a PD node exports ENGINE_ID");
        let kv_port = d.kv_port.clone().expect("a PD node exports KV_PORT");
        let template = flags(&d.node_command[2..])
            .get("--template")
            .and_then(|v| v.first().cloned())
            .expect("the launcher names its template");
        let template = Path::new(&template)
            .file_name()
            .and_then(|f| f.to_str())
            .expect("template file name")
            .to_owned();
        for (local, args) in ranks(&r, &d.node_command).into_iter().enumerate() {
            let tp: usize = args[6].parse().expect("TP size");
            let devices = (local * tp..(local + 1) * tp)
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(",");
            let mut env = start.to_vec();
            env.extend([
                ("ENGINE_ID", engine_id.as_str()),
                ("KV_PORT", kv_port.as_str()),
            ]);
            let served = serve(&r, &template, &args, &env);
            out.push(Ran {
                node,
                dp_rank: args[3].parse().expect("DP rank"),
                served,
                engine_id: Some(engine_id.clone()),
                devices: Some(devices),
            });
        }
    }
    (out, proxy)
}

/// Expands `$NAME` and `${NAME}` in an input env value against `env`
/// (unset: empty), as the shell would at `export` time.
pub fn expand(value: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, tail) = if let Some(b) = after.strip_prefix('{') {
            match b.find('}') {
                Some(j) => (&b[..j], &b[j + 1..]),
                None => ("", after),
            }
        } else {
            let j = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..j], &after[j..])
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
        } else {
            out.push_str(env.get(name).map_or("", String::as_str));
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

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

/// Normalisation 5: `dir:$NAME` with `NAME` unset leaves a trailing `:`
/// in the shell (an empty entry: the current directory, for
/// `LD_LIBRARY_PATH`); pd-dsl's prepend leaves none.
pub fn prepend_onto_nothing(
    name: &str,
    value: &str,
    start: &BTreeMap<String, String>,
) -> Option<String> {
    if start.contains_key(name) {
        return None;
    }
    [format!(":${name}"), format!(":${{{name}}}")]
        .iter()
        .find_map(|suffix| value.strip_suffix(suffix.as_str()))
        .filter(|dir| !dir.contains('$'))
        .map(str::to_owned)
}

/// Flags with one value each (or none): the input's and ours.
pub fn option_map(
    options: &[(String, Option<String>)],
    what: &str,
    diffs: &mut Vec<Diff>,
) -> BTreeMap<String, Option<String>> {
    let mut m = BTreeMap::new();
    for (f, v) in options {
        if m.insert(f.clone(), v.clone()).is_some() {
            diffs.push(diff(format!("`{f}"), format!("{what} passes `{f}` twice")));
        }
    }
    m
}

/// Our argv after the model as `(flag, value)` pairs, spelled as the
/// importer spells them.
pub fn our_options(argv: &[String]) -> Vec<(String, Option<String>)> {
    flags(argv)
        .into_iter()
        .map(|(f, v)| (f, v.into_iter().next()))
        .collect()
}

pub fn is_json(v: &str) -> bool {
    v.trim_start().starts_with('{')
}

/// Normalisation 8: options at vLLM's default value, which one side may
/// pass and the other leave out (`--host` unset binds every interface).
pub const VLLM_DEFAULTS: &[(&str, &str)] = &[
    ("--host", "0.0.0.0"),
    ("--data-parallel-size", "1"),
    ("--tensor-parallel-size", "1"),
    ("--data-parallel-start-rank", "0"),
];

/// Normalisation 9: options a `--headless` worker ignores (it runs no API
/// server).
pub const HEADLESS_IGNORES: &[&str] = &["--host", "--port"];

pub fn is_default(flag: &str, value: Option<&str>) -> bool {
    VLLM_DEFAULTS
        .iter()
        .any(|(f, v)| *f == flag && Some(*v) == value)
}

/// Every difference between an input rank and what the rendered layout ran
/// for it (empty: they agree, modulo the normalisations). `start` is the
/// environment the scripts started with.
pub fn compare(input: &InputRank, ran: &Ran, start: &BTreeMap<String, String>) -> Vec<Diff> {
    let mut diffs = Vec::new();
    let argv = &ran.served.argv;
    if argv.first().map(String::as_str) != Some("serve") {
        diffs.push(diff(
            "vllm",
            format!("ours runs `vllm {argv:?}`, expected `vllm serve`"),
        ));
        return diffs;
    }
    if argv.get(1) != Some(&input.model) {
        diffs.push(diff(
            format!("model `{}`", input.model),
            format!(
                "model: the input serves `{}`, ours `{}`",
                input.model,
                argv.get(1).map_or("", String::as_str)
            ),
        ));
    }
    let mut want = option_map(&input.options, "the input", &mut diffs);
    let mut got = option_map(&our_options(&argv[2..]), "ours", &mut diffs);
    if want.contains_key("--headless") && got.contains_key("--headless") {
        for f in HEADLESS_IGNORES {
            want.remove(*f);
            got.remove(*f);
        }
    }
    for (flag, w) in &want {
        let Some(g) = got.get(flag) else {
            if !is_default(flag, w.as_deref()) {
                diffs.push(diff(
                    format!("`{flag}"),
                    format!(
                        "`{flag}{}`: the input passes it, ours does not",
                        w.as_ref().map_or(String::new(), |v| format!(" {v}"))
                    ),
                ));
            }
            continue;
        };
        match (w, g) {
            (Some(w), Some(g)) if is_json(w) => {
                let (wj, gj) = (
                    serde_json::from_str::<Value>(w),
                    serde_json::from_str::<Value>(g),
                );
                let about = format!("`{flag}");
                match (wj, gj) {
                    (Ok(mut wj), Ok(gj)) => {
                        if flag == "--kv-transfer-config" {
                            // A KV pool's MultiConnector: its PD connector
                            // carries the kv port and engine id.
                            const PD: &str = "/kv_connector_extra_config/connectors/0";
                            let multi = wj["kv_connector"] == "MultiConnector";
                            let g_pd = if multi {
                                gj.pointer(PD).cloned()
                            } else {
                                Some(gj.clone())
                            };
                            let w_pd = if multi {
                                wj.pointer_mut(PD)
                            } else {
                                Some(&mut wj)
                            };
                            if let (Some(w_pd), Some(g_pd)) = (w_pd, g_pd) {
                                normalise_engine_id(w_pd, &g_pd, ran, &mut diffs);
                                normalise_kv_port(w_pd, &g_pd);
                            }
                        }
                        if wj != gj {
                            diffs.push(diff(
                                about,
                                format!("`{flag}`: the input passes {wj}, ours {gj}"),
                            ));
                        }
                    }
                    (Err(e), _) => {
                        diffs.push(diff(about, format!("`{flag}`: the input's JSON: {e}")))
                    }
                    (_, Err(e)) => diffs.push(diff(about, format!("`{flag}`: our JSON: {e}"))),
                }
            }
            (w, g) if w != g => diffs.push(diff(
                format!("`{flag}"),
                format!(
                    "`{flag}`: the input passes {}, ours {}",
                    show(w.as_deref()),
                    show(g.as_deref())
                ),
            )),
            _ => {}
        }
    }
    for (flag, g) in &got {
        if !want.contains_key(flag) && !is_default(flag, g.as_deref()) {
            diffs.push(diff(
                format!("`{flag}"),
                format!(
                    "`{flag}{}`: ours passes it, the input does not",
                    g.as_ref().map_or(String::new(), |v| format!(" {v}"))
                ),
            ));
        }
    }
    compare_env(input, ran, start, &mut diffs);
    diffs
}

pub fn compare_env(
    input: &InputRank,
    ran: &Ran,
    start: &BTreeMap<String, String>,
    diffs: &mut Vec<Diff>,
) {
    let env = &ran.served.env;
    let theirs: BTreeMap<&str, &str> = input
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    for (k, v) in &theirs {
        let want = prepend_onto_nothing(k, v, start).unwrap_or_else(|| expand(v, start));
        let about = format!("env `{k}");
        match env.get(*k) {
            None => diffs.push(diff(
                about,
                format!("env `{k}={v}`: the input sets it, ours does not"),
            )),
            Some(g) if *g != want => diffs.push(diff(
                about,
                format!("env `{k}`: the input sets `{want}` (written `{v}`), ours `{g}`"),
            )),
            Some(_) => {}
        }
    }
    for (k, g) in env {
        let k = k.as_str();
        let inherited = start.get(k) == Some(g);
        if theirs.contains_key(k)
            || inherited
            || HARNESS_ENV.contains(&k)
            || DERIVED_ENV.contains(&k)
        {
            continue;
        }
        diffs.push(diff(
            format!("env `{k}"),
            format!("env `{k}={g}`: ours sets it, the input does not"),
        ));
    }
    if let Some(devices) = &ran.devices {
        let got = env.get("ASCEND_RT_VISIBLE_DEVICES");
        if got != Some(devices) {
            diffs.push(diff(
                "env `ASCEND_RT_VISIBLE_DEVICES",
                format!(
                    "env `ASCEND_RT_VISIBLE_DEVICES`: the launcher gives `{devices}`, ours `{}`",
                    got.map_or("", String::as_str)
                ),
            ));
        }
    }
    if let Some(id) = &ran.engine_id
        && env.get("ENGINE_ID") != Some(id)
    {
        diffs.push(diff(
            "env `ENGINE_ID",
            format!(
                "env `ENGINE_ID`: run.sh exports `{id}`, ours {:?}",
                env.get("ENGINE_ID")
            ),
        ));
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

pub fn show(v: Option<&str>) -> String {
    v.map_or("no value".to_owned(), |v| format!("`{v}`"))
}

/// Normalisation 12: `kv_port` as a number or a numeric string (vLLM's
/// `KVTransferConfig.kv_port` is an `int`; pydantic reads `"30000"` as
/// 30000).
pub fn normalise_kv_port(want: &mut Value, got: &Value) {
    let (Some(w), Some(g)) = (want.as_object_mut(), got.as_object()) else {
        return;
    };
    let number = |v: &Value| -> Option<u64> {
        v.as_u64()
            .or_else(|| v.as_str().and_then(|s| s.parse::<u64>().ok()))
    };
    if let (Some(wp), Some(gp)) = (w.get("kv_port"), g.get("kv_port"))
        && number(wp).is_some()
        && number(wp) == number(gp)
    {
        let gp = gp.clone();
        w.insert("kv_port".into(), gp);
    }
}

/// Normalisation 3: an `engine_id` the input leaves out is pd-dsl's
/// derived one, which must be the `ENGINE_ID` run.sh exports.
pub fn normalise_engine_id(want: &mut Value, got: &Value, ran: &Ran, diffs: &mut Vec<Diff>) {
    let (Some(w), Some(g)) = (want.as_object_mut(), got.as_object()) else {
        return;
    };
    if w.contains_key("engine_id") {
        return;
    }
    if let Some(id) = g.get("engine_id") {
        if id.as_str() != ran.engine_id.as_deref() {
            diffs.push(diff(
                "`--kv-transfer-config",
                format!(
                    "`--kv-transfer-config`: ours passes `engine_id` {id}, run.sh exports {:?}",
                    ran.engine_id
                ),
            ));
        }
        w.insert("engine_id".into(), id.clone());
    }
}

/// The node addresses for run.sh (normalisation 4): each engine's first
/// node gets the address the input names for the engine's DP master, a
/// run-time placeholder bound to `10.0.100.N` (N: that node) in every rank
/// of the engine that names it; other nodes get `10.99.0.N`.
/// Also returns each address as the input names it (an address or a
/// placeholder) with the node it stands for.
pub fn bind_addresses(
    layout: &pd_dsl::Layout,
    ranks: &mut [InputRank],
) -> (Vec<String>, BTreeMap<String, usize>) {
    const ADDRESS: &str = "--data-parallel-address";
    let mut ips: Vec<String> = (0..layout.node_count())
        .map(|n| format!("10.99.0.{}", n + 1))
        .collect();
    let mut named_nodes = BTreeMap::new();
    let nodes = &layout.placement.nodes;
    for master in nodes.iter().filter(|n| n.dp_master == n.index) {
        let named = ranks
            .iter()
            .filter(|r| r.node == master.index)
            .find_map(|r| r.options.iter().find(|(f, _)| f == ADDRESS))
            .and_then(|(_, v)| v.clone());
        let Some(named) = named else { continue };
        let bound = if named.contains('$') {
            format!("10.0.100.{}", master.index)
        } else {
            named.clone()
        };
        for r in ranks.iter_mut().filter(|r| {
            nodes
                .get(r.node)
                .is_some_and(|n| n.dp_master == master.index)
        }) {
            for (f, v) in &mut r.options {
                if f == ADDRESS && v.as_deref() == Some(named.as_str()) {
                    *v = Some(bound.clone());
                }
            }
        }
        ips[master.index] = bound;
        named_nodes.insert(named, master.index);
    }
    (ips, named_nodes)
}

/// Proxy hosts as node addresses (normalisation 11): the address run.sh
/// is given for the node a host names.
#[derive(Debug)]
pub struct Addresses<'a> {
    /// The address run.sh is given for each node.
    pub ips: &'a [String],
    /// Addresses (or placeholders) the input names elsewhere, with their
    /// node: each engine's DP master (normalisation 4).
    pub named: &'a BTreeMap<String, usize>,
    /// Each node's role.
    pub roles: Vec<Role>,
}

impl<'a> Addresses<'a> {
    /// The addresses of `layout`'s nodes.
    pub fn new(
        layout: &pd_dsl::Layout,
        ips: &'a [String],
        named: &'a BTreeMap<String, usize>,
    ) -> Addresses<'a> {
        Addresses {
            ips,
            named,
            roles: layout.placement.nodes.iter().map(|n| n.role).collect(),
        }
    }

    /// The address of the node `host` names, if the input names that node
    /// elsewhere; else `host` as written.
    pub fn known(&self, host: &str) -> String {
        self.named
            .get(host)
            .map_or_else(|| host.to_owned(), |n| self.ips[*n].clone())
    }

    /// The hosts of the prefill and decode lists as node addresses. A host
    /// the input names nowhere else stands for the next node of the list's
    /// role the input gives no address, by first appearance.
    pub fn lists(&self, prefill: &[String], decode: &[String]) -> (Vec<String>, Vec<String>) {
        let mut free: Vec<usize> = (0..self.ips.len())
            .filter(|n| !self.named.values().any(|m| m == n))
            .collect();
        let mut bound: BTreeMap<String, usize> = BTreeMap::new();
        let mut resolve = |hosts: &[String], role: Role| -> Vec<String> {
            hosts
                .iter()
                .map(|h| {
                    if let Some(n) = self.named.get(h).or_else(|| bound.get(h)) {
                        return self.ips[*n].clone();
                    }
                    match free.iter().position(|n| self.roles[*n] == role) {
                        Some(i) => {
                            let n = free.remove(i);
                            bound.insert(h.clone(), n);
                            self.ips[n].clone()
                        }
                        None => h.clone(),
                    }
                })
                .collect()
        };
        let p = resolve(prefill, Role::Prefill);
        let d = resolve(decode, Role::Decode);
        (p, d)
    }
}

/// The endpoint lists of the proxy: `(hosts flag, ports flag, what)`.
pub const PROXY_LISTS: &[(&str, &str, &str)] = &[
    ("--prefiller-hosts", "--prefiller-ports", "prefill"),
    ("--decoder-hosts", "--decoder-ports", "decode"),
];

/// Every difference between the input's proxy command and the one node 0
/// of the rendered layout runs (`python3 SCRIPT OPTIONS...`).
pub fn compare_proxy(
    input: Option<&InputProxy>,
    ours: Option<&[String]>,
    addresses: &Addresses,
) -> Vec<Diff> {
    let mut diffs = Vec::new();
    let (input, ours) = match (input, ours) {
        (None, None) => return diffs,
        (Some(i), Some(o)) => (i, o),
        (None, Some(o)) => {
            diffs.push(diff(
                "the proxy",
                format!("ours runs {}, the input runs no proxy", o.join(" ")),
            ));
            return diffs;
        }
        (Some(i), None) => {
            diffs.push(diff(
                "the proxy",
                format!("the input runs `{}`, ours no proxy", i.script),
            ));
            return diffs;
        }
    };
    // The interpreter (`python`, `python3`, the runner's own) and the
    // script's directory are where the image keeps them: the file name is
    // what is compared.
    let script = ours
        .get(1)
        .and_then(|p| Path::new(p).file_name())
        .and_then(|f| f.to_str())
        .unwrap_or_default();
    if script != input.script {
        diffs.push(diff(
            format!("`{}", input.script),
            format!("the input runs `{}`, ours `{script}`", input.script),
        ));
    }
    let mut want: BTreeMap<&str, &[String]> = BTreeMap::new();
    for (f, v) in &input.options {
        if want.insert(f.as_str(), v.as_slice()).is_some() {
            diffs.push(diff(
                format!("`{f}"),
                format!("the input passes `{f}` twice"),
            ));
        }
    }
    let got = flags(ours.get(2..).unwrap_or_default());
    let list = |m: &BTreeMap<&str, &[String]>, f: &str| m.get(f).map_or(Vec::new(), |v| v.to_vec());
    let want_hosts: Vec<Vec<String>> = PROXY_LISTS.iter().map(|(h, _, _)| list(&want, h)).collect();
    let (prefill, decode) = addresses.lists(&want_hosts[0], &want_hosts[1]);
    for ((hosts_flag, ports_flag, what), hosts) in PROXY_LISTS.iter().zip([prefill, decode]) {
        let theirs = pairs(&hosts, &list(&want, ports_flag));
        let mine = pairs(
            got.get(*hosts_flag).map_or(&[][..], Vec::as_slice),
            got.get(*ports_flag).map_or(&[][..], Vec::as_slice),
        );
        if theirs != mine {
            let at = theirs
                .iter()
                .zip(&mine)
                .position(|(a, b)| a != b)
                .unwrap_or(theirs.len().min(mine.len()));
            let show = |v: &[String]| v.get(at).map_or("nothing".to_owned(), |e| format!("`{e}`"));
            diffs.push(diff(
                "the proxy lists",
                format!(
                    "the {what} endpoints (`{hosts_flag}`, `{ports_flag}`): the input lists {}, ours {}; at position {}, the input has {}, ours {}",
                    theirs.len(),
                    mine.len(),
                    at + 1,
                    show(&theirs),
                    show(&mine)
                ),
            ));
        }
    }
    let lists: Vec<&str> = PROXY_LISTS.iter().flat_map(|(h, p, _)| [*h, *p]).collect();
    for (flag, w) in &want {
        if lists.contains(flag) {
            continue;
        }
        let w: Vec<String> = if *flag == "--host" {
            w.iter().map(|h| addresses.known(h)).collect()
        } else {
            w.to_vec()
        };
        match got.get(*flag) {
            None => diffs.push(diff(
                format!("`{flag}"),
                format!(
                    "`{flag} {}`: the input passes it, ours does not",
                    w.join(" ")
                ),
            )),
            Some(g) if *g != w => diffs.push(diff(
                format!("`{flag}"),
                format!(
                    "`{flag}`: the input passes `{}`, ours `{}`",
                    w.join(" "),
                    g.join(" ")
                ),
            )),
            Some(_) => {}
        }
    }
    for (flag, g) in &got {
        if !want.contains_key(flag.as_str()) && !lists.contains(&flag.as_str()) {
            diffs.push(diff(
                format!("`{flag}"),
                format!(
                    "`{flag} {}`: ours passes it, the input does not",
                    g.join(" ")
                ),
            ));
        }
    }
    diffs
}

/// `host:port` per endpoint; a list longer than the other keeps its
/// extra entries with `?` for the missing half.
pub fn pairs(hosts: &[String], ports: &[String]) -> Vec<String> {
    (0..hosts.len().max(ports.len()))
        .map(|i| {
            format!(
                "{}:{}",
                hosts.get(i).map_or("?", String::as_str),
                ports.get(i).map_or("?", String::as_str)
            )
        })
        .collect()
}

/// The start environment of the scripts the harness runs: a path list
/// set, so a prepend shows.
/// (`LD_PRELOAD` stays unset: a prepend onto nothing shows too.)
pub const START_ENV: &[(&str, &str)] = &[("LD_LIBRARY_PATH", "/opt/harness/lib")];

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

/// Every difference between the input's proxy and ours not normalised
/// away, as `NAME: proxy: message`.
pub fn proxy_failures(
    name: &str,
    imported: &Imported,
    input: Option<&InputProxy>,
    ours: Option<&[String]>,
    addresses: &Addresses,
) -> Vec<String> {
    compare_proxy(input, ours, addresses)
        .into_iter()
        .filter(|d| !acknowledged(d, imported))
        .map(|d| format!("{name}: proxy: {}", d.message))
        .collect()
}
