//! `vllm` stand-in: `vllm serve MODEL [flags]` and `vllm bench serve …`.
//! Contract (env, exit codes, expectation file) in the crate docs.

use crate::expect::{Expectation, id_text};
use crate::http::{self, Request, Response};
use crate::kv_params;
use crate::serve_flags::{self, ServeArgs};
use pd_dsl::placement::kv_span;
use pd_dsl::{ConnectorKind, Role};
use serde_json::{Value as Json, json};
use std::env;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::exit;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// `vllm --version` and `/version`: the vLLM version of the image
/// (`PD_STANDIN_IMAGE`, else the newest of the table), marked as a stand-in.
fn version() -> String {
    let image = image_tag();
    let v = crate::facts::vllm_version_of_image(&image).unwrap_or_else(|_| "unknown".into());
    format!("{v}+standin")
}

/// `PD_STANDIN_IMAGE`, else the newest image of the table.
fn image_tag() -> String {
    env_nonempty("PD_STANDIN_IMAGE").unwrap_or_else(|| {
        pd_dsl::tables::IMAGES
            .last()
            .map_or_else(String::new, |i| i.tag.to_owned())
    })
}

/// A failure: exit code and message.
struct Fail(i32, String);

fn fail<T>(code: i32, msg: impl Into<String>) -> Result<T, Fail> {
    Err(Fail(code, msg.into()))
}

/// The stand-in's `main`: `args` excludes the program name.
pub fn main(args: Vec<String>) {
    let result = match args.first().map(String::as_str) {
        Some("serve") => serve(&args[1..]),
        Some("bench") if args.get(1).map(String::as_str) == Some("serve") => bench(&args[2..]),
        Some("--version" | "-v") => {
            println!("{}", version());
            Ok(())
        }
        _ => fail(
            2,
            "usage: vllm serve MODEL [flags] | vllm bench serve [flags] (stand-in)",
        ),
    };
    if let Err(Fail(code, msg)) = result {
        eprintln!("vllm stand-in: {msg}");
        exit(code);
    }
}

fn env_nonempty(name: &str) -> Option<String> {
    env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn env_u64(name: &str, default: u64) -> u64 {
    env_nonempty(name)
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

fn is_wildcard(host: &str) -> bool {
    matches!(host, "0.0.0.0" | "::" | "[::]" | "")
}

/// Everything the checks derive from argv.
struct Plan {
    role: Role,
    connector: Option<ConnectorKind>,
    kv_port: Option<u16>,
    engine_id: Option<String>,
    tp: u32,
    pcp: u32,
    world: u32,
    dp: u32,
    ranks: Vec<u32>,
    external: bool,
    headless: bool,
    dp_address: Option<String>,
    rpc_port: Option<u16>,
    api_port: u16,
    host: Option<String>,
    served_name: String,
    max_model_len: Option<i64>,
    block_size: u32,
    /// `kv_connector_extra_config.prefill.tp_size`.
    prefill_tp: Option<u32>,
    /// The KV pool's store connector, when a MultiConnector chains one.
    pool: Option<Store>,
    /// `--shutdown-timeout` (vLLM >= 0.19; `Field(default=0, ge=0)`,
    /// vllm/config/vllm.py): seconds SIGTERM lets in-flight requests finish.
    shutdown_timeout: u64,
}

/// `AscendStoreConnector` as a MultiConnector's second child.
struct Store {
    role: Role,
    backend: String,
}

/// vLLM's MultiConnector (vllm/distributed/kv_transfer/kv_connector/v1/
/// multi_connector.py `_get_connector_classes_and_configs`): each child
/// is a `KVTransferConfig` of its own, with the outer `engine_id` where it
/// gives none. The one chain a layout runs: a P2P connector, then
/// vllm-ascend's `AscendStoreConnector` (its `backend` defaulting to
/// `mooncake`: ascend_store pool_scheduler.py). Returns the PD child, with
/// the engine id it runs with, and the store.
fn multi_connector(
    kv: &serde_json::Map<String, Json>,
) -> Result<(serde_json::Map<String, Json>, Store), Fail> {
    let Some(children) = kv
        .get("kv_connector_extra_config")
        .and_then(|x| x.get("connectors"))
        .and_then(Json::as_array)
    else {
        return fail(
            2,
            "MultiConnector needs kv_connector_extra_config.connectors (a list of connector configs)",
        );
    };
    let names: Vec<&str> = children
        .iter()
        .map(|c| c.get("kv_connector").and_then(Json::as_str).unwrap_or(""))
        .collect();
    let [Json::Object(pd), Json::Object(store)] = children.as_slice() else {
        return fail(
            2,
            format!(
                "MultiConnector chains {names:?}; a layout's engines run a P2P connector then AscendStoreConnector"
            ),
        );
    };
    if names[1] != "AscendStoreConnector" {
        return fail(
            2,
            format!(
                "MultiConnector's second connector is {:?}, expected AscendStoreConnector (a KV pool)",
                names[1]
            ),
        );
    }
    let role = match store.get("kv_role").and_then(Json::as_str) {
        Some("kv_producer") => Role::Prefill,
        Some("kv_consumer") => Role::Decode,
        other => {
            return fail(
                2,
                format!(
                    "AscendStoreConnector's kv_role must be kv_producer or kv_consumer, got {other:?}"
                ),
            );
        }
    };
    if kv.get("kv_role") != store.get("kv_role") {
        return fail(
            2,
            format!(
                "MultiConnector's kv_role {:?} differs from AscendStoreConnector's {:?}",
                kv.get("kv_role"),
                store.get("kv_role")
            ),
        );
    }
    let backend = store
        .get("kv_connector_extra_config")
        .and_then(|x| x.get("backend"))
        .and_then(Json::as_str)
        .unwrap_or("mooncake")
        .to_owned();
    let mut pd = pd.clone();
    if !pd.contains_key("engine_id")
        && let Some(id) = kv.get("engine_id")
    {
        pd.insert("engine_id".into(), id.clone());
    }
    Ok((pd, Store { role, backend }))
}

/// The KV pool as the store connector finds it at start: a backend the
/// image's vllm-ascend has (generated facts `kv_pool_backends`), its config
/// where the backend's env variable says (memcache: the file named by
/// `MMC_LOCAL_CONFIG_PATH`, memcache_backend.py; Mooncake's store:
/// `MOONCAKE_MASTER`), and the pool's service answering there.
fn check_pool(plan: &Plan, image: &str) -> Result<(), Fail> {
    let Some(store) = &plan.pool else {
        return Ok(());
    };
    let release = pd_dsl::tables::image(image).and_then(pd_dsl::upstream::release);
    let Some(fact) = release
        .into_iter()
        .flat_map(|r| r.kv_pool_backends.iter())
        .find(|b| b.name == store.backend)
    else {
        return fail(
            1,
            format!(
                "AscendStoreConnector backend {:?} is not one vllm-ascend of {image} has",
                store.backend
            ),
        );
    };
    let (env, key) = match store.backend.as_str() {
        "memcache" => (
            fact.config_env
                .as_deref()
                .unwrap_or("MMC_LOCAL_CONFIG_PATH"),
            Some(pd_dsl::check::pool::MEMCACHE_DERIVED[0]),
        ),
        _ => ("MOONCAKE_MASTER", None),
    };
    let Some(value) = env_nonempty(env) else {
        return fail(
            1,
            format!(
                "{env} is not set: the {} pool's client cannot find its config",
                store.backend
            ),
        );
    };
    let addr = match key {
        Some(key) => {
            let text = std::fs::read_to_string(&value)
                .or_else(|e| fail(1, format!("{env}={value}: {e}")))?;
            let Some(url) = text
                .lines()
                .filter_map(|l| l.split_once('='))
                .find(|(k, _)| k.trim() == key)
                .map(|(_, v)| v.trim().to_owned())
            else {
                return fail(1, format!("{env}={value} has no `{key}`"));
            };
            let Some(addr) = url.strip_prefix("tcp://") else {
                return fail(
                    1,
                    format!("{value}: `{key} = {url}` is not tcp://HOST:PORT"),
                );
            };
            addr.to_owned()
        }
        None => value,
    };
    let reachable = std::net::ToSocketAddrs::to_socket_addrs(addr.as_str())
        .ok()
        .and_then(|mut a| a.next())
        .is_some_and(|a| std::net::TcpStream::connect_timeout(&a, Duration::from_secs(2)).is_ok());
    if !reachable {
        return fail(
            1,
            format!(
                "the {} pool's service does not answer at {addr} ({env})",
                store.backend
            ),
        );
    }
    Ok(())
}

fn as_int(v: &Json) -> Option<i64> {
    match v {
        Json::Number(n) => n.as_i64(),
        Json::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn truthy(v: Option<&Json>) -> bool {
    match v {
        Some(Json::Bool(b)) => *b,
        Some(Json::String(s)) => matches!(s.to_ascii_lowercase().as_str(), "1" | "true"),
        Some(Json::Number(n)) => n.as_i64().is_some_and(|n| n != 0),
        _ => false,
    }
}

fn positive(args: &ServeArgs, name: &str, default: i64) -> Result<u32, Fail> {
    let v = args.int(name).or_else(|e| fail(2, e))?.unwrap_or(default);
    u32::try_from(v).ok().filter(|v| *v >= 1).map_or_else(
        || fail(2, format!("argument --{name}: must be >= 1, got {v}")),
        Ok,
    )
}

fn plan(args: &ServeArgs) -> Result<Plan, Fail> {
    let tp = positive(args, "tensor-parallel-size", 1)?;
    let pp = positive(args, "pipeline-parallel-size", 1)?;
    let pcp = positive(args, "prefill-context-parallel-size", 1)?;
    let dp = positive(args, "data-parallel-size", 1)?;
    let ext = args.int("data-parallel-rank").or_else(|e| fail(2, e))?;
    let headless = args.switch("headless");
    let start = args
        .int("data-parallel-start-rank")
        .or_else(|e| fail(2, e))?
        .unwrap_or(0);
    let ranks: Vec<i64> = match ext {
        Some(r) => vec![r],
        None => {
            let local = args
                .int("data-parallel-size-local")
                .or_else(|e| fail(2, e))?
                .unwrap_or(i64::from(dp));
            (start..start + local.max(0)).collect()
        }
    };
    if ranks.is_empty() {
        return fail(2, "--data-parallel-size-local must be >= 1");
    }
    let ranks: Vec<u32> = ranks
        .into_iter()
        .map(|r| {
            u32::try_from(r)
                .ok()
                .filter(|r| *r < dp)
                .map_or_else(|| fail(2, format!("DP rank {r} outside [0, {dp})")), Ok)
        })
        .collect::<Result<_, _>>()?;
    if ext.is_some() && headless {
        return fail(2, "--headless cannot be combined with --data-parallel-rank");
    }
    // `--data-parallel-rank` turns on external load balancing
    // (vllm/engine/arg_utils.py `create_engine_config`), which
    // `ParallelConfig._validate_parallel_config` refuses at DP 1
    // (vllm/config/parallel.py, every vLLM of the image table).
    if ext.is_some() && dp <= 1 {
        return fail(
            1,
            "ValueError: data_parallel_external_lb can only be set when data_parallel_size > 1",
        );
    }
    if ext.is_none() && !headless && start != 0 {
        return fail(2, "--data-parallel-start-rank needs --headless");
    }

    // kv_transfer_config.
    let kv = args.json("kv-transfer-config");
    let mut role = Role::Mixed;
    let mut connector = None;
    let mut prefill_tp = None;
    let mut kv_port = None;
    let mut engine_id = None;
    let mut pool = None;
    let unwrapped;
    if let Some(kv) = kv {
        let Json::Object(kv) = kv else {
            return fail(2, "--kv-transfer-config must be a JSON object");
        };
        let kv = if kv.get("kv_connector").and_then(Json::as_str) == Some("MultiConnector") {
            let (pd, store) = multi_connector(kv)?;
            pool = Some(store);
            unwrapped = pd;
            &unwrapped
        } else {
            kv
        };
        let name = kv
            .get("kv_connector")
            .and_then(Json::as_str)
            .unwrap_or_default();
        let Some(kind) = ConnectorKind::from_kv_connector(name) else {
            let names: Vec<&str> = ConnectorKind::ALL
                .iter()
                .map(|k| k.kv_connector())
                .collect();
            return fail(
                2,
                format!(
                    "kv_connector {name:?} is not a registered vllm-ascend P2P connector ({})",
                    names.join(", ")
                ),
            );
        };
        role = match kv.get("kv_role").and_then(Json::as_str) {
            Some("kv_producer") => Role::Prefill,
            Some("kv_consumer") => Role::Decode,
            other => {
                return fail(
                    2,
                    format!("kv_role must be kv_producer or kv_consumer, got {other:?}"),
                );
            }
        };
        kv_port = Some(match kv.get("kv_port") {
            None => 14579,
            Some(v) => as_int(v)
                .and_then(|p| u16::try_from(p).ok())
                .map_or_else(|| fail(2, format!("kv_port {v} is not a port number")), Ok)?,
        });
        engine_id = match kv.get("engine_id") {
            None | Some(Json::Null) => None,
            Some(v) => Some(id_text(v)),
        };
        let extra = kv
            .get("kv_connector_extra_config")
            .cloned()
            .unwrap_or(Json::Null);
        let mut shapes = Vec::new();
        for side in ["prefill", "decode"] {
            let mut shape = Vec::new();
            for key in ["dp_size", "tp_size"] {
                match extra.get(side).and_then(|s| s.get(key)) {
                    Some(Json::Number(n)) if n.as_u64().is_some() => {
                        shape.push(n.as_u64().unwrap_or(0));
                    }
                    Some(v) => {
                        return fail(
                            2,
                            format!(
                                "kv_connector_extra_config.{side}.{key} must be an integer, got {v}"
                            ),
                        );
                    }
                    None => {
                        return fail(
                            2,
                            format!("kv_connector_extra_config.{side}.{key} is missing"),
                        );
                    }
                }
            }
            shapes.push(shape);
        }
        let own = match role {
            Role::Prefill => ("prefill", &shapes[0]),
            _ => ("decode", &shapes[1]),
        };
        if own.1[0] != u64::from(dp) || own.1[1] != u64::from(tp) {
            return fail(
                2,
                format!(
                    "kv_connector_extra_config.{side} is dp_size={} tp_size={} but this {} runs \
                     --data-parallel-size {dp} --tensor-parallel-size {tp} (vllm-ascend check_kv_extra_config)",
                    own.1[0],
                    own.1[1],
                    if role == Role::Prefill {
                        "kv_producer"
                    } else {
                        "kv_consumer"
                    },
                    side = own.0
                ),
            );
        }
        if kind != ConnectorKind::MooncakeLayerwise && shapes[0][1] < shapes[1][1] {
            return fail(
                2,
                format!(
                    "prefill tp_size {} < decode tp_size {}: {name} requires prefill TP >= decode TP",
                    shapes[0][1], shapes[1][1]
                ),
            );
        }
        if let Some(pp) = extra.get("decode").and_then(|d| d.get("pp_size"))
            && as_int(pp) != Some(1)
        {
            return fail(2, "kv_connector_extra_config.decode.pp_size must be 1");
        }
        connector = Some(kind);
        prefill_tp = u32::try_from(shapes[0][1]).ok();
        if let Some(store) = &pool
            && store.role != role
        {
            return fail(
                2,
                format!(
                    "AscendStoreConnector's kv_role plays {} but the PD connector {}: every connector of a MultiConnector plays the engine's role",
                    store.role.as_str(),
                    role.as_str()
                ),
            );
        }
    }

    // additional_config role rules.
    let additional = args
        .json("additional-config")
        .cloned()
        .unwrap_or(Json::Null);
    if !(additional.is_object() || additional.is_null()) {
        return fail(2, "--additional-config must be a JSON object");
    }
    let nested = |key: &str| {
        truthy(additional.get(key))
            || truthy(additional.get("scheduler_config").and_then(|s| s.get(key)))
    };
    let balance = nested("enable_balance_scheduling")
        || env_nonempty("VLLM_ASCEND_BALANCE_SCHEDULING").is_some_and(|v| v.trim() == "1");
    if balance && role != Role::Mixed {
        return fail(
            2,
            format!(
                "balance scheduling is not allowed with kv_role {} (PD-mixed only)",
                if role == Role::Prefill {
                    "kv_producer"
                } else {
                    "kv_consumer"
                }
            ),
        );
    }
    if nested("recompute_scheduler_enable") && role == Role::Mixed {
        return fail(
            2,
            "recompute_scheduler_enable requires a kv_transfer_config with kv_role kv_consumer",
        );
    }
    if nested("recompute_scheduler_enable") && role == Role::Prefill {
        eprintln!("vllm stand-in: warning: recompute_scheduler_enable is ignored on kv_producer");
    }

    // speculative_config.
    if let Some(spec) = args.json("speculative-config") {
        if !spec.is_object() {
            return fail(2, "--speculative-config must be a JSON object");
        }
        if let Some(n) = spec.get("num_speculative_tokens") {
            match n.as_i64() {
                Some(n) if (1..16).contains(&n) => {}
                _ => {
                    return fail(
                        2,
                        format!(
                            "num_speculative_tokens {n} out of range: needs >= 1 and num_speculative_tokens + 1 <= 16 (FIA operator)"
                        ),
                    );
                }
            }
        }
    }
    for name in ["compilation-config", "model-loader-extra-config"] {
        if let Some(v) = args.json(name)
            && !(v.is_object() || v.is_number())
        {
            return fail(2, format!("--{name} must be a JSON object"));
        }
    }

    let api_port = args.port("port").or_else(|e| fail(2, e))?.unwrap_or(8000);
    let rpc_port = args
        .port("data-parallel-rpc-port")
        .or_else(|e| fail(2, e))?;
    let served_name = args
        .values
        .get("served-model-name")
        .and_then(|v| v.first().cloned())
        .or_else(|| args.model.clone())
        .unwrap_or_else(|| "model".into());
    let block_size = args
        .int("block-size")
        .or_else(|e| fail(2, e))?
        .and_then(|b| u32::try_from(b).ok())
        .unwrap_or(128)
        .max(1);
    Ok(Plan {
        role,
        connector,
        kv_port,
        engine_id,
        tp,
        pcp,
        world: tp * pp * pcp,
        dp,
        ranks,
        external: ext.is_some(),
        headless,
        dp_address: args.value("data-parallel-address").map(str::to_string),
        rpc_port,
        api_port,
        host: args.value("host").map(str::to_string),
        served_name,
        max_model_len: args.int("max-model-len").or_else(|e| fail(2, e))?,
        block_size,
        prefill_tp,
        pool,
        shutdown_timeout: match args.int("shutdown-timeout").or_else(|e| fail(2, e))? {
            None => 0,
            Some(t) => u64::try_from(t).or_else(|_| {
                fail(
                    2,
                    format!("--shutdown-timeout: found {t}, expected an integer >= 0 (VllmConfig.shutdown_timeout: ge=0)"),
                )
            })?,
        },
    })
}

fn devices(plan: &Plan) -> Result<Vec<u32>, Fail> {
    let npus = env_u64("PD_STANDIN_NPUS", 16);
    let need = plan.world as usize * plan.ranks.len();
    let Some(raw) = env::var("ASCEND_RT_VISIBLE_DEVICES").ok() else {
        if need as u64 > npus {
            return fail(
                6,
                format!("this process needs {need} NPUs but the node has {npus}"),
            );
        }
        return Ok((0..need as u32).collect());
    };
    let mut list = Vec::new();
    for part in raw.split(',') {
        let part = part.trim();
        let d: u32 = part.parse().map_or_else(
            |_| {
                fail(
                    6,
                    format!("ASCEND_RT_VISIBLE_DEVICES={raw:?}: {part:?} is not a device id"),
                )
            },
            Ok,
        )?;
        if u64::from(d) >= npus {
            return fail(
                6,
                format!(
                    "ASCEND_RT_VISIBLE_DEVICES={raw}: device {d} does not exist (node has {npus} NPUs)"
                ),
            );
        }
        if list.contains(&d) {
            return fail(
                6,
                format!("ASCEND_RT_VISIBLE_DEVICES={raw}: device {d} listed twice"),
            );
        }
        list.push(d);
    }
    if list.len() != need {
        return fail(
            6,
            format!(
                "ASCEND_RT_VISIBLE_DEVICES={raw} has {} devices but TP {} x {} local rank(s) needs {need}",
                list.len(),
                plan.world,
                plan.ranks.len()
            ),
        );
    }
    Ok(list)
}

fn join(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

/// Checks the process against the expectation file; returns the node index.
fn check_expectation(
    plan: &Plan,
    devs: &[u32],
    ip: &str,
    exp: &Expectation,
) -> Result<usize, Fail> {
    let mut expected_devs = Vec::new();
    let mut node = None;
    for (k, &rank) in plan.ranks.iter().enumerate() {
        let Some(e) = exp.find(ip, rank) else {
            let here: Vec<String> = exp
                .ranks
                .iter()
                .filter(|r| r.node_ip == ip)
                .map(|r| format!("{} rank {}", r.role, r.dp_rank))
                .collect();
            return fail(
                3,
                format!(
                    "node {ip} rank {rank}: the layout places no such rank on this node (it places: {})",
                    if here.is_empty() {
                        "nothing".into()
                    } else {
                        here.join(", ")
                    }
                ),
            );
        };
        node = Some(e.node);
        let at = format!("node {} ({ip}) rank {rank}", e.node);
        let mismatch = |what: &str, found: String, want: String| -> Result<(), Fail> {
            fail(
                3,
                format!("{at}: {what} is {found} but the layout says {want}"),
            )
        };
        if e.role != plan.role.as_str() {
            mismatch("role", plan.role.as_str().into(), e.role.clone())?;
        }
        if e.dp_size != plan.dp {
            mismatch(
                "--data-parallel-size",
                plan.dp.to_string(),
                e.dp_size.to_string(),
            )?;
        }
        if e.tp != plan.tp {
            mismatch(
                "--tensor-parallel-size",
                plan.tp.to_string(),
                e.tp.to_string(),
            )?;
        }
        // Without --data-parallel-address vLLM uses the local host, which is
        // right when this one process holds every rank (single-node native DP).
        let all_local = !plan.external && plan.ranks.len() == plan.dp as usize;
        if (plan.dp > 1 && !(all_local && plan.dp_address.is_none())) || plan.dp_address.is_some() {
            let found = plan.dp_address.clone().unwrap_or_else(|| "unset".into());
            if found != e.dp_master_ip {
                mismatch("--data-parallel-address", found, e.dp_master_ip.clone())?;
            }
        }
        if let Some(want) = e.rpc_port
            && (plan.dp > 1 || plan.rpc_port.is_some())
            && plan.rpc_port != Some(want)
        {
            mismatch(
                "--data-parallel-rpc-port",
                plan.rpc_port.map_or("unset".into(), |p| p.to_string()),
                want.to_string(),
            )?;
        }
        if e.kv_port != plan.kv_port {
            let show = |p: Option<u16>| p.map_or("none".into(), |p| p.to_string());
            mismatch("kv_port", show(plan.kv_port), show(e.kv_port))?;
        }
        if let Some(want) = e.engine_id.as_ref().filter(|v| !v.is_null()) {
            let want = id_text(want);
            if plan.engine_id.as_deref() != Some(want.as_str()) {
                mismatch(
                    "engine_id",
                    plan.engine_id.clone().unwrap_or_else(|| "unset".into()),
                    want,
                )?;
            }
        }
        if k == 0 {
            let found = (!plan.headless).then_some(plan.api_port);
            if found != e.api_port {
                let show = |p: Option<u16>| p.map_or("none (headless)".into(), |p| p.to_string());
                mismatch("API port", show(found), show(e.api_port))?;
            }
        }
        expected_devs.extend(e.devices.iter().copied());
    }
    if expected_devs != devs {
        let first = plan.ranks.first().copied().unwrap_or(0);
        return fail(
            3,
            format!(
                "node {} ({ip}) rank {first}: ASCEND_RT_VISIBLE_DEVICES is {} but the layout says {}",
                node.unwrap_or(0),
                join(devs),
                join(&expected_devs)
            ),
        );
    }
    Ok(node.unwrap_or(0))
}

fn bind(ip: &str, port: u16, what: &str) -> Result<TcpListener, Fail> {
    TcpListener::bind(http::host_port(ip, port))
        .or_else(|e| fail(5, format!("cannot bind {}:{port} ({what}): {e}", ip)))
}

/// Accepts and drops connections forever.
fn drain(listener: TcpListener) {
    thread::spawn(move || {
        for s in listener.incoming() {
            drop(s);
        }
    });
}

fn dp_master(plan: &Plan, ip: &str) -> Result<Vec<TcpListener>, Fail> {
    if plan.dp <= 1 {
        return Ok(Vec::new());
    }
    let addr = plan.dp_address.clone().unwrap_or_else(|| ip.to_string());
    let port = plan.rpc_port.unwrap_or(29550);
    let is_master = if plan.external {
        plan.ranks.first() == Some(&0)
    } else {
        !plan.headless
    };
    if is_master {
        let l = bind(&addr, port, "DP RPC port on the DP master")?;
        return Ok(vec![l]);
    }
    let timeout_s: f64 = env_nonempty("PD_STANDIN_MASTER_TIMEOUT")
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(20.0);
    let deadline = Instant::now() + Duration::from_secs_f64(timeout_s.max(0.0));
    let blocked = blocked(&addr, port);
    loop {
        if !blocked && http::probe(&addr, port, Duration::from_millis(500)).is_ok() {
            return Ok(Vec::new());
        }
        if Instant::now() >= deadline {
            return fail(
                4,
                format!("DP master {}:{port} unreachable after {timeout_s}s", addr),
            );
        }
        thread::sleep(Duration::from_millis(100));
    }
}

/// Fault injection: `PD_STANDIN_BLOCKED` lists `host:port` pairs this
/// process cannot reach, as if a firewall dropped them.
fn blocked(host: &str, port: u16) -> bool {
    let target = http::host_port(host, port);
    env_nonempty("PD_STANDIN_BLOCKED").is_some_and(|v| {
        v.split([',', ' '])
            .map(str::trim)
            .any(|b| !b.is_empty() && b == target)
    })
}

fn kv_binds(plan: &Plan, ip: &str) -> Result<Vec<TcpListener>, Fail> {
    let (Some(kind), Some(kv)) = (plan.connector, plan.kv_port) else {
        return Ok(Vec::new());
    };
    if kind.binding_role() != plan.role {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for &r in &plan.ranks {
        // The same span formula the layout's port rules use (facts §3.3).
        let (first, last) = kv_span(kind, u32::from(kv), r, plan.tp, plan.pcp);
        for p in first..=last {
            let port = u16::try_from(p).map_or_else(
                |_| fail(2, format!("kv handshake port {p} exceeds 65535")),
                Ok,
            )?;
            let l = bind(ip, port, &format!("kv handshake port of DP rank {r}"))?;
            if p == first {
                drain(l);
            } else {
                out.push(l);
            }
        }
    }
    Ok(out)
}

/// KV cache groups the stand-in models (one list of block ids each). The
/// stand-in does not know a model's real group count; prefill and decode use
/// the same, so the shape (a list per group, equal counts) is what is checked.
const KV_GROUPS: usize = 1;

struct State {
    plan: Plan,
    ip: String,
    /// The vllm-ascend image tag whose connector field set is spoken.
    image: String,
    /// `PD_STANDIN_LATENCY_MS` before each completion.
    latency: Duration,
    counter: Mutex<u64>,
    counter_path: Option<PathBuf>,
    seq: Mutex<u64>,
    /// Completions being served.
    in_flight: AtomicUsize,
    /// SIGTERM came with `--shutdown-timeout`: new requests get 503.
    draining: AtomicBool,
}

/// Counts one completion in flight for as long as it lives.
struct InFlight<'a>(&'a AtomicUsize);

impl<'a> InFlight<'a> {
    fn new(n: &'a AtomicUsize) -> InFlight<'a> {
        n.fetch_add(1, Ordering::SeqCst);
        InFlight(n)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// vLLM's shutdown with `--shutdown-timeout N > 0` (vllm/entrypoints/
/// launcher.py `handle_shutdown`, vllm/v1/engine/core.py `_handle_shutdown`):
/// on SIGTERM it stops taking requests and lets those in flight finish for
/// up to N seconds, then exits. Without it SIGTERM ends the process at once
/// (the default action, left in place).
fn drain_on_sigterm(state: &Arc<State>) -> Result<(), Fail> {
    let timeout = state.plan.shutdown_timeout;
    if timeout == 0 {
        return Ok(());
    }
    let term = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGTERM, Arc::clone(&term))
        .or_else(|e| fail(1, format!("cannot handle SIGTERM: {e}")))?;
    let s = Arc::clone(state);
    thread::spawn(move || {
        while !term.load(Ordering::SeqCst) {
            thread::sleep(Duration::from_millis(20));
        }
        s.draining.store(true, Ordering::SeqCst);
        let n = s.in_flight.load(Ordering::SeqCst);
        eprintln!(
            "vllm (pd-rehearse stand-in): Shutdown initiated (timeout={timeout}); draining {n} in-flight request(s)"
        );
        let deadline = Instant::now() + Duration::from_secs(timeout);
        while s.in_flight.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(20));
        }
        let left = s.in_flight.load(Ordering::SeqCst);
        if left > 0 {
            eprintln!("vllm (pd-rehearse stand-in): aborting {left} request(s) after {timeout}s");
        } else {
            eprintln!("vllm (pd-rehearse stand-in): Shutdown complete");
        }
        exit(0);
    });
    Ok(())
}

impl State {
    fn write_counter(&self, n: u64) {
        if let Some(path) = &self.counter_path {
            let tmp = path.with_extension("served.tmp");
            if std::fs::write(&tmp, format!("{n}\n")).is_ok() {
                let _ = std::fs::rename(&tmp, path);
            }
        }
    }

    fn served(&self) {
        let mut c = self.counter.lock().unwrap_or_else(|e| e.into_inner());
        *c += 1;
        self.write_counter(*c);
    }

    fn next_id(&self) -> u64 {
        let mut s = self.seq.lock().unwrap_or_else(|e| e.into_inner());
        *s += 1;
        *s
    }
}

fn prompt_len(body: &Json) -> usize {
    let text = match body.get("prompt") {
        Some(Json::String(s)) => s.len(),
        Some(v @ Json::Array(_)) => v.to_string().len(),
        _ => body.get("messages").map_or(0, |m| m.to_string().len()),
    };
    (text / 4).max(1)
}

fn completion(state: &State, req: &Request, chat: bool) -> Response {
    let body: Json = match serde_json::from_slice(&req.body) {
        Ok(v @ Json::Object(_)) => v,
        _ => return Response::error(400, "request body is not a JSON object"),
    };
    let plan = &state.plan;
    let prompt_tokens = prompt_len(&body);
    let mut max_tokens = body
        .get("max_tokens")
        .or_else(|| body.get("max_completion_tokens"))
        .and_then(Json::as_u64)
        .unwrap_or(16)
        .clamp(1, 64);
    if state.latency > Duration::ZERO {
        // Simulated compute, so that concurrent requests overlap at the proxy.
        thread::sleep(state.latency);
    }
    let mut extra = serde_json::Map::new();
    let asked = body.get("kv_transfer_params");
    match (plan.role, plan.connector) {
        (Role::Prefill, Some(kind)) => {
            max_tokens = 1;
            // Only a request that asks for remote decode gets parameters back
            // (request_finished returns None otherwise; see kv_params).
            let remote_decode = asked
                .and_then(|p| p.get("do_remote_decode"))
                .is_some_and(|v| truthy(Some(v)));
            if remote_decode {
                let rank = plan.ranks.first().copied().unwrap_or(0);
                let port = kv_span(
                    kind,
                    u32::from(plan.kv_port.unwrap_or(0)),
                    rank,
                    plan.tp,
                    plan.pcp,
                )
                .0;
                let request_id = req
                    .headers
                    .iter()
                    .find(|(k, _)| k == "x-request-id")
                    .map_or_else(|| format!("cmpl-{}", state.next_id()), |(_, v)| v.clone());
                let producer = kv_params::Producer {
                    kind,
                    image: &state.image,
                    engine_id: plan.engine_id.as_deref(),
                    host: &state.ip,
                    port,
                    tp: plan.tp,
                    block_size: plan.block_size,
                    kv_groups: KV_GROUPS,
                };
                extra.insert(
                    "kv_transfer_params".into(),
                    kv_params::produce(&producer, &request_id, prompt_tokens),
                );
            }
        }
        (Role::Decode, Some(kind)) => {
            let layerwise = kind == ConnectorKind::MooncakeLayerwise;
            let shape = if layerwise {
                // Push mode: P connects to D; any object will do (crate docs).
                asked.filter(|p| p.is_object()).map(|_| ()).ok_or_else(|| {
                    format!(
                        "got {}",
                        asked.map_or("no kv_transfer_params".into(), Json::to_string)
                    )
                })
            } else {
                let consumer = kv_params::Consumer {
                    kind,
                    prefill_tp: plan.prefill_tp,
                    block_size: plan.block_size,
                    kv_groups: KV_GROUPS,
                };
                kv_params::consume(&consumer, asked, prompt_tokens)
            };
            if let Err(why) = shape {
                return Response::error(
                    400,
                    &format!(
                        "kv_transfer_params refused by {}: {why}",
                        kind.kv_connector()
                    ),
                );
            }
            let host = asked
                .and_then(|p| p.get("remote_host"))
                .and_then(Json::as_str);
            let port = asked
                .and_then(|p| p.get("remote_port"))
                .and_then(as_int)
                .and_then(|p| u16::try_from(p).ok());
            let live = match (host, port) {
                _ if layerwise => Ok(()),
                (Some(h), Some(p)) => {
                    http::probe(h, p, Duration::from_secs(2)).map_err(|e| format!("{h}:{p}: {e}"))
                }
                _ => Err("no remote_host/remote_port".into()),
            };
            if let Err(why) = live {
                return Response::error(
                    400,
                    &format!("kv_transfer_params do not point at a live prefill rank ({why})"),
                );
            }
        }
        _ => {}
    }
    let id = state.next_id();
    let text: String = (0..max_tokens).map(|i| format!(" t{i}")).collect();
    let model = body
        .get("model")
        .and_then(Json::as_str)
        .unwrap_or(&plan.served_name)
        .to_string();
    let choice = if chat {
        json!({"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "length"})
    } else {
        json!({"index": 0, "text": text, "logprobs": null, "finish_reason": "length"})
    };
    let mut out = serde_json::Map::new();
    out.insert(
        "id".into(),
        json!(format!("{}-{id}", if chat { "chatcmpl" } else { "cmpl" })),
    );
    out.insert(
        "object".into(),
        json!(if chat {
            "chat.completion"
        } else {
            "text_completion"
        }),
    );
    out.insert("created".into(), json!(0));
    out.insert("model".into(), json!(model));
    out.insert("choices".into(), json!([choice]));
    out.insert(
        "usage".into(),
        json!({"prompt_tokens": prompt_tokens, "completion_tokens": max_tokens,
               "total_tokens": prompt_tokens as u64 + max_tokens}),
    );
    out.extend(extra);
    state.served();
    if body.get("stream").and_then(Json::as_bool) == Some(true) {
        let mut chunk = out.clone();
        chunk.insert(
            "object".into(),
            json!(if chat {
                "chat.completion.chunk"
            } else {
                "text_completion"
            }),
        );
        if chat {
            chunk.insert(
                "choices".into(),
                json!([{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": "length"}]),
            );
        }
        let sse = format!("data: {}\n\ndata: [DONE]\n\n", Json::Object(chunk));
        return Response {
            status: 200,
            content_type: "text/event-stream".into(),
            body: sse.into_bytes(),
        };
    }
    Response::json(200, &Json::Object(out))
}

fn handle(state: &State, req: &Request) -> Response {
    if state.draining.load(Ordering::SeqCst) {
        // Shutting down: nothing new is taken.
        return Response::error(503, "the server is shutting down");
    }
    let _in_flight = InFlight::new(&state.in_flight);
    match (req.method.as_str(), req.path.as_str()) {
        ("GET", "/health" | "/ping") => Response {
            status: 200,
            content_type: "text/plain".into(),
            body: Vec::new(),
        },
        ("GET", "/version") => Response::json(200, &json!({"version": version()})),
        ("GET", "/v1/models") => Response::json(
            200,
            &json!({"object": "list", "data": [{
                "id": state.plan.served_name, "object": "model", "owned_by": "vllm",
                "max_model_len": state.plan.max_model_len,
            }]}),
        ),
        ("POST", "/v1/completions") => completion(state, req, false),
        ("POST", "/v1/chat/completions") => completion(state, req, true),
        ("POST", "/reset_prefix_cache") => Response::json(200, &json!({})),
        (_, "/health" | "/v1/models" | "/v1/completions" | "/v1/chat/completions") => {
            Response::error(405, "method not allowed")
        }
        _ => Response::error(404, "not found"),
    }
}

fn start_fault_timer() {
    if let Some(ms) = env_nonempty("PD_STANDIN_FAIL_AFTER_MS").and_then(|v| v.trim().parse().ok()) {
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(ms));
            eprintln!("vllm stand-in: PD_STANDIN_FAIL_AFTER_MS={ms} elapsed, failing");
            exit(9);
        });
    }
}

/// The CANN runtime libraries must be loadable, as the real `vllm` loads
/// `libascendcl.so` (through `torch_npu` and the vllm-ascend platform
/// plugin) before it reads its arguments: each of `PD_STANDIN_CANN_LIBS`
/// (comma separated; unset: `libascendcl.so`) must be a file in a directory
/// of `LD_LIBRARY_PATH`, which only the image's `set_env.sh` puts there.
fn check_cann() -> Result<(), Fail> {
    let wanted = env::var(crate::image::CANN_LIBS_ENV).unwrap_or_else(|_| "libascendcl.so".into());
    let ld = env::var("LD_LIBRARY_PATH").unwrap_or_default();
    for lib in wanted.split(',').map(str::trim).filter(|l| !l.is_empty()) {
        let found = ld
            .split(':')
            .filter(|d| !d.is_empty())
            .any(|d| std::path::Path::new(d).join(lib).is_file());
        if !found {
            return fail(
                7,
                format!(
                    "ImportError: {lib}: cannot open shared object file: No such file or directory (LD_LIBRARY_PATH={ld:?} has no {lib}; the CANN environment exists only after sourcing the image's set_env.sh)"
                ),
            );
        }
    }
    Ok(())
}

/// The image's start-up refusals of PCP, as its platform raises them
/// (`_validate_parallel_config`, vllm_ascend/platform.py; the facts'
/// `pcp_refusals`), and vLLM's V2-runner refusal where vllm-ascend does
/// not take it out (`v2_model_runner`, `v2_runner_allows`).
fn pcp_refusals(plan: &Plan, image: &str) -> Result<(), Fail> {
    if plan.pcp <= 1 {
        return Ok(());
    }
    let rel = crate::facts::ascend_required(image).or_else(|e| fail(2, e))?;
    // `bool(int(value))` (vllm/envs.py `maybe_convert_bool`).
    let v2 = match env::var("VLLM_USE_V2_MODEL_RUNNER")
        .ok()
        .as_deref()
        .map(str::trim)
    {
        None => false,
        Some(v) => match v.parse::<i64>() {
            Ok(n) => n != 0,
            Err(_) => {
                return fail(
                    1,
                    format!(
                        "ValueError: invalid literal for int() with base 10: {v:?} (VLLM_USE_V2_MODEL_RUNNER)"
                    ),
                );
            }
        },
    };
    use pd_dsl::upstream::{PCP_FEATURE, PcpVerdict, pcp_verdict};
    match pcp_verdict(rel, &rel.vllm.version, plan.dp, plan.pcp, v2) {
        None => Ok(()),
        Some(PcpVerdict::WithDp(_)) => fail(
            1,
            format!(
                "ValueError: PCP (Prefill Context Parallelism) and DP (Data Parallelism) cannot be enabled simultaneously in the current version of vLLM Ascend. Got data_parallel_size={} and prefill_context_parallel_size={}.",
                plan.dp, plan.pcp
            ),
        ),
        Some(PcpVerdict::V1Runner(_)) => fail(
            1,
            format!(
                "ValueError: PCP (Prefill Context Parallelism) is not supported by vLLM Ascend. Please set --prefill-context-parallel-size to 1. Got prefill_context_parallel_size={}.",
                plan.pcp
            ),
        ),
        Some(PcpVerdict::V2Runner { .. }) => fail(
            1,
            format!("ValueError: Model Runner V2 does not yet support: {PCP_FEATURE}"),
        ),
    }
}

fn serve(argv: &[String]) -> Result<(), Fail> {
    start_fault_timer();
    check_cann()?;
    let image = image_tag();
    // The flags the image's vLLM accepts, from vLLM's own definitions.
    let flags = serve_flags::Flags::of_image(&image)
        .or_else(|e| fail(2, format!("PD_STANDIN_IMAGE={image}: {e}")))?;
    let args = serve_flags::parse(flags, argv).or_else(|e| fail(2, e))?;
    let plan = plan(&args)?;
    pcp_refusals(&plan, &image)?;
    check_pool(&plan, &image)?;
    let devs = devices(&plan)?;
    let ip = env_nonempty("PD_STANDIN_NODE_IP")
        .or_else(|| plan.host.clone().filter(|h| !is_wildcard(h)))
        .unwrap_or_else(|| "127.0.0.1".into());
    let mut node_name = env_nonempty("PD_STANDIN_NODE");
    if let Some(path) = env_nonempty("PD_STANDIN_EXPECT") {
        let text = std::fs::read_to_string(&path)
            .or_else(|e| fail(3, format!("cannot read PD_STANDIN_EXPECT={path}: {e}")))?;
        let exp = Expectation::parse(&text)
            .or_else(|e| fail(3, format!("PD_STANDIN_EXPECT={path}: {e}")))?;
        let node = check_expectation(&plan, &devs, &ip, &exp)?;
        node_name.get_or_insert_with(|| node.to_string());
    }
    let node_name = node_name.unwrap_or_else(|| ip.clone());
    let first_rank = plan.ranks.first().copied().unwrap_or(0);

    if let Some(kind) = plan.connector
        && kind != ConnectorKind::MooncakeLayerwise
        && kv_params::prefill_fields(kind, &image).is_none()
    {
        return fail(
            2,
            format!(
                "PD_STANDIN_IMAGE={image}: no `{}` known on that image (expected a tag of the image table)",
                kind.kv_connector()
            ),
        );
    }
    let master = dp_master(&plan, &ip)?;
    let kv = kv_binds(&plan, &ip)?;
    let api_ip = if env_nonempty("PD_STANDIN_NODE_IP").is_some() {
        ip.clone()
    } else {
        plan.host.clone().unwrap_or_else(|| "0.0.0.0".into())
    };
    let api = if plan.headless {
        None
    } else {
        // uvicorn's backlog, as vLLM's API server listens with it.
        Some(http::listen(&api_ip, plan.api_port).or_else(|e| {
            fail(
                5,
                format!("cannot bind {api_ip}:{} (API port): {e}", plan.api_port),
            )
        })?)
    };
    for l in master {
        drain(l);
    }
    let counter_path = env_nonempty("PD_STANDIN_STATE_DIR")
        .map(|d| PathBuf::from(d).join(format!("{node_name}-{first_rank}.served")));
    eprintln!(
        "vllm stand-in: {} node {node_name} ranks [{}] of DP{} TP{} devices [{}] on {ip}{}",
        plan.role.as_str(),
        join(&plan.ranks),
        plan.dp,
        plan.tp,
        join(&devs),
        api.as_ref().map_or(" (headless)".into(), |_| format!(
            ", API {api_ip}:{}",
            plan.api_port
        )),
    );
    let state = Arc::new(State {
        plan,
        ip,
        image,
        latency: Duration::from_millis(env_u64("PD_STANDIN_LATENCY_MS", 0)),
        counter: Mutex::new(0),
        counter_path,
        seq: Mutex::new(0),
        in_flight: AtomicUsize::new(0),
        draining: AtomicBool::new(false),
    });
    drain_on_sigterm(&state)?;
    state.write_counter(0);
    if let Some(dir) = env_nonempty("PD_STANDIN_STATE_DIR") {
        let path = PathBuf::from(dir).join(format!("{node_name}-{first_rank}.pid"));
        let _ = std::fs::write(path, format!("{}\n", std::process::id()));
    }
    let _kv = kv;
    match api {
        Some(listener) => {
            let s = Arc::clone(&state);
            http::serve(listener, Arc::new(move |req: &Request| handle(&s, req)));
        }
        None => loop {
            thread::sleep(Duration::from_secs(3600));
        },
    }
    Ok(())
}

/// `vllm bench serve`: one real request, then a fake result.
fn bench(argv: &[String]) -> Result<(), Fail> {
    let mut host = "127.0.0.1".to_string();
    let mut port: u16 = 8000;
    let mut endpoint = "/v1/completions".to_string();
    let mut model = None;
    let mut num_prompts = 1u64;
    let mut save: Option<String> = None;
    let mut metadata: Vec<(String, String)> = Vec::new();
    let (mut input_len, mut output_len) = (None, None);
    let (mut rate, mut concurrency) = (None, None);
    let mut i = 0;
    while i < argv.len() {
        // `--metadata KEY=VALUE ...` (nargs="*", vllm/benchmarks/serve.py).
        if argv[i] == "--metadata" {
            i += 1;
            while let Some(kv) = argv.get(i).filter(|a| !a.starts_with("--")) {
                let Some((k, v)) = kv.split_once('=') else {
                    return fail(
                        2,
                        format!("Invalid metadata format {kv:?}. Please use KEY=VALUE format."),
                    );
                };
                metadata.push((k.trim().to_owned(), v.trim().to_owned()));
                i += 1;
            }
            continue;
        }
        if argv[i] == "--save-result" {
            save.get_or_insert_with(|| ".".into());
            i += 1;
            continue;
        }
        let (flag, inline) = match argv[i].split_once('=') {
            Some((f, v)) => (f.replace('_', "-"), Some(v.to_string())),
            None => (argv[i].replace('_', "-"), None),
        };
        let val = inline.or_else(|| argv.get(i + 1).cloned());
        let consumed = match flag.as_str() {
            "--host" => val.map(|v| host = v),
            "--port" => val.and_then(|v| v.parse().ok()).map(|v| port = v),
            "--endpoint" => val.map(|v| endpoint = v),
            "--model" | "--served-model-name" => val.map(|v| model = Some(v)),
            "--num-prompts" => val.and_then(|v| v.parse().ok()).map(|v| num_prompts = v),
            "--result-dir" => val.map(|v| save = Some(v)),
            "--random-input-len" => val
                .and_then(|v| v.parse::<u64>().ok())
                .map(|v| input_len = Some(v)),
            "--random-output-len" => val
                .and_then(|v| v.parse::<u64>().ok())
                .map(|v| output_len = Some(v)),
            "--request-rate" => val.map(|v| rate = Some(v)),
            "--max-concurrency" => val
                .and_then(|v| v.parse::<u64>().ok())
                .map(|v| concurrency = Some(v)),
            "--base-url" => val.map(|v| {
                let rest = v.split("://").nth(1).unwrap_or(&v).trim_end_matches('/');
                if let Some((h, p)) = rest.rsplit_once(':') {
                    host = h.to_string();
                    port = p.parse().unwrap_or(port);
                }
            }),
            _ => None,
        };
        i += 1;
        if consumed.is_some() && !argv[i - 1].contains('=') {
            i += 1;
        }
    }
    let chat = endpoint.contains("chat");
    let mut body = json!({"max_tokens": 4, "stream": false});
    if let Some(m) = &model {
        body["model"] = json!(m);
    }
    if chat {
        body["messages"] = json!([{"role": "user", "content": "rehearsal"}]);
    } else {
        body["prompt"] = json!("rehearsal");
    }
    let started = Instant::now();
    let resp =
        http::post_json(&host, port, &endpoint, &body, Duration::from_secs(30)).or_else(|e| {
            fail(
                1,
                format!("bench request to {host}:{port}{endpoint} failed: {e}"),
            )
        })?;
    if resp.status != 200 {
        return fail(
            1,
            format!(
                "bench request to {host}:{port}{endpoint} returned {}: {}",
                resp.status,
                resp.text()
            ),
        );
    }
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    println!("============ Serving Benchmark Result ============");
    println!("{:<40}{:<10}", "Successful requests:", 1);
    println!(
        "{:<40}{:<10}",
        "Requested prompts (stand-in sent 1):", num_prompts
    );
    println!("{:<40}{:<10.2}", "Benchmark duration (s):", ms / 1000.0);
    println!("{:<40}{:<10.2}", "Mean TTFT (ms):", ms);
    println!("{:<40}{:<10.2}", "Mean TPOT (ms):", ms / 4.0);
    println!("==================================================");
    // `--save-result`: the result JSON vLLM writes (vllm/benchmarks/serve.py
    // `main`: the run's settings, `--metadata`, then the benchmark's
    // figures), for the one request the stand-in sent.
    if let Some(dir) = save.filter(|_| argv.iter().any(|a| a == "--save-result")) {
        let secs = ms / 1000.0;
        let (inp, out) = (input_len.unwrap_or(1), output_len.unwrap_or(4));
        let mut result = serde_json::Map::new();
        result.insert("date".into(), json!("20260101-000000"));
        result.insert("backend".into(), json!("vllm"));
        result.insert("model_id".into(), json!(model.clone().unwrap_or_default()));
        result.insert("num_prompts".into(), json!(num_prompts));
        for (k, v) in &metadata {
            result.insert(k.clone(), json!(v));
        }
        result.insert(
            "request_rate".into(),
            rate.as_deref()
                .and_then(|r| r.parse::<f64>().ok())
                .filter(|r| r.is_finite())
                .map_or(json!("inf"), |r| json!(r)),
        );
        result.insert("max_concurrency".into(), json!(concurrency));
        result.insert("duration".into(), json!(secs));
        result.insert("completed".into(), json!(1));
        result.insert("total_input_tokens".into(), json!(inp));
        result.insert("total_output_tokens".into(), json!(out));
        result.insert("request_throughput".into(), json!(1.0 / secs.max(1e-9)));
        result.insert(
            "output_throughput".into(),
            json!(out as f64 / secs.max(1e-9)),
        );
        result.insert(
            "total_token_throughput".into(),
            json!((inp + out) as f64 / secs.max(1e-9)),
        );
        result.insert("mean_ttft_ms".into(), json!(ms));
        result.insert("mean_tpot_ms".into(), json!(ms / 4.0));
        let path = PathBuf::from(&dir).join(format!(
            "vllm-{}qps-{}.json",
            rate.as_deref().unwrap_or("inf"),
            model
                .unwrap_or_default()
                .rsplit('/')
                .next()
                .unwrap_or_default()
        ));
        std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(&path, serde_json::Value::Object(result).to_string()))
            .or_else(|e| fail(1, format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}
