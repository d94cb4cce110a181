//! An engine pod's health probes, its pre-stop hook and the env `run.sh`
//! reads for draining, logs and waiting.

use crate::render::k8s::{PRESTOP_SECONDS, SCRIPTS_DIR, STARTUP_MARGIN_SECONDS};
use crate::render::model::DEFAULT_WAIT_SECONDS;
use k8s_openapi::api::core::v1::{ExecAction, Lifecycle, LifecycleHandler, Probe};

/// The pod's three probes on every given API port's `/health` (the ranks
/// listen on all addresses: `--host 0.0.0.0`), through the scripts'
/// `http_request` (curl when the image has it, else python3):
/// - startup: until it passes, the others wait; it allows `run.sh`'s own
///   wait for the ranks (`PD_WAIT_SECONDS`, set in the pod) plus
///   [`STARTUP_MARGIN_SECONDS`], so a model load is never cut short;
/// - liveness: 4 failures 30 s apart (a hung or dead engine answers 503 or
///   nothing) restart the container, which recreates the group;
/// - readiness: 3 failures 10 s apart take the pod out of its Services.
#[derive(Clone, Debug, PartialEq)]
pub struct Probes {
    /// `startupProbe`.
    pub startup: Probe,
    /// `livenessProbe`.
    pub liveness: Probe,
    /// `readinessProbe`.
    pub readiness: Probe,
}

/// Period of the liveness probe, seconds.
pub const LIVENESS_PERIOD_SECONDS: i32 = 30;
/// Failures in a row that restart the container.
pub const LIVENESS_FAILURES: i32 = 4;
/// Period of the readiness probe, seconds.
pub const READINESS_PERIOD_SECONDS: i32 = 10;
/// Failures in a row that take the pod out of its Services.
pub const READINESS_FAILURES: i32 = 3;
/// Period of the startup probe, seconds.
pub const STARTUP_PERIOD_SECONDS: i32 = 10;

/// The script the probes run, from the scripts ConfigMap.
pub const HEALTH_SCRIPT: &str = "health.sh";

pub(super) fn health_probes(ports: &[u32]) -> Option<Probes> {
    if ports.is_empty() {
        return None;
    }
    let mut command = vec!["bash".to_owned(), format!("{SCRIPTS_DIR}/{HEALTH_SCRIPT}")];
    command.extend(ports.iter().map(u32::to_string));
    let timeout = i32::try_from(2 * ports.len() + 5).unwrap_or(i32::MAX);
    let probe = |period: i32, failures: i32| Probe {
        exec: Some(ExecAction {
            command: Some(command.clone()),
        }),
        period_seconds: Some(period),
        timeout_seconds: Some(timeout),
        failure_threshold: Some(failures),
        ..Probe::default()
    };
    let window = u64::from(DEFAULT_WAIT_SECONDS) + STARTUP_MARGIN_SECONDS.unsigned_abs();
    let startup_period = STARTUP_PERIOD_SECONDS.max(timeout);
    let startup_failures =
        i32::try_from(window.div_ceil(startup_period.unsigned_abs().into())).unwrap_or(i32::MAX);
    Some(Probes {
        startup: probe(startup_period, startup_failures),
        // A period never shorter than one probe may take.
        liveness: probe(LIVENESS_PERIOD_SECONDS.max(timeout), LIVENESS_FAILURES),
        readiness: probe(READINESS_PERIOD_SECONDS.max(timeout), READINESS_FAILURES),
    })
}

/// `preStop`: wait [`PRESTOP_SECONDS`] before the kubelet's SIGTERM.
pub(super) fn pre_stop() -> Lifecycle {
    Lifecycle {
        pre_stop: Some(LifecycleHandler {
            exec: Some(ExecAction {
                command: Some(vec!["sleep".to_owned(), PRESTOP_SECONDS.to_string()]),
            }),
            ..LifecycleHandler::default()
        }),
        ..Lifecycle::default()
    }
}

/// Env var: seconds a stopping rank drains (`run.sh` passes vLLM's
/// `--shutdown-timeout` and the launcher's grace from it).
pub const ENV_DRAIN_SECONDS: &str = "PD_DRAIN_SECONDS";
/// Env var: `1` makes `run.sh` follow its node's rank logs on stdout.
pub const ENV_LOG_STDOUT: &str = "PD_LOG_STDOUT";
/// Env var: seconds node 0 waits for every rank (`run.sh`).
pub const ENV_WAIT_SECONDS: &str = "PD_WAIT_SECONDS";
