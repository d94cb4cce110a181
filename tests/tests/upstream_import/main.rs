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

mod config;
mod groups;
mod oracle;
mod pool;

use config::{Outcome, panic_message, run_config};
use groups::group;
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
    // One of the 74 is refused since `sequence_parallel_needs_tp_ep`:
    // weekly/multi_node/external_dp/config/Qwen3.5-397B-w4a8_128k-1k-90-50-PD.yaml
    // turns FlashComm1 on (env) for its TP4 prefill node without
    // `--enable-expert-parallel` on a MoE model, which the release's
    // `check_and_update_config` asserts against (vllm_ascend/platform.py
    // @v0.23.0 L768): upstream's own config does not start as written.
    ("0.23.0", 74, 72, 72),
    ("0.23.0rc1", 26, 25, 25),
    ("0.24.0rc1", 35, 35, 35),
    ("0.25.1rc1", 33, 33, 33),
    ("0.26.0rc1", 46, 46, 46),
    ("0.27.1rc1", 87, 86, 86),
    ("0.28.0rc1", 87, 86, 86),
    // 21 of its 87 configs pass `--kv-cache-dtype int8`, which vLLM 0.29.0's
    // argparse refuses: the release widens `CacheDType` for pydantic
    // (patch/platform/patch_kv_cache_dtype.py) but not the parser's choices,
    // which its platform hook appends only from 0.30.0rc1 (platform.py
    // `pre_register_and_update` L333, facts `parser_choices_widened`).
    ("0.29.0rc1", 66, 66, 66),
    ("0.30.0rc1", 76, 75, 75),
    ("0.30.0rc2", 76, 75, 75),
];

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
