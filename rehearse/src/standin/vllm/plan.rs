//! What the checks derive from `vllm serve`'s argv: the role, connector
//! (a MultiConnector's children too), parallel sizes, ports and limits.

use super::{Fail, env_nonempty, fail};
use crate::expect::id_text;
use crate::serve_flags::ServeArgs;
use pd_dsl::{ConnectorKind, Role};
use serde_json::Value as Json;

/// Everything the checks derive from argv.
pub(super) struct Plan {
    pub(super) role: Role,
    pub(super) connector: Option<ConnectorKind>,
    pub(super) kv_port: Option<u16>,
    pub(super) engine_id: Option<String>,
    pub(super) tp: u32,
    pub(super) pcp: u32,
    /// `--decode-context-parallel-size` (default 1).
    pub(super) dcp: u32,
    pub(super) world: u32,
    pub(super) dp: u32,
    pub(super) ranks: Vec<u32>,
    pub(super) external: bool,
    pub(super) headless: bool,
    pub(super) dp_address: Option<String>,
    pub(super) rpc_port: Option<u16>,
    pub(super) api_port: u16,
    pub(super) host: Option<String>,
    pub(super) served_name: String,
    pub(super) max_model_len: Option<i64>,
    pub(super) block_size: u32,
    /// `kv_connector_extra_config.prefill.tp_size`.
    pub(super) prefill_tp: Option<u32>,
    /// The KV pool's store connector, when a MultiConnector chains one.
    pub(super) pool: Option<Store>,
    /// `--shutdown-timeout` (vLLM >= 0.19; `Field(default=0, ge=0)`,
    /// vllm/config/vllm.py): seconds SIGTERM lets in-flight requests finish.
    pub(super) shutdown_timeout: u64,
    /// `--speculative-config`'s `method` and `num_speculative_tokens`.
    pub(super) speculative: Option<(String, u64)>,
    /// `--compilation-config`'s `cudagraph_mode`, where it is one pd-dsl
    /// names, and `cudagraph_capture_sizes` as typed.
    pub(super) graph: Option<pd_dsl::spec::GraphMode>,
    pub(super) capture_sizes: Vec<u64>,
    /// The largest capture size or the size list is set some other way
    /// (`max_cudagraph_capture_size` in `--compilation-config`, its own
    /// options, `--performance-mode`): the defaults are not judged.
    pub(super) sizes_set_elsewhere: bool,
    /// `--max-num-batched-tokens`, `--max-num-seqs` as typed.
    pub(super) max_num_batched_tokens: Option<u64>,
    pub(super) max_num_seqs: Option<u64>,
    /// `--max-num-scheduled-tokens` is typed.
    pub(super) scheduled_tokens_typed: bool,
    /// `--additional-config` (`Null` when absent).
    pub(super) additional: Json,
    /// `--enable-expert-parallel`.
    pub(super) expert_parallel: bool,
    /// `--all2all-backend` as typed.
    pub(super) all2all_backend: Option<Json>,
    /// `--enable-prefix-caching` / `--no-enable-prefix-caching` as typed.
    pub(super) prefix_caching: Option<bool>,
    /// `architectures[0]` of the model directory's `config.json`, as vLLM
    /// reads the checkpoint; `None` where it has none.
    pub(super) architecture: Option<String>,
    /// The Gated-DeltaNet dimensions of that `config.json` (its
    /// `text_config` where it nests one), where it has them all.
    pub(super) gdn: Option<pd_dsl::dims::GdnDims>,
    /// `--block-size` as typed.
    pub(super) block_size_typed: Option<u64>,
    /// `--quantization` as typed.
    pub(super) quantization: Option<String>,
    /// `--disable-hybrid-kv-cache-manager`.
    pub(super) hybrid_manager_disabled: bool,
    /// The model argument (the weights directory a layout passes).
    pub(super) model: Option<String>,
    /// `--hf-overrides` as typed (a JSON object, or `None`).
    pub(super) hf_overrides: Option<Json>,
    /// A flag of `MambaAlign::UNJUDGED_FLAGS` is typed.
    pub(super) mamba_align_unjudged: bool,
}

/// `AscendStoreConnector` as a MultiConnector's second child.
pub(super) struct Store {
    role: Role,
    pub(super) backend: String,
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

pub(super) fn as_int(v: &Json) -> Option<i64> {
    match v {
        Json::Number(n) => n.as_i64(),
        Json::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

pub(super) fn truthy(v: Option<&Json>) -> bool {
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

pub(super) fn plan(args: &ServeArgs) -> Result<Plan, Fail> {
    let tp = positive(args, "tensor-parallel-size", 1)?;
    let pp = positive(args, "pipeline-parallel-size", 1)?;
    let pcp = positive(args, "prefill-context-parallel-size", 1)?;
    let dcp = positive(args, "decode-context-parallel-size", 1)?;
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
    let mut speculative = None;
    if let Some(spec) = args.json("speculative-config") {
        if !spec.is_object() {
            return fail(2, "--speculative-config must be a JSON object");
        }
        if let Some(method) = spec.get("method").and_then(Json::as_str) {
            let tokens = spec
                .get("num_speculative_tokens")
                .and_then(Json::as_u64)
                .unwrap_or(1);
            speculative = Some((method.to_owned(), tokens));
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
    // The graph mode and capture sizes, as vLLM's `CompilationConfig` names
    // them.
    let compilation = args.json("compilation-config");
    let graph = compilation
        .and_then(|c| c.get("cudagraph_mode"))
        .and_then(Json::as_str)
        .and_then(pd_dsl::spec::GraphMode::from_cudagraph_mode);
    let capture_sizes = match compilation.and_then(|c| c.get("cudagraph_capture_sizes")) {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::Array(a)) => a
            .iter()
            .map(|x| {
                x.as_u64().map_or_else(
                    || {
                        fail(
                            2,
                            format!("cudagraph_capture_sizes: found {x}, expected integers"),
                        )
                    },
                    Ok,
                )
            })
            .collect::<Result<Vec<u64>, Fail>>()?,
        Some(x) => {
            return fail(
                2,
                format!("cudagraph_capture_sizes: found {x}, expected a list of integers"),
            );
        }
    };
    let sizes_set_elsewhere = compilation
        .and_then(|c| c.get("max_cudagraph_capture_size"))
        .is_some_and(|m| !m.is_null())
        || [
            "max-cudagraph-capture-size",
            "cudagraph-capture-sizes",
            "performance-mode",
        ]
        .iter()
        .any(|n| args.values.contains_key(*n));

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
    let count = |name: &str| -> Result<Option<u64>, Fail> {
        match args.int(name).or_else(|e| fail(2, e))? {
            None => Ok(None),
            Some(n) => u64::try_from(n)
                .map(Some)
                .or_else(|_| fail(2, format!("--{name}: found {n}, expected an integer >= 1"))),
        }
    };
    let max_num_batched_tokens = count("max-num-batched-tokens")?;
    let max_num_seqs = count("max-num-seqs")?;
    let architecture = args.model.as_deref().and_then(architecture_of);
    let gdn = args.model.as_deref().and_then(gdn_of);
    let mamba_align_unjudged = pd_dsl::upstream::MambaAlign::UNJUDGED_FLAGS
        .iter()
        .filter_map(|f| f.strip_prefix("--"))
        .any(|name| match name.strip_prefix("no-") {
            Some(on) => args.switches.get(on) == Some(&false),
            None => args.values.contains_key(name) || args.switches.contains_key(name),
        });
    Ok(Plan {
        prefix_caching: args.switches.get("enable-prefix-caching").copied(),
        architecture,
        gdn,
        block_size_typed: count("block-size")?,
        quantization: args.value("quantization").map(str::to_string),
        hybrid_manager_disabled: args.switch("disable-hybrid-kv-cache-manager"),
        model: args.model.clone(),
        hf_overrides: args.json("hf-overrides").cloned(),
        mamba_align_unjudged,
        speculative,
        graph,
        capture_sizes,
        sizes_set_elsewhere,
        max_num_batched_tokens,
        max_num_seqs,
        scheduled_tokens_typed: args.values.contains_key("max-num-scheduled-tokens"),
        expert_parallel: args.switch("enable-expert-parallel"),
        all2all_backend: args
            .value("all2all-backend")
            .map(|b| Json::String(b.to_owned())),
        additional,
        role,
        connector,
        kv_port,
        engine_id,
        tp,
        pcp,
        dcp,
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

/// The Gated-DeltaNet dimensions of `<model>/config.json` (its
/// `text_config` where it nests one, as vLLM's `hf_text_config`), where the
/// file has them all.
fn gdn_of(model: &str) -> Option<pd_dsl::dims::GdnDims> {
    let text = std::fs::read_to_string(std::path::Path::new(model).join("config.json")).ok()?;
    let config: Json = serde_json::from_str(&text).ok()?;
    let text_config = config.get("text_config").cloned().unwrap_or(config);
    serde_json::from_value(text_config).ok()
}

/// `architectures[0]` of `<model>/config.json`, where the file is there and
/// names one.
fn architecture_of(model: &str) -> Option<String> {
    let text = std::fs::read_to_string(std::path::Path::new(model).join("config.json")).ok()?;
    let config: Json = serde_json::from_str(&text).ok()?;
    config
        .get("architectures")?
        .get(0)?
        .as_str()
        .map(str::to_owned)
}
