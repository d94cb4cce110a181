//! Seed 001: mixed layouts (tutorial §5.1 and §5.2), verbatim.

use crate::{assert_same_serve, assert_seed_env, seed_serve};
use pd_dsl_tests::harness::{Rendered, Served, dry_run, render, serve};

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
pub(crate) fn mixed_node(r: &Rendered, node: usize, ips: &[&str]) -> Served {
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
