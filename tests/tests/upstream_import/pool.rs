//! The KV pool against the runner's (O8): node 0's pool service and every
//! node's config files.

use serde_json::Value;
use std::collections::BTreeMap;

/// The KV pool against the runner's: node 0's service (argv, its env's
/// names and file names) and every node's config files, byte for byte
/// (O8: the runner's Python is `sys.executable`, compared by its name).
pub(crate) fn pool_failures(
    name: &str,
    oracle: &Value,
    layout: &pd_dsl::Layout,
    ips: &[String],
    node_of: &BTreeMap<usize, usize>,
) -> Vec<String> {
    let theirs_services: Vec<(usize, &Value)> = oracle["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|n| {
            let k = n["node_index"].as_u64().unwrap_or(0) as usize;
            n["services"]
                .as_array()
                .into_iter()
                .flatten()
                .map(move |s| (k, s))
        })
        .collect();
    let theirs_files: BTreeMap<(usize, String), String> = oracle["files"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(path, text)| {
            let parts: Vec<&str> = path.split('/').collect();
            let node = parts
                .iter()
                .find_map(|p| p.strip_prefix("node-"))
                .and_then(|k| k.parse::<usize>().ok())?;
            let file = (*parts.last()?).to_owned();
            Some(((node, file), text.as_str().unwrap_or_default().to_owned()))
        })
        .collect();
    if theirs_services.is_empty() && theirs_files.is_empty() && layout.pool().is_none() {
        return Vec::new();
    }
    let r = pd_dsl_tests::harness::render_layout(layout);
    let addrs: Vec<&str> = ips.iter().map(String::as_str).collect();
    let mut failures = Vec::new();
    let ours: Vec<pd_dsl_tests::harness::DryRun> = (0..layout.node_count())
        .map(|n| pd_dsl_tests::harness::dry_run(&r, n, &addrs))
        .collect();
    let python = |w: &str| {
        let base = w.rsplit('/').next().unwrap_or(w);
        if base.starts_with("python") {
            "python3".to_owned()
        } else {
            w.to_owned()
        }
    };
    let mut services_seen = 0;
    for (k, s) in &theirs_services {
        let node = node_of.get(k).copied().unwrap_or(usize::MAX);
        let argv: Vec<String> = s["argv"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_owned))
            .collect();
        let theirs: Vec<String> = argv
            .iter()
            .enumerate()
            .map(|(i, a)| if i == 0 { python(a) } else { a.clone() })
            .collect();
        match ours.get(node).and_then(|d| d.pool_service.as_ref()) {
            None => failures.push(format!(
                "{name}: node {node}: the runner starts `{}`, ours no pool service",
                theirs.join(" ")
            )),
            Some(o) => {
                services_seen += 1;
                let o: Vec<String> = o
                    .iter()
                    .enumerate()
                    .map(|(i, a)| if i == 0 { python(a) } else { a.clone() })
                    .collect();
                if o != theirs {
                    failures.push(format!(
                        "{name}: node {node}: pool service `{}`, the runner's `{}`",
                        o.join(" "),
                        theirs.join(" ")
                    ));
                }
                let env_names = |m: &Value| -> Vec<(String, String)> {
                    m.as_object()
                        .into_iter()
                        .flatten()
                        .map(|(k, v)| {
                            (
                                k.clone(),
                                v.as_str()
                                    .unwrap_or_default()
                                    .rsplit('/')
                                    .next()
                                    .unwrap_or_default()
                                    .to_owned(),
                            )
                        })
                        .collect()
                };
                let theirs_env = env_names(&s["env"]);
                let ours_env: Vec<(String, String)> = ours[node]
                    .pool_service_env
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            v.rsplit('/').next().unwrap_or_default().to_owned(),
                        )
                    })
                    .collect();
                // Names and file names; Mooncake's library path prefix as a whole.
                let key =
                    |e: &[(String, String)]| e.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
                if key(&theirs_env) != key(&ours_env)
                    || (theirs_env.iter().any(|(k, _)| k.ends_with("CONFIG_PATH"))
                        && theirs_env != ours_env)
                {
                    failures.push(format!("{name}: node {node}: pool service env {ours_env:?}, the runner's {theirs_env:?}"));
                }
            }
        }
    }
    for (n, d) in ours.iter().enumerate() {
        if d.pool_service.is_some() && services_seen == 0 {
            failures.push(format!(
                "{name}: node {n}: ours starts a pool service, the runner none"
            ));
        }
    }
    for ((k, file), text) in &theirs_files {
        let node = node_of.get(k).copied().unwrap_or(usize::MAX);
        match ours.get(node).and_then(|d| d.pool_files.get(file)) {
            None => failures.push(format!(
                "{name}: node {node}: the runner writes `{file}`, ours does not"
            )),
            Some(o) if o.trim_end() != text.trim_end() => failures.push(format!(
                "{name}: node {node}: `{file}` differs: ours {o:?}, the runner's {text:?}"
            )),
            Some(_) => {}
        }
    }
    for (n, d) in ours.iter().enumerate() {
        let k = node_of
            .iter()
            .find(|(_, v)| **v == n)
            .map(|(k, _)| *k)
            .unwrap_or(n);
        for file in d.pool_files.keys() {
            if !theirs_files.contains_key(&(k, file.clone())) {
                failures.push(format!(
                    "{name}: node {n}: ours writes `{file}`, the runner does not"
                ));
            }
        }
    }
    failures
}
