//! Starting the deployment: the wait for the layout's ports, the reaper, every
//! node's `run.sh` and, with `--k8s-env`, the proxy Deployment's `proxy.sh`.

use super::cluster::{Cluster, REAPER, wait_for_free_ports};
use super::inject::Injection;
use super::options::Options;
use super::setup::Stage;
use super::{LATENCY_MS, MARKER, PORT_WAIT, node_ip};
use pd_dsl::Layout;
use std::fs;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

/// The address of the proxy Deployment's pod (`--k8s-env`): the next free
/// one after the nodes'.
pub(super) fn proxy_pod_ip(layout: &Layout) -> String {
    node_ip(layout.placement.nodes.len())
}

/// Waits for the layout's ports, starts the reaper, then every node (and
/// the proxy Deployment's pod); `Err` when the ports stay in use or a
/// script cannot start.
pub(super) fn start(
    layout: &Layout,
    opts: &Options,
    stage: &Stage,
    inj: &Injection,
    deadline: Instant,
    out: &mut dyn Write,
) -> Result<Cluster, String> {
    // A port of the layout that is not bindable yet is almost always a
    // TIME_WAIT left by an earlier run's clients (on one machine every
    // node's outgoing connections use 127.0.0.1's ephemeral ports, and kv
    // spans such as 36000+ lie in that range): wait it out, bounded, rather
    // than fail preflight for a reason no cluster would have.
    let waited = wait_for_free_ports(layout, inj, deadline.min(Instant::now() + PORT_WAIT));
    if let Err(busy) = waited {
        return Err(format!(
            "ports of {} stay in use on this machine (another process holds them): {busy}",
            layout.name()
        ));
    }
    if let Ok(Some(t)) = waited {
        let _ = writeln!(
            out,
            "waited {:.1}s for ports left in TIME_WAIT by an earlier run",
            t.as_secs_f64()
        );
    }

    // The reaper.
    let reaper = Command::new("bash")
        .arg("-c")
        .arg(REAPER)
        .arg("pd-rehearse-reaper")
        .arg(format!("{MARKER}={}", stage.marker))
        .arg(if opts.keep {
            PathBuf::new()
        } else {
            stage.root.clone()
        })
        .env_remove(MARKER)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()
        .and_then(|mut c| c.stdin.take().map(|s| (c, s)));
    let mut cluster = Cluster {
        runs: Vec::new(),
        exits: vec![None; layout.placement.nodes.len()],
        marker: stage.marker.clone(),
        reaper,
        stopped: false,
    };

    // Start every node.
    for n in &layout.placement.nodes {
        let i = n.index;
        let log =
            fs::File::create(stage.logs.join(format!("node{i}.log"))).map_err(|e| e.to_string())?;
        let log2 = log.try_clone().map_err(|e| e.to_string())?;
        // `docker exec NAME bash run.sh`, or the pod's `bash /opt/pd-dsl/run.sh`.
        let mut cmd = Command::new(&stage.shell.bash);
        if stage.k8s.is_some() {
            cmd.arg(stage.scripts.join("run.sh"));
        } else {
            cmd.arg("run.sh");
        }
        stage.base_env(&mut cmd);
        cmd.current_dir(&stage.scripts)
            .env("PD_NODE_INDEX", i.to_string())
            .env("PD_LOCAL_IP", node_ip(i))
            .env("PD_NIC", "lo")
            .env("PD_LOG_DIR", &stage.logs)
            .env("PD_WAIT_SECONDS", stage.wait_s.to_string())
            .env("PD_POLL_SECONDS", "0.2")
            .env("PD_MODEL_PATH", &stage.model)
            .env("PD_PORT_CHECK_HOST", node_ip(i))
            .env(
                "PD_PROXY_SCRIPT",
                opts.proxy_script.as_deref().unwrap_or(&stage.shim),
            )
            .env("PD_SKIP_PREFLIGHT", stage.skip.join(","))
            .env("PD_STANDIN_NODE_IP", node_ip(i))
            .env("PD_STANDIN_NODE", i.to_string())
            .env("PD_STANDIN_NPUS", layout.hardware.npus_per_node.to_string())
            .env("PD_STANDIN_EXPECT", &stage.expect)
            .env("PD_STANDIN_STATE_DIR", &stage.state)
            .env("PD_STANDIN_MASTER_TIMEOUT", inj.master_timeout.to_string())
            .env("PD_STANDIN_IMAGE", layout.image.tag)
            .env("PD_STANDIN_LATENCY_MS", LATENCY_MS.to_string())
            .env("PD_STANDIN_PROXY_POLICY", opts.proxy_policy.name());
        for (k, v) in inj.env.get(&i).into_iter().flatten() {
            cmd.env(k, v);
        }
        if let Some(pod) = stage.k8s.as_ref().and_then(|k| k.pods.get(i)) {
            // What the pod has: LWS's variables and the manifest's env, and
            // no hand-set node index or IP list.
            cmd.env_remove("PD_NODE_INDEX").env_remove("PD_NODE_IPS");
            for (k, v) in &pod.env {
                cmd.env(k, v);
            }
            for (k, v) in &opts.k8s_env_override {
                match v {
                    Some(v) => cmd.env(k, v),
                    None => cmd.env_remove(k),
                };
            }
        }
        let child = cmd
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start node {i}'s run.sh: {e}"))?;
        cluster.runs.push(Some(child));
    }

    // --k8s-env: the proxy Deployment's pod, at the next free address.
    if let Some(env) = stage.k8s.as_ref().and_then(|k| k.proxy_env.as_ref()) {
        let log = fs::File::create(stage.logs.join("proxy.log")).map_err(|e| e.to_string())?;
        let log2 = log.try_clone().map_err(|e| e.to_string())?;
        let mut cmd = Command::new(&stage.shell.bash);
        cmd.arg(stage.scripts.join("proxy.sh"));
        stage.base_env(&mut cmd);
        cmd.current_dir(&stage.scripts).env(
            "PD_PROXY_SCRIPT",
            opts.proxy_script.as_deref().unwrap_or(&stage.shim),
        );
        for (k, v) in env {
            cmd.env(k, v);
        }
        // A proxy fault lands on the proxy, wherever it runs.
        for (k, v) in inj.env.get(&0).into_iter().flatten() {
            if k.starts_with("PD_REHEARSAL_PROXY") || k == "PD_PROXY_SCRIPT" {
                cmd.env(k, v);
            }
        }
        // The pod's own address, not every address of this machine.
        cmd.env("PD_PROXY_HOST", proxy_pod_ip(layout));
        let child = cmd
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start the proxy Deployment's proxy.sh: {e}"))?;
        cluster.runs.push(Some(child));
        cluster.exits.push(None);
    }
    Ok(cluster)
}
