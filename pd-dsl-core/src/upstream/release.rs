//! The vllm-ascend release facts' types (`upstream/facts/vllm-ascend/<version>.json`) and the verdicts read from them.

use super::*;

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
    /// Where the package replaces vLLM's `ParallelConfig` validator, and
    /// whether that lets PCP with DP through.
    #[serde(default)]
    pub parallel_config_patches: Vec<ParallelPatch>,
    /// What `FinegrainedTPConfig` requires of each fine-grained TP size;
    /// `None` before the class exists.
    pub finegrained_tp: Option<FinegrainedTp>,
    /// The kv connector the platform requires when a fine-grained TP size
    /// is split; `None` before the check.
    #[serde(default)]
    pub finegrained_tp_connector: Option<FinegrainedTpConnector>,
    /// The platform's refusal of a PD engine with context parallelism whose
    /// interleave size differs from its block size; `None` when it has none.
    pub cp_interleave_refusal: Option<CpInterleave>,
    /// What `_validate_eplb_config` allows per model runner; `None` before
    /// it tells the runners apart.
    pub eplb_runner: Option<EplbRunner>,
    /// What `KVPPConfig.validate` refuses; `None` before KVPP.
    #[serde(default)]
    pub kvpp: Option<KvppFact>,
    /// The models the platform starts only on the V2 model runner on some
    /// hardware (`_validate_model_runner_config`, vllm_ascend/platform.py);
    /// empty before the check.
    #[serde(default)]
    pub v2_runner_required: Vec<V2RunnerRequired>,
    /// The TP sizes Ascend Engram allows (`_validate_engram_config`,
    /// vllm_ascend/platform.py); `None` before Ascend Engram.
    #[serde(default)]
    pub engram_tp: Option<EngramTp>,
    /// How the release sizes a hybrid GQA model's attention block
    /// (`HybridAttentionMambaModelConfig.verify_and_update_config`, patched
    /// in vllm_ascend/patch/platform/patch_mamba_config.py), where it does so
    /// by the one formula `dims::gdn_attn_block` computes; `None` elsewhere
    /// (v0.30.0rc1 on). `tests/hybrid_block_oracle.rs` holds the block to
    /// the patch itself, run from each release's sdist.
    #[serde(default)]
    pub hybrid_attn_block: Option<HybridAttnBlock>,
    /// Where vLLM sizes a hybrid model's attention block instead
    /// (`NPUPlatform.update_block_size_for_backend` calls vLLM's, whose
    /// `_align_hybrid_block_size` aligns to the Ascend attention backend's
    /// smallest kernel block; v0.30.0rc1 on). `kernel_block_size` is that
    /// kernel block, `source` the call. `tests/hybrid_kv_oracle.rs` holds
    /// the block pd-dsl computes to the released code.
    #[serde(default)]
    pub hybrid_block_vllm: Option<HybridAttnBlock>,
    /// Whether the V1 model runner hands vLLM the TP size when it sizes the
    /// graphs (`_check_and_update_cudagraph_mode`); `None` without it.
    #[serde(default)]
    pub sp_graph_alignment: Option<SpGraphAlignment>,
    /// What `enable_sp()` (vllm_ascend/utils.py) reads; `None` without it.
    #[serde(default)]
    pub enable_sp: Option<EnableSp>,
    /// The platform's refusal of capture sizes none of which is a multiple
    /// of TP (`_setup_compile_backend`, `check_and_update_config` before
    /// v0.27.1rc1); `None` without it.
    #[serde(default)]
    pub tp_aligned_capture_sizes: Option<TpAlignedCaptureSizes>,
    /// The platform's default largest capture size
    /// (`apply_config_platform_defaults`); `None` without it.
    #[serde(default)]
    pub default_capture_cap: Option<super::DefaultCaptureCap>,
    /// What the platform asserts of an engine with `enable_sp()` on
    /// (`check_and_update_config`, up to v0.26.0rc1); `None` after.
    #[serde(default)]
    pub sp_asserts: Option<SpAsserts>,
    /// The stores `AscendStoreConnector` keeps a KV pool in, with the env
    /// variable each reads its per-node config path from.
    pub kv_pool_backends: Vec<PoolBackendFact>,
    /// How the release's e2e runner starts a KV pool's service; `None`
    /// before its runner has a pool.
    pub kv_pool_runner: Option<PoolRunner>,
    /// vllm-ascend's patch letting some model types through vLLM's
    /// aux-hidden-states gate; `None` without it.
    #[serde(default)]
    pub aux_hidden_states_exemption: Option<AuxHiddenStatesExemption>,
    /// The expert limit of hierarchy MC2; `None` before it.
    #[serde(default)]
    pub mc2_hierarchy_experts: Option<Mc2HierarchyExperts>,
    /// The file `--quantization ascend` needs in the weights directory;
    /// `None` where it is not read so.
    #[serde(default)]
    pub modelslim_description: Option<ModelslimDescription>,
    /// A KV store puts a hybrid model's Mamba cache in 'align' mode;
    /// `None` before it.
    #[serde(default)]
    pub kv_store_align: Option<KvStoreAlign>,
    /// How the release decides sequence-parallel MoE where `enable_sp()`
    /// returns vLLM's `use_sequence_parallel_moe`; `None` before it.
    #[serde(default)]
    pub sp_moe: Option<SpMoe>,
    /// `enable_dsa_cp()`'s refusal of DSA CP without sequence parallelism
    /// (vllm_ascend/utils.py, v0.20.2rc1 to v0.26.0rc1); `None` elsewhere.
    #[serde(default)]
    pub dsa_cp_needs_sp: Option<Cited>,
    /// What the platform does with `recompute_scheduler_enable` on a PD
    /// prefill engine (vllm_ascend/platform.py).
    #[serde(default)]
    pub recompute_on_prefill: Option<RecomputeOnPrefill>,
    /// `MooncakeConnectorV1` moves hybrid KV (`self.use_hybrid` in
    /// mooncake_connector.py, from v0.22.1rc1); `None` before.
    #[serde(default)]
    pub v1_hybrid_kv: Option<Cited>,
    /// The env variables the release moved to `additional_config` keys (the
    /// "Quick Reference" table of docs/source/user_guide/configuration/
    /// additional_config.md, from v0.20.2rc1); `None` without it.
    #[serde(default)]
    pub env_migration: Option<Vec<EnvMigration>>,
    /// The `vllm serve` flags whose argparse choices the platform hook
    /// widens (`NPUPlatform.pre_register_and_update`, vllm_ascend/platform.py):
    /// vLLM's list is not the image's there.
    #[serde(default)]
    pub parser_choices_widened: Vec<WidenedChoices>,
}

/// A flag whose choices vllm-ascend's platform hook extends.
#[derive(Debug, Deserialize)]
pub struct WidenedChoices {
    /// The long flag without `--`.
    pub flag: String,
    /// `path:line` of the lookup of the flag in the parser.
    pub source: String,
    /// The values the hook appends to vLLM's choices (argparse then takes
    /// either); `None` where the generator could not read one, and the
    /// flag's choices are then not judged.
    #[serde(default)]
    pub added: Option<Vec<String>>,
    /// Where the values are those of a `CacheConfig` field's `Literal` a
    /// platform patch widens: pydantic accepts only these when it builds the
    /// config, however many argparse took.
    #[serde(default)]
    pub field: Option<PatchedField>,
}

/// The `Literal` a vllm-ascend platform patch sets as a vLLM config field's
/// type (vllm_ascend/patch/platform/patch_kv_cache_dtype.py @v0.30.0rc1).
#[derive(Debug, Deserialize)]
pub struct PatchedField {
    /// Its values.
    pub values: Vec<String>,
    /// `path:line` of the `Literal`.
    pub source: String,
}

impl WidenedChoices {
    /// What pydantic says of `value` (argparse's word after its `type=`)
    /// when it validates the patched field: `None` when the field takes it
    /// or the widening patches no field.
    pub fn field_refusal(&self, value: &str) -> Option<String> {
        let f = self.field.as_ref()?;
        (!f.values.iter().any(|v| v == value)).then(|| {
            format!(
                "Input should be {} [type=literal_error, input_value='{value}'] (the Literal vllm-ascend's platform patch sets, {})",
                f.values
                    .iter()
                    .map(|v| format!("'{v}'"))
                    .collect::<Vec<_>>()
                    .join(", "),
                f.source
            )
        })
    }
}

/// What argparse takes beyond vLLM's own choices for an option the image's
/// platform hook widens as `widened` (`Release::widens_choices`): nothing
/// (`Some(&[])`) where it does not widen them, the values it appends
/// (`Some(added)`) where it does, unknown (`None`) where those were not
/// read. The rule `serve_flag_accepted` and the stand-in `vllm` ask this.
pub fn extra_choices(widened: Option<&WidenedChoices>) -> Option<&[String]> {
    match widened {
        None => Some(&[]),
        Some(w) => w.added.as_deref(),
    }
}

/// One row of the release's env-to-key migration table.
#[derive(Debug, Deserialize)]
pub struct EnvMigration {
    /// The environment variable.
    pub env: String,
    /// The `additional_config` key that replaces it.
    pub key: String,
    /// `path:line` of the row.
    pub source: String,
}

/// A fact that is only where upstream states it.
#[derive(Debug, Deserialize)]
pub struct Cited {
    /// `path:line` in the sdist.
    pub source: String,
}

/// The platform's handling of the recompute scheduler on a PD prefill
/// engine.
#[derive(Debug, Deserialize)]
pub struct RecomputeOnPrefill {
    /// `ignored` (turned off with a warning) or `runs`.
    pub prefill: String,
    /// `path:line` of the deciding `if`.
    pub source: String,
}

/// The terms of `ParallelConfig.use_sequence_parallel_moe`, vLLM's
/// (vllm/config/parallel.py) or vllm-ascend's redefinition of it
/// (vllm_ascend/patch/platform/patch_parallel_config.py): on when the
/// all2all backend is one of `backends` and every term of `requires` holds.
#[derive(Debug, Deserialize)]
pub struct SpMoeProperty {
    /// The all2all backends that carry sequence-parallel MoE, sorted.
    pub backends: Vec<String>,
    /// `ParallelConfig` terms ANDed with it: a boolean field
    /// (`enable_expert_parallel`) or `<field> > N`
    /// (`tensor_parallel_size > 1`), sorted.
    pub requires: Vec<String>,
    /// `path:line` of the property.
    pub source: String,
}

/// How vllm-ascend decides sequence-parallel MoE from v0.27.1rc1, where
/// `enable_sp()` returns vLLM's `use_sequence_parallel_moe`.
#[derive(Debug, Deserialize)]
pub struct SpMoe {
    /// The platform patch's redefinition of the property; `None` where
    /// vLLM's own stands.
    pub property: Option<SpMoeProperty>,
    /// `AscendConfig`'s steering of the all2all backend; `None` without it.
    pub switch: Option<SpMoeSwitch>,
}

/// `AscendConfig` (vllm_ascend/ascend_config.py) sets the all2all backend
/// to `off_backend` unless one of `any_of` holds together with every term
/// of `all_of`.
#[derive(Debug, Deserialize)]
pub struct SpMoeSwitch {
    /// `additional_config.<key>` (read as a pydantic bool) or `env.<NAME>`
    /// (true when its stripped, lower-cased value is one of `env_true`).
    pub any_of: Vec<String>,
    /// Property-style terms ANDed with them (`enable_expert_parallel`).
    pub all_of: Vec<String>,
    /// The env values that count as on.
    pub env_true: Vec<String>,
    /// The backend it switches to, which turns the property off.
    pub off_backend: String,
    /// `path:line` of the `if`.
    pub source: String,
}

/// Hierarchy MC2's expert limit (`AscendConfig._validate_mc2_comm_alg`,
/// vllm_ascend/ascend_config.py, v0.27.1rc1 on): with
/// `additional_config.mc2_comm_alg` equal to `alg` (or a true `aliases`
/// key), the model's experts plus `eplb_config.num_redundant_experts` when
/// `eplb_config.<redundant_when>` is on must be at most `max_experts`.
#[derive(Debug, Deserialize)]
pub struct Mc2HierarchyExperts {
    /// The `mc2_comm_alg` value checked (`hierarchy`).
    pub alg: String,
    /// Boolean keys that set `mc2_comm_alg` to `alg`.
    pub aliases: Vec<String>,
    /// The largest expert count allowed.
    pub max_experts: u64,
    /// The `eplb_config` switch under which redundant experts count.
    pub redundant_when: String,
    /// `path:line` of the raising `if`.
    pub source: String,
}

impl Mc2HierarchyExperts {
    /// Whether `experts` routed plus `redundant` redundant experts are more
    /// than hierarchy MC2 takes (the rule `mc2_hierarchy_experts`; the
    /// preflight's restatement is held to this in `crate::preflight`'s tests).
    pub fn exceeds(&self, experts: u64, redundant: u64) -> bool {
        experts.saturating_add(redundant) > self.max_experts
    }
}

/// vllm-ascend's patch of `HybridAttentionMambaModelConfig.
/// verify_and_update_config` (vllm_ascend/patch/platform/
/// patch_mamba_config.py, v0.21.0rc1 on): an engine whose KV connector is
/// `connector` (or a MultiConnector child of it, as a layout's KV pool
/// runs), without `--disable-hybrid-kv-cache-manager` and a speculative
/// method of `exempt_methods`, runs a hybrid model's Mamba cache in 'align'
/// mode where it would be 'none' (prefix caching off).
#[derive(Debug, Deserialize)]
pub struct KvStoreAlign {
    /// `AscendStoreConnector`.
    pub connector: String,
    /// Speculative methods that leave the mode as vLLM set it
    /// (`extract_hidden_states` from v0.22.1rc1).
    pub exempt_methods: Vec<String>,
    /// `path:line` of `cache_config.mamba_cache_mode = "align"`.
    pub source: String,
}

impl KvStoreAlign {
    /// Whether an engine with a KV store, speculative `method` and the
    /// hybrid KV cache manager as typed has its Mamba cache forced into
    /// 'align' mode.
    pub fn forces(&self, method: Option<&str>, hybrid_manager_disabled: bool) -> bool {
        !hybrid_manager_disabled
            && !method.is_some_and(|m| self.exempt_methods.iter().any(|e| e == m))
    }
}

/// The ModelSlim description file (`ModelSlimConfig.maybe_update_config`,
/// vllm_ascend/quantization/[configs/]modelslim_config.py): with
/// `--quantization <method>` the weights directory must hold `file`, else
/// vllm-ascend raises ValueError ("ModelSlim Quantization Config Not Found")
/// at start.
#[derive(Debug, Deserialize, Serialize)]
pub struct ModelslimDescription {
    /// The `--quantization` value (`ascend`).
    pub method: String,
    /// `quant_model_description.json`.
    pub file: String,
    /// `path:line` of the `raise`.
    pub source: String,
}

/// vllm-ascend's wrapper of vLLM's `SpeculativeConfig._verify_args`
/// (vllm_ascend/patch/platform/patch_minimax_m2_config.py, v0.18.0 to
/// v0.22.1rc1): vLLM's aux-hidden-states refusal is let through for these
/// methods when the target's text `model_type`, lowercased, contains
/// `model_type_contains`.
#[derive(Debug, Deserialize)]
pub struct AuxHiddenStatesExemption {
    /// The methods the wrapper lets through.
    pub methods: Vec<String>,
    /// The substring of the lowercased model type (`minimax`).
    pub model_type_contains: String,
    /// `path:line` of the model-type test.
    pub source: String,
}

impl AuxHiddenStatesExemption {
    /// Whether the wrapper lets `method` on a target of `model_type` start.
    pub fn lets_through(&self, method: &str, model_type: &str) -> bool {
        self.methods.iter().any(|m| m == method)
            && model_type
                .to_lowercase()
                .contains(&self.model_type_contains)
    }
}

/// A refusal of the V1 model runner: these architectures start only on the
/// V2 runner on a device whose hardware profile has `capability`.
#[derive(Debug, Deserialize)]
pub struct V2RunnerRequired {
    /// The architectures the `if` tests (`model_config.architecture in (...)`).
    pub architectures: Vec<String>,
    /// The hardware capability it tests (`HardwareCapability.X`).
    pub capability: String,
    /// The device types whose profile has the capability (`A2`, `A3`, `A5`;
    /// vllm_ascend/device/hardware_profile.py).
    pub devices: Vec<String>,
    /// `path:line` of the `if`.
    pub source: String,
}

/// The TP sizes Ascend Engram allows a model with Engram tables.
#[derive(Debug, Deserialize)]
pub struct EngramTp {
    /// The architecture Engram requires (`DeepseekV41ForCausalLM`).
    pub architecture: String,
    /// The allowed tensor-parallel sizes.
    pub tp_sizes: Vec<u32>,
    /// `path:line` of the refusing `if`.
    pub source: String,
}

/// The platform's refusal of a split fine-grained TP size without a kv
/// connector (`PreemptOffloadConnector`, via `MultiConnector`).
#[derive(Debug, Deserialize)]
pub struct FinegrainedTpConnector {
    /// The connector class the `kv_transfer_config` must hold.
    pub connector: String,
    /// The `finegrained_tp_config` keys whose size above 1 needs it.
    pub sizes: Vec<String>,
    /// `path:line` of the refusing `if`.
    pub source: String,
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

/// vllm-ascend's attention block for hybrid models: `kernel_block_size x
/// cdiv(largest Mamba state page, kernel_block_size x per-token K page)`,
/// raised to when the block is unset or smaller.
#[derive(Debug, Deserialize)]
pub struct HybridAttnBlock {
    /// `kernel_block_size`.
    pub kernel_block_size: u64,
    /// `path:line` of the block's assignment.
    pub source: String,
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
    /// The V2 runner's fields that need a vLLM flag when set off their
    /// default.
    #[serde(default)]
    pub v2_fields_need_flag: Vec<FieldNeedsFlag>,
    /// `path:line` in the sdist.
    pub source: String,
}

/// vllm-ascend refuses, with TP above 1 and a cudagraph mode, capture sizes
/// none of which is a multiple of TP when one of `requires` holds
/// (`_setup_compile_backend`, vllm_ascend/platform.py; up to v0.26.0rc1 an
/// `assert` in `check_and_update_config`, under `enable_sp` alone).
#[derive(Debug, Deserialize)]
pub struct TpAlignedCaptureSizes {
    /// What requires TP-aligned sizes: `enable_sp` (the call),
    /// `enable_shared_expert_dp`, `enable_dsa_cp` (`AscendConfig`'s).
    pub requires: Vec<String>,
    /// `path:line` of the raising `if`.
    pub source: String,
}

/// What vllm-ascend's `enable_sp()` (vllm_ascend/utils.py), the sequence
/// parallelism its model runner hands vLLM's graph sizing, reads:
/// `additional_config.enable_flashcomm1`, `env.<NAME>`, `shared_expert_dp`
/// (forced on by `enable_shared_expert_dp`), or
/// `parallel_config.use_sequence_parallel_moe` (vLLM's property).
#[derive(Debug, Deserialize)]
pub struct EnableSp {
    /// What it reads, sorted.
    pub reads: Vec<String>,
    /// `path:line` of the function.
    pub source: String,
}

/// What `check_and_update_config` (vllm_ascend/platform.py) asserts under
/// `if enable_sp(vllm_config):` (up to v0.26.0rc1), each `path:line` of
/// its `assert`, `None` without it.
#[derive(Debug, Deserialize)]
pub struct SpAsserts {
    /// TP above 1.
    pub tp_above_1: Option<String>,
    /// Expert parallelism on a MoE model.
    pub expert_parallel: Option<String>,
}

/// How the V1 model runner (vllm_ascend/worker/model_runner_v1.py
/// `_check_and_update_cudagraph_mode`) hands vLLM the TP size when it sizes
/// the capture sizes for speculative decoding.
#[derive(Debug, Deserialize)]
pub struct SpGraphAlignment {
    /// When the runner hands vLLM the TP size.
    pub passes_tp: PassesTp,
    /// `path:line` in the sdist.
    pub source: String,
}

/// When vllm-ascend's V1 runner hands vLLM the TP size for graph sizing
/// under sequence parallelism (the generated `sp_graph_alignment`); a value
/// the generator writes that this does not name fails the facts' parsing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PassesTp {
    /// Always (up to v0.26.0rc1).
    Always,
    /// Unless the typed capture sizes are all multiples of lcm(step, TP)
    /// (v0.27.1rc1, v0.28.0rc1).
    UnlessSizesAligned,
    /// Never: it pre-aligns the sizes to lcm(step, TP) and hands vLLM TP 1
    /// (from v0.29.0rc1).
    Never,
}

/// An `eplb_config` field that vllm-ascend refuses off its default without
/// a vLLM flag (`_validate_eplb_config`: `field != default and not
/// parallel_config.<flag's field>`).
#[derive(Debug, Deserialize)]
pub struct FieldNeedsFlag {
    /// The `eplb_config` field.
    pub field: String,
    /// Its default, which needs no flag.
    pub default: serde_json::Value,
    /// The vLLM option (`--enable-eplb`).
    pub flag: String,
    /// `path:line` of the raising `if`.
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

/// A replacement of vLLM's `ParallelConfig._validate_parallel_config` by
/// the package (`parallel_config_patches`).
#[derive(Debug, Deserialize)]
pub struct ParallelPatch {
    /// It applies only under this vLLM version (`vllm_version_is`).
    pub only_vllm: String,
    /// `always`, `when` (under [`ParallelPatch::needs`]) or `never`.
    pub lifts_pcp_with_dp: String,
    /// The guarding test, as written, for `when`.
    pub when: Option<String>,
    /// What `when` needs of the layout: `v2_runner`, `dcp1`.
    pub needs: Vec<String>,
    /// `path:line` in the sdist.
    pub source: String,
}

impl ParallelPatch {
    /// Whether this patch lets PCP with DP start under vLLM `vllm`, with the
    /// V2 runner on or off and decode context parallel size `dcp`.
    pub fn lifts(&self, vllm: &str, v2_runner: bool, dcp: u64) -> bool {
        self.only_vllm == vllm
            && match self.lifts_pcp_with_dp.as_str() {
                "always" => true,
                "when" => self.needs.iter().all(|n| match n.as_str() {
                    "v2_runner" => v2_runner,
                    "dcp1" => dcp == 1,
                    _ => false,
                }),
                _ => false,
            }
    }
}

/// Why an image refuses prefill context parallelism at start-up, if it
/// does: the one verdict the rule `prefill_context_parallel_supported` and
/// the rehearsal's stand-in `vllm` both read.
#[derive(Debug)]
pub enum PcpVerdict<'a> {
    /// vllm-ascend refuses PCP together with DP > 1.
    WithDp(&'a PcpRefusal),
    /// vLLM's `ParallelConfig` refuses PCP together with DP > 1, and no
    /// patch of the package lifts that for this layout.
    VllmWithDp {
        /// `path:line` of vLLM's refusal.
        source: &'a str,
    },
    /// vllm-ascend refuses PCP on the V1 model runner, which runs unless
    /// `VLLM_USE_V2_MODEL_RUNNER` is set true.
    V1Runner(&'a PcpRefusal),
    /// The V2 runner is on, and vLLM's V2 runner refuses PCP (vllm-ascend
    /// does not take that out).
    V2Runner {
        /// vllm-ascend's V1-runner refusal, where it has one (from
        /// v0.25.1rc1): then no PCP starts on the image; without it (up to
        /// v0.24.0rc1) PCP starts on the V1 runner.
        v1: Option<&'a PcpRefusal>,
        /// vLLM's V2-runner refusals.
        runner: &'a V2Runner,
    },
}

/// The feature string vLLM's V2 runner refuses PCP under.
pub const PCP_FEATURE: &str = "prefill context parallelism";

/// The verdict of release `rel` (shipping vLLM `vllm`) on a rank of PCP
/// `pcp` and DCP `dcp` in an engine of DP `dp`, with the V2 model runner on
/// or off.
pub fn pcp_verdict<'a>(
    rel: &'a Release,
    vllm: &str,
    dp: u32,
    pcp: u32,
    dcp: u64,
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
    // vLLM 0.26.0-0.29.0: `if pcp > 1 and self.data_parallel_size > 1:
    // raise` (vllm/config/parallel.py `_validate_parallel_config`), which
    // vllm-ascend 0.29.0rc1 replaces (patch/platform/patch_parallel_config.py).
    if dp > 1
        && let Some(source) = self::vllm(vllm)
            .ok()
            .and_then(|v| v.context_parallel.as_ref())
            .and_then(|c| c.pcp_with_dp.as_deref())
        && !rel
            .parallel_config_patches
            .iter()
            .any(|p| p.lifts(vllm, v2_runner, dcp))
    {
        return Some(PcpVerdict::VllmWithDp { source });
    }
    let v1 = rel.pcp_refusal("use_v2_model_runner");
    if !v2_runner {
        return v1.map(PcpVerdict::V1Runner);
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
