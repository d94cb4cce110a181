//! `vllm` stand-in: `vllm serve MODEL [flags]` and `vllm bench serve …`.
//! Contract (env, exit codes, expectation file) in the crate docs.

mod bench;
mod checks;
mod plan;
mod ports;
mod server;

use crate::expect::Expectation;
use crate::http::{self, Request};
use crate::kv_params;
use crate::serve_flags;
use bench::bench;
use checks::{
    batch_refusal, check_cann, check_expectation, check_pool, checkpoint_refusal,
    decode_step_refusal, devices, drafting_refusal, join, mamba_align_refusal, model_refusal,
    modelslim_refusal, pcp_refusals, sp_alignment_refusal, sp_assert_refusal, tp_aligned_refusal,
    v2_speculative_refusal,
};
use pd_dsl::ConnectorKind;
use plan::plan;
use ports::{dp_master, drain, kv_binds};
use server::{State, drain_on_sigterm, handle, start_fault_timer};
use std::env;
use std::path::PathBuf;
use std::process::exit;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

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

fn serve(argv: &[String]) -> Result<(), Fail> {
    start_fault_timer();
    check_cann()?;
    let image = image_tag();
    // The flags the image's vLLM accepts, from vLLM's own definitions.
    let flags = serve_flags::Flags::of_image(&image)
        .or_else(|e| fail(2, format!("PD_STANDIN_IMAGE={image}: {e}")))?;
    let args = serve_flags::parse(flags, argv).or_else(|e| fail(2, e))?;
    // vLLM builds its config from the parsed flags: pydantic validates
    // each field, a narrower patched one too.
    if let Some(why) = flags.field_refusal(&args) {
        return fail(
            1,
            format!("pydantic_core._pydantic_core.ValidationError: {why}"),
        );
    }
    let plan = plan(&args)?;
    // The model's config.json is read first.
    model_refusal(&plan)?;
    // vLLM derives the context length from it, checks the speculative
    // method against it, and vllm-ascend counts its experts for MC2.
    checkpoint_refusal(&plan, &image)?;
    pcp_refusals(&plan, &image)?;
    // The platform's quantization config loads its description first.
    modelslim_refusal(&plan, &image)?;
    v2_speculative_refusal(&plan, &image)?;
    drafting_refusal(&plan, &image)?;
    check_pool(&plan, &image)?;
    // vllm-ascend's platform checks the capture sizes while it sets up the
    // compile backend, before the workers take their devices.
    sp_assert_refusal(&plan, &image)?;
    batch_refusal(&plan, &image)?;
    tp_aligned_refusal(&plan, &image)?;
    let devs = devices(&plan)?;
    // vLLM rounds the capture sizes when its model runner starts on the
    // devices, after the config-time refusals above.
    sp_alignment_refusal(&plan, &image)?;
    decode_step_refusal(&plan, &image)?;
    // EngineCore validates the block size once the KV cache is sized.
    mamba_align_refusal(&plan, &image)?;
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
        open: Arc::new(AtomicUsize::new(0)),
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
            let open = Arc::clone(&state.open);
            http::serve_counted(
                listener,
                Arc::new(move |req: &Request| handle(&s, req)),
                &open,
            );
        }
        None => loop {
            thread::sleep(Duration::from_secs(3600));
        },
    }
    Ok(())
}
