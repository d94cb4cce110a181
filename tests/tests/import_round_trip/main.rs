//! The import round trip, for every fixture under `tests/fixtures/import/`
//! (every e2e config in `configs/`, every script set in `scripts/`; not
//! `broken/`): what the imported layout renders runs each input rank with
//! the input's `vllm serve` argv, env and kv-transfer-config.
//!
//! The path is the user's: `catalog import FILES --format yaml` (in
//! process, through `layouts::cli::run`) → the YAML loader
//! (`pd_dsl::load::from_yaml`, which runs the rules) → render → write →
//! run. The printed Rust `layout!` source cannot be parsed at run time (the
//! macro's parser lives in the proc-macro crate), so `import_printed.rs`
//! compiles every fixture's printed source, committed in `tests/imported/`,
//! and asserts it renders byte for byte what the YAML path renders here.
//! What runs is what an operator runs: `run.sh` of every node with
//! `PD_DRY_RUN=1`, the launcher's `--dry-run` (PD nodes), and the role
//! template or `run_mixed.sh` with a recording `vllm` on PATH
//! ([`pd_dsl_tests::harness`]). The input side is `Imported::ranks`: per
//! input rank, the model, the options (per-rank placeholders resolved as
//! `launch_online_dp.py` or the e2e runner resolves them) and the env; and
//! `Imported::proxy`: the proxy line of a script set, or the command the e2e
//! runner builds for a config, compared with the proxy command node 0's
//! run.sh prints in its dry run (`proxy.sh: would run: ...`).
//!
//! # Normalisations (the only differences allowed)
//! 1. Argument order, `--flag=value` vs `--flag value`, and `--flag_name`
//!    vs `--flag-name` (vLLM's argparse reads them alike).
//! 2. JSON option values (`--kv-transfer-config`, `--additional-config`,
//!    `--speculative-config`, `--compilation-config`) compare as JSON: key
//!    order and whitespace do not count.
//! 3. `engine_id` in `--kv-transfer-config`: where the input leaves it out
//!    (vLLM then draws a random one per process), pd-dsl passes the
//!    engine's derived id, which must equal the `ENGINE_ID` run.sh exports.
//! 4. DP master addresses: run.sh is given, as the address of each
//!    engine's first node, the address the input names for that engine's DP
//!    master, so `--data-parallel-address` must come out identical. Where
//!    the input names it by a placeholder the e2e runner fills at run time
//!    (`${NODE_k_IP}`, `$LOCAL_IP`, `$MASTER_IP`; run.sh takes addresses
//!    only), the placeholder is bound to a test address first.
//! 5. Env values that reference other variables (`/x:$LD_LIBRARY_PATH`)
//!    are expanded against the environment the script started with; a
//!    prepend onto an unset variable has no trailing `:` in ours.
//! 6. Env that is derived rather than written, and is checked otherwise:
//!    `ASCEND_RT_VISIBLE_DEVICES` must be the devices the upstream launcher
//!    gives the rank (local rank × TP onwards, TP devices); `ENGINE_ID`
//!    must be the value run.sh exports (its kv port is compared inside
//!    `--kv-transfer-config`); `HCCL_IF_IP`, `GLOO_SOCKET_IFNAME`,
//!    `TP_SOCKET_IFNAME`, `HCCL_SOCKET_IFNAME` are not compared: run.sh
//!    resolves them on each node at run time, the input wrote one
//!    machine's.
//! 7. pd-dsl adds no env of its own: a variable ours sets that the input
//!    does not (beyond 6 and the harness's own) is a difference. Env the
//!    script inherits unchanged is set by neither side.
//! 8. Options at vLLM's default value that one side passes and the other
//!    leaves out: [`VLLM_DEFAULTS`].
//! 9. `--host`/`--port` on a `--headless` worker (no API server runs).
//! 10. A difference the importer reported — a `deviate(...)` in the
//!     imported layout and a `catalog lint` warning — about the same model,
//!     flag or variable (e.g. a hub id served from the model table's path,
//!     `--host 127.0.0.1`, `--quantization` the input leaves out), or, for
//!     the proxy, about its script (the e2e runner starts the load-balance
//!     proxy whatever the connector) or its lists ("the proxy lists ...":
//!     a count that is not one per rank, hosts and ports of different
//!     lengths, which the proxy refuses, endpoints out of node order).
//! 11. The proxy: the interpreter (`python`, `python3`, the e2e runner's
//!     own) and the script's directory are not compared, its file name is.
//!     Each endpoint list compares as ordered `host:port` pairs: the proxy
//!     balances over them in that order, so the same endpoints in another
//!     order are a difference (the imported layout derives the lists,
//!     every rank in node order, then port; the importer records the
//!     input's order and reports one that differs, normalisation 10).
//!     Hosts compare as the addresses run.sh is given: a host the input
//!     names as an engine's DP master (address or placeholder,
//!     normalisation 4) is that node's address; a host named nowhere else (a non-master node's address,
//!     `${NODE_k_IP}` of such a node) stands for the next node of the
//!     list's role the input gives no address, by first appearance, so the
//!     order among two such nodes of one role is not checked. `--host` is
//!     resolved the same way (a DP master's address only); `--port` and
//!     every other flag compare as written.
//!
//! Anything else that differs — a flag missing, added or changed, an env
//! variable missing, added or changed, another model, a proxy endpoint
//! missing, added, changed or moved — fails the test with the unit, node,
//! rank (or `proxy`) and value.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl::import::{Imported, Input, Options, import};
use pd_dsl_tests::harness::{dry_run, render_layout, sorted};
use pd_dsl_tests::round_trip::{
    Addresses, START_ENV, bind_addresses, compare_run, expand, names, proxy_failures,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod proxy;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/import")
}

/// One imported deployment: its files and the options the CLI gets.
struct Unit {
    files: Vec<PathBuf>,
    /// `--hardware`, where the input cannot say (a script set on A2).
    hardware: Option<&'static str>,
}

fn units() -> Vec<Unit> {
    let mut out = Vec::new();
    for f in sorted(&root().join("configs")) {
        out.push(Unit {
            files: vec![f],
            hardware: None,
        });
    }
    for d in sorted(&root().join("scripts")) {
        out.push(Unit {
            hardware: d.ends_with("a2-v31-mixed-2node").then_some("a2"),
            files: sorted(&d),
        });
    }
    out
}

/// `catalog import FILES --format yaml`, in process.
fn import_yaml(unit: &Unit) -> String {
    let mut argv: Vec<String> = vec!["catalog".into(), "import".into()];
    argv.extend(unit.files.iter().map(|f| f.display().to_string()));
    argv.extend(["--format".into(), "yaml".into()]);
    if let Some(h) = unit.hardware {
        argv.extend(["--hardware".into(), h.into()]);
    }
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = layouts::cli::run(&argv, Ok(Vec::new()), None, &mut out, &mut err);
    assert_eq!(code, 0, "{argv:?}: {}", String::from_utf8_lossy(&err));
    String::from_utf8(out).expect("utf-8")
}

/// The input side: what the importer read, per rank, and what it reported
/// as differing.
fn input_side(unit: &Unit) -> Imported {
    let inputs: Vec<Input> = unit
        .files
        .iter()
        .map(|p| Input::new(p.display().to_string(), std::fs::read_to_string(p).unwrap()))
        .collect();
    let opts = Options {
        hardware: unit.hardware.map(str::to_owned),
        ..Options::default()
    };
    import(&inputs, &opts).unwrap_or_else(|e| panic!("{e}"))
}

/// Imports, renders and runs one unit; every difference not normalised
/// away, as `FILE: node N DP rank R: message`.
fn round_trip(unit: &Unit, alter: impl Fn(&mut Imported)) -> (usize, Vec<String>) {
    let name = unit.files[0].display().to_string();
    let yaml = import_yaml(unit);
    let layout = pd_dsl::load::from_yaml("imported.yaml", &yaml)
        .unwrap_or_else(|e| panic!("{name}: the imported YAML does not load: {e}"));
    let mut imported = input_side(unit);
    alter(&mut imported);
    let (ips, named) = bind_addresses(&layout, &mut imported.ranks);
    compare_run(
        &name,
        &layout,
        &imported,
        &imported.ranks,
        imported.proxy.as_ref(),
        &ips,
        &named,
        START_ENV,
    )
}

/// The proxy part of [`round_trip`] only, once per `alter` on one render:
/// imports, renders, dry-runs node 0 (the proxy's node) and compares.
fn proxy_round_trip(unit: &Unit, alters: &[&dyn Fn(&mut Imported)]) -> Vec<Vec<String>> {
    let name = unit.files[0].display().to_string();
    let layout = pd_dsl::load::from_yaml("imported.yaml", &import_yaml(unit))
        .unwrap_or_else(|e| panic!("{name}: the imported YAML does not load: {e}"));
    let imported = input_side(unit);
    let mut bound = imported.clone();
    let (ips, named) = bind_addresses(&layout, &mut bound.ranks);
    let r = render_layout(&layout);
    let node_ips: Vec<&str> = ips.iter().map(String::as_str).collect();
    let ours = dry_run(&r, 0, &node_ips).proxy_command;
    let addresses = Addresses::new(&layout, &ips, &named);
    alters
        .iter()
        .map(|alter| {
            let mut i = imported.clone();
            alter(&mut i);
            proxy_failures(&name, &i, i.proxy.as_ref(), ours.as_deref(), &addresses)
        })
        .collect()
}

#[test]
fn every_fixture_renders_what_its_input_runs() {
    let units = units();
    assert!(units.len() >= 15, "{} fixtures", units.len());
    let mut failures = Vec::new();
    let mut compared = 0;
    for unit in &units {
        let (n, f) = round_trip(unit, |_| {});
        assert!(n > 0, "{:?}: no rank compared", unit.files);
        compared += n;
        failures.extend(f);
    }
    // The first differences are enough to see what broke.
    const SHOWN: usize = 60;
    assert!(
        failures.is_empty(),
        "{} difference(s) over {compared} ranks:\n{}{}",
        failures.len(),
        failures[..failures.len().min(SHOWN)].join("\n"),
        if failures.len() > SHOWN { "\n..." } else { "" }
    );
}

fn unit(dir: &str) -> Unit {
    Unit {
        files: sorted(&root().join("scripts").join(dir)),
        hardware: None,
    }
}

/// What the importer would report if it had read `flag` as `value` on
/// every rank.
fn set_option(imported: &mut Imported, flag: &str, value: Option<&str>) {
    for r in &mut imported.ranks {
        let o = r.options.iter_mut().find(|(f, _)| f == flag).expect(flag);
        o.1 = value.map(str::to_owned);
    }
}

#[test]
fn a_changed_dropped_or_added_value_is_a_difference() {
    let u = unit("a3-v31-2p1d-v1");
    let rank0 = "a3-v31-2p1d-v1/launch.sh: node 0 DP rank 0";
    let has = |failures: &[String], want: &str| {
        failures
            .iter()
            .any(|f| f.ends_with(want) && f.contains(rank0))
    };
    // A value read wrong.
    let (_, f) = round_trip(&u, |i| set_option(i, "--max-num-seqs", Some("9")));
    assert!(
        has(&f, "`--max-num-seqs`: the input passes `9`, ours `8`"),
        "{f:#?}"
    );
    // A flag the renderer would not pass.
    let (_, f) = round_trip(&u, |i| {
        for r in &mut i.ranks {
            r.options.push(("--disable-log-stats".into(), None));
        }
    });
    assert!(
        has(
            &f,
            "`--disable-log-stats`: the input passes it, ours does not"
        ),
        "{f:#?}"
    );
    // A flag dropped by the importer is one ours passes beyond the input.
    let (_, f) = round_trip(&u, |i| {
        for r in &mut i.ranks {
            r.options.retain(|(f, _)| f != "--seed");
        }
    });
    assert!(
        has(&f, "`--seed 1024`: ours passes it, the input does not"),
        "{f:#?}"
    );
    // A kv-transfer-config key, compared as JSON.
    let (_, f) = round_trip(&u, |i| {
        for r in &mut i.ranks {
            for (flag, v) in &mut r.options {
                if flag == "--kv-transfer-config" {
                    *v = v.as_ref().map(|v| v.replace("36100", "36101"));
                }
            }
        }
    });
    assert!(
        f.iter().any(|x| x.contains(rank0)
            && x.contains("`--kv-transfer-config`: the input passes")
            && x.contains("\"kv_port\":\"36101\"")),
        "{f:#?}"
    );
    // Env, changed and dropped.
    let (_, f) = round_trip(&u, |i| {
        for r in &mut i.ranks {
            r.env.retain(|(k, _)| k != "TASK_QUEUE_ENABLE");
            for (k, v) in &mut r.env {
                if k == "HCCL_BUFFSIZE" {
                    *v = "1".into();
                }
            }
        }
    });
    assert!(
        has(
            &f,
            "env `HCCL_BUFFSIZE`: the input sets `1` (written `1`), ours `256`"
        ),
        "{f:#?}"
    );
    assert!(
        has(
            &f,
            "env `TASK_QUEUE_ENABLE=1`: ours sets it, the input does not"
        ),
        "{f:#?}"
    );
    // Another model.
    let (_, f) = round_trip(&u, |i| {
        for r in &mut i.ranks {
            r.model = "/weights/other".into();
        }
    });
    assert!(
        has(
            &f,
            "model: the input serves `/weights/other`, ours `/weights/DeepSeek-V3.1-w8a8-mtp-QuaRot`"
        ),
        "{f:#?}"
    );
}

#[test]
fn a_reported_difference_names_its_flag_as_a_whole_word() {
    assert!(names("no `--port` here", "`--port"));
    assert!(names("`--port 8000` differs", "`--port"));
    assert!(!names("`--portable` differs", "`--port"));
    assert!(!names("`--port-range 1` differs", "`--port"));
}

#[test]
fn env_references_expand_as_the_shell_expands_them() {
    let env: BTreeMap<String, String> = [("LD_LIBRARY_PATH".to_owned(), "/a".to_owned())].into();
    assert_eq!(expand("/x:$LD_LIBRARY_PATH", &env), "/x:/a");
    assert_eq!(expand("/x:${LD_LIBRARY_PATH}/y", &env), "/x:/a/y");
    assert_eq!(expand("$UNSET-z", &env), "-z");
    assert_eq!(expand("cost $5 and $", &env), "cost  and $");
}

#[test]
fn a_value_pd_dsl_does_not_keep_is_reported_so_the_round_trip_holds() {
    // A decode template binding its API servers to loopback: pd-dsl binds
    // every rank to all interfaces, and the import must say so.
    let tmp = tempfile::tempdir().unwrap();
    let src = root().join("scripts/a3-v31-2p1d-v1");
    for f in sorted(&src) {
        let text = std::fs::read_to_string(&f).unwrap();
        let text = if f.ends_with("run_dp_template_d.sh") {
            text.replace("--host 0.0.0.0", "--host 127.0.0.1")
        } else {
            text
        };
        std::fs::write(tmp.path().join(f.file_name().unwrap()), text).unwrap();
    }
    let u = Unit {
        files: sorted(tmp.path()),
        hardware: None,
    };
    let imported = input_side(&u);
    assert!(
        imported
            .notes
            .iter()
            .any(|n| n.what == "`--host 127.0.0.1`" && n.at.line == 24),
        "{:?}",
        imported.notes
    );
    let (compared, failures) = round_trip(&u, |_| {});
    assert_eq!((compared, failures), (36, Vec::<String>::new()));
    // Without the report, the difference is a failure.
    let (_, failures) = round_trip(&u, |i| i.notes.clear());
    assert!(
        failures
            .iter()
            .any(|f| f.ends_with("`--host`: the input passes `127.0.0.1`, ours `0.0.0.0`")),
        "{failures:#?}"
    );
}
