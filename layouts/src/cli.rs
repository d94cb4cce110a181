//! The `catalog` command line. Thin: parsing and printing only; everything it
//! does is a library function of `pd_dsl::render` that tests call directly.
//!
//! ```text
//! catalog [--out DIR]            write the whole catalog (default `catalog/`)
//! catalog --check [--out DIR]    exit 1 naming every stale, missing or extra file
//! catalog list [--format json]   every layout: name, model, hardware, topology, nodes, NPUs, image, verified (or its blocked status), recorded
//! catalog show NAME [--format json]
//!                                one layout's nodes; the JSON is the stable interface
//!                                documented on `pd_dsl::render::view` (`LayoutView`)
//! catalog render NAME|FILE [--out DIR]
//!                                write one layout's directory (`DIR/NAME/`) atomically; FILE: a
//!                                YAML/JSON layout or an upstream e2e config (imported)
//! --k8s-namespace NS --k8s-npu-resource NAME --k8s-weights pvc:CLAIM|hostpath:/DIR
//! --k8s-image-registry PREFIX --k8s-logs hostpath:/DIR|pvc:CLAIM|pod --k8s-cpu Q
//! --k8s-memory Q --k8s-ephemeral-storage Q --k8s-shm Q --k8s-drain-seconds S
//! --k8s-kueue-queue QUEUE --k8s-scheduler NAME --k8s-gateway [NS/]NAME
//!                                settings of the `k8s/` manifests (the catalog build
//!                                and `render`); defaults in `K8sArgs`
//! catalog rehearse NAME [--kill NODE:RANK] [--signal NODE:SIG] [--stop NODE] [--fault FAULT] [--proxy-script PATH] [--proxy-policy P] [--keep] [--timeout S] [--k8s-env]
//!                                run the layout's generated scripts end to end on this
//!                                machine against the stand-ins (`pd_rehearse::rehearsal`)
//! catalog import FILE... [--format rust|yaml|json] [--out FILE] [--name N] [--hardware H] [--image TAG] [--recorded DATE]
//!                                an upstream e2e config or a set of scripts as a layout
//!                                (`pd_dsl::import`); exit 1 when the deployment breaks a hard rule
//! catalog lint PATH... [--format text|json] [--color auto|always|never] [--hardware H] [--image TAG]
//!                                every rule finding with FILE:LINE:COL; directories are walked;
//!                                exit 1 when any finding is an error
//! catalog upstream diff OLD NEW  what changed between two vllm-ascend releases of the image
//!                                table, from the embedded facts (`facts.py diff` without the corpus)
//! ```
//!
//! Exit codes: 0 success; 1 the catalog on disk is stale (`--check`), `lint`
//! found an error, or `import` failed (unreadable input or a hard rule);
//! 2 usage error, unknown layout name, or a fault that does not apply;
//! 3 the registered catalog is invalid; 4 rendering or writing failed;
//! 5 the rehearsal failed (or could not run). Errors never panic.

use clap::{Parser, Subcommand, ValueEnum};
use pd_dsl::Layout;
use pd_dsl::render::k8s::{K8sSettings, LogsVolume, ResourceOverrides, WeightsVolume};
use pd_dsl::render::{self, view};
use pd_rehearse::rehearsal::{self, Fault, Policy};
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: `--check` found stale files.
pub const EXIT_STALE: u8 = 1;
/// Exit code: usage error or unknown layout name.
pub const EXIT_USAGE: u8 = 2;
/// Exit code: the registered catalog does not build.
pub const EXIT_CATALOG: u8 = 3;
/// Exit code: rendering or writing failed.
pub const EXIT_RENDER: u8 = 4;
/// Exit code: the rehearsal failed.
pub const EXIT_REHEARSAL: u8 = 5;

const EXIT_CODES: &str = "Exit codes: 0 success; 1 catalog stale (--check), lint errors or a failed import; 2 usage error or unknown layout; 3 registered catalog invalid; 4 render or write failed; 5 rehearsal failed";

#[derive(Debug, Parser)]
#[command(
    name = "catalog",
    version,
    about = "Render the pd-dsl catalog: every layout's scripts and docs, plus the index",
    after_help = EXIT_CODES
)]
struct Cli {
    /// Catalog directory to write or check.
    #[arg(long, value_name = "DIR", default_value = "catalog")]
    out: PathBuf,
    /// Do not write: exit 1 naming every stale, missing or extra file.
    #[arg(long)]
    check: bool,
    #[command(flatten)]
    k8s: K8sArgs,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum UpstreamCommand {
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
enum Command {
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
    },
}

/// Which layouts `catalog list` keeps.
#[derive(Clone, Debug, Default, clap::Args)]
struct ListFilter {
    /// Layouts of models whose id or name holds this text
    /// (`v4-flash`, `deepseek_v3_1`).
    #[arg(long, value_name = "TEXT")]
    model: Option<String>,
    /// Layouts on this hardware (`a2`, `a3`, `ascend_950dt`).
    #[arg(long, value_name = "ID")]
    hardware: Option<String>,
    /// Layouts of exactly this many nodes.
    #[arg(long, value_name = "N")]
    nodes: Option<usize>,
    /// Layouts of at most this many nodes.
    #[arg(long, value_name = "N")]
    max_nodes: Option<usize>,
}

impl ListFilter {
    fn keeps(&self, l: &Layout) -> bool {
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
struct K8sArgs {
    /// Namespace written into each `k8s/kustomization.yaml`.
    #[arg(long, value_name = "NS", default_value = "vllm")]
    k8s_namespace: String,
    /// NPU extended resource name the device plugin advertises [default:
    /// `huawei.com/ascend-1980` on A2/A3, `huawei.com/npu` on 950, as
    /// upstream CI requests them].
    #[arg(long, value_name = "NAME")]
    k8s_npu_resource: Option<String>,
    /// Weights volume, mounted read-only at the layout's model path:
    /// `pvc:CLAIM` or `hostpath:/DIR`.
    #[arg(long, value_name = "VOLUME", default_value = "pvc:vllm-weights", value_parser = parse_weights)]
    k8s_weights: WeightsVolume,
    /// Registry and repository replacing the image's `quay.io/ascend` (name,
    /// tag and hardware suffix stay), e.g. `registry.example.com/ascend`.
    #[arg(long, value_name = "PREFIX")]
    k8s_image_registry: Option<String>,
    /// Where rank logs are kept besides stdout: `hostpath:/DIR` (outlives
    /// the pod), `pvc:CLAIM` (ReadWriteMany) or `pod` (gone with it).
    #[arg(long, value_name = "VOLUME", default_value = "hostpath:/var/log/pd-dsl", value_parser = parse_logs)]
    k8s_logs: LogsVolume,
    /// CPU request of each engine pod, replacing the derived one.
    #[arg(long, value_name = "QUANTITY")]
    k8s_cpu: Option<String>,
    /// Memory request and limit of each engine pod, replacing the derived ones.
    #[arg(long, value_name = "QUANTITY")]
    k8s_memory: Option<String>,
    /// Ephemeral-storage request and limit of each engine pod [default: 100Gi].
    #[arg(long, value_name = "QUANTITY")]
    k8s_ephemeral_storage: Option<String>,
    /// Size limit of each engine pod's memory-backed /dev/shm [default: the
    /// upstream docker command's --shm-size].
    #[arg(long, value_name = "QUANTITY")]
    k8s_shm: Option<String>,
    /// Seconds a stopping rank finishes its in-flight requests; the pods'
    /// termination grace period is derived from it.
    #[arg(long, value_name = "SECONDS", default_value_t = pd_dsl::render::k8s::DEFAULT_DRAIN_SECONDS)]
    k8s_drain_seconds: u32,
    /// Kueue LocalQueue that admits each engine's LeaderWorkerSet whole.
    #[arg(long, value_name = "QUEUE")]
    k8s_kueue_queue: Option<String>,
    /// schedulerName of the engine pods (e.g. `volcano` for gang scheduling).
    #[arg(long, value_name = "NAME")]
    k8s_scheduler: Option<String>,
    /// A Gateway (`NAME` or `NAMESPACE/NAME`): also write `k8s/inference/`,
    /// an InferencePool and an HTTPRoute from that Gateway.
    #[arg(long, value_name = "GATEWAY")]
    k8s_gateway: Option<String>,
}

fn parse_logs(s: &str) -> Result<LogsVolume, String> {
    s.parse()
}

fn parse_weights(s: &str) -> Result<WeightsVolume, String> {
    s.parse()
}

impl K8sArgs {
    fn settings(&self) -> Result<K8sSettings, (u8, String)> {
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
        };
        s.validate()
            .map_err(|e| (EXIT_USAGE, format!("--k8s-*: {e}")))?;
        Ok(s)
    }
}

/// The catalog's artifacts with the `k8s/` manifests made with `settings`.
fn with_k8s(
    artifacts: Vec<render::Artifact>,
    layouts: &[&Layout],
    settings: &K8sSettings,
) -> Result<Vec<render::Artifact>, (u8, String)> {
    if *settings == K8sSettings::default() {
        return Ok(artifacts);
    }
    render::k8s::with_settings(artifacts, layouts, settings).map_err(render_failed)
}

/// `--fault` values (see `pd_rehearse::rehearsal::Fault`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum FaultArg {
    /// One of the layout's ports is held before start.
    PortInUse,
    /// The model directory does not exist.
    MissingModel,
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
enum PolicyArg {
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
struct ImportOpts {
    /// Hardware id (`a2`, `a3`, `ascend_950dt`); default from
    /// `npu_per_node` or the NPUs a node uses.
    #[arg(long)]
    hardware: Option<String>,
    /// Image tag (default: the newest image of the table).
    #[arg(long, value_name = "TAG")]
    image: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ImportFormat {
    Rust,
    Yaml,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum LintFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Table,
    Json,
}

/// Entry point of the binary: parses the process arguments and runs.
pub fn main_with(layouts: Result<Vec<Layout>, String>) -> ExitCode {
    main_with_guide(layouts, None)
}

/// [`main_with`], with a scenario guide (markdown) for the catalog index.
pub fn main_with_guide(layouts: Result<Vec<Layout>, String>, guide: Option<String>) -> ExitCode {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let code = run(
        std::env::args_os(),
        layouts,
        guide.as_deref(),
        &mut stdout.lock(),
        &mut stderr.lock(),
    );
    ExitCode::from(code)
}

/// Runs the command line `args` (the first is the program name) against
/// `layouts`, writing to `out` and `err`; returns the exit code.
/// `scenario_guide` is markdown placed in the catalog index, if any.
pub fn run<I, T>(
    args: I,
    layouts: Result<Vec<Layout>, String>,
    scenario_guide: Option<&str>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let text = e.render().to_string();
            return if e.use_stderr() {
                let _ = write!(err, "{text}");
                EXIT_USAGE
            } else {
                let _ = write!(out, "{text}");
                EXIT_OK
            };
        }
    };
    // Import and lint read the user's files, not the registered catalog.
    match cli.command {
        Some(Command::Import {
            files,
            format,
            out: dest,
            opts,
            name,
            recorded,
        }) => {
            let opts = pd_dsl::import::Options {
                name,
                hardware: opts.hardware,
                image: opts.image,
                recorded,
            };
            return finish(
                import(&files, format, dest.as_deref(), &opts, out, err),
                err,
            );
        }
        Some(Command::Lint {
            paths,
            format,
            color,
            opts,
        }) => {
            let opts = pd_dsl::import::Options {
                hardware: opts.hardware,
                image: opts.image,
                ..Default::default()
            };
            return finish(lint(&paths, format, color.enabled(), &opts, out), err);
        }
        Some(Command::Upstream {
            command: UpstreamCommand::Diff { old, new },
        }) => return finish(upstream_diff(&old, &new, out), err),
        Some(Command::Plan(a)) => return finish(crate::plan_cmd::run(&a, out), err),
        _ => {}
    }
    let layouts = match layouts {
        Ok(l) => l,
        Err(e) => {
            let _ = writeln!(err, "error: the registered catalog is invalid:\n{e}");
            return EXIT_CATALOG;
        }
    };
    let result = match cli.command {
        None if cli.check => cli
            .k8s
            .settings()
            .and_then(|k| check(&cli.out, &layouts, scenario_guide, &k, out, err)),
        None => cli
            .k8s
            .settings()
            .and_then(|k| write_all(&cli.out, &layouts, scenario_guide, &k, out)),
        Some(Command::List {
            format,
            filter,
            wide,
        }) => list(&layouts, format, &filter, wide, out),
        Some(Command::Diff {
            a,
            b,
            image,
            format,
        }) => diff(&layouts, &a, b.as_deref(), image.as_deref(), format, out),
        Some(Command::Completions { shell }) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut cmd, "catalog", &mut buf);
            out.write_all(&buf).map_err(render_failed).map(|()| EXIT_OK)
        }
        Some(Command::Man) => {
            let cmd = <Cli as clap::CommandFactory>::command();
            let mut buf = Vec::new();
            clap_mangen::Man::new(cmd)
                .render(&mut buf)
                .map_err(render_failed)
                .and_then(|()| out.write_all(&buf).map_err(render_failed))
                .map(|()| EXIT_OK)
        }
        Some(Command::Rules { format }) => {
            let text = match format {
                Format::Table => Ok(crate::rules_cmd::table()),
                Format::Json => serde_json::to_string_pretty(&crate::rules_cmd::docs())
                    .map(|s| s + "\n")
                    .map_err(render_failed),
            };
            text.and_then(|t| out.write_all(t.as_bytes()).map_err(render_failed))
                .map(|()| EXIT_OK)
        }
        Some(Command::Explain { rule }) => crate::rules_cmd::explain(&rule)
            .map_err(|e| (EXIT_USAGE, e))
            .and_then(|t| out.write_all(t.as_bytes()).map_err(render_failed))
            .map(|()| EXIT_OK),
        Some(Command::Calibrate(a)) => crate::calibrate_cmd::run(&a, &layouts, out),
        Some(Command::Show { name, format }) => {
            find(&layouts, &name).and_then(|l| show(l, format, out))
        }
        Some(Command::Render {
            name,
            out: dir,
            k8s,
        }) if !layouts.iter().any(|l| l.name() == name) && Path::new(&name).is_file() => {
            load_file(Path::new(&name), err)
                .and_then(|l| k8s.settings().and_then(|k| render_one(&l, &dir, &k, out)))
        }
        Some(Command::Render {
            name,
            out: dir,
            k8s,
        }) => find(&layouts, &name)
            .and_then(|l| k8s.settings().and_then(|k| render_one(l, &dir, &k, out))),
        Some(
            Command::Import { .. }
            | Command::Lint { .. }
            | Command::Upstream { .. }
            | Command::Plan(_),
        ) => Ok(EXIT_OK),
        Some(Command::Rehearse {
            name,
            kill,
            signal,
            stop,
            fault,
            proxy_script,
            proxy_policy,
            keep,
            timeout,
            k8s_env,
        }) => find(&layouts, &name).and_then(|l| {
            let kill = kill.as_deref().map(parse_kill).transpose()?;
            let mut opts = rehearsal::Options::new(PathBuf::new());
            opts.kill = kill;
            opts.action = match (signal.as_deref().map(parse_signal).transpose()?, stop) {
                (Some(_), Some(_)) => {
                    return Err((
                        EXIT_USAGE,
                        "--signal and --stop do not apply together".into(),
                    ));
                }
                (Some((node, sig)), None) => Some(rehearsal::Action::Signal(node, sig)),
                (None, Some(node)) => Some(rehearsal::Action::Stop(node)),
                (None, None) => None,
            };
            opts.fault = fault.map(Fault::from);
            opts.proxy_script = proxy_script;
            opts.proxy_policy = proxy_policy.into();
            opts.keep = keep;
            opts.k8s_env = k8s_env;
            opts.timeout = std::time::Duration::from_secs(timeout.max(1));
            rehearse(l, opts, out)
        }),
    };
    match result {
        Ok(code) => code,
        Err((code, message)) => {
            let _ = writeln!(err, "error: {message}");
            code
        }
    }
}

type CliResult = Result<u8, (u8, String)>;

fn finish(result: CliResult, err: &mut dyn Write) -> u8 {
    match result {
        Ok(code) => code,
        Err((code, message)) => {
            let _ = writeln!(err, "error: {message}");
            code
        }
    }
}

/// A layout from a file, as `render FILE` reads it: a pd-dsl YAML/JSON
/// layout through the loader (every rule runs), an upstream e2e config
/// through the importer (`import` then `finish`, what `catalog import
/// --format yaml` prints, loaded back). Findings go to `err`; exit 1 when
/// the file does not make a layout.
fn load_file(path: &Path, err: &mut dyn Write) -> Result<Layout, (u8, String)> {
    use pd_dsl::import;
    let inputs = read_inputs(&[path.to_path_buf()])?;
    let input = &inputs[0];
    let lower = input.name.to_ascii_lowercase();
    let failed = |what: String| (EXIT_STALE, what);
    if lower.ends_with(".json") {
        return pd_dsl::load::from_json(&input.name, &input.text)
            .map_err(|e| failed(e.to_string()));
    }
    if import::is_layout_document(&input.text) {
        return pd_dsl::load::from_yaml(&input.name, &input.text)
            .map_err(|e| failed(e.to_string()));
    }
    let imported = import::import(&inputs, &import::Options::default())
        .map_err(|e| failed(import::Finding::from(e).to_string()))?;
    let spec = import::finish(&imported).map_err(|findings| {
        for f in &findings {
            let _ = writeln!(err, "{f}");
        }
        failed(format!(
            "the deployment in `{}` breaks {} hard rule(s); no `allow` can excuse them",
            input.name,
            findings.len()
        ))
    })?;
    let yaml = serde_saphyr::to_string(&spec).map_err(render_failed)?;
    pd_dsl::load::from_yaml(&input.name, &yaml).map_err(|e| failed(e.to_string()))
}

fn read_inputs(files: &[PathBuf]) -> Result<Vec<pd_dsl::import::Input>, (u8, String)> {
    files
        .iter()
        .map(|f| {
            std::fs::read_to_string(f)
                .map(|text| pd_dsl::import::Input::new(f.display().to_string(), text))
                .map_err(|e| (EXIT_USAGE, format!("cannot read `{}`: {e}", f.display())))
        })
        .collect()
}

fn import(
    files: &[PathBuf],
    format: ImportFormat,
    dest: Option<&Path>,
    opts: &pd_dsl::import::Options,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> CliResult {
    use pd_dsl::import;
    let inputs = read_inputs(files)?;
    let imported = match import::import(&inputs, opts) {
        Ok(i) => i,
        Err(e) => {
            let _ = writeln!(err, "{}", import::Finding::from(e));
            return Ok(EXIT_STALE);
        }
    };
    let spec = match import::finish(&imported) {
        Ok(s) => s,
        Err(findings) => {
            for f in &findings {
                let _ = writeln!(err, "{f}");
            }
            let _ = writeln!(
                err,
                "error: the deployment breaks {} hard rule(s); no `allow` can excuse them",
                findings.len()
            );
            return Ok(EXIT_STALE);
        }
    };
    let text = match format {
        ImportFormat::Rust => import::print::layout_file(&spec),
        ImportFormat::Yaml => serde_saphyr::to_string(&spec).map_err(render_failed)?,
        ImportFormat::Json => {
            let mut t = serde_json::to_string_pretty(&spec).map_err(render_failed)?;
            t.push('\n');
            t
        }
    };
    match dest {
        Some(path) => {
            std::fs::write(path, &text).map_err(|e| {
                (
                    EXIT_RENDER,
                    format!("cannot write `{}`: {e}", path.display()),
                )
            })?;
            let _ = writeln!(
                out,
                "wrote {} ({} acknowledged rule(s), {} deviation(s))",
                path.display(),
                spec.allow.len(),
                spec.deviations.len()
            );
        }
        None => {
            out.write_all(text.as_bytes()).map_err(render_failed)?;
        }
    }
    Ok(EXIT_OK)
}

/// Expands directories into lint units: each YAML/JSON file alone, the
/// `.sh` files of one directory (or of the command line) together.
/// `catalog upstream diff OLD NEW`.
fn upstream_diff(old: &str, new: &str, out: &mut dyn Write) -> Result<u8, (u8, String)> {
    let a = pd_dsl::upstream::release_of(old).map_err(|e| (EXIT_USAGE, e))?;
    let b = pd_dsl::upstream::release_of(new).map_err(|e| (EXIT_USAGE, e))?;
    for line in pd_dsl::upstream::diff_releases(a, b) {
        writeln!(out, "{line}").map_err(|e| (EXIT_RENDER, format!("cannot write: {e}")))?;
    }
    Ok(EXIT_OK)
}

fn lint_units(paths: &[PathBuf]) -> Result<Vec<Vec<PathBuf>>, (u8, String)> {
    let mut units: Vec<Vec<PathBuf>> = Vec::new();
    let mut loose_scripts: Vec<PathBuf> = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| (EXIT_USAGE, format!("cannot read `{}`: {e}", p.display())))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .collect();
            entries.sort();
            let scripts: Vec<PathBuf> = entries
                .iter()
                .filter(|e| e.extension().is_some_and(|x| x == "sh"))
                .cloned()
                .collect();
            for e in &entries {
                if e.is_dir() {
                    units.extend(lint_units(std::slice::from_ref(e))?);
                } else if e
                    .extension()
                    .is_some_and(|x| x == "yaml" || x == "yml" || x == "json")
                {
                    units.push(vec![e.clone()]);
                }
            }
            if !scripts.is_empty() {
                units.push(scripts);
            }
        } else if p.extension().is_some_and(|x| x == "sh") {
            loose_scripts.push(p.clone());
        } else {
            units.push(vec![p.clone()]);
        }
    }
    if !loose_scripts.is_empty() {
        units.push(loose_scripts);
    }
    Ok(units)
}

fn lint(
    paths: &[PathBuf],
    format: LintFormat,
    color: bool,
    opts: &pd_dsl::import::Options,
    out: &mut dyn Write,
) -> CliResult {
    let units = lint_units(paths)?;
    let mut reports = Vec::new();
    let mut texts: Vec<pd_dsl::import::Input> = Vec::new();
    for unit in &units {
        let inputs = read_inputs(unit)?;
        let mut report = pd_dsl::import::lint_unit(&inputs, opts);
        if report.errors == 0 {
            report.estimate = pd_dsl::import::estimate_unit(&inputs, opts);
        }
        reports.push(report);
        texts.extend(inputs);
    }
    let failed = reports.iter().any(|r| r.errors > 0);
    match format {
        LintFormat::Text => {
            for r in &reports {
                for f in &r.findings {
                    // The offending line, when the finding names a file read.
                    let text = texts
                        .iter()
                        .find(|i| i.name == f.file)
                        .map(|i| i.text.as_str());
                    let _ = writeln!(out, "{}\n", crate::snippets::render(f, text, color));
                }
            }
            for r in &reports {
                let _ = writeln!(out, "{}", r.summary());
                if let Some(e) = &r.estimate {
                    let _ = writeln!(out, "{}", pd_dsl::import::estimate_line(&r.file, e));
                }
            }
        }
        LintFormat::Json => {
            let doc = serde_json::json!({ "files": reports });
            let text = serde_json::to_string_pretty(&doc).map_err(render_failed)?;
            let _ = writeln!(out, "{text}");
        }
    }
    Ok(if failed { EXIT_STALE } else { EXIT_OK })
}

fn render_failed(e: impl std::fmt::Display) -> (u8, String) {
    (EXIT_RENDER, e.to_string())
}

/// A layout by its name, or by a suffix of it after a `/` or `-` that one
/// layout alone ends with (`a3-1p3d`, `v4-flash-w8a8-mtp/a3-1p3d`).
fn find<'a>(layouts: &'a [Layout], name: &str) -> Result<&'a Layout, (u8, String)> {
    if let Some(l) = layouts.iter().find(|l| l.name() == name) {
        return Ok(l);
    }
    let ends = |l: &&Layout| {
        let full = l.name();
        full.len() > name.len()
            && full.ends_with(name)
            && matches!(full.as_bytes()[full.len() - name.len() - 1], b'/' | b'-')
    };
    let hits: Vec<&Layout> = layouts.iter().filter(ends).collect();
    match hits.as_slice() {
        [one] => return Ok(one),
        [] => {}
        many => {
            return Err((
                EXIT_USAGE,
                format!(
                    "`{name}` ends {} layout names: {}; give more of the name",
                    many.len(),
                    many.iter()
                        .map(|l| format!("`{}`", l.name()))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    layouts.iter().find(|l| l.name() == name).ok_or_else(|| {
        let hint = pd_dsl::rules::did_you_mean(name, layouts.iter().map(|l| l.name()));
        (
            EXIT_USAGE,
            format!("no layout named `{name}`{hint}\nrun `catalog list` to see every layout"),
        )
    })
}

fn write_all(
    dir: &Path,
    layouts: &[Layout],
    guide: Option<&str>,
    k8s: &K8sSettings,
    out: &mut dyn Write,
) -> CliResult {
    let artifacts = render::render_catalog_with(layouts, guide).map_err(render_failed)?;
    let artifacts = with_k8s(artifacts, &layouts.iter().collect::<Vec<_>>(), k8s)?;
    render::write_catalog(dir, &artifacts).map_err(render_failed)?;
    let nodes: usize = layouts.iter().map(Layout::node_count).sum();
    let npus: usize = layouts.iter().map(Layout::npus_used).sum();
    let verified = layouts.iter().filter(|l| l.verified).count();
    let _ = writeln!(
        out,
        "wrote {} files to {}: {} layouts, {nodes} nodes, {npus} NPUs, {verified} verified on their image",
        artifacts.len(),
        dir.display(),
        layouts.len(),
    );
    let rows: Vec<Vec<String>> = layouts
        .iter()
        .map(|l| {
            vec![
                format!("  {}", l.name()),
                l.topology_text(),
                format!("{} nodes", l.node_count()),
                format!("{} NPUs", l.npus_used()),
                match l.deploy_status() {
                    s if !s.is_deployable() => s.label(),
                    _ if l.verified => "verified".into(),
                    _ => "not verified".into(),
                },
            ]
        })
        .collect();
    let _ = write!(out, "{}", table(&rows));
    Ok(EXIT_OK)
}

fn check(
    dir: &Path,
    layouts: &[Layout],
    guide: Option<&str>,
    k8s: &K8sSettings,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> CliResult {
    let artifacts = render::render_catalog_with(layouts, guide).map_err(render_failed)?;
    let artifacts = with_k8s(artifacts, &layouts.iter().collect::<Vec<_>>(), k8s)?;
    let stale = render::check_catalog(dir, &artifacts);
    if stale.is_empty() {
        let _ = writeln!(
            out,
            "{} is fresh ({} files)",
            dir.display(),
            artifacts.len()
        );
        return Ok(EXIT_OK);
    }
    for s in &stale {
        let _ = writeln!(err, "stale: {} ({})", dir.join(&s.path).display(), s.kind);
    }
    let _ = writeln!(
        err,
        "error: {} is stale: {} file(s) missing, different or extra; run `cargo run --bin catalog` to refresh it",
        dir.display(),
        stale.len()
    );
    Ok(EXIT_STALE)
}

fn list(
    layouts: &[Layout],
    format: Format,
    filter: &ListFilter,
    wide: bool,
    out: &mut dyn Write,
) -> CliResult {
    if let Some(h) = &filter.hardware
        && !pd_dsl::tables::HARDWARE.iter().any(|x| x.id == h)
    {
        let ids: Vec<&str> = pd_dsl::tables::HARDWARE.iter().map(|x| x.id).collect();
        return Err((
            EXIT_USAGE,
            format!(
                "found --hardware `{h}`, expected one of {}: the hardware table's ids",
                ids.join(", ")
            ),
        ));
    }
    let rows: Vec<view::IndexEntry> = layouts
        .iter()
        .filter(|l| filter.keeps(l))
        .map(view::index_entry)
        .collect();
    match format {
        Format::Json => {
            let text = serde_json::to_string_pretty(&rows).map_err(render_failed)?;
            let _ = writeln!(out, "{text}");
        }
        Format::Table => {
            // The model and hardware are in the name; the image's tag says
            // which release.
            let head: &[&str] = if wide {
                &[
                    "NAME", "MODEL", "HARDWARE", "TOPOLOGY", "NODES", "NPUS", "IMAGE", "VERIFIED",
                    "RECORDED",
                ]
            } else {
                &["NAME", "TOPOLOGY", "NODES", "NPUS", "IMAGE", "VERIFIED"]
            };
            let mut t = vec![head.iter().map(|h| (*h).to_owned()).collect::<Vec<_>>()];
            t.extend(rows.iter().map(|r| {
                // A layout its image cannot run says so where "verified"
                // would be read.
                let verified = if r.deploy.is_deployable() {
                    r.verified.to_string()
                } else {
                    r.deploy.label()
                };
                if wide {
                    vec![
                        r.name.clone(),
                        r.model.to_owned(),
                        r.hardware.to_owned(),
                        r.topology.clone(),
                        r.nodes.to_string(),
                        r.npus.to_string(),
                        r.image.clone(),
                        verified,
                        r.recorded.clone(),
                    ]
                } else {
                    vec![
                        r.name.clone(),
                        r.topology.clone(),
                        r.nodes.to_string(),
                        r.npus.to_string(),
                        r.image
                            .rsplit_once(':')
                            .map_or(r.image.clone(), |(_, t)| t.to_owned()),
                        verified,
                    ]
                }
            }));
            let _ = write!(out, "{}", table(&t));
            if rows.is_empty() {
                let _ = writeln!(
                    out,
                    "no layout matches the filters ({} registered)",
                    layouts.len()
                );
            }
        }
    }
    Ok(EXIT_OK)
}

fn diff(
    layouts: &[Layout],
    a: &str,
    b: Option<&str>,
    image: Option<&str>,
    format: Format,
    out: &mut dyn Write,
) -> CliResult {
    let la = find(layouts, a)?;
    let lb = match (b, image) {
        (Some(b), _) => find(layouts, b)?.clone(),
        (None, Some(tag)) => {
            let tag = if tag.starts_with('v') {
                tag.to_owned()
            } else {
                format!("v{tag}")
            };
            crate::diff_cmd::on_image(la, &tag).map_err(|e| (EXIT_STALE, e))?
        }
        (None, None) => {
            return Err((EXIT_USAGE, "give a second layout or --image TAG".into()));
        }
    };
    let d = crate::diff_cmd::diff(la, &lb).map_err(render_failed)?;
    let text = match format {
        Format::Table => crate::diff_cmd::text(&d),
        Format::Json => serde_json::to_string_pretty(&d).map_err(render_failed)? + "\n",
    };
    out.write_all(text.as_bytes()).map_err(render_failed)?;
    Ok(if d.changes.is_empty() {
        EXIT_OK
    } else {
        EXIT_STALE
    })
}

fn show(layout: &Layout, format: Format, out: &mut dyn Write) -> CliResult {
    let v = view::layout_view(layout);
    if format == Format::Json {
        let text = serde_json::to_string_pretty(&v).map_err(render_failed)?;
        let _ = writeln!(out, "{text}");
        return Ok(EXIT_OK);
    }
    let _ = writeln!(out, "{}", v.name);
    let _ = writeln!(
        out,
        "model {} · hardware {} · image {} · verified {} · connector {}",
        v.model,
        v.hardware,
        v.image,
        v.verified,
        v.connector.unwrap_or("none (mixed)")
    );
    let _ = writeln!(out, "verification: {}", layout.verification_text());
    let mut t = vec![
        [
            "NODE",
            "ROLE",
            "ENGINE",
            "RANKS",
            "DEVICES",
            "API PORTS",
            "KV SPAN",
            "ENGINE ID",
            "DP MASTER",
        ]
        .map(String::from)
        .to_vec(),
    ];
    // The same rows the README's topology table shows (one formatting of
    // rank, device, port and kv spans).
    for r in render::docs::model::topology(&v.nodes).rows {
        let n = &r.node;
        t.push(vec![
            n.index.to_string(),
            n.role.to_string(),
            n.engine.to_string(),
            r.ranks,
            r.devices,
            r.ports,
            r.kv,
            r.engine_id,
            format!("node {}", n.dp_master),
        ]);
    }
    let _ = write!(out, "{}", table(&t));
    // The README's memory table, per rank of each role.
    let rows = render::docs::model::budget_rows(&v.budget);
    if !rows.is_empty() {
        let mut b = vec![
            [
                "ROLE",
                "SHAPE",
                "USABLE",
                "WEIGHTS",
                "RESERVES",
                "KV CACHE",
                "KV/TOKEN",
                "KV TOKENS",
                "MAX MODEL LEN",
                "AT MAX LEN",
                "WORKLOAD AT ONCE",
            ]
            .map(String::from)
            .to_vec(),
        ];
        for r in rows {
            b.push(vec![
                r.role,
                r.shape,
                r.usable,
                r.weights,
                r.reserves,
                r.kv,
                r.kv_per_token,
                r.kv_tokens,
                r.max_len,
                r.at_max_len,
                r.workload,
            ]);
        }
        let _ = writeln!(out, "memory per rank:");
        let _ = write!(out, "{}", table(&b));
    }
    if let Some(p) = &v.proxy {
        let _ = writeln!(
            out,
            "proxy: {} on node {}, port {}, {} prefill + {} decode endpoints",
            p.script,
            p.node,
            p.port,
            p.prefill.len(),
            p.decode.len()
        );
    }
    Ok(EXIT_OK)
}

fn render_one(layout: &Layout, dir: &Path, k8s: &K8sSettings, out: &mut dyn Write) -> CliResult {
    let artifacts = render::render_layout(layout).map_err(render_failed)?;
    let artifacts = with_k8s(artifacts, &[layout], k8s)?;
    let prefix = Path::new(layout.name());
    let local: Vec<render::Artifact> = artifacts
        .into_iter()
        .map(|mut a| {
            if let Ok(rest) = a.path.strip_prefix(prefix) {
                a.path = rest.to_path_buf();
            }
            a
        })
        .collect();
    let target = dir.join(layout.name());
    render::write_catalog(&target, &local).map_err(render_failed)?;
    let _ = writeln!(out, "wrote {} files to {}", local.len(), target.display());
    Ok(EXIT_OK)
}

/// `NODE:RANK`.
fn parse_kill(s: &str) -> Result<(usize, u32), (u8, String)> {
    let bad = || {
        (
            EXIT_USAGE,
            format!("--kill {s}: expected NODE:RANK (node index, global DP rank), e.g. 2:5"),
        )
    };
    let (n, r) = s.split_once(':').ok_or_else(bad)?;
    Ok((
        n.trim().parse().map_err(|_| bad())?,
        r.trim().parse().map_err(|_| bad())?,
    ))
}

/// `NODE:SIG` of `--signal`.
fn parse_signal(s: &str) -> Result<(usize, rehearsal::Sig), (u8, String)> {
    let bad = |why: String| (EXIT_USAGE, format!("--signal {s}: {why}"));
    let (node, sig) = s
        .split_once(':')
        .ok_or_else(|| bad("expected NODE:SIG, e.g. 2:HUP".into()))?;
    let node = node
        .parse()
        .map_err(|_| bad(format!("node `{node}` is not a number")))?;
    Ok((node, rehearsal::Sig::parse(sig).map_err(bad)?))
}

fn rehearse(layout: &Layout, mut opts: rehearsal::Options, out: &mut dyn Write) -> CliResult {
    opts.standins = std::env::current_exe().map_err(|e| (EXIT_REHEARSAL, e.to_string()))?;
    let usage = |e: String| {
        if e.contains("does not apply") || e.starts_with("--") {
            (EXIT_USAGE, e)
        } else {
            (EXIT_REHEARSAL, e)
        }
    };
    let outcome = rehearsal::rehearse(layout, &opts, out).map_err(usage)?;
    Ok(if outcome.passed {
        EXIT_OK
    } else {
        EXIT_REHEARSAL
    })
}

/// Left-aligned columns separated by two spaces.
fn table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut s = String::new();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c + 1 == r.len() {
                line.push_str(cell);
            } else {
                let pad = widths[c].saturating_sub(cell.chars().count()) + 2;
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            }
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// `catalog --help` lists each subcommand in one short line; the whole
    /// text is its `--help`.
    #[test]
    fn every_subcommand_has_a_short_summary() {
        let cmd = Cli::command();
        cmd.clone().debug_assert();
        for sub in cmd.get_subcommands() {
            let about = sub.get_about().map(ToString::to_string).unwrap_or_default();
            assert!(
                !about.is_empty() && about.len() <= 80 && !about.contains(". "),
                "`{}`: the summary `{about}` is not one short line",
                sub.get_name()
            );
        }
    }
}
