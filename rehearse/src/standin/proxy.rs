//! `pd-proxy` stand-in for vllm-ascend's
//! `load_balance_proxy_server_example.py` (pull mode): the same command line,
//! `/healthcheck`, and P-then-D routing. A D failure is a 502 carrying D's
//! body, never an empty 200. Leading positional arguments ending in `.py` (a
//! script path left in by a `python3 SCRIPT …` shim) are ignored.
//!
//! Environment (the command line stays upstream's):
//!
//! | variable | meaning (default) |
//! |---|---|
//! | `PD_STANDIN_PROXY_POLICY` | `round-robin` (default): every rank in turn; `least-loaded`: upstream's policy (below) |
//!
//! `least-loaded` is upstream's selection (load_balance_proxy_server_example.py
//! @v0.21.0rc1 L276-310, L352-423, L885-931): a prefill rank's load is the
//! sum of `0.3 × (len(body) / 4 × 0.0345 + 120.0745)` over requests picked
//! and not yet answered by decode; a decode rank's is the sum of `len(body)`
//! over requests in flight; the least-loaded rank wins and ties go to the
//! earlier entry of the list. Requests that do not overlap therefore all
//! land on the first rank of each list.

use crate::http::{self, Request, Response};
use serde_json::{Value as Json, json};
use std::process::exit;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

const FLAGS: &[&str] = &[
    "host",
    "port",
    "prefiller-hosts",
    "prefiller-ports",
    "decoder-hosts",
    "decoder-ports",
    "max-retries",
    "retry-delay",
    "max-waiting-retries",
    "waiting-retry-interval",
    "workers",
    "log-level",
];
const MANY: &[&str] = &[
    "prefiller-hosts",
    "prefiller-ports",
    "decoder-hosts",
    "decoder-ports",
];

#[derive(Debug)]
struct Backend {
    host: String,
    port: u16,
}

/// How the proxy picks a rank of a role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Every rank in turn.
    RoundRobin,
    /// Upstream's: least load, ties to the earlier list entry.
    LeastLoaded,
}

impl Policy {
    /// Both policies.
    pub const ALL: [Policy; 2] = [Policy::RoundRobin, Policy::LeastLoaded];

    /// The `PD_STANDIN_PROXY_POLICY` value.
    pub fn name(self) -> &'static str {
        match self {
            Policy::RoundRobin => "round-robin",
            Policy::LeastLoaded => "least-loaded",
        }
    }

    /// Parses a `PD_STANDIN_PROXY_POLICY` value.
    pub fn parse(s: &str) -> Result<Policy, String> {
        Policy::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                format!("unknown proxy policy `{s}`, expected round-robin or least-loaded")
            })
    }
}

#[derive(Debug)]
struct Proxy {
    prefill: Vec<Backend>,
    decode: Vec<Backend>,
    policy: Policy,
    /// Per-rank load under `least-loaded`.
    p_load: Mutex<Vec<f64>>,
    d_load: Mutex<Vec<f64>>,
    max_retries: u32,
    retry_delay: f64,
    next_p: AtomicU64,
    next_d: AtomicU64,
    requests: AtomicU64,
}

fn die(msg: &str) -> ! {
    eprintln!("pd-proxy stand-in: {msg}");
    exit(2)
}

/// argparse long-option resolution: exact, else a unique prefix.
fn resolve(given: &str) -> Result<&'static str, String> {
    if let Some(f) = FLAGS.iter().find(|f| **f == given) {
        return Ok(f);
    }
    let hits: Vec<&&str> = FLAGS.iter().filter(|f| f.starts_with(given)).collect();
    match hits.as_slice() {
        [one] => Ok(one),
        [] => Err(format!("unrecognized arguments: --{given}")),
        many => Err(format!(
            "ambiguous option: --{given} could match {}",
            many.iter()
                .map(|f| format!("--{f}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

fn normalize(host: &str) -> String {
    match host {
        "localhost" => "127.0.0.1".into(),
        h => h.trim_start_matches('[').trim_end_matches(']').into(),
    }
}

fn parse(argv: &[String]) -> Result<(String, u16, Proxy), String> {
    let mut values: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    let mut i = 0;
    while i < argv.len() {
        let arg = &argv[i];
        i += 1;
        let Some(long) = arg.strip_prefix("--") else {
            if arg.ends_with(".py") && values.is_empty() {
                continue;
            }
            return Err(format!("unrecognized arguments: {arg}"));
        };
        let (name, inline) = match long.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (long, None),
        };
        let flag = resolve(&name.replace('_', "-"))?;
        let mut got = Vec::new();
        if let Some(v) = inline {
            got.push(v);
        } else {
            while let Some(v) = argv.get(i).filter(|v| !v.starts_with("--")) {
                got.push(v.clone());
                i += 1;
                if !MANY.contains(&flag) {
                    break;
                }
            }
        }
        if got.is_empty() {
            return Err(format!("argument --{flag}: expected at least one argument"));
        }
        values.insert(flag, got);
    }
    let one = |k: &str, d: &str| -> String {
        values
            .get(k)
            .and_then(|v| v.first().cloned())
            .unwrap_or_else(|| d.to_string())
    };
    let list = |k: &str, d: &str| -> Vec<String> {
        values
            .get(k)
            .cloned()
            .unwrap_or_else(|| vec![d.to_string()])
    };
    let port_of = |flag: &str, v: &str| -> Result<u16, String> {
        v.parse()
            .map_err(|_| format!("argument --{flag}: invalid int value: '{v}'"))
    };
    let backends = |hosts: &str, ports: &str, dh: &str, dp: &str| -> Result<Vec<Backend>, String> {
        let h = list(hosts, dh);
        let p = list(ports, dp);
        if h.len() != p.len() {
            return Err(format!(
                "--{hosts} has {} entries but --{ports} has {} (lengths must match)",
                h.len(),
                p.len()
            ));
        }
        h.iter()
            .zip(&p)
            .map(|(h, p)| {
                Ok(Backend {
                    host: normalize(h),
                    port: port_of(ports, p)?,
                })
            })
            .collect()
    };
    let prefill = backends("prefiller-hosts", "prefiller-ports", "localhost", "8001")?;
    let decode = backends("decoder-hosts", "decoder-ports", "localhost", "8002")?;
    let policy = match std::env::var("PD_STANDIN_PROXY_POLICY") {
        Ok(v) if !v.is_empty() => Policy::parse(&v)?,
        _ => Policy::RoundRobin,
    };
    let p_load = Mutex::new(vec![0.0; prefill.len()]);
    let d_load = Mutex::new(vec![0.0; decode.len()]);
    let max_retries: u32 = one("max-retries", "3")
        .parse()
        .map_err(|_| "argument --max-retries: invalid int value".to_string())?;
    let retry_delay: f64 = one("retry-delay", "0.001")
        .parse()
        .map_err(|_| "argument --retry-delay: invalid float value".to_string())?;
    for k in ["workers", "max-waiting-retries"] {
        one(k, "1")
            .parse::<u32>()
            .map_err(|_| format!("argument --{k}: invalid int value"))?;
    }
    let host = normalize(&one("host", "localhost"));
    let port = port_of("port", &one("port", "8000"))?;
    Ok((
        host,
        port,
        Proxy {
            prefill,
            decode,
            policy,
            p_load,
            d_load,
            max_retries,
            retry_delay,
            next_p: AtomicU64::new(0),
            next_d: AtomicU64::new(0),
            requests: AtomicU64::new(0),
        },
    ))
}

const TIMEOUT: Duration = Duration::from_secs(120);

/// Upstream's prefill score (`calculate_prefill_score`), of which 0.3 is
/// the prefill rank's load while the request is held.
fn prefill_load(body_len: usize) -> f64 {
    0.3 * ((body_len as f64 / 4.0) * 0.0345 + 120.0745)
}

impl Proxy {
    /// Picks a rank index of `list` and charges it `load` (least-loaded).
    fn pick(
        &self,
        list: &[Backend],
        next: &AtomicU64,
        loads: &Mutex<Vec<f64>>,
        load: f64,
    ) -> Option<usize> {
        if list.is_empty() {
            return None;
        }
        match self.policy {
            Policy::RoundRobin => {
                let n = next.fetch_add(1, Ordering::Relaxed) as usize;
                Some(n % list.len())
            }
            Policy::LeastLoaded => {
                let mut l = loads.lock().unwrap_or_else(|e| e.into_inner());
                // min_by keeps the first of equal elements: ties go to list order.
                let i = l
                    .iter()
                    .enumerate()
                    .min_by(|a, b| a.1.total_cmp(b.1))
                    .map(|(i, _)| i)?;
                l[i] += load;
                Some(i)
            }
        }
    }

    fn release(&self, loads: &Mutex<Vec<f64>>, i: usize, load: f64) {
        if self.policy == Policy::LeastLoaded {
            let mut l = loads.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(v) = l.get_mut(i) {
                *v -= load;
            }
        }
    }

    /// Sends with retries on connection errors and 5xx; a 4xx is returned as is.
    fn send(&self, b: &Backend, path: &str, body: &Json) -> Result<Response, String> {
        let mut last = String::new();
        for attempt in 0..=self.max_retries {
            if attempt > 0 {
                let delay = self.retry_delay * f64::from(2u32.pow(attempt - 1));
                thread::sleep(Duration::from_secs_f64(delay.clamp(0.0, 5.0)));
            }
            match http::post_json(&b.host, b.port, path, body, TIMEOUT) {
                Ok(r) if r.status < 500 => return Ok(r),
                Ok(r) => last = format!("HTTP {}: {}", r.status, r.text()),
                Err(e) => last = e.to_string(),
            }
        }
        Err(last)
    }

    fn completion(&self, req: &Request) -> Response {
        let Ok(body @ Json::Object(_)) = serde_json::from_slice::<Json>(&req.body) else {
            return Response::error(400, "request body is not a JSON object");
        };
        self.requests.fetch_add(1, Ordering::Relaxed);
        let (pl, dl) = (prefill_load(req.body.len()), req.body.len() as f64);
        let Some(pi) = self.pick(&self.prefill, &self.next_p, &self.p_load, pl) else {
            return Response::error(503, "no prefill instances");
        };
        let resp = self.through(req, body, pi, dl);
        self.release(&self.p_load, pi, pl);
        resp
    }

    /// Prefill on `self.prefill[pi]`, then decode on a picked rank.
    fn through(&self, req: &Request, body: Json, pi: usize, dl: f64) -> Response {
        let p = &self.prefill[pi];
        let mut pbody = body.clone();
        pbody["kv_transfer_params"] = json!({
            "do_remote_decode": true, "do_remote_prefill": false,
            "remote_engine_id": null, "remote_block_ids": null,
            "remote_host": null, "remote_port": null,
        });
        pbody["stream"] = json!(false);
        pbody["max_tokens"] = json!(1);
        pbody["min_tokens"] = json!(1);
        if let Json::Object(m) = &mut pbody {
            if m.contains_key("max_completion_tokens") {
                m.insert("max_completion_tokens".into(), json!(1));
            }
            m.remove("stream_options");
        }
        let at = |b: &Backend| http::host_port(&b.host, b.port);
        let presp = match self.send(p, &req.path, &pbody) {
            Ok(r) if r.status == 200 => r,
            Ok(r) => {
                return Response {
                    status: 502,
                    content_type: "application/json".into(),
                    body: json!({"error": format!("prefill {} returned {}", at(p), r.status),
                                 "body": r.text()})
                    .to_string()
                    .into_bytes(),
                };
            }
            Err(e) => return Response::error(502, &format!("prefill {} failed: {e}", at(p))),
        };
        let params = serde_json::from_slice::<Json>(&presp.body)
            .ok()
            .and_then(|v| v.get("kv_transfer_params").cloned())
            .filter(Json::is_object);
        let Some(params) = params else {
            return Response::error(
                502,
                &format!("prefill {} returned no kv_transfer_params", at(p)),
            );
        };
        let mut dbody = body;
        dbody["kv_transfer_params"] = params;
        // Upstream picks decode after prefill answered.
        let Some(di) = self.pick(&self.decode, &self.next_d, &self.d_load, dl) else {
            return Response::error(503, "no decode instances");
        };
        let d = &self.decode[di];
        let resp = self.send(d, &req.path, &dbody);
        self.release(&self.d_load, di, dl);
        match resp {
            Ok(r) if r.status == 200 && !r.body.is_empty() => r,
            Ok(r) => Response {
                status: 502,
                content_type: "application/json".into(),
                body: json!({"error": format!("decode {} returned {}", at(d), r.status),
                             "body": r.text()})
                .to_string()
                .into_bytes(),
            },
            Err(e) => Response::error(502, &format!("decode {} failed: {e}", at(d))),
        }
    }

    fn handle(&self, req: &Request) -> Response {
        match (req.method.as_str(), req.path.as_str()) {
            ("GET", "/healthcheck") => Response::json(
                200,
                &json!({
                    "status": "ok",
                    "prefill_instances": self.prefill.len(),
                    "decode_instances": self.decode.len(),
                    "request_num": self.requests.load(Ordering::Relaxed),
                }),
            ),
            ("GET", "/v1/models") => match self.decode.first() {
                Some(d) => http::get(&d.host, d.port, "/v1/models", TIMEOUT)
                    .unwrap_or_else(|e| Response::error(502, &e.to_string())),
                None => Response::error(503, "no decode instances"),
            },
            ("POST", "/v1/completions" | "/v1/chat/completions") => self.completion(req),
            ("POST", "/reset_prefix_cache") => {
                for b in self.prefill.iter().chain(&self.decode) {
                    let _ = http::post_json(
                        &b.host,
                        b.port,
                        "/reset_prefix_cache",
                        &json!({}),
                        TIMEOUT,
                    );
                }
                Response::json(200, &json!({"status": "ok"}))
            }
            _ => Response::error(404, "not found"),
        }
    }
}

/// The stand-in's `main`: `argv` excludes the program name.
pub fn main(argv: Vec<String>) {
    let (host, port, proxy) = parse(&argv).unwrap_or_else(|e| die(&e));
    // uvicorn's accept backlog ([`http::BACKLOG`]), as the upstream proxy's.
    let listener = http::listen(&host, port).unwrap_or_else(|e| {
        eprintln!("pd-proxy stand-in: cannot bind {host}:{port}: {e}");
        exit(5)
    });
    eprintln!(
        "pd-proxy stand-in: {host}:{port}, {} prefill and {} decode backends, {} policy",
        proxy.prefill.len(),
        proxy.decode.len(),
        proxy.policy.name()
    );
    let proxy = Arc::new(proxy);
    http::serve(listener, Arc::new(move |req: &Request| proxy.handle(req)));
}
