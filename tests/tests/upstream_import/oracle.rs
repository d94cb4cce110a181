//! The oracle's dump read as the importer's input: each rank's argv as
//! `--flag value` pairs and its env, normalised (O1-O3, O5, O7), and the
//! proxy.

use pd_dsl::import::{InputProxy, InputRank};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Env of the runner's own (normalisation O1).
const RUNNER_ENV: &[&str] = &[
    "HCCL_IF_IP",
    "GLOO_SOCKET_IFNAME",
    "TP_SOCKET_IFNAME",
    "HCCL_SOCKET_IFNAME",
    "LOCAL_IP",
    "NIC_NAME",
    "MASTER_IP",
    "SERVER_PORT",
    // O8: where the runner wrote the KV pool's config; the files are
    // compared by content ([`pool_failures`]).
    "MMC_LOCAL_CONFIG_PATH",
    "MOONCAKE_CONFIG_PATH",
    "MOONCAKE_MASTER",
];

/// `--flag value` pairs of an argv after the model, as the importer
/// spells them (`--flag_name` → `--flag-name`, `--flag=value` split).
fn options(argv: &[String]) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < argv.len() {
        let a = &argv[i];
        let Some(f) = a.strip_prefix("--") else {
            // A positional after the model: kept, so it differs.
            out.push((a.clone(), None));
            i += 1;
            continue;
        };
        let (name, value) = match f.split_once('=') {
            Some((n, v)) => (n, Some(v.to_owned())),
            None => (f, None),
        };
        // Only the flag before a dotted key is spelled (`--a_b.c_d` →
        // `--a-b.c_d`), as the importer does.
        let flag = match name.split_once('.') {
            Some((f, k)) => format!("--{}.{k}", f.replace('_', "-")),
            None => format!("--{}", name.replace('_', "-")),
        };
        if value.is_some() {
            out.push((flag, value));
            i += 1;
        } else if let Some(v) = argv.get(i + 1).filter(|v| !v.starts_with("--")) {
            out.push((flag, Some(v.clone())));
            i += 2;
        } else {
            out.push((flag, None));
            i += 1;
        }
    }
    out
}

pub(crate) fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn one_value<'a>(opts: &'a [(String, Option<String>)], flag: &str) -> Option<&'a str> {
    opts.iter()
        .find(|(f, _)| f == flag)
        .and_then(|(_, v)| v.as_deref())
}

/// The oracle's ranks as the round trip's input side (normalisations
/// O1-O3, O5); `node_of` maps a config node index to pd-dsl's node.
pub(crate) fn oracle_ranks(
    oracle: &Value,
    node_of: &BTreeMap<usize, usize>,
) -> Result<Vec<InputRank>, String> {
    let mut out = Vec::new();
    for n in oracle["nodes"].as_array().into_iter().flatten() {
        let index = n["node_index"].as_u64().unwrap_or(0) as usize;
        let Some(&node) = node_of.get(&index) else {
            return Err(format!(
                "the runner starts node {index}, the imported layout has no node for it"
            ));
        };
        let pod: BTreeMap<String, String> = n["pod_env"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                    .collect()
            })
            .unwrap_or_default();
        for r in n["ranks"].as_array().into_iter().flatten() {
            let argv = strings(&r["argv"]);
            let (model, opts) = match argv.as_slice() {
                [v, s, m, rest @ ..] if v.ends_with("vllm") && s == "serve" => {
                    let mut opts = options(rest);
                    // O5: `--data-parallel-rank` at DP 1, which vLLM refuses.
                    if one_value(&opts, "--data-parallel-size") == Some("1") {
                        opts.retain(|(f, _)| f != "--data-parallel-rank");
                    }
                    (m.clone(), opts)
                }
                _ => {
                    return Err(format!(
                        "the runner starts `{}`, not `vllm serve`",
                        argv.join(" ")
                    ));
                }
            };
            // O7: every proxy variable set empty.
            let proxies_off = pd_dsl::import::PROXY_ENV
                .iter()
                .all(|p| r["env"][*p].as_str() == Some(""));
            let env: Vec<(String, String)> = r["env"]
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, _)| !RUNNER_ENV.contains(&k.as_str()))
                .filter(|(k, _)| !(proxies_off && k.eq_ignore_ascii_case("no_proxy")))
                .map(|(k, v)| {
                    let v = v.as_str().unwrap_or_default();
                    // O2: a prepend onto nothing.
                    let v = match v.strip_suffix(':') {
                        Some(head) if !pod.contains_key(k) => head,
                        _ => v,
                    };
                    (k.clone(), v.to_owned())
                })
                .collect();
            let dp_ranks: Vec<u64> = match r["dp_rank"].as_u64() {
                Some(d) => vec![d],
                None => {
                    // O3: internal DP, one command for the node's ranks.
                    let num = |f: &str| one_value(&opts, f).and_then(|v| v.parse::<u64>().ok());
                    let local = num("--data-parallel-size-local")
                        .or(num("--data-parallel-size"))
                        .unwrap_or(1);
                    let start = num("--data-parallel-start-rank").unwrap_or(0);
                    (start..start + local).collect()
                }
            };
            for dp_rank in dp_ranks {
                out.push(InputRank {
                    node,
                    input_node: index,
                    dp_rank,
                    model: model.clone(),
                    options: opts.clone(),
                    env: env.clone(),
                });
            }
        }
    }
    Ok(out)
}

pub(crate) fn oracle_proxy(oracle: &Value) -> Option<InputProxy> {
    let argv = strings(&oracle["proxy"]["argv"]);
    let script = argv.iter().position(|a| a.ends_with(".py"))?;
    let mut options: Vec<(String, Vec<String>)> = Vec::new();
    for a in &argv[script + 1..] {
        if a.starts_with("--") {
            options.push((a.replace('_', "-"), Vec::new()));
        } else if let Some(last) = options.last_mut() {
            last.1.push(a.clone());
        }
    }
    Some(InputProxy {
        script: Path::new(&argv[script])
            .file_name()
            .and_then(|f| f.to_str())
            .unwrap_or_default()
            .to_owned(),
        options,
    })
}

#[test]
fn an_oracle_argv_splits_as_the_importer_spells_it() {
    let argv: Vec<String> = [
        "--port",
        "8080",
        "--enforce-eager",
        "--max_num_seqs=8",
        "--kv-transfer-config",
        "{\"a\": 1}",
        "--headless",
    ]
    .map(str::to_owned)
    .to_vec();
    assert_eq!(
        options(&argv),
        vec![
            ("--port".to_owned(), Some("8080".to_owned())),
            ("--enforce-eager".to_owned(), None),
            ("--max-num-seqs".to_owned(), Some("8".to_owned())),
            (
                "--kv-transfer-config".to_owned(),
                Some("{\"a\": 1}".to_owned())
            ),
            ("--headless".to_owned(), None),
        ]
    );
}
