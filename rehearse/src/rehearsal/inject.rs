//! Fault injection: where a fault lands and what the rehearsal holds for it,
//! and the proxy shim that plays the proxy faults.

use super::coverage::endpoint_text;
use super::options::Fault;
use super::processes::{node_label, port_owner};
use super::{FAULT_MASTER_TIMEOUT_S, MASTER_TIMEOUT_S, node_ip};
use pd_dsl::Layout;
use std::collections::BTreeMap;
use std::net::TcpListener;

/// The model type and context the `wrong-weights` fault writes.
pub(super) const WRONG_MODEL_TYPE: &str = "pd_rehearse_other_model";
/// Below any length a layout types.
pub(super) const WRONG_MAX_LEN: u64 = 1024;

/// Where a fault lands, and what the rehearsal holds for it.
#[derive(Debug, Default)]
pub(super) struct Injection {
    /// Extra environment per node.
    pub(super) env: BTreeMap<usize, Vec<(String, String)>>,
    /// A port held until teardown.
    pub(super) held: Option<TcpListener>,
    /// Printed before start.
    pub(super) note: Option<String>,
    /// Model dir is not created.
    pub(super) no_model: bool,
    /// The model dir's `config.json` is another model's.
    pub(super) wrong_weights: bool,
    /// DP master timeout for the stand-ins.
    pub(super) master_timeout: u32,
}

pub(super) fn inject(layout: &Layout, fault: Option<Fault>) -> Result<Injection, String> {
    let mut inj = Injection {
        master_timeout: MASTER_TIMEOUT_S,
        ..Injection::default()
    };
    let nodes = &layout.placement.nodes;
    match fault {
        None => {}
        Some(Fault::MissingModel) => {
            inj.no_model = true;
            inj.note = Some("the model directory (PD_MODEL_PATH) does not exist".into());
        }
        Some(Fault::WrongWeights) => {
            // Judged by preflight's `model_config`: the text model type the
            // layout was checked with, and its typed lengths.
            let checks = pd_dsl::preflight::checkpoint_checks(layout);
            let judged = checks.as_ref().is_some_and(|c| {
                c.model_type.is_some() || c.roles.iter().any(|r| r.max_model_len.is_some())
            });
            if !judged {
                return Err(format!(
                    "fault wrong-weights does not apply to {}: its model has no known model type and no role types `max_model_len`",
                    layout.name()
                ));
            }
            inj.wrong_weights = true;
            inj.note = Some(format!(
                "the model directory holds another model's weights: config.json names model type `{WRONG_MODEL_TYPE}` and a {WRONG_MAX_LEN}-token context"
            ));
        }
        Some(Fault::WrongNpuCount) => {
            let i = nodes.len().saturating_sub(1);
            let npus = layout.hardware.npus_per_node / 2;
            inj.env
                .entry(i)
                .or_default()
                .push(("PD_STANDIN_NPUS".into(), npus.to_string()));
            inj.note = Some(format!(
                "{}'s npu-smi reports {npus} NPUs (the hardware has {})",
                node_label(layout, i),
                layout.hardware.npus_per_node
            ));
        }
        Some(Fault::PortInUse) => {
            let (i, port) = nodes
                .iter()
                .rev()
                .find_map(|n| {
                    n.ranks
                        .iter()
                        .find_map(|r| r.api_port)
                        .map(|p| (n.index, p))
                })
                .ok_or("the layout has no API port to occupy")?;
            let port16 = u16::try_from(port).map_err(|e| e.to_string())?;
            let l = TcpListener::bind((node_ip(i).as_str(), port16))
                .map_err(|e| format!("cannot occupy {}:{port}: {e}", node_ip(i)))?;
            inj.held = Some(l);
            inj.note = Some(format!(
                "{}:{port} ({} on node {i}) is held before start",
                node_ip(i),
                port_owner(layout, i, port).unwrap_or_else(|| "a layout port".into())
            ));
        }
        Some(Fault::ProxyMissesRank) => {
            let last = layout.placement.proxy.decode.last().ok_or_else(|| {
                format!(
                    "fault proxy-misses-rank does not apply to {}: it has no proxy (mixed layout)",
                    layout.name()
                )
            })?;
            inj.env
                .entry(0)
                .or_default()
                .push((PROXY_DROP.into(), "decode".into()));
            inj.note = Some(format!(
                "the proxy's decoder lists leave out their last entry ({})",
                endpoint_text(last)
            ));
        }
        Some(f @ (Fault::MissingProxyScript | Fault::ProxyExits)) => {
            if !layout.is_pd() {
                return Err(format!(
                    "fault {} does not apply to {}: it has no proxy (mixed layout)",
                    f.name(),
                    layout.name()
                ));
            }
            let env = inj.env.entry(0).or_default();
            if f == Fault::MissingProxyScript {
                let missing = "/nonexistent/load_balance_proxy_server_example.py";
                env.push(("PD_PROXY_SCRIPT".into(), missing.into()));
                inj.note = Some(format!("node 0's PD_PROXY_SCRIPT is {missing}"));
            } else {
                env.push((PROXY_EXIT.into(), "3".into()));
                env.push(("PD_PROXY_RESTARTS".into(), "1".into()));
                inj.note = Some(
                    "the proxy exits with code 3 right after start; node 0 may restart it once (PD_PROXY_RESTARTS=1)"
                        .into(),
                );
            }
        }
        Some(Fault::UnreachableMaster) => {
            let p = &layout.placement;
            let spanning = p
                .engines
                .iter()
                .find(|e| e.dp > 1 && e.nodes.len() > 1)
                .and_then(|e| e.nodes.get(1).map(|&n| (e, n)));
            let single = || {
                p.engines
                    .iter()
                    .find(|e| e.dp > 1 && layout.is_pd())
                    .map(|e| (e, e.master()))
            };
            let (engine, target) = spanning.or_else(single).ok_or_else(|| {
                format!(
                    "fault unreachable-master does not apply to {}: no rank connects to a DP master \
                     (every engine has DP 1 or is one native-DP process)",
                    layout.name()
                )
            })?;
            let rpc = engine.dp_rpc_port.unwrap_or(29550);
            let master = format!("{}:{rpc}", node_ip(engine.master()));
            inj.env
                .entry(target)
                .or_default()
                .push(("PD_STANDIN_BLOCKED".into(), master.clone()));
            inj.master_timeout = FAULT_MASTER_TIMEOUT_S;
            inj.note = Some(format!(
                "{} cannot reach its DP master {master} (the DP RPC port is blocked)",
                node_label(layout, target)
            ));
        }
    }
    Ok(inj)
}

/// The environment variable (set on node 0 by the `proxy-misses-rank`
/// fault) that makes the proxy shim drop the last entry of a list.
const PROXY_DROP: &str = "PD_REHEARSAL_PROXY_DROP";

/// The environment variable (set on node 0 by the `proxy-exits` fault) that
/// makes the proxy shim exit with that code at once.
const PROXY_EXIT: &str = "PD_REHEARSAL_PROXY_EXIT";

/// The environment variable (set on node 0 by a proxy fault with
/// `--proxy-script`) naming the real proxy the shim runs after injecting.
pub(super) const PROXY_REAL: &str = "PD_REHEARSAL_PROXY_REAL";

/// The option (in [`PROXY_SHIM`]) no upstream proxy defines: the
/// `proxy-exits` fault hands it to a real proxy, whose own argparse then
/// exits with code 2, every time.
pub(super) const PROXY_BAD_OPTION: &str = "--pd-rehearsal-fault-proxy-exits";

pub(super) const PROXY_SHIM: &str = r#"#!/usr/bin/env python3
"""Rehearsal stand-in for load_balance_proxy_server_example.py: proxy.sh runs
`python3 "$PD_PROXY_SCRIPT" ARGS...`; this replaces itself with `pd-proxy ARGS...`
(first on PATH), which takes the upstream proxy's command line, or with
`python3 "$PD_REHEARSAL_PROXY_REAL" ARGS...` (a real proxy, --proxy-script).
PD_REHEARSAL_PROXY_DROP=prefill|decode (the proxy-misses-rank fault) drops the
last entry of that role's host and port lists first; PD_REHEARSAL_PROXY_EXIT=N
(the proxy-exits fault) exits with code N at once, or, with a real proxy, hands
it an option it does not define, so that its own argparse exits."""
import os
import sys

real = os.environ.get("PD_REHEARSAL_PROXY_REAL")
code = os.environ.get("PD_REHEARSAL_PROXY_EXIT")
if code and not real:
    print("proxy stand-in: exiting with code %s on purpose (fault proxy-exits)" % code, file=sys.stderr)
    sys.exit(int(code))
args = sys.argv[1:]
role = {"prefill": "--prefiller-", "decode": "--decoder-"}.get(
    os.environ.get("PD_REHEARSAL_PROXY_DROP", ""))
if role:
    for flag in (role + "hosts", role + "ports"):
        if flag in args:
            end = args.index(flag) + 1
            while end < len(args) and not args[end].startswith("--"):
                end += 1
            if end > args.index(flag) + 1:
                del args[end - 1]
if real:
    if code:
        args.append("--pd-rehearsal-fault-proxy-exits")
    os.execv(sys.executable, [sys.executable, real] + args)
os.execvp("pd-proxy", ["pd-proxy"] + args)
"#;
