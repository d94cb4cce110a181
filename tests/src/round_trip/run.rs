//! Running the rendered layout as the harness does: what each rank runs
//! ([`Ran`]) and the environment every script starts with.

use crate::harness::{Served, dry_run, flags, ranks, render_layout, serve};
use std::collections::BTreeMap;
use std::path::Path;

/// What one rank of the rendered layout runs.
#[derive(Debug)]
pub struct Ran {
    /// Node index (pd-dsl order).
    pub node: usize,
    /// Global DP rank.
    pub dp_rank: u64,
    /// What the recording `vllm` saw.
    pub served: Served,
    /// `ENGINE_ID` run.sh exports (PD).
    pub engine_id: Option<String>,
    /// The devices the upstream launcher would give this rank.
    pub devices: Option<String>,
}

/// The start environment of every script the harness runs.
pub fn start_env(extra: &[(&str, &str)]) -> BTreeMap<String, String> {
    let mut m: BTreeMap<String, String> = [
        ("HCCL_IF_IP", "192.xx.xx.1"),
        ("GLOO_SOCKET_IFNAME", "eth0"),
        ("TP_SOCKET_IFNAME", "eth0"),
        ("HCCL_SOCKET_IFNAME", "eth0"),
        ("MMC_LOCAL_CONFIG_PATH", "/tmp/runtime/mmc-local.conf"),
        ("MOONCAKE_CONFIG_PATH", "/tmp/runtime/mooncake.json"),
        ("MOONCAKE_MASTER", "192.xx.xx.1:50088"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    m.extend(
        extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    m
}

/// Runs every node of the rendered layout; `ips` are the node addresses
/// given to run.sh. Also returns the proxy command run.sh of node 0 runs.
/// `start` is the environment every script starts with (besides the
/// harness's own, [`start_env`]).
pub fn run_layout(
    layout: &pd_dsl::Layout,
    ips: &[String],
    start: &[(&str, &str)],
) -> (Vec<Ran>, Option<Vec<String>>) {
    let r = render_layout(layout);
    let ips: Vec<&str> = ips.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    let mut proxy = None;
    for node in 0..layout.node_count() {
        let d = dry_run(&r, node, &ips);
        if let Some(cmd) = d.proxy_command.clone() {
            assert!(proxy.is_none(), "two nodes run the proxy");
            proxy = Some(cmd);
        }
        let script = Path::new(&d.node_command[0])
            .file_name()
            .and_then(|f| f.to_str())
            .unwrap_or_default()
            .to_owned();
        let placed = &layout.placement.nodes[node];
        // run.sh exports the node index where some node runs its own
        // settings (`nodes:`); the rank scripts pick them by it.
        let index = node.to_string();
        let mut start = start.to_vec();
        if !layout.node_serve.is_empty() {
            start.push(("PD_NODE", index.as_str()));
        }
        let start = start.as_slice();
        if script == "run_mixed.sh" {
            let served = serve(&r, "run_mixed.sh", &d.node_command[1..], start);
            for rank in &placed.ranks {
                out.push(Ran {
                    node,
                    dp_rank: u64::from(rank.dp_rank),
                    served: Served {
                        argv: served.argv.clone(),
                        env: served.env.clone(),
                    },
                    engine_id: None,
                    devices: None,
                });
            }
            continue;
        }
        // A PD node: the launcher runs one template per rank.
        let engine_id = d.engine_id.clone().expect("a PD node exports ENGINE_ID");
        let kv_port = d.kv_port.clone().expect("a PD node exports KV_PORT");
        let template = flags(&d.node_command[2..])
            .get("--template")
            .and_then(|v| v.first().cloned())
            .expect("the launcher names its template");
        let template = Path::new(&template)
            .file_name()
            .and_then(|f| f.to_str())
            .expect("template file name")
            .to_owned();
        for (local, args) in ranks(&r, &d.node_command).into_iter().enumerate() {
            let tp: usize = args[6].parse().expect("TP size");
            let devices = (local * tp..(local + 1) * tp)
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(",");
            let mut env = start.to_vec();
            env.extend([
                ("ENGINE_ID", engine_id.as_str()),
                ("KV_PORT", kv_port.as_str()),
            ]);
            let served = serve(&r, &template, &args, &env);
            out.push(Ran {
                node,
                dp_rank: args[3].parse().expect("DP rank"),
                served,
                engine_id: Some(engine_id.clone()),
                devices: Some(devices),
            });
        }
    }
    (out, proxy)
}

/// The start environment of the scripts the harness runs: a path list
/// set, so a prepend shows.
/// (`LD_PRELOAD` stays unset: a prepend onto nothing shows too.)
pub const START_ENV: &[(&str, &str)] = &[("LD_LIBRARY_PATH", "/opt/harness/lib")];
