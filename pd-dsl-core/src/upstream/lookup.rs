//! The loaded tables: a release per image, the lookups the rules and documents make, and [`describe`].

use super::*;

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

    /// The platform hook's widening of `vllm serve` flag `name`'s choices
    /// (without `--`), if it widens them: vLLM's list is then not the image's.
    pub fn widens_choices(&self, name: &str) -> Option<&WidenedChoices> {
        self.parser_choices_widened.iter().find(|w| w.flag == name)
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
pub(super) static RELEASES: LazyLock<Vec<Result<Release, String>>> = LazyLock::new(|| {
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

/// The environment variables moved to `additional_config` keys (#9064),
/// as (key, env): every row of any release's migration table (the facts'
/// `env_migration`; releases drop rows as they drop the variables), once,
/// in table order.
pub fn env_migration() -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&'static str, &'static str)> = Vec::new();
    for r in RELEASES.iter().flatten() {
        for m in r.env_migration.iter().flatten() {
            let pair = (m.key.as_str(), m.env.as_str());
            if !out.contains(&pair) {
                out.push(pair);
            }
        }
    }
    out
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

/// The facts of vllm-ascend release `version` (`v0.23.0` or `0.23.0`), a row
/// of the image table.
pub fn release_of(version: &str) -> Result<&'static Release, String> {
    let tag = format!("v{}", version.strip_prefix('v').unwrap_or(version));
    let img = crate::tables::image(&tag).ok_or_else(|| {
        let known: Vec<&str> = IMAGES.iter().map(|i| i.tag).collect();
        format!(
            "found release `{version}`, expected an image of the table ({}): only their facts are embedded",
            known.join(", ")
        )
    })?;
    release(img)
        .ok_or_else(|| format!("the facts of `{tag}` do not parse: {}", errors().join("; ")))
}
