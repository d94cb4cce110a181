//! The `launch_online_dp.py` lines: each node's DP slice, address and ports,
//! and the role of the template a line starts.

use super::serve::{Tok, split_args};
use super::{Fail, TemplateIn};
use crate::import::Loc;
use crate::import::build::{P, number, p};
use crate::spec::{Json, Role};
use std::collections::BTreeMap;

pub(super) struct Launch {
    pub(super) at: Loc,
    pub(super) dp: P<u64>,
    pub(super) tp: P<u64>,
    pub(super) dp_local: P<u64>,
    pub(super) rank_start: P<u64>,
    pub(super) address: P<String>,
    pub(super) rpc: P<u64>,
    pub(super) port: P<u64>,
}

const LAUNCHER_FLAGS: &[&str] = &[
    "--dp-size",
    "--tp-size",
    "--dp-size-local",
    "--dp-rank-start",
    "--dp-address",
    "--dp-rpc-port",
    "--vllm-start-port",
];

pub(super) fn launch(toks: &[Tok], at: Loc) -> Result<Launch, Fail> {
    let args = split_args(toks)?;
    let mut m: BTreeMap<&str, P<String>> = BTreeMap::new();
    for a in &args {
        let Some(key) = LAUNCHER_FLAGS.iter().find(|f| **f == a.flag.v) else {
            return Err((
                a.flag.at,
                format!(
                    "found `{}` on a `launch_online_dp.py` line, expected one of `{}`{}",
                    a.flag.v,
                    LAUNCHER_FLAGS.join("`, `"),
                    crate::rules::did_you_mean(&a.flag.v, LAUNCHER_FLAGS.iter().copied())
                ),
            ));
        };
        let Some(v) = &a.value else {
            return Err((
                a.flag.at,
                format!("found `{key}` without a value, expected one"),
            ));
        };
        if v.v.contains('$') {
            if *key == "--dp-address" {
                m.insert(key, v.clone());
                continue;
            }
            return Err((
                v.at,
                format!(
                    "found `{key} {}`, a value read at run time, expected a literal: the importer never runs the script",
                    v.v
                ),
            ));
        }
        m.insert(key, v.clone());
    }
    let need = |k: &str, dflt: Option<u64>| -> Result<P<u64>, Fail> {
        match m.get(k) {
            Some(v) => number(v, &format!("`{k}`")),
            None => dflt.map(|d| p(d, at)).ok_or((
                at,
                format!(
                    "found a `launch_online_dp.py` line without `{k}`, expected it: the node's ranks depend on it"
                ),
            )),
        }
    };
    let dp = need("--dp-size", None)?;
    let dp_local = need("--dp-size-local", Some(dp.v))?;
    // launch_online_dp.py defaults: --dp-rpc-port 12345, --vllm-start-port 9000.
    Ok(Launch {
        at,
        tp: need("--tp-size", None)?,
        rank_start: need("--dp-rank-start", Some(0))?,
        address: m
            .get("--dp-address")
            .cloned()
            .ok_or((at, "found a `launch_online_dp.py` line without `--dp-address`, expected the DP master's address".to_owned()))?,
        rpc: need("--dp-rpc-port", Some(12345))?,
        port: need("--vllm-start-port", Some(9000))?,
        dp,
        dp_local,
    })
}

pub(super) fn launch_role(templates: &[TemplateIn], l: &Launch) -> Result<Role, Fail> {
    let roles: Vec<Role> = {
        let mut r: Vec<Role> = templates.iter().map(|t| t.role).collect();
        r.dedup();
        r.sort();
        r.dedup();
        r
    };
    if let [only] = roles.as_slice() {
        return Ok(*only);
    }
    let fits: Vec<Role> = roles
        .iter()
        .copied()
        .filter(|role| {
            templates.iter().any(|t| {
                t.role == *role
                    && t.shapes
                        .as_ref()
                        .and_then(|s| s.get(role.as_str()))
                        .is_some_and(|s| {
                            s.get("dp_size").and_then(Json::as_u64) == Some(l.dp.v)
                                && s.get("tp_size").and_then(Json::as_u64) == Some(l.tp.v)
                        })
            })
        })
        .collect();
    match fits.as_slice() {
        [one] => Ok(*one),
        _ => Err((
            l.at,
            format!(
                "found a launcher line for dp{}tp{} matching {} templates, expected exactly one: its role comes from the template whose `kv_connector_extra_config` shape for its role is dp{}tp{}",
                l.dp.v,
                l.tp.v,
                if fits.is_empty() { "no" } else { "several" },
                l.dp.v,
                l.tp.v
            ),
        )),
    }
}
