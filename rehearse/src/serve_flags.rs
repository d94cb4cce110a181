//! A curated `vllm serve` flag set (vLLM 0.21–0.25 `EngineArgs` plus the
//! OpenAI frontend), parsed the way vLLM's `FlexibleArgumentParser` does:
//! `_` and `-` are interchangeable in long flag names, `--flag=value` works,
//! switches have a `--no-` form (argparse `BooleanOptionalAction`), and JSON
//! flags take dotted sub-keys (`--compilation-config.cudagraph_mode FULL`).

use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;

/// How a flag consumes argv.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Takes one value.
    Value,
    /// Takes one or more values (`nargs='+'`).
    Many,
    /// Takes a JSON value; dotted sub-keys allowed.
    Json,
    /// A switch; `--no-NAME` sets it false.
    Switch,
}

use Kind::{Json as J, Many as M, Switch as S, Value as V};

/// The accepted long flags (without `--`).
pub const FLAGS: &[(&str, Kind)] = &[
    // Frontend.
    ("host", V),
    ("port", V),
    ("uds", V),
    ("uvicorn-log-level", V),
    ("disable-uvicorn-access-log", S),
    ("allow-credentials", S),
    ("allowed-origins", J),
    ("allowed-methods", J),
    ("allowed-headers", J),
    ("api-key", M),
    ("lora-modules", M),
    ("chat-template", V),
    ("chat-template-content-format", V),
    ("trust-request-chat-template", S),
    ("response-role", V),
    ("ssl-keyfile", V),
    ("ssl-certfile", V),
    ("ssl-ca-certs", V),
    ("enable-ssl-refresh", S),
    ("ssl-cert-reqs", V),
    ("root-path", V),
    ("middleware", M),
    ("return-tokens-as-token-ids", S),
    ("disable-frontend-multiprocessing", S),
    ("enable-request-id-headers", S),
    ("enable-auto-tool-choice", S),
    ("exclude-tools-when-tool-choice-none", S),
    ("tool-call-parser", V),
    ("tool-parser-plugin", V),
    ("tool-server", V),
    ("log-config-file", V),
    ("max-log-len", V),
    ("disable-fastapi-docs", S),
    ("enable-prompt-tokens-details", S),
    ("enable-server-load-tracking", S),
    ("enable-force-include-usage", S),
    ("enable-tokenizer-info-endpoint", S),
    ("enable-log-outputs", S),
    ("enable-log-deltas", S),
    ("log-error-stack", S),
    ("h11-max-incomplete-event-size", V),
    ("h11-max-header-count", V),
    ("headless", S),
    ("api-server-count", V),
    ("config", V),
    ("disable-log-requests", S),
    ("enable-log-requests", S),
    ("disable-log-stats", S),
    // ModelConfig.
    ("model", V),
    ("runner", V),
    ("convert", V),
    ("task", V),
    ("tokenizer", V),
    ("tokenizer-mode", V),
    ("trust-remote-code", S),
    ("dtype", V),
    ("seed", V),
    ("hf-config-path", V),
    ("allowed-local-media-path", V),
    ("allowed-media-domains", M),
    ("revision", V),
    ("code-revision", V),
    ("rope-scaling", J),
    ("rope-theta", V),
    ("tokenizer-revision", V),
    ("max-model-len", V),
    ("quantization", V),
    ("enforce-eager", S),
    ("max-logprobs", V),
    ("logprobs-mode", V),
    ("disable-sliding-window", S),
    ("disable-cascade-attn", S),
    ("skip-tokenizer-init", S),
    ("enable-prompt-embeds", S),
    ("served-model-name", M),
    ("config-format", V),
    ("hf-token", V),
    ("hf-overrides", J),
    ("pooler-config", J),
    ("override-pooler-config", J),
    ("logits-processor-pattern", V),
    ("generation-config", V),
    ("override-generation-config", J),
    ("enable-sleep-mode", S),
    ("model-impl", V),
    ("override-attention-dtype", V),
    ("logits-processors", M),
    ("io-processor-plugin", V),
    ("max-seq-len-to-capture", V),
    // LoadConfig.
    ("load-format", V),
    ("download-dir", V),
    ("safetensors-load-strategy", V),
    ("model-loader-extra-config", J),
    ("ignore-patterns", M),
    ("use-tqdm-on-load", S),
    ("pt-load-map-location", V),
    // Structured outputs, reasoning.
    ("reasoning-parser", V),
    ("reasoning-parser-plugin", V),
    ("guided-decoding-backend", V),
    ("structured-outputs-config", J),
    // ParallelConfig.
    ("distributed-executor-backend", V),
    ("pipeline-parallel-size", V),
    ("master-addr", V),
    ("master-port", V),
    ("nnodes", V),
    ("node-rank", V),
    ("tensor-parallel-size", V),
    ("decode-context-parallel-size", V),
    ("dcp-kv-cache-interleave-size", V),
    ("cp-kv-cache-interleave-size", V),
    ("prefill-context-parallel-size", V),
    ("data-parallel-size", V),
    ("data-parallel-rank", V),
    ("data-parallel-start-rank", V),
    ("data-parallel-size-local", V),
    ("data-parallel-address", V),
    ("data-parallel-rpc-port", V),
    ("data-parallel-backend", V),
    ("data-parallel-hybrid-lb", S),
    ("data-parallel-external-lb", S),
    ("enable-expert-parallel", S),
    ("all2all-backend", V),
    ("enable-dbo", S),
    ("ubatch-size", V),
    ("dbo-decode-token-threshold", V),
    ("dbo-prefill-token-threshold", V),
    ("disable-nccl-for-dp-synchronization", S),
    ("enable-eplb", S),
    ("eplb-config", J),
    ("expert-placement-strategy", V),
    ("max-parallel-loading-workers", V),
    ("ray-workers-use-nsight", S),
    ("disable-custom-all-reduce", S),
    ("worker-cls", V),
    ("worker-extension-cls", V),
    // CacheConfig.
    ("block-size", V),
    ("gpu-memory-utilization", V),
    ("kv-cache-memory-bytes", V),
    ("swap-space", V),
    ("kv-cache-dtype", V),
    ("num-gpu-blocks-override", V),
    ("enable-prefix-caching", S),
    ("prefix-caching-hash-algo", V),
    ("cpu-offload-gb", V),
    ("calculate-kv-scales", S),
    ("kv-sharing-fast-prefill", S),
    ("mamba-cache-dtype", V),
    ("mamba-ssm-cache-dtype", V),
    ("mamba-block-size", V),
    ("kv-offloading-size", V),
    ("kv-offloading-backend", V),
    // MultiModalConfig.
    ("limit-mm-per-prompt", J),
    ("enable-mm-embeds", S),
    ("media-io-kwargs", J),
    ("mm-processor-kwargs", J),
    ("mm-processor-cache-gb", V),
    ("mm-processor-cache-type", V),
    ("mm-encoder-tp-mode", V),
    ("interleave-mm-strings", S),
    ("skip-mm-profiling", S),
    // LoRAConfig.
    ("enable-lora", S),
    ("max-loras", V),
    ("max-lora-rank", V),
    ("lora-dtype", V),
    ("max-cpu-loras", V),
    ("fully-sharded-loras", S),
    ("default-mm-loras", J),
    // ObservabilityConfig.
    ("show-hidden-metrics-for-version", V),
    ("otlp-traces-endpoint", V),
    ("collect-detailed-traces", V),
    // SchedulerConfig.
    ("max-num-batched-tokens", V),
    ("max-num-seqs", V),
    ("max-num-partial-prefills", V),
    ("max-long-partial-prefills", V),
    ("long-prefill-token-threshold", V),
    ("scheduling-policy", V),
    ("enable-chunked-prefill", S),
    ("disable-chunked-mm-input", S),
    ("scheduler-cls", V),
    ("disable-hybrid-kv-cache-manager", S),
    ("async-scheduling", S),
    ("stream-interval", V),
    // CompilationConfig.
    ("cuda-graph-sizes", M),
    ("cudagraph-capture-sizes", M),
    ("max-cudagraph-capture-size", V),
    // VllmConfig.
    ("speculative-config", J),
    ("kv-transfer-config", J),
    ("kv-events-config", J),
    ("ec-transfer-config", J),
    ("compilation-config", J),
    ("attention-config", J),
    ("attention-backend", V),
    ("additional-config", J),
];

/// Short aliases.
pub const SHORT: &[(&str, &str)] = &[
    ("-tp", "tensor-parallel-size"),
    ("-pp", "pipeline-parallel-size"),
    ("-dp", "data-parallel-size"),
    ("-dpn", "data-parallel-rank"),
    ("-dpr", "data-parallel-start-rank"),
    ("-dpl", "data-parallel-size-local"),
    ("-dpa", "data-parallel-address"),
    ("-dpp", "data-parallel-rpc-port"),
    ("-dpb", "data-parallel-backend"),
    ("-dph", "data-parallel-hybrid-lb"),
    ("-dpe", "data-parallel-external-lb"),
    ("-ep", "enable-expert-parallel"),
    ("-dcp", "decode-context-parallel-size"),
    ("-pcp", "prefill-context-parallel-size"),
    ("-q", "quantization"),
    ("-asc", "api-server-count"),
    ("-n", "nnodes"),
    ("-r", "node-rank"),
    ("-O", "compilation-config"),
];

/// Parsed `vllm serve` argv.
#[derive(Clone, Debug, Default)]
pub struct ServeArgs {
    /// The positional model path (or `--model`).
    pub model: Option<String>,
    /// Value flags: every occurrence, in order (the last wins).
    pub values: BTreeMap<String, Vec<String>>,
    /// Switches.
    pub switches: BTreeMap<String, bool>,
    /// JSON flags, parsed; dotted sub-keys merged in.
    pub json: BTreeMap<String, Json>,
}

impl ServeArgs {
    /// Last value of a value flag (the first of a `Many` flag's last group is not kept separately).
    pub fn value(&self, name: &str) -> Option<&str> {
        self.values
            .get(name)
            .and_then(|v| v.last())
            .map(String::as_str)
    }

    /// Whether a switch is on.
    pub fn switch(&self, name: &str) -> bool {
        self.switches.get(name).copied().unwrap_or(false)
    }

    /// An integer flag, `Ok(None)` when absent.
    pub fn int(&self, name: &str) -> Result<Option<i64>, String> {
        match self.value(name) {
            None => Ok(None),
            Some(v) => v
                .parse()
                .map(Some)
                .map_err(|_| format!("argument --{name}: invalid int value: '{v}'")),
        }
    }

    /// A port flag.
    pub fn port(&self, name: &str) -> Result<Option<u16>, String> {
        match self.int(name)? {
            None => Ok(None),
            Some(p) => u16::try_from(p)
                .map(Some)
                .map_err(|_| format!("argument --{name}: port out of range: {p}")),
        }
    }

    /// A JSON flag's value.
    pub fn json(&self, name: &str) -> Option<&Json> {
        self.json.get(name)
    }
}

fn kind_of(name: &str) -> Option<Kind> {
    FLAGS.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
}

fn looks_like_flag(s: &str) -> bool {
    s.starts_with('-')
        && s.len() > 1
        && !s[1..].starts_with(|c: char| c.is_ascii_digit() || c == '.')
}

fn parse_json_value(flag: &str, text: &str) -> Result<Json, String> {
    serde_json::from_str(text).map_err(|e| format!("argument --{flag}: invalid JSON ({e}): {text}"))
}

/// A dotted sub-key's value: JSON when it parses, else the string.
fn loose(text: &str) -> Json {
    serde_json::from_str(text).unwrap_or_else(|_| Json::String(text.to_string()))
}

fn set_dotted(root: &mut Json, path: &[&str], v: Json) {
    if !root.is_object() {
        *root = Json::Object(Map::new());
    }
    let Some((first, rest)) = path.split_first() else {
        *root = v;
        return;
    };
    if let Json::Object(m) = root {
        let slot = m.entry(first.to_string()).or_insert(Json::Null);
        if rest.is_empty() {
            *slot = v;
        } else {
            set_dotted(slot, rest, v);
        }
    }
}

fn take(
    args: &[String],
    i: &mut usize,
    inline: &Option<String>,
    name: &str,
) -> Result<String, String> {
    if let Some(v) = inline {
        return Ok(v.clone());
    }
    match args.get(*i) {
        Some(v) if !looks_like_flag(v) => {
            *i += 1;
            Ok(v.clone())
        }
        _ => Err(format!("argument --{name}: expected one argument")),
    }
}

/// Parses the argv after `serve`. `Err` carries the message printed before
/// exit 2.
pub fn parse(args: &[String]) -> Result<ServeArgs, String> {
    let mut out = ServeArgs::default();
    let mut i = 0;
    while i < args.len() {
        let raw = args[i].as_str();
        i += 1;
        if !looks_like_flag(raw) {
            if out.model.is_some() {
                return Err(format!("unrecognized arguments: {raw}"));
            }
            out.model = Some(raw.to_string());
            continue;
        }
        // Split `--flag=value`.
        let (flag_part, inline) = match raw.split_once('=') {
            Some((f, v)) => (f, Some(v.to_string())),
            None => (raw, None),
        };
        // `-O3`, `-O.key=val`, `-O=…` forms.
        let (name, dotted): (String, Option<String>) = if let Some(rest) = flag_part
            .strip_prefix("-O")
            .filter(|_| !flag_part.starts_with("--"))
        {
            if let Some(path) = rest.strip_prefix('.') {
                ("compilation-config".into(), Some(path.to_string()))
            } else if !rest.is_empty() {
                let level = loose(rest);
                set_dotted(
                    out.json
                        .entry("compilation-config".into())
                        .or_insert(Json::Null),
                    &["level"],
                    level,
                );
                continue;
            } else {
                ("compilation-config".into(), None)
            }
        } else if let Some(long) = flag_part.strip_prefix("--") {
            let (base, path) = match long.split_once('.') {
                Some((b, p)) => (b, Some(p.to_string())),
                None => (long, None),
            };
            (base.replace('_', "-"), path)
        } else if let Some((_, long)) = SHORT.iter().find(|(s, _)| *s == flag_part) {
            (long.to_string(), None)
        } else {
            return Err(format!("unknown flag {flag_part}"));
        };
        let (name, kind, negated) = match kind_of(&name) {
            Some(k) => (name, k, false),
            None => match name.strip_prefix("no-").map(|n| (n, kind_of(n))) {
                Some((n, Some(S))) => (n.to_string(), S, true),
                _ => return Err(format!("unknown flag --{name}")),
            },
        };
        if dotted.is_some() && kind != J {
            return Err(format!(
                "unknown flag --{name}.{}",
                dotted.unwrap_or_default()
            ));
        }
        match kind {
            S => {
                if inline.is_some() {
                    return Err(format!("argument --{name}: ignored explicit argument"));
                }
                out.switches.insert(name, !negated);
            }
            V => {
                let v = take(args, &mut i, &inline, &name)?;
                out.values.entry(name).or_default().push(v);
            }
            M => {
                let first = take(args, &mut i, &inline, &name)?;
                let mut group = vec![first];
                if inline.is_none() {
                    while let Some(v) = args.get(i).filter(|v| !looks_like_flag(v)) {
                        // A `Many` flag would swallow the model path; vLLM
                        // documents the model first, so stop at nothing.
                        group.push(v.clone());
                        i += 1;
                    }
                }
                let slot = out.values.entry(name).or_default();
                slot.clear();
                slot.extend(group);
            }
            J => {
                let text = take(args, &mut i, &inline, &name)?;
                let slot = out.json.entry(name.clone()).or_insert(Json::Null);
                match dotted {
                    Some(path) => {
                        let parts: Vec<&str> = path.split('.').collect();
                        set_dotted(slot, &parts, loose(&text));
                    }
                    None => *slot = parse_json_value(&name, &text)?,
                }
            }
        }
    }
    if out.model.is_none()
        && let Some(m) = out.value("model")
    {
        out.model = Some(m.to_string());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_briefs_flags_parse() {
        let values = [
            "host",
            "port",
            "api-server-count",
            "data-parallel-size",
            "data-parallel-size-local",
            "data-parallel-rank",
            "data-parallel-start-rank",
            "data-parallel-address",
            "data-parallel-rpc-port",
            "tensor-parallel-size",
            "seed",
            "served-model-name",
            "max-model-len",
            "max-num-batched-tokens",
            "max-num-seqs",
            "gpu-memory-utilization",
            "block-size",
            "quantization",
            "tokenizer-mode",
            "tool-call-parser",
            "reasoning-parser",
            "safetensors-load-strategy",
            "dtype",
            "kv-cache-dtype",
        ];
        for f in values {
            let a = parse(&argv(&["/m", &format!("--{}", f.replace('-', "_")), "7"]));
            assert!(a.is_ok_and(|a| a.value(f) == Some("7")), "{f}");
        }
        let switches = [
            "headless",
            "enable-expert-parallel",
            "trust-remote-code",
            "async-scheduling",
            "enable-prefix-caching",
            "enforce-eager",
            "enable-auto-tool-choice",
            "disable-hybrid-kv-cache-manager",
        ];
        for f in switches {
            assert!(
                parse(&argv(&["/m", &format!("--{f}")])).is_ok_and(|a| a.switch(f)),
                "{f}"
            );
        }
        for f in [
            "no-enable-prefix-caching",
            "no-disable-hybrid-kv-cache-manager",
        ] {
            let a = parse(&argv(&["/m", &format!("--{f}")]));
            assert!(
                a.is_ok_and(|a| !a.switch(&f[3..]) && a.switches.contains_key(&f[3..])),
                "{f}"
            );
        }
        for f in [
            "compilation-config",
            "speculative-config",
            "additional-config",
            "kv-transfer-config",
            "model-loader-extra-config",
        ] {
            let a = parse(&argv(&["/m", &format!("--{f}"), r#"{"a": 1}"#]));
            assert!(
                a.is_ok_and(|a| a.json(f) == Some(&serde_json::json!({"a": 1}))),
                "{f}"
            );
        }
    }

    #[test]
    fn forms_and_errors() {
        let a = parse(&argv(&[
            "/m",
            "-tp=4",
            "--port=9",
            "-O3",
            "--compilation-config.cudagraph_mode",
            "FULL",
            "--served-model-name",
            "a",
            "b",
            "--seed",
            "-1",
        ]));
        let Ok(a) = a else { return assert!(a.is_ok()) };
        assert_eq!(a.value("tensor-parallel-size"), Some("4"));
        assert_eq!(a.value("port"), Some("9"));
        assert_eq!(a.value("seed"), Some("-1"));
        assert_eq!(a.values.get("served-model-name").map(Vec::len), Some(2));
        assert_eq!(
            a.json("compilation-config"),
            Some(&serde_json::json!({"level": 3, "cudagraph_mode": "FULL"}))
        );
        assert_eq!(a.model.as_deref(), Some("/m"));
        assert_eq!(
            parse(&argv(&["/m", "--nope"])).err().as_deref(),
            Some("unknown flag --nope")
        );
        assert!(parse(&argv(&["/m", "--no-port"])).is_err());
        assert!(parse(&argv(&["/m", "/n"])).is_err());
        assert!(parse(&argv(&["/m", "--kv-transfer-config", "{bad"])).is_err());
    }
}
