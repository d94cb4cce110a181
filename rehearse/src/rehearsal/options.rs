//! What a rehearsal is asked for and what it reports: faults, signals,
//! operator actions, options and the outcome.

use crate::standin::proxy::Policy;
use pd_dsl::render::k8s::K8sSettings;
use std::path::PathBuf;
use std::time::Duration;

/// An injected fault (besides `--kill`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// One of the layout's ports is held before start.
    PortInUse,
    /// The model directory does not exist.
    MissingModel,
    /// The model directory holds another model's weights.
    WrongWeights,
    /// One node reports the wrong number of NPUs.
    WrongNpuCount,
    /// A non-master DP rank cannot reach its DP master.
    UnreachableMaster,
    /// The proxy's decoder lists miss the last decode rank.
    ProxyMissesRank,
    /// The proxy script does not exist on node 0.
    MissingProxyScript,
    /// The proxy exits right after start, every time.
    ProxyExits,
}

impl Fault {
    /// Every fault, in documentation order.
    pub const ALL: [Fault; 8] = [
        Fault::PortInUse,
        Fault::MissingModel,
        Fault::WrongWeights,
        Fault::WrongNpuCount,
        Fault::UnreachableMaster,
        Fault::ProxyMissesRank,
        Fault::MissingProxyScript,
        Fault::ProxyExits,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Fault::PortInUse => "port-in-use",
            Fault::MissingModel => "missing-model",
            Fault::WrongWeights => "wrong-weights",
            Fault::WrongNpuCount => "wrong-npu-count",
            Fault::UnreachableMaster => "unreachable-master",
            Fault::ProxyMissesRank => "proxy-misses-rank",
            Fault::MissingProxyScript => "missing-proxy-script",
            Fault::ProxyExits => "proxy-exits",
        }
    }

    /// Parses a command-line name.
    pub fn parse(s: &str) -> Result<Fault, String> {
        Fault::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Fault::ALL.iter().map(|f| f.name()).collect();
                format!("unknown fault `{s}`, expected one of {}", names.join(", "))
            })
    }
}

/// A signal an operator's session sends to `run.sh`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sig {
    /// A dropped SSH session or `docker exec -it`.
    Hup,
    /// `kill`, systemd, `docker stop`.
    Term,
    /// Ctrl-C.
    Int,
}

impl Sig {
    /// Every signal, in documentation order.
    pub const ALL: [Sig; 3] = [Sig::Hup, Sig::Term, Sig::Int];

    /// `HUP`, `TERM`, `INT`.
    pub fn name(self) -> &'static str {
        match self {
            Sig::Hup => "HUP",
            Sig::Term => "TERM",
            Sig::Int => "INT",
        }
    }

    /// Parses `HUP`, `SIGHUP`, `hup`, ….
    pub fn parse(s: &str) -> Result<Sig, String> {
        let up = s.to_ascii_uppercase();
        let name = up.strip_prefix("SIG").unwrap_or(&up);
        Sig::ALL
            .into_iter()
            .find(|g| g.name() == name)
            .ok_or_else(|| format!("unknown signal `{s}`, expected HUP, TERM or INT"))
    }

    pub(super) fn raw(self) -> rustix::process::Signal {
        use rustix::process::Signal;
        match self {
            Sig::Hup => Signal::HUP,
            Sig::Term => Signal::TERM,
            Sig::Int => Signal::INT,
        }
    }
}

/// An operator action on one node once the deployment is up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// The signal to that node's `run.sh` process (not its group): every
    /// rank of the node must stop, nothing of the node may be left.
    Signal(usize, Sig),
    /// That node's `stop.sh`, twice: the first stops every rank and frees
    /// the node's ports, the second finds nothing to stop; both exit 0.
    Stop(usize),
}

/// What to rehearse and how.
#[derive(Clone, Debug)]
pub struct Options {
    /// The multi-call executable that plays every stand-in when invoked
    /// under its name (the `catalog` binary; `std::env::current_exe()`).
    pub standins: PathBuf,
    /// `--kill NODE:RANK`: that rank dies once the deployment is up.
    pub kill: Option<(usize, u32)>,
    /// `--signal NODE:SIG` / `--stop NODE`: an operator action once the
    /// deployment is up, which must stop that node cleanly.
    pub action: Option<Action>,
    /// An injected fault.
    pub fault: Option<Fault>,
    /// Run this proxy script (e.g. upstream's
    /// `load_balance_proxy_server_example.py`) instead of the stand-in.
    pub proxy_script: Option<PathBuf>,
    /// The stand-in proxy's selection policy (ignored with `proxy_script`).
    pub proxy_policy: Policy,
    /// Keep the temp dir (scripts, logs, state) after the rehearsal.
    pub keep: bool,
    /// Global bound on the whole rehearsal.
    pub timeout: Duration,
    /// `--k8s-env`: each node's `run.sh` gets the environment its pod of the
    /// layout's `k8s/` manifests would have (no `PD_NODE_INDEX`/`PD_NODE_IPS`)
    /// and the proxy runs as its Deployment, at its own address
    /// ([`crate::k8s_env`]).
    pub k8s_env: bool,
    /// With `k8s_env`: variables to set (`Some`) or remove (`None`) in every
    /// pod's environment, to rehearse a broken manifest.
    pub k8s_env_override: Vec<(String, Option<String>)>,
    /// With `k8s_env`: the settings the `k8s/` manifests are rendered with
    /// (`catalog rehearse --k8s-*`, e.g. `--k8s-autoscale keda`, whose pods
    /// go without `PD_K8S_*`).
    pub k8s_settings: K8sSettings,
    /// With `k8s_env`: every worker pod's DNS name resolves only this long
    /// after the nodes start, as when a group's workers are scheduled after
    /// its leader (a scale-out, a busy cluster).
    pub k8s_late_workers: Option<Duration>,
    /// With `k8s_env`: the `terminationGracePeriodSeconds` the kubelet gives
    /// a pod on SIGTERM instead of its manifest's (a platform's cap, an
    /// edited manifest).
    pub k8s_grace_seconds: Option<u64>,
}

impl Options {
    /// Defaults: no fault, stand-in proxy, temp dir removed, 120 s timeout.
    pub fn new(standins: impl Into<PathBuf>) -> Options {
        Options {
            standins: standins.into(),
            kill: None,
            action: None,
            fault: None,
            proxy_script: None,
            proxy_policy: Policy::RoundRobin,
            keep: false,
            timeout: Duration::from_secs(120),
            k8s_env: false,
            k8s_env_override: Vec::new(),
            k8s_settings: K8sSettings::default(),
            k8s_late_workers: None,
            k8s_grace_seconds: None,
        }
    }
}

/// The result of a rehearsal that could run.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// `true` when the deployment came up, verified, every rank served and
    /// nothing was left running.
    pub passed: bool,
    /// What went wrong, each naming node and rank where one applies.
    pub failures: Vec<String>,
    /// Wall time.
    pub elapsed: Duration,
    /// Completions sent (verify.sh excluded).
    pub requests: usize,
    /// The temp dir, when kept.
    pub kept: Option<PathBuf>,
}
