//! The command line as clap parses it: the subcommands, their options and
//! the value enums, and the `k8s/` manifest settings.

use super::{EXIT_CODES, EXIT_USAGE};
use clap::{Parser, Subcommand, ValueEnum};
use pd_dsl::Layout;
use pd_dsl::render::k8s::autoscaling::Autoscaler;
use pd_dsl::render::k8s::{K8sSettings, LogsVolume, ResourceOverrides, WeightsVolume};
use pd_rehearse::rehearsal::{Fault, Policy};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "catalog",
    version,
    about = "Render the pd-dsl catalog: every layout's scripts and docs, plus the index",
    after_help = EXIT_CODES
)]
pub(super) struct Cli {
    /// Catalog directory to write or check.
    #[arg(long, value_name = "DIR", default_value = "catalog")]
    pub(super) out: PathBuf,
    /// Do not write: exit 1 naming every stale, missing or extra file.
    #[arg(long)]
    pub(super) check: bool,
    #[command(flatten)]
    pub(super) k8s: K8sArgs,
    #[command(subcommand)]
    pub(super) command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub(super) enum UpstreamCommand {
    /// What changed between two vllm-ascend releases of the image table
    /// (`v0.25.1rc1 v0.30.0rc2`): their vLLM's `vllm serve` flags and
    /// speculative methods, `additional_config` keys and sub-keys, env
    /// reads, KV connectors, image contracts and tag suffixes, the proxies'
    /// and launcher's flags and the e2e config format; the same as
    /// `scripts/upstream/facts.py diff`, without the corpus.
    Diff {
        /// The older release (`v0.25.1rc1` or `0.25.1rc1`).
        old: String,
        /// The newer release.
        new: String,
    },
}

#[derive(Debug, Subcommand)]
pub(super) enum Command {
    /// List the layouts (every one, or those the filters keep).
    List {
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        #[command(flatten)]
        filter: ListFilter,
        /// Every column (model and hardware ids, the full image, the date).
        #[arg(long)]
        wide: bool,
    },
    /// Show one layout's nodes, ranks and proxy.
    Show {
        /// Layout name, e.g. `deepseek-v4-flash-w8a8-mtp/a3-1p3d`.
        name: String,
        /// Output format (`json` is a stable interface).
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Write one layout's directory.
    Render {
        /// Layout name, or a file: a pd-dsl layout (`.yaml`/`.json`) or an
        /// upstream e2e config (imported as `catalog import` does).
        name: String,
        /// Catalog directory; the layout goes to `DIR/NAME/`.
        #[arg(long, value_name = "DIR", default_value = "catalog")]
        out: PathBuf,
        #[command(flatten)]
        k8s: K8sArgs,
    },
    /// Import an upstream e2e config or a deployment's scripts as a layout.
    ///
    /// Import an upstream e2e multi-node config (`.yaml`) or a set of
    /// hand-written scripts for one deployment, and print (or write) the
    /// layout that reproduces it. Conventions the input breaks are
    /// acknowledged as `allow(rule, "imported from FILE:LINE")`; a hard rule
    /// makes the import fail with its findings (exit 1).
    Import {
        /// One e2e config, or every script of one deployment.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// `rust` (`layout!` source), or the loader's `yaml` / `json`.
        #[arg(long, value_enum, default_value_t = ImportFormat::Rust)]
        format: ImportFormat,
        /// Write here instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        #[command(flatten)]
        opts: ImportOpts,
        /// Layout name (default `imported/<first file's stem>`).
        #[arg(long)]
        name: Option<String>,
        /// Recorded date, `YYYY-MM-DD` (default: the image's date).
        #[arg(long, value_name = "DATE")]
        recorded: Option<String>,
    },
    /// Check existing deployments and layout files against every rule.
    ///
    /// Lint e2e configs, script sets and pd-dsl YAML/JSON layouts: every
    /// finding as rustc shows an error (the rule, FILE:LINE:COL, the line
    /// and a caret), then one summary line per file. Directories are walked: each `.yaml`/`.yml`/`.json` is
    /// one unit, the `.sh` files of one directory one script set. Exit 1
    /// when any finding is an error.
    Lint {
        /// Files or directories.
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// `text`, or `json` (stable: `{"files": [FileReport]}`, see
        /// `pd_dsl::import::FileReport`).
        #[arg(long, value_enum, default_value_t = LintFormat::Text)]
        format: LintFormat,
        /// Colour the text findings: `auto` on a terminal unless `NO_COLOR`
        /// is set.
        #[arg(long, value_enum, default_value_t = crate::snippets::Color::Auto)]
        color: crate::snippets::Color,
        #[command(flatten)]
        opts: ImportOpts,
    },
    /// Plan a deployment for a workload: the best layout that fits.
    ///
    /// Plan a deployment: every layout of a model on a hardware within a
    /// node budget that passes every rule, estimated at a workload and
    /// ranked; the best printed as a layout file. Exit 1 when none meets
    /// the TTFT/TPOT limits or the target.
    Plan(crate::plan_cmd::PlanArgs),
    /// Set benchmark results against the estimate and record the ratio.
    ///
    /// Set `vllm bench serve` results (what `bench.sh` saves) against the
    /// estimate at each result's workload, and record the ratio next to the
    /// layout (`calibration.json`).
    Calibrate(crate::calibrate_cmd::CalibrateArgs),
    /// Compare two layouts, or one layout on two images.
    ///
    /// What differs between two layouts, or one layout on two images:
    /// topology, each role's serve options and env, what the placement
    /// derives (ranks, ports, engine ids, proxy lists), the memory budget and
    /// the estimate. Exits 0 when nothing differs, 1 when something does.
    Diff {
        /// The first layout (name or unique suffix).
        a: String,
        /// The second layout; or use `--image`.
        #[arg(required_unless_present = "image", conflicts_with = "image")]
        b: Option<String>,
        /// Compare A with A on this image of the table (`v0.30.0rc2`).
        #[arg(long, value_name = "TAG")]
        image: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// List every rule the checker runs: name, severity, one line.
    Rules {
        /// Output format (`json` adds each rule's explanation and
        /// compile-fail cases).
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Print one rule in full, with a layout that breaks it.
    ///
    /// Print one rule in full: what it checks, why, the upstream source and
    /// releases, and a layout that breaks it with the compiler's error.
    Explain {
        /// Rule name, as findings cite it (`tp_divides_node`).
        rule: String,
    },
    /// Print a shell completion script.
    ///
    /// Print a shell completion script for this command (bash, zsh, fish,
    /// elvish, powershell), e.g. `catalog completions bash >
    /// ~/.local/share/bash-completion/completions/catalog`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page.
    ///
    /// Print the man page (roff), e.g. `catalog man > catalog.1 && man
    /// ./catalog.1`.
    Man,
    /// Query the upstream facts embedded in this binary.
    ///
    /// The upstream facts embedded in this binary (`upstream/facts/`,
    /// generated from the release source distributions).
    Upstream {
        #[command(subcommand)]
        command: UpstreamCommand,
    },
    /// Rehearse a layout end to end on this machine against stand-ins.
    ///
    /// Rehearse a layout end to end on this machine: its generated scripts,
    /// unmodified, one loopback address 127.0.0.(i+1) per node, against the
    /// stand-ins (vllm, proxy, npu-smi, hccn_tool). Prints a per-node
    /// progress view and a verdict; exits 5 on any failure.
    Rehearse {
        /// Layout name.
        name: String,
        /// Kill DP rank RANK of node NODE once the deployment is up; the
        /// rehearsal must then fail naming it.
        #[arg(long, value_name = "NODE:RANK")]
        kill: Option<String>,
        /// Once up, send HUP, TERM or INT to node NODE's run.sh (as a dropped
        /// SSH session, `kill` or Ctrl-C would): every rank of that node must
        /// stop and nothing of it may be left.
        #[arg(long, value_name = "NODE:SIG")]
        signal: Option<String>,
        /// Once up, run node NODE's stop.sh (twice: it must be idempotent).
        #[arg(long, value_name = "NODE")]
        stop: Option<usize>,
        /// Inject a fault before start.
        #[arg(long, value_enum, value_name = "FAULT")]
        fault: Option<FaultArg>,
        /// Run this proxy script (upstream's
        /// load_balance_proxy_server_example.py) instead of the stand-in.
        #[arg(long, value_name = "PATH")]
        proxy_script: Option<PathBuf>,
        /// The stand-in proxy's selection policy: `round-robin`, or
        /// upstream's `least-loaded` (ties to list order).
        #[arg(long, value_enum, value_name = "POLICY", default_value_t = PolicyArg::RoundRobin)]
        proxy_policy: PolicyArg,
        /// Keep the temp dir (rendered scripts, logs, counters).
        #[arg(long)]
        keep: bool,
        /// Global bound on the whole rehearsal, in seconds.
        #[arg(long, value_name = "SECONDS", default_value_t = 120)]
        timeout: u64,
        /// Give each node's run.sh exactly its pod's environment under the
        /// layout's k8s/ manifests (LeaderWorkerSet's LWS_* variables and the
        /// manifest's env, pod DNS names), and run the proxy as its Deployment.
        #[arg(long)]
        k8s_env: bool,
        /// With --k8s-env: every worker pod's DNS name resolves only SECONDS
        /// after start, as when a group's workers are scheduled after its
        /// leader (a scale-out, a busy cluster); each run.sh must wait.
        #[arg(long, value_name = "SECONDS", requires = "k8s_env")]
        k8s_late_workers: Option<f64>,
        /// With --k8s-env and --signal NODE:TERM: the kubelet gives the pod
        /// this terminationGracePeriodSeconds instead of its manifest's (a
        /// platform's cap, an edited manifest).
        #[arg(long, value_name = "SECONDS", requires = "k8s_env")]
        k8s_grace_seconds: Option<u64>,
        /// With --k8s-env, the manifests' settings (as `catalog render`
        /// takes them), e.g. `--k8s-autoscale keda`.
        #[command(flatten)]
        k8s: K8sArgs,
    },
}

/// Which layouts `catalog list` keeps.
#[derive(Clone, Debug, Default, clap::Args)]
pub(super) struct ListFilter {
    /// Layouts of models whose id or name holds this text
    /// (`v4-flash`, `deepseek_v3_1`).
    #[arg(long, value_name = "TEXT")]
    pub(super) model: Option<String>,
    /// Layouts on this hardware (`a2`, `a3`, `ascend_950dt`).
    #[arg(long, value_name = "ID")]
    pub(super) hardware: Option<String>,
    /// Layouts of exactly this many nodes.
    #[arg(long, value_name = "N")]
    pub(super) nodes: Option<usize>,
    /// Layouts of at most this many nodes.
    #[arg(long, value_name = "N")]
    pub(super) max_nodes: Option<usize>,
}

impl ListFilter {
    pub(super) fn keeps(&self, l: &Layout) -> bool {
        let family = l.name().split('/').next().unwrap_or("");
        self.model.as_ref().is_none_or(|m| {
            let m = m.to_ascii_lowercase();
            l.model.id.contains(&m) || family.contains(&m)
        }) && self.hardware.as_ref().is_none_or(|h| l.hardware.id == h)
            && self.nodes.is_none_or(|n| l.node_count() == n)
            && self.max_nodes.is_none_or(|n| l.node_count() <= n)
    }
}

/// Settings of each layout's `k8s/` manifests (the committed catalog uses
/// the defaults).
#[derive(Clone, Debug, clap::Args)]
#[command(next_help_heading = "Kubernetes manifests (k8s/)")]
pub(super) struct K8sArgs {
    /// Namespace written into each `k8s/kustomization.yaml`.
    #[arg(long, value_name = "NS", default_value = "vllm")]
    pub(super) k8s_namespace: String,
    /// NPU extended resource name the device plugin advertises [default:
    /// `huawei.com/ascend-1980` on A2/A3, `huawei.com/npu` on 950, as
    /// upstream CI requests them].
    #[arg(long, value_name = "NAME")]
    pub(super) k8s_npu_resource: Option<String>,
    /// Weights volume, mounted read-only at the layout's model path:
    /// `pvc:CLAIM` or `hostpath:/DIR`.
    #[arg(long, value_name = "VOLUME", default_value = "pvc:vllm-weights", value_parser = parse_weights)]
    pub(super) k8s_weights: WeightsVolume,
    /// Registry and repository replacing the image's `quay.io/ascend` (name,
    /// tag and hardware suffix stay), e.g. `registry.example.com/ascend`.
    #[arg(long, value_name = "PREFIX")]
    pub(super) k8s_image_registry: Option<String>,
    /// Where rank logs are kept besides stdout: `hostpath:/DIR` (outlives
    /// the pod), `pvc:CLAIM` (ReadWriteMany) or `pod` (gone with it).
    #[arg(long, value_name = "VOLUME", default_value = "hostpath:/var/log/pd-dsl", value_parser = parse_logs)]
    pub(super) k8s_logs: LogsVolume,
    /// CPU request of each engine pod, replacing the derived one.
    #[arg(long, value_name = "QUANTITY")]
    pub(super) k8s_cpu: Option<String>,
    /// Memory request and limit of each engine pod, replacing the derived ones.
    #[arg(long, value_name = "QUANTITY")]
    pub(super) k8s_memory: Option<String>,
    /// Ephemeral-storage request and limit of each engine pod [default: 100Gi].
    #[arg(long, value_name = "QUANTITY")]
    pub(super) k8s_ephemeral_storage: Option<String>,
    /// Size limit of each engine pod's memory-backed /dev/shm [default: the
    /// upstream docker command's --shm-size].
    #[arg(long, value_name = "QUANTITY")]
    pub(super) k8s_shm: Option<String>,
    /// Seconds a stopping rank finishes its in-flight requests; the pods'
    /// termination grace period is derived from it.
    #[arg(long, value_name = "SECONDS", default_value_t = pd_dsl::render::k8s::DEFAULT_DRAIN_SECONDS)]
    pub(super) k8s_drain_seconds: u32,
    /// Kueue LocalQueue that admits each engine's LeaderWorkerSet whole.
    #[arg(long, value_name = "QUEUE")]
    pub(super) k8s_kueue_queue: Option<String>,
    /// schedulerName of the engine pods (e.g. `volcano` for gang scheduling).
    #[arg(long, value_name = "NAME")]
    pub(super) k8s_scheduler: Option<String>,
    /// A Gateway (`NAME` or `NAMESPACE/NAME`): also write `k8s/inference/`,
    /// an InferencePool and an HTTPRoute from that Gateway.
    #[arg(long, value_name = "GATEWAY")]
    pub(super) k8s_gateway: Option<String>,
    /// Also write `k8s/autoscaling/`: `keda` (the only value) writes a KEDA
    /// ScaledObject per engine's LeaderWorkerSet on vLLM's
    /// `vllm:num_requests_waiting`, one group per step. Mixed layouts of one
    /// engine only: a PD layout's proxy routes to a fixed list of ranks, so
    /// it is refused, saying why.
    #[arg(long, value_name = "AUTOSCALER", value_parser = parse_autoscaler)]
    pub(super) k8s_autoscale: Option<Autoscaler>,
    /// Prometheus server the ScaledObjects query (with `--k8s-autoscale`).
    #[arg(long, value_name = "URL", default_value = pd_dsl::render::k8s::autoscaling::DEFAULT_PROMETHEUS)]
    pub(super) k8s_prometheus: String,
    /// Most groups per engine under `--k8s-autoscale`, as a multiple of the
    /// layout's (2 to 64).
    #[arg(long, value_name = "N", default_value_t = pd_dsl::render::k8s::autoscaling::DEFAULT_FACTOR)]
    pub(super) k8s_autoscale_factor: u32,
    /// Write the engines as one LeaderWorkerSet DisaggregatedSet: refused for
    /// every layout, naming why (its pods' names carry a rollout hash, while
    /// the proxy and run.sh find nodes by pod name; a mixed layout has one
    /// role, the CRD needs 2).
    #[arg(long)]
    pub(super) k8s_disaggregated_set: bool,
}

fn parse_autoscaler(s: &str) -> Result<Autoscaler, String> {
    s.parse()
}

fn parse_logs(s: &str) -> Result<LogsVolume, String> {
    s.parse()
}

fn parse_weights(s: &str) -> Result<WeightsVolume, String> {
    s.parse()
}

impl K8sArgs {
    pub(super) fn settings(&self) -> Result<K8sSettings, (u8, String)> {
        let s = K8sSettings {
            namespace: self.k8s_namespace.clone(),
            npu_resource: self.k8s_npu_resource.clone(),
            weights: self.k8s_weights.clone(),
            image_registry: self.k8s_image_registry.clone(),
            logs: self.k8s_logs.clone(),
            resources: ResourceOverrides {
                cpu: self.k8s_cpu.clone(),
                memory: self.k8s_memory.clone(),
                ephemeral_storage: self.k8s_ephemeral_storage.clone(),
                shm: self.k8s_shm.clone(),
            },
            drain_seconds: self.k8s_drain_seconds,
            kueue_queue: self.k8s_kueue_queue.clone(),
            scheduler: self.k8s_scheduler.clone(),
            gateway: self.k8s_gateway.clone(),
            autoscale: self.k8s_autoscale,
            prometheus: self.k8s_prometheus.clone(),
            autoscale_factor: self.k8s_autoscale_factor,
            disaggregated_set: self.k8s_disaggregated_set,
        };
        s.validate()
            .map_err(|e| (EXIT_USAGE, format!("--k8s-*: {e}")))?;
        Ok(s)
    }
}

/// `--fault` values (see `pd_rehearse::rehearsal::Fault`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(super) enum FaultArg {
    /// One of the layout's ports is held before start.
    PortInUse,
    /// The model directory does not exist.
    MissingModel,
    /// The model directory holds another model's weights (its config.json).
    WrongWeights,
    /// One node's npu-smi reports the wrong NPU count.
    WrongNpuCount,
    /// A non-master DP rank cannot reach its DP master's RPC port.
    UnreachableMaster,
    /// The proxy's decoder lists leave out the last decode rank.
    ProxyMissesRank,
    /// Node 0's proxy script does not exist.
    MissingProxyScript,
    /// The proxy exits right after start, every time.
    ProxyExits,
}

/// `--proxy-policy` values (see `pd_rehearse::rehearsal::Policy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(super) enum PolicyArg {
    /// Every rank in turn.
    RoundRobin,
    /// Upstream's: the least-loaded rank, ties to list order.
    LeastLoaded,
}

impl From<PolicyArg> for Policy {
    fn from(p: PolicyArg) -> Policy {
        match p {
            PolicyArg::RoundRobin => Policy::RoundRobin,
            PolicyArg::LeastLoaded => Policy::LeastLoaded,
        }
    }
}

impl From<FaultArg> for Fault {
    fn from(f: FaultArg) -> Fault {
        match f {
            FaultArg::PortInUse => Fault::PortInUse,
            FaultArg::MissingModel => Fault::MissingModel,
            FaultArg::WrongWeights => Fault::WrongWeights,
            FaultArg::WrongNpuCount => Fault::WrongNpuCount,
            FaultArg::UnreachableMaster => Fault::UnreachableMaster,
            FaultArg::ProxyMissesRank => Fault::ProxyMissesRank,
            FaultArg::MissingProxyScript => Fault::MissingProxyScript,
            FaultArg::ProxyExits => Fault::ProxyExits,
        }
    }
}

/// What the inputs cannot say.
#[derive(Debug, clap::Args)]
pub(super) struct ImportOpts {
    /// Hardware id (`a2`, `a3`, `ascend_950dt`); default from
    /// `npu_per_node` or the NPUs a node uses.
    #[arg(long)]
    pub(super) hardware: Option<String>,
    /// Image tag (default: the newest image of the table).
    #[arg(long, value_name = "TAG")]
    pub(super) image: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(super) enum ImportFormat {
    Rust,
    Yaml,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(super) enum LintFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(super) enum Format {
    Table,
    Json,
}
