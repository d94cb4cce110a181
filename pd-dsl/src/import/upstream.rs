//! The upstream e2e multi-node config (vllm-ascend
//! `tests/e2e/{nightly,weekly}/multi_node/{external_dp,internal_dp}/config/
//! *.yaml`, read there by `external_dp_config.py` and
//! `multi_node_config.py`). YAML anchors, aliases and merge keys (`<<:`) are
//! expanded by serde-saphyr, which also gives every value its position.

use super::build::{BenchIn, Deployment, FigureIn, NodeIn, P, PoolIn, p};
use super::scripts::{Tok, node_from_serve, split_args, take_rank_flags};
use super::{InputProxy, Loc};
use crate::load::first_line;
use crate::rules::did_you_mean;
use crate::spec::{PoolBackend, ProxyScript, Role};
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned as Sp;
use std::collections::BTreeMap;
use std::fmt;

type Fail = (Loc, String);

const ROOT_KEYS: &[&str] = &[
    "test_name",
    "model",
    "num_nodes",
    "npu_per_node",
    "dp_load_balancing",
    "routing",
    "config",
    "templates",
    "deployment",
    "disaggregated_prefill",
    "benchmarks",
    "test_cases",
    "kv_pool",
    "cluster_hosts",
    "special_dependencies",
];

/// Root keys the e2e tests read after the deployment is up (requests,
/// acceptance checks; upstream `tests/e2e/cases/models/configs/*/*.yaml`):
/// they say nothing about what runs.
const TEST_KEYS: &[&str] = &[
    "test_content",
    "chat_prompts",
    "api_keyword_args",
    "acceptance_rate",
];

#[derive(Deserialize)]
struct Root {
    model: Option<Sp<String>>,
    num_nodes: Option<Sp<u64>>,
    npu_per_node: Option<Sp<u64>>,
    dp_load_balancing: Option<Sp<String>>,
    routing: Option<Sp<Routing>>,
    disaggregated_prefill: Option<Sp<Disagg>>,
    /// The 0.18/0.19 runner's env for every node (upstream 0.18.0
    /// `tests/e2e/nightly/multi_node/scripts/multi_node_config.py`
    /// `DistEnvBuilder`: `{**env_common, **node envs}`).
    env_common: Option<EnvMap>,
    #[serde(default)]
    config: Vec<Sp<NodeCfg>>,
    #[serde(default)]
    templates: Vec<Sp<Template>>,
    #[serde(default)]
    deployment: Vec<Sp<DeployEntry>>,
    /// The runner's benchmark cases, read loosely (their keys vary by case
    /// type); only performance baselines are taken.
    #[serde(default)]
    benchmarks: Option<Sp<serde_json::Value>>,
    /// The KV pool's service on node 0 (0.27.1rc1+:
    /// tests/e2e/common/kv_pool/config.py `parse_kv_pool_config`).
    #[serde(default)]
    kv_pool: Option<Sp<KvPoolRaw>>,
}

/// `kv_pool:` as upstream's runner reads it (`type`, the backend's two
/// ports, `config`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KvPoolRaw {
    #[serde(rename = "type")]
    kind: Sp<String>,
    #[serde(default)]
    meta_service_port: Option<Sp<u64>>,
    #[serde(default)]
    config_store_port: Option<Sp<u64>>,
    #[serde(default)]
    master_port: Option<Sp<u64>>,
    #[serde(default)]
    metrics_port: Option<Sp<u64>>,
    #[serde(default)]
    config: Option<Sp<serde_json::Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Routing {
    #[serde(rename = "type")]
    kind: Sp<String>,
    groups: Groups,
}

/// Internal-DP PD (upstream `tests/e2e/nightly/multi_node/internal_dp/
/// scripts/multi_node_config.py`, `DisaggregatedPrefillCfg`): the
/// `deployment` entries that prefill and decode, by index.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Disagg {
    #[serde(default)]
    enabled: Option<Sp<bool>>,
    #[serde(default)]
    prefiller_host_index: Vec<Sp<u64>>,
    #[serde(default)]
    decoder_host_index: Vec<Sp<u64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Groups {
    #[serde(default)]
    prefiller: Vec<Sp<u64>>,
    #[serde(default)]
    decoder: Vec<Sp<u64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeCfg {
    node_index: Sp<u64>,
    port_start: Sp<u64>,
    #[serde(default)]
    dp_rpc_port: Option<Sp<u64>>,
    dp_size: Sp<u64>,
    dp_size_local: Sp<u64>,
    dp_rank_start: Sp<u64>,
    tp_size: Sp<u64>,
    #[serde(default)]
    pp_size: Option<Sp<u64>>,
    #[serde(default)]
    cp_size: Option<Sp<u64>>,
    #[serde(default)]
    sp_size: Option<Sp<u64>>,
    dp_address: Sp<Scalar>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Template {
    node_index: Sp<u64>,
    #[serde(default)]
    envs: Option<EnvMap>,
    server_cmd_template: Vec<Sp<Scalar>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeployEntry {
    #[serde(default)]
    envs: Option<EnvMap>,
    server_cmd: Sp<String>,
}

/// Any scalar as text (YAML writes `TASK_QUEUE_ENABLE: 1`, `OMP_PROC_BIND: false`).
struct Scalar(String);

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string, number or boolean")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar(v.to_owned()))
            }
            // The runners turn values into text with Python's `str()`
            // (`DistEnvBuilder.build`: `{k: str(v)}`): `True`, `False`.
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar, E> {
                Ok(Scalar(if v { "True" } else { "False" }.to_owned()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// An env mapping in document order (merge keys expanded).
struct EnvMap(Vec<(Sp<String>, Sp<Scalar>)>);

impl<'de> Deserialize<'de> for EnvMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = EnvMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping of env names to values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<EnvMap, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = m.next_key::<Sp<String>>()? {
                    let v = m.next_value::<Sp<Scalar>>()?;
                    out.push((k, v));
                }
                Ok(EnvMap(out))
            }
            fn visit_unit<E: de::Error>(self) -> Result<EnvMap, E> {
                Ok(EnvMap(Vec::new()))
            }
        }
        d.deserialize_any(V)
    }
}

/// The root's keys with their positions, to refuse unknown ones.
struct Keys(Vec<(String, Loc)>);

impl<'de> Deserialize<'de> for Keys {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Keys;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping (an e2e multi-node config)")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Keys, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = m.next_key::<Sp<KeyText>>()? {
                    m.next_value::<de::IgnoredAny>()?;
                    out.push((k.value.0, loc(0, &k.referenced)));
                }
                Ok(Keys(out))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Keys, A::Error> {
                Err(de::Error::custom(
                    "found a list at the top level, expected a mapping (an e2e multi-node config)",
                ))
            }
        }
        d.deserialize_any(V)
    }
}

struct KeyText(String);

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Scalar::deserialize(d).map(|s| KeyText(s.0))
    }
}

fn loc(file: usize, l: &serde_saphyr::Location) -> Loc {
    Loc {
        file,
        line: l.line(),
        column: l.column(),
    }
}

/// Where a spanned value's text is: its definition (inside an anchor when
/// it came through an alias or a merge key).
fn at<T>(file: usize, s: &Sp<T>) -> Loc {
    if s.defined.line() > 0 {
        loc(file, &s.defined)
    } else {
        loc(file, &s.referenced)
    }
}

fn parse_error(file: usize, e: &serde_saphyr::Error) -> Fail {
    let l = e.location().map(|l| loc(file, &l)).unwrap_or(Loc {
        file,
        line: 1,
        column: 1,
    });
    (l, first_line(&e.to_string()))
}

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

/// `kv_pool:` as a pool: backend, ports by name, config.
fn kv_pool(file: usize, k: &Sp<KvPoolRaw>) -> Result<PoolIn, Fail> {
    let raw = &k.value;
    let kind = raw.kind.value.to_ascii_lowercase();
    let Some(backend) = PoolBackend::parse(&kind) else {
        let known: Vec<&str> = PoolBackend::ALL.iter().map(|b| b.as_str()).collect();
        return Err((
            at(file, &raw.kind),
            format!(
                "found `kv_pool.type` `{}`, expected one of `{}`: upstream's runner starts a service for those",
                raw.kind.value,
                known.join("`, `")
            ),
        ));
    };
    let mut ports = Vec::new();
    for (name, v) in [
        ("meta_service_port", &raw.meta_service_port),
        ("config_store_port", &raw.config_store_port),
        ("master_port", &raw.master_port),
        ("metrics_port", &raw.metrics_port),
    ] {
        if let Some(v) = v {
            ports.push((name.to_owned(), p(v.value, at(file, v))));
        }
    }
    let config = match &raw.config {
        None => BTreeMap::new(),
        Some(c) => match &c.value {
            serde_json::Value::Object(m) => m
                .iter()
                .map(|(k, v)| (k.clone(), p(v.clone(), at(file, c))))
                .collect(),
            other => {
                return Err((
                    at(file, c),
                    format!(
                        "found `kv_pool.config` = {other}, expected a mapping (upstream's runner refuses anything else)"
                    ),
                ));
            }
        },
    };
    Ok(PoolIn {
        at: at(file, k),
        backend: p(backend, at(file, &raw.kind)),
        ports,
        config,
    })
}

/// The frozen performance baselines of an e2e config's `benchmarks`: each
/// `case_type: performance` case with a number `baseline` is the deployment's
/// output throughput as upstream's CI measures it (tools/aisbench.py:
/// `Output Token Throughput` `total`, token/s over the whole deployment,
/// passing at `threshold x baseline`, threshold 0.97 when not given), run
/// with `batch_size` concurrent requests, `request_rate` requests/s when
/// given, `num_prompts` prompts of up to `max_out_len` output tokens from a
/// dataset whose name carries the input length (`GSM8K-in3500-bs2800`).
/// The case with the most prompts whose input length is known is the
/// layout's workload (`bench`), with a note that `vllm bench serve` runs
/// random prompts of that length instead of the dataset.
fn baselines(
    cases: &serde_json::Value,
    at: Loc,
    notes: &mut Vec<super::Note>,
) -> (Vec<FigureIn>, Option<(Loc, BenchIn)>) {
    use serde_json::Value as J;
    let mut figures = Vec::new();
    let mut bench = None;
    let Some(cases) = cases.as_object() else {
        return (figures, bench);
    };
    let num = |v: Option<&J>| -> Option<f64> {
        match v? {
            J::Number(n) => n.as_f64(),
            J::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    };
    let int = |v: Option<&J>| {
        num(v)
            .filter(|x| *x >= 0.0 && x.fract() == 0.0)
            .map(|x| x as u64)
    };
    for (name, c) in cases {
        if c.get("case_type").and_then(J::as_str) != Some("performance") {
            continue;
        }
        let Some(baseline) = num(c.get("baseline")) else {
            continue;
        };
        let dataset = c.get("dataset_path").and_then(J::as_str).unwrap_or("");
        let input_len = input_len_of(dataset);
        let prompts = int(c.get("num_prompts"));
        let out_len = int(c.get("max_out_len"));
        let concurrency = int(c.get("batch_size"));
        // `request_rate` 0 (aisbench's default, tools/aisbench.py) sends
        // without a rate limit, `batch_size` at a time: `vllm bench serve`'s
        // default `--request-rate inf` with `--max-concurrency`.
        let rate = num(c.get("request_rate")).filter(|r| *r > 0.0);
        let threshold = num(c.get("threshold")).unwrap_or(0.97);
        let mut ctx = vec![format!(
            "upstream CI baseline `{name}` (tools/aisbench.py `Output Token Throughput` total, token/s over the whole deployment; passes at {threshold} x baseline)"
        )];
        ctx.push(format!("dataset `{dataset}`"));
        if let Some(l) = input_len {
            ctx.push(format!("input {l} tokens"));
        }
        if let Some(p) = prefix_of(dataset) {
            ctx.push(format!("{p}% prefix-cache hits"));
        }
        if let Some(o) = out_len {
            ctx.push(format!("output up to {o} tokens"));
        }
        if let Some(p) = prompts {
            ctx.push(format!("{p} prompts"));
        }
        if let Some(c) = concurrency {
            ctx.push(format!("concurrency {c}"));
        }
        match rate {
            Some(r) => ctx.push(format!("{r} requests/s")),
            None => ctx.push("no rate limit".to_owned()),
        }
        // A baseline of 1 is the runner's default (tools/aisbench.py
        // `aisbench_config.get("baseline", 1)`): any run passes it, so it
        // freezes no figure; the case is still a workload.
        if baseline > 1.0 {
            figures.push((
                at,
                "output throughput".to_owned(),
                format!("{baseline} tokens/s"),
                ctx.join(", "),
            ));
        }
        // The workload is the case with the most prompts (a config's first
        // case is often a one- or two-prompt prefix-cache warm-up).
        let bigger = bench
            .as_ref()
            .is_none_or(|(_, b): &(Loc, BenchIn)| prompts.is_some_and(|p| p > b.num_prompts));
        if bigger
            && let (Some(input_len), Some(output_len), Some(num_prompts)) =
                (input_len, out_len, prompts)
        {
            notes.retain(|n| !n.what.starts_with("benchmark `"));
            notes.push(super::Note {
                at,
                what: format!(
                    "benchmark `{name}` runs aisbench on dataset `{dataset}` ({})",
                    c.get("request_conf").and_then(J::as_str).unwrap_or("its request config")
                ),
                why: format!(
                    "the layout's `bench` states its workload for `vllm bench serve`: random prompts of the dataset's {input_len} input tokens, {output_len} output tokens, {num_prompts} prompts{}",
                    prefix_of(dataset).filter(|p| *p > 0).map_or_else(String::new, |p| format!(" (random prompts do not repeat the dataset's {p}% shared prefixes)"))
                ),
            });
            bench = Some((
                at,
                BenchIn {
                    input_len,
                    output_len,
                    num_prompts,
                    request_rate: rate.map(|r| r.to_string()),
                    max_concurrency: concurrency,
                },
            ));
        }
    }
    (figures, bench)
}

/// The prefix-cache hit rate a dataset name carries, in percent:
/// `GSM8K-in128k-bs512-prefix90-ds` → 90.
fn prefix_of(dataset: &str) -> Option<u64> {
    dataset.split(['-', '_', '/']).find_map(|part| {
        let n = part.strip_prefix("prefix")?;
        n.parse::<u64>().ok().filter(|n| *n <= 100)
    })
}

/// The input length a dataset name carries: `GSM8K-in3500-bs2800` → 3500,
/// `in128k` → 131072 (`k` = 1024: the same sets are also named `in131072`),
/// `in1M` → 1048576.
fn input_len_of(dataset: &str) -> Option<u64> {
    dataset.split(['-', '_', '/']).find_map(|part| {
        let digits = part.strip_prefix("in")?;
        let (n, unit) = if let Some(n) = digits.strip_suffix(['k', 'K']) {
            (n, 1 << 10)
        } else if let Some(n) = digits.strip_suffix('M') {
            (n, 1 << 20)
        } else {
            (digits, 1)
        };
        if n.is_empty() || !n.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        n.parse::<u64>().ok().map(|n| n * unit)
    })
}

/// The proxy command the e2e runner builds for a `disaggregated_prefill`
/// config (upstream `tests/e2e/nightly/multi_node/external_dp/scripts/
/// external_dp_config.py`: `_parse_routing` fixes node 0 and port 1999,
/// `build_proxy_server_cmd` lists every rank of each group in `config`
/// order, host `cluster_ips[node_index]`, port `port_start` + local rank).
fn runner_proxy(nodes: &[NodeIn], indices: &[u64]) -> InputProxy {
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

/// Maps positions inside a scalar's value to positions in the file. YAML
/// folds and indents the value (line breaks become spaces, indentation
/// goes), so a position is found by counting the non-blank characters of
/// the value before it and walking as many non-blank characters of the
/// scalar as written ([`written`]: an escape is one character, quotes and a
/// block header are none).
struct InScalar {
    file: usize,
    /// The value's non-blank characters' positions (line and column in
    /// the value), in order.
    value: Vec<(u64, u64)>,
    /// The same characters' positions in the file.
    text: Vec<(u64, u64)>,
}

impl InScalar {
    /// The scalar with value `value` starting at `start` in `text`.
    fn new(text: &str, value: &str, start: Loc) -> InScalar {
        let mut marks = Vec::new();
        let (mut line, mut column) = (1u64, 1u64);
        for c in value.chars() {
            if !c.is_whitespace() {
                marks.push((line, column));
            }
            if c == '\n' {
                line += 1;
                column = 1;
            } else {
                column += 1;
            }
        }
        InScalar {
            file: start.file,
            value: marks,
            text: written(text, start)
                .into_iter()
                .filter(|(_, blank)| !blank)
                .map(|(pos, _)| pos)
                .collect(),
        }
    }

    /// Where position `at` of the value is in the file; `None` when the
    /// count runs past the file.
    fn at(&self, at: Loc) -> Option<Loc> {
        let before = self.value.partition_point(|p| *p < (at.line, at.column));
        self.text.get(before).map(|&(line, column)| Loc {
            file: self.file,
            line,
            column,
        })
    }
}

/// The characters of the value of the scalar starting at `start`, as
/// written: each with its line and column and whether the value's character
/// is blank. The style is the scalar's first character (YAML 1.2 §7.3, §8.1):
/// a double-quoted scalar's escape (`\"`, `\t`, `\x41`, `\u00e9`) is one
/// character at its backslash and `\` before a line break is none; a
/// single-quoted one's `''` is one `'`; a block scalar's header line (`|`,
/// `>-`, `|2 # note`) is none; a plain scalar is as written.
fn written(text: &str, start: Loc) -> Vec<((u64, u64), bool)> {
    let mut chars = Vec::new();
    let (mut line, mut column) = (1u64, 1u64);
    for c in text.chars() {
        if (line, column) >= (start.line, start.column) {
            chars.push(((line, column), c));
        }
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    let mut out = Vec::new();
    let mut it = chars.into_iter().peekable();
    match it.peek().map_or(' ', |(_, c)| *c) {
        '"' => {
            it.next();
            while let Some((pos, c)) = it.next() {
                match c {
                    '"' => break,
                    '\\' => {
                        let Some((_, e)) = it.next() else { break };
                        let hex = match e {
                            'x' => 2,
                            'u' => 4,
                            'U' => 8,
                            _ => 0,
                        };
                        let escaped = if hex > 0 {
                            let digits: String =
                                (0..hex).filter_map(|_| it.next()).map(|(_, d)| d).collect();
                            u32::from_str_radix(&digits, 16)
                                .ok()
                                .and_then(char::from_u32)
                        } else {
                            match e {
                                '\n' | '\r' => None,
                                't' | '\t' | ' ' | 'n' | 'r' | 'v' | 'f' | 'L' | 'P' | 'N'
                                | '_' => Some(' '),
                                other => Some(other),
                            }
                        };
                        if let Some(v) = escaped {
                            out.push((pos, v.is_whitespace()));
                        }
                    }
                    c => out.push((pos, c.is_whitespace())),
                }
            }
        }
        '\'' => {
            it.next();
            while let Some((pos, c)) = it.next() {
                if c == '\'' {
                    if it.peek().is_some_and(|(_, n)| *n == '\'') {
                        it.next();
                    } else {
                        break;
                    }
                }
                out.push((pos, c.is_whitespace()));
            }
        }
        '|' | '>' => {
            out.extend(
                it.skip_while(|(_, c)| *c != '\n')
                    .map(|(pos, c)| (pos, c.is_whitespace())),
            );
        }
        _ => out.extend(it.map(|(pos, c)| (pos, c.is_whitespace()))),
    }
    out
}

/// Splits a `server_cmd` string into words and gives each word its own
/// line and column in the file, through [`InScalar`] (YAML folds the
/// scalar, so the value's positions are not the file's): a finding on a
/// `--flag value` pair points at the value, as in a script.
fn locate_words(file: usize, text: &str, cmd: &str, start: Loc) -> Result<Vec<Tok>, Fail> {
    let map = InScalar::new(text, cmd, start);
    let cmds =
        super::shell::commands(file, cmd).map_err(|(l, m)| (map.at(l).unwrap_or(start), m))?;
    // The runner splits the whole string (`shlex.split`): every line is
    // one command's words, not only the first.
    let words: Vec<&super::shell::Word> = cmds.iter().flat_map(|c| c.words.iter()).collect();
    if words.is_empty() {
        return Err((
            start,
            "found an empty `server_cmd`, expected `vllm serve MODEL ...`".into(),
        ));
    }
    Ok(words
        .into_iter()
        .map(|w| {
            let mut t = Tok::from_word(w);
            t.at = map.at(w.at).unwrap_or(start);
            t
        })
        .collect())
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
fn runner_expand(
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
fn internal_proxy(nodes: &[NodeIn]) -> InputProxy {
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

#[cfg(test)]
mod dataset_tests {
    use super::{input_len_of, prefix_of};

    #[test]
    fn dataset_names_carry_input_length_and_prefix_rate() {
        assert_eq!(input_len_of("vllm-ascend/GSM8K-in3500-bs2800"), Some(3500));
        assert_eq!(
            input_len_of("vllm-ascend/GSM8K_prefix0_in16384_bs1200_deepseek"),
            Some(16384)
        );
        assert_eq!(
            input_len_of("vllm-ascend/GSM8K-in128k-bs512-prefix90-ds"),
            Some(131072)
        );
        assert_eq!(
            input_len_of("vllm-ascend/GSM8K-in1M-bs4-prefix99-ds"),
            Some(1 << 20)
        );
        assert_eq!(input_len_of("vllm-ascend/textvqa-perf-1080p"), None);
        assert_eq!(input_len_of("vllm-ascend/gsm8k"), None);
        assert_eq!(
            prefix_of("vllm-ascend/GSM8K_prefix90_in131072_bs100_glm"),
            Some(90)
        );
        assert_eq!(prefix_of("vllm-ascend/GSM8K-in3500-bs2800"), None);
    }
}
