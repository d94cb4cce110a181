//! The image table against upstream: the releases pinned in
//! `upstream/corpus.lock.json`, the generated facts in
//! `upstream/facts/vllm-ascend/` and the rows of `tables::IMAGES` are the
//! same set, and the image facts the rules read agree with a plain text
//! reading of the release's sdist (read at test time through
//! `scripts/upstream/corpus.py`; nothing of upstream is committed).
//!
//! A missing corpus is a failure with the command that fills it, never a
//! skip.

use pd_dsl_core::tables::{IMAGES, Image, RecomputeRoles};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn table() -> BTreeSet<String> {
    IMAGES
        .iter()
        .map(|i| i.tag.trim_start_matches('v').to_owned())
        .collect()
}

fn diff(what: &str, a: &BTreeSet<String>, b: &BTreeSet<String>) -> Vec<String> {
    let mut out = Vec::new();
    for v in a.difference(b) {
        out.push(format!("{v} is in {what} but not in the image table"));
    }
    for v in b.difference(a) {
        out.push(format!("{v} is in the image table but not in {what}"));
    }
    out
}

#[test]
fn lock_facts_and_table_name_the_same_releases() -> Result<(), String> {
    let lock_path = repo().join("upstream/corpus.lock.json");
    let text = read(&lock_path)?;
    let lock: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not JSON: {e}", lock_path.display()))?;
    let locked: BTreeSet<String> = lock["packages"]
        .as_array()
        .ok_or_else(|| format!("{} has no `packages` list", lock_path.display()))?
        .iter()
        .filter(|p| p["name"] == "vllm-ascend")
        .filter_map(|p| p["version"].as_str().map(str::to_owned))
        .collect();
    let dir = repo().join("upstream/facts/vllm-ascend");
    let facts: BTreeSet<String> = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".json"))
                .map(str::to_owned)
        })
        .collect();
    let mut problems = diff("upstream/corpus.lock.json", &locked, &table());
    problems.extend(diff("upstream/facts/vllm-ascend/", &facts, &table()));
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the lock, the facts and the image table disagree (pin with `scripts/upstream/corpus.py pin`, \
             generate with `scripts/upstream/facts.py write`, add the reviewed row to `IMAGES`):\n{}",
            problems.join("\n")
        ))
    }
}

/// Every vLLM the lock pins is shipped by some image of the table, and every
/// image's vLLM (its Dockerfiles' `ARG VLLM_TAG`, in the facts) is pinned and
/// has its generated table: a vLLM no image ships is dead weight in the
/// corpus, an unpinned one leaves the stand-in and the rules without flags.
#[test]
fn every_pinned_vllm_is_shipped_and_every_shipped_vllm_is_pinned() -> Result<(), String> {
    let lock_path = repo().join("upstream/corpus.lock.json");
    let text = read(&lock_path)?;
    let lock: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not JSON: {e}", lock_path.display()))?;
    let pinned: BTreeSet<String> = lock["packages"]
        .as_array()
        .ok_or_else(|| format!("{} has no `packages` list", lock_path.display()))?
        .iter()
        .filter(|p| p["name"] == "vllm")
        .filter_map(|p| p["version"].as_str().map(str::to_owned))
        .collect();
    let shipped: BTreeSet<String> = IMAGES.iter().map(|i| i.vllm().to_owned()).collect();
    let embedded: BTreeSet<String> = pd_dsl_core::upstream::vllm_versions()
        .into_iter()
        .map(str::to_owned)
        .collect();
    let mut problems = Vec::new();
    for v in pinned.difference(&shipped) {
        problems.push(format!(
            "vllm {v} is pinned in upstream/corpus.lock.json but no image of the table ships it; unpin it and delete upstream/facts/vllm/{v}.json"
        ));
    }
    for img in &IMAGES {
        if !pinned.contains(img.vllm()) {
            problems.push(format!(
                "image `{}` ships vllm {} (its `ARG VLLM_TAG`), which upstream/corpus.lock.json does not pin; pin it with `scripts/upstream/corpus.py pin vllm=={}`",
                img.tag,
                img.vllm(),
                img.vllm()
            ));
        }
    }
    if embedded != pinned {
        problems.push(format!(
            "the embedded vLLM tables ({}) are not the pinned vLLMs ({}); run `python3 scripts/upstream/facts.py write`",
            embedded.iter().cloned().collect::<Vec<_>>().join(", "),
            pinned.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// The unpacked sdist of one release.
fn sdist(img: &Image) -> Result<PathBuf, String> {
    let spec = format!("vllm-ascend=={}", img.tag.trim_start_matches('v'));
    let script = repo().join("scripts/upstream/corpus.py");
    let out = Command::new("python3")
        .arg(&script)
        .args(["path", &spec])
        .output()
        .map_err(|e| format!("cannot run python3 {}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!(
            "`python3 scripts/upstream/corpus.py path {spec}` failed ({}): {}\nfill the corpus with \
             `python3 scripts/upstream/corpus.py fetch --all`",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

fn read(p: &Path) -> Result<String, String> {
    std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
}

/// The image facts the rules read from the generated facts, cross-checked
/// against a plain text reading of each release's source: a second reader
/// of the same upstream lines, so an extractor that stops finding them (or
/// finds them where they are not) fails here.
#[test]
fn generated_image_facts_match_each_release_source() -> Result<(), String> {
    let mut problems = Vec::new();
    for img in &IMAGES {
        let dir = sdist(img)?;
        let tag = img.tag;
        // DSA CP needs SP: the ValueError in utils.py.
        let utils = read(&dir.join("vllm_ascend/utils.py"))?;
        let raises = utils.contains("DSA CP requires SP to be enabled");
        if raises != img.dsa_cp_checks_sp() {
            problems.push(format!(
                "{tag}: the facts' dsa_cp_needs_sp says {}, utils.py raising is {raises}",
                img.dsa_cp_checks_sp()
            ));
        }
        // Recompute scheduler ignored on P.
        let platform = read(&dir.join("vllm_ascend/platform.py"))?;
        let decode_only =
            platform.contains("recompute_scheduler_enable is ignored on PD-disaggregated P nodes");
        if decode_only != (img.recompute() == RecomputeRoles::DecodeOnly) {
            problems.push(format!(
                "{tag}: the facts' recompute_on_prefill gives {:?}, platform.py ignoring it on P is {decode_only}",
                img.recompute()
            ));
        }
        // V1 connector with hybrid KV.
        let v1 =
            read(&dir.join("vllm_ascend/distributed/kv_transfer/kv_p2p/mooncake_connector.py"))?;
        let hybrid = v1.contains("self.use_hybrid =");
        if hybrid != img.v1_hybrid_kv() {
            problems.push(format!(
                "{tag}: the facts' v1_hybrid_kv says {}, mooncake_connector.py `self.use_hybrid` is {hybrid}",
                img.v1_hybrid_kv()
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}
