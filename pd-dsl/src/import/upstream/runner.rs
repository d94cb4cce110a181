//! What upstream's e2e runners derive: the proxy commands they start and
//! the internal-DP runner's `$NAME` substitution.

use crate::import::InputProxy;
use crate::import::build::{NodeIn, P};
use crate::import::scripts::Tok;
use crate::spec::{ProxyScript, Role};

/// The proxy command the e2e runner builds for a `disaggregated_prefill`
/// config (upstream `tests/e2e/nightly/multi_node/external_dp/scripts/
/// external_dp_config.py`: `_parse_routing` fixes node 0 and port 1999,
/// `build_proxy_server_cmd` lists every rank of each group in `config`
/// order, host `cluster_ips[node_index]`, port `port_start` + local rank).
pub(super) fn runner_proxy(nodes: &[NodeIn], indices: &[u64]) -> InputProxy {
    let list = |role: Role| {
        let mut hosts = Vec::new();
        let mut ports = Vec::new();
        for (n, idx) in nodes.iter().zip(indices).filter(|(n, _)| n.role == role) {
            for local in 0..n.dp_local.v {
                hosts.push(format!("${{NODE_{idx}_IP}}"));
                ports.push((n.api_port.v + local).to_string());
            }
        }
        (hosts, ports)
    };
    let (prefill_hosts, prefill_ports) = list(Role::Prefill);
    let (decode_hosts, decode_ports) = list(Role::Decode);
    InputProxy {
        script: ProxyScript::LoadBalance.file_name().to_owned(),
        options: vec![
            ("--host".into(), vec!["${NODE_0_IP}".into()]),
            ("--port".into(), vec!["1999".into()]),
            ("--prefiller-hosts".into(), prefill_hosts),
            ("--prefiller-ports".into(), prefill_ports),
            ("--decoder-hosts".into(), decode_hosts),
            ("--decoder-ports".into(), decode_ports),
        ],
    }
}

/// The internal-DP runner's substitution (upstream `tests/e2e/nightly/
/// multi_node/internal_dp/scripts/multi_node_config.py`, `_expand_env`:
/// `$NAME` and `${NAME}` from the node's envs plus what `DistEnvBuilder`
/// sets; an unknown name stays as written). A variable of the node's
/// `envs` becomes its value; `LOCAL_IP` and `HCCL_IF_IP` the node's own
/// address and `MASTER_IP` the DP master's, as `${NODE_k_IP}` (an address
/// only known at run time, allowed where pd-dsl derives the value); any
/// other stays a run-time value, refused at its position where a literal
/// is needed.
pub(super) fn runner_expand(
    toks: Vec<Tok>,
    env: &[(P<String>, P<String>)],
    node: u64,
    master: u64,
) -> Vec<Tok> {
    toks.into_iter()
        .map(|t| {
            if t.literal || !t.text.contains('$') {
                return t;
            }
            let mut out = String::new();
            let mut literal = true;
            let mut rest = t.text.as_str();
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
                let value = env
                    .iter()
                    .rev()
                    .find(|(k, _)| k.v == name)
                    .map(|(_, v)| (v.v.clone(), !v.v.contains('$')))
                    .or(match name {
                        "LOCAL_IP" | "HCCL_IF_IP" => Some((format!("${{NODE_{node}_IP}}"), false)),
                        "MASTER_IP" => Some((format!("${{NODE_{master}_IP}}"), false)),
                        _ => None,
                    });
                match value {
                    Some((v, lit)) if !name.is_empty() => {
                        out.push_str(&v);
                        literal &= lit;
                    }
                    _ => {
                        out.push('$');
                        literal = false;
                        rest = after;
                        continue;
                    }
                }
                rest = tail;
            }
            out.push_str(rest);
            Tok {
                text: out,
                at: t.at,
                literal,
            }
        })
        .collect()
}

/// The proxy the internal-DP runner starts on node 0 for a
/// `disaggregated_prefill` config (upstream `tests/e2e/nightly/multi_node/
/// internal_dp/scripts/multi_node_config.py`, `ProxyLauncher`): every
/// non-headless prefill and decode node once, at its API port.
pub(super) fn internal_proxy(nodes: &[NodeIn]) -> InputProxy {
    let list = |role: Role| -> (Vec<String>, Vec<String>) {
        nodes
            .iter()
            .filter(|n| n.role == role && !n.headless)
            .map(|n| {
                (
                    format!("${{NODE_{}_IP}}", n.index),
                    n.api_port.v.to_string(),
                )
            })
            .unzip()
    };
    let (ph, pp) = list(Role::Prefill);
    let (dh, dp) = list(Role::Decode);
    // `DISAGGREGATED_PREFILL_PROXY_SCRIPT` in node 0's envs names another
    // script (`ProxyLauncher`).
    let script = nodes
        .first()
        .and_then(|n| {
            n.env
                .iter()
                .find(|(k, _)| k.v == "DISAGGREGATED_PREFILL_PROXY_SCRIPT")
        })
        .map_or(ProxyScript::LoadBalance.file_name().to_owned(), |(_, v)| {
            v.v.rsplit('/').next().unwrap_or_default().to_owned()
        });
    InputProxy {
        script,
        options: vec![
            ("--host".into(), vec!["${NODE_0_IP}".into()]),
            ("--port".into(), vec!["6000".into()]),
            ("--prefiller-hosts".into(), ph),
            ("--prefiller-ports".into(), pp),
            ("--decoder-hosts".into(), dh),
            ("--decoder-ports".into(), dp),
        ],
    }
}
