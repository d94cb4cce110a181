//! The wait before a request's first token, which the throughput model of
//! [`super`] leaves out: requests queue whenever the deployment, not the
//! benchmark's loop, bounds what completes.
//!
//! - **A closed loop** of `n` requests completing `rps` requests/s holds
//!   each request `n / rps` seconds (Little's law). What exceeds the
//!   unqueued cycle (TTFT + OSL x TPOT) is spent waiting, before the first
//!   token: for prefill, or in PD for a decode slot, since the client's
//!   first token comes from the decode engine (the proxy sends the prefill
//!   request with one output token and streams the decode's).
//! - **An open loop** at a rate below capacity (Poisson arrivals, as
//!   `vllm bench serve` sends them at burstiness 1) waits at each stage as a
//!   G/G/c queue in the Kingman-Sakasegawa approximation (Hopp & Spearman,
//!   *Factory Physics*, eq. 8.10; Sakasegawa 1977):
//!   `Wq = (ca2 + cs2) / 2 x rho^(sqrt(2 (c + 1)) - 1) / (c (1 - rho)) x s`
//!   with `ca2 = 1` (Poisson) and `cs2 = 0` (a stage's time is fixed by the
//!   workload's lengths), `c` servers of service time `s` each.
//! - **An open loop at or above capacity** has no steady state: the queue
//!   grows for as long as the run lasts (`None`).

/// One stage requests pass through: `servers` working in parallel, each
/// `service_s` seconds per request.
#[derive(Clone, Copy, Debug)]
pub(super) struct Stage {
    pub(super) servers: f64,
    pub(super) service_s: f64,
}

/// An open loop's wait at `rate` requests/s over `stages`, or `None` when a
/// stage cannot keep up.
pub(super) fn open_wait(rate: f64, stages: &[Stage]) -> Option<f64> {
    let mut total = 0.0;
    for s in stages {
        if !(s.servers >= 1.0 && s.service_s > 0.0 && rate > 0.0) {
            continue;
        }
        let c = s.servers;
        let rho = rate * s.service_s / c;
        if !rho.is_finite() || rho >= 1.0 {
            return None;
        }
        // (ca2 + cs2) / 2 = (1 + 0) / 2.
        total += 0.5 * rho.powf((2.0 * (c + 1.0)).sqrt() - 1.0) / (c * (1.0 - rho)) * s.service_s;
    }
    Some(total)
}

/// A closed loop's wait: `in_flight` requests completing `rps` requests/s,
/// each taking `cycle` seconds when it does not wait.
pub(super) fn closed_wait(in_flight: f64, rps: f64, cycle: f64) -> f64 {
    if rps > 0.0 && rps.is_finite() {
        (in_flight / rps - cycle).max(0.0)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One server (M/D/1): Kingman's formula is exact there, Pollaczek-
    /// Khinchine's `rho s / (2 (1 - rho))`.
    #[test]
    fn one_server_is_pollaczek_khinchine() {
        for rho in [0.1, 0.5, 0.9, 0.99] {
            let w = open_wait(
                rho,
                &[Stage {
                    servers: 1.0,
                    service_s: 1.0,
                }],
            )
            .unwrap_or(-1.0);
            let exact = rho / (2.0 * (1.0 - rho));
            assert!(
                (w - exact).abs() < 1e-9 * exact.max(1.0),
                "rho {rho}: {w} vs {exact}"
            );
        }
    }

    /// More servers at the same load wait less; the wait grows without
    /// bound toward capacity and is `None` at it.
    #[test]
    fn the_wait_falls_with_servers_and_explodes_at_capacity() {
        // `c` servers of 2 s each at utilisation `rho`.
        let at = |c: f64, rho: f64| {
            open_wait(
                rho * c / 2.0,
                &[Stage {
                    servers: c,
                    service_s: 2.0,
                }],
            )
        };
        let (one, eight, many) = (at(1.0, 0.8), at(8.0, 0.8), at(256.0, 0.8));
        assert!(one > eight && eight > many, "{one:?} {eight:?} {many:?}");
        assert!(at(8.0, 0.999) > Some(100.0), "{:?}", at(8.0, 0.999));
        assert_eq!(at(8.0, 1.0), None);
        assert_eq!(at(8.0, 1.5), None);
        // Stages add.
        let s = Stage {
            servers: 4.0,
            service_s: 1.0,
        };
        let (a, b) = (open_wait(2.0, &[s]), open_wait(2.0, &[s, s]));
        assert!((b.unwrap_or(0.0) - 2.0 * a.unwrap_or(0.0)).abs() < 1e-12);
    }

    /// Little's law: 700 requests at 5 requests/s spend 140 s each; with a
    /// 100 s cycle, 40 s of it waiting; a loop that bounds itself waits none.
    #[test]
    fn a_closed_loop_waits_what_littles_law_leaves() {
        assert!((closed_wait(700.0, 5.0, 100.0) - 40.0).abs() < 1e-9);
        assert_eq!(closed_wait(100.0, 5.0, 100.0), 0.0);
        assert_eq!(closed_wait(100.0, 0.0, 100.0), 0.0);
    }
}
