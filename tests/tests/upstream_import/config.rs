//! One config: what the runner and the release's vLLM say of it, its import
//! as a user does it, and the round trip of the rendered scripts against the
//! oracle.

use crate::oracle::{oracle_proxy, oracle_ranks, strings};
use crate::pool::pool_failures;
use pd_dsl::import::{Imported, Input, Options, import};
use pd_dsl_tests::round_trip::compare_run;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// How one config came out.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The release's runner cannot start it (the oracle's `error`).
    RunnerFails(String),
    /// The release's vLLM refuses the argv the runner builds (O6).
    VllmRefuses(String),
    /// The import failed: why.
    NotImported(String),
    /// Imported; the differences left (empty: round-tripped).
    Imported(Vec<String>),
    /// The importer or the loader panicked (a defect: bad input never
    /// panics).
    Panicked(String),
}

pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default()
}

/// The first line of an import's error output, without its position.
fn reason(stderr: &str) -> String {
    let line = stderr.lines().next().unwrap_or("no message").trim();
    // `FILE:LINE:COL: error...` → `error...`
    match line.find(": error") {
        Some(i) => line[i + 2..].to_owned(),
        None => line.to_owned(),
    }
}

/// O6: what the release's vLLM says of the first runner argv it refuses.
fn vllm_refuses(release: &str, oracle: &Value) -> Option<String> {
    let flags = pd_rehearse::serve_flags::Flags::of_image(&format!("v{release}"))
        .unwrap_or_else(|e| panic!("{release}: no vLLM argument table: {e}"));
    for n in oracle["nodes"].as_array().into_iter().flatten() {
        for r in n["ranks"].as_array().into_iter().flatten() {
            let argv = strings(&r["argv"]);
            if let [v, s, rest @ ..] = argv.as_slice()
                && v.ends_with("vllm")
                && s == "serve"
                && let Err(e) = pd_rehearse::serve_flags::parse(flags, rest)
            {
                return Some(format!(
                    "node {}: vllm serve: error: {e}",
                    n["node_index"].as_u64().unwrap_or(0)
                ));
            }
        }
    }
    None
}

pub(crate) fn run_config(release: &str, tree: &Path, oracle: &Value) -> Outcome {
    if let Some(e) = oracle["error"].as_str() {
        return Outcome::RunnerFails(e.to_owned());
    }
    if let Some(e) = vllm_refuses(release, oracle) {
        return Outcome::VllmRefuses(e);
    }
    let path = tree.join(oracle["config"].as_str().expect("config path"));
    let file = path.display().to_string();
    let tag = format!("v{release}");
    let image = pd_dsl::tables::image(&tag).map(|_| tag);
    let mut argv: Vec<String> = vec!["catalog".into(), "import".into(), file.clone()];
    argv.extend(["--format".into(), "yaml".into()]);
    if let Some(i) = &image {
        argv.extend(["--image".into(), i.clone()]);
    }
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = layouts::cli::run(&argv, Ok(Vec::new()), None, &mut out, &mut err);
    if code != 0 {
        return Outcome::NotImported(reason(&String::from_utf8_lossy(&err)));
    }
    let yaml = String::from_utf8(out).expect("utf-8");
    let layout = match pd_dsl::load::from_yaml("imported.yaml", &yaml) {
        Ok(l) => l,
        Err(e) => {
            return Outcome::NotImported(format!(
                "the imported YAML does not load: {}",
                e.to_string().lines().next().unwrap_or_default()
            ));
        }
    };
    let text = std::fs::read_to_string(&path).expect("config");
    let opts = Options {
        image,
        ..Options::default()
    };
    let imported: Imported = import(&[Input::new(file.clone(), text)], &opts)
        .unwrap_or_else(|e| panic!("{file}: the CLI imported it, the library does not: {e}"));
    let node_of: BTreeMap<usize, usize> = imported
        .ranks
        .iter()
        .map(|r| (r.input_node, r.node))
        .collect();
    let ranks = match oracle_ranks(oracle, &node_of) {
        Ok(r) => r,
        Err(e) => return Outcome::Imported(vec![e]),
    };
    let cluster = strings(&oracle["cluster_ips"]);
    let mut ips: Vec<String> = (0..layout.node_count())
        .map(|n| format!("10.99.0.{}", n + 1))
        .collect();
    for (input, node) in &node_of {
        if let (Some(ip), Some(slot)) = (cluster.get(*input), ips.get_mut(*node)) {
            *slot = ip.clone();
        }
    }
    let named: BTreeMap<String, usize> = ips
        .iter()
        .enumerate()
        .map(|(n, ip)| (ip.clone(), n))
        .collect();
    let proxy = oracle_proxy(oracle);
    let name = oracle["config"].as_str().unwrap_or_default().to_owned();
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        compare_run(
            &name,
            &layout,
            &imported,
            &ranks,
            proxy.as_ref(),
            &ips,
            &named,
            &[],
        )
    }));
    let run = run.map(|(n, mut failures)| {
        let pool = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool_failures(&name, oracle, &layout, &ips, &node_of)
        }));
        match pool {
            Ok(f) => failures.extend(f),
            Err(p) => failures.push(format!(
                "{name}: the pool's dry run fails: {}",
                panic_message(p.as_ref()).lines().next().unwrap_or_default()
            )),
        }
        (n, failures)
    });
    match run {
        Ok((_, failures)) => Outcome::Imported(failures),
        Err(p) => Outcome::Imported(vec![format!(
            "{name}: the rendered scripts fail: {}",
            panic_message(p.as_ref()).lines().next().unwrap_or_default()
        )]),
    }
}
