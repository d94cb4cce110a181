//! Facts generated from upstream's released source: one table per
//! vllm-ascend release, `upstream/facts/vllm-ascend/<version>.json`, written
//! by `scripts/upstream/facts.py` from the release's sdist (the whole
//! repository at its tag) and checked for freshness against the corpus. The
//! schema is the one `facts.py` documents; only the parts the rules read are
//! typed here (serde ignores the rest).
//!
//! Each row of [`crate::tables::IMAGES`] embeds its release's table with
//! `include_str!`, so a row without facts does not compile. The vLLM tables,
//! `upstream/facts/vllm/<version>.json` (`vllm serve`'s flags and the
//! speculative methods per vLLM), are embedded by `build.rs`, every file of
//! the directory. This is the one loader: the rules, the documents, the
//! `catalog upstream diff` command and the rehearsal's stand-in `vllm` read
//! the facts through it. The tables are parsed once per process
//! ([`LazyLock`]).

use crate::tables::{IMAGES, Image};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
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
    /// Where the package keeps its version.
    pub version_module: VersionModule,
    /// The image contract per hardware (`a2`, `a3`, `950dt`); `None` when the
    /// release has no Dockerfile for it.
    pub images: BTreeMap<String, Option<ImageFact>>,
    /// The tag suffix of each image the release's image workflow pushes.
    pub image_suffixes: ImageSuffixes,
    /// The format of the release's multi-node e2e configs.
    pub e2e: E2eFact,
    /// The platform's start-up refusals of prefill context parallelism.
    pub pcp_refusals: Vec<PcpRefusal>,
    /// The V2-runner refusals of vLLM the package's patch takes out again.
    pub v2_runner_allows: Vec<V2Allow>,
    /// What `FinegrainedTPConfig` requires of each fine-grained TP size;
    /// `None` before the class exists.
    pub finegrained_tp: Option<FinegrainedTp>,
    /// The platform's refusal of a PD engine with context parallelism whose
    /// interleave size differs from its block size; `None` when it has none.
    pub cp_interleave_refusal: Option<CpInterleave>,
    /// What `_validate_eplb_config` allows per model runner; `None` before
    /// it tells the runners apart.
    pub eplb_runner: Option<EplbRunner>,
    /// What `KVPPConfig.validate` refuses; `None` before KVPP.
    #[serde(default)]
    pub kvpp: Option<KvppFact>,
    /// The stores `AscendStoreConnector` keeps a KV pool in, with the env
    /// variable each reads its per-node config path from.
    pub kv_pool_backends: Vec<PoolBackendFact>,
    /// How the release's e2e runner starts a KV pool's service; `None`
    /// before its runner has a pool.
    pub kv_pool_runner: Option<PoolRunner>,
}

/// KV layer parallelism's preconditions (vllm_ascend/ascend_config.py
/// `KVPPConfig.validate`), in force when `enable_kvpp` and TP x PCP above 1.
#[derive(Debug, Deserialize)]
pub struct KvppFact {
    /// The PD connector KVPP needs (`MooncakeConnectorV2`).
    pub connector: String,
    /// A `kv_consumer` (decode) engine is refused.
    pub decode_refused: bool,
    /// Graph modes it runs under (`eager`, `piecewise`).
    pub graphs: Vec<String>,
    /// Only (non-hybrid) MLA models.
    pub mla_only: bool,
    /// DCP above 1 is refused.
    pub dcp_refused: bool,
    /// Speculative methods allowed (after MTP types become `mtp`).
    pub methods: Vec<String>,
    /// Where it is checked.
    pub source: String,
}

/// A KV pool's service as upstream's e2e runner starts it on node 0
/// (tests/e2e/.../external_dp/.../runtime.py `_start_service`).
#[derive(Debug, Deserialize)]
pub struct PoolRunner {
    /// memcache's MetaService: `python3 -c PROGRAM`.
    pub memcache_argv: Vec<serde_json::Value>,
    /// The env variables naming the MetaService's config file.
    pub memcache_env: Vec<String>,
    /// `mooncake_master` and its flags; `null` where the pool's port goes.
    #[serde(default)]
    pub mooncake_argv: Vec<serde_json::Value>,
    /// Directories prepended to `LD_LIBRARY_PATH` for `mooncake_master`.
    #[serde(default)]
    pub mooncake_library_paths: Vec<String>,
    /// The runner file.
    pub source: String,
}

/// The pool service of `img`'s release, else of the newest release whose
/// runner has one (the service belongs to the store's library, which
/// upstream installs the same way in every image), with that release.
pub fn pool_runner(img: &Image) -> Option<(&'static str, &'static PoolRunner)> {
    if let Some(r) = release(img).and_then(|r| r.kv_pool_runner.as_ref().map(|p| (r, p))) {
        return Some((r.0.version.as_str(), r.1));
    }
    RELEASES
        .iter()
        .rev()
        .filter_map(|r| r.as_ref().ok())
        .find_map(|r| r.kv_pool_runner.as_ref().map(|p| (r.version.as_str(), p)))
}

/// One `AscendStoreConnector` backend (vllm_ascend/distributed/kv_transfer/
/// kv_pool/ascend_store/backend/<name>_backend.py).
#[derive(Debug, Deserialize)]
pub struct PoolBackendFact {
    /// `backend` value: `memcache`, `mooncake`, `yuanrong`.
    pub name: String,
    /// The env variable holding the per-node config file's path, when the
    /// backend reads one (`MMC_LOCAL_CONFIG_PATH`).
    pub config_env: Option<String>,
    /// Where it is defined.
    pub source: String,
}

/// `additional_config.eplb_config` per model runner (vllm_ascend/platform.py
/// `_validate_eplb_config`).
#[derive(Debug, Deserialize)]
pub struct EplbRunner {
    /// The fields the V2 runner accepts; any other is refused there.
    pub v2_fields: Vec<String>,
    /// Env switches refused (set true) on the V2 runner.
    pub v2_refused_env: Vec<String>,
    /// The fields refused on the V1 runner.
    pub v1_refused_fields: Vec<String>,
    /// `path:line` in the sdist.
    pub source: String,
}

/// `cp_kv_cache_interleave_size != block_size` refused on a PD engine with
/// context parallelism (vllm_ascend/platform.py `check_and_update_config`).
#[derive(Debug, Deserialize)]
pub struct CpInterleave {
    /// Which CP sizes above 1 turn it on: `prefill_context_parallel_size`,
    /// `decode_context_parallel_size`.
    pub reads: Vec<String>,
    /// `path:line` in the sdist.
    pub source: String,
}

/// `additional_config.finegrained_tp_config`'s start-up checks
/// (`FinegrainedTPConfig` of vllm_ascend/ascend_config.py).
#[derive(Debug, Deserialize)]
pub struct FinegrainedTp {
    /// Per size key (`oproj_tensor_parallel_size`), what a value above
    /// `above` requires.
    pub sizes: BTreeMap<String, FinegrainedNeeds>,
    /// The sizes that must divide `data_parallel_size` when above 0.
    pub divide_dp: Vec<String>,
    /// The sizes turned off with a warning when the largest graph capture
    /// size does not cover the largest step.
    pub disabled_below_capture: Vec<String>,
    /// The module, in the sdist.
    pub source: String,
}

/// What one fine-grained TP size above `above` requires: `tp1`
/// (`tensor_parallel_size == 1`), `graph` (not eager), `decode` (a
/// kv_consumer engine), `no_pcp` (PCP 1).
#[derive(Debug, Deserialize)]
pub struct FinegrainedNeeds {
    /// The bound the size's block tests (`> 0`, from v0.30 `> 1`).
    pub above: u64,
    /// The requirements.
    pub needs: Vec<String>,
    /// `path:line` of the block.
    pub source: String,
}

/// A raising `if` of `_validate_parallel_config` that tests
/// `prefill_context_parallel_size > ...`.
#[derive(Debug, Deserialize)]
pub struct PcpRefusal {
    /// What else the condition reads: `data_parallel_size` (refused with
    /// DP), `use_v2_model_runner` (refused on the V1 model runner).
    pub with: Vec<String>,
    /// The condition as written.
    pub condition: String,
    /// `path:line` in the sdist.
    pub source: String,
}

/// A feature of vLLM's V2-runner refusals the package allows again.
#[derive(Debug, Deserialize)]
pub struct V2Allow {
    /// The feature string (`prefill context parallelism`).
    pub name: String,
    /// Only under this vLLM version (`vllm_version_is(...)`), if guarded.
    pub only_vllm: Option<String>,
    /// `path:line` in the sdist.
    pub source: String,
}

/// Why an image refuses prefill context parallelism at start-up, if it
/// does: the one verdict the rule `prefill_context_parallel_supported` and
/// the rehearsal's stand-in `vllm` both read.
#[derive(Debug)]
pub enum PcpVerdict<'a> {
    /// vllm-ascend refuses PCP together with DP > 1.
    WithDp(&'a PcpRefusal),
    /// vllm-ascend refuses PCP on the V1 model runner, which runs unless
    /// `VLLM_USE_V2_MODEL_RUNNER` is set true.
    V1Runner(&'a PcpRefusal),
    /// The V2 runner is on, and vLLM's V2 runner refuses PCP (vllm-ascend
    /// does not take that out): no PCP starts on the image.
    V2Runner {
        /// vllm-ascend's V1-runner refusal.
        v1: &'a PcpRefusal,
        /// vLLM's V2-runner refusals.
        runner: &'a V2Runner,
    },
}

/// The feature string vLLM's V2 runner refuses PCP under.
pub const PCP_FEATURE: &str = "prefill context parallelism";

/// The verdict of release `rel` (shipping vLLM `vllm`) on a rank of PCP
/// `pcp` in an engine of DP `dp`, with the V2 model runner on or off.
pub fn pcp_verdict<'a>(
    rel: &'a Release,
    vllm: &str,
    dp: u32,
    pcp: u32,
    v2_runner: bool,
) -> Option<PcpVerdict<'a>> {
    if pcp <= 1 {
        return None;
    }
    if dp > 1
        && let Some(r) = rel.pcp_refusal("data_parallel_size")
    {
        return Some(PcpVerdict::WithDp(r));
    }
    let v1 = rel.pcp_refusal("use_v2_model_runner")?;
    if !v2_runner {
        return Some(PcpVerdict::V1Runner(v1));
    }
    let runner = self::vllm(vllm).ok()?.v2_model_runner.as_ref()?;
    (runner.unsupported.iter().any(|u| u == PCP_FEATURE)
        && rel.v2_allows(PCP_FEATURE, vllm).is_none())
    .then_some(PcpVerdict::V2Runner { v1, runner })
}

impl Release {
    /// The refusal of PCP whose condition also reads `what`.
    pub fn pcp_refusal(&self, what: &str) -> Option<&PcpRefusal> {
        self.pcp_refusals
            .iter()
            .find(|r| r.with.iter().any(|w| w == what))
    }

    /// Whether the package takes `feature` out of vLLM `vllm`'s V2-runner
    /// refusals.
    pub fn v2_allows(&self, feature: &str, vllm: &str) -> Option<&V2Allow> {
        self.v2_runner_allows
            .iter()
            .find(|a| a.name == feature && a.only_vllm.as_deref().is_none_or(|v| v == vllm))
    }
}

/// `version_module` of a release.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
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

/// `image_suffixes` of a release: per hardware key, the suffix of the pushed
/// image's tag (`""`, `"-a3"`, `"-a5"`), `None` when the workflow pushes no
/// image for it.
#[derive(Debug, Deserialize)]
pub struct ImageSuffixes {
    /// The workflow (`.github/workflows/schedule_image_build_and_push.yaml`).
    pub source: String,
    /// Atlas 800 A2.
    pub a2: Option<String>,
    /// Atlas 800 A3.
    pub a3: Option<String>,
    /// Ascend 950DT.
    #[serde(rename = "950dt")]
    pub a950dt: Option<String>,
}

impl ImageSuffixes {
    /// The suffix of hardware key `key` (`a2`, `a3`, `950dt`).
    pub fn get(&self, key: &str) -> Option<&str> {
        match key {
            "a2" => self.a2.as_deref(),
            "a3" => self.a3.as_deref(),
            "950dt" => self.a950dt.as_deref(),
            _ => None,
        }
    }
}

/// `e2e` of a release.
#[derive(Debug, Deserialize)]
pub struct E2eFact {
    /// Directories holding multi-node configs.
    pub config_dirs: Vec<String>,
    /// How many multi-node configs.
    pub configs: u64,
    /// Every top-level key of those configs.
    pub root_keys: Vec<String>,
    /// The runner's files.
    pub runner: Vec<String>,
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
#[derive(Debug, Deserialize, Serialize, PartialEq)]
pub struct FlagFact {
    /// `--port`.
    pub name: String,
    /// Its default, as written (`"8000"`), if any.
    pub default: Option<String>,
    /// argparse `nargs`, if any.
    pub nargs: Option<String>,
    /// argparse `type` (`int`), if any.
    #[serde(rename = "type")]
    pub ty: Option<String>,
}

/// One Dockerfile of the release.
#[derive(Debug, Deserialize)]
pub struct ImageFact {
    /// `Dockerfile.a3`.
    pub dockerfile: String,
    /// The base image of the final stage.
    pub from: String,
    /// Packages its `apt-get install` lines install.
    pub apt_packages: Vec<String>,
    /// Tool name → found on a non-interactive shell's `PATH` (`None`: not
    /// decided by the image; `npu-smi` and `hccn_tool` come from the host's
    /// driver, mounted at run time).
    pub tools: BTreeMap<String, Option<bool>>,
    /// `ENV` of the final stage.
    pub env: BTreeMap<String, String>,
    /// Lines appended to `~/.bashrc` (a non-interactive shell reads none).
    pub bashrc: Vec<String>,
    /// The `set_env.sh` files its RUN steps source.
    pub set_env_scripts: Vec<String>,
    /// `WORKDIR`.
    pub workdir: Option<String>,
    /// `CMD`.
    pub cmd: Option<Vec<String>>,
    /// The Mooncake its `ARG MOONCAKE_TAG` names, without `v`.
    pub mooncake: Option<String>,
}

// ---------------------------------------------------------------------------
// vLLM: `upstream/facts/vllm/<version>.json`, every file embedded by build.rs
// ---------------------------------------------------------------------------

mod files {
    include!(concat!(env!("OUT_DIR"), "/facts_files.rs"));
}

/// How a `vllm serve` option consumes argv (the table's `kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FlagKind {
    /// Takes one value.
    Value,
    /// Takes one or more values (`nargs='+'`/`'*'`).
    Many,
    /// Takes a JSON value; dotted sub-keys allowed.
    Json,
    /// Takes no value (`store_true`, `store_false`, `BooleanOptionalAction`).
    Switch,
}

/// One `vllm serve` option.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct ServeFlag {
    /// The long flag without `--`, with `-`.
    pub name: String,
    /// How it consumes argv.
    pub kind: FlagKind,
    /// Other spellings (`-tp`, or a second long name), sorted.
    pub aliases: Vec<String>,
    /// `--no-NAME` is accepted.
    pub negatable: bool,
    /// Where vLLM defines it (path inside the sdist).
    pub source: String,
}

/// One vLLM release's facts.
#[derive(Debug, Deserialize)]
pub struct VllmRelease {
    /// `vllm`.
    pub package: String,
    /// The vLLM version.
    pub version: String,
    /// Every option `vllm serve` accepts at that version, sorted by name.
    pub serve_flags: Vec<ServeFlag>,
    /// Every `speculative_config.method` `SpeculativeConfig` accepts, sorted.
    pub speculative_methods: Vec<SpeculativeMethodFact>,
    /// What the V2 model runner refuses; `None` before it.
    pub v2_model_runner: Option<V2Runner>,
}

/// One `speculative_config.method` of a vLLM table.
#[derive(Debug, Deserialize)]
pub struct SpeculativeMethodFact {
    /// The method.
    pub name: String,
    /// Whether `SpeculativeConfig.__post_init__` refuses it without a draft
    /// `model` (vllm/config/speculative.py: only `mtp` and the MTP model
    /// types, `dspark`, `ngram`, `ngram_gpu`, `suffix` and
    /// `extract_hidden_states` get one of their own).
    pub needs_model: bool,
    /// Path in the sdist.
    pub source: String,
}

/// `v2_model_runner` of a vLLM table.
#[derive(Debug, Deserialize)]
pub struct V2Runner {
    /// The features `_get_v2_model_runner_unsupported_features` appends.
    pub unsupported: Vec<String>,
    /// `DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES`.
    pub default_architectures: Vec<String>,
    /// Path in the sdist.
    pub source: String,
}

impl VllmRelease {
    /// The option spelled `--name` (without `--`; `_` read as `-`), by its
    /// long name or a long alias.
    pub fn flag(&self, name: &str) -> Option<&ServeFlag> {
        let name = name.replace('_', "-");
        self.serve_flags.iter().find(|f| {
            f.name == name
                || f.aliases
                    .iter()
                    .any(|a| a.strip_prefix("--") == Some(name.as_str()))
        })
    }

    /// Whether `SpeculativeConfig` accepts method `m`.
    pub fn accepts_speculative_method(&self, m: &str) -> bool {
        self.speculative_methods.iter().any(|x| x.name == m)
    }
}

static VLLM: LazyLock<BTreeMap<&'static str, Result<VllmRelease, String>>> = LazyLock::new(|| {
    files::VLLM
        .iter()
        .map(|(stem, text)| {
            let parsed = serde_json::from_str::<VllmRelease>(text)
                .map_err(|e| format!("upstream/facts/vllm/{stem}.json does not parse: {e}"))
                .and_then(|t| {
                    if t.package == "vllm" && t.version == *stem {
                        Ok(t)
                    } else {
                        Err(format!(
                            "upstream/facts/vllm/{stem}.json: found {} {}, expected vllm {stem} (the file name)",
                            t.package, t.version
                        ))
                    }
                });
            (*stem, parsed)
        })
        .collect()
});

/// Every vLLM version with an embedded table, in file-name order.
pub fn vllm_versions() -> Vec<&'static str> {
    VLLM.keys().copied().collect()
}

/// The facts of vLLM `version`.
pub fn vllm(version: &str) -> Result<&'static VllmRelease, String> {
    match VLLM.get(version) {
        Some(Ok(f)) => Ok(f),
        Some(Err(e)) => Err(e.clone()),
        None => Err(format!(
            "no `upstream/facts/vllm/{version}.json` in this build (tables for: {}); pin it with \
             `scripts/upstream/corpus.py pin vllm=={version}`, run `python3 scripts/upstream/facts.py write` and rebuild",
            vllm_versions().join(", ")
        )),
    }
}

/// The long name (without `--`) of a short `vllm serve` alias such as
/// `-tp` or `-pcp`, from the newest vLLM table that has it (vLLM's own
/// argument definitions, vllm/engine/arg_utils.py).
pub fn long_name_of_alias(alias: &str) -> Option<&'static str> {
    VLLM.values()
        .rev()
        .filter_map(|r| r.as_ref().ok())
        .find_map(|r| {
            r.serve_flags
                .iter()
                .find(|f| f.aliases.iter().any(|a| a == alias))
                .map(|f| f.name.as_str())
        })
}

/// The vLLM facts of the vLLM an image ships.
pub fn vllm_of(img: &Image) -> Result<&'static VllmRelease, String> {
    let v = img.vllm();
    vllm(v).map_err(|e| format!("image `{}` ships vLLM {v}: {e}", img.tag))
}

/// The image key of a hardware (`a2`, `a3`, `950dt`), as the release tables
/// name them.
pub fn image_key(hw: &crate::tables::Hardware) -> &'static str {
    use crate::tables::HardwareFamily;
    match hw.family {
        HardwareFamily::Ascend950 => "950dt",
        HardwareFamily::Atlas800 if hw.npus_per_node == 16 => "a3",
        HardwareFamily::Atlas800 => "a2",
    }
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

/// What changed from release `a` to release `b`, one line per change, in
/// the format of `scripts/upstream/facts.py diff` (a title line `what:`
/// followed by `  + x` / `  - x` lines, or `what: OLD -> NEW` with JSON
/// values): the vLLM and its `vllm serve` flags and speculative methods,
/// the `additional_config` keys and sub-keys, the env reads, the KV
/// connectors, each image's contract and tag suffix, the proxies' and
/// launcher's flags, and the e2e config format.
pub fn diff_releases(a: &'static Release, b: &'static Release) -> Vec<String> {
    let mut out = vec![format!("vllm-ascend {} -> {}", a.version, b.version)];
    scalar(&mut out, "vllm version", &a.vllm.version, &b.vllm.version);
    scalar(
        &mut out,
        "version module",
        &a.version_module,
        &b.version_module,
    );
    match (vllm(&a.vllm.version), vllm(&b.vllm.version)) {
        (Ok(va), Ok(vb)) => {
            let fa: BTreeMap<&str, &ServeFlag> = va
                .serve_flags
                .iter()
                .map(|f| (f.name.as_str(), f))
                .collect();
            let fb: BTreeMap<&str, &ServeFlag> = vb
                .serve_flags
                .iter()
                .map(|f| (f.name.as_str(), f))
                .collect();
            set_diff(
                &mut out,
                &format!("serve flags (vllm {} -> {})", va.version, vb.version),
                fa.keys().copied(),
                fb.keys().copied(),
            );
            let shape = |f: &ServeFlag| serde_json::json!({"kind": f.kind, "aliases": f.aliases, "negatable": f.negatable});
            let changed: Vec<String> = fa
                .iter()
                .filter_map(|(n, x)| {
                    let y = fb.get(n)?;
                    (shape(x) != shape(y)).then(|| format!("  ~ {n}: {} -> {}", shape(x), shape(y)))
                })
                .collect();
            if !changed.is_empty() {
                out.push("serve flags changed:".into());
                out.extend(changed);
            }
            set_diff(
                &mut out,
                &format!(
                    "speculative methods (vllm {} -> {})",
                    va.version, vb.version
                ),
                va.speculative_methods.iter().map(|m| m.name.as_str()),
                vb.speculative_methods.iter().map(|m| m.name.as_str()),
            );
        }
        (ra, rb) => {
            let missing: Vec<&str> = [
                (&a.vllm.version, ra.is_err()),
                (&b.vllm.version, rb.is_err()),
            ]
            .into_iter()
            .filter(|(_, bad)| *bad)
            .map(|(v, _)| v.as_str())
            .collect();
            out.push(format!(
                "serve flags: no vllm table for {}",
                missing.join(", ")
            ));
        }
    }
    let ka: BTreeMap<&str, &ConfigKeyFact> = a
        .additional_config
        .iter()
        .map(|k| (k.key.as_str(), k))
        .collect();
    let kb: BTreeMap<&str, &ConfigKeyFact> = b
        .additional_config
        .iter()
        .map(|k| (k.key.as_str(), k))
        .collect();
    set_diff(
        &mut out,
        "additional_config keys",
        ka.keys().copied(),
        kb.keys().copied(),
    );
    for (k, x) in &ka {
        let Some(y) = kb.get(k) else { continue };
        let subs = |c: &'static ConfigKeyFact| c.sub_keys.iter().flatten().map(String::as_str);
        set_diff(
            &mut out,
            &format!("additional_config.{k} sub-keys"),
            subs(x),
            subs(y),
        );
        scalar(
            &mut out,
            &format!("additional_config.{k} strict"),
            &x.strict,
            &y.strict,
        );
    }
    let names = |v: &'static [Named]| v.iter().map(|e| e.name.as_str());
    set_diff(&mut out, "env reads", names(&a.env), names(&b.env));
    set_diff(
        &mut out,
        "kv connectors",
        names(&a.kv_connectors),
        names(&b.kv_connectors),
    );
    let keys: BTreeSet<&str> = a
        .images
        .keys()
        .chain(b.images.keys())
        .map(String::as_str)
        .collect();
    for key in keys {
        let (ia, ib) = (
            a.images.get(key).and_then(Option::as_ref),
            b.images.get(key).and_then(Option::as_ref),
        );
        let (ia, ib) = match (ia, ib) {
            (Some(x), Some(y)) => (x, y),
            (None, Some(y)) => {
                out.push(format!("image {key}: added ({})", y.dockerfile));
                continue;
            }
            (Some(x), None) => {
                out.push(format!("image {key}: removed ({})", x.dockerfile));
                continue;
            }
            (None, None) => continue,
        };
        scalar(&mut out, &format!("image {key} FROM"), &ia.from, &ib.from);
        let strs = |v: &'static [String]| v.iter().map(String::as_str);
        set_diff(
            &mut out,
            &format!("image {key} apt packages"),
            strs(&ia.apt_packages),
            strs(&ib.apt_packages),
        );
        for (t, has) in &ia.tools {
            let theirs = ib.tools.get(t).copied().flatten();
            if *has != theirs {
                out.push(format!(
                    "image {key} tool {t}: {} -> {}",
                    json(has),
                    json(&theirs)
                ));
            }
        }
        let env = |m: &'static BTreeMap<String, String>| m.iter().map(|(k, v)| format!("{k}={v}"));
        set_diff(
            &mut out,
            &format!("image {key} ENV"),
            env(&ia.env),
            env(&ib.env),
        );
        set_diff(
            &mut out,
            &format!("image {key} ~/.bashrc lines"),
            strs(&ia.bashrc),
            strs(&ib.bashrc),
        );
        set_diff(
            &mut out,
            &format!("image {key} set_env scripts"),
            strs(&ia.set_env_scripts),
            strs(&ib.set_env_scripts),
        );
        scalar(
            &mut out,
            &format!("image {key} WORKDIR"),
            &ia.workdir,
            &ib.workdir,
        );
        scalar(&mut out, &format!("image {key} CMD"), &ia.cmd, &ib.cmd);
        scalar(
            &mut out,
            &format!("image {key} mooncake"),
            &ia.mooncake,
            &ib.mooncake,
        );
    }
    for key in ["950dt", "a2", "a3"] {
        scalar(
            &mut out,
            &format!("image {key} tag suffix"),
            &a.image_suffixes.get(key),
            &b.image_suffixes.get(key),
        );
    }
    let scripts: BTreeSet<&str> = a
        .scripts
        .keys()
        .chain(b.scripts.keys())
        .map(String::as_str)
        .collect();
    for name in scripts {
        let (sa, sb) = match (a.scripts.get(name), b.scripts.get(name)) {
            (Some(x), Some(y)) => (x, y),
            (None, Some(_)) => {
                out.push(format!("script {name}: added"));
                continue;
            }
            (Some(_), None) => {
                out.push(format!("script {name}: removed"));
                continue;
            }
            (None, None) => continue,
        };
        let fa: BTreeMap<&str, &FlagFact> = sa.flags.iter().map(|f| (f.name.as_str(), f)).collect();
        let fb: BTreeMap<&str, &FlagFact> = sb.flags.iter().map(|f| (f.name.as_str(), f)).collect();
        set_diff(
            &mut out,
            &format!("script {name} flags"),
            fa.keys().copied(),
            fb.keys().copied(),
        );
        for (n, x) in &fa {
            if let Some(y) = fb.get(n)
                && x != y
            {
                out.push(format!("script {name} {n}: {} -> {}", json(x), json(y)));
            }
        }
    }
    let (ea, eb) = (&a.e2e, &b.e2e);
    let strs = |v: &'static [String]| v.iter().map(String::as_str);
    set_diff(
        &mut out,
        "e2e config dirs",
        strs(&ea.config_dirs),
        strs(&eb.config_dirs),
    );
    scalar(&mut out, "e2e multi-node configs", &ea.configs, &eb.configs);
    set_diff(
        &mut out,
        "e2e config root keys",
        strs(&ea.root_keys),
        strs(&eb.root_keys),
    );
    set_diff(
        &mut out,
        "e2e runner files",
        strs(&ea.runner),
        strs(&eb.runner),
    );
    if out.len() == 1 {
        out.push("no change".into());
    }
    out
}

fn json<T: Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

fn scalar<T: Serialize + PartialEq + ?Sized>(out: &mut Vec<String>, title: &str, a: &T, b: &T) {
    if a != b {
        out.push(format!("{title}: {} -> {}", json(a), json(b)));
    }
}

fn set_diff<S: AsRef<str> + Ord>(
    out: &mut Vec<String>,
    title: &str,
    a: impl Iterator<Item = S>,
    b: impl Iterator<Item = S>,
) {
    let a: BTreeSet<S> = a.collect();
    let b: BTreeSet<S> = b.collect();
    let added: Vec<&S> = b.difference(&a).collect();
    let removed: Vec<&S> = a.difference(&b).collect();
    if added.is_empty() && removed.is_empty() {
        return;
    }
    out.push(format!("{title}:"));
    out.extend(added.iter().map(|x| format!("  + {}", x.as_ref())));
    out.extend(removed.iter().map(|x| format!("  - {}", x.as_ref())));
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
