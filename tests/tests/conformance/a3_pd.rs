//! Seed 001: DeepSeek-V3.1 A3 2P1D (tutorial §5.3, A3 tab), verbatim.

use crate::{
    assert_same_serve, assert_seed_env, kv_config, launcher_flags, seed_launcher_lines, seed_serve,
};
use pd_dsl_tests::harness::{
    DryRun, Served, dry_run, flags, one, ranks, render, serve, shell_split,
};
use serde_json::Value;
use std::collections::BTreeMap;

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
