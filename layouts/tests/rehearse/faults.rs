//! The faults: each ends the rehearsal with a failure naming its node and
//! rank, or the cause.

use crate::{MIXED, PD, assert_fails, rehearse};

#[test]
fn a_rank_killed_after_start_stops_its_node_loudly() {
    let run = rehearse(&[PD, "--kill", "2:5"]);
    assert_fails(
        &run,
        &[
            "node 2 (127.0.0.3) decode rank 5 died after start",
            "launch_online_dp.py: error: rank 5 was killed by signal 9",
            "run.sh exited with code 137",
        ],
    );
    let run = rehearse(&[MIXED, "--kill", "1:2"]);
    assert_fails(
        &run,
        &[
            "node 1 (127.0.0.2) mixed rank 2 died after start",
            "run.sh exited with code 137",
        ],
    );
}

#[test]
fn a_port_in_use_fails_that_nodes_preflight() {
    let run = rehearse(&[PD, "--fault", "port-in-use"]);
    assert_fails(
        &run,
        &[
            "node 3 (127.0.0.4, decode ranks 16-31): run.sh exited with code 1",
            "preflight: FAIL ports: already in use: 7100",
            "7100 = decode rank 16's API port",
        ],
    );
}

#[test]
fn a_missing_model_fails_every_preflight() {
    let run = rehearse(&[PD, "--fault", "missing-model"]);
    assert_fails(
        &run,
        &[
            "node 0 (127.0.0.1, prefill ranks 0-1): run.sh exited with code 1",
            "node 3 (127.0.0.4, decode ranks 16-31): run.sh exited with code 1",
            "preflight: FAIL model_dir: weights directory",
        ],
    );
}

/// Another model's weights in the model directory: every node's preflight
/// reads its `config.json` as the image's vLLM does and stops before any
/// model loads, naming what the layout was checked with.
#[test]
fn another_models_weights_fail_every_preflight() {
    let run = rehearse(&[PD, "--fault", "wrong-weights"]);
    assert_fails(
        &run,
        &[
            "node 0 (127.0.0.1, prefill ranks 0-1): run.sh exited with code 1",
            "node 3 (127.0.0.4, decode ranks 16-31): run.sh exited with code 1",
            "preflight: FAIL model_config:",
            "the text model_type is 'pd_rehearse_other_model', the layout's model DeepSeek-V3.1-w8a8-mtp-QuaRot has 'deepseek_v3'",
        ],
    );
    // GLM-4.7's build names no model type: its typed length is judged.
    let run = rehearse(&[
        "glm-4.7-w8a8c8/a3-1p1d-upstream",
        "--fault",
        "wrong-weights",
    ]);
    assert_fails(
        &run,
        &["prefill max_model_len 8192 is above the 1024 vLLM 0.30.0 derives"],
    );
}

#[test]
fn a_wrong_npu_count_fails_that_nodes_preflight() {
    let run = rehearse(&[PD, "--fault", "wrong-npu-count"]);
    assert_fails(
        &run,
        &[
            "node 3 (127.0.0.4, decode ranks 16-31): run.sh exited with code 1",
            "preflight: FAIL npu_count: npu-smi info -l reports 8 NPUs, the layout's hardware has 16",
        ],
    );
}

#[test]
fn an_unreachable_dp_master_fails_the_non_master_ranks() {
    let run = rehearse(&[PD, "--fault", "unreachable-master"]);
    assert_fails(&run, &[]);
    // Every rank of node 3 (16-31) fails alike; which one the launcher sees
    // exit first is a race, so any of them, named consistently, will do.
    let named = (16..=31).any(|r| {
        run.out
            .contains(&format!("launch_online_dp.py: error: rank {r} exited with code 4"))
            && run.out.contains(&format!(
                "node 3 (127.0.0.4) decode rank {r}: vllm stand-in: DP master 127.0.0.3:12321 unreachable after 3s"
            ))
    });
    assert!(named, "no node 3 rank named with its cause in\n{}", run.out);
    let run = rehearse(&[MIXED, "--fault", "unreachable-master"]);
    assert_fails(
        &run,
        &["node 1 (127.0.0.2) mixed rank 2: vllm stand-in: DP master 127.0.0.1:13389 unreachable"],
    );
}

#[test]
fn a_rank_missing_from_the_proxy_lists_fails_naming_it() {
    for policy in ["round-robin", "least-loaded"] {
        let run = rehearse(&[PD, "--fault", "proxy-misses-rank", "--proxy-policy", policy]);
        assert_fails(
            &run,
            &[
                "1 of 36 rank(s) got no request",
                "node 3 decode rank 31 (127.0.0.4:7115)",
                "likely causes, most likely first:\n    1. the running proxy's lists miss 127.0.0.4:7115 (its command line has 4 prefill and 31 decode entries; the layout has 4 and 32)",
            ],
        );
        assert!(!run.out.contains("decode-only fallback"), "{}", run.out);
    }
}

/// A proxy that cannot start is caught by preflight before any model loads;
/// one that exits is restarted a bounded number of times, then node 0 stops
/// naming the cause.
#[test]
fn a_failing_proxy_stops_node_0_naming_the_cause() {
    let run = rehearse(&[PD, "--fault", "missing-proxy-script"]);
    assert_fails(
        &run,
        &[
            "node 0 (127.0.0.1, prefill ranks 0-1): run.sh exited with code 1",
            "preflight: FAIL proxy_script: /nonexistent/load_balance_proxy_server_example.py not found",
        ],
    );
    let run = rehearse(&[PD, "--fault", "proxy-exits"]);
    assert_fails(
        &run,
        &[
            "node 0 (127.0.0.1, prefill ranks 0-1): run.sh exited with code 1",
            "run.sh: error: the proxy exited with code 3, restarted 1 time(s); stopping node 0. Its last output: proxy stand-in: exiting with code 3 on purpose (fault proxy-exits)  (log: ",
        ],
    );
    // Node 0 says the other nodes keep running, and how to stop them.
    assert!(
        run.out.contains("run.sh: the other nodes of deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d keep running; stop them with ./stop.sh on each"),
        "{}",
        run.out
    );
}
