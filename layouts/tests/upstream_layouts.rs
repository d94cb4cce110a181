//! The catalog's upstream deployments (`layouts/src/upstream/`, one module
//! per model line) are generated, never typed: for every model family, hardware and kind (PD or
//! mixed) that upstream's e2e multi-node configs deploy, the config of the
//! newest release that imports (one with a frozen performance baseline
//! first), imported against that release's image exactly as `catalog import`
//! does. This test regenerates the module from the upstream corpus
//! (`scripts/upstream/corpus.py`, fetched at test time, never committed) and
//! fails when a committed file differs; `PD_BLESS=1` writes them instead.
//!
//!     PD_BLESS=1 cargo test -p layouts --test upstream_layouts

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl::import::{Input, Options, finish, import, print};
use pd_dsl::{LayoutSpec, Spanned};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The generated module's folder: `mod.rs` and one file per model line.
const MODULE: &str = "src/upstream";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn python(args: &[&str]) -> String {
    let out = Command::new("python3")
        .args(args)
        .current_dir(repo())
        .output()
        .unwrap_or_else(|e| panic!("cannot run `python3 {}`: {e}", args.join(" ")));
    assert!(
        out.status.success(),
        "`python3 {}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `0.30.0rc2` → (0, 30, 0, rc 2); a final release sorts after its rcs.
fn version_key(v: &str) -> (u64, u64, u64, u64) {
    let (base, rc) = match v.split_once("rc") {
        Some((b, rc)) => (b, rc.parse().unwrap_or(0)),
        None => (v, u64::MAX),
    };
    let mut it = base.split('.').map(|x| x.parse::<u64>().unwrap_or(0));
    (
        it.next().unwrap_or(0),
        it.next().unwrap_or(0),
        it.next().unwrap_or(0),
        rc,
    )
}

/// The model family of a model-table entry: its weights' name up to the
/// quantization or MTP part (`GLM-5.1-w8a8c8` → `GLM-5.1`).
fn family(weights: &str) -> String {
    let base = weights.rsplit('/').next().unwrap_or(weights);
    let mut kept = Vec::new();
    for part in base.split('-') {
        let l = part.to_ascii_lowercase();
        let quant = l.len() > 1
            && l.starts_with('w')
            && l.as_bytes().get(1).is_some_and(u8::is_ascii_digit);
        if quant || l == "bf16" || l == "mtp" || l == "quarot" {
            break;
        }
        kept.push(part);
    }
    kept.join("-")
}

/// The module a family's layouts are written to: its vendor and model line,
/// the first name part (and the second when the first has no digit) up to
/// any `.` (`DeepSeek-V3.1-Terminus` → `deepseek_v3`, `Qwen3.5-122B-A10B` →
/// `qwen3`, `GLM-5.1` → `glm_5`).
fn module_of(family: &str) -> String {
    let mut parts = family.split('-');
    let line = |p: &str| p.split('.').next().unwrap_or(p).to_ascii_lowercase();
    let first = parts.next().unwrap_or(family);
    let mut name = line(first);
    if !first.bytes().any(|b| b.is_ascii_digit())
        && let Some(second) = parts.next()
    {
        name.push('_');
        name.push_str(&line(second));
    }
    name
}

struct Candidate {
    release: String,
    path: String,
    spec: LayoutSpec,
}

/// The topology in the catalog's short form: `2p1d`, `mixed-dp2tp16`.
fn short(spec: &LayoutSpec) -> String {
    let count = |r: pd_dsl::Role| -> u64 {
        spec.topology
            .iter()
            .filter(|g| g.role.value == r)
            .map(|g| g.count.value)
            .sum()
    };
    let (p, d) = (count(pd_dsl::Role::Prefill), count(pd_dsl::Role::Decode));
    // A KV pool next to the PD connector is a deployment of its own kind.
    let pool = spec
        .connector
        .as_ref()
        .and_then(|c| c.pool.as_ref())
        .map_or(String::new(), |p| format!("-{}-pool", p.backend.value));
    if p + d > 0 {
        format!("{p}p{d}d{pool}")
    } else {
        let g = &spec.topology[0];
        format!("mixed-{}", g.shape())
    }
}

/// The generated module: `(file name, text)` for `mod.rs` and each model
/// line's file.
fn generate() -> Vec<(String, String)> {
    let listing = python(&["scripts/upstream/e2e_oracle.py", "list"]);
    let mut trees: BTreeMap<String, PathBuf> = BTreeMap::new();
    // (family, hardware, pd, KV pool) -> candidates
    let mut by_key: BTreeMap<(String, String, bool, Option<String>), Vec<Candidate>> =
        BTreeMap::new();
    for line in listing.lines() {
        let Some((release, rel)) = line.split_once('\t') else {
            continue;
        };
        let tree = trees
            .entry(release.to_owned())
            .or_insert_with(|| {
                PathBuf::from(
                    python(&[
                        "scripts/upstream/corpus.py",
                        "path",
                        &format!("vllm-ascend=={release}"),
                    ])
                    .trim(),
                )
            })
            .clone();
        let text = std::fs::read_to_string(tree.join(rel)).expect("config");
        let name = format!("vllm-ascend {release} {rel}");
        let opts = Options {
            image: Some(format!("v{release}")),
            ..Options::default()
        };
        let Ok(imported) = import(&[Input::new(name, text)], &opts) else {
            continue;
        };
        let Ok(spec) = finish(&imported) else {
            continue;
        };
        let Some(model) = pd_dsl::tables::model(&spec.model.value) else {
            continue;
        };
        let hw = match &spec.hardware {
            pd_dsl::spec::HardwareSpec::All(h) => h.value.clone(),
            _ => continue,
        };
        let pool = spec
            .connector
            .as_ref()
            .and_then(|c| c.pool.as_ref())
            .map(|p| p.backend.value.to_string());
        let key = (family(model.weights), hw, spec.connector.is_some(), pool);
        by_key.entry(key).or_default().push(Candidate {
            release: release.to_owned(),
            path: rel.to_owned(),
            spec,
        });
    }
    let mut out = String::from(
        "/// Every upstream deployment of the catalog.\n\
         pub fn all() -> Vec<LayoutSpec> {\n    vec![\n",
    );
    // module -> (its families in order, its functions)
    let mut modules: BTreeMap<String, (Vec<String>, String)> = BTreeMap::new();
    let mut names: BTreeMap<String, usize> = BTreeMap::new();
    for ((fam, hw, _, _), mut cands) in by_key {
        cands.sort_by(|a, b| {
            (!b.spec.figures.is_empty(), version_key(&b.release), &a.path).cmp(&(
                !a.spec.figures.is_empty(),
                version_key(&a.release),
                &b.path,
            ))
        });
        let c = cands.swap_remove(0);
        let mut spec = c.spec;
        let model = pd_dsl::tables::model(&spec.model.value).expect("model");
        let hw_short = match hw.as_str() {
            "ascend_950dt" => "950dt".to_owned(),
            h => h.to_owned(),
        };
        let base = format!(
            "{}/{hw_short}-{}-upstream",
            model.weights.to_ascii_lowercase(),
            short(&spec)
        );
        let k = names.entry(base.clone()).or_insert(0);
        *k += 1;
        let name = if *k == 1 { base } else { format!("{base}-{k}") };
        let stem = c.path.rsplit('/').next().unwrap_or(&c.path);
        spec.name = Spanned::bare(name.clone());
        spec.summary = vec![format!(
            "{fam} on {} as upstream's CI deploys it: `{}` of vllm-ascend {}, imported with every deviation stated{}.",
            pd_dsl::tables::hardware(&hw).map_or(hw.as_str(), |h| h.product),
            c.path,
            c.release,
            if spec.figures.is_empty() {
                ""
            } else {
                "; its frozen performance baseline is the reference figure"
            }
        )];
        spec.workload = Some(Spanned::bare(match &spec.bench {
            Some(b) => format!(
                "upstream CI's e2e case `{stem}`: {}-token prompts, up to {} output tokens, {}{}",
                b.input_len.value,
                b.output_len.value,
                b.max_concurrency.as_ref().map_or_else(
                    || format!("{} prompts", b.num_prompts.value),
                    |c| format!("{} concurrent requests", c.value)
                ),
                b.request_rate
                    .as_ref()
                    .map_or_else(String::new, |r| format!(" at {} requests/s", r.value))
            ),
            None => format!(
                "upstream CI's e2e case `{stem}` (it records no performance baseline: its benchmark cases check accuracy)"
            ),
        }));
        let fn_name: String = name
            .chars()
            .map(|ch| {
                if ch.is_ascii_alphanumeric() {
                    ch.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect();
        out.push_str(&format!("        {fn_name}(),\n"));
        let (families, bodies) = modules.entry(module_of(&fam)).or_default();
        if !families.contains(&fam) {
            families.push(fam.clone());
        }
        bodies.push_str(&format!(
            "\n/// `{}` @ vllm-ascend {}.\npub fn {fn_name}() -> LayoutSpec {{\n",
            c.path, c.release
        ));
        for line in print::layout_source(&spec).lines() {
            bodies.push_str("    ");
            bodies.push_str(line);
            bodies.push('\n');
        }
        bodies.push_str("}\n");
    }
    out.push_str("    ]\n}\n");
    let mut head = String::from(
        "//! Upstream's own multi-node deployments, one per model family, hardware and\n\
         //! kind (PD, PD with a KV pool, or mixed): each imported from the e2e config of the newest\n\
         //! vllm-ascend release that has one and imports, a config with a frozen\n\
         //! performance baseline first, in one module per model line. Generated by\n\
         //! `layouts/tests/upstream_layouts.rs` from the upstream corpus; do not edit\n\
         //! (`PD_BLESS=1 cargo test -p layouts --test upstream_layouts` rewrites it).\n\n",
    );
    for name in modules.keys() {
        head.push_str(&format!("mod {name};\n"));
    }
    head.push('\n');
    for name in modules.keys() {
        head.push_str(&format!("pub use {name}::*;\n"));
    }
    head.push_str("\nuse pd_dsl::LayoutSpec;\n\n");
    let mut files = vec![("mod.rs".to_owned(), head + &out)];
    for (name, (families, bodies)) in modules {
        files.push((
            format!("{name}.rs"),
            format!(
                "//! The upstream deployments of {}.\n\
                 //! Generated by `layouts/tests/upstream_layouts.rs`; do not edit.\n\n\
                 use pd_dsl::{{LayoutSpec, layout}};\n{bodies}",
                families.join(", ")
            ),
        ));
    }
    files
}

#[test]
fn the_upstream_layouts_are_generated_from_the_corpus() {
    let want = generate();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(MODULE);
    // Files of the module that the corpus no longer gives.
    let stale: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                    name.ends_with(".rs") && !want.iter().any(|(w, _)| w == name)
                })
                .collect()
        })
        .unwrap_or_default();
    if std::env::var_os("PD_BLESS").is_some() {
        std::fs::create_dir_all(&dir).expect("create");
        for (name, text) in &want {
            std::fs::write(dir.join(name), text).expect("write");
        }
        for path in &stale {
            std::fs::remove_file(path).expect("remove");
        }
        return;
    }
    assert!(
        stale.is_empty(),
        "{MODULE} holds files the corpus no longer gives ({stale:?}); regenerate with `PD_BLESS=1 cargo test -p layouts --test upstream_layouts`"
    );
    for (name, want) in &want {
        let have = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        if have != *want {
            let first = have
                .lines()
                .zip(want.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| have.lines().count().min(want.lines().count()));
            panic!(
                "{MODULE}/{name} is stale (first difference at line {}: have {:?}, want {:?}); regenerate with `PD_BLESS=1 cargo test -p layouts --test upstream_layouts`",
                first + 1,
                have.lines().nth(first),
                want.lines().nth(first)
            );
        }
    }
}

#[test]
fn families_read_from_the_weights() {
    assert_eq!(family("GLM-5.1-w8a8c8"), "GLM-5.1");
    assert_eq!(
        family("DeepSeek-V3.1-Terminus-w8a8-mtp-QuaRot"),
        "DeepSeek-V3.1-Terminus"
    );
    assert_eq!(family("Qwen3-235B-A22B"), "Qwen3-235B-A22B");
    assert_eq!(family("DeepSeek-V3.1-BF16"), "DeepSeek-V3.1");
    assert_eq!(family("Kimi-K2.7-Code-w4a8"), "Kimi-K2.7-Code");
    assert!(version_key("0.30.0rc2") > version_key("0.29.0rc1"));
    assert!(version_key("0.23.0") > version_key("0.23.0rc1"));
    assert_eq!(module_of("DeepSeek-V3.1-Terminus"), "deepseek_v3");
    assert_eq!(module_of("Qwen3.5-122B-A10B"), "qwen3");
    assert_eq!(module_of("GLM-5.1"), "glm_5");
}
