//! `catalog rehearse NAME --k8s-env`: every registered layout's scripts run
//! with exactly the environment their pods get from the layout's `k8s/`
//! manifests (LeaderWorkerSet's `LWS_*` variables, the manifest's env, pod
//! DNS names; no `PD_NODE_INDEX`/`PD_NODE_IPS`), the proxy as its own
//! Deployment; and a broken pod environment fails naming its cause.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use pd_rehearse::rehearsal::{self, Options, Outcome};
use std::sync::Mutex;
use std::time::Duration;

const CATALOG: &str = env!("CARGO_BIN_EXE_catalog");
/// Rehearsals share loopback addresses and ports: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn rehearse(layout: &pd_dsl::Layout, overrides: &[(&str, Option<&str>)]) -> (Outcome, String) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut opts = Options::new(CATALOG);
    opts.k8s_env = true;
    opts.timeout = Duration::from_secs(90);
    opts.k8s_env_override = overrides
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.map(str::to_owned)))
        .collect();
    let mut out = Vec::new();
    let outcome = rehearsal::rehearse(layout, &opts, &mut out)
        .unwrap_or_else(|e| panic!("{}: rehearsal could not run: {e}", layout.name()));
    (outcome, String::from_utf8_lossy(&out).into_owned())
}

#[test]
fn every_layout_goes_green_with_its_pods_environment() {
    for l in layouts::catalog().unwrap() {
        let (outcome, out) = rehearse(l, &[]);
        assert!(
            outcome.passed,
            "{}:\n{out}\n{:?}",
            l.name(),
            outcome.failures
        );
        // Every pod with API ports ran its manifest's three probes.
        for (i, n) in l.placement.nodes.iter().enumerate() {
            if n.ranks.iter().any(|r| r.api_port.is_some()) {
                let line =
                    format!("node {i}: the pod's startup, liveness, readiness probe(s) pass");
                assert!(out.contains(&line), "{}: no `{line}`:\n{out}", l.name());
            }
        }
        if l.is_pd() {
            // The proxy is the Deployment's pod, at its own address.
            let proxy = rehearsal::node_ip(l.node_count());
            assert!(
                out.contains(&format!("proxy on {proxy}:")),
                "{}:\n{out}",
                l.name()
            );
        }
    }
}

#[test]
fn a_wrong_group_size_or_a_missing_variable_fails_naming_it() {
    let l = layouts::catalog()
        .unwrap()
        .iter()
        .find(|l| l.is_pd())
        .expect("a PD layout");
    for (overrides, cause) in [
        (
            vec![("LWS_GROUP_SIZE", Some("99"))],
            "LWS_GROUP_SIZE is 99, but this engine runs on",
        ),
        (
            vec![("PD_K8S_FIRST_NODE", None)],
            "PD_K8S_FIRST_NODE must be a number",
        ),
        (
            vec![("LWS_WORKER_INDEX", None)],
            "LWS_WORKER_INDEX must be a number",
        ),
    ] {
        let (outcome, out) = rehearse(l, &overrides);
        assert!(!outcome.passed, "{overrides:?} passed:\n{out}");
        let failures = outcome.failures.join("\n");
        assert!(
            failures.contains(cause),
            "{overrides:?}: expected `{cause}` in:\n{failures}\n{out}"
        );
    }
}

/// A proxy fault lands on the proxy Deployment's pod: its lists miss the
/// last decode rank, and the coverage check names it. (`proxy-exits` and
/// `missing-proxy-script` are about node 0's run.sh and are refused with
/// `--k8s-env`: layouts/tests/rehearse/usage.rs.)
#[test]
fn a_rank_missing_from_the_proxy_deployments_lists_fails_naming_it() {
    let l = layouts::catalog()
        .unwrap()
        .iter()
        .find(|l| l.is_pd())
        .expect("a PD layout");
    let last = l.placement.proxy.decode.last().expect("a decode rank");
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut opts = Options::new(CATALOG);
    opts.k8s_env = true;
    opts.timeout = Duration::from_secs(90);
    opts.fault = Some(rehearsal::Fault::ProxyMissesRank);
    let mut out = Vec::new();
    let outcome = rehearsal::rehearse(l, &opts, &mut out)
        .unwrap_or_else(|e| panic!("{}: rehearsal could not run: {e}", l.name()));
    let out = String::from_utf8_lossy(&out);
    assert!(!outcome.passed, "{out}");
    let failures = outcome.failures.join("\n");
    let missing = format!(
        "the running proxy's lists miss {}:{}",
        rehearsal::node_ip(last.node),
        last.port
    );
    assert!(
        failures.contains(&missing),
        "expected `{missing}` in:\n{failures}\n{out}"
    );
}

/// SIGTERM to a pod (a rollout, `kubectl delete`) with requests in flight on
/// its ranks: the manifest's `PD_DRAIN_SECONDS` reaches vLLM as
/// `--shutdown-timeout` through run.sh and the launcher (whose grace grows
/// by it), so every one is answered before the pod stops, and nothing is
/// left running. With the drain taken out of the running pod while the
/// manifest still promises it, the same requests are cut, and the rehearsal
/// says so: the chain, not luck, keeps them.
#[test]
fn a_terminated_pod_drains_its_in_flight_requests() {
    let l = layouts::catalog()
        .unwrap()
        .iter()
        .find(|l| {
            l.is_pd()
                && pd_dsl::render::model::drain_flag(l)
                && l.placement.nodes[0].role == pd_dsl::Role::Prefill
        })
        .expect("a PD layout whose image's vLLM drains");
    for (overrides, drains) in [
        (vec![], true),
        (vec![("PD_DRAIN_SECONDS", Some("0"))], false),
    ] {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let mut opts = Options::new(CATALOG);
        opts.k8s_env = true;
        opts.timeout = Duration::from_secs(90);
        opts.action = Some(rehearsal::Action::Signal(0, rehearsal::Sig::Term));
        opts.k8s_env_override = overrides
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.map(str::to_owned)))
            .collect();
        let mut out = Vec::new();
        let outcome = rehearsal::rehearse(l, &opts, &mut out)
            .unwrap_or_else(|e| panic!("{}: rehearsal could not run: {e}", l.name()));
        let out = String::from_utf8_lossy(&out);
        let failures = outcome.failures.join("\n");
        if drains {
            assert!(outcome.passed, "{}:\n{out}\n{failures}", l.name());
            assert!(
                out.contains("in-flight request(s) before stopping"),
                "{}: no drain reported:\n{out}",
                l.name()
            );
        } else {
            assert!(
                !outcome.passed,
                "{}: passed without a drain:\n{out}",
                l.name()
            );
            assert!(
                failures.contains("in-flight request(s) were cut"),
                "{}: expected the cut requests named:\n{failures}\n{out}",
                l.name()
            );
        }
    }
}

/// Pods start in any order: a group's workers are often scheduled after its
/// leader, and every group an autoscaler adds starts that way. With every
/// worker pod's DNS name resolving only 3 s after start, each `run.sh` waits
/// for the names and the deployment comes up — both where the manifest names
/// every node (`PD_K8S_NODE_HOSTS`, a PD layout with a two-node engine) and
/// where an autoscaled group knows only LeaderWorkerSet's own variables
/// (`--k8s-autoscale keda`, a one-engine mixed layout on two nodes).
#[test]
fn worker_pods_scheduled_after_their_leader_are_waited_for() {
    let catalog = layouts::catalog().unwrap();
    let two_node_engine =
        |l: &&pd_dsl::Layout| l.placement.engines.iter().any(|e| e.nodes.len() > 1);
    let pd = catalog
        .iter()
        .filter(|l| l.is_pd())
        .find(two_node_engine)
        .expect("a PD layout with an engine on two nodes");
    let scaled = catalog
        .iter()
        .filter(|l| !l.is_pd() && l.placement.engines.len() == 1)
        .find(two_node_engine)
        .expect("a one-engine mixed layout on two nodes");
    let keda = pd_dsl::render::k8s::K8sSettings {
        autoscale: Some(pd_dsl::render::k8s::autoscaling::Autoscaler::Keda),
        ..pd_dsl::render::k8s::K8sSettings::default()
    };
    for (l, settings) in [
        (pd, pd_dsl::render::k8s::K8sSettings::default()),
        (scaled, keda),
    ] {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let mut opts = Options::new(CATALOG);
        opts.k8s_env = true;
        opts.timeout = Duration::from_secs(90);
        opts.k8s_settings = settings;
        opts.k8s_late_workers = Some(Duration::from_secs(3));
        opts.keep = true;
        let mut out = Vec::new();
        let outcome = rehearsal::rehearse(l, &opts, &mut out)
            .unwrap_or_else(|e| panic!("{}: rehearsal could not run: {e}", l.name()));
        let out = String::from_utf8_lossy(&out);
        let work = out
            .lines()
            .find_map(|l| {
                l.split_once(", work dir ")
                    .map(|(_, d)| d.trim().to_owned())
            })
            .expect("the work dir");
        let logs: String = (0..l.node_count())
            .map(|i| {
                std::fs::read_to_string(format!("{work}/logs/node{i}.log")).unwrap_or_default()
            })
            .collect();
        std::fs::remove_dir_all(&work).unwrap();
        assert!(
            outcome.passed,
            "{}:\n{out}\n{:?}",
            l.name(),
            outcome.failures
        );
        assert!(
            out.contains("are scheduled late: their names resolve 3.0s after start"),
            "{}: the late workers were not played:\n{out}",
            l.name()
        );
        // The leader waited for its workers' names, then had them.
        assert!(
            logs.contains("run.sh: waiting for pod name '")
                && logs.contains("' resolves to 127.0.0."),
            "{}: no wait for a late pod name in the nodes' logs:\n{logs}",
            l.name()
        );
    }
}

/// The pods' settings and late workers are the k8s environment's: without
/// `--k8s-env` they are refused before anything starts, saying so.
#[test]
fn k8s_settings_without_the_k8s_env_are_refused() {
    let l = &layouts::catalog().unwrap()[0];
    let mut opts = Options::new(CATALOG);
    opts.k8s_late_workers = Some(Duration::from_secs(1));
    let err = rehearsal::rehearse(l, &opts, &mut Vec::new()).unwrap_err();
    assert!(err.contains("does not apply without --k8s-env"), "{err}");
    let mut opts = Options::new(CATALOG);
    opts.k8s_settings.namespace = "serving".into();
    let err = rehearsal::rehearse(l, &opts, &mut Vec::new()).unwrap_err();
    assert!(err.contains("does not apply without --k8s-env"), "{err}");
}

/// The kubelet's side of that SIGTERM: it runs the pod's `preStop` hook
/// first, and SIGKILLs what still runs when `terminationGracePeriodSeconds`
/// (counted from the hook) is up. With 4 s requests in flight, the grace the
/// manifest derives from the drain holds the hook and the drain; capped at
/// 8 s (a platform's cap, an edited manifest) the 5 s hook leaves 3 s, the
/// kubelet kills the pod mid-drain, and the rehearsal names the grace and
/// the cut requests.
#[test]
fn the_kubelet_runs_the_prestop_hook_and_kills_at_the_grace_period() {
    let l = layouts::catalog()
        .unwrap()
        .iter()
        .find(|l| {
            l.is_pd()
                && pd_dsl::render::model::drain_flag(l)
                && l.placement.nodes[0].role == pd_dsl::Role::Prefill
        })
        .expect("a PD layout whose image's vLLM drains");
    let grace =
        pd_dsl::render::k8s::termination_grace_seconds(pd_dsl::render::k8s::DEFAULT_DRAIN_SECONDS);
    for cap in [None, Some(8)] {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let mut opts = Options::new(CATALOG);
        opts.k8s_env = true;
        opts.timeout = Duration::from_secs(90);
        opts.action = Some(rehearsal::Action::Signal(0, rehearsal::Sig::Term));
        opts.k8s_grace_seconds = cap;
        opts.k8s_env_override = vec![("PD_STANDIN_LATENCY_MS".into(), Some("4000".into()))];
        let mut out = Vec::new();
        let outcome = rehearsal::rehearse(l, &opts, &mut out)
            .unwrap_or_else(|e| panic!("{}: rehearsal could not run: {e}", l.name()));
        let out = String::from_utf8_lossy(&out);
        let failures = outcome.failures.join("\n");
        // The hook sleeps its seconds: it ran that long (to a tenth, at
        // most a second more).
        let hook = format!(
            "kubelet: node 0's preStop `sleep {0}` ran {0}.",
            pd_dsl::render::k8s::PRESTOP_SECONDS
        );
        assert!(out.contains(&hook), "{}: no `{hook}`:\n{out}", l.name());
        match cap {
            None => {
                assert!(outcome.passed, "{}:\n{out}\n{failures}", l.name());
                let within = format!("s into its terminationGracePeriodSeconds {grace}");
                assert!(out.contains(&within), "{}: no `{within}`:\n{out}", l.name());
            }
            Some(cap) => {
                assert!(
                    !outcome.passed,
                    "{}: passed a {cap}s grace:\n{out}",
                    l.name()
                );
                let killed = format!(
                    "(terminationGracePeriodSeconds {cap}: preStop, then SIGTERM), so the kubelet SIGKILLs it there"
                );
                assert!(
                    failures.contains(&killed)
                        && failures.contains("in-flight request(s) were cut"),
                    "{}: expected `{killed}` and the cut requests in:\n{failures}\n{out}",
                    l.name()
                );
            }
        }
    }
}
