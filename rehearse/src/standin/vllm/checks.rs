//! The start-up checks the real `vllm` would fail: the KV pool's service,
//! the CANN libraries, the image's PCP refusals, and the process against
//! the expectation file (devices, node, ports).

use super::plan::Plan;
use super::{Fail, env_nonempty, env_u64, fail};
use crate::expect::{Expectation, id_text};
use std::env;
use std::time::Duration;

/// The KV pool as the store connector finds it at start: a backend the
/// image's vllm-ascend has (generated facts `kv_pool_backends`), its config
/// where the backend's env variable says (memcache: the file named by
/// `MMC_LOCAL_CONFIG_PATH`, memcache_backend.py; Mooncake's store:
/// `MOONCAKE_MASTER`), and the pool's service answering there.
pub(super) fn check_pool(plan: &Plan, image: &str) -> Result<(), Fail> {
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

pub(super) fn devices(plan: &Plan) -> Result<Vec<u32>, Fail> {
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

pub(super) fn join(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

/// Checks the process against the expectation file; returns the node index.
pub(super) fn check_expectation(
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

/// The CANN runtime libraries must be loadable, as the real `vllm` loads
/// `libascendcl.so` (through `torch_npu` and the vllm-ascend platform
/// plugin) before it reads its arguments: each of `PD_STANDIN_CANN_LIBS`
/// (comma separated; unset: `libascendcl.so`) must be a file in a directory
/// of `LD_LIBRARY_PATH`, which only the image's `set_env.sh` puts there.
pub(super) fn check_cann() -> Result<(), Fail> {
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

/// The image's start-up refusals of context parallelism: vLLM's DCP sizes
/// (`dcp_refusal`) and PCP as its platform raises them
/// (`_validate_parallel_config`, vllm_ascend/platform.py; the facts'
/// `pcp_refusals`), and vLLM's V2-runner refusal where vllm-ascend does
/// not take it out (`v2_model_runner`, `v2_runner_allows`).
pub(super) fn pcp_refusals(plan: &Plan, image: &str) -> Result<(), Fail> {
    if plan.pcp <= 1 && plan.dcp <= 1 {
        return Ok(());
    }
    let rel = crate::facts::ascend_required(image).or_else(|e| fail(2, e))?;
    // vLLM's `ParallelConfig._validate_parallel_config` (the facts'
    // `context_parallel`), in vLLM's words.
    let (tp, pcp, dcp) = (u64::from(plan.tp), u64::from(plan.pcp), u64::from(plan.dcp));
    match pd_dsl::upstream::dcp_refusal(&rel.vllm.version, tp, pcp, dcp) {
        None => {}
        Some(pd_dsl::upstream::DcpRefusal {
            valid_with_pcp: Some(valid),
            ..
        }) => {
            return fail(
                1,
                format!(
                    "ValueError: When PCP is enabled, DCP must be disabled, span the PCP axis, or span the full TP x PCP axis. Got TP={tp}, PCP={pcp}, DCP={dcp}; valid DCP sizes are {valid:?}."
                ),
            );
        }
        Some(_) => {
            return fail(
                1,
                format!("ValueError: tp_size={tp} must be divisible by dcp_size={dcp}."),
            );
        }
    }
    if plan.pcp <= 1 {
        return Ok(());
    }
    let v2 = v2_runner_env()?;
    use pd_dsl::upstream::{PCP_FEATURE, PcpVerdict, pcp_verdict};
    match pcp_verdict(rel, &rel.vllm.version, plan.dp, plan.pcp, dcp, v2) {
        None => Ok(()),
        Some(PcpVerdict::VllmWithDp { .. }) => fail(
            1,
            "ValueError: PCP does not support data parallelism yet.".to_owned(),
        ),
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
        Some(PcpVerdict::V2Runner { runner, .. }) => fail(
            1,
            format!("ValueError: {}", runner.refusal_text([PCP_FEATURE])),
        ),
    }
}

/// `VLLM_USE_V2_MODEL_RUNNER` as vLLM reads it, `bool(int(value))`
/// (vllm/envs.py `maybe_convert_bool`): unset is false, a value that is no
/// integer fails as Python's `int()` does.
fn v2_runner_env() -> Result<bool, Fail> {
    match env::var("VLLM_USE_V2_MODEL_RUNNER")
        .ok()
        .as_deref()
        .map(str::trim)
    {
        None => Ok(false),
        Some(v) => match v.parse::<i64>() {
            Ok(n) => Ok(n != 0),
            Err(_) => fail(
                1,
                format!(
                    "ValueError: invalid literal for int() with base 10: {v:?} (VLLM_USE_V2_MODEL_RUNNER)"
                ),
            ),
        },
    }
}

/// vLLM's V2 model runner's refusal of a speculative method (the facts'
/// `v2_speculative_methods`, the verdict rule `v2_runner_unsupported`
/// reads), in vLLM's words (`v2_model_runner.refusal` and the feature the
/// runner appends for the method).
pub(super) fn v2_speculative_refusal(plan: &Plan, image: &str) -> Result<(), Fail> {
    let Some((method, _)) = &plan.speculative else {
        return Ok(());
    };
    if !v2_runner_env()? {
        return Ok(());
    }
    let (_, v) = releases(image)?;
    let (Some(runner), Some(spec)) = (&v.v2_model_runner, &v.v2_speculative_methods) else {
        return Ok(());
    };
    match spec.features.get(method) {
        Some(feature) => fail(
            1,
            format!("ValueError: {}", runner.refusal_text([feature.as_str()])),
        ),
        None => Ok(()),
    }
}

/// vLLM's refusal of a batch budget the drafting reserve uses up
/// (`VllmConfig._set_max_num_scheduled_tokens`; `drafting_refusal`, the
/// verdict the rule `speculative_drafting_slots` reads). vLLM's defaults
/// for an unset `--max-num-batched-tokens`/`--max-num-seqs` depend on the
/// NPU's memory, which the stand-in does not know: it takes the stricter of
/// the two (the smaller batch, the more sequences), never looser than vLLM.
pub(super) fn drafting_refusal(plan: &Plan, image: &str) -> Result<(), Fail> {
    let Some((method, tokens)) = &plan.speculative else {
        return Ok(());
    };
    if plan.scheduled_tokens_typed {
        return Ok(());
    }
    let rel = crate::facts::ascend_required(image).or_else(|e| fail(2, e))?;
    // vLLM's default pairs per hardware class (`capacity::default_batching`,
    // the one the rule reads): the smallest batch and the most sequences.
    let defaults = pd_dsl::tables::HARDWARE
        .iter()
        .map(|hw| pd_dsl::capacity::default_batching(hw));
    let mbt = plan
        .max_num_batched_tokens
        .or_else(|| defaults.clone().map(|(mbt, _)| mbt).min())
        .unwrap_or(0);
    let seqs = plan
        .max_num_seqs
        .or_else(|| defaults.map(|(_, seqs)| seqs).max())
        .unwrap_or(u64::MAX);
    if let Some(r) =
        pd_dsl::upstream::drafting_refusal(&rel.vllm.version, method, *tokens, mbt, seqs)
    {
        return fail(
            1,
            format!(
                "ValueError: max_num_batched_tokens={mbt} leaves no slot to schedule after the {} drafting slots of speculative method {method} with num_speculative_tokens={tokens}{} ({})",
                r.reserve,
                if r.per_seq {
                    format!(" and max_num_seqs={seqs}")
                } else {
                    String::new()
                },
                r.source
            ),
        );
    }
    Ok(())
}

/// The capture sizes the engine lists: the typed ones, else the image's
/// defaults (`Release::default_capture_sizes`) for the typed
/// `max_num_seqs` and `max_num_batched_tokens` or vLLM's smaller defaults
/// (256, 2048; the larger, 1024 and 8192, give the same verdicts: with
/// speculation either caps the sizes at 512, without at 256 or more, which
/// holds a multiple of every TP). Empty where the sizes are set another way
/// or the image has no facts for them.
fn graph_sizes(
    plan: &Plan,
    rel: &pd_dsl::upstream::Release,
    v: &pd_dsl::upstream::VllmRelease,
) -> Vec<u64> {
    let tokens = plan.speculative.as_ref().map_or(0, |(_, t)| *t);
    if !plan.capture_sizes.is_empty() {
        // vLLM keeps the typed sizes at most a typed batch.
        return rel
            .settled_capture_sizes(
                v,
                &plan.capture_sizes,
                0,
                plan.max_num_batched_tokens.unwrap_or(u64::MAX),
                tokens,
            )
            .unwrap_or_else(|| plan.capture_sizes.clone());
    }
    if plan.sizes_set_elsewhere {
        return Vec::new();
    }
    rel.settled_capture_sizes(
        v,
        &[],
        plan.max_num_seqs.unwrap_or(256),
        plan.max_num_batched_tokens.unwrap_or(2048),
        tokens,
    )
    .unwrap_or_default()
}

/// vllm-ascend's asserts on an engine `enable_sp()` turns on, up to
/// v0.26.0rc1 (`Release::sp_asserts`, the rule
/// `sequence_parallel_needs_tp_ep`): TP above 1, and expert parallelism
/// (every model the images serve here is MoE), in its words.
pub(super) fn sp_assert_refusal(plan: &Plan, image: &str) -> Result<(), Fail> {
    let (rel, v) = releases(image)?;
    let Some(a) = rel.sp_asserts.as_ref() else {
        return Ok(());
    };
    if rel.sequence_parallel(v, &Engine::of(plan)) != Some(true) {
        return Ok(());
    }
    match (&a.tp_above_1, &a.expert_parallel) {
        (Some(src), _) if plan.tp <= 1 => fail(
            1,
            format!("AssertionError: Flash Comm v1 is only supported when tp_size > 1. ({src})"),
        ),
        (_, Some(src)) if !plan.expert_parallel => fail(
            1,
            format!(
                "AssertionError: Flash Comm v1 requires enable_expert_parallel=True for MoE models. ({src})"
            ),
        ),
        _ => Ok(()),
    }
}

/// vLLM's assert against the V2 runner in Mamba 'align' mode (vLLM 0.22.1
/// to 0.24.0, `VllmConfig::mamba_align`, the rule `mamba_align_v2_runner`):
/// a hybrid model (the checkpoint's architecture among vLLM's `IsHybrid`
/// classes) whose class lacks Mamba prefix caching, with
/// prefix caching on and env `VLLM_USE_V2_MODEL_RUNNER` true, in its words.
/// EngineCore asserts it after the KV cache is sized, on the devices.
pub(super) fn mamba_align_refusal(plan: &Plan, image: &str) -> Result<(), Fail> {
    let (_, v) = releases(image)?;
    let (Some(a), Some(arch)) = (&v.mamba_align, plan.architecture.as_deref()) else {
        return Ok(());
    };
    let v2 = super::env_nonempty("VLLM_USE_V2_MODEL_RUNNER")
        .is_some_and(|x| pd_dsl::upstream::maybe_convert_bool(&x) == Some(true));
    // A KV store (the layout's pool, vllm-ascend's AscendStoreConnector
    // under the MultiConnector) forces 'align' mode (`KvStoreAlign`).
    let forced = plan.pool.is_some()
        && crate::facts::ascend_required(image)
            .ok()
            .and_then(|rel| rel.kv_store_align.as_ref())
            .is_some_and(|k| {
                k.forces(
                    plan.speculative.as_ref().map(|(m, _)| m.as_str()),
                    plan.hybrid_manager_disabled,
                )
            });
    if let Some(src) = a.v2_runner_refusal(arch, plan.prefix_caching, forced, v2) {
        return fail(
            1,
            format!(
                "AssertionError: Model Runner V2 has not yet supported mamba_cache_mode='align'. ({src})"
            ),
        );
    }
    // The block vllm-ascend raised to carry a request's linear-attention
    // state, against the batch budget (`MambaAlign::block_refusal`, the
    // rule `mamba_align_block_within_batch`). vLLM's default budget depends
    // on the NPU's memory, which the stand-in does not know: it takes the
    // smallest, never looser than vLLM.
    let (Some(d), Some(sizing)) = (
        plan.gdn.as_ref(),
        crate::facts::ascend_required(image)
            .ok()
            .and_then(|rel| rel.hybrid_attn_block.as_ref()),
    ) else {
        return Ok(());
    };
    if plan.mamba_align_unjudged {
        return Ok(());
    }
    let num_spec = plan.speculative.as_ref().map_or(0, |(_, t)| *t);
    let Some(b) =
        pd_dsl::dims::gdn_attn_block(d, u64::from(plan.tp), num_spec, sizing.kernel_block_size)
    else {
        return Ok(());
    };
    let block = plan.block_size_typed.map_or(b.block, |t| t.max(b.block));
    let mbt = plan.max_num_batched_tokens.unwrap_or_else(|| {
        pd_dsl::tables::HARDWARE
            .iter()
            .map(|hw| pd_dsl::capacity::default_batching(hw).0)
            .min()
            .unwrap_or(0)
    });
    match a.block_refusal(arch, plan.prefix_caching, forced, block, mbt) {
        Some(src) => fail(
            1,
            format!(
                "AssertionError: In Mamba cache align mode, block_size ({block}) must be <= max_num_batched_tokens ({mbt}). ({src})"
            ),
        ),
        None => Ok(()),
    }
}

/// vllm-ascend's refusal of ModelSlim quantization on weights without its
/// description file (`ModelSlimConfig.maybe_update_config`, the image's
/// generated `modelslim_description`), in its words: the preflight's
/// `model_config` check catches it first on a node.
pub(super) fn modelslim_refusal(plan: &Plan, image: &str) -> Result<(), Fail> {
    let (Some(q), Some(model)) = (plan.quantization.as_deref(), plan.model.as_deref()) else {
        return Ok(());
    };
    let Some(d) = crate::facts::ascend_required(image)
        .ok()
        .and_then(|rel| rel.modelslim_description.as_ref())
        .filter(|d| d.method == q)
    else {
        return Ok(());
    };
    // The directory and its config.json are there (`model_refusal` ran).
    if std::path::Path::new(model).join(&d.file).is_file() {
        return Ok(());
    }
    fail(
        1,
        format!(
            "ValueError: ERROR: ModelSlim Quantization Config Not Found: you have enabled '--quantization {q}' (ModelSlim quantization), but the model '{model}' does not contain the required quantization config file ('{}'). ({})",
            d.file, d.source
        ),
    )
}

/// vLLM reads the model's `config.json` before anything else of the
/// engine's config (vllm/transformers_utils/config.py `get_config`: no
/// `config.json` or `params.json` under the model's path is "Invalid
/// repository ID or local directory specified"; a file that is not JSON
/// fails in transformers' parser). The stand-in has no Hugging Face hub, and
/// the generated scripts always pass a local directory (preflight's
/// `model_dir`), so a model that is not one is refused the same way.
pub(super) fn model_refusal(plan: &Plan) -> Result<(), Fail> {
    let Some(model) = plan.model.as_deref() else {
        return fail(
            2,
            "vllm serve: error: the model (the positional `model_tag`) is missing",
        );
    };
    let dir = std::path::Path::new(model);
    let config = dir.join("config.json");
    if !config.is_file() && !dir.join("params.json").is_file() {
        return fail(
            1,
            format!(
                "ValueError: Invalid repository ID or local directory specified: '{model}'. Please verify the following requirements: 1. Provide a valid Hugging Face repository ID. 2. Specify a local directory that contains a recognized configuration file. - For Hugging Face models: ensure the presence of a 'config.json'. (vllm/transformers_utils/config.py get_config; this stand-in has no Hugging Face hub)"
            ),
        );
    }
    if config.is_file() {
        let text = std::fs::read_to_string(&config)
            .or_else(|e| fail(1, format!("OSError: {}: {e}", config.display())))?;
        if !matches!(
            serde_json::from_str::<serde_json::Value>(&text),
            Ok(serde_json::Value::Object(_))
        ) {
            return fail(
                1,
                format!(
                    "OSError: It looks like the config file at '{}' is not a valid JSON file.",
                    config.display()
                ),
            );
        }
    }
    Ok(())
}

/// What vLLM and vllm-ascend refuse at start of the checkpoint's
/// `config.json` for this process's settings: a typed `max_model_len` above
/// the length vLLM derives from the file (unless
/// `VLLM_ALLOW_LONG_MAX_MODEL_LEN` is true), a speculative method whose
/// aux-hidden-states gate the text model type does not meet, hierarchy MC2 on
/// more experts than vllm-ascend allows. The conditions are the compiler's
/// (`pd_dsl::preflight::role_checks`, from argv here), the reading and the
/// judging are the generated preflight's own Python
/// ([`pd_dsl::checkpoint_py`]), run on the file as given, after
/// `--hf-overrides` (a nested object merges into the sub-config it names, as
/// vLLM's `_apply_dict_overrides`; anything else replaces the key). A model
/// with only `params.json` (Mistral's format) is not judged here.
pub(super) fn checkpoint_refusal(plan: &Plan, image: &str) -> Result<(), Fail> {
    let Some(model) = plan.model.as_deref() else {
        return Ok(());
    };
    let path = std::path::Path::new(model).join("config.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(());
    };
    let Ok(mut config) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Ok(());
    };
    if let Some(serde_json::Value::Object(overrides)) = &plan.hf_overrides {
        merge_overrides(&mut config, overrides);
    }
    let tag = format!("v{}", image.strip_prefix('v').unwrap_or(image));
    let Some(img) = pd_dsl::tables::image(&tag) else {
        return fail(
            2,
            format!("PD_STANDIN_IMAGE={image}: not in the image table"),
        );
    };
    let allowed = env::var("VLLM_ALLOW_LONG_MAX_MODEL_LEN")
        .is_ok_and(|v| pd_dsl::capacity::long_max_model_len_allowed(&v));
    let max_model_len = plan
        .max_model_len
        .and_then(|n| u64::try_from(n).ok())
        .filter(|_| !allowed);
    let role = pd_dsl::preflight::role_checks(
        img,
        plan.role.as_str(),
        max_model_len,
        plan.speculative.as_ref().map(|(m, _)| m.as_str()),
        |k| plan.additional.get(k),
    );
    let Some(checks) = pd_dsl::preflight::engine_checks(img, role) else {
        return fail(2, format!("image {tag}: its vLLM has no facts"));
    };
    let program = format!(
        "{}\n{}\ncfg, checks, where = json.load(sys.stdin)\nprint(json.dumps(judge_config(cfg, checks, where)[0]))\n",
        pd_dsl::checkpoint_py::READING,
        pd_dsl::checkpoint_py::JUDGE
    );
    let input = serde_json::json!([config, checks, model]).to_string();
    let out = run_python(&program, &input).or_else(|e| {
        fail(
            2,
            format!("the stand-in judges config.json with python3: {e}"),
        )
    })?;
    let problems: Vec<String> = serde_json::from_str(&out).or_else(|e| {
        fail(
            2,
            format!("the stand-in's config.json judge printed {out:?}: {e}"),
        )
    })?;
    if problems.is_empty() {
        return Ok(());
    }
    fail(
        1,
        format!("ValueError: {}: {}", path.display(), problems.join("; ")),
    )
}

/// `overrides` applied to `config` as vLLM applies `--hf-overrides`.
fn merge_overrides(
    config: &mut serde_json::Value,
    overrides: &serde_json::Map<String, serde_json::Value>,
) {
    let serde_json::Value::Object(target) = config else {
        return;
    };
    for (key, value) in overrides {
        match (target.get_mut(key), value) {
            (Some(sub @ serde_json::Value::Object(_)), serde_json::Value::Object(nested)) => {
                merge_overrides(sub, nested);
            }
            _ => {
                target.insert(key.clone(), value.clone());
            }
        }
    }
}

/// `python3 -c program` with `input` on stdin; its stdout.
fn run_python(program: &str, input: &str) -> Result<String, String> {
    use std::io::Write;
    let mut child = std::process::Command::new("python3")
        .args(["-c", program])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(input.as_bytes())
            .map_err(|e| format!("python3's stdin: {e}"))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("python3: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "python3 exited with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    String::from_utf8(out.stdout).map_err(|e| format!("python3 printed non-UTF-8: {e}"))
}

/// vLLM's assert on the largest capture size kept when typed sizes are all
/// above a typed `max_num_batched_tokens` and a cudagraph mode is on, which
/// vllm-ascend's second sizing pass trips (`Release::settled_capture_sizes`,
/// the rule `capture_sizes_within_batched_tokens`), in vLLM's words.
pub(super) fn batch_refusal(plan: &Plan, image: &str) -> Result<(), Fail> {
    if plan.capture_sizes.is_empty()
        || plan.max_num_batched_tokens.is_none()
        || matches!(plan.graph, None | Some(pd_dsl::spec::GraphMode::Eager))
    {
        return Ok(());
    }
    let (rel, v) = releases(image)?;
    match v.default_capture_grid.as_ref() {
        Some(grid) if graph_sizes(plan, rel, v).is_empty() => fail(
            1,
            format!(
                "AssertionError: Maximum cudagraph size should be greater than or equal to 1 when using cuda graph. ({})",
                grid.positive_largest
            ),
        ),
        _ => Ok(()),
    }
}

/// vLLM's refusal of capture sizes all below the decode step with a
/// full decode graph (`VllmRelease::decode_step_refusal`, the verdict rule
/// `capture_sizes_cover_decode_step` reads), in vLLM's words
/// (`adjust_cudagraph_sizes_for_spec_decode`, vllm/config/compilation.py).
pub(super) fn decode_step_refusal(plan: &Plan, image: &str) -> Result<(), Fail> {
    let (Some((_, tokens)), Some(graph)) = (&plan.speculative, plan.graph) else {
        return Ok(());
    };
    let (rel, v) = releases(image)?;
    let sizes = graph_sizes(plan, rel, v);
    if sizes.is_empty() {
        return Ok(());
    }
    let sp = rel.sequence_parallel(v, &Engine::of(plan));
    let multiple = rel.decode_graph_multiple(*tokens, plan.tp, &sizes, sp);
    match v.decode_step_refusal(
        graph,
        *tokens,
        &sizes,
        plan.max_num_batched_tokens,
        v2_runner_env()?,
        multiple,
    ) {
        Some(r) => fail(
            1,
            format!(
                "ValueError: No valid cudagraph sizes after rounding to multiple of {} (num_speculative_tokens + 1 or tp if sequence parallelism is enabled) please adjust num_speculative_tokens ({tokens}) or max_cudagraph_capture_size ({}) or cudagraph_capture_sizes ({:?}) ({})",
                multiple.max(tokens.saturating_add(1)),
                sizes.iter().max().copied().unwrap_or(0),
                sizes,
                r.source
            ),
        ),
        None => Ok(()),
    }
}

/// The image's vllm-ascend facts and those of the vLLM it ships; exit 2
/// naming the image when either is missing.
fn releases(
    image: &str,
) -> Result<
    (
        &'static pd_dsl::upstream::Release,
        &'static pd_dsl::upstream::VllmRelease,
    ),
    Fail,
> {
    let rel = crate::facts::ascend_required(image).or_else(|e| fail(2, e))?;
    let v = pd_dsl::upstream::vllm(&rel.vllm.version).or_else(|e| fail(2, e))?;
    Ok((rel, v))
}

/// One engine's argv and environment as the sequence-parallel decision
/// reads them ([`pd_dsl::upstream::EngineSettings`]).
struct Engine<'a> {
    plan: &'a Plan,
    env: std::collections::BTreeMap<String, String>,
}

impl<'a> Engine<'a> {
    fn of(plan: &'a Plan) -> Engine<'a> {
        Engine {
            plan,
            env: env::vars().collect(),
        }
    }
}

impl pd_dsl::upstream::EngineSettings for Engine<'_> {
    fn config(&self, key: &str) -> Option<&serde_json::Value> {
        self.plan.additional.get(key)
    }
    fn env(&self, name: &str) -> pd_dsl::upstream::EnvRead<'_> {
        match self.env.get(name) {
            Some(v) => pd_dsl::upstream::EnvRead::Value(v),
            None => pd_dsl::upstream::EnvRead::Unset,
        }
    }
    fn all2all_backend(&self) -> Option<&serde_json::Value> {
        self.plan.all2all_backend.as_ref()
    }
    fn expert_parallel(&self) -> bool {
        self.plan.expert_parallel
    }
    fn dp_tp(&self) -> Option<(u32, u32)> {
        Some((self.plan.dp, self.plan.tp))
    }
}

/// vllm-ascend's refusal of typed capture sizes none of which is a
/// multiple of TP where shared-expert DP or sequence parallelism needs one
/// (`Release::tp_aligned_refusal`, the verdict rule `capture_sizes_tp_aligned`
/// reads), in its words (vllm_ascend/platform.py).
/// The stand-in does not know the model, so `enable_dsa_cp` counts through
/// sequence parallelism only, which every release listing it also lists.
pub(super) fn tp_aligned_refusal(plan: &Plan, image: &str) -> Result<(), Fail> {
    let (rel, v) = releases(image)?;
    let sizes = graph_sizes(plan, rel, v);
    match rel.tp_aligned_refusal(v, &Engine::of(plan), plan.graph, &sizes, None) {
        Some((r, _)) => fail(
            1,
            format!(
                "AssertionError: cudagraph_capture_sizes {:?} does not containvalues that are multiples of tp_size {} ({})",
                sizes, plan.tp, r.source
            ),
        ),
        None => Ok(()),
    }
}

/// vLLM's refusal to size the graphs for a decode step and TP that are not
/// multiples of one another under sequence parallelism
/// (`Release::sp_alignment_refusal`, the verdict rule
/// `speculative_sp_graph_alignment` reads), in vLLM's words
/// (`adjust_cudagraph_sizes_for_spec_decode`, vllm/config/compilation.py).
pub(super) fn sp_alignment_refusal(plan: &Plan, image: &str) -> Result<(), Fail> {
    let (Some((_, tokens)), Some(graph)) = (&plan.speculative, plan.graph) else {
        return Ok(());
    };
    let (rel, v) = releases(image)?;
    let sp = rel.sequence_parallel(v, &Engine::of(plan));
    let refused = rel.sp_alignment_refusal(
        v,
        graph,
        *tokens,
        plan.tp,
        &plan.capture_sizes,
        v2_runner_env()?,
        sp,
    );
    match refused {
        Some(r) => fail(
            1,
            format!(
                "ValueError: Can't determine cudagraph shapes that are both a multiple of {} (num_speculative_tokens + 1) required by spec-decode and {} (tensor_parallel_size) required by sequence parallelism please adjust num_speculative_tokens or disable sequence parallelism ({})",
                tokens.saturating_add(1),
                plan.tp,
                r.vllm.source
            ),
        ),
        None => Ok(()),
    }
}
