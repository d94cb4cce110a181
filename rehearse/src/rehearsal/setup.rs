//! Before anything starts: the options checked against the layout, the work
//! dir with the rendered layout, the stand-ins, the model and the expectation,
//! and the image's environment every script gets.

use super::cluster::write_file;
use super::inject::{Injection, PROXY_BAD_OPTION, PROXY_REAL, PROXY_SHIM};
use super::options::{Action, Fault, Options};
use super::processes::{Process, node_label};
use super::{MARKER, PROXY_VARS, SKIPPED_CHECKS, expectation, node_ip};
use crate::image::ImageShell;
use pd_dsl::Layout;
use pd_dsl::render;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The `--kill` target: the process of that rank, and the rank.
pub(super) type KillTarget = (Process, u32);

/// Checks the options against the layout and against each other; returns
/// the `--kill` target and the stand-in executable's path.
pub(super) fn check(
    layout: &Layout,
    opts: &Options,
    procs: &[Process],
) -> Result<(Option<KillTarget>, PathBuf), String> {
    let nodes = &layout.placement.nodes;
    // --kill target.
    let kill = match opts.kill {
        None => None,
        Some((node, rank)) => {
            let p = procs
                .iter()
                .find(|p| p.node == node && p.ranks.contains(&rank))
                .ok_or_else(|| {
                    format!(
                        "--kill {node}:{rank}: {} has no rank {rank}{}",
                        layout.name(),
                        if node < nodes.len() {
                            format!(" on {}", node_label(layout, node))
                        } else {
                            format!(" (it has nodes 0-{})", nodes.len().saturating_sub(1))
                        }
                    )
                })?;
            Some((p.clone(), rank))
        }
    };
    if let Some(Action::Signal(node, _) | Action::Stop(node)) = opts.action
        && node >= nodes.len()
    {
        return Err(format!(
            "--signal/--stop {node}: {} has nodes 0-{}",
            layout.name(),
            nodes.len().saturating_sub(1)
        ));
    }
    if opts.action.is_some() && opts.kill.is_some() {
        return Err("--kill and --signal/--stop do not apply together".into());
    }
    if let Some(script) = &opts.proxy_script
        && !script.is_file()
    {
        return Err(format!("--proxy-script {}: not a file", script.display()));
    }
    let standins = opts
        .standins
        .canonicalize()
        .map_err(|e| format!("stand-in executable {}: {e}", opts.standins.display()))?;
    if !opts.k8s_env
        && (opts.k8s_late_workers.is_some()
            || opts.k8s_grace_seconds.is_some()
            || opts.k8s_settings != render::k8s::K8sSettings::default())
    {
        return Err(
            "--k8s-late-workers, --k8s-grace-seconds or a --k8s-* manifest setting does not apply without --k8s-env"
                .into(),
        );
    }
    if let Some(f @ (Fault::ProxyExits | Fault::MissingProxyScript)) = opts.fault
        && opts.k8s_env
    {
        return Err(format!(
            "fault {} does not apply with --k8s-env: the proxy runs as its own Deployment, which node 0's run.sh neither checks nor restarts (Kubernetes restarts its pod)",
            f.name()
        ));
    }
    Ok((kill, standins))
}

/// The work dir, as the rendered layout and the stand-ins have it, and what
/// every script is started with.
pub(super) struct Stage {
    /// The work dir.
    pub(super) root: PathBuf,
    /// `layout/`: the rendered layout.
    pub(super) scripts: PathBuf,
    /// `model/`: the stand-in model directory (`PD_MODEL_PATH`).
    pub(super) model: PathBuf,
    /// `state/`: the stand-ins' counter and pid files.
    pub(super) state: PathBuf,
    /// `logs/`: every `run.sh`'s and every rank's output.
    pub(super) logs: PathBuf,
    /// `expect.json`.
    pub(super) expect: PathBuf,
    /// `bin/proxy_standin.py`.
    pub(super) shim: PathBuf,
    /// `--k8s-env`: the pods the manifests describe.
    pub(super) k8s: Option<crate::k8s_env::Cluster>,
    /// The value of [`MARKER`] every process of this rehearsal carries.
    pub(super) marker: String,
    /// Every node's address, in node order.
    pub(super) ips: Vec<String>,
    /// The image's shell.
    pub(super) shell: ImageShell,
    /// The preflight checks skipped (`PD_SKIP_PREFLIGHT`).
    pub(super) skip: Vec<&'static str>,
    /// `PD_WAIT_SECONDS`.
    pub(super) wait_s: u64,
    /// `--k8s-env`: the cluster's DNS.
    pub(super) hosts_env: Option<String>,
}

impl Stage {
    /// The environment every script starts from.
    pub(super) fn base_env(&self, cmd: &mut Command) {
        // Nothing of this machine's environment: the image's only, and the
        // operator's HTTP proxy settings, which Docker (the client's
        // `proxies` config) and most pod specs hand to the container.
        cmd.env_clear();
        for (k, v) in &self.shell.env {
            cmd.env(k, v);
        }
        for (k, v) in std::env::vars_os() {
            if k.to_str().is_some_and(|k| PROXY_VARS.contains(&k)) {
                cmd.env(k, v);
            }
        }
        cmd.env("PATH", &self.shell.path)
            .env(MARKER, &self.marker)
            .env("PD_NODE_IPS", self.ips.join(","))
            .env("PD_VERIFY_TIMEOUT", "30");
        if let Some(hosts) = &self.hosts_env {
            cmd.env(crate::k8s_env::HOSTS_ENV, hosts);
        }
    }
}

/// Fills the work dir `root`: the rendered layout, the stand-ins, the model
/// and the expectation; builds the image's shell. A proxy fault with a real
/// proxy adds to `inj`.
pub(super) fn stage(
    layout: &Layout,
    opts: &Options,
    standins: &Path,
    inj: &mut Injection,
    root: PathBuf,
) -> Result<Stage, String> {
    let scripts = root.join("layout");
    let bin = root.join("bin");
    let model = root.join("model");
    let state = root.join("state");
    let logs = root.join("logs");
    for d in [&scripts, &bin, &state, &logs] {
        fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    let mut artifacts = render::render_layout(layout).map_err(|e| e.to_string())?;
    if opts.k8s_settings != render::k8s::K8sSettings::default() {
        artifacts = render::k8s::with_settings(artifacts, &[layout], &opts.k8s_settings)
            .map_err(|e| format!("--k8s-* settings: {e}"))?;
    }
    for a in &artifacts {
        let rel = a.path.strip_prefix(layout.name()).unwrap_or(&a.path);
        let target = scripts.join(rel);
        if let Some(dir) = target.parent() {
            fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        write_file(&target, &a.contents, a.executable)?;
    }
    for name in crate::BINARIES {
        std::os::unix::fs::symlink(standins, bin.join(name))
            .map_err(|e| format!("cannot link {name}: {e}"))?;
    }
    let k8s = if opts.k8s_env {
        std::os::unix::fs::symlink(standins, bin.join("getent"))
            .map_err(|e| format!("cannot link getent: {e}"))?;
        Some(crate::k8s_env::cluster(layout, &artifacts, node_ip)?)
    } else {
        None
    };
    let shim = bin.join("proxy_standin.py");
    write_file(&shim, PROXY_SHIM, true)?;
    // A proxy fault with a real proxy: the shim injects it, then runs the
    // real script (the edited lists, or an option it refuses).
    if let (Some(real), Some(f @ (Fault::ProxyMissesRank | Fault::ProxyExits))) =
        (&opts.proxy_script, opts.fault)
    {
        let real = real
            .canonicalize()
            .map_err(|e| format!("--proxy-script {}: {e}", real.display()))?;
        let env = inj.env.entry(0).or_default();
        env.push(("PD_PROXY_SCRIPT".into(), shim.display().to_string()));
        env.push((PROXY_REAL.into(), real.display().to_string()));
        if f == Fault::ProxyExits {
            inj.note = Some(format!(
                "the real proxy {} is started with {PROXY_BAD_OPTION}, an option it does not define, so its own argparse exits with code 2, every time; node 0 may restart it once (PD_PROXY_RESTARTS=1)",
                real.display()
            ));
        }
    }
    if !inj.no_model {
        fs::create_dir_all(&model).map_err(|e| e.to_string())?;
        let config = stand_in_config(layout, inj.wrong_weights);
        write_file(&model.join("config.json"), &format!("{config:#}\n"), false)?;
        // A ModelSlim build ships its description next to the config; the
        // layout's `--quantization` needs it (the image's generated
        // `modelslim_description`).
        if let Some(d) = layout
            .image
            .facts()
            .and_then(|rel| rel.modelslim_description.as_ref())
            .filter(|d| layout.model.quantization == Some(d.method.as_str()))
        {
            write_file(
                &model.join(&d.file),
                "{\"note\": \"pd-rehearse stand-in ModelSlim description\"}\n",
                false,
            )?;
        }
    }
    let expect = root.join("expect.json");
    let exp_text = serde_json::to_string_pretty(&expectation(layout)).map_err(|e| e.to_string())?;
    write_file(&expect, &exp_text, false)?;

    let marker = format!(
        "{}-{}",
        std::process::id(),
        root.file_name().and_then(|n| n.to_str()).unwrap_or("x")
    );
    let ips: Vec<String> = (0..layout.placement.nodes.len()).map(node_ip).collect();
    // The image's shell: its tools only, its ENV, CANN after set_env.sh.
    let host_path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
    let shell = crate::image::build(layout, &root, &bin, &host_path)?;
    let mut skip: Vec<&'static str> = SKIPPED_CHECKS
        .iter()
        .copied()
        .filter(|c| *c != "mooncake" || layout.is_pd())
        .collect();
    // The stand-in proxy needs none of the upstream proxy's Python packages;
    // a real proxy script (--proxy-script) does, and preflight checks them.
    if layout.is_pd() && opts.proxy_script.is_none() {
        skip.push("proxy_deps");
    }
    let wait_s = opts.timeout.as_secs().max(1);
    // The cluster's DNS, worker pods' names late where asked, counted from
    // now (the nodes start next).
    let hosts_env = k8s.as_ref().map(|k| {
        k.hosts_env(
            opts.k8s_late_workers
                .map(|late| std::time::SystemTime::now() + late),
        )
    });
    Ok(Stage {
        root,
        scripts,
        model,
        state,
        logs,
        expect,
        shim,
        k8s,
        marker,
        ips,
        shell,
        skip,
        wait_s,
        hosts_env,
    })
}

/// The stand-in weights' `config.json`: the checkpoint's config as the model
/// table knows it, what the stand-in `vllm` and preflight's `model_config`
/// read, as vLLM does; with `wrong_weights`, another model's.
fn stand_in_config(layout: &Layout, wrong_weights: bool) -> serde_json::Value {
    let m = layout.model;
    let mut config = serde_json::json!({ "note": "pd-rehearse stand-in weights" });
    if let Some(t) = pd_dsl::dims::checkpoint_model_type(m) {
        config["model_type"] = t.into();
    }
    let mut text = serde_json::Map::new();
    if let Some(t) = pd_dsl::dims::text_model_type(m)
        && Some(t) != pd_dsl::dims::checkpoint_model_type(m)
    {
        text.insert("model_type".into(), t.into());
    }
    // The linear-attention dimensions vLLM sizes the Mamba state from.
    if let Some(serde_json::Value::Object(gdn)) = pd_dsl::dims::config_of(m)
        .and_then(|c| c.gdn())
        .and_then(|d| serde_json::to_value(d).ok())
    {
        text.extend(gdn);
    }
    // The length and experts the compiler judged with, where vLLM reads
    // them (the text config when there is one): preflight's
    // `model_config` reads them as the image's vLLM does.
    let mut sized = serde_json::Map::new();
    if let Some(n) = pd_dsl::dims::derived_len(m.id).and_then(|(d, _)| d.exact()) {
        sized.insert("max_position_embeddings".into(), n.into());
    }
    // Under the key the checkpoint holds them (Qwen3.5: `num_experts`),
    // else the first the image's vLLM reads.
    if let Some((n, _)) = pd_dsl::dims::routed_experts(m.id) {
        let key = pd_dsl::dims::experts_key(m)
            .map(str::to_owned)
            .or_else(|| {
                pd_dsl::upstream::vllm_of(layout.image)
                    .ok()
                    .and_then(|v| v.checkpoint_reads.expert_keys.first().cloned())
            })
            .unwrap_or_else(|| "n_routed_experts".to_owned());
        sized.insert(key, n.into());
    }
    if wrong_weights {
        // Another model's weights (`--fault wrong-weights`).
        sized.insert(
            "max_position_embeddings".into(),
            super::inject::WRONG_MAX_LEN.into(),
        );
        let other = serde_json::Value::from(super::inject::WRONG_MODEL_TYPE);
        if text.is_empty() {
            config["model_type"] = other;
        } else {
            text.insert("model_type".into(), other);
        }
    }
    if text.is_empty() {
        if let serde_json::Value::Object(top) = &mut config {
            top.extend(sized);
        }
    } else {
        // A nested config is where vLLM reads the model type too.
        if let Some(t) = pd_dsl::dims::text_model_type(m) {
            text.entry("model_type").or_insert_with(|| t.into());
        }
        text.extend(sized);
        config["text_config"] = text.into();
    }
    if let Some(a) = pd_dsl::dims::architecture(m) {
        config["architectures"] = serde_json::json!([a]);
    }
    config
}

/// Says what is rehearsed, where, and how this machine stands in for the
/// image.
pub(super) fn announce(
    layout: &Layout,
    opts: &Options,
    stage: &Stage,
    procs: usize,
    inj: &Injection,
    out: &mut dyn Write,
) {
    let Stage {
        root,
        k8s,
        ips,
        shell,
        skip,
        ..
    } = stage;
    let _ = writeln!(
        out,
        "rehearsal of {}: {} nodes at {}..{} (loopback aliases), {} rank process(es), work dir {}",
        layout.name(),
        layout.placement.nodes.len(),
        ips.first().map_or("-", String::as_str),
        ips.last().map_or("-", String::as_str),
        procs,
        root.display()
    );
    if let (Some(late), Some(k)) = (opts.k8s_late_workers, k8s) {
        let workers: Vec<String> = k
            .pods
            .iter()
            .filter(|p| {
                p.env
                    .iter()
                    .any(|(n, v)| n == "LWS_WORKER_INDEX" && v != "0")
            })
            .map(|p| p.node.to_string())
            .collect();
        let _ = writeln!(
            out,
            "worker pods (node(s) {}) are scheduled late: their names resolve {:.1}s after start",
            if workers.is_empty() {
                "none".to_owned()
            } else {
                workers.join(", ")
            },
            late.as_secs_f64()
        );
    }
    let _ = writeln!(
        out,
        "preflight skips (no Ascend software here): {}",
        skip.join(", ")
    );
    let _ = writeln!(
        out,
        "image contract (upstream/facts/vllm-ascend/{}.json, {} image): not on PATH: {}{}; CANN only after sourcing {}",
        shell.release,
        crate::facts::image_key(layout.hardware),
        match (shell.absent.is_empty(), shell.undecided.is_empty()) {
            (true, true) => "nothing".to_owned(),
            _ => [shell.absent.clone(), shell.undecided.clone()]
                .concat()
                .join(", "),
        },
        if shell.undecided.is_empty() {
            String::new()
        } else {
            format!(
                " ({} left undecided by the table, null: taken as absent)",
                shell.undecided.join(", ")
            )
        },
        if shell.set_env_scripts.is_empty() {
            "nothing (the image sources no set_env.sh)".to_owned()
        } else {
            shell.set_env_scripts.join(" and ")
        }
    );
    if let Some(n) = &inj.note {
        let _ = writeln!(out, "fault {}: {n}", opts.fault.map_or("", Fault::name));
    }
}

#[cfg(test)]
#[allow(clippy::panic)]
mod tests {
    use super::*;

    fn qwen3_5() -> Layout {
        let spec = pd_dsl::layout! {
            name: "rehearsal/a3-1p1d-qwen3-5",
            model: qwen3_5_397b_a17b_w8a8_mtp,
            hardware: a3,
            image: "v0.23.0",
            topology: <prefill 1 x dp2tp8; decode 1 x dp4tp4;>,
            connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36200 } },
            ports: { api: 7100, dp_rpc: 12321 },
            proxy: { port: 1999 },
            provenance: { recorded: "2026-12-06" },
            serve: { expert_parallel: true, max_model_len: 32768 },
        };
        pd_dsl::check(&spec).unwrap_or_else(|e| panic!("{e}"))
    }

    fn deepseek() -> Layout {
        crate::test_layouts::deepseek_v3_1_1p1d()
    }

    /// The stand-in weights hold the experts under the key the real
    /// checkpoint does: Qwen3.5's `num_experts` (512) in its text config,
    /// DeepSeek's `n_routed_experts` (256) at the top level.
    #[test]
    fn stand_in_weights_name_the_experts_as_the_checkpoint_does() {
        let q = stand_in_config(&qwen3_5(), false);
        let text = &q["text_config"];
        assert_eq!(text["num_experts"], 512, "{q:#}");
        assert!(text.get("n_routed_experts").is_none(), "{q:#}");
        assert!(q.get("num_experts").is_none(), "{q:#}");
        assert_eq!(text["model_type"], "qwen3_5_moe_text", "{q:#}");
        let d = stand_in_config(&deepseek(), false);
        assert_eq!(d["n_routed_experts"], 256, "{d:#}");
        assert!(d.get("num_experts").is_none(), "{d:#}");
        assert!(d.get("text_config").is_none(), "{d:#}");
    }

    /// `--fault wrong-weights` changes the model type where vLLM reads it
    /// and cuts the context, and keeps the rest.
    #[test]
    fn wrong_weights_are_another_models() {
        let q = stand_in_config(&qwen3_5(), true);
        let text = &q["text_config"];
        assert_eq!(text["model_type"], super::super::inject::WRONG_MODEL_TYPE);
        assert_eq!(
            text["max_position_embeddings"],
            super::super::inject::WRONG_MAX_LEN
        );
        assert_eq!(text["num_experts"], 512);
        let d = stand_in_config(&deepseek(), true);
        assert_eq!(d["model_type"], super::super::inject::WRONG_MODEL_TYPE);
    }
}
