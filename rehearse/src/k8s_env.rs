//! `rehearse --k8s-env`: each node's `run.sh` gets exactly the environment a
//! pod of the layout's `k8s/` manifests would have, read from the rendered
//! manifests themselves, and the proxy runs as its Deployment would.
//!
//! - What LeaderWorkerSet injects into every container (lws
//!   `pkg/utils/pod/pod_utils.go` `AddLWSVariables`): `LWS_LEADER_ADDRESS` =
//!   `<set>-<group>.<set>.<namespace>`, `LWS_GROUP_SIZE` = the set's `size`,
//!   `LWS_WORKER_INDEX`; plus `LWS_NAME`.
//! - What the manifest adds: the container's `env` (the leader template for
//!   worker 0 when the set has one, else the worker template).
//! - Cluster DNS: every pod's name (`<set>-0[-<i>].<set>`, also with the
//!   namespace and `.svc.cluster.local`) resolves to the loopback address of
//!   the node that pod plays, through `PD_STANDIN_HOSTS`, read by the `getent`
//!   stand-in and by the stand-ins' HTTP client. A worker pod's name can
//!   be made to resolve only from a given time ([`Cluster::hosts_env`]), as
//!   when a group's workers are scheduled after its leader.
//!
//! Pod *w* of the set of engine *e* plays node `e.nodes[w]` of the layout's
//! placement, so a manifest whose env disagrees with the placement shows up as
//! a failing rehearsal, not as a silently different deployment.

use k8s::k8s_openapi;
use pd_dsl::Layout;
use pd_dsl::render::Artifact;
use pd_dsl::render::k8s::{self, Kustomization, lws::LeaderWorkerSet};
use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

/// Env var of the stand-ins: `name=ip` pairs, comma-separated.
pub const HOSTS_ENV: &str = "PD_STANDIN_HOSTS";

/// One pod of a LeaderWorkerSet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pod {
    /// The node of the layout it plays.
    pub node: usize,
    /// Its environment: LWS's variables and the manifest's `env`.
    pub env: Vec<(String, String)>,
    /// Its container's exec probes (`startup`, `liveness`, `readiness`) and
    /// their commands, as the manifest states them.
    pub probes: Vec<(&'static str, Vec<String>)>,
    /// Its `terminationGracePeriodSeconds`.
    pub grace_seconds: Option<i64>,
    /// Its container's `preStop` exec command, which the kubelet runs before
    /// SIGTERM.
    pub pre_stop: Option<Vec<String>>,
}

/// The exec probes of a pod template's first container.
fn probes(
    template: &k8s_openapi::api::core::v1::PodTemplateSpec,
) -> Vec<(&'static str, Vec<String>)> {
    let Some(c) = template.spec.as_ref().and_then(|s| s.containers.first()) else {
        return Vec::new();
    };
    [
        ("startup", &c.startup_probe),
        ("liveness", &c.liveness_probe),
        ("readiness", &c.readiness_probe),
    ]
    .into_iter()
    .filter_map(|(kind, p)| {
        let cmd = p.as_ref()?.exec.as_ref()?.command.clone()?;
        Some((kind, cmd))
    })
    .collect()
}

/// The pods, the proxy Deployment's env (PD) and the DNS map of a layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    /// One pod per node, in node order.
    pub pods: Vec<Pod>,
    /// The proxy container's `env` (PD layouts).
    pub proxy_env: Option<Vec<(String, String)>>,
    /// Every pod DNS name of the cluster: the name, the address of the node
    /// its pod plays, and whether that pod is a worker (not its group's
    /// leader).
    pub hosts: Vec<(String, String, bool)>,
}

impl Cluster {
    /// [`HOSTS_ENV`]'s value: `name=ip` per pod name; with `workers_from`,
    /// a worker pod's names are `name=ip@MS` (milliseconds since the Unix
    /// epoch), which resolve only from that time on.
    pub fn hosts_env(&self, workers_from: Option<SystemTime>) -> String {
        let from = workers_from
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_millis());
        self.hosts
            .iter()
            .map(|(name, ip, worker)| match from {
                Some(ms) if *worker => format!("{name}={ip}@{ms}"),
                _ => format!("{name}={ip}"),
            })
            .collect::<Vec<_>>()
            .join(",")
    }
}

fn parse<T: serde::de::DeserializeOwned>(a: &Artifact) -> Result<T, String> {
    serde_saphyr::from_str(&a.contents).map_err(|e| format!("{}: {e}", a.path.display()))
}

/// The container's `env`, as the kubelet fills it in for a pod whose IP is
/// `pod_ip`: a plain value as is, the downward API's `status.podIP` as the
/// pod's IP; any other source is refused (the stand-in cluster has no other).
fn container_env(
    template: &k8s_openapi::api::core::v1::PodTemplateSpec,
    pod_ip: Option<&str>,
) -> Result<Vec<(String, String)>, String> {
    let Some(env) = template
        .spec
        .as_ref()
        .and_then(|s| s.containers.first())
        .and_then(|c| c.env.as_ref())
    else {
        return Ok(Vec::new());
    };
    env.iter()
        .map(|e| {
            let field = e
                .value_from
                .as_ref()
                .and_then(|v| v.field_ref.as_ref())
                .map(|f| f.field_path.as_str());
            match (&e.value, &e.value_from, field, pod_ip) {
                (Some(v), None, _, _) => Ok((e.name.clone(), v.clone())),
                (None, Some(_), Some(k8s::POD_IP_FIELD), Some(ip)) => {
                    Ok((e.name.clone(), ip.to_owned()))
                }
                (None, None, _, _) => Ok((e.name.clone(), String::new())),
                _ => Err(format!(
                    "env `{}` takes its value from {}, expected a value or the downward API's `{}` on an engine pod",
                    e.name,
                    field.map_or_else(|| "a source other than a field".to_owned(), |f| format!("field `{f}`")),
                    k8s::POD_IP_FIELD
                )),
            }
        })
        .collect()
}

/// Reads the layout's rendered `k8s/` manifests; `node_ip(i)` is the address
/// that plays node `i`.
pub fn cluster(
    layout: &Layout,
    artifacts: &[Artifact],
    node_ip: impl Fn(usize) -> String,
) -> Result<Cluster, String> {
    let in_k8s = |a: &&Artifact| {
        a.path
            .parent()
            .is_some_and(|p| p.ends_with(k8s::DIR) && p.starts_with(layout.name()))
    };
    let kustomization = artifacts
        .iter()
        .filter(in_k8s)
        .find(|a| a.path.ends_with("kustomization.yaml"))
        .ok_or_else(|| format!("{} renders no `k8s/kustomization.yaml`", layout.name()))?;
    let namespace = parse::<Kustomization>(kustomization)?.namespace;
    let names = k8s::names(layout).map_err(|e| e.to_string())?;
    let mut pods: Vec<Option<Pod>> = vec![None; layout.node_count()];
    let mut proxy_env = None;
    for a in artifacts.iter().filter(in_k8s) {
        if a.contents.contains("\nkind: LeaderWorkerSet\n") {
            let set: LeaderWorkerSet = parse(a)?;
            let name = set.metadata.name.clone().unwrap_or_default();
            let engine = names.sets.iter().find(|s| s.name == name).ok_or_else(|| {
                format!(
                    "{}: LeaderWorkerSet `{name}` is no engine of the layout",
                    a.path.display()
                )
            })?;
            let t = &set.spec.leader_worker_template;
            let size = usize::try_from(t.size).unwrap_or(0);
            for w in 0..size {
                let Some(&node) = engine.nodes.get(w) else {
                    return Err(format!(
                        "{}: `{name}` has size {size}, but engine {} runs on {} node(s)",
                        a.path.display(),
                        engine.engine,
                        engine.nodes.len()
                    ));
                };
                let template = match (&t.leader_template, w) {
                    (Some(leader), 0) => leader,
                    _ => &t.worker_template,
                };
                let mut env = vec![
                    (
                        "LWS_LEADER_ADDRESS".to_owned(),
                        format!("{name}-0.{name}.{namespace}"),
                    ),
                    ("LWS_GROUP_SIZE".to_owned(), size.to_string()),
                    ("LWS_WORKER_INDEX".to_owned(), w.to_string()),
                    ("LWS_NAME".to_owned(), name.clone()),
                ];
                env.extend(container_env(template, Some(&node_ip(node)))?);
                pods[node] = Some(Pod {
                    node,
                    env,
                    probes: probes(template),
                    pre_stop: template
                        .spec
                        .as_ref()
                        .and_then(|s| s.containers.first())
                        .and_then(|c| c.lifecycle.as_ref()?.pre_stop.as_ref()?.exec.as_ref())
                        .and_then(|e| e.command.clone()),
                    grace_seconds: template
                        .spec
                        .as_ref()
                        .and_then(|s| s.termination_grace_period_seconds),
                });
            }
        } else if a.contents.contains("\nkind: Deployment\n") {
            let d: k8s_openapi::api::apps::v1::Deployment = parse(a)?;
            proxy_env = d
                .spec
                .as_ref()
                .map(|s| container_env(&s.template, None))
                .transpose()?;
        }
    }
    let pods = pods
        .into_iter()
        .enumerate()
        .map(|(i, p)| p.ok_or_else(|| format!("no pod of the k8s manifests plays node {i}")))
        .collect::<Result<Vec<_>, _>>()?;
    let mut hosts: BTreeMap<String, (String, bool)> = BTreeMap::new();
    for (i, h) in names.node_hosts.iter().enumerate() {
        let ip = node_ip(i);
        // A group's leader is its engine's first node.
        let worker = !names.sets.iter().any(|s| s.nodes.first() == Some(&i));
        for name in [
            h.clone(),
            format!("{h}.{namespace}"),
            format!("{h}.{namespace}.svc.cluster.local"),
        ] {
            hosts.insert(name, (ip.clone(), worker));
        }
    }
    let hosts = hosts
        .into_iter()
        .map(|(n, (ip, worker))| (n, ip, worker))
        .collect();
    Ok(Cluster {
        pods,
        proxy_env,
        hosts,
    })
}

/// The address `PD_STANDIN_HOSTS` maps `name` to, if any and if it resolves
/// yet (an `ip@MS` entry only from MS milliseconds after the Unix epoch on).
pub fn lookup(name: &str) -> Option<String> {
    let map = std::env::var(HOSTS_ENV).ok()?;
    let entry = map.split(',').find_map(|pair| {
        let (n, entry) = pair.split_once('=')?;
        (n == name).then_some(entry)
    })?;
    match entry.split_once('@') {
        None => Some(entry.to_owned()),
        Some((ip, from)) => {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .ok()?
                .as_millis();
            (now >= from.parse::<u128>().ok()?).then(|| ip.to_owned())
        }
    }
}

/// The `getent` stand-in: `getent hosts NAME` prints `IP NAME` for a pod name
/// of the rehearsed cluster (or an IPv4 address, as itself) and exits 2, as
/// getent does, for a name it does not know.
pub fn getent_main(args: Vec<String>) {
    let code = match args.as_slice() {
        [db, name] if db == "hosts" => {
            let ip = if name.parse::<std::net::Ipv4Addr>().is_ok() {
                Some(name.clone())
            } else {
                lookup(name)
            };
            match ip {
                Some(ip) => {
                    println!("{ip}          {name}");
                    0
                }
                None => 2,
            }
        }
        _ => {
            eprintln!("getent (pd-rehearse stand-in): only `getent hosts NAME` is supported");
            1
        }
    };
    std::process::exit(code);
}
