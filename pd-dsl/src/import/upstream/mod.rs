//! The upstream e2e multi-node config (vllm-ascend
//! `tests/e2e/{nightly,weekly}/multi_node/{external_dp,internal_dp}/config/
//! *.yaml`, read there by `external_dp_config.py` and
//! `multi_node_config.py`). YAML anchors, aliases and merge keys (`<<:`) are
//! expanded by serde-saphyr, which also gives every value its position.

mod baselines;
mod positions;
mod raw;
mod runner;

use crate::import::Loc;
use crate::import::build::{Deployment, NodeIn, P, p};
use crate::import::scripts::{Tok, node_from_serve, split_args, take_rank_flags};
use crate::rules::did_you_mean;
use crate::spec::Role;
use baselines::baselines;
use positions::locate_words;
use raw::{EnvMap, Keys, ROOT_KEYS, Root, TEST_KEYS, at, kv_pool, parse_error};
use runner::{internal_proxy, runner_expand, runner_proxy};

type Fail = (Loc, String);

/// Reads one e2e config.
pub(crate) fn read(file: usize, text: &str) -> Result<Deployment, Fail> {
    let keys: Keys = serde_saphyr::from_str(text).map_err(|e| parse_error(file, &e))?;
    let mut notes = Vec::new();
    for (k, at) in &keys.0 {
        // Upstream keeps anchors in extra root keys (`env_common`,
        // `env_prefill`, `_envs`, `_server_cmd`, `prefill_server_cmd`).
        let anchor_holder = k.starts_with("env")
            || k.starts_with('_') && !k.starts_with("__")
            || k.ends_with("_server_cmd");
        if ROOT_KEYS.contains(&k.as_str()) || TEST_KEYS.contains(&k.as_str()) || anchor_holder {
            continue;
        }
        // A near miss of a known key is a typo: refused, with the key.
        let hint = did_you_mean(k, ROOT_KEYS.iter().copied());
        if !hint.is_empty() {
            return Err((
                Loc { file, ..*at },
                format!(
                    "found unknown key `{k}`, expected one of `{}` (or an anchor holder: `env*`, `_*`, `*_server_cmd`){hint}",
                    ROOT_KEYS.join("`, `")
                ),
            ));
        }
        // The runner ignores what it does not read; so does the import,
        // saying so.
        notes.push(super::Note {
            at: Loc { file, ..*at },
            what: format!("root key `{k}` ignored"),
            why: format!(
                "neither the e2e runner nor pd-dsl reads it; known keys are `{}`",
                ROOT_KEYS.join("`, `")
            ),
        });
    }
    let root: Root = serde_saphyr::from_str(text).map_err(|e| parse_error(file, &e))?;
    let top = Loc {
        file,
        line: 1,
        column: 1,
    };
    let Some(model) = root.model else {
        return Err((
            top,
            "found no `model`, expected the hub id the deployment serves".into(),
        ));
    };
    let model = p(model.value.clone(), at(file, &model));
    let npus = root.npu_per_node.as_ref().map(|n| p(n.value, at(file, n)));
    let mut nodes: Vec<NodeIn> = Vec::new();
    let mut proxy_command = None;
    // `dp_load_balancing` (0.30 `tests/e2e/common/multi_node/dp_mode.py`)
    // names the runner; the structure must be the one it reads.
    if let Some(mode) = &root.dp_load_balancing {
        let (want, has) = match mode.value.as_str() {
            "external" => ("`config` + `templates`", !root.config.is_empty()),
            "internal" => ("`deployment`", !root.deployment.is_empty()),
            other => {
                return Err((
                    at(file, mode),
                    format!(
                        "found `dp_load_balancing: {other}`, expected `external` or `internal`: the e2e runner knows these two"
                    ),
                ));
            }
        };
        if !has {
            return Err((
                at(file, mode),
                format!(
                    "found `dp_load_balancing: {}` without {want}, expected them: that runner reads its nodes there",
                    mode.value
                ),
            ));
        }
    }
    if !root.config.is_empty() {
        let routing = root.routing.as_ref();
        // `node_index` of each node read, for the runner's proxy command.
        let mut indices: Vec<u64> = Vec::new();
        if let Some(r) = routing
            && r.value.kind.value != "disaggregated_prefill"
        {
            return Err((
                at(file, &r.value.kind),
                format!(
                    "found routing type `{}`, expected `disaggregated_prefill`: the only routing the e2e harness knows",
                    r.value.kind.value
                ),
            ));
        }
        for c in &root.config {
            let cfg = &c.value;
            let idx = cfg.node_index.value;
            for (name, v) in [
                ("pp_size", &cfg.pp_size),
                ("cp_size", &cfg.cp_size),
                ("sp_size", &cfg.sp_size),
            ] {
                if let Some(v) = v
                    && v.value != 1
                {
                    return Err((
                        at(file, v),
                        format!(
                            "found `{name}: {}`, expected 1: pd-dsl layouts run one pipeline, context and sequence parallel group",
                            v.value
                        ),
                    ));
                }
            }
            let role = match routing {
                None => Role::Mixed,
                Some(r) => {
                    let g = &r.value.groups;
                    if g.prefiller.iter().any(|x| x.value == idx) {
                        Role::Prefill
                    } else if g.decoder.iter().any(|x| x.value == idx) {
                        Role::Decode
                    } else {
                        return Err((
                            at(file, &cfg.node_index),
                            format!(
                                "found node {idx} in neither `routing.groups.prefiller` nor `decoder`, expected every node in one group: its role is unknown"
                            ),
                        ));
                    }
                }
            };
            let Some(t) = root
                .templates
                .iter()
                .find(|t| t.value.node_index.value == idx)
            else {
                return Err((
                    at(file, &cfg.node_index),
                    format!(
                        "found no `templates` entry with `node_index: {idx}`, expected one per `config` entry: it holds the node's env and serve command"
                    ),
                ));
            };
            let toks: Vec<Tok> = t
                .value
                .server_cmd_template
                .iter()
                .map(|x| Tok::from_text(&x.value.0, at(file, x)))
                .collect();
            let mut args = split_args(&toks)?;
            super::scripts::once_each(&mut args, &mut notes);
            let facts = take_rank_flags(&mut args)?;
            let node_at = at(file, c);
            let n = NodeIn {
                at: node_at,
                index: usize::try_from(idx).unwrap_or(usize::MAX),
                role,
                model: model.clone(),
                dp: p(cfg.dp_size.value, at(file, &cfg.dp_size)),
                dp_local: p(cfg.dp_size_local.value, at(file, &cfg.dp_size_local)),
                rank_start: p(cfg.dp_rank_start.value, at(file, &cfg.dp_rank_start)),
                tp: p(cfg.tp_size.value, at(file, &cfg.tp_size)),
                api_port: p(cfg.port_start.value, at(file, &cfg.port_start)),
                dp_rpc: cfg.dp_rpc_port.as_ref().map(|v| p(v.value, at(file, v))),
                master: p(cfg.dp_address.value.0.clone(), at(file, &cfg.dp_address)),
                args,
                rank_args: facts.written.clone(),
                env: env_of(file, t.value.envs.as_ref()),
                headless: false,
            };
            facts.agree_with(&n)?;
            nodes.push(n);
            indices.push(idx);
        }
        if routing.is_some() {
            proxy_command = Some(runner_proxy(&nodes, &indices));
        }
        for t in &root.templates {
            let idx = t.value.node_index.value;
            if !root.config.iter().any(|c| c.value.node_index.value == idx) {
                return Err((
                    at(file, &t.value.node_index),
                    format!(
                        "found a template for node {idx} but no `config` entry for it, expected one per template"
                    ),
                ));
            }
        }
    } else if !root.deployment.is_empty() {
        let count = root.deployment.len() as u64;
        let disagg = root
            .disaggregated_prefill
            .as_ref()
            .filter(|d| d.value.enabled.as_ref().is_none_or(|e| e.value));
        let role_of_entry = |i: u64| -> Result<Option<Role>, Fail> {
            let Some(d) = disagg else { return Ok(None) };
            for x in d
                .value
                .prefiller_host_index
                .iter()
                .chain(&d.value.decoder_host_index)
            {
                if x.value >= count {
                    return Err((
                        at(file, x),
                        format!(
                            "found host index {} in `disaggregated_prefill`, expected one below {count}: there are {count} `deployment` entries",
                            x.value
                        ),
                    ));
                }
            }
            let p = d.value.prefiller_host_index.iter().any(|x| x.value == i);
            let dd = d.value.decoder_host_index.iter().any(|x| x.value == i);
            match (p, dd) {
                (true, false) => Ok(Some(Role::Prefill)),
                (false, true) => Ok(Some(Role::Decode)),
                (true, true) => Err((
                    at(file, d),
                    format!(
                        "found entry {i} in both `prefiller_host_index` and `decoder_host_index`, expected one role per node"
                    ),
                )),
                (false, false) => Err((
                    at(file, d),
                    format!(
                        "found `deployment` entry {i} in neither `prefiller_host_index` nor `decoder_host_index`, expected every node in one: its role is unknown"
                    ),
                )),
            }
        };
        // The runner's `MASTER_IP`: node 0 for prefill (and without PD),
        // the first decoder for decode (`master_ip_for_node`).
        let decode_start = disagg
            .and_then(|d| d.value.decoder_host_index.first())
            .map_or(0, |x| x.value);
        let common = env_of(file, root.env_common.as_ref());
        let legacy_common = !common.is_empty() && !text.contains("*env_common");
        for (i, entry) in root.deployment.iter().enumerate() {
            let i = i as u64;
            let cmd = &entry.value.server_cmd;
            let cmd_at = at(file, cmd);
            let role = role_of_entry(i)?;
            let mut env = env_of(file, entry.value.envs.as_ref());
            if legacy_common {
                let own: Vec<String> = env.iter().map(|(k, _)| k.v.clone()).collect();
                let mut merged: Vec<(P<String>, P<String>)> = common
                    .iter()
                    .filter(|(k, _)| !own.contains(&k.v))
                    .cloned()
                    .collect();
                merged.append(&mut env);
                env = merged;
            }
            // The runner's server starts every `vllm serve` with it
            // (upstream `tests/e2e/conftest.py`, `RemoteOpenAIServer.
            // _start_server`), whatever the config says.
            if !env
                .iter()
                .any(|(k, _)| k.v == "VLLM_WORKER_MULTIPROC_METHOD")
            {
                env.push((
                    p("VLLM_WORKER_MULTIPROC_METHOD".to_owned(), cmd_at),
                    p("spawn".to_owned(), cmd_at),
                ));
                if i == 0 {
                    notes.push(super::Note {
                        at: cmd_at,
                        what: "env `VLLM_WORKER_MULTIPROC_METHOD=spawn` added".into(),
                        why: "the e2e runner's server sets it on every `vllm serve` it starts (tests/e2e/conftest.py `RemoteOpenAIServer._start_server`); the layout states it".into(),
                    });
                }
            }
            let master = if role == Some(Role::Decode) {
                decode_start
            } else {
                0
            };
            let toks = locate_words(file, text, &cmd.value, cmd_at)?;
            let toks = runner_expand(toks, &env, i, master);
            let mut n = node_from_serve(&toks, env, &mut notes)?;
            n.index = nodes.len();
            if let Some(r) = role {
                if n.role != r {
                    return Err((
                        n.at,
                        format!(
                            "found a {} node (its `kv_role`) that `disaggregated_prefill` makes {r}, expected them to agree",
                            n.role
                        ),
                    ));
                }
            } else if n.role != Role::Mixed
                && disagg.is_none()
                && root.disaggregated_prefill.is_some()
            {
                return Err((
                    n.at,
                    format!(
                        "found a {} node (its `kv_role`) with `disaggregated_prefill` disabled, expected it enabled: the runner starts no proxy",
                        n.role
                    ),
                ));
            }
            nodes.push(n);
        }
        if disagg.is_some() {
            let at = root
                .disaggregated_prefill
                .as_ref()
                .map_or(top, |d| at(file, d));
            proxy_command = Some(internal_proxy(&nodes));
            notes.push(super::Note {
                at,
                what: "internal DP: the input runs one `vllm serve` per node for its local DP ranks (`--data-parallel-size-local`, `--data-parallel-start-rank`, `--headless` workers, no `--data-parallel-rank`), one API server on `--port`; the proxy lists each API server once".into(),
                why: "pd-dsl runs PD engines with external DP: one `vllm serve` per rank through `launch_online_dp.py` (`--data-parallel-rank`, API ports from `--port` up), each rank in the proxy lists".into(),
            });
            notes.push(super::Note {
                at,
                what: "the e2e runner starts the proxy with `python` on the first free port from 6000 (`--port`)".into(),
                why: "pd-dsl starts it on its proxy port (1999 unless `proxy: { port: N }`)".into(),
            });
        }
        // Native DP: the workers name the master by a variable; the first
        // node's value names the engine.
        if let Some(first) = nodes.first().map(|n| n.master.v.clone()) {
            for n in &mut nodes {
                if n.role == Role::Mixed && n.master.v.starts_with('$') {
                    n.master.v = first.clone();
                }
            }
        }
    } else {
        return Err((
            top,
            "found neither `config` + `templates` (external DP) nor `deployment` (internal DP), expected one of them: they hold the nodes".into(),
        ));
    }
    if let Some(nn) = &root.num_nodes
        && nn.value != nodes.len() as u64
    {
        return Err((
            at(file, nn),
            format!(
                "found `num_nodes: {}` but {} nodes described, expected one entry per node",
                nn.value,
                nodes.len()
            ),
        ));
    }
    let (figures, bench) = match &root.benchmarks {
        Some(b) => baselines(&b.value, at(file, b), &mut notes),
        None => (Vec::new(), None),
    };
    let pool = match &root.kv_pool {
        Some(k) => Some(kv_pool(file, k)?),
        None => None,
    };
    Ok(Deployment {
        nodes,
        npus,
        proxy: None,
        proxy_command,
        notes,
        errors: Vec::new(),
        figures,
        bench,
        pool,
    })
}

fn env_of(file: usize, envs: Option<&EnvMap>) -> Vec<(P<String>, P<String>)> {
    envs.map(|m| {
        m.0.iter()
            .map(|(k, v)| {
                (
                    p(k.value.clone(), at(file, k)),
                    p(v.value.0.clone(), at(file, v)),
                )
            })
            .collect()
    })
    .unwrap_or_default()
}
