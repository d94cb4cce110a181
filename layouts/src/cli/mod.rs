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
//! --k8s-autoscale keda --k8s-prometheus URL --k8s-autoscale-factor N
//! --k8s-disaggregated-set
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

mod args;
mod catalog;
mod files;
mod rehearse;
mod views;

use args::{Cli, Command, Format, UpstreamCommand};
use catalog::{check, find, render_failed, render_one, write_all};
use clap::Parser;
use files::{import, lint, load_file, upstream_diff};
use pd_dsl::Layout;
use pd_rehearse::rehearsal::{self, Fault};
use rehearse::{parse_kill, parse_signal, rehearse};
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use views::{diff, list, show};

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
            k8s_late_workers,
            k8s_grace_seconds,
            k8s,
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
            opts.k8s_settings = k8s.settings()?;
            opts.k8s_grace_seconds = k8s_grace_seconds;
            opts.k8s_late_workers = k8s_late_workers
                .map(|s| {
                    std::time::Duration::try_from_secs_f64(s).map_err(|_| {
                        (
                            EXIT_USAGE,
                            format!(
                                "--k8s-late-workers {s}: expected a number of seconds, 0 or more"
                            ),
                        )
                    })
                })
                .transpose()?;
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
