//! End-to-end tests of the stand-in binaries. Every wait is bounded and every
//! child is killed by a guard on every path.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod node;
mod proxy;
mod vllm;
mod vllm_parallel;

use pd_rehearse::http;
use serde_json::json;
use std::io::Read;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;
use std::time::{Duration, Instant};

const VLLM: &str = env!("CARGO_BIN_EXE_vllm");
const PROXY: &str = env!("CARGO_BIN_EXE_pd-proxy");
const NPU_SMI: &str = env!("CARGO_BIN_EXE_npu-smi");
const HCCN: &str = env!("CARGO_BIN_EXE_hccn_tool");

/// Writes a Qwen3.5-397B ModelSlim build's weights directory at `dir`: its
/// `config.json` with what vLLM sizes the Mamba state from (the
/// architecture, the model types, the Gated-DeltaNet dimensions in
/// `text_config`: 64 value heads of 128 x 128 key dims in float32, 2 KV
/// heads of 256) and the ModelSlim description `--quantization ascend`
/// needs.
fn qwen3_5_weights(dir: &std::path::Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("config.json"),
        r#"{"architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe",
            "text_config": {"model_type": "qwen3_5_moe_text", "linear_num_key_heads": 16,
            "linear_num_value_heads": 64, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
            "linear_conv_kernel_dim": 4, "mamba_ssm_dtype": "float32", "num_key_value_heads": 2,
            "head_dim": 256}}"#,
    )
    .unwrap();
    std::fs::write(dir.join("quant_model_description.json"), "{}").unwrap();
}

/// A DeepSeek-V3 ModelSlim build's weights directory, written once per test
/// process: the `config.json` vLLM reads first and the description
/// `--quantization ascend` needs.
fn dsv3_weights() -> String {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir()
            .join(format!("pd-standins-{}", std::process::id()))
            .join("dsv3");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("config.json"),
            r#"{"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3"}"#,
        )
        .unwrap();
        std::fs::write(dir.join("quant_model_description.json"), "{}").unwrap();
        dir
    })
    .display()
    .to_string()
}

/// Kills and reaps its child on drop.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Guard {
    /// Waits for exit up to `limit`; `None` if still running.
    fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Ok(Some(s)) = self.0.try_wait() {
                return Some(s);
            }
            thread::sleep(Duration::from_millis(20));
        }
        None
    }

    fn stderr(&mut self) -> String {
        let mut s = String::new();
        if let Some(e) = self.0.stderr.as_mut() {
            let _ = e.read_to_string(&mut s);
        }
        s
    }
}

/// Ports handed out by this test process: a private counter below the
/// ephemeral range, so two tests never get the same port (the OS may hand a
/// just-released ephemeral port to a concurrent test).
static NEXT_PORT: AtomicU32 = AtomicU32::new(0);

/// A base for `n` consecutive free ports.
fn free_span(n: u16) -> u16 {
    let start = 21000 + (std::process::id() % 150) * 60;
    for _ in 0..200 {
        let off = NEXT_PORT.fetch_add(u32::from(n), Ordering::Relaxed);
        let base = u16::try_from(start + off % 9000).unwrap();
        if (base..base + n).all(|p| TcpListener::bind(("0.0.0.0", p)).is_ok()) {
            return base;
        }
    }
    panic!("no free span of {n} ports");
}

fn free_port() -> u16 {
    free_span(1)
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pd-rehearse-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn spawn(bin: &str, args: &[String], env: &[(&str, String)]) -> Guard {
    let mut c = Command::new(bin);
    c.args(args)
        .env("LD_LIBRARY_PATH", cann_lib_dir())
        .env_remove("PD_STANDIN_CANN_LIBS")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .env_remove("ASCEND_RT_VISIBLE_DEVICES")
        .env_remove("PD_STANDIN_NODE_IP")
        .env_remove("PD_STANDIN_EXPECT")
        .env_remove("PD_STANDIN_STATE_DIR")
        .env_remove("PD_STANDIN_FAIL_AFTER_MS");
    for (k, v) in env {
        c.env(k, v);
    }
    Guard(c.spawn().unwrap())
}

/// A directory holding a stand-in `libascendcl.so`, as the image's CANN
/// `set_env.sh` puts one on `LD_LIBRARY_PATH`.
fn cann_lib_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let d = tmpdir("cann");
        std::fs::write(d.join("libascendcl.so"), "").unwrap();
        d
    })
    .clone()
}

/// Runs to completion (bounded): (exit code, stdout, stderr).
fn run(bin: &str, args: &[String], env: &[(&str, String)]) -> (Option<i32>, String, String) {
    let mut c = Command::new(bin);
    c.args(args)
        .env("LD_LIBRARY_PATH", cann_lib_dir())
        .env_remove("PD_STANDIN_CANN_LIBS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("ASCEND_RT_VISIBLE_DEVICES")
        .env_remove("PD_STANDIN_NODE_IP")
        .env_remove("PD_STANDIN_EXPECT");
    for (k, v) in env {
        c.env(k, v);
    }
    let mut g = Guard(c.spawn().unwrap());
    let status = g
        .wait_exit(Duration::from_secs(10))
        .expect("process did not exit");
    let mut out = String::new();
    if let Some(o) = g.0.stdout.as_mut() {
        let _ = o.read_to_string(&mut out);
    }
    (status.code(), out, g.stderr())
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// Polls `GET path` until 200 or the deadline.
fn wait_ready(host: &str, port: u16, path: &str, g: &mut Guard) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(st)) = g.0.try_wait() {
            panic!("exited early with {st}: {}", g.stderr());
        }
        if let Ok(r) = http::get(host, port, path, Duration::from_millis(500))
            && r.status == 200
        {
            return;
        }
        thread::sleep(Duration::from_millis(30));
    }
    panic!("{host}:{port}{path} never answered");
}

fn kv_config(
    connector: &str,
    role: &str,
    kv_port: u16,
    id: &str,
    p: (u32, u32),
    d: (u32, u32),
) -> String {
    json!({
        "kv_connector": connector, "kv_role": role, "kv_port": kv_port.to_string(), "engine_id": id,
        "kv_connector_extra_config": {
            "prefill": {"dp_size": p.0, "tp_size": p.1},
            "decode": {"dp_size": d.0, "tp_size": d.1},
        }
    })
    .to_string()
}

/// The argv of one external-DP rank, shaped like the generated templates
/// (no `--data-parallel-rank` at DP 1, which vLLM refuses).
fn rank_argv(port: u16, dp: u32, rank: u32, rpc: u16, tp: u32, kv: Option<String>) -> Vec<String> {
    let weights = dsv3_weights();
    let mut a = s(&["serve", &weights, "--host", "0.0.0.0"]);
    a.extend(s(&[
        "--port",
        &port.to_string(),
        "--data-parallel-size",
        &dp.to_string(),
    ]));
    if dp > 1 {
        a.extend(s(&["--data-parallel-rank", &rank.to_string()]));
    }
    a.extend(s(&[
        "--data-parallel-address",
        "127.0.0.1",
        "--data-parallel-rpc-port",
        &rpc.to_string(),
        "--tensor-parallel-size",
        &tp.to_string(),
        "--enable-expert-parallel",
        "--seed",
        "1024",
        "--served-model-name",
        "dsv3",
        "--max-model-len",
        "8192",
        "--max_num_batched_tokens",
        "2048",
        "--max-num-seqs=16",
        "--gpu-memory-utilization",
        "0.9",
        "--quantization",
        "ascend",
        "--trust-remote-code",
        "--no-enable-prefix-caching",
        "--async-scheduling",
        "--speculative-config",
        r#"{"num_speculative_tokens": 1, "method": "mtp"}"#,
        "--compilation-config",
        r#"{"cudagraph_mode": "FULL_DECODE_ONLY"}"#,
        "--compilation-config.cudagraph_capture_sizes",
        "[4,8]",
        "--additional-config",
        r#"{"torchair_graph_config": {"enabled": false}}"#,
    ]));
    if let Some(kv) = kv {
        a.push("--kv-transfer-config".into());
        a.push(kv);
    }
    a
}

/// The vLLM version of the newest image (the stand-in's default image).
fn newest_vllm() -> String {
    let tag = pd_dsl::tables::IMAGES.last().map_or("", |i| i.tag);
    pd_rehearse::facts::vllm_version_of_image(tag).unwrap()
}
