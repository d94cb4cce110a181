//! The request waves and the coverage check: every API process served, else
//! which ranks got nothing and why.

use super::diagnose::served_count;
use super::node_ip;
use super::processes::{Process, marked_processes};
use crate::http;
use pd_dsl::{Layout, Role};
use serde_json::json;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

/// `endpoint` of a proxy list: `127.0.0.3:7100`.
pub(super) fn endpoint_text(e: &pd_dsl::placement::Endpoint) -> String {
    format!("{}:{}", node_ip(e.node), e.port)
}

/// The running proxy's `--prefiller-*` and `--decoder-*` lists as
/// `host:port` (from its command line), found among this rehearsal's
/// processes; `None` when no process carries them.
fn running_proxy_lists(marker: &str) -> Option<(Vec<String>, Vec<String>)> {
    let (_, cmd) = marked_processes(marker)
        .into_iter()
        .find(|(_, c)| c.contains("--decoder-") && c.contains("--prefiller-"))?;
    let args: Vec<&str> = cmd.split(' ').collect();
    let list = |prefix: &str| -> Vec<String> {
        let Some(i) = args.iter().position(|a| a.starts_with(prefix)) else {
            return Vec::new();
        };
        args[i + 1..]
            .iter()
            .take_while(|a| !a.starts_with("--"))
            .map(|a| (*a).to_owned())
            .collect()
    };
    let zip = |h: Vec<String>, p: Vec<String>| -> Vec<String> {
        h.iter()
            .zip(&p)
            .map(|(h, p)| {
                let h = if h == "localhost" { "127.0.0.1" } else { h };
                format!("{h}:{p}")
            })
            .collect()
    };
    Some((
        zip(list("--prefiller-h"), list("--prefiller-p")),
        zip(list("--decoder-h"), list("--decoder-p")),
    ))
}

/// Every API process served at least once: `Ok(least served)`, else which
/// ranks got nothing and the likely causes, most likely first.
pub(super) fn coverage(
    layout: &Layout,
    procs: &[Process],
    state: &Path,
    marker: &str,
    concurrency: usize,
    n: usize,
) -> Result<u64, String> {
    let nodes = &layout.placement.nodes;
    let mut min = u64::MAX;
    let mut idle: Vec<(Role, String, String)> = Vec::new();
    let mut served_by_role: BTreeMap<Role, (usize, usize)> = BTreeMap::new();
    for p in procs.iter().filter(|p| p.serves_api) {
        let role = nodes[p.node].role;
        let port = nodes[p.node]
            .ranks
            .iter()
            .find(|r| r.dp_rank == p.first_rank)
            .and_then(|r| r.api_port);
        let at = port.map_or_else(
            || node_ip(p.node),
            |port| format!("{}:{port}", node_ip(p.node)),
        );
        let label = format!("node {} {role} rank {} ({at})", p.node, p.first_rank);
        let e = served_by_role.entry(role).or_default();
        e.1 += 1;
        match served_count(state, p) {
            Some(0) => idle.push((role, label, at)),
            None => idle.push((role, format!("{label}, no counter file: never came up"), at)),
            Some(c) => {
                e.0 += 1;
                min = min.min(c);
            }
        }
    }
    if idle.is_empty() {
        return Ok(if min == u64::MAX { 0 } else { min });
    }
    let mut m = format!(
        "{} of {} rank(s) got no request from {n} requests ({concurrency} at a time):",
        idle.len(),
        procs.iter().filter(|p| p.serves_api).count()
    );
    for (_, label, _) in idle.iter().take(12) {
        let _ = write!(m, "\n      {label}");
    }
    if idle.len() > 12 {
        let _ = write!(m, "\n      ... and {} more", idle.len() - 12);
    }
    if !layout.is_pd() {
        let _ = write!(
            m,
            "\n    likely causes: the API server did not answer completions, or requests went to another port"
        );
        return Err(m);
    }
    let _ = write!(m, "\n    likely causes, most likely first:");
    let mut k = 1;
    // 1. Missing from the lists the proxy really runs with.
    let lists = running_proxy_lists(marker);
    let listed = |role: Role, at: &str| -> Option<bool> {
        let (p, d) = lists.as_ref()?;
        Some(match role {
            Role::Prefill => p.iter().any(|e| e == at),
            _ => d.iter().any(|e| e == at),
        })
    };
    let unlisted: Vec<&str> = idle
        .iter()
        .filter(|(role, _, at)| listed(*role, at) == Some(false))
        .map(|(_, _, at)| at.as_str())
        .collect();
    if !unlisted.is_empty() {
        let _ = write!(
            m,
            "\n    {k}. the running proxy's lists miss {} (its command line has {} prefill and {} decode entries; the layout has {} and {}): compare proxy.sh's PREFILL_*/DECODE_* with `catalog show {}`",
            unlisted.join(" "),
            lists.as_ref().map_or(0, |l| l.0.len()),
            lists.as_ref().map_or(0, |l| l.1.len()),
            layout.placement.proxy.prefill.len(),
            layout.placement.proxy.decode.len(),
            layout.name()
        );
        k += 1;
    } else if lists.is_none() {
        let _ = write!(
            m,
            "\n    {k}. the proxy's lists miss them (the proxy's command line could not be read): compare proxy.sh with `catalog show {}`",
            layout.name()
        );
        k += 1;
    }
    // 2. Whole role idle: the proxy bypasses it.
    if served_by_role
        .get(&Role::Prefill)
        .is_some_and(|(s, _)| *s == 0)
        && served_by_role
            .get(&Role::Decode)
            .is_some_and(|(s, _)| *s > 0)
    {
        let _ = write!(
            m,
            "\n    {k}. no prefill rank served while decode did: the proxy sends requests straight to decode (a decode-only fallback: decode recomputes every prompt)"
        );
        k += 1;
    }
    // 3. Listed but never picked.
    let _ = write!(
        m,
        "\n    {k}. the proxy never picked them: a least-loaded proxy (upstream's) gives requests that do not overlap to the first entry of each list; with {concurrency} in flight every rank should be reached unless requests finished before the next arrived"
    );
    k += 1;
    let _ = write!(
        m,
        "\n    {k}. they answer /health but not completions on that port (another process holds it): see their rank logs"
    );
    Err(m)
}

/// Sends `n` completions, `concurrency` at a time, to `host:port`; returns
/// the errors.
pub(super) fn send_requests(
    layout: &Layout,
    host: &str,
    port: u16,
    n: usize,
    concurrency: usize,
    deadline: Instant,
) -> Vec<String> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let errors = std::sync::Mutex::new(Vec::new());
    thread::scope(|s| {
        for _ in 0..concurrency.max(1) {
            s.spawn(|| {
                loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if k >= n || Instant::now() >= deadline {
                        break;
                    }
                    let body = json!({
                        "model": layout.served_model_name,
                        // Equal lengths: equal loads at a least-loaded proxy.
                        "prompt": format!("rehearsal request {k:06}"),
                        "max_tokens": 4,
                        "temperature": 0,
                    });
                    let r = http::post_json(
                        host,
                        port,
                        "/v1/completions",
                        &body,
                        Duration::from_secs(30),
                    );
                    let err = match r {
                        Ok(r) if r.status == 200 => None,
                        Ok(r) => Some(format!("HTTP {}: {}", r.status, r.text())),
                        Err(e) => Some(e.to_string()),
                    };
                    if let Some(e) = err
                        && let Ok(mut v) = errors.lock()
                    {
                        v.push(e);
                    }
                }
            });
        }
    });
    errors.into_inner().unwrap_or_default()
}
