//! Upstream's config forms: internal-DP PD configs with the runner's
//! placeholders, per-node engine ids and settings, settings pd-dsl cannot
//! state, performance baselines and run-time JSON values.

use super::*;

/// An internal-DP PD config (`disaggregated_prefill`), as upstream writes
/// them: the runner's placeholders resolved from the node's envs, one node's
/// own `engine_id`s kept per node, what pd-dsl does otherwise reported.
const INTERNAL_PD: &str = r#"model: "Qwen/Qwen3-235B-A22B"
num_nodes: 3
npu_per_node: 16
env_common: &env_common
  SERVER_PORT: 8080
  OMP_PROC_BIND: false
disaggregated_prefill:
  enabled: true
  prefiller_host_index: [0]
  decoder_host_index: [1, 2]
deployment:
  - envs:
      <<: *env_common
    server_cmd: >
        vllm serve "Qwen/Qwen3-235B-A22B"
        --port $SERVER_PORT
        --data-parallel-size 2 --data-parallel-size-local 2
        --data-parallel-address $LOCAL_IP --data-parallel-rpc-port 13389
        --tensor-parallel-size 8 --enable-expert-parallel --enable-expert-parallel
        --kv-transfer-config
        '{"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_producer", "kv_port": "30000", "engine_id": "0",
        "kv_connector_extra_config": {"prefill": {"dp_size": 2, "tp_size": 8}, "decode": {"dp_size": 4, "tp_size": 8}}}'
  - envs:
      <<: *env_common
    server_cmd: |
        vllm serve "Qwen/Qwen3-235B-A22B" --port $SERVER_PORT
        --data-parallel-size 4 --data-parallel-size-local 2
        --data-parallel-address $LOCAL_IP --data-parallel-rpc-port 13389
        --tensor-parallel-size 8 --enable-expert-parallel
        --kv-transfer-config '{"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_consumer", "kv_port": "30100", "engine_id": "1", "kv_connector_extra_config": {"prefill": {"dp_size": 2, "tp_size": 8}, "decode": {"dp_size": 4, "tp_size": 8}}}'
  - envs:
      <<: *env_common
    server_cmd: >
        vllm serve "Qwen/Qwen3-235B-A22B" --headless
        --data-parallel-size 4 --data-parallel-size-local 2 --data-parallel-start-rank 2
        --data-parallel-address $MASTER_IP --data-parallel-rpc-port 13389
        --tensor-parallel-size 8 --enable-expert-parallel
        --kv-transfer-config '{"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_consumer", "kv_port": "30100", "engine_id": "3", "kv_connector_extra_config": {"prefill": {"dp_size": 2, "tp_size": 8}, "decode": {"dp_size": 4, "tp_size": 8}}}'
"#;

#[test]
fn an_internal_dp_pd_config_imports_with_the_runner_values_and_says_what_differs() {
    let imported = import(&[Input::new("pd.yaml", INTERNAL_PD)], &Options::default()).unwrap();
    let spec = finish(&imported).unwrap();
    // `--port $SERVER_PORT` is the node's `SERVER_PORT`, not vLLM's 8000.
    assert_eq!(spec.ports.api.as_ref().map(|p| p.value), Some(8080));
    // The decode engine spans nodes 1 and 2 (`$MASTER_IP` is the first
    // decoder's address) and keeps each node's own id.
    let ids = spec.engine_ids.as_ref().expect("per-node ids");
    let decode: Vec<Vec<u64>> = ids
        .decode
        .iter()
        .map(|e| e.ids().iter().map(|x| x.value).collect())
        .collect();
    assert_eq!(decode, vec![vec![1, 3]]);
    // The runner's str() of a YAML boolean.
    let env: Vec<(&str, String)> = spec
        .serve
        .env
        .iter()
        .map(|e| (e.name.value.as_str(), format!("{:?}", e.value.value)))
        .collect();
    assert!(
        env.iter()
            .any(|(k, v)| *k == "OMP_PROC_BIND" && v.contains("False")),
        "{env:?}"
    );
    let notes: Vec<&str> = imported.notes.iter().map(|n| n.what.as_str()).collect();
    for want in [
        "internal DP: the input runs one `vllm serve` per node",
        "`--enable-expert-parallel` given twice",
        "env `VLLM_WORKER_MULTIPROC_METHOD=spawn` added",
        "the e2e runner starts the proxy with `python`",
    ] {
        assert!(
            notes.iter().any(|n| n.starts_with(want)),
            "{want}: {notes:#?}"
        );
    }
    // The literal-block command is read whole, not its first line only.
    let printed = pd_dsl::import::print::layout_source(&spec);
    assert!(printed.contains("decode: [[1, 3]]"), "{printed}");
    let yaml = serde_saphyr::to_string(&spec).unwrap();
    let layout = pd_dsl::load::from_yaml("pd.yaml", &yaml).unwrap();
    let node_ids: Vec<Option<u64>> = layout.placement.nodes.iter().map(|n| n.engine_id).collect();
    assert_eq!(node_ids, vec![Some(0), Some(1), Some(3)]);
}

#[test]
fn a_placeholder_the_runner_does_not_fill_is_refused_at_its_position() {
    let text = INTERNAL_PD.replace(
        "--port $SERVER_PORT\n        --data-parallel-size 2",
        "--port $UNKNOWN_PORT\n        --data-parallel-size 2",
    );
    assert_ne!(text, INTERNAL_PD);
    let e = import(&[Input::new("pd.yaml", text.as_str())], &Options::default()).unwrap_err();
    assert!(e.message.contains("$UNKNOWN_PORT"), "{e}");
    assert_eq!(e.line, 16, "{e}");
}

#[test]
fn per_node_engine_ids_must_cover_the_engine_s_nodes() {
    let yaml = |ids: &str| {
        format!(
            "name: t/x\nmodel: qwen3_235b_a22b\nhardware: a3\nimage: v0.23.0\ntopology:\n- {{role: prefill, count: 1, dp: 2, tp: 8}}\n- {{role: decode, count: 1, dp: 4, tp: 8}}\nconnector: {{kind: mooncake_v1, kv_port: {{prefill: [36100], decode: [36200]}}}}\nserve: {{expert_parallel: true}}\nports: {{api: 8080, dp_rpc: 13389}}\nproxy: {{port: 1999}}\nengine_ids: {ids}\nprovenance: {{recorded: \"2026-08-17\"}}\nverified: never\n"
        )
    };
    let ok = pd_dsl::load::from_yaml("x.yaml", &yaml("{prefill: [0], decode: [[1, 3]]}"));
    let layout = ok.unwrap_or_else(|e| panic!("{e}"));
    let ids: Vec<Option<u64>> = layout.placement.nodes.iter().map(|n| n.engine_id).collect();
    assert_eq!(ids, vec![Some(0), Some(1), Some(3)]);
    let short = pd_dsl::load::from_yaml("x.yaml", &yaml("{prefill: [0], decode: [[1, 3, 5]]}"));
    let e = short.expect_err("three ids for two nodes").to_string();
    assert!(
        e.contains("found 3 per-node engine ids for decode engine 0 on 2 nodes"),
        "{e}"
    );
}

#[test]
fn lint_runs_the_rules_past_a_setting_pd_dsl_cannot_state() {
    // The headless decode worker names its own `kv_port`: one engine's ranks
    // take consecutive spans from one base, so the import fails, and lint
    // still reports what the rules find.
    let text = INTERNAL_PD.replace(
        r#""kv_port": "30100", "engine_id": "3""#,
        r#""kv_port": "30300", "engine_id": "3""#,
    );
    assert_ne!(text, INTERNAL_PD);
    let input = [Input::new("pd.yaml", text.as_str())];
    let e = import(&input, &Options::default()).unwrap_err();
    assert!(e.message.contains("`kv_port` 30300 on this node"), "{e}");
    let f = lint(&input, &Options::default());
    assert!(
        f.iter().any(|f| f.level == Level::Error
            && f.rule.is_none()
            && f.message.contains("`kv_port` 30300")),
        "{f:#?}"
    );
    assert!(
        f.iter()
            .any(|f| f.rule.as_deref() == Some("kv_port_in_adxl_range")),
        "{f:#?}"
    );
}

/// A setting one node of an engine runs on its own (the headless worker's
/// `--gpu-memory-utilization`) is that node's: the import states it under
/// `nodes:` and every other setting stays the role's.
#[test]
fn a_per_node_setting_imports_as_that_node_s_block() {
    let text = INTERNAL_PD.replace("--headless\n", "--headless --gpu-memory-utilization 0.9\n");
    assert_ne!(text, INTERNAL_PD);
    let imported = import(&[Input::new("pd.yaml", text.as_str())], &Options::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let spec = finish(&imported).unwrap_or_else(|e| panic!("{e:?}"));
    let node = spec
        .nodes
        .get(&2)
        .expect("the headless decode node is node 2");
    assert_eq!(
        node.gpu_memory_utilization
            .as_ref()
            .map(|g| g.value.as_str()),
        Some("0.9")
    );
    assert_eq!(spec.nodes.len(), 1, "{:?}", spec.nodes.keys());
    let source = pd_dsl::import::print::layout_source(&spec);
    assert!(source.contains("nodes: {"), "{source}");
}

/// An e2e config's performance baselines become the layout's reference
/// figures (every `case_type: performance` case with a number baseline) and
/// its workload (`bench`: the case with the most prompts; aisbench's
/// `request_rate: 0` is no rate limit), with the dataset difference a
/// `deviate`; accuracy cases and the runner's default baseline of 1 are not
/// figures.
#[test]
fn performance_baselines_are_figures_and_the_workload() {
    let path = root().join("configs/a3-v31-2p1d-v1.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text.replace(
        "benchmarks:\n",
        "benchmarks:\n  warm_up:\n    case_type: performance\n    dataset_path: vllm-ascend/GSM8K_prefix90_in131072_bs100_glm\n    num_prompts: 2\n    max_out_len: 1\n    batch_size: 2\n    baseline: 2.5\n  placeholder:\n    case_type: performance\n    dataset_path: vllm-ascend/GSM8K-in3500-bs2800\n    num_prompts: 4\n    max_out_len: 8\n    baseline: 1\n  perf:\n    case_type: performance\n    dataset_path: vllm-ascend/GSM8K_prefix90_in131072_bs100_glm\n    num_prompts: 160\n    max_out_len: 1024\n    batch_size: 40\n    request_rate: 0\n    baseline: 1449.13\n    threshold: 0.95\n",
    );
    let imported = import(&[Input::new("x.yaml", text)], &Options::default()).unwrap();
    let spec = finish(&imported).unwrap();
    let figures: Vec<(&str, &str)> = spec
        .figures
        .iter()
        .map(|f| (f.metric.value.as_str(), f.value.value.as_str()))
        .collect();
    assert_eq!(
        figures,
        [
            ("output throughput", "2.5 tokens/s"),
            ("output throughput", "1449.13 tokens/s")
        ],
        "one figure per performance case, in the order written; a baseline of 1 (the runner's default) is none"
    );
    let ctx = &spec.figures[1].context.value;
    for part in [
        "passes at 0.95 x baseline",
        "input 131072 tokens",
        "90% prefix-cache hits",
        "concurrency 40",
        "no rate limit",
    ] {
        assert!(ctx.contains(part), "{part}: {ctx}");
    }
    let b = spec.bench.as_ref().expect("bench");
    assert_eq!(
        (b.input_len.value, b.output_len.value, b.num_prompts.value),
        (131072, 1024, 160)
    );
    assert_eq!(b.max_concurrency.as_ref().map(|c| c.value), Some(40));
    assert!(b.request_rate.is_none());
    let notes: Vec<&str> = spec
        .deviations
        .iter()
        .map(|d| d.what.value.as_str())
        .filter(|w| w.starts_with("benchmark `"))
        .collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("benchmark `perf` runs aisbench"),
        "{notes:?}"
    );
    // The printed layout carries them and compiles back to the same spec.
    let src = pd_dsl::import::print::layout_source(&spec);
    assert!(
        src.contains(
            "bench: { input_len: 131072, output_len: 1024, num_prompts: 160, max_concurrency: 40 }"
        ),
        "{src}"
    );
}

/// A JSON flag with a value the runner fills is refused naming the key
/// that holds it: upstream's GLM kv-pool configs give `--kv-transfer-config`
/// an `engine_id` of `${DP_RANK}` (one id per DP rank), which no layout
/// form states.
#[test]
fn a_run_time_json_value_names_its_key() {
    let head = "model: vllm-ascend/DeepSeek-V3-W8A8\nnum_nodes: 1\nnpu_per_node: 16\ndeployment:\n";
    for (json, want) in [
        (
            r#"{"kv_connector":"MultiConnector","kv_role":"kv_producer","engine_id":"${DP_RANK}"}"#,
            "in `--kv-transfer-config` (engine_id), an id the runner fills per rank, expected a literal: pd-dsl states engine ids per engine or per node",
        ),
        (
            r#"{"kv_connector":"MooncakeConnectorV1","kv_role":"kv_producer","kv_connector_extra_config":{"x":["a","$HOST"]}}"#,
            "at `kv_connector_extra_config.x.1` in `--kv-transfer-config`, a value filled at run time",
        ),
    ] {
        // Double-quoted in the shell, so `${..}` is expanded at run time.
        let quoted = json.replace('"', "\\\"");
        let text = format!(
            "{head}  - server_cmd: 'vllm serve vllm-ascend/DeepSeek-V3-W8A8 --port 8015 --kv-transfer-config \"{quoted}\"'\n"
        );
        let f = lint(&[Input::new("x.yaml", text.as_str())], &Options::default());
        assert!(f.iter().any(|f| f.message.contains(want)), "{text}\n{f:#?}");
    }
}
