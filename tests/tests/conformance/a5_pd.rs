//! Seed 001: DeepSeek-V3.1 950DT 2P1D (tutorial §5.3, 950DT tab), verbatim.

use crate::{assert_same_serve, assert_seed_env, launcher_flags, seed_launcher_lines, seed_serve};
use pd_dsl_tests::harness::{DryRun, dry_run, flags, ranks, render, serve};

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
