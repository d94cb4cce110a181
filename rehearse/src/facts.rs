//! The generated upstream fact tables (`upstream/facts/`, written by
//! `scripts/upstream/facts.py` from the release source distributions;
//! schema in that script), embedded at compile time by `build.rs` and parsed
//! once. The rehearsal takes from them what a real node's image would give:
//! `vllm serve`'s flags at the image's vLLM version
//! ([`crate::serve_flags`]), the tools on a non-interactive shell's `PATH`,
//! the image's `ENV`, the `set_env.sh` files a shell must source, and how
//! the `vllm_ascend` package carries its version.

use crate::serve_flags::Kind;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::LazyLock;

mod files {
    include!(concat!(env!("OUT_DIR"), "/facts_files.rs"));
}

/// `upstream/facts/vllm/<version>.json`.
#[derive(Clone, Debug, Deserialize)]
pub struct VllmFacts {
    /// `vllm`.
    pub package: String,
    /// The vLLM version.
    pub version: String,
    /// Every option `vllm serve` accepts at that version, sorted by name.
    pub serve_flags: Vec<ServeFlag>,
}

/// One `vllm serve` option.
#[derive(Clone, Debug, Deserialize)]
pub struct ServeFlag {
    /// The long flag without `--`, with `-`.
    pub name: String,
    /// How it consumes argv.
    pub kind: Kind,
    /// Other spellings (`-tp`, or a second long name).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// `--no-NAME` is accepted.
    #[serde(default)]
    pub negatable: bool,
    /// Where vLLM defines it (path inside the sdist).
    pub source: String,
}

/// `upstream/facts/vllm-ascend/<version>.json` (the fields the rehearsal uses).
#[derive(Clone, Debug, Deserialize)]
pub struct AscendFacts {
    /// `vllm-ascend`.
    pub package: String,
    /// The release, without `v`.
    pub version: String,
    /// The vLLM its images ship.
    pub vllm: VllmRef,
    /// Where the package's version lives.
    pub version_module: VersionModule,
    /// `a2`, `a3`, `950dt` → the image built for it (`None`: no Dockerfile).
    #[serde(default)]
    pub images: BTreeMap<String, Option<ImageFacts>>,
}

/// `vllm` of [`AscendFacts`].
#[derive(Clone, Debug, Deserialize)]
pub struct VllmRef {
    /// The vLLM version.
    pub version: String,
    /// The Dockerfile that pins it.
    pub source: String,
}

/// `version_module` of [`AscendFacts`].
#[derive(Clone, Debug, Deserialize)]
pub struct VersionModule {
    /// `vllm_ascend._version`.
    pub module: String,
    /// `__version__`.
    pub attribute: String,
    /// Whether the package's `__init__.py` defines the attribute itself.
    pub init_defines_version: bool,
    /// The module's path in the sdist.
    pub source: String,
}

/// One image of a release.
#[derive(Clone, Debug, Deserialize)]
pub struct ImageFacts {
    /// The Dockerfile it is built from.
    pub dockerfile: String,
    /// Its base image.
    #[serde(default)]
    pub from: String,
    /// Tool name → found on a non-interactive shell's `PATH` (`None`: not
    /// decided by the image; `npu-smi` and `hccn_tool` come from the host's
    /// driver, mounted at run time).
    #[serde(default)]
    pub tools: BTreeMap<String, Option<bool>>,
    /// `ENV` of the final stage.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Lines appended to `~/.bashrc` (a non-interactive shell reads none).
    #[serde(default)]
    pub bashrc: Vec<String>,
    /// The `set_env.sh` files its RUN steps source.
    #[serde(default)]
    pub set_env_scripts: Vec<String>,
    /// `WORKDIR`.
    #[serde(default)]
    pub workdir: Option<String>,
}

fn parse_all<T: for<'de> Deserialize<'de>>(
    dir: &str,
    files: &'static [(&'static str, &'static str)],
    version: impl Fn(&T) -> &str,
) -> BTreeMap<&'static str, Result<T, String>> {
    files
        .iter()
        .map(|(stem, text)| {
            let parsed = serde_json::from_str::<T>(text)
                .map_err(|e| format!("upstream/facts/{dir}/{stem}.json: {e}"))
                .and_then(|t| {
                    if version(&t) == *stem {
                        Ok(t)
                    } else {
                        Err(format!(
                            "upstream/facts/{dir}/{stem}.json: found version `{}`, expected `{stem}` (the file name)",
                            version(&t)
                        ))
                    }
                });
            (*stem, parsed)
        })
        .collect()
}

static VLLM: LazyLock<BTreeMap<&'static str, Result<VllmFacts, String>>> =
    LazyLock::new(|| parse_all("vllm", files::VLLM, |f: &VllmFacts| &f.version));

static ASCEND: LazyLock<BTreeMap<&'static str, Result<AscendFacts, String>>> =
    LazyLock::new(|| {
        parse_all("vllm-ascend", files::VLLM_ASCEND, |f: &AscendFacts| {
            &f.version
        })
    });

/// Every vLLM version with an embedded table.
pub fn vllm_versions() -> Vec<&'static str> {
    VLLM.keys().copied().collect()
}

/// Every vllm-ascend release with an embedded table (without `v`).
pub fn ascend_versions() -> Vec<&'static str> {
    ASCEND.keys().copied().collect()
}

/// The flag table of vLLM `version`.
pub fn vllm(version: &str) -> Result<&'static VllmFacts, String> {
    match VLLM.get(version) {
        Some(Ok(f)) => Ok(f),
        Some(Err(e)) => Err(e.clone()),
        None => Err(format!(
            "no `upstream/facts/vllm/{version}.json` in this build (tables for: {}); run `python3 scripts/upstream/facts.py` and rebuild",
            list(&vllm_versions())
        )),
    }
}

/// The table of vllm-ascend `release` (with or without `v`); `Ok(None)`
/// when this build has none for it.
pub fn ascend(release: &str) -> Result<Option<&'static AscendFacts>, String> {
    let v = release.strip_prefix('v').unwrap_or(release);
    match ASCEND.get(v) {
        Some(Ok(f)) => Ok(Some(f)),
        Some(Err(e)) => Err(e.clone()),
        None => Ok(None),
    }
}

/// The table of vllm-ascend `release`, which must exist.
pub fn ascend_required(release: &str) -> Result<&'static AscendFacts, String> {
    let v = release.strip_prefix('v').unwrap_or(release);
    ascend(release)?.ok_or_else(|| {
        format!(
            "no `upstream/facts/vllm-ascend/{v}.json` in this build (tables for: {}); run `python3 scripts/upstream/facts.py` and rebuild",
            list(&ascend_versions())
        )
    })
}

/// The vLLM version image `tag` ships: its release table's `vllm.version`
/// when this build has one, else the image table's `vllm`.
pub fn vllm_version_of_image(tag: &str) -> Result<String, String> {
    if let Some(f) = ascend(tag)? {
        return Ok(f.vllm.version.clone());
    }
    pd_dsl::tables::image(tag)
        .map(|i| i.vllm().to_owned())
        .ok_or_else(|| {
            let known: Vec<&str> = pd_dsl::tables::IMAGES.iter().map(|i| i.tag).collect();
            format!(
                "image `{tag}` is not in the image table (expected one of {})",
                known.join(", ")
            )
        })
}

/// The image key of a hardware (`a2`, `a3`, `950dt`), as the release
/// tables name them.
pub fn image_key(hw: &pd_dsl::tables::Hardware) -> &'static str {
    use pd_dsl::tables::HardwareFamily;
    match hw.family {
        HardwareFamily::Ascend950 => "950dt",
        HardwareFamily::Atlas800 if hw.npus_per_node == 16 => "a3",
        HardwareFamily::Atlas800 => "a2",
    }
}

fn list(v: &[&str]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}
