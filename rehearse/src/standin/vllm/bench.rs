//! `vllm bench serve`: one real request, then a fake result.

use super::{Fail, fail};
use crate::http;
use serde_json::json;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// `vllm bench serve`: one real request, then a fake result.
pub(super) fn bench(argv: &[String]) -> Result<(), Fail> {
    let mut host = "127.0.0.1".to_string();
    let mut port: u16 = 8000;
    let mut endpoint = "/v1/completions".to_string();
    let mut model = None;
    let mut num_prompts = 1u64;
    let mut save: Option<String> = None;
    let mut metadata: Vec<(String, String)> = Vec::new();
    let (mut input_len, mut output_len) = (None, None);
    let (mut rate, mut concurrency) = (None, None);
    let mut i = 0;
    while i < argv.len() {
        // `--metadata KEY=VALUE ...` (nargs="*", vllm/benchmarks/serve.py).
        if argv[i] == "--metadata" {
            i += 1;
            while let Some(kv) = argv.get(i).filter(|a| !a.starts_with("--")) {
                let Some((k, v)) = kv.split_once('=') else {
                    return fail(
                        2,
                        format!("Invalid metadata format {kv:?}. Please use KEY=VALUE format."),
                    );
                };
                metadata.push((k.trim().to_owned(), v.trim().to_owned()));
                i += 1;
            }
            continue;
        }
        if argv[i] == "--save-result" {
            save.get_or_insert_with(|| ".".into());
            i += 1;
            continue;
        }
        let (flag, inline) = match argv[i].split_once('=') {
            Some((f, v)) => (f.replace('_', "-"), Some(v.to_string())),
            None => (argv[i].replace('_', "-"), None),
        };
        let val = inline.or_else(|| argv.get(i + 1).cloned());
        let consumed = match flag.as_str() {
            "--host" => val.map(|v| host = v),
            "--port" => val.and_then(|v| v.parse().ok()).map(|v| port = v),
            "--endpoint" => val.map(|v| endpoint = v),
            "--model" | "--served-model-name" => val.map(|v| model = Some(v)),
            "--num-prompts" => val.and_then(|v| v.parse().ok()).map(|v| num_prompts = v),
            "--result-dir" => val.map(|v| save = Some(v)),
            "--random-input-len" => val
                .and_then(|v| v.parse::<u64>().ok())
                .map(|v| input_len = Some(v)),
            "--random-output-len" => val
                .and_then(|v| v.parse::<u64>().ok())
                .map(|v| output_len = Some(v)),
            "--request-rate" => val.map(|v| rate = Some(v)),
            "--max-concurrency" => val
                .and_then(|v| v.parse::<u64>().ok())
                .map(|v| concurrency = Some(v)),
            "--base-url" => val.map(|v| {
                let rest = v.split("://").nth(1).unwrap_or(&v).trim_end_matches('/');
                if let Some((h, p)) = rest.rsplit_once(':') {
                    host = h.to_string();
                    port = p.parse().unwrap_or(port);
                }
            }),
            _ => None,
        };
        i += 1;
        if consumed.is_some() && !argv[i - 1].contains('=') {
            i += 1;
        }
    }
    let chat = endpoint.contains("chat");
    let mut body = json!({"max_tokens": 4, "stream": false});
    if let Some(m) = &model {
        body["model"] = json!(m);
    }
    if chat {
        body["messages"] = json!([{"role": "user", "content": "rehearsal"}]);
    } else {
        body["prompt"] = json!("rehearsal");
    }
    let started = Instant::now();
    let resp =
        http::post_json(&host, port, &endpoint, &body, Duration::from_secs(30)).or_else(|e| {
            fail(
                1,
                format!("bench request to {host}:{port}{endpoint} failed: {e}"),
            )
        })?;
    if resp.status != 200 {
        return fail(
            1,
            format!(
                "bench request to {host}:{port}{endpoint} returned {}: {}",
                resp.status,
                resp.text()
            ),
        );
    }
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    println!("============ Serving Benchmark Result ============");
    println!("{:<40}{:<10}", "Successful requests:", 1);
    println!(
        "{:<40}{:<10}",
        "Requested prompts (stand-in sent 1):", num_prompts
    );
    println!("{:<40}{:<10.2}", "Benchmark duration (s):", ms / 1000.0);
    println!("{:<40}{:<10.2}", "Mean TTFT (ms):", ms);
    println!("{:<40}{:<10.2}", "Mean TPOT (ms):", ms / 4.0);
    println!("==================================================");
    // `--save-result`: the result JSON vLLM writes (vllm/benchmarks/serve.py
    // `main`: the run's settings, `--metadata`, then the benchmark's
    // figures), for the one request the stand-in sent.
    if let Some(dir) = save.filter(|_| argv.iter().any(|a| a == "--save-result")) {
        let secs = ms / 1000.0;
        let (inp, out) = (input_len.unwrap_or(1), output_len.unwrap_or(4));
        let mut result = serde_json::Map::new();
        result.insert("date".into(), json!("20260101-000000"));
        result.insert("backend".into(), json!("vllm"));
        result.insert("model_id".into(), json!(model.clone().unwrap_or_default()));
        result.insert("num_prompts".into(), json!(num_prompts));
        for (k, v) in &metadata {
            result.insert(k.clone(), json!(v));
        }
        result.insert(
            "request_rate".into(),
            rate.as_deref()
                .and_then(|r| r.parse::<f64>().ok())
                .filter(|r| r.is_finite())
                .map_or(json!("inf"), |r| json!(r)),
        );
        result.insert("max_concurrency".into(), json!(concurrency));
        result.insert("duration".into(), json!(secs));
        result.insert("completed".into(), json!(1));
        result.insert("total_input_tokens".into(), json!(inp));
        result.insert("total_output_tokens".into(), json!(out));
        result.insert("request_throughput".into(), json!(1.0 / secs.max(1e-9)));
        result.insert(
            "output_throughput".into(),
            json!(out as f64 / secs.max(1e-9)),
        );
        result.insert(
            "total_token_throughput".into(),
            json!((inp + out) as f64 / secs.max(1e-9)),
        );
        result.insert("mean_ttft_ms".into(), json!(ms));
        result.insert("mean_tpot_ms".into(), json!(ms / 4.0));
        let path = PathBuf::from(&dir).join(format!(
            "vllm-{}qps-{}.json",
            rate.as_deref().unwrap_or("inf"),
            model
                .unwrap_or_default()
                .rsplit('/')
                .next()
                .unwrap_or_default()
        ));
        std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(&path, serde_json::Value::Object(result).to_string()))
            .or_else(|e| fail(1, format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}
