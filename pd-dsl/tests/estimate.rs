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
