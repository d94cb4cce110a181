//! Facts generated from upstream's released source: one table per
//! vllm-ascend release, `upstream/facts/vllm-ascend/<version>.json`, written
//! by `scripts/upstream/facts.py` from the release's sdist (the whole
//! repository at its tag) and checked for freshness against the corpus. The
//! schema is the one `facts.py` documents; only the parts the rules read are
//! typed here (serde ignores the rest).
//!
//! Each row of [`crate::tables::IMAGES`] embeds its release's table with
//! `include_str!`, so a row without facts does not compile. The tables are
//! parsed once per process ([`LazyLock`]), in table order.

use crate::tables::{IMAGES, Image};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// One release's facts.
#[derive(Debug, Deserialize)]
pub struct Release {
    /// `vllm-ascend`.
    pub package: String,
    /// The release version without `v` (`0.21.0rc1`).
    pub version: String,
    /// The vLLM the release's images install.
    pub vllm: VllmFact,
    /// Every top-level `additional_config` key the package reads, by key.
    pub additional_config: Vec<ConfigKeyFact>,
    /// Every environment variable the package reads, by name.
    pub env: Vec<Named>,
    /// Every KV connector the package registers, by name.
    pub kv_connectors: Vec<Named>,
    /// The example scripts pd-dsl runs, by file name.
    pub scripts: BTreeMap<String, ScriptFact>,
    /// The image contract per hardware (`a2`, `a3`, `950dt`); `None` when the
    /// release has no Dockerfile for it.
    pub images: BTreeMap<String, Option<ImageFact>>,
}

/// The vLLM version an image installs and where that is stated.
#[derive(Debug, Deserialize)]
pub struct VllmFact {
    /// `0.22.1`.
    pub version: String,
    /// Path inside the sdist (`Dockerfile.a3`).
    pub source: String,
}

/// A top-level `additional_config` key.
#[derive(Debug, Deserialize)]
pub struct ConfigKeyFact {
    /// The key.
    pub key: String,
    /// Where it is read.
    pub source: String,
    /// Keys read from it when it is a nested mapping.
    pub sub_keys: Option<Vec<String>>,
    /// An unknown sub-key raises.
    pub strict: bool,
}

/// A name and where upstream defines or reads it.
#[derive(Debug, Deserialize)]
pub struct Named {
    /// The name.
    pub name: String,
    /// Path inside the sdist.
    pub source: String,
}

/// An example script.
#[derive(Debug, Deserialize)]
pub struct ScriptFact {
    /// Path inside the sdist.
    pub source: String,
    /// Its command-line flags.
    pub flags: Vec<FlagFact>,
}

/// One flag of a script.
#[derive(Debug, Deserialize)]
pub struct FlagFact {
    /// `--port`.
    pub name: String,
}

/// One Dockerfile of the release.
#[derive(Debug, Deserialize)]
pub struct ImageFact {
    /// `Dockerfile.a3`.
    pub dockerfile: String,
    /// The base image of the final stage.
    pub from: String,
}

impl Release {
    /// The `additional_config` key, if the release reads it.
    pub fn config_key(&self, key: &str) -> Option<&ConfigKeyFact> {
        self.additional_config.iter().find(|k| k.key == key)
    }

    /// Whether the package reads environment variable `name`.
    pub fn reads_env(&self, name: &str) -> bool {
        self.env.iter().any(|e| e.name == name)
    }

    /// Whether the package registers KV connector `name`.
    pub fn registers(&self, name: &str) -> bool {
        self.kv_connectors.iter().any(|c| c.name == name)
    }

    /// Whether script `file` accepts flag `flag` (`--workers`).
    pub fn script_has_flag(&self, file: &str, flag: &str) -> bool {
        self.scripts
            .get(file)
            .is_some_and(|s| s.flags.iter().any(|f| f.name == flag))
    }

    /// The CANN version of the A3 image: the version part of its base image
    /// tag (`quay.io/ascend/cann:9.0.1-a3-ubuntu22.04-py3.12` gives `9.0.1`;
    /// a build stamp such as `9.2.0_20260930220649` gives `9.2.0`).
    pub fn cann(&self) -> Option<&str> {
        let from = &self.images.get("a3")?.as_ref()?.from;
        let tag = from.rsplit_once(':')?.1;
        let version = tag.split('-').next()?;
        version.split('_').next().filter(|v| !v.is_empty())
    }
}

/// Every image's facts, index-aligned with [`IMAGES`]: the parsed table, or
/// what is wrong with it (a test requires every one to parse and to name its
/// row's release).
static RELEASES: LazyLock<Vec<Result<Release, String>>> = LazyLock::new(|| {
    IMAGES
        .iter()
        .map(|img| {
            let r: Release = serde_json::from_str(img.facts_json).map_err(|e| {
                format!(
                    "upstream/facts/vllm-ascend/{}.json does not parse: {e}",
                    img.tag.trim_start_matches('v')
                )
            })?;
            if r.package != "vllm-ascend" || format!("v{}", r.version) != img.tag {
                return Err(format!(
                    "image `{}` embeds the facts of {} {}",
                    img.tag, r.package, r.version
                ));
            }
            Ok(r)
        })
        .collect()
});

/// The facts of an image of the table.
pub fn release(img: &Image) -> Option<&'static Release> {
    let i = IMAGES.iter().position(|i| std::ptr::eq(i, img))?;
    RELEASES.get(i)?.as_ref().ok()
}

/// Every embedded table that does not parse or names the wrong release.
pub fn errors() -> Vec<&'static str> {
    RELEASES
        .iter()
        .filter_map(|r| r.as_ref().err().map(String::as_str))
        .collect()
}

/// The images (in table order) whose release reads `additional_config` key
/// `key`.
pub fn config_key_readers(key: &str) -> Vec<&'static Image> {
    IMAGES
        .iter()
        .filter(|img| release(img).is_some_and(|r| r.config_key(key).is_some()))
        .collect()
}

/// Every `additional_config` key some image of the table reads, sorted.
pub fn known_config_keys() -> Vec<&'static str> {
    let mut keys: Vec<&'static str> = RELEASES
        .iter()
        .flatten()
        .flat_map(|r| r.additional_config.iter().map(|k| k.key.as_str()))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// The images of the table as ranges of consecutive rows, for messages:
/// "v0.20.2rc1 to v0.25.1rc1", "v0.23.0rc1, v0.23.0 and v0.26.0rc1 to
/// v0.30.0rc2". Release branches make a key come and go, so a set of images
/// is not always one range.
pub fn describe(images: &[&Image]) -> String {
    let idx: Vec<usize> = images
        .iter()
        .filter_map(|img| IMAGES.iter().position(|i| std::ptr::eq(i, *img)))
        .collect();
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for i in idx {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == i => *end = i,
            _ => runs.push((i, i)),
        }
    }
    let parts: Vec<String> = runs
        .iter()
        .map(|&(a, b)| match b - a {
            0 => IMAGES[a].tag.to_owned(),
            1 => format!("{}, {}", IMAGES[a].tag, IMAGES[b].tag),
            _ => format!("{} to {}", IMAGES[a].tag, IMAGES[b].tag),
        })
        .collect();
    match parts.split_last() {
        None => "no image of the table".to_owned(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_image_embeds_its_own_release() {
        assert_eq!(errors(), Vec::<&str>::new());
        for img in &IMAGES {
            let r = release(img);
            assert!(r.is_some(), "{} has no facts", img.tag);
            assert_eq!(
                r.map(|r| format!("v{}", r.version)).as_deref(),
                Some(img.tag)
            );
        }
    }

    #[test]
    fn cann_is_the_base_image_version() {
        let v = |tag: &str| {
            crate::tables::image(tag)
                .and_then(release)
                .and_then(Release::cann)
        };
        assert_eq!(v("v0.18.0"), Some("8.5.1"));
        assert_eq!(v("v0.23.0"), Some("9.1.0"));
        assert_eq!(v("v0.24.0rc1"), Some("9.0.1"));
        assert_eq!(v("v0.30.0rc2"), Some("9.2.0"));
    }

    #[test]
    fn describe_names_runs_of_rows() {
        let imgs = |tags: &[&str]| -> Vec<&'static Image> {
            tags.iter()
                .filter_map(|t| crate::tables::image(t))
                .collect()
        };
        assert_eq!(describe(&imgs(&["v0.23.0"])), "v0.23.0");
        assert_eq!(
            describe(&imgs(&["v0.20.2rc1", "v0.21.0rc1", "v0.22.1rc1"])),
            "v0.20.2rc1 to v0.22.1rc1"
        );
        assert_eq!(
            describe(&imgs(&["v0.18.0", "v0.23.0rc1", "v0.23.0", "v0.30.0rc2"])),
            "v0.18.0, v0.23.0rc1, v0.23.0 and v0.30.0rc2"
        );
        assert_eq!(describe(&[]), "no image of the table");
    }
}
