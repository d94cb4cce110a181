//! `pd_dsl::estimate`: the figures hang together and move the way the
//! model says (its constants are fitted in tests/tests/estimate_calibration.rs).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use pd_dsl::estimate::{CALIBRATION, Calibration, Workload, estimate, estimate_with};

fn layout(json: &str) -> pd_dsl::Layout {
    let spec: pd_dsl::LayoutSpec = serde_json::from_str(json).unwrap();
    pd_dsl::check(&spec).unwrap()
}

fn pd() -> pd_dsl::Layout {
    layout(include_str!("fixtures/v3_1_a3_2p1d.json"))
}

fn w(concurrency: u64) -> Workload {
    Workload {
        input_len: 3500,
        output_len: 1500,
        prefix_rate: 0.0,
        concurrency: Some(concurrency),
        request_rate: None,
    }
}

#[test]
fn the_figures_are_consistent() {
    let l = pd();
    let e = estimate_with(&l, &w(64), &CALIBRATION).unwrap();
    assert!((e.output_tokens_per_s - e.requests_per_s * 1500.0).abs() < 1e-6);
    assert!((e.total_tokens_per_s - e.requests_per_s * 5000.0).abs() < 1e-6);
    let npus = l.placement.nodes.len() as f64 * 16.0;
    assert!((e.output_tokens_per_s_per_npu - e.output_tokens_per_s / npus).abs() < 1e-9);
    assert!(e.ttft_s >= e.kv_transfer_s && e.kv_transfer_s > 0.0);
    // The deployment completes no more than any bound allows.
    for r in &e.roles {
        assert!(e.requests_per_s <= r.capacity_rps + 1e-9, "{r:?}");
    }
    assert!(e.requests_per_s <= 64.0 / (e.ttft_s + 1500.0 * e.tpot_ms / 1e3) + 1e-9);
    // The layout's own workload is its bench.
    let own = estimate(&l).unwrap();
    assert_eq!(
        own.workload.input_len,
        l.spec.bench.as_ref().unwrap().input_len.value
    );
}

#[test]
fn more_load_more_throughput_and_slower_tokens() {
    let l = pd();
    let a = estimate_with(&l, &w(8), &CALIBRATION).unwrap();
    let b = estimate_with(&l, &w(256), &CALIBRATION).unwrap();
    assert!(b.output_tokens_per_s > a.output_tokens_per_s);
    assert!(b.tpot_ms > a.tpot_ms);
    // A prefix cache shortens prefill.
    let mut cached = w(8);
    cached.prefix_rate = 0.9;
    let c = estimate_with(&l, &cached, &CALIBRATION).unwrap();
    assert!(c.ttft_s < a.ttft_s);
    // A paced workload completes no more than it offers.
    let paced = Workload {
        concurrency: None,
        request_rate: Some(0.5),
        ..w(1)
    };
    let p = estimate_with(&l, &paced, &CALIBRATION).unwrap();
    assert!(p.requests_per_s <= 0.5 + 1e-9);
    assert_eq!(p.bound, "request rate");
}

#[test]
fn the_constants_move_the_figures_their_way() {
    let l = pd();
    let base = estimate_with(&l, &w(256), &CALIBRATION).unwrap();
    let faster = Calibration {
        hbm_efficiency: CALIBRATION.hbm_efficiency * 2.0,
        ..CALIBRATION
    };
    assert!(estimate_with(&l, &w(256), &faster).unwrap().tpot_ms < base.tpot_ms);
    let accepts = Calibration {
        mtp_acceptance: 0.95,
        ..CALIBRATION
    };
    assert!(estimate_with(&l, &w(256), &accepts).unwrap().tpot_ms < base.tpot_ms);
    let mfu = Calibration {
        prefill_mfu: CALIBRATION.prefill_mfu * 2.0,
        ..CALIBRATION
    };
    assert!(estimate_with(&l, &w(256), &mfu).unwrap().ttft_s < base.ttft_s);
}

/// Requests wait before their first token when the layout, not the loop,
/// bounds what completes: a closed loop far beyond it spends what Little's
/// law leaves of its cycle waiting; an open loop below capacity waits a
/// little, more as it nears capacity, and without bound past it (which
/// fails any TTFT limit); a loop that bounds itself waits none.
#[test]
fn requests_wait_when_the_layout_bounds_what_completes() {
    let l = pd();
    let light = estimate_with(&l, &w(1), &CALIBRATION).unwrap();
    assert_eq!(light.bound, "concurrency");
    assert_eq!(light.queue_s, Some(0.0));
    let heavy = estimate_with(&l, &w(4000), &CALIBRATION).unwrap();
    assert_ne!(heavy.bound, "concurrency", "{heavy:?}");
    let wait = heavy.queue_s.unwrap();
    assert!(wait > 1.0, "{heavy:?}");
    // Little's law: 4000 in flight, each held 4000 / rps seconds: its
    // wait, then the unqueued TTFT, then OSL x TPOT.
    let held = 4000.0 / heavy.requests_per_s;
    let cycle = heavy.ttft_s + 1500.0 * heavy.tpot_ms / 1e3;
    assert!((held - cycle).abs() < 1e-6 * held, "{held} vs {cycle}");
    assert!(heavy.ttft_text().ends_with(" s"), "{}", heavy.ttft_text());
    // An open loop: the wait grows toward capacity, then has no bound.
    let paced = |rate: f64| Workload {
        concurrency: None,
        request_rate: Some(rate),
        ..w(1)
    };
    let capacity = heavy.requests_per_s;
    let slow = estimate_with(&l, &paced(0.3 * capacity), &CALIBRATION).unwrap();
    let busy = estimate_with(&l, &paced(0.97 * capacity), &CALIBRATION).unwrap();
    assert_eq!((slow.bound, busy.bound), ("request rate", "request rate"));
    let (ws, wb) = (slow.queue_s.unwrap(), busy.queue_s.unwrap());
    assert!(ws >= 0.0 && wb > ws, "{ws} then {wb}");
    assert!((busy.ttft_s - wb - (slow.ttft_s - ws)).abs() < 1e-9);
    let over = estimate_with(&l, &paced(2.0 * capacity), &CALIBRATION).unwrap();
    assert_eq!(over.queue_s, None, "{over:?}");
    assert_eq!(over.ttft_text(), "no bound");
    assert_eq!(over.ttft_figure(1e3, 1), "no bound");
    assert_eq!(
        busy.ttft_figure(1e3, 1),
        format!("{:.1}", busy.ttft_s * 1e3)
    );
    assert!(!over.ttft_within(1e9) && busy.ttft_within(busy.ttft_s));
    // Capped by a concurrency, the same rate waits a bounded time.
    let capped = Workload {
        concurrency: Some(64),
        ..paced(2.0 * capacity)
    };
    let c = estimate_with(&l, &capped, &CALIBRATION).unwrap();
    assert!(c.queue_s.is_some_and(f64::is_finite), "{c:?}");
}
