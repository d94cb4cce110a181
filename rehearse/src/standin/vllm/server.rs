//! The API server: completions (and the KV transfer parameters between
//! prefill and decode), health, draining on SIGTERM, and the fault timer.

use super::plan::{Plan, as_int, truthy};
use super::{Fail, env_nonempty, fail, version};
use crate::http::{Request, Response};
use crate::{http, kv_params};
use pd_dsl::placement::kv_span;
use pd_dsl::{ConnectorKind, Role};
use serde_json::{Value as Json, json};
use std::path::PathBuf;
use std::process::exit;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// KV cache groups the stand-in models (one list of block ids each). The
/// stand-in does not know a model's real group count; prefill and decode use
/// the same, so the shape (a list per group, equal counts) is what is checked.
const KV_GROUPS: usize = 1;

pub(super) struct State {
    pub(super) plan: Plan,
    pub(super) ip: String,
    /// The vllm-ascend image tag whose connector field set is spoken.
    pub(super) image: String,
    /// `PD_STANDIN_LATENCY_MS` before each completion.
    pub(super) latency: Duration,
    pub(super) counter: Mutex<u64>,
    pub(super) counter_path: Option<PathBuf>,
    pub(super) seq: Mutex<u64>,
    /// Completions being served.
    pub(super) in_flight: AtomicUsize,
    /// Connections open, from accept until the answer is written
    /// ([`http::serve_counted`]).
    pub(super) open: Arc<AtomicUsize>,
    /// SIGTERM came with `--shutdown-timeout`: new requests get 503.
    pub(super) draining: AtomicBool,
}

/// Counts one completion in flight for as long as it lives.
struct InFlight<'a>(&'a AtomicUsize);

impl<'a> InFlight<'a> {
    pub(super) fn new(n: &'a AtomicUsize) -> InFlight<'a> {
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
pub(super) fn drain_on_sigterm(state: &Arc<State>) -> Result<(), Fail> {
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
        // Done when every request is answered: a handler that returned may
        // still be writing its answer, so the open connections are waited
        // for too (uvicorn's shutdown waits for its connections to close).
        let busy = || {
            s.in_flight
                .load(Ordering::SeqCst)
                .max(s.open.load(Ordering::SeqCst))
        };
        let deadline = Instant::now() + Duration::from_secs(timeout);
        while busy() > 0 && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(20));
        }
        let left = busy();
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
    pub(super) fn write_counter(&self, n: u64) {
        if let Some(path) = &self.counter_path {
            let tmp = path.with_extension("served.tmp");
            if std::fs::write(&tmp, format!("{n}\n")).is_ok() {
                let _ = std::fs::rename(&tmp, path);
            }
        }
    }

    pub(super) fn served(&self) {
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

pub(super) fn handle(state: &State, req: &Request) -> Response {
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
        // vLLM's Prometheus gauges of the requests it holds
        // (vllm/v1/metrics/loggers.py): running ones (this scrape not
        // counted), none waiting.
        ("GET", "/metrics") => {
            let running = state.in_flight.load(Ordering::SeqCst).saturating_sub(1);
            let model = &state.plan.served_name;
            Response {
                status: 200,
                content_type: "text/plain; version=0.0.4".into(),
                body: format!(
                    "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{{model_name=\"{model}\"}} {running}\n# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{{model_name=\"{model}\"}} 0\n"
                )
                .into_bytes(),
            }
        }
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

pub(super) fn start_fault_timer() {
    if let Some(ms) = env_nonempty("PD_STANDIN_FAIL_AFTER_MS").and_then(|v| v.trim().parse().ok()) {
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(ms));
            eprintln!("vllm stand-in: PD_STANDIN_FAIL_AFTER_MS={ms} elapsed, failing");
            exit(9);
        });
    }
}
