//! The importer against the real world: every multi-node e2e config of
//! every vllm-ascend release in the corpus, imported and round-tripped
//! against what that release's own e2e runner starts.
//!
//! The oracle is `scripts/upstream/e2e_oracle.py dump` (run here into a
//! temporary directory; it fetches nothing itself: the release trees come
//! from `scripts/upstream/corpus.py`, which fails naming what is missing).
//! It records, per config, node and rank, the `vllm serve` argv and env the
//! runner starts and the proxy argv. For each config this test:
//! 1. imports it as a user does, `catalog import CONFIG --format yaml
//!    --image vRELEASE` (in process, through `layouts::cli::run`; `--image`
//!    only when the image table has the release) and loads the YAML
//!    (`pd_dsl::load::from_yaml`, which runs every rule): *imported*;
//! 2. renders the layout, runs every node's `run.sh` with `PD_DRY_RUN=1`,
//!    the launcher's `--dry-run` and each rank's template (or
//!    `run_mixed.sh`) with a recording `vllm`, with node *i* given the
//!    address the runner gave the config node it stands for, and compares
//!    every rank and the proxy with the oracle through the round trip's
//!    comparison ([`pd_dsl_tests::round_trip`], its normalisations 1-11):
//!    *round-tripped* when nothing differs.
//!
//! It prints one row per release (configs, imported, round-tripped) and
//! the failures grouped by reason, and asserts per-release floors
//! ([`FLOORS`]): an importer change that loses a config fails here.
//!
//! # Normalisations of the oracle's side (beyond the round trip's)
//! O1. Env the runner sets on every rank from the node it runs on, not
//!     from the config: `HCCL_IF_IP` and the `*_SOCKET_IFNAME` names
//!     (run.sh resolves them per node, normalisation 6), and `LOCAL_IP`,
//!     `NIC_NAME`, `MASTER_IP` (the values of the runner's placeholders,
//!     already substituted into the commands the oracle records; vLLM does
//!     not read them). `SERVER_PORT`, which a config sets for the runner
//!     to read back (`--port $SERVER_PORT`, the internal-DP proxy's ports),
//!     is the runner's too.
//! O2. A prepend onto a variable the pod does not set (`dir:$LD_PRELOAD`)
//!     leaves a trailing `:` in the runner's value; pd-dsl's has none
//!     (normalisation 5).
//! O3. An internal-DP node starts one `vllm serve` for its local DP ranks
//!     (`--data-parallel-size-local N --data-parallel-start-rank S`): it
//!     stands for ranks S..S+N, each compared with that one command, as
//!     the round trip compares a mixed node (`run_mixed.sh`).
//! O4. Node addresses: the runner's cluster addresses (`10.0.0.K+1` for
//!     config node K) are given to run.sh for the node each stands for,
//!     so `--data-parallel-address`, the proxy's hosts and `--host`
//!     compare as written.
//! O5. `--data-parallel-rank` on a DP 1 rank is left out: vLLM refuses it
//!     there (external load balancing needs DP > 1, vllm/config/parallel.py
//!     `ParallelConfig._validate_parallel_config`), pd-dsl passes none, and
//!     the importer reports the difference as a `deviate`.
//! O6. A config whose runner argv the release's own vLLM refuses
//!     (`argparse` exits 2: a flag without its value, JSON that does not
//!     parse) never starts upstream either: it is counted with the
//!     runner's failures, not against the importer, and listed with
//!     vLLM's message. The verdict is the release's vLLM argument table,
//!     generated from vLLM's source (`pd_rehearse::serve_flags`), not the
//!     importer's.
//! O7. `no_proxy`/`NO_PROXY` on a rank whose env sets every proxy
//!     variable (`http_proxy`, `https_proxy`, `all_proxy`, either case)
//!     empty is left out: it has no effect there, and the importer drops it
//!     with a `deviate` when it lists addresses known only at run time.
//! O8. A KV pool (`kv_pool:`, a MultiConnector with `AscendStoreConnector`):
//!     the runner's `MMC_LOCAL_CONFIG_PATH` / `MOONCAKE_CONFIG_PATH` /
//!     `MOONCAKE_MASTER` on the ranks name files in its own log root; the
//!     files themselves are compared byte for byte per node, and node 0's
//!     pool service by argv (its Python by name: the runner runs
//!     `sys.executable`) and env names and file names.
//!
//! `PD_UPSTREAM_FILTER=TEXT` runs only the configs whose path contains
//! TEXT and checks no floor (for working on one config).

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl::import::{Imported, Input, InputProxy, InputRank, Options, import};
use pd_dsl_tests::round_trip::compare_run;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Per release: (configs that start upstream (the runner builds them and
/// their vLLM takes the argv, O6), imported, round-tripped), at
/// least. Raise a floor when the importer gets better; a release the
/// corpus gains needs a row.
const FLOORS: &[(&str, usize, usize, usize)] = &[
    ("0.18.0", 18, 18, 18),
    ("0.19.1rc1", 18, 18, 18),
    ("0.20.2rc1", 22, 22, 22),
    ("0.21.0rc1", 20, 20, 20),
    ("0.22.1rc1", 20, 20, 20),
    ("0.23.0", 74, 73, 73),
    ("0.23.0rc1", 26, 25, 25),
    ("0.24.0rc1", 35, 35, 35),
    ("0.25.1rc1", 33, 33, 33),
    ("0.26.0rc1", 46, 46, 46),
    ("0.27.1rc1", 87, 86, 86),
    ("0.28.0rc1", 87, 86, 86),
    ("0.29.0rc1", 87, 86, 86),
    ("0.30.0rc1", 76, 75, 75),
    ("0.30.0rc2", 76, 75, 75),
];

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

/// The KV pool against the runner's: node 0's service (argv, its env's
/// names and file names) and every node's config files, byte for byte
/// (O8: the runner's Python is `sys.executable`, compared by its name).
fn pool_failures(
    name: &str,
    oracle: &Value,
    layout: &pd_dsl::Layout,
    ips: &[String],
    node_of: &BTreeMap<usize, usize>,
) -> Vec<String> {
    let theirs_services: Vec<(usize, &Value)> = oracle["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|n| {
            let k = n["node_index"].as_u64().unwrap_or(0) as usize;
            n["services"]
                .as_array()
                .into_iter()
                .flatten()
                .map(move |s| (k, s))
        })
        .collect();
    let theirs_files: BTreeMap<(usize, String), String> = oracle["files"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(path, text)| {
            let parts: Vec<&str> = path.split('/').collect();
            let node = parts
                .iter()
                .find_map(|p| p.strip_prefix("node-"))
                .and_then(|k| k.parse::<usize>().ok())?;
            let file = (*parts.last()?).to_owned();
            Some(((node, file), text.as_str().unwrap_or_default().to_owned()))
        })
        .collect();
    if theirs_services.is_empty() && theirs_files.is_empty() && layout.pool().is_none() {
        return Vec::new();
    }
    let r = pd_dsl_tests::harness::render_layout(layout);
    let addrs: Vec<&str> = ips.iter().map(String::as_str).collect();
    let mut failures = Vec::new();
    let ours: Vec<pd_dsl_tests::harness::DryRun> = (0..layout.node_count())
        .map(|n| pd_dsl_tests::harness::dry_run(&r, n, &addrs))
        .collect();
    let python = |w: &str| {
        let base = w.rsplit('/').next().unwrap_or(w);
        if base.starts_with("python") {
            "python3".to_owned()
        } else {
            w.to_owned()
        }
    };
    let mut services_seen = 0;
    for (k, s) in &theirs_services {
        let node = node_of.get(k).copied().unwrap_or(usize::MAX);
        let argv: Vec<String> = s["argv"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_owned))
            .collect();
        let theirs: Vec<String> = argv
            .iter()
            .enumerate()
            .map(|(i, a)| if i == 0 { python(a) } else { a.clone() })
            .collect();
        match ours.get(node).and_then(|d| d.pool_service.as_ref()) {
            None => failures.push(format!(
                "{name}: node {node}: the runner starts `{}`, ours no pool service",
                theirs.join(" ")
            )),
            Some(o) => {
                services_seen += 1;
                let o: Vec<String> = o
                    .iter()
                    .enumerate()
                    .map(|(i, a)| if i == 0 { python(a) } else { a.clone() })
                    .collect();
                if o != theirs {
                    failures.push(format!(
                        "{name}: node {node}: pool service `{}`, the runner's `{}`",
                        o.join(" "),
                        theirs.join(" ")
                    ));
                }
                let env_names = |m: &Value| -> Vec<(String, String)> {
                    m.as_object()
                        .into_iter()
                        .flatten()
                        .map(|(k, v)| {
                            (
                                k.clone(),
                                v.as_str()
                                    .unwrap_or_default()
                                    .rsplit('/')
                                    .next()
                                    .unwrap_or_default()
                                    .to_owned(),
                            )
                        })
                        .collect()
                };
                let theirs_env = env_names(&s["env"]);
                let ours_env: Vec<(String, String)> = ours[node]
                    .pool_service_env
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            v.rsplit('/').next().unwrap_or_default().to_owned(),
                        )
                    })
                    .collect();
                // Names and file names; Mooncake's library path prefix as a whole.
                let key =
                    |e: &[(String, String)]| e.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
                if key(&theirs_env) != key(&ours_env)
                    || (theirs_env.iter().any(|(k, _)| k.ends_with("CONFIG_PATH"))
                        && theirs_env != ours_env)
                {
                    failures.push(format!("{name}: node {node}: pool service env {ours_env:?}, the runner's {theirs_env:?}"));
                }
            }
        }
    }
    for (n, d) in ours.iter().enumerate() {
        if d.pool_service.is_some() && services_seen == 0 {
            failures.push(format!(
                "{name}: node {n}: ours starts a pool service, the runner none"
            ));
        }
    }
    for ((k, file), text) in &theirs_files {
        let node = node_of.get(k).copied().unwrap_or(usize::MAX);
        match ours.get(node).and_then(|d| d.pool_files.get(file)) {
            None => failures.push(format!(
                "{name}: node {node}: the runner writes `{file}`, ours does not"
            )),
            Some(o) if o.trim_end() != text.trim_end() => failures.push(format!(
                "{name}: node {node}: `{file}` differs: ours {o:?}, the runner's {text:?}"
            )),
            Some(_) => {}
        }
    }
    for (n, d) in ours.iter().enumerate() {
        let k = node_of
            .iter()
            .find(|(_, v)| **v == n)
            .map(|(k, _)| *k)
            .unwrap_or(n);
        for file in d.pool_files.keys() {
            if !theirs_files.contains_key(&(k, file.clone())) {
                failures.push(format!(
                    "{name}: node {n}: ours writes `{file}`, the runner does not"
                ));
            }
        }
    }
    failures
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

fn python(args: &[&str]) -> String {
    let out = Command::new("python3")
        .args(args)
        .current_dir(workspace())
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run `python3 {}`: {e}; the oracle needs python3 on PATH (./scripts/test.sh installs it)", args.join(" "))
        });
    assert!(
        out.status.success(),
        "`python3 {}` failed (is the corpus fetched? `python3 scripts/upstream/corpus.py fetch`):\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// How one config came out.
#[derive(Debug)]
enum Outcome {
    /// The release's runner cannot start it (the oracle's `error`).
    RunnerFails(String),
    /// The release's vLLM refuses the argv the runner builds (O6).
    VllmRefuses(String),
    /// The import failed: why.
    NotImported(String),
    /// Imported; the differences left (empty: round-tripped).
    Imported(Vec<String>),
    /// The importer or the loader panicked (a defect: bad input never
    /// panics).
    Panicked(String),
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default()
}

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

fn strings(v: &Value) -> Vec<String> {
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
fn oracle_ranks(
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

fn oracle_proxy(oracle: &Value) -> Option<InputProxy> {
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

/// The first line of an import's error output, without its position.
fn reason(stderr: &str) -> String {
    let line = stderr.lines().next().unwrap_or("no message").trim();
    // `FILE:LINE:COL: error...` → `error...`
    match line.find(": error") {
        Some(i) => line[i + 2..].to_owned(),
        None => line.to_owned(),
    }
}

/// O6: what the release's vLLM says of the first runner argv it refuses.
fn vllm_refuses(release: &str, oracle: &Value) -> Option<String> {
    let flags = pd_rehearse::serve_flags::Flags::of_image(&format!("v{release}"))
        .unwrap_or_else(|e| panic!("{release}: no vLLM argument table: {e}"));
    for n in oracle["nodes"].as_array().into_iter().flatten() {
        for r in n["ranks"].as_array().into_iter().flatten() {
            let argv = strings(&r["argv"]);
            if let [v, s, rest @ ..] = argv.as_slice()
                && v.ends_with("vllm")
                && s == "serve"
                && let Err(e) = pd_rehearse::serve_flags::parse(flags, rest)
            {
                return Some(format!(
                    "node {}: vllm serve: error: {e}",
                    n["node_index"].as_u64().unwrap_or(0)
                ));
            }
        }
    }
    None
}

fn run_config(release: &str, tree: &Path, oracle: &Value) -> Outcome {
    if let Some(e) = oracle["error"].as_str() {
        return Outcome::RunnerFails(e.to_owned());
    }
    if let Some(e) = vllm_refuses(release, oracle) {
        return Outcome::VllmRefuses(e);
    }
    let path = tree.join(oracle["config"].as_str().expect("config path"));
    let file = path.display().to_string();
    let tag = format!("v{release}");
    let image = pd_dsl::tables::image(&tag).map(|_| tag);
    let mut argv: Vec<String> = vec!["catalog".into(), "import".into(), file.clone()];
    argv.extend(["--format".into(), "yaml".into()]);
    if let Some(i) = &image {
        argv.extend(["--image".into(), i.clone()]);
    }
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = layouts::cli::run(&argv, Ok(Vec::new()), None, &mut out, &mut err);
    if code != 0 {
        return Outcome::NotImported(reason(&String::from_utf8_lossy(&err)));
    }
    let yaml = String::from_utf8(out).expect("utf-8");
    let layout = match pd_dsl::load::from_yaml("imported.yaml", &yaml) {
        Ok(l) => l,
        Err(e) => {
            return Outcome::NotImported(format!(
                "the imported YAML does not load: {}",
                e.to_string().lines().next().unwrap_or_default()
            ));
        }
    };
    let text = std::fs::read_to_string(&path).expect("config");
    let opts = Options {
        image,
        ..Options::default()
    };
    let imported: Imported = import(&[Input::new(file.clone(), text)], &opts)
        .unwrap_or_else(|e| panic!("{file}: the CLI imported it, the library does not: {e}"));
    let node_of: BTreeMap<usize, usize> = imported
        .ranks
        .iter()
        .map(|r| (r.input_node, r.node))
        .collect();
    let ranks = match oracle_ranks(oracle, &node_of) {
        Ok(r) => r,
        Err(e) => return Outcome::Imported(vec![e]),
    };
    let cluster = strings(&oracle["cluster_ips"]);
    let mut ips: Vec<String> = (0..layout.node_count())
        .map(|n| format!("10.99.0.{}", n + 1))
        .collect();
    for (input, node) in &node_of {
        if let (Some(ip), Some(slot)) = (cluster.get(*input), ips.get_mut(*node)) {
            *slot = ip.clone();
        }
    }
    let named: BTreeMap<String, usize> = ips
        .iter()
        .enumerate()
        .map(|(n, ip)| (ip.clone(), n))
        .collect();
    let proxy = oracle_proxy(oracle);
    let name = oracle["config"].as_str().unwrap_or_default().to_owned();
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        compare_run(
            &name,
            &layout,
            &imported,
            &ranks,
            proxy.as_ref(),
            &ips,
            &named,
            &[],
        )
    }));
    let run = run.map(|(n, mut failures)| {
        let pool = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool_failures(&name, oracle, &layout, &ips, &node_of)
        }));
        match pool {
            Ok(f) => failures.extend(f),
            Err(p) => failures.push(format!(
                "{name}: the pool's dry run fails: {}",
                panic_message(p.as_ref()).lines().next().unwrap_or_default()
            )),
        }
        (n, failures)
    });
    match run {
        Ok((_, failures)) => Outcome::Imported(failures),
        Err(p) => Outcome::Imported(vec![format!(
            "{name}: the rendered scripts fail: {}",
            panic_message(p.as_ref()).lines().next().unwrap_or_default()
        )]),
    }
}

/// A reason to group by: values masked (every backticked span but the
/// first, numbers), the config, node and rank dropped.
fn group(failure: &str) -> String {
    let rest = failure
        .split_once(": node ")
        .and_then(|(_, r)| r.split_once(": ").map(|(_, m)| m))
        .or_else(|| failure.split_once(": proxy: ").map(|(_, m)| m))
        .or_else(|| failure.split_once(": ").map(|(_, m)| m))
        .unwrap_or(failure);
    let mut out = String::new();
    let mut spans = 0;
    let mut parts = rest.split('`');
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    for (i, part) in parts.enumerate() {
        if i % 2 == 0 {
            spans += 1;
            out.push('`');
            if spans <= 1 || part.starts_with("--") || part.starts_with("env ") {
                // A flag's name, not its value (`--port 8080` → `--port`).
                match part.split_once(' ') {
                    Some((flag, _)) if flag.starts_with("--") => out.push_str(flag),
                    _ => out.push_str(part),
                }
            } else {
                out.push('…');
            }
            out.push('`');
        } else {
            out.push_str(part);
        }
    }
    let masked: String = out
        .split(' ')
        .map(|w| {
            if w.chars().any(|c| c.is_ascii_digit())
                && w.chars()
                    .all(|c| c.is_ascii_digit() || ",.;:()".contains(c))
            {
                "N"
            } else {
                w
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    masked.chars().take(200).collect()
}

#[test]
fn every_upstream_config_imports_and_runs_what_its_runner_runs() {
    let dump = tempfile::tempdir().expect("tempdir");
    let out = dump.path().display().to_string();
    python(&["scripts/upstream/e2e_oracle.py", "dump", "--out", &out]);
    let index: Value = serde_json::from_str(
        &std::fs::read_to_string(dump.path().join("index.json")).expect("oracle index"),
    )
    .expect("oracle index JSON");
    let releases: Vec<String> = index["releases"]
        .as_object()
        .expect("releases")
        .keys()
        .cloned()
        .collect();
    let filter = std::env::var("PD_UPSTREAM_FILTER").ok();
    let mut jobs: Vec<(String, PathBuf, Value)> = Vec::new();
    for rel in &releases {
        let tree = PathBuf::from(
            python(&[
                "scripts/upstream/corpus.py",
                "path",
                &format!("vllm-ascend=={rel}"),
            ])
            .trim(),
        );
        let dir = dump.path().join(rel);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for f in files {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(&f).expect("oracle"))
                .expect("oracle JSON");
            if filter
                .as_deref()
                .is_some_and(|t| !v["config"].as_str().unwrap_or_default().contains(t))
            {
                continue;
            }
            jobs.push((rel.clone(), tree.clone(), v));
        }
    }
    if filter.is_none() {
        assert!(jobs.len() > 700, "the oracle lists {} configs", jobs.len());
    }

    // Each config on one of two workers; a panic inside the harness is that
    // config's failure, printed once in the table, not on stderr.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().name() != Some("upstream-config") {
            default_hook(info);
        }
    }));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Outcome)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            std::thread::Builder::new()
                .name("upstream-config".into())
                .spawn_scoped(scope, || {
                    loop {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        let Some((rel, tree, v)) = jobs.get(i) else {
                            break;
                        };
                        let o = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            run_config(rel, tree, v)
                        }))
                        .unwrap_or_else(|p| Outcome::Panicked(panic_message(p.as_ref())));
                        results.lock().expect("lock").push((i, o));
                    }
                })
                .expect("spawn");
        }
    });
    let mut results = results.into_inner().expect("lock");
    results.sort_by_key(|(i, _)| *i);

    // release → (configs, never start (runner or vLLM), imported, round-tripped)
    let mut table: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    let mut groups: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let mut runner_fails = Vec::new();
    let mut panics = Vec::new();
    let mut every: Vec<String> = Vec::new();
    for (i, o) in &results {
        let (rel, _, v) = &jobs[*i];
        let config = v["config"].as_str().unwrap_or_default();
        let row = table.entry(rel.as_str()).or_default();
        row[0] += 1;
        let mut add = |why: String, example: String| {
            let g = groups.entry(why).or_insert((0, example));
            g.0 += 1;
        };
        match o {
            Outcome::RunnerFails(e) => {
                row[1] += 1;
                runner_fails.push(format!("{rel} {config}: {e}"));
            }
            Outcome::VllmRefuses(e) => {
                row[1] += 1;
                runner_fails.push(format!("{rel} {config}: {e}"));
            }
            Outcome::Panicked(m) => panics.push(format!("{rel} {config}: {m}")),
            Outcome::NotImported(why) => {
                every.push(format!("{rel} {config}: not imported: {why}"));
                add(
                    format!("not imported: {}", group(&format!("x: {why}"))),
                    format!("{rel} {config}: {why}"),
                )
            }
            Outcome::Imported(f) if f.is_empty() => {
                row[2] += 1;
                row[3] += 1;
            }
            Outcome::Imported(f) => {
                row[2] += 1;
                every.push(format!("{rel} {config}: differs: {}", f[0]));
                add(
                    format!("differs: {}", group(&f[0])),
                    format!("{rel} {}", f[0]),
                );
            }
        }
    }
    let mut report = String::new();
    report.push_str(&format!(
        "{:<12} {:>7} {:>12} {:>9} {:>14}\n",
        "release", "configs", "never start", "imported", "round-tripped"
    ));
    let pct = |n: usize, of: usize| (100 * n).checked_div(of).unwrap_or(0);
    let mut total = [0usize; 4];
    for (rel, row) in &table {
        let starts = row[0] - row[1];
        report.push_str(&format!(
            "{rel:<12} {:>7} {:>12} {:>5} {:>3}% {:>10} {:>3}%\n",
            row[0],
            row[1],
            row[2],
            pct(row[2], starts),
            row[3],
            pct(row[3], starts)
        ));
        for k in 0..4 {
            total[k] += row[k];
        }
    }
    let starts = total[0] - total[1];
    report.push_str(&format!(
        "{:<12} {:>7} {:>12} {:>5} {:>3}% {:>10} {:>3}%\n",
        "all",
        total[0],
        total[1],
        total[2],
        pct(total[2], starts),
        total[3],
        pct(total[3], starts)
    ));
    report.push_str("\nthe release's own runner or vLLM cannot start (O6):\n");
    for r in &runner_fails {
        report.push_str(&format!("  {r}\n"));
    }
    let mut by_count: Vec<(&String, &(usize, String))> = groups.iter().collect();
    by_count.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(b.0)));
    report.push_str("\nfailures by reason (configs, reason, first example):\n");
    for (why, (n, example)) in by_count {
        report.push_str(&format!("{n:>4}  {why}\n        e.g. {example}\n"));
    }
    let mut listing = String::from("\nevery config that does not round-trip:\n");
    for e in &every {
        let line: String = e.chars().take(400).collect();
        listing.push_str(&format!("  {line}\n"));
    }
    println!("{report}{listing}");
    // The same, kept for reading after a passing run (whose output the
    // harness hides).
    let kept = Path::new(env!("CARGO_TARGET_TMPDIR")).join("upstream_import.txt");
    if std::fs::write(&kept, format!("{report}{listing}")).is_ok() {
        println!("report kept at {}", kept.display());
    }

    if filter.is_some() {
        assert!(panics.is_empty(), "{panics:?}");
        return;
    }
    let mut regressions: Vec<String> = panics
        .iter()
        .map(|p| format!("panicked (bad input never panics): {p}"))
        .collect();
    for rel in &releases {
        let Some((_, configs, imported, round_tripped)) = FLOORS.iter().find(|(r, ..)| r == rel)
        else {
            regressions.push(format!(
                "{rel}: no row in FLOORS (a new release in the corpus)"
            ));
            continue;
        };
        let row = table.get(rel.as_str()).copied().unwrap_or_default();
        let starts = row[0] - row[1];
        if starts != *configs {
            regressions.push(format!(
                "{rel}: the runner starts {starts} configs, FLOORS says {configs}"
            ));
        }
        if row[2] < *imported {
            regressions.push(format!(
                "{rel}: {} configs import, the floor is {imported}",
                row[2]
            ));
        }
        if row[3] < *round_tripped {
            regressions.push(format!(
                "{rel}: {} configs round-trip, the floor is {round_tripped}",
                row[3]
            ));
        }
    }
    assert!(
        regressions.is_empty(),
        "{}\n\n{report}",
        regressions.join("\n")
    );
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

#[test]
fn failures_group_by_their_reason_not_their_values() {
    assert_eq!(
        group("a.yaml: node 1 DP rank 3: `--port`: the input passes `8080`, ours `7100`"),
        "`--port`: the input passes `…`, ours `…`"
    );
    assert_eq!(
        group("a.yaml: proxy: `--port`: the input passes `6000`, ours `1999`"),
        "`--port`: the input passes `…`, ours `…`"
    );
    assert_eq!(
        group("x: error: found model `a/b`, expected one of 3"),
        "error: found model `a/b`, expected one of N"
    );
    assert_eq!(
        group(
            "x: error: found `--gpu-memory-utilization 0.9` here and `0.92` on another node (line 224):"
        ),
        "error: found `--gpu-memory-utilization` here and `…` on another node (line N"
    );
}
