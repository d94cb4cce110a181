//! Shapes no registered layout has: prefill context parallelism, and a
//! large synthetic layout.

use crate::rehearse_layout;
use std::time::Duration;

/// Prefill context parallelism: each prefill rank is TP8 x PCP2 = 16 NPUs
/// and 16 handshake ports, with DP 1 (so no `--data-parallel-rank`, which
/// vLLM refuses at DP 1), as upstream's longseq configs run it at v0.23.0.
/// The stand-in checks each rank's `ASCEND_RT_VISIBLE_DEVICES` against
/// `world = tp x pcp` and its kv binds against the layout, and refuses what
/// the image's platform refuses.
#[test]
fn a_pcp_layout_rehearses_end_to_end() {
    use pd_rehearse::rehearsal::Policy;
    let spec = pd_dsl::layout! {
        name: "rehearsal/a3-longseq-pcp",
        model: deepseek_r1_0528_w8a8,
        hardware: a3,
        image: "v0.23.0",
        topology: <prefill 2 x dp1tp8pcp2; decode 1 x dp4tp8;>,
        connector: mooncake_v1 { kv_port: { prefill: [36100, 36200], decode: 36300 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        serve: { expert_parallel: true, trust_remote_code: true, max_model_len: 32768 },
        prefill: { flags: ["--decode-context-parallel-size" = 8, "--cp-kv-cache-interleave-size" = 128] },
        provenance: { recorded: "2026-12-01" },
    };
    let l = pd_dsl::check(&spec).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(l.placement.nodes[0].ranks[0].devices.len(), 16);
    assert_eq!(l.placement.nodes[1].ranks[0].kv_span, Some((36200, 36215)));
    let (outcome, out) = rehearse_layout(&l, |o| o.proxy_policy = Policy::ALL[0]);
    assert!(outcome.passed, "{out}\n{:?}", outcome.failures);
    for needle in [
        format!("PASS {}", l.name()),
        "every prefill and decode rank served".into(),
        "verify.sh: ok".into(),
    ] {
        assert!(out.contains(&needle), "missing {needle:?} in\n{out}");
    }
}

/// `prefill N x dp4tp4; decode N x dp16tp1` on A3 (each engine one node):
/// `2N` nodes, `80N` ranks, from the V4-Flash 1P1D layout. `N = 64` is the
/// 128-node, 1,280-rank layout whose request waves (1,024 at once) the
/// stand-in proxy's accept backlog must take like uvicorn's.
fn synthetic_pd(n: u64) -> pd_dsl::Layout {
    use pd_dsl::{EngineGroup, Role, Spanned};
    let group = |role: Role, count: u64, dp: u64, tp: u64| EngineGroup {
        role: Spanned::bare(role),
        count: Spanned::bare(count),
        dp: Spanned::bare(dp),
        tp: Spanned::bare(tp),
        ..EngineGroup::default()
    };
    let mut spec = layouts::deepseek_v4_flash::a3_1p1d();
    spec.name = Spanned::bare(format!("synthetic/a3-{n}p{n}d"));
    spec.provenance.derived_from = None;
    spec.topology = vec![group(Role::Prefill, n, 4, 4), group(Role::Decode, n, 16, 1)];
    pd_dsl::check(&spec).unwrap_or_else(|e| panic!("{e}"))
}

/// A large layout comes up and serves every wave without a reset: the
/// stand-ins listen with uvicorn's backlog (2048), not `std`'s 128. The
/// size is `PD_REHEARSE_LARGE_N` engines per role, default 32: 64 nodes,
/// 640 ranks, waves of 512 requests at once, about 50 s; with a backlog of
/// 128 it loses about 90 of its 1,536 requests to resets. `64` is the
/// 128-node, 1,280-rank layout (about 110 s and 9 GB here; 312 of 3,072
/// requests reset with a backlog of 128).
#[test]
fn a_large_synthetic_layout_rehearses_green() {
    let n: u64 = std::env::var("PD_REHEARSE_LARGE_N")
        .ok()
        .map(|v| v.parse().expect("PD_REHEARSE_LARGE_N must be a number"))
        .unwrap_or(32);
    let l = synthetic_pd(n);
    assert_eq!(l.node_count() as u64, 2 * n);
    let (outcome, out) = rehearse_layout(&l, |o| o.timeout = Duration::from_secs(240));
    assert!(outcome.passed, "{out}\n{:?}", outcome.failures);
    assert!(
        out.contains("every prefill and decode rank served"),
        "{out}"
    );
    assert_eq!(outcome.requests, 3 * 16 * n as usize, "{out}");
}
