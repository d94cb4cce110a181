//! The e2e config's YAML as serde reads it: the root and its known keys,
//! node, template and deployment entries, scalars and env maps with their
//! positions, and `kv_pool:` as a pool.

use super::Fail;
use crate::import::Loc;
use crate::import::build::{PoolIn, p};
use crate::load::first_line;
use crate::spec::PoolBackend;
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned as Sp;
use std::collections::BTreeMap;
use std::fmt;

pub(super) const ROOT_KEYS: &[&str] = &[
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
pub(super) const TEST_KEYS: &[&str] = &[
    "test_content",
    "chat_prompts",
    "api_keyword_args",
    "acceptance_rate",
];

#[derive(Deserialize)]
pub(super) struct Root {
    pub(super) model: Option<Sp<String>>,
    pub(super) num_nodes: Option<Sp<u64>>,
    pub(super) npu_per_node: Option<Sp<u64>>,
    pub(super) dp_load_balancing: Option<Sp<String>>,
    pub(super) routing: Option<Sp<Routing>>,
    pub(super) disaggregated_prefill: Option<Sp<Disagg>>,
    /// The 0.18/0.19 runner's env for every node (upstream 0.18.0
    /// `tests/e2e/nightly/multi_node/scripts/multi_node_config.py`
    /// `DistEnvBuilder`: `{**env_common, **node envs}`).
    pub(super) env_common: Option<EnvMap>,
    #[serde(default)]
    pub(super) config: Vec<Sp<NodeCfg>>,
    #[serde(default)]
    pub(super) templates: Vec<Sp<Template>>,
    #[serde(default)]
    pub(super) deployment: Vec<Sp<DeployEntry>>,
    /// The runner's benchmark cases, read loosely (their keys vary by case
    /// type); only performance baselines are taken.
    #[serde(default)]
    pub(super) benchmarks: Option<Sp<serde_json::Value>>,
    /// The KV pool's service on node 0 (0.27.1rc1+:
    /// tests/e2e/common/kv_pool/config.py `parse_kv_pool_config`).
    #[serde(default)]
    pub(super) kv_pool: Option<Sp<KvPoolRaw>>,
}

/// `kv_pool:` as upstream's runner reads it (`type`, the backend's two
/// ports, `config`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct KvPoolRaw {
    #[serde(rename = "type")]
    pub(super) kind: Sp<String>,
    #[serde(default)]
    pub(super) meta_service_port: Option<Sp<u64>>,
    #[serde(default)]
    pub(super) config_store_port: Option<Sp<u64>>,
    #[serde(default)]
    pub(super) master_port: Option<Sp<u64>>,
    #[serde(default)]
    pub(super) metrics_port: Option<Sp<u64>>,
    #[serde(default)]
    pub(super) config: Option<Sp<serde_json::Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Routing {
    #[serde(rename = "type")]
    pub(super) kind: Sp<String>,
    pub(super) groups: Groups,
}

/// Internal-DP PD (upstream `tests/e2e/nightly/multi_node/internal_dp/
/// scripts/multi_node_config.py`, `DisaggregatedPrefillCfg`): the
/// `deployment` entries that prefill and decode, by index.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Disagg {
    #[serde(default)]
    pub(super) enabled: Option<Sp<bool>>,
    #[serde(default)]
    pub(super) prefiller_host_index: Vec<Sp<u64>>,
    #[serde(default)]
    pub(super) decoder_host_index: Vec<Sp<u64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Groups {
    #[serde(default)]
    pub(super) prefiller: Vec<Sp<u64>>,
    #[serde(default)]
    pub(super) decoder: Vec<Sp<u64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NodeCfg {
    pub(super) node_index: Sp<u64>,
    pub(super) port_start: Sp<u64>,
    #[serde(default)]
    pub(super) dp_rpc_port: Option<Sp<u64>>,
    pub(super) dp_size: Sp<u64>,
    pub(super) dp_size_local: Sp<u64>,
    pub(super) dp_rank_start: Sp<u64>,
    pub(super) tp_size: Sp<u64>,
    #[serde(default)]
    pub(super) pp_size: Option<Sp<u64>>,
    #[serde(default)]
    pub(super) cp_size: Option<Sp<u64>>,
    #[serde(default)]
    pub(super) sp_size: Option<Sp<u64>>,
    pub(super) dp_address: Sp<Scalar>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Template {
    pub(super) node_index: Sp<u64>,
    #[serde(default)]
    pub(super) envs: Option<EnvMap>,
    pub(super) server_cmd_template: Vec<Sp<Scalar>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DeployEntry {
    #[serde(default)]
    pub(super) envs: Option<EnvMap>,
    pub(super) server_cmd: Sp<String>,
}

/// Any scalar as text (YAML writes `TASK_QUEUE_ENABLE: 1`, `OMP_PROC_BIND: false`).
pub(super) struct Scalar(pub(super) String);

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
pub(super) struct EnvMap(pub(super) Vec<(Sp<String>, Sp<Scalar>)>);

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
pub(super) struct Keys(pub(super) Vec<(String, Loc)>);

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

pub(super) struct KeyText(pub(super) String);

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Scalar::deserialize(d).map(|s| KeyText(s.0))
    }
}

pub(super) fn loc(file: usize, l: &serde_saphyr::Location) -> Loc {
    Loc {
        file,
        line: l.line(),
        column: l.column(),
    }
}

/// Where a spanned value's text is: its definition (inside an anchor when
/// it came through an alias or a merge key).
pub(super) fn at<T>(file: usize, s: &Sp<T>) -> Loc {
    if s.defined.line() > 0 {
        loc(file, &s.defined)
    } else {
        loc(file, &s.referenced)
    }
}

pub(super) fn parse_error(file: usize, e: &serde_saphyr::Error) -> Fail {
    let l = e.location().map(|l| loc(file, &l)).unwrap_or(Loc {
        file,
        line: 1,
        column: 1,
    });
    (l, first_line(&e.to_string()))
}

/// `kv_pool:` as a pool: backend, ports by name, config.
pub(super) fn kv_pool(file: usize, k: &Sp<KvPoolRaw>) -> Result<PoolIn, Fail> {
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
