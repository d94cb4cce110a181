//! Conformance to the two seed documents, asserted from the generated
//! artifacts (run.sh in `PD_DRY_RUN=1`, the launcher's `--dry-run`, the role
//! templates and `run_mixed.sh` executed with a recording `vllm` stub) against
//! values written from the seed text — never from our own output.
//!
//! Seed 001 commands are pasted verbatim below (IP placeholders such as
//! `192.xx.xx.1` included: run.sh is given those placeholders as node
//! addresses, so the strings must come out identical).

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl_tests::harness::{
    DryRun, Rendered, Served, dry_run, flags, one, ranks, render, serve, shell_split,
};
use serde_json::Value;
use std::collections::BTreeMap;

/// Parses a seed `vllm serve` command (backslash continuations, `$N`
/// placeholders substituted from `args`), returning its flags.
fn seed_serve(text: &str, args: &[String]) -> (String, BTreeMap<String, Vec<String>>) {
    let mut t = text.to_owned();
    for (i, a) in args.iter().enumerate().rev() {
        t = t.replace(&format!("${}", i + 1), a);
    }
    let argv = shell_split(&t);
    assert_eq!(
        &argv[..2],
        ["vllm", "serve"],
        "seed text is a vllm serve command"
    );
    (argv[2].clone(), flags(&argv[3..]))
}

/// Compares our `vllm serve` argv to the seed's, flag by flag; JSON values
/// compare as JSON. `ignore` lists flags the seed sets that we deliberately
/// derive differently (asserted separately by the caller).
fn assert_same_serve(
    ours: &Served,
    seed: &(String, BTreeMap<String, Vec<String>>),
    ignore: &[&str],
) {
    assert_eq!(ours.argv[0], "serve");
    assert_eq!(ours.argv[1], seed.0, "model path");
    let mine = flags(&ours.argv[2..]);
    for (flag, want) in &seed.1 {
        if ignore.contains(&flag.as_str()) {
            continue;
        }
        let got = mine
            .get(flag)
            .unwrap_or_else(|| panic!("seed flag {flag} {want:?} missing from ours: {mine:?}"));
        match (want.as_slice(), got.as_slice()) {
            ([w], [g]) if w.trim_start().starts_with('{') => {
                let w: Value =
                    serde_json::from_str(w).unwrap_or_else(|e| panic!("seed {flag} JSON: {e}"));
                let g: Value =
                    serde_json::from_str(g).unwrap_or_else(|e| panic!("our {flag} JSON: {e}"));
                assert_eq!(g, w, "{flag}");
            }
            _ => assert_eq!(got, want, "{flag}"),
        }
    }
    for flag in mine.keys() {
        assert!(
            seed.1.contains_key(flag) || ignore.contains(&flag.as_str()),
            "we pass {flag} which the seed does not"
        );
    }
}

/// `export NAME=VALUE` lines of a seed script: what our env must contain.
fn assert_seed_env(ours: &Served, seed_exports: &str, args: &[String]) {
    for line in seed_exports
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("export "))
    {
        let (name, value) = line["export ".len()..].split_once('=').expect("NAME=VALUE");
        let value = value.trim_matches('"');
        let got = ours
            .env
            .get(name)
            .unwrap_or_else(|| panic!("seed exports {name}, ours does not"));
        match value {
            // Socket settings come from run.sh (route to the DP master).
            "$local_ip" | "$nic_name" => {}
            "$1" => assert_eq!(got, &args[0], "{name}"),
            v if v.ends_with(&format!(":${name}")) => {
                let prefix = v.trim_end_matches(&format!(":${name}"));
                assert!(
                    got.starts_with(prefix),
                    "{name}={got} should start with {prefix}"
                );
            }
            v => assert_eq!(got, v, "{name}"),
        }
    }
}

fn kv_config(s: &Served) -> Value {
    let f = flags(&s.argv[2..]);
    serde_json::from_str(&one(&f, "--kv-transfer-config")).expect("kv json")
}

fn seed_launcher_lines(text: &str) -> Vec<BTreeMap<String, Vec<String>>> {
    text.lines()
        .map(str::trim)
        .filter(|l| l.starts_with("python launch_online_dp.py"))
        .map(|l| flags(&shell_split(l)[2..]))
        .collect()
}

/// Our launcher argv without the two flags upstream's launcher lacks.
fn launcher_flags(d: &DryRun) -> BTreeMap<String, Vec<String>> {
    let mut f = flags(&d.node_command[2..]);
    assert!(f.remove("--template").is_some() && f.remove("--log-dir").is_some());
    f
}

// ---------------------------------------------------------------------------
// Seed 001: DeepSeek-V3.1 A3 2P1D (tutorial §5.3, A3 tab), verbatim
// ---------------------------------------------------------------------------

const A3_IPS: [&str; 4] = ["192.xx.xx.1", "192.xx.xx.2", "192.xx.xx.3", "192.xx.xx.4"];

const A3_LAUNCHERS: &str = "
# p0
python launch_online_dp.py --dp-size 2 --tp-size 8 --dp-size-local 2 --dp-rank-start 0 --dp-address 192.xx.xx.1 --dp-rpc-port 12321 --vllm-start-port 7100
# p1
python launch_online_dp.py --dp-size 2 --tp-size 8 --dp-size-local 2 --dp-rank-start 0 --dp-address 192.xx.xx.2 --dp-rpc-port 12321 --vllm-start-port 7100
# d0
python launch_online_dp.py --dp-size 32 --tp-size 1 --dp-size-local 16 --dp-rank-start 0 --dp-address 192.xx.xx.3 --dp-rpc-port 12321 --vllm-start-port 7100
# d1
python launch_online_dp.py --dp-size 32 --tp-size 1 --dp-size-local 16 --dp-rank-start 16 --dp-address 192.xx.xx.3 --dp-rpc-port 12321 --vllm-start-port 7100
";

const A3_PROXY: &str = r"python load_balance_proxy_server_example.py \
  --port 1999 \
  --host 192.xx.xx.1 \
  --prefiller-hosts \
    192.xx.xx.1 \
    192.xx.xx.1 \
    192.xx.xx.2 \
    192.xx.xx.2 \
  --prefiller-ports \
    7100 7101 7100 7101 \
  --decoder-hosts \
    192.xx.xx.3 \
    192.xx.xx.3 \
    192.xx.xx.3 \
    192.xx.xx.3 \
    192.xx.xx.3 \
    192.xx.xx.3 \
    192.xx.xx.3 \
    192.xx.xx.3 \
    192.xx.xx.3 \
    192.xx.xx.3 \
    192.xx.xx.3 \
    192.xx.xx.3 \
    192.xx.xx.3 \
    192.xx.xx.3 \
    192.xx.xx.3 \
    192.xx.xx.3 \
    192.xx.xx.4 \
    192.xx.xx.4 \
    192.xx.xx.4 \
    192.xx.xx.4 \
    192.xx.xx.4 \
    192.xx.xx.4 \
    192.xx.xx.4 \
    192.xx.xx.4 \
    192.xx.xx.4 \
    192.xx.xx.4 \
    192.xx.xx.4 \
    192.xx.xx.4 \
    192.xx.xx.4 \
    192.xx.xx.4 \
    192.xx.xx.4 \
    192.xx.xx.4 \
  --decoder-ports \
    7100 7101 7102 7103 7104 7105 7106 7107 7108 7109 7110 7111 7112 7113 7114 7115 \
    7100 7101 7102 7103 7104 7105 7106 7107 7108 7109 7110 7111 7112 7113 7114 7115";

const A3_PREFILL_EXPORTS: &str = r#"
export HCCL_IF_IP=$local_ip
export GLOO_SOCKET_IFNAME=$nic_name
export TP_SOCKET_IFNAME=$nic_name
export HCCL_SOCKET_IFNAME=$nic_name

export VLLM_RPC_TIMEOUT=3600000
export VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS=30000
export HCCL_EXEC_TIMEOUT=204
export HCCL_CONNECT_TIMEOUT=120

export OMP_PROC_BIND=false
export OMP_NUM_THREADS=10
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export HCCL_BUFFSIZE=256
export TASK_QUEUE_ENABLE=1
export HCCL_OP_EXPANSION_MODE="AIV"
export VLLM_USE_V1=1
export ASCEND_RT_VISIBLE_DEVICES=$1
export LD_LIBRARY_PATH=/usr/local/Ascend/ascend-toolkit/latest/python/site-packages/mooncake:$LD_LIBRARY_PATH
"#;

const A3_PREFILL_NODE0: &str = r#"vllm serve /weights/DeepSeek-V3.1-w8a8-mtp-QuaRot \
    --host 0.0.0.0 \
    --port $2 \
    --data-parallel-size $3 \
    --data-parallel-rank $4 \
    --data-parallel-address $5 \
    --data-parallel-rpc-port $6 \
    --tensor-parallel-size $7 \
    --enable-expert-parallel \
    --seed 1024 \
    --served-model-name deepseek_v3 \
    --max-model-len 65536 \
    --max-num-batched-tokens 16384 \
    --max-num-seqs 8 \
    --enforce-eager \
    --trust-remote-code \
    --gpu-memory-utilization 0.9 \
    --quantization ascend \
    --no-enable-prefix-caching \
    --speculative-config '{"num_speculative_tokens": 1, "method": "mtp"}' \
    --additional-config '{"recompute_scheduler_enable":true}' \
    --kv-transfer-config \
    '{"kv_connector": "MooncakeConnectorV1",
    "kv_role": "kv_producer",
    "kv_port": "30000",
    "kv_connector_extra_config": {
            "prefill": {
                    "dp_size": 2,
                    "tp_size": 8
            },
            "decode": {
                    "dp_size": 32,
                    "tp_size": 1
            }
        }
    }'"#;

const A3_DECODE_EXPORTS: &str = r#"
export VLLM_RPC_TIMEOUT=3600000
export VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS=30000
export HCCL_EXEC_TIMEOUT=204
export HCCL_CONNECT_TIMEOUT=120

export OMP_PROC_BIND=false
export OMP_NUM_THREADS=10
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export HCCL_BUFFSIZE=1100
export TASK_QUEUE_ENABLE=1
export HCCL_OP_EXPANSION_MODE="AIV"
export VLLM_USE_V1=1
export ASCEND_RT_VISIBLE_DEVICES=$1
export LD_LIBRARY_PATH=/usr/local/Ascend/ascend-toolkit/latest/python/site-packages/mooncake:$LD_LIBRARY_PATH
"#;

const A3_DECODE_NODE1: &str = r#"vllm serve /weights/DeepSeek-V3.1-w8a8-mtp-QuaRot \
        --host 0.0.0.0 \
        --port $2 \
        --data-parallel-size $3 \
        --data-parallel-rank $4 \
        --data-parallel-address $5 \
        --data-parallel-rpc-port $6 \
        --tensor-parallel-size $7 \
        --enable-expert-parallel \
        --seed 1024 \
        --served-model-name deepseek_v3 \
        --max-model-len 65536 \
        --max-num-batched-tokens 256 \
        --max-num-seqs 28 \
        --trust-remote-code \
        --gpu-memory-utilization 0.92 \
        --quantization ascend \
        --no-enable-prefix-caching \
        --speculative-config '{"num_speculative_tokens": 1, "method": "mtp"}' \
        --compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' \
        --additional-config '{"recompute_scheduler_enable":true,"multistream_overlap_shared_expert": true,   "finegrained_tp_config": {"lmhead_tensor_parallel_size":16}}' \
        --kv-transfer-config \
        '{"kv_connector": "MooncakeConnectorV1",
        "kv_role": "kv_consumer",
        "kv_port": "30200",
        "kv_connector_extra_config": {
                "prefill": {
                        "dp_size": 2,
                        "tp_size": 8
                },
                "decode": {
                        "dp_size": 32,
                        "tp_size": 1
                }
            }
        }'"#;

/// The tutorial sets no engine_id; ours adds the catalog's (acknowledged in
/// the layout's deviations). Everything else of the JSON must be the seed's.
fn assert_kv_config_matches_seed(
    ours: &Served,
    seed: &(String, BTreeMap<String, Vec<String>>),
    engine_id: &str,
) {
    let mut mine = kv_config(ours);
    let theirs: Value =
        serde_json::from_str(&one(&seed.1, "--kv-transfer-config")).expect("seed kv json");
    assert_eq!(
        mine["engine_id"],
        Value::from(engine_id),
        "derived engine id"
    );
    mine.as_object_mut().expect("object").remove("engine_id");
    assert_eq!(mine, theirs, "kv_transfer_config");
}

#[test]
fn v3_1_a3_2p1d_matches_the_tutorial_node_by_node() {
    let r = render("deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d");
    let seed_launchers = seed_launcher_lines(A3_LAUNCHERS);
    let runs: Vec<DryRun> = (0..4).map(|n| dry_run(&r, n, &A3_IPS)).collect();
    for (n, (d, want)) in runs.iter().zip(&seed_launchers).enumerate() {
        assert_eq!(&launcher_flags(d), want, "launcher arguments of node {n}");
    }
    // Proxy: node 0 only, same flags and lists as the tutorial's proxy.sh.
    let proxy = runs[0]
        .proxy_command
        .as_ref()
        .expect("node 0 runs the proxy");
    assert!(proxy[1].ends_with("/load_balance_proxy_server_example.py"));
    assert_eq!(flags(&proxy[2..]), flags(&shell_split(A3_PROXY)[2..]));
    assert!(runs[1..].iter().all(|d| d.proxy_command.is_none()));

    // Node 0 prefill, rank 0: flags, env and kv_transfer_config.
    let r0 = ranks(&r, &runs[0].node_command);
    assert_eq!(r0.len(), 2);
    let p = serve(
        &r,
        "run_dp_template_prefill.sh",
        &r0[0],
        &[("ENGINE_ID", "0"), ("KV_PORT", "30000")],
    );
    let seed_p = seed_serve(A3_PREFILL_NODE0, &r0[0]);
    assert_same_serve(&p, &seed_p, &["--kv-transfer-config"]);
    assert_kv_config_matches_seed(&p, &seed_p, "0");
    assert_seed_env(&p, A3_PREFILL_EXPORTS, &r0[0]);
    assert_eq!(r0[1][0], "8,9,10,11,12,13,14,15", "rank 1 devices");

    // Node 1 prefill: the tutorial's second prefill engine uses kv_port 30100.
    assert_eq!(
        (runs[1].engine_id.as_deref(), runs[1].kv_port.as_deref()),
        (Some("2"), Some("30100"))
    );
    let r1 = ranks(&r, &runs[1].node_command);
    let p1 = serve(
        &r,
        "run_dp_template_prefill.sh",
        &r1[1],
        &[("ENGINE_ID", "2"), ("KV_PORT", "30100")],
    );
    assert_eq!(kv_config(&p1)["kv_port"], "30100");

    // Node 3 decode (the tutorial's "node 1 (Decode)"), last rank.
    assert_eq!(
        (runs[3].engine_id.as_deref(), runs[3].kv_port.as_deref()),
        (Some("1"), Some("30200"))
    );
    let r3 = ranks(&r, &runs[3].node_command);
    assert_eq!(r3.len(), 16);
    assert_eq!(r3[15][..4], ["15", "7115", "32", "31"]);
    let d = serve(
        &r,
        "run_dp_template_decode.sh",
        &r3[15],
        &[("ENGINE_ID", "1"), ("KV_PORT", "30200")],
    );
    let seed_d = seed_serve(A3_DECODE_NODE1, &r3[15]);
    assert_same_serve(&d, &seed_d, &["--kv-transfer-config"]);
    assert_kv_config_matches_seed(&d, &seed_d, "1");
    assert_seed_env(&d, A3_DECODE_EXPORTS, &r3[15]);
}

// ---------------------------------------------------------------------------
// Seed 001: DeepSeek-V3.1 950DT 2P1D (tutorial §5.3, 950DT tab), verbatim
// ---------------------------------------------------------------------------

/// Node addresses: the tutorial names the DP masters .1 (p0), .2 (p1) and
/// .3 (d0) and leaves the other nodes unnamed; they get their launcher
/// comment's name.
const A5_IPS: [&str; 8] = [
    "192.xx.xx.1",
    "p0_1",
    "192.xx.xx.2",
    "p1_1",
    "192.xx.xx.3",
    "d0_1",
    "d0_2",
    "d0_3",
];

const A5_LAUNCHERS: &str = "
# p0_0
python launch_online_dp.py --dp-size 4 --tp-size 4 --dp-size-local 2 --dp-rank-start 0 --dp-address 192.xx.xx.1 --dp-rpc-port 12321 --vllm-start-port 7100
# p0_1
python launch_online_dp.py --dp-size 4 --tp-size 4 --dp-size-local 2 --dp-rank-start 2 --dp-address 192.xx.xx.1 --dp-rpc-port 12321 --vllm-start-port 7100
# p1_0
python launch_online_dp.py --dp-size 4 --tp-size 4 --dp-size-local 2 --dp-rank-start 0 --dp-address 192.xx.xx.2 --dp-rpc-port 12321 --vllm-start-port 7100
# p1_1
python launch_online_dp.py --dp-size 4 --tp-size 4 --dp-size-local 2 --dp-rank-start 2 --dp-address 192.xx.xx.2 --dp-rpc-port 12321 --vllm-start-port 7100
# d0_0
python launch_online_dp.py --dp-size 32 --tp-size 1 --dp-size-local 8 --dp-rank-start 0 --dp-address 192.xx.xx.3 --dp-rpc-port 12321 --vllm-start-port 7100
# d0_1
python launch_online_dp.py --dp-size 32 --tp-size 1 --dp-size-local 8 --dp-rank-start 8 --dp-address 192.xx.xx.3 --dp-rpc-port 12321 --vllm-start-port 7100
# d0_2
python launch_online_dp.py --dp-size 32 --tp-size 1 --dp-size-local 8 --dp-rank-start 16 --dp-address 192.xx.xx.3 --dp-rpc-port 12321 --vllm-start-port 7100
# d0_3
python launch_online_dp.py --dp-size 32 --tp-size 1 --dp-size-local 8 --dp-rank-start 24 --dp-address 192.xx.xx.3 --dp-rpc-port 12321 --vllm-start-port 7100
";

const A5_PREFILL: &str = r#"vllm serve /weight/dsk_v3.1-T-w8a8c8_attn-0506-full/  \
--host 0.0.0.0 \
--port $2 \
--data-parallel-size $3 \
--data-parallel-rank $4 \
--data-parallel-address $5 \
--data-parallel-rpc-port $6 \
--tensor-parallel-size $7 \
--max_model_len 135168 \
--max-num-batched-tokens 16384 \
--served-model-name dsv3 \
--gpu-memory-utilization 0.9 \
--enable-expert-parallel \
--async-scheduling \
--max-num-seqs 128 \
--no-enable-prefix-caching \
--trust-remote-code \
--enforce-eager \
--speculative-config '{"num_speculative_tokens": 1,"method": "deepseek_mtp"}' \
--quantization ascend \
--kv-transfer-config \
    '{"kv_connector": "MooncakeConnectorV1",
    "kv_role": "kv_producer",
    "kv_port": "30100",
    "engine_id": "1",
    "kv_connector_extra_config": {
                "prefill": {
                        "dp_size": 4,
                        "tp_size": 4
                },
                "decode": {
                        "dp_size": 32,
                        "tp_size": 1
                },
                "ascend_local_comm_res_path": "/etc/hixlep"
        }
    }' \
--additional-config '{"enable_cpu_binding":"True","multistream_overlap_shared_expert":false,"enable_shared_expert_dp":true,"enable_mlapo":true,"eplb_config":{"dynamic_eplb": true, "expert_heat_collection_interval": 50, "algorithm_execution_interval": 5, "eplb_policy_type": 2, "num_redundant_experts":16}}'"#;

const A5_PREFILL_EXPORTS: &str = r#"
export HCCL_IF_IP=$local_ip
export GLOO_SOCKET_IFNAME=$nic_name
export TP_SOCKET_IFNAME=$nic_name
export HCCL_SOCKET_IFNAME=$nic_name

export VLLM_RPC_TIMEOUT=3600000
export VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS=30000
export HCCL_EXEC_TIMEOUT=204
export HCCL_CONNECT_TIMEOUT=120
export HCCL_BUFFSIZE=1024

export OMP_PROC_BIND=false
export OMP_NUM_THREADS=10
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export TASK_QUEUE_ENABLE=1

export DYNAMIC_EPLB="true"

export ASCEND_RT_VISIBLE_DEVICES=$1
"#;

const A5_DECODE: &str = r#"vllm serve /weight/dsk_v3.1-T-w8a8c8_attn-0506-full/ \
--host 0.0.0.0 \
--port $2 \
--data-parallel-size $3 \
--data-parallel-rank $4 \
--data-parallel-address $5 \
--data-parallel-rpc-port $6 \
--tensor-parallel-size $7 \
--max_model_len 135168 \
--max-num-batched-tokens 256 \
--served-model-name dsv3 \
--gpu-memory-utilization 0.9 \
--enable-expert-parallel \
--async-scheduling \
--max-num-seqs 96 \
--no-enable-prefix-caching \
--trust-remote-code \
--safetensors-load-strategy 'prefetch' \
--compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' \
--speculative-config '{"num_speculative_tokens": 1, "method": "deepseek_mtp"}' \
--quantization ascend \
--kv-transfer-config \
    '{"kv_connector": "MooncakeConnectorV1",
    "kv_role": "kv_consumer",
    "kv_port": "30300",
    "engine_id": "3",
    "kv_connector_extra_config": {
                "prefill": {
                        "dp_size": 4,
                        "tp_size": 4
                },
                "decode": {
                        "dp_size": 32,
                        "tp_size": 1
                },
                "ascend_local_comm_res_path": "/etc/hixlep"
        }
    }' \
--additional_config '{"enable_cpu_binding": "True", "recompute_scheduler_enable": true, "multistream_overlap_shared_expert": true, "enable_mlapo": true, "finegrained_tp_config": {"lmhead_tensor_parallel_size":8}}'"#;

const A5_DECODE_EXPORTS: &str = r#"
export VLLM_RPC_TIMEOUT=3600000
export VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS=30000
export HCCL_EXEC_TIMEOUT=204
export HCCL_CONNECT_TIMEOUT=120
export HCCL_BUFFSIZE=1024

export OMP_PROC_BIND=false
export OMP_NUM_THREADS=10
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export TASK_QUEUE_ENABLE=1
export ASCEND_RT_VISIBLE_DEVICES=$1
"#;

#[test]
fn v3_1_950dt_2p1d_matches_the_tutorial_node_by_node() {
    let r = render("deepseek-v3.1-w8a8c8-mxfp8/950dt-2p1d");
    let seed_launchers = seed_launcher_lines(A5_LAUNCHERS);
    assert_eq!(seed_launchers.len(), 8);
    let runs: Vec<DryRun> = (0..8).map(|n| dry_run(&r, n, &A5_IPS)).collect();
    for (n, (d, want)) in runs.iter().zip(&seed_launchers).enumerate() {
        assert_eq!(&launcher_flags(d), want, "launcher arguments of node {n}");
    }
    // The tutorial's engine ids and kv ports, kept as overrides.
    let ids: Vec<(Option<&str>, Option<&str>)> = runs
        .iter()
        .map(|d| (d.engine_id.as_deref(), d.kv_port.as_deref()))
        .collect();
    assert_eq!(&ids[..4], [(Some("1"), Some("30100")); 4]);
    assert_eq!(&ids[4..], [(Some("3"), Some("30300")); 4]);

    // p0_1 (node 1), its second rank: global rank 3, devices 4-7.
    let r1 = ranks(&r, &runs[1].node_command);
    assert_eq!(r1[1][..4], ["4,5,6,7", "7101", "4", "3"]);
    let p = serve(
        &r,
        "run_dp_template_prefill.sh",
        &r1[1],
        &[("ENGINE_ID", "1"), ("KV_PORT", "30100")],
    );
    let seed_p = seed_serve(A5_PREFILL, &r1[1]);
    assert_same_serve(&p, &seed_p, &[]);
    assert_seed_env(&p, A5_PREFILL_EXPORTS, &r1[1]);

    // d0_3 (node 7), first rank: global rank 24.
    let r7 = ranks(&r, &runs[7].node_command);
    assert_eq!(r7.len(), 8);
    assert_eq!(r7[0][..5], ["0", "7100", "32", "24", "192.xx.xx.3"]);
    let d = serve(
        &r,
        "run_dp_template_decode.sh",
        &r7[0],
        &[("ENGINE_ID", "3"), ("KV_PORT", "30300")],
    );
    let seed_d = seed_serve(A5_DECODE, &r7[0]);
    assert_same_serve(&d, &seed_d, &[]);
    assert_seed_env(&d, A5_DECODE_EXPORTS, &r7[0]);
    assert!(
        !d.env.contains_key("DYNAMIC_EPLB"),
        "EPLB env is prefill-only in the tutorial"
    );

    // The proxy lists every rank once (acknowledged deviation from the
    // tutorial's reuse of the A3 lists): 4 prefill nodes x 2, 4 decode x 8.
    let proxy = flags(&runs[0].proxy_command.as_ref().expect("proxy")[2..]);
    let hosts = &proxy["--prefiller-hosts"];
    assert_eq!(hosts.len(), 8);
    assert_eq!(hosts[..2], ["192.xx.xx.1", "192.xx.xx.1"]);
    assert_eq!(hosts[6..], ["p1_1", "p1_1"]);
    assert_eq!(proxy["--decoder-hosts"].len(), 32);
    assert_eq!(proxy["--decoder-ports"][31], "7107");
}

// ---------------------------------------------------------------------------
// Seed 001: mixed layouts (tutorial §5.1 and §5.2), verbatim
// ---------------------------------------------------------------------------

const A2_NODE0: &str = r#"vllm serve /weights/DeepSeek-V3.1-w8a8-mtp-QuaRot --additional-config '{"scheduler_config":{"enable_balance_scheduling":true}}' \
--host 0.0.0.0 \
--port 8004 \
--data-parallel-size 4 \
--data-parallel-size-local 2 \
--data-parallel-address $node0_ip \
--data-parallel-rpc-port 13389 \
--tensor-parallel-size 4 \
--quantization ascend \
--seed 1024 \
--served-model-name deepseek_v3 \
--enable-expert-parallel \
--max-num-seqs 16 \
--max-model-len 16384 \
--max-num-batched-tokens 4096 \
--trust-remote-code \
--no-enable-prefix-caching \
--gpu-memory-utilization 0.92 \
--speculative-config '{"num_speculative_tokens": 3, "method": "mtp"}' \
--compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}'"#;

const A2_NODE1: &str = r#"vllm serve /weights/DeepSeek-V3.1-w8a8-mtp-QuaRot --additional-config '{"scheduler_config":{"enable_balance_scheduling":true}}' \
--host 0.0.0.0 \
--port 8004 \
--headless \
--data-parallel-size 4 \
--data-parallel-size-local 2 \
--data-parallel-start-rank 2 \
--data-parallel-address $node0_ip \
--data-parallel-rpc-port 13389 \
--tensor-parallel-size 4 \
--quantization ascend \
--seed 1024 \
--served-model-name deepseek_v3 \
--enable-expert-parallel \
--max-num-seqs 16 \
--max-model-len 16384 \
--max-num-batched-tokens 4096 \
--trust-remote-code \
--no-enable-prefix-caching \
--gpu-memory-utilization 0.92 \
--speculative-config '{"num_speculative_tokens": 3, "method": "mtp"}' \
--compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}'"#;

const A2_EXPORTS: &str = r#"
export HCCL_IF_IP=$local_ip
export GLOO_SOCKET_IFNAME=$nic_name
export TP_SOCKET_IFNAME=$nic_name
export HCCL_SOCKET_IFNAME=$nic_name
export OMP_PROC_BIND=false
export OMP_NUM_THREADS=1
export HCCL_BUFFSIZE=200
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export HCCL_INTRA_PCIE_ENABLE=1
export HCCL_INTRA_ROCE_ENABLE=0
"#;

/// Runs a mixed node: run.sh's dry run names `run_mixed.sh` and its args.
fn mixed_node(r: &Rendered, node: usize, ips: &[&str]) -> Served {
    let d = dry_run(r, node, ips);
    assert!(
        d.node_command[0].ends_with("/run_mixed.sh"),
        "{:?}",
        d.node_command
    );
    assert!(d.engine_id.is_none() && d.proxy_command.is_none());
    serve(r, "run_mixed.sh", &d.node_command[1..], &[])
}

#[test]
fn v3_1_a2_two_node_native_dp_matches_the_tutorial() {
    let r = render("deepseek-v3.1-w8a8-mtp-quarot/a2x2-mixed-dp4tp4");
    let ips = ["10.0.0.1", "10.0.0.2"];
    for (n, seed) in [A2_NODE0, A2_NODE1].into_iter().enumerate() {
        let ours = mixed_node(&r, n, &ips);
        let seed = seed_serve(&seed.replace("$node0_ip", ips[0]), &[]);
        assert_same_serve(&ours, &seed, &[]);
        assert_seed_env(&ours, A2_EXPORTS, &[]);
        assert_eq!(ours.env["ASCEND_RT_VISIBLE_DEVICES"], "0,1,2,3,4,5,6,7");
    }
}

const A3_SINGLE: &str = r#"vllm serve /weights/DeepSeek-V3.1-w8a8-mtp-QuaRot \
--host 0.0.0.0 \
--port 8015 \
--data-parallel-size 4 \
--tensor-parallel-size 4 \
--quantization ascend \
--seed 1024 \
--served-model-name deepseek_v3 \
--enable-expert-parallel \
--max-num-seqs 16 \
--max-model-len 16384 \
--max-num-batched-tokens 4096 \
--trust-remote-code \
--no-enable-prefix-caching \
--gpu-memory-utilization 0.92 \
--speculative-config '{"num_speculative_tokens": 3, "method": "mtp"}' \
--compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' \
--additional-config '{"scheduler_config":{"enable_balance_scheduling":true}}'"#;

const A3_SINGLE_EXPORTS: &str = r#"
export HCCL_OP_EXPANSION_MODE="AIV"

export HCCL_IF_IP=$local_ip
export GLOO_SOCKET_IFNAME=$nic_name
export TP_SOCKET_IFNAME=$nic_name
export HCCL_SOCKET_IFNAME=$nic_name
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
"#;

const A5_SINGLE: &str = r#"vllm serve /weight/dsk-v3.1-w4a4_mlp-w8a8c8_attn-0618-full \
--host 0.0.0.0 \
--port 8015 \
--max_model_len 135168 \
--max-num-batched-tokens 16384 \
--served-model-name deepseek_v3 \
--gpu-memory-utilization 0.9 \
--data-parallel-size 1 \
--tensor-parallel-size 8 \
--enable-expert-parallel \
--async-scheduling \
--max-num-seqs 96 \
--no-enable-prefix-caching \
--trust-remote-code \
--compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}' \
--speculative-config '{"num_speculative_tokens": 3,"method": "deepseek_mtp"}' \
--quantization ascend \
--additional_config '{"enable_cpu_binding": true, "multistream_overlap_shared_expert": true, "enable_balance_scheduling": true,"enable_mlapo":true}'"#;

const A5_SINGLE_EXPORTS: &str = r#"
export HCCL_BUFFSIZE=512
export HCCL_CONNECT_TIMEOUT=600
export HCCL_EXEC_TIMEOUT=600

export OMP_PROC_BIND=false
export OMP_NUM_THREADS=10
export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True
export TASK_QUEUE_ENABLE=1
"#;

#[test]
fn v3_1_single_node_layouts_match_the_tutorial() {
    for (name, seed, exports) in [
        (
            "deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp4tp4",
            A3_SINGLE,
            A3_SINGLE_EXPORTS,
        ),
        (
            "deepseek-v3.1-w4a4c8-mxfp4/950dt-1node-tp8",
            A5_SINGLE,
            A5_SINGLE_EXPORTS,
        ),
    ] {
        let r = render(name);
        let ours = mixed_node(&r, 0, &["10.0.0.1"]);
        assert_same_serve(&ours, &seed_serve(seed, &[]), &[]);
        assert_seed_env(&ours, exports, &[]);
    }
}

// ---------------------------------------------------------------------------
// Seed 000: DeepSeek-V4-Flash-w8a8-mtp on A3 (the catalog page's facts)
// ---------------------------------------------------------------------------

/// One seed-000 PD entry: written from the page's text.
struct V4Entry {
    name: &'static str,
    /// "fans N prefill + M decode endpoints".
    endpoints: (usize, usize),
    /// "engine_id 0/2/4", "engine_id 1/3/5", per node in node order.
    engine_ids: &'static [&'static str],
    /// kv port per node in node order.
    kv_ports: &'static [&'static str],
    connector: &'static str,
    /// kv_connector_extra_config "prefill{dp 4,tp 4}/decode{dp 16,tp 1}".
    extra: (u64, u64, u64, u64),
}

const V4_PD: [V4Entry; 5] = [
    V4Entry {
        name: "deepseek-v4-flash-w8a8-mtp/a3-1p1d",
        endpoints: (4, 16),
        engine_ids: &["0", "1"],
        kv_ports: &["36000", "36100"],
        connector: "MooncakeHybridConnector",
        extra: (4, 4, 16, 1),
    },
    V4Entry {
        name: "deepseek-v4-flash-w8a8-mtp/a3-1p3d",
        endpoints: (4, 48),
        engine_ids: &["0", "1", "3", "5"],
        kv_ports: &["36000", "36100", "36100", "36100"],
        connector: "MooncakeHybridConnector",
        extra: (4, 4, 16, 1),
    },
    V4Entry {
        name: "deepseek-v4-flash-w8a8-mtp/a3-2p2d",
        endpoints: (8, 32),
        engine_ids: &["0", "2", "1", "3"],
        kv_ports: &["36000", "36000", "36100", "36100"],
        connector: "MooncakeHybridConnector",
        extra: (4, 4, 16, 1),
    },
    V4Entry {
        name: "deepseek-v4-flash-w8a8-mtp/a3-3p1d",
        endpoints: (12, 16),
        engine_ids: &["0", "2", "4", "1"],
        kv_ports: &["36000", "36000", "36000", "36100"],
        connector: "MooncakeHybridConnector",
        extra: (4, 4, 16, 1),
    },
    V4Entry {
        name: "deepseek-v4-flash-w8a8-mtp/a3-2p1d-v1",
        endpoints: (32, 32),
        engine_ids: &["0", "2", "1", "1"],
        kv_ports: &["30000", "30100", "30200", "30200"],
        connector: "MooncakeConnectorV1",
        extra: (16, 1, 32, 1),
    },
];

#[test]
fn v4_flash_pd_layouts_carry_the_catalog_page_facts() {
    let ips = ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"];
    for e in &V4_PD {
        let r = render(e.name);
        let nodes = e.engine_ids.len();
        let runs: Vec<DryRun> = (0..nodes).map(|n| dry_run(&r, n, &ips[..nodes])).collect();
        let proxy = flags(
            &runs[0]
                .proxy_command
                .as_ref()
                .expect("node 0 runs the proxy")[2..],
        );
        assert_eq!(
            (
                proxy["--prefiller-ports"].len(),
                proxy["--decoder-ports"].len()
            ),
            e.endpoints,
            "{}: proxy fan-out",
            e.name
        );
        for (n, d) in runs.iter().enumerate() {
            assert_eq!(
                d.engine_id.as_deref(),
                Some(e.engine_ids[n]),
                "{} node {n} engine_id",
                e.name
            );
            assert_eq!(
                d.kv_port.as_deref(),
                Some(e.kv_ports[n]),
                "{} node {n} kv_port",
                e.name
            );
            // The template of the node's first rank: connector, role, shapes.
            let rank0 = &ranks(&r, &d.node_command)[0];
            let role = if d
                .node_command
                .iter()
                .any(|a| a.ends_with("run_dp_template_prefill.sh"))
            {
                "prefill"
            } else {
                "decode"
            };
            let s = serve(
                &r,
                &format!("run_dp_template_{role}.sh"),
                rank0,
                &[("ENGINE_ID", e.engine_ids[n]), ("KV_PORT", e.kv_ports[n])],
            );
            let kv = kv_config(&s);
            assert_eq!(kv["kv_connector"], e.connector);
            assert_eq!(
                kv["kv_role"],
                if role == "prefill" {
                    "kv_producer"
                } else {
                    "kv_consumer"
                }
            );
            assert_eq!(kv["engine_id"], e.engine_ids[n]);
            assert_eq!(kv["kv_port"], e.kv_ports[n]);
            let x = &kv["kv_connector_extra_config"];
            assert_eq!(
                (
                    x["prefill"]["dp_size"].as_u64(),
                    x["prefill"]["tp_size"].as_u64(),
                    x["decode"]["dp_size"].as_u64(),
                    x["decode"]["tp_size"].as_u64()
                ),
                (
                    Some(e.extra.0),
                    Some(e.extra.1),
                    Some(e.extra.2),
                    Some(e.extra.3)
                ),
                "{} node {n}: extra-config shapes identical on every engine",
                e.name
            );
            // v0.21.0rc1 refresh: mtp with enforce_eager; the seed-000
            // deployment deviations; none of the dead toggles.
            let spec: Value =
                serde_json::from_str(&one(&flags(&s.argv[2..]), "--speculative-config"))
                    .expect("json");
            assert_eq!(spec["method"], "mtp");
            assert_eq!(spec["enforce_eager"], true);
            let tokens = if e.name.ends_with("2p1d-v1") && role == "decode" {
                2
            } else {
                1
            };
            assert_eq!(spec["num_speculative_tokens"], tokens, "{} {role}", e.name);
            assert_eq!(s.argv[1], "/root/model");
            assert!(s.env["LD_LIBRARY_PATH"].starts_with("/usr/local/lib"));
            for dead in [
                "ACL_OP_INIT_MODE",
                "ASCEND_A3_ENABLE",
                "USE_MULTI_BLOCK_POOL",
                "VLLM_ASCEND_ENABLE_FUSED_MC2",
                "USE_MULTI_GROUPS_KV_CACHE",
            ] {
                assert!(
                    !s.env.contains_key(dead),
                    "{}: dead toggle {dead} exported",
                    e.name
                );
            }
        }
        // API ports: prefill instances 7100..7103, decode 7100..7115.
        let p = &proxy["--prefiller-ports"];
        assert_eq!(p.first().map(String::as_str), Some("7100"));
        let last_p = if e.extra.0 == 4 { "7103" } else { "7115" };
        assert_eq!(p.last().map(String::as_str), Some(last_p));
        assert_eq!(
            proxy["--decoder-ports"].last().map(String::as_str),
            Some("7115")
        );
    }
}

#[test]
fn v4_flash_mixed_layouts_carry_the_catalog_page_facts() {
    // Single node DP4 x TP4 with one API server on 8900.
    let r = render("deepseek-v4-flash-w8a8-mtp/a3-1node-dp4tp4");
    let s = mixed_node(&r, 0, &["10.0.0.1"]);
    let f = flags(&s.argv[2..]);
    assert_eq!(
        (
            one(&f, "--data-parallel-size"),
            one(&f, "--tensor-parallel-size")
        ),
        ("4".into(), "4".into())
    );
    assert_eq!(one(&f, "--port"), "8900");
    assert_eq!(one(&f, "--api-server-count"), "1");

    // 2x A3 DP8 x TP4: `--data-parallel-size 8 --data-parallel-size-local 4`,
    // the second node `--headless --data-parallel-start-rank 4`.
    let r = render("deepseek-v4-flash-w8a8-mtp/a3x2-mixed-dp8tp4");
    let ips = ["10.0.0.1", "10.0.0.2"];
    let n0 = flags(&mixed_node(&r, 0, &ips).argv[2..]);
    let n1s = mixed_node(&r, 1, &ips);
    let n1 = flags(&n1s.argv[2..]);
    for f in [&n0, &n1] {
        assert_eq!(one(f, "--data-parallel-size"), "8");
        assert_eq!(one(f, "--data-parallel-size-local"), "4");
        assert_eq!(one(f, "--data-parallel-address"), "10.0.0.1");
        assert_eq!(one(f, "--tensor-parallel-size"), "4");
    }
    assert!(!n0.contains_key("--headless") && n1.contains_key("--headless"));
    assert_eq!(one(&n1, "--data-parallel-start-rank"), "4");
    let spec: Value = serde_json::from_str(&one(&n1, "--speculative-config")).expect("json");
    assert_eq!(
        (spec["method"].as_str(), spec["enforce_eager"].as_bool()),
        (Some("mtp"), Some(true))
    );
    for dead in [
        "ACL_OP_INIT_MODE",
        "ASCEND_A3_ENABLE",
        "USE_MULTI_BLOCK_POOL",
        "VLLM_ASCEND_ENABLE_FUSED_MC2",
        "USE_MULTI_GROUPS_KV_CACHE",
    ] {
        assert!(!n1s.env.contains_key(dead), "dead toggle {dead} exported");
    }
}

#[test]
fn seed_000_provenance_verification_and_guidance_reach_the_docs() {
    let catalog = layouts::catalog().unwrap_or_else(|e| panic!("{e}"));
    let index = pd_dsl::render::render_catalog(catalog).expect("render");
    let page = &index
        .iter()
        .find(|a| a.path.as_os_str() == "README.md")
        .expect("index page")
        .contents;
    // Written from seed 000: recorded dates per entry and the page notes.
    for (name, date) in [
        ("deepseek-v4-flash-w8a8-mtp/a3-1node-dp4tp4", "2026-06-27"),
        ("deepseek-v4-flash-w8a8-mtp/a3-1p1d", "2026-06-27"),
        ("deepseek-v4-flash-w8a8-mtp/a3-1p3d", "2026-06-30"),
        ("deepseek-v4-flash-w8a8-mtp/a3x2-mixed-dp8tp4", "2026-06-27"),
        ("deepseek-v4-flash-w8a8-mtp/a3-2p1d-v1", "2026-06-27"),
        ("deepseek-v4-flash-w8a8-mtp/a3-2p2d", "2026-06-30"),
        ("deepseek-v4-flash-w8a8-mtp/a3-3p1d", "2026-06-30"),
    ] {
        let l = catalog
            .iter()
            .find(|l| l.name() == name)
            .expect("registered");
        assert_eq!(l.spec.provenance.recorded.value, date, "{name}");
        assert_eq!(l.image.tag, "v0.21.0rc1");
        assert!(
            !l.verified,
            "{name}: no seed-000 layout is verified on v0.21.0rc1"
        );
        assert!(page.contains(name), "index lists {name}");
    }
    assert!(page.contains("此页面不重新认定硬件验证结果"));
    assert!(
        page.contains("历史使用基线不代表当前镜像已经跑通")
            || page.contains("does not mean the current image")
    );
    // The fan-outs say they are derived and not separately validated, and
    // carry their workload guidance.
    let readme = |name: &str| -> String {
        let l = catalog
            .iter()
            .find(|l| l.name() == name)
            .expect("registered");
        pd_dsl::render::render_layout(l)
            .expect("render")
            .into_iter()
            .find(|a| a.path.ends_with("README.md"))
            .expect("README")
            .contents
    };
    for (name, guidance) in [
        (
            "deepseek-v4-flash-w8a8-mtp/a3-1p3d",
            "short prompts, long outputs",
        ),
        (
            "deepseek-v4-flash-w8a8-mtp/a3-3p1d",
            "long prompts, short outputs",
        ),
    ] {
        let text = readme(name);
        assert!(text.contains("not separately validated"), "{name}");
        assert!(text.contains(guidance), "{name}");
        assert!(
            text.contains("kv_port_on_adxl_edge"),
            "{name}: acknowledged deviation listed"
        );
        assert!(
            text.contains("/root/model"),
            "{name}: model path deviation listed"
        );
    }
    let v1 = readme("deepseek-v4-flash-w8a8-mtp/a3-2p1d-v1");
    assert!(v1.contains("kv_port_in_adxl_range") && v1.contains("connector_hybrid_kv"));
    assert!(v1.contains("deepseek_mtp -> mtp"));
    // Seed 001's published figures, with the hardware they came from.
    let a3 = readme("deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d");
    for fig in ["6.16 s", "48.82 ms", "478 TPS per card", "A3-752T"] {
        assert!(a3.contains(fig), "figure {fig}");
    }
    // The accuracy figures need `max_model_len` >= 35000 (tutorial §5.1):
    // they sit on a one-node layout long enough for them, and the 16384-token
    // base says it is too short.
    let single = readme("deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp4tp4");
    assert!(!single.contains("90.94") && !single.contains("96.28"));
    assert!(single.contains("too short") && single.contains("35000"));
    let long = readme("deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp4tp4-3.5k-throughput");
    assert!(long.contains("90.94") && long.contains("96.28") && long.contains(">= 35000"));
}
