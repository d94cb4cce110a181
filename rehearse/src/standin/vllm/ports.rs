//! The ports a rank binds: its API port, the DP master's RPC port and the
//! kv handshake span, and a blocked DP master (`PD_STANDIN_BLOCKED`).

use super::plan::Plan;
use super::{Fail, env_nonempty, fail};
use crate::http;
use pd_dsl::placement::kv_span;
use std::net::TcpListener;
use std::thread;
use std::time::{Duration, Instant};

fn bind(ip: &str, port: u16, what: &str) -> Result<TcpListener, Fail> {
    TcpListener::bind(http::host_port(ip, port))
        .or_else(|e| fail(5, format!("cannot bind {}:{port} ({what}): {e}", ip)))
}

/// Accepts and drops connections forever.
pub(super) fn drain(listener: TcpListener) {
    thread::spawn(move || {
        for s in listener.incoming() {
            drop(s);
        }
    });
}

pub(super) fn dp_master(plan: &Plan, ip: &str) -> Result<Vec<TcpListener>, Fail> {
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

pub(super) fn kv_binds(plan: &Plan, ip: &str) -> Result<Vec<TcpListener>, Fail> {
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
