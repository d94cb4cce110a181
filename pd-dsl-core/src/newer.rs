//! What each later image of the table changes for a layout, computed from
//! the generated facts and the one rule engine, never typed by hand.
//!
//! A layout stays on the image it was recorded for. For every later image
//! that ships a build for the layout's hardware, the layout's spec is checked
//! again with only the image replaced (as [`crate::status`] does for blocked
//! layouts), and the facts of the two releases are compared on what the
//! layout uses: the rule findings that appear or disappear, the `vllm serve`
//! flags it passes that the newer vLLM no longer accepts, the
//! `additional_config` keys (and sub-keys) and env variables it sets that the
//! newer vllm-ascend no longer reads, its KV connector and its proxy script's
//! flags.

use crate::check::findings;
use crate::layout::Layout;
use crate::rules::Diagnostic;
use crate::tables::{IMAGES, Image};
use crate::upstream::{self, Release, VllmRelease};
use serde::Serialize;
use std::collections::BTreeSet;

/// The `vllm serve` flags the role scripts pass themselves
/// (pd-dsl/templates/sh/serve.sh, run_dp_template.sh, run_mixed.sh; a test
/// reads the templates), besides each role's [`crate::layout::Serve::options`].
pub const DERIVED_SERVE_FLAGS: &[&str] = &[
    "--data-parallel-address",
    "--data-parallel-rank",
    "--data-parallel-rpc-port",
    "--data-parallel-size",
    "--data-parallel-size-local",
    "--data-parallel-start-rank",
    "--headless",
    "--host",
    "--kv-transfer-config",
    "--port",
    "--prefill-context-parallel-size",
    "--tensor-parallel-size",
];

/// `vllm serve` flags the role scripts add only at run time and only on an
/// image whose vLLM takes them, so never one a newer image refuses:
/// `--shutdown-timeout` from `PD_DRAIN_SECONDS` (pd-dsl/templates/sh/serve.sh,
/// rendered where `render::model::drain_flag` holds).
pub const CONDITIONAL_SERVE_FLAGS: &[&str] = &["--shutdown-timeout"];

/// One rule finding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The rule's name.
    pub rule: &'static str,
    /// The field it points at (`decode.additional_config.enable_mlapo`).
    pub field: String,
    /// The message on the image it belongs to.
    pub message: String,
}

impl From<&Diagnostic> for Finding {
    fn from(d: &Diagnostic) -> Finding {
        Finding {
            rule: d.rule.name(),
            field: d.field.clone(),
            message: d.message.clone(),
        }
    }
}

/// What one later image changes for a layout.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NewerImage {
    /// The image tag.
    pub tag: &'static str,
    /// The vLLM it ships.
    pub vllm: &'static str,
    /// Findings the newer image adds (its messages).
    pub findings_added: Vec<Finding>,
    /// Findings of the layout's own image that the newer image clears.
    pub findings_removed: Vec<Finding>,
    /// `vllm serve` flags the layout passes that the newer vLLM does not
    /// accept (`--x`, or `--no-x` that is no longer negatable).
    pub flags_unaccepted: Vec<String>,
    /// `additional_config` keys (`key`, or `key.sub_key`) the layout sets
    /// that its own image reads and the newer one does not.
    pub config_keys_unread: Vec<String>,
    /// Env variables the layout sets that vllm-ascend reads on its own image
    /// and not on the newer one.
    pub env_unread: Vec<String>,
    /// The layout's KV connector, when the newer release no longer registers
    /// it.
    pub connector_unregistered: Option<&'static str>,
    /// Flags of the layout's proxy script that its own release has and the
    /// newer one does not.
    pub proxy_flags_removed: Vec<String>,
}

impl NewerImage {
    /// Nothing changes for the layout on this image.
    pub fn is_unchanged(&self) -> bool {
        self.findings_added.is_empty()
            && self.findings_removed.is_empty()
            && self.flags_unaccepted.is_empty()
            && self.config_keys_unread.is_empty()
            && self.env_unread.is_empty()
            && self.connector_unregistered.is_none()
            && self.proxy_flags_removed.is_empty()
    }

    /// One line per kind of change, for documents: `finding added:
    /// \`rule\`: message`, `flag no longer accepted: \`--x\``, ….
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for f in &self.findings_added {
            out.push(format!("new finding `{}`: {}", f.rule, f.message));
        }
        for f in &self.findings_removed {
            out.push(format!("cleared finding `{}`: {}", f.rule, f.message));
        }
        let ticks = |v: &[String]| {
            v.iter()
                .map(|x| format!("`{x}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !self.flags_unaccepted.is_empty() {
            out.push(format!(
                "`vllm serve` flags vLLM {} no longer accepts: {}",
                self.vllm,
                ticks(&self.flags_unaccepted)
            ));
        }
        if !self.config_keys_unread.is_empty() {
            out.push(format!(
                "`additional_config` keys no longer read: {}",
                ticks(&self.config_keys_unread)
            ));
        }
        if !self.env_unread.is_empty() {
            out.push(format!(
                "env variables vllm-ascend no longer reads: {}",
                ticks(&self.env_unread)
            ));
        }
        if let Some(c) = self.connector_unregistered {
            out.push(format!("KV connector `{c}` is no longer registered"));
        }
        if !self.proxy_flags_removed.is_empty() {
            out.push(format!(
                "proxy flags removed: {}",
                ticks(&self.proxy_flags_removed)
            ));
        }
        out
    }
}

/// Whether vLLM `v` accepts the flag spelled `spelling` (`--x`, `--no-x`).
fn accepts(v: &VllmRelease, spelling: &str) -> bool {
    let Some(name) = spelling.strip_prefix("--") else {
        return true;
    };
    if v.flag(name).is_some() {
        return true;
    }
    name.strip_prefix("no-")
        .and_then(|base| v.flag(base))
        .is_some_and(|f| f.negatable)
}

impl Layout {
    /// Every `vllm serve` flag the layout's scripts pass (sorted).
    pub fn serve_flag_names(&self) -> BTreeSet<String> {
        let mut out: BTreeSet<String> = DERIVED_SERVE_FLAGS
            .iter()
            .map(|f| (*f).to_owned())
            .collect();
        if !self.is_pd() {
            out.remove("--kv-transfer-config");
        }
        for serve in self.serve.values() {
            for (flag, _) in serve.options(self.model, &self.served_model_name) {
                out.insert(flag);
            }
        }
        out
    }

    /// The later images of the table with a build for the layout's
    /// hardware, in version order.
    pub fn later_images(&self) -> Vec<&'static Image> {
        let own = self.image.version();
        let mut later: Vec<&'static Image> = IMAGES
            .iter()
            .filter(|i| i.version() > own && i.reference(self.hardware).is_some())
            .collect();
        later.sort_by_key(|i| i.version());
        later
    }

    /// What each later image changes for this layout (in version order).
    pub fn newer_images(&self) -> Vec<NewerImage> {
        let own_findings = findings(&self.spec);
        let own_facts = self.image.facts();
        let own_vllm = upstream::vllm_of(self.image).ok();
        let flags = self.serve_flag_names();
        self.later_images()
            .into_iter()
            .map(|img| {
                let mut spec = self.spec.clone();
                spec.image.value = img.tag.to_owned();
                let theirs = findings(&spec);
                let key = |d: &Diagnostic| (d.rule, d.field.clone());
                let own_keys: BTreeSet<_> = own_findings.iter().map(key).collect();
                let their_keys: BTreeSet<_> = theirs.iter().map(key).collect();
                let mut n = NewerImage {
                    tag: img.tag,
                    vllm: img.vllm(),
                    findings_added: dedup(theirs.iter().filter(|d| !own_keys.contains(&key(d)))),
                    findings_removed: dedup(
                        own_findings
                            .iter()
                            .filter(|d| !their_keys.contains(&key(d))),
                    ),
                    ..NewerImage::default()
                };
                if let (Some(old), Ok(new)) = (own_vllm, upstream::vllm_of(img)) {
                    n.flags_unaccepted = flags
                        .iter()
                        .filter(|f| accepts(old, f) && !accepts(new, f))
                        .cloned()
                        .collect();
                }
                if let (Some(old), Some(new)) = (own_facts, img.facts()) {
                    self.compare_releases(old, new, &mut n);
                }
                n
            })
            .collect()
    }

    fn compare_releases(&self, old: &Release, new: &Release, n: &mut NewerImage) {
        let mut keys = BTreeSet::new();
        let mut env = BTreeSet::new();
        for serve in self.serve.values() {
            for (k, v) in &serve.additional_config {
                let Some(ok) = old.config_key(k) else {
                    continue;
                };
                let Some(nk) = new.config_key(k) else {
                    keys.insert(k.clone());
                    continue;
                };
                if let (Some(map), Some(os), Some(ns)) = (v.as_object(), &ok.sub_keys, &nk.sub_keys)
                {
                    for sub in map.keys() {
                        if os.contains(sub) && !ns.contains(sub) {
                            keys.insert(format!("{k}.{sub}"));
                        }
                    }
                }
            }
            for (name, _) in &serve.env {
                if old.reads_env(name) && !new.reads_env(name) {
                    env.insert(name.clone());
                }
            }
        }
        n.config_keys_unread = keys.into_iter().collect();
        n.env_unread = env.into_iter().collect();
        if let Some(c) = self.connector {
            let name = c.kv_connector();
            if old.registers(name) && !new.registers(name) {
                n.connector_unregistered = Some(name);
            }
        }
        if let Some(p) = self.proxy {
            let file = p.script.file_name();
            if let (Some(os), Some(ns)) = (old.scripts.get(file), new.scripts.get(file)) {
                n.proxy_flags_removed = os
                    .flags
                    .iter()
                    .filter(|f| !ns.flags.iter().any(|g| g.name == f.name))
                    .map(|f| f.name.clone())
                    .collect();
            }
        }
    }
}

/// Findings by (rule, field), once each, in the checker's order.
fn dedup<'a>(it: impl Iterator<Item = &'a Diagnostic>) -> Vec<Finding> {
    let mut seen = BTreeSet::new();
    it.filter(|d| seen.insert((d.rule, d.field.clone())))
        .map(Finding::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_flags_are_the_templates_flags() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../pd-dsl/templates/sh");
        let mut found = BTreeSet::new();
        for f in [
            "serve.sh",
            "run_dp_template.sh",
            "run_mixed.sh",
            "dp_serve.sh",
            "mixed_serve.sh",
            "options.sh",
        ] {
            let p = dir.join(f);
            let text = std::fs::read_to_string(&p)
                .unwrap_or_else(|e| unreachable!("cannot read {}: {e}", p.display()));
            for (i, _) in text.match_indices("--") {
                let rest = &text[i..];
                let end = rest[2..]
                    .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
                    .map_or(rest.len(), |e| e + 2);
                let flag = &rest[..end];
                if flag.len() > 3 && rest.as_bytes().get(2).is_some_and(u8::is_ascii_lowercase) {
                    found.insert(flag.to_owned());
                }
            }
        }
        let want: BTreeSet<String> = DERIVED_SERVE_FLAGS
            .iter()
            .chain(CONDITIONAL_SERVE_FLAGS)
            .map(|f| (*f).to_owned())
            .collect();
        assert_eq!(found, want);
    }

    #[test]
    fn accepts_reads_aliases_and_negation() {
        let Ok(v) = upstream::vllm("0.30.0") else {
            unreachable!("vllm 0.30.0 is pinned")
        };
        assert!(accepts(v, "--tensor-parallel-size"));
        assert!(accepts(v, "--no-enable-prefix-caching"));
        assert!(!accepts(v, "--no-tensor-parallel-size"));
        assert!(!accepts(v, "--swap-space-x"));
    }
}
