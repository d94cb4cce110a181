//! vLLM's facts (`upstream/facts/vllm/<version>.json`, every file embedded by build.rs): `vllm serve`'s flags and speculative methods.

use super::*;

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
    /// A valued option that may also be given bare (`nargs="?"` with a
    /// `const`: vLLM's `bool | str | None` fields such as `--hf-token`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub value_optional: bool,
    /// For a JSON option whose `type=` helper keeps a word as text unless
    /// it matches this regex (vllm/engine/arg_utils.py `union_dict_and_str`,
    /// read from its body): the pattern. See [`ServeFlag::is_json_word`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_unless: Option<String>,
    /// Where vLLM defines it (path inside the sdist).
    pub source: String,
    /// How argparse converts each word given to a valued option (`type=`).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub value_type: Option<ValueType>,
    /// Argparse `choices`, where the option has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choices: Option<Choices>,
    /// The top-level keys a JSON option's dataclass takes where it forbids
    /// any other (`parse_dataclass`: `TypeAdapter(cls).validate_json`,
    /// vllm/engine/arg_utils.py `_compute_kwargs`; vLLM's `@config` merges
    /// `ConfigDict(extra="forbid")`, vllm/config/utils.py); `None` where
    /// other keys may be taken or the class was not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<JsonKeys>,
}

/// The `type=` of a valued `vllm serve` option: how argparse converts a
/// word before it stores it and looks it up among the choices
/// (vllm/engine/arg_utils.py `_compute_kwargs`, `literal_to_kwargs`,
/// `optional_type`), or why that is not known (a vLLM helper such as
/// `human_readable_int`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum ValueType {
    /// A known conversion.
    Read {
        /// The conversion.
        convert: Convert,
        /// `optional_type` wraps it: `""` and `"None"` become None.
        optional: bool,
    },
    /// Not known: the words are not judged.
    Unread {
        /// What could not be read.
        unread: String,
    },
}

/// The `choices` of a `vllm serve` option, or why they cannot be read from
/// the source (a list built at run time).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum Choices {
    /// The values, in vLLM's order: strings or integers.
    Read {
        /// The values.
        values: Vec<serde_json::Value>,
    },
    /// Not readable statically: not judged.
    Unread {
        /// What could not be read.
        unread: String,
    },
}

/// How argparse's `type=` turns a word into an option's value.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Convert {
    /// The word itself.
    Str,
    /// Python's `int(word)`.
    Int,
    /// Python's `float(word)`.
    Float,
    /// `lambda s: s.lower().replace("-", "_")`.
    LowerUnderscore,
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
    /// The speculative methods the V2 model runner refuses; `None` before
    /// it.
    #[serde(default)]
    pub v2_speculative_methods: Option<V2Speculative>,
    /// The speculative methods `--async-scheduling` starts with; `None`
    /// where vLLM has no such check.
    #[serde(default)]
    pub async_speculative_methods: Option<AsyncSpeculative>,
    /// `ParallelConfig`'s refusals of context-parallel sizes.
    #[serde(default)]
    pub context_parallel: Option<ContextParallel>,
    /// The batch slots the speculative methods reserve for drafting.
    #[serde(default)]
    pub drafting_slots: Option<DraftingSlots>,
    /// The refusal of a decode step and TP that are not multiples of one
    /// another under sequence parallelism; `None` without it.
    #[serde(default)]
    pub spec_decode_sp_alignment: Option<SpecDecodeSpAlignment>,
    /// The refusal of capture sizes none of which, rounded up to the decode
    /// step, fits under the largest; `None` without it (same shape: its
    /// `source` is the raising `if`).
    #[serde(default)]
    pub spec_decode_rounding: Option<SpecDecodeSpAlignment>,
    /// How vLLM lists the capture sizes when none is typed.
    pub default_capture_grid: Option<super::DefaultCaptureGrid>,
    /// The refusal of methods reading the target's auxiliary hidden states
    /// on a model type outside vLLM's list; `None` without it (vLLM 0.22.1
    /// on checks the model class's interface at load instead).
    #[serde(default)]
    pub aux_hidden_states: Option<AuxHiddenStates>,
    /// What turns sequence-parallel MoE on; `None` without the property.
    #[serde(default)]
    pub sequence_parallel_moe: Option<SequenceParallelMoe>,
    /// Mamba cache 'align' mode and what `VllmConfig` asserts in it; `None`
    /// without it.
    #[serde(default)]
    pub mamba_align: Option<MambaAlign>,
    /// How this vLLM reads a checkpoint's `config.json` where a start-up
    /// check depends on it (generated preflight scripts apply it to each
    /// node's weights; `templates/py/checkpoint_config.py` in `pd-dsl`).
    pub checkpoint_reads: CheckpointReads,
    /// What the one-request KV check counts for a cache in several groups
    /// (vllm/v1/core/kv_cache_utils.py).
    pub kv_memory_check: KvMemoryCheck,
    /// Where a full graph on a model with Mamba layers refuses to start
    /// when `max_num_seqs` exceeds the KV cache's blocks
    /// (`CompilationConfig.resolve_cudagraph_mode_and_sizes`); `None`
    /// before vLLM 0.20.
    #[serde(default)]
    pub mamba_blocks_check: Option<MambaBlocksCheck>,
}

/// [`VllmRelease::mamba_blocks_check`].
#[derive(Debug, Deserialize, Serialize)]
pub struct MambaBlocksCheck {
    /// `path:line` of the `raise`.
    pub source: String,
}

/// What vLLM's one-request KV check (`_check_enough_kv_cache_memory` in
/// `get_kv_cache_configs`) counts when the cache is in several groups
/// (`_max_memory_usage_bytes_from_groups`), and what it compares with.
#[derive(Debug, Deserialize, Serialize)]
pub struct KvMemoryCheck {
    /// Whose blocks a request needs: the first group's only, or every
    /// group's.
    pub blocks_per_request: BlocksPerRequest,
    /// The need is compared with the available memory less one block of
    /// the shared pool (vLLM's null block).
    pub reserves_pool_block: bool,
    /// `path:line` of each.
    pub source: String,
}

/// [`KvMemoryCheck::blocks_per_request`].
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BlocksPerRequest {
    /// `cdiv(first group's spec max usage, page)` (vLLM 0.18).
    FirstGroup,
    /// The sum of `cdiv(spec max usage, page)` over the groups.
    EveryGroup,
}

/// What a vLLM reads of a checkpoint's `config.json` for the derived
/// context length and the routed-expert count (scripts/upstream/
/// facts_vllm_checkpoint.py reads each from the release's source).
#[derive(Debug, Deserialize, Serialize, PartialEq, Eq)]
pub struct CheckpointReads {
    /// `possible_keys` of `derive_max_model_len_and_key`: the smallest
    /// present is the unscaled length.
    pub max_len_keys: Vec<String>,
    /// RoPE types `_get_and_verify_max_len` does not scale by their factor.
    pub unscaled_rope_types: Vec<String>,
    /// YaRN scales `original_max_position_embeddings` (vLLM up to 0.29),
    /// not the key's length.
    pub yarn_from_original: bool,
    /// `num_expert_names` of `get_num_experts`, first present wins.
    pub expert_keys: Vec<String>,
    /// `path:line` of `_get_and_verify_max_len` and of the key list.
    pub max_len_source: String,
    /// `path:line` of the expert key list.
    pub experts_source: String,
}

/// vLLM's Mamba cache 'align' mode: a hybrid model runs in it with prefix
/// caching on unless its class supports Mamba prefix caching
/// (`MambaModelConfig.verify_and_update_config`, vllm/model_executor/models/
/// config.py @0.22.1 L350), and `VllmConfig.validate_block_size` asserts
/// at start, in EngineCore (vllm/config/vllm.py @0.22.1 L2101).
#[derive(Debug, Deserialize)]
pub struct MambaAlign {
    /// `path:line` of the prefix-caching `if` that sets 'align'.
    pub prefix_caching: String,
    /// The model classes vLLM sizes as hybrid (`IsHybrid` and its
    /// subclasses): `MambaModelConfig` runs over them.
    pub hybrid: Vec<String>,
    /// The model classes supporting Mamba prefix caching, which run in
    /// 'all' mode instead.
    pub classes: Vec<String>,
    /// `path:line` of `assert block_size <= max_num_batched_tokens`.
    pub block_within_batch: Option<String>,
    /// `path:line` of `assert not envs.VLLM_USE_V2_MODEL_RUNNER` (vLLM
    /// 0.22.1 to 0.24.0).
    pub v2_runner: Option<String>,
    /// `path:line` of the `if ... == "align":`.
    pub source: String,
}

impl MambaAlign {
    /// The flags that change how a hybrid model's Mamba cache mode or its
    /// pages come out, so that the rule `mamba_align_block_within_batch` and
    /// the stand-in `vllm` leave [`MambaAlign::block_refusal`] to vLLM.
    pub const UNJUDGED_FLAGS: [&'static str; 6] = [
        "--mamba-cache-mode",
        "--mamba-ssm-cache-dtype",
        "--mamba-cache-dtype",
        "--kv-cache-dtype",
        "--dtype",
        "--no-enable-chunked-prefill",
    ];

    /// Whether vLLM sizes model class `architecture` as hybrid (attention
    /// beside Mamba or linear-attention layers: `ModelConfig.is_hybrid`, the
    /// class implementing `IsHybrid`).
    pub fn is_hybrid(&self, architecture: &str) -> bool {
        self.hybrid.iter().any(|c| c == architecture)
    }

    /// Whether an engine of model class `architecture` with prefix caching
    /// on runs its Mamba cache in 'align' mode: a hybrid class without Mamba
    /// prefix caching.
    pub fn aligns(&self, architecture: &str) -> bool {
        self.is_hybrid(architecture) && !self.classes.iter().any(|c| c == architecture)
    }

    /// `path:line` of the assert that refuses an engine of class
    /// `architecture` in 'align' mode ([`MambaAlign::in_align`]) with the
    /// V2 runner on (`v2_runner`), where it does (vLLM 0.22.1 to 0.24.0):
    /// the rule `mamba_align_v2_runner` and the rehearsal's stand-in `vllm`
    /// ask this.
    pub fn v2_runner_refusal(
        &self,
        architecture: &str,
        prefix_caching: Option<bool>,
        store_forced: bool,
        v2_runner: bool,
    ) -> Option<&str> {
        let src = self.v2_runner.as_deref()?;
        (v2_runner && self.in_align(architecture, prefix_caching, store_forced)).then_some(src)
    }

    /// Whether an engine of class `architecture` runs its Mamba cache in
    /// 'align' mode: prefix caching typed on for a hybrid class without
    /// Mamba prefix caching (vLLM's `MambaModelConfig`), or, with prefix
    /// caching off, a KV store forcing it (`store_forced`: vllm-ascend's
    /// `KvStoreAlign::forces` for an engine whose layout runs a KV pool).
    /// Hybrid models default prefix caching off
    /// (`is_prefix_caching_supported`), so only a typed `true` turns it on.
    pub fn in_align(
        &self,
        architecture: &str,
        prefix_caching: Option<bool>,
        store_forced: bool,
    ) -> bool {
        if prefix_caching == Some(true) {
            self.aligns(architecture)
        } else {
            store_forced && self.is_hybrid(architecture)
        }
    }

    /// `path:line` of the assert that refuses an engine of class
    /// `architecture` in 'align' mode ([`MambaAlign::in_align`]) whose
    /// attention `block` exceeds `max_num_batched_tokens`
    /// (`block_within_batch`, vLLM 0.18.0 to 0.26.0): the rule
    /// `mamba_align_block_within_batch` and the rehearsal's stand-in `vllm`
    /// ask this.
    pub fn block_refusal(
        &self,
        architecture: &str,
        prefix_caching: Option<bool>,
        store_forced: bool,
        block: u64,
        max_num_batched_tokens: u64,
    ) -> Option<&str> {
        let src = self.block_within_batch.as_deref()?;
        (self.in_align(architecture, prefix_caching, store_forced)
            && block > max_num_batched_tokens)
            .then_some(src)
    }
}

/// How vLLM reads a boolean env variable such as `VLLM_USE_V2_MODEL_RUNNER`
/// (vllm/envs.py `maybe_convert_bool`: `bool(int(value))`): `Some(true)`
/// for a non-zero integer, `Some(false)` for zero, `None` for a word
/// `int()` refuses (vLLM raises reading it).
pub fn maybe_convert_bool(value: &str) -> Option<bool> {
    value.trim().parse::<i64>().ok().map(|n| n != 0)
}

/// vLLM's `ParallelConfig.use_sequence_parallel_moe` (vllm/config/
/// parallel.py @0.27.1 L673, @0.30.0 L715) with the `all2all_backend` field
/// it tests.
#[derive(Debug, Deserialize)]
pub struct SequenceParallelMoe {
    /// The property's terms.
    #[serde(flatten)]
    pub property: SpMoeProperty,
    /// `all2all_backend`'s default (`--all2all-backend` unset).
    pub default: String,
    /// Backends `ParallelConfig` swaps for another at start, each to what it
    /// becomes (`pplx` and `naive` to `allgather_reducescatter` from 0.26.0).
    pub replaced: BTreeMap<String, String>,
}

/// vLLM's gate on the speculative methods that read the target's auxiliary
/// hidden states (`SpeculativeConfig._verify_args`, vllm/config/
/// speculative.py @0.18.0 L794, @0.19.1 L811, @0.20.2 L921): ValueError
/// "<method> is only supported for [...] models" when no entry of
/// `model_types` is a substring of the target's text `model_type`.
#[derive(Debug, Deserialize)]
pub struct AuxHiddenStates {
    /// The methods the gate tests.
    pub methods: Vec<String>,
    /// The model types it lets through, matched as substrings.
    pub model_types: Vec<String>,
    /// `path:line` of the raising `if`.
    pub source: String,
}

impl AuxHiddenStates {
    /// Whether vLLM refuses `method` on a target whose text model type is
    /// `model_type`.
    pub fn refuses(&self, method: &str, model_type: &str) -> bool {
        self.methods.iter().any(|m| m == method)
            && !self
                .model_types
                .iter()
                .any(|t| model_type.contains(t.as_str()))
    }
}

/// vLLM's refusal of full-graph capture sizes under sequence parallelism
/// when neither the decode step (`num_speculative_tokens + 1`) nor TP is a
/// multiple of the other (`CompilationConfig.adjust_cudagraph_sizes_for_spec_decode`,
/// vllm/config/compilation.py).
#[derive(Debug, Deserialize)]
pub struct SpecDecodeSpAlignment {
    /// `path:line` of the raising `if`.
    pub source: String,
    /// `path:line` of the V1 runner's call, made for a FULL decode graph.
    pub call: String,
    /// The call also needs a separate decode routine (`FULL_DECODE_ONLY`,
    /// not `FULL`).
    pub needs_separate_routine: bool,
}

impl SpecDecodeSpAlignment {
    /// Whether vLLM's V1 runner sizes the graphs for speculative decoding
    /// with `graph` (this refusal's `call`): for a FULL decode graph, which
    /// `FULL_DECODE_ONLY` always is and `FULL` only where the call needs no
    /// separate decode routine (from vLLM 0.20.2).
    pub fn reached(&self, graph: crate::spec::GraphMode) -> bool {
        use crate::spec::GraphMode;
        match graph {
            GraphMode::FullDecodeOnly => true,
            GraphMode::Full => !self.needs_separate_routine,
            GraphMode::Eager | GraphMode::Piecewise => false,
        }
    }
}

impl VllmRelease {
    /// vLLM's refusal of typed capture `sizes` all below the decode step
    /// (`tokens + 1`, or `multiple_of` above it) with graph mode `graph` on
    /// the V1 runner
    /// (`spec_decode_rounding`: it rounds each size up to the step and finds
    /// none under the largest). `None` where it does not apply: no
    /// speculative tokens, the V2 runner, a graph the call is not made for,
    /// no typed sizes, a size that holds a step, or every size above
    /// `max_num_batched_tokens` (vLLM drops those first and takes another
    /// path, `VllmConfig._set_cudagraph_sizes`). The rule
    /// `capture_sizes_cover_decode_step` and the stand-in read this.
    ///
    /// `multiple_of` is what the sizes are rounded to: the step, or with
    /// sequence parallelism the TP alignment above it
    /// ([`super::Release::decode_graph_multiple`]).
    pub fn decode_step_refusal(
        &self,
        graph: crate::spec::GraphMode,
        tokens: u64,
        sizes: &[u64],
        max_num_batched_tokens: Option<u64>,
        v2_runner: bool,
        multiple_of: u64,
    ) -> Option<&SpecDecodeSpAlignment> {
        let refusal = self.spec_decode_rounding.as_ref()?;
        let step = tokens.saturating_add(1);
        let (largest, smallest) = (sizes.iter().max()?, sizes.iter().min()?);
        let applies = refusal.reached(graph)
            && tokens > 0
            && !v2_runner
            && *largest < multiple_of.max(step)
            && max_num_batched_tokens.is_none_or(|m| m >= *smallest);
        applies.then_some(refusal)
    }
}

/// The batch slots vLLM reserves for drafting
/// (`SpeculativeConfig.max_num_new_slots_for_drafting`,
/// vllm/config/speculative.py), which `VllmConfig._set_max_num_scheduled_tokens`
/// (vllm/config/vllm.py) takes out of `max_num_batched_tokens`.
#[derive(Debug, Deserialize)]
pub struct DraftingSlots {
    /// The reserve is per running sequence: times `max_num_seqs` (before
    /// vLLM 0.28.0).
    pub per_seq: bool,
    /// The methods with a reserve.
    pub slots: Vec<MethodSlots>,
    /// `path:line` of the refusing `if`; `None` where only a typed
    /// `max_num_scheduled_tokens` is compared with the reserve.
    pub source: Option<String>,
}

/// One method's reserve per request: `per_token` x `num_speculative_tokens`
/// + `constant`.
#[derive(Debug, Deserialize)]
pub struct MethodSlots {
    /// The speculative method.
    pub method: String,
    /// Slots per speculative token.
    pub per_token: i64,
    /// Slots besides.
    pub constant: i64,
}

/// The start-up refusals of context-parallel sizes in vLLM's
/// `ParallelConfig._validate_parallel_config` (vllm/config/parallel.py),
/// each `path:line` of its raising `if`.
#[derive(Debug, Deserialize)]
pub struct ContextParallel {
    /// `tp_size % dcp_size != 0` raises.
    pub tp_divisible_by_dcp: String,
    /// That check applies only without PCP (`if pcp == 1`, vLLM 0.26.0+).
    pub only_without_pcp: bool,
    /// With PCP, `dcp not in (1, pcp, tp * pcp)` raises.
    pub dcp_sizes_with_pcp: Option<String>,
    /// `pcp > 1 and dp > 1` raises.
    pub pcp_with_dp: Option<String>,
}

/// The speculative methods vLLM runs with async scheduling
/// (`VllmConfig.__post_init__`, vllm/config/vllm.py); any other refuses to
/// start.
#[derive(Debug, Deserialize)]
pub struct AsyncSpeculative {
    /// The methods, after vLLM rewrites `*_mtp` to `mtp` (the MTP model
    /// types are listed too).
    pub methods: Vec<String>,
    /// `path:line` of the refusing `if`.
    pub source: String,
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

/// The speculative methods vLLM's V2 model runner refuses
/// (`_get_v2_model_runner_unsupported_features`, vllm/config/vllm.py; in
/// `_validate_v2_model_runner` at vLLM 0.20.2): with
/// `VLLM_USE_V2_MODEL_RUNNER` set true, `VllmConfig` raises at start.
#[derive(Debug, Deserialize)]
pub struct V2Speculative {
    /// The `SpeculativeConfig` methods refused (an MTP model type is read as
    /// `mtp`, which vLLM rewrites it to), sorted.
    pub refused: Vec<String>,
    /// What the runner appends to its refusal for each refused method, in
    /// vLLM's words (`speculative method 'suffix'`, `ngram/ngram_gpu
    /// speculative decoding`).
    pub features: std::collections::BTreeMap<String, String>,
    /// `path:line` of the method test.
    pub source: String,
}

/// A JSON option's dataclass and the keys it takes ([`ServeFlag::keys`]).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct JsonKeys {
    /// The dataclass.
    pub class: String,
    /// Its fields (and the aliases a `Field` gives one), sorted.
    pub fields: Vec<String>,
    /// `path:line` of the class.
    pub source: String,
}

impl JsonKeys {
    /// The top-level key a dotted sub-key path (`k.j` of `--x.k.j`, `k+` of
    /// `--x.k+`) sets: vLLM's `FlexibleArgumentParser.parse_args`
    /// (vllm/utils/argparse_utils.py) drops one trailing `+` (a list) and
    /// nests the rest under the first segment.
    pub fn top_key(path: &str) -> &str {
        let path = path.strip_suffix('+').unwrap_or(path);
        path.split('.').next().unwrap_or(path)
    }

    /// The first of `keys` the class does not take, in pydantic's words.
    pub fn refusal<'a>(&self, mut keys: impl Iterator<Item = &'a str>) -> Option<String> {
        let bad = keys.find(|k| !self.fields.iter().any(|f| f == k))?;
        Some(format!(
            "1 validation error for {}: `{bad}`: Unexpected keyword argument [type=unexpected_keyword_argument] (it takes {}; {})",
            self.class,
            self.fields
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", "),
            self.source
        ))
    }
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
    /// The words `_validate_v2_model_runner` raises its refusal with, before
    /// the list of what it refuses (`VLLM_USE_V2_MODEL_RUNNER does not yet
    /// support:` at 0.20.2/0.22.1, `Model Runner V2 does not yet support:`
    /// from 0.23.0).
    pub refusal: String,
    /// `path:line` of that `raise`.
    pub refusal_source: String,
}

impl V2Runner {
    /// The ValueError vLLM raises for `features`, in its words.
    pub fn refusal_text<'a>(&self, features: impl IntoIterator<Item = &'a str>) -> String {
        format!(
            "{} {}",
            self.refusal,
            features.into_iter().collect::<Vec<_>>().join(", ")
        )
    }
}

/// The one `text_unless` pattern vLLM's helpers use (`union_dict_and_str`,
/// every vLLM of the images): a word that is `{...}` once trimmed.
pub const BRACED: &str = r"(?s)^\s*{.*}\s*$";

impl ServeFlag {
    /// Whether vLLM parses `word`, given to this JSON option, as JSON:
    /// always, unless the option's helper keeps a word that does not match
    /// [`ServeFlag::text_unless`] as text. `Err` for a pattern not known
    /// here (the facts test fails on one first).
    pub fn is_json_word(&self, word: &str) -> Result<bool, String> {
        match self.text_unless.as_deref() {
            None => Ok(true),
            Some(BRACED) => {
                // Python's `\s` and `.` under `(?s)`: Unicode whitespace.
                let t = word.trim();
                Ok(t.starts_with('{') && t.ends_with('}'))
            }
            Some(other) => Err(format!(
                "`--{}` keeps words that do not match `{other}` as text, a pattern pd-dsl does not read",
                self.name
            )),
        }
    }

    /// Why this JSON option's `type=` refuses `word`, when it surely does:
    /// a word vLLM parses as JSON (see [`ServeFlag::is_json_word`]) that is
    /// not JSON. Words only vLLM's leniencies read are not judged: Python's
    /// `json` takes `NaN` and `Infinity`, and from vLLM 0.20.2 the helpers
    /// expand unquoted `80m`-style numbers first
    /// (vllm/engine/arg_utils.py `_expand_json_human_readable_numbers`).
    pub fn json_word_refusal(&self, word: &str) -> Option<String> {
        if self.kind != FlagKind::Json || !self.is_json_word(word).unwrap_or(false) {
            return None;
        }
        let err = serde_json::from_str::<serde_json::Value>(word).err()?;
        let lenient = word.contains("NaN")
            || word.contains("Infinity")
            || word.as_bytes().windows(2).any(|w| {
                w[0].is_ascii_digit()
                    && matches!(w[1], b'k' | b'K' | b'm' | b'M' | b'g' | b'G' | b't' | b'T')
            });
        (!lenient).then(|| format!("`{word}` is not JSON ({err})"))
    }

    /// The first top-level key of JSON object `word` that the option's
    /// dataclass does not take ([`ServeFlag::keys`]), with what pydantic
    /// says of it at parse time (argparse's `type=` raises, so `vllm serve`
    /// exits with `argument --x: 1 validation error for X`). `None` for a
    /// word that is not a JSON object, or an option whose keys are not known.
    pub fn json_key_refusal(&self, word: &str) -> Option<String> {
        let keys = self.keys.as_ref()?;
        let serde_json::Value::Object(map) =
            serde_json::from_str::<serde_json::Value>(word).ok()?
        else {
            return None;
        };
        keys.refusal(map.keys().map(String::as_str))
    }

    /// Every spelling argparse knows the option by, and whether it negates:
    /// `--name` and each long alias, `--no-X` for each of those where the
    /// option is a `BooleanOptionalAction`, and the short aliases (`-tp`).
    pub fn spellings(&self) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        let mut longs = vec![self.name.as_str()];
        for a in &self.aliases {
            match a.strip_prefix("--") {
                Some(long) => longs.push(long),
                None if a.starts_with('-') => out.push((a.clone(), false)),
                None => longs.push(a),
            }
        }
        for long in longs {
            out.push((format!("--{long}"), false));
            if self.negatable {
                out.push((format!("--no-{long}"), true));
            }
        }
        out
    }

    /// Whether `spelling` is one of [`ServeFlag::spellings`] (without
    /// building them: the rules look up every extra flag of a layout), and
    /// whether it negates.
    pub fn spelt(&self, spelling: &str) -> Option<bool> {
        let long_is = |long: &str| {
            long == self.name
                || self.aliases.iter().any(|a| {
                    a.strip_prefix("--") == Some(long) || (!a.starts_with('-') && a == long)
                })
        };
        if let Some(long) = spelling.strip_prefix("--") {
            if long_is(long) {
                return Some(false);
            }
            return long
                .strip_prefix("no-")
                .filter(|base| self.negatable && long_is(base))
                .map(|_| true);
        }
        self.aliases
            .iter()
            .any(|a| a == spelling && a.starts_with('-'))
            .then_some(false)
    }

    /// Argparse's judgement of one word given to the option
    /// (`_get_values`: the `type=` conversion, then `_check_value` against
    /// the `choices` and the values `extra` a platform hook appended to
    /// them; not against the choices when `extra` is `None`, where what the
    /// hook appends is not known): `None` when it takes the word (or its
    /// conversion is not known), else what argparse says.
    pub fn value_refusal(&self, word: &str, extra: Option<&[String]>) -> Option<String> {
        let Some(ValueType::Read { convert, optional }) = &self.value_type else {
            return None;
        };
        let widened: Option<Vec<serde_json::Value>> = match (&self.choices, extra) {
            (Some(Choices::Read { values }), Some(extra)) => {
                let mut all = values.clone();
                for x in extra {
                    let x = serde_json::Value::String(x.clone());
                    if !all.contains(&x) {
                        all.push(x);
                    }
                }
                Some(all)
            }
            _ => None,
        };
        let choices = widened.as_ref();
        let show = |v: &serde_json::Value| match v {
            serde_json::Value::String(s) => format!("'{s}'"),
            other => other.to_string(),
        };
        let listed =
            |values: &[serde_json::Value]| values.iter().map(show).collect::<Vec<_>>().join(", ");
        if *optional && (word.is_empty() || word == "None") {
            // None: a value, but never one of the choices.
            return choices.map(|c| format!("invalid choice: None (choose from {})", listed(c)));
        }
        let value = match convert {
            Convert::Str => serde_json::Value::String(word.to_owned()),
            Convert::LowerUnderscore => {
                serde_json::Value::String(word.to_lowercase().replace('-', "_"))
            }
            Convert::Int => match python_int(word) {
                Some(n) => serde_json::Value::from(n),
                None => return Some(format!("invalid int value: '{word}'")),
            },
            Convert::Float => match python_float(word) {
                Some(x) => serde_json::Value::from(x),
                None => return Some(format!("invalid float value: '{word}'")),
            },
        };
        let c = choices?;
        (!c.contains(&value)).then(|| {
            format!(
                "invalid choice: {} (choose from {})",
                show(&value),
                listed(c)
            )
        })
    }
}

/// Python's `int(word)` on a decimal string: surrounding whitespace, a
/// sign, digits with single `_` between them.
fn python_int(word: &str) -> Option<i64> {
    let t = word.trim();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit() || c == '_') {
        return None;
    }
    let n: i64 = without_underscores(digits)?.parse().ok()?;
    Some(if neg { -n } else { n })
}

/// Python's `float(word)`: surrounding whitespace, `inf`/`nan` in any
/// case, exponents, and single `_` between digits.
fn python_float(word: &str) -> Option<f64> {
    let t = without_underscores(word.trim())?;
    if t.is_empty() {
        return None;
    }
    t.parse::<f64>().ok()
}

/// `s` without the single underscores Python allows between two digits;
/// `None` for any other underscore.
fn without_underscores(s: &str) -> Option<String> {
    let b = s.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            let before = i.checked_sub(1).and_then(|j| b.get(j));
            let after = b.get(i + 1);
            if !(before.is_some_and(u8::is_ascii_digit) && after.is_some_and(u8::is_ascii_digit)) {
                return None;
            }
        }
    }
    Some(s.replace('_', ""))
}

impl VllmRelease {
    /// The option spelled exactly `spelling` (`--max-model-len`, `--no-x`,
    /// `-tp`) and whether that spelling negates it.
    pub fn lookup(&self, spelling: &str) -> Option<(&ServeFlag, bool)> {
        self.serve_flags
            .iter()
            .find_map(|f| f.spelt(spelling).map(|neg| (f, neg)))
    }

    /// The long spellings `spelling` is a prefix of: argparse (vLLM's parser
    /// keeps `allow_abbrev`) takes a unique one for the full option.
    pub fn expansions(&self, spelling: &str) -> Vec<String> {
        if !spelling.starts_with("--") {
            return Vec::new();
        }
        let mut out: Vec<String> = self
            .serve_flags
            .iter()
            .flat_map(ServeFlag::spellings)
            .map(|(s, _)| s)
            .filter(|s| s.starts_with("--") && s.starts_with(spelling) && s != spelling)
            .collect();
        out.sort();
        out
    }

    /// Why `vllm serve` does not take `word` as the value of the option
    /// before it ([`value_word_refusal`] over this release's options).
    pub fn value_word_refusal(&self, word: &str) -> Option<String> {
        value_word_refusal(&self.serve_flags, word)
    }

    /// The long option nearest to a spelling no option has, for "did you
    /// mean" ([`crate::rules::closest`]).
    pub fn nearest(&self, spelling: &str) -> Option<&str> {
        nearest_flag(&self.serve_flags, spelling)
    }

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

/// Why vLLM refuses a decode context parallel size at start-up
/// ([`dcp_refusal`]).
#[derive(Debug, PartialEq)]
pub struct DcpRefusal {
    /// With PCP above 1 (vLLM 0.26.0+): the sizes it accepts, sorted;
    /// `None`: the size must divide TP.
    pub valid_with_pcp: Option<Vec<u64>>,
    /// `path:line` of the raising `if`.
    pub source: &'static str,
}

/// vLLM `vllm`'s verdict on DCP `dcp` in a rank of TP `tp` and PCP `pcp`
/// (`ParallelConfig._validate_parallel_config`; the facts'
/// `context_parallel`): the one verdict the rule `dcp_fits_tp` and the
/// rehearsal's stand-in `vllm` both read.
pub fn dcp_refusal(vllm: &str, tp: u64, pcp: u64, dcp: u64) -> Option<DcpRefusal> {
    let c = self::vllm(vllm).ok()?.context_parallel.as_ref()?;
    if pcp > 1 && c.only_without_pcp {
        let source = c.dcp_sizes_with_pcp.as_deref()?;
        let mut valid = vec![1, pcp, tp * pcp];
        valid.sort_unstable();
        valid.dedup();
        (!valid.contains(&dcp)).then_some(DcpRefusal {
            valid_with_pcp: Some(valid),
            source,
        })
    } else {
        (dcp == 0 || !tp.is_multiple_of(dcp)).then_some(DcpRefusal {
            valid_with_pcp: None,
            source: &c.tp_divisible_by_dcp,
        })
    }
}

/// Why vLLM refuses a batch budget that the drafting reserve uses up
/// ([`drafting_refusal`]).
#[derive(Debug, PartialEq)]
pub struct DraftingRefusal {
    /// Slots reserved per request.
    pub per_request: u64,
    /// The whole reserve: `per_request`, times `max_num_seqs` where
    /// [`DraftingSlots::per_seq`].
    pub reserve: u64,
    /// Whether the reserve counts every running sequence.
    pub per_seq: bool,
    /// `path:line` of the refusing `if`.
    pub source: &'static str,
}

/// vLLM `vllm`'s verdict on `max_num_batched_tokens` `mbt` with `max_num_seqs`
/// `seqs` and `tokens` speculative tokens of `method`
/// (`VllmConfig._set_max_num_scheduled_tokens`: the batch must keep a slot
/// after the drafting reserve; the facts' `drafting_slots`): the one verdict
/// the rule `speculative_drafting_slots` and the rehearsal's stand-in `vllm`
/// both read.
pub fn drafting_refusal(
    vllm: &str,
    method: &str,
    tokens: u64,
    mbt: u64,
    seqs: u64,
) -> Option<DraftingRefusal> {
    let d = self::vllm(vllm).ok()?.drafting_slots.as_ref()?;
    let source = d.source.as_deref()?;
    let m = d.slots.iter().find(|s| s.method == method)?;
    let k = i64::try_from(tokens).unwrap_or(i64::MAX);
    let per_request =
        u64::try_from(m.per_token.saturating_mul(k).saturating_add(m.constant)).unwrap_or(0);
    let reserve = if d.per_seq {
        per_request.saturating_mul(seqs)
    } else {
        per_request
    };
    (mbt <= reserve).then_some(DraftingRefusal {
        per_request,
        reserve,
        per_seq: d.per_seq,
        source,
    })
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

/// Why `vllm serve` does not take `word`, written after an option that
/// takes a value, as that value: `None` when it does. Two steps read
/// the words before the option does:
///
/// - `FlexibleArgumentParser.parse_args` (vllm/utils/argparse_utils.py)
///   rewrites `-O<level>` into `--optimization-level <level>`, and reads
///   a word that starts with `-` and holds a `.` as a dotted option
///   (`--a.b`), taking the word after it as its value;
/// - argparse reads the word as an option ([`reads_as_option`]), so the
///   option before it has no value ("expected one argument").
pub fn value_word_refusal(flags: &[ServeFlag], word: &str) -> Option<String> {
    let rest = word.strip_prefix('-')?;
    if rest.is_empty() {
        return None;
    }
    if word.starts_with("-O") && word != "-O" {
        return Some(format!(
            "vLLM's parser rewrites `{word}` into `--optimization-level {}`, so the option before it has no value",
            &word[2..]
        ));
    }
    if !word.starts_with("--") && word.contains('.') {
        return Some(format!(
            "vLLM's parser reads `{word}` as a dotted option (it starts with `-` and holds a `.`) and takes the next word as its value"
        ));
    }
    reads_as_option(flags, word).then(|| {
        format!(
            "argparse reads `{word}` as an option (it starts with `-`), so the option before it has no value"
        )
    })
}

/// Whether argparse reads `word` as an option string rather than a value
/// (`ArgumentParser._parse_optional`, Python 3.11 and 3.12, the images'):
/// a word that starts with `-` is one unless it is `-` alone, or, naming no
/// option of `flags` (exactly, before an `=`, or as a prefix:
/// `_get_option_tuples`), is a negative number (`^-\d+$|^-\d*\.\d+$`; no
/// vLLM option looks like one) or holds a space. The rehearsal's stand-in
/// `vllm` splits its argv with it.
pub fn reads_as_option(flags: &[ServeFlag], word: &str) -> bool {
    let Some(rest) = word.strip_prefix('-') else {
        return false;
    };
    if rest.is_empty() {
        return false;
    }
    let mut spellings = flags.iter().flat_map(ServeFlag::spellings).map(|(s, _)| s);
    let before_eq = word.split_once('=').map_or(word, |(p, _)| p);
    let names_one = if word.starts_with("--") {
        spellings.any(|s| s.starts_with(before_eq))
    } else {
        let short = word.get(..2).unwrap_or(word);
        spellings.any(|s| s == before_eq || s == short || s.starts_with(word))
    };
    if names_one {
        return true;
    }
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let negative_number = digits(rest)
        || rest
            .split_once('.')
            .is_some_and(|(i, f)| (i.is_empty() || digits(i)) && digits(f));
    !negative_number && !word.contains(' ')
}

/// The long option among `flags` nearest to `spelling` (`--x`), if one is
/// near enough to be what was meant ([`crate::rules::closest`]).
pub fn nearest_flag<'a>(flags: &'a [ServeFlag], spelling: &str) -> Option<&'a str> {
    let want = spelling.trim_start_matches('-');
    crate::rules::closest(want, flags.iter().map(|f| f.name.as_str()))
}

/// The vLLM facts of the vLLM an image ships.
pub fn vllm_of(img: &Image) -> Result<&'static VllmRelease, String> {
    let v = img.vllm();
    vllm(v).map_err(|e| format!("image `{}` ships vLLM {v}: {e}", img.tag))
}

/// The image key of a hardware (`a2`, `a3`, `950dt`), as the release tables
/// name them: the lower-case device type, A5 being the 950DT.
pub fn image_key(hw: &crate::tables::Hardware) -> &'static str {
    match hw.device_type() {
        "A5" => "950dt",
        "A3" => "a3",
        _ => "a2",
    }
}

#[cfg(test)]
mod spelling_tests {
    /// [`super::ServeFlag::spelt`] knows exactly the spellings
    /// [`super::ServeFlag::spellings`] lists, at every embedded vLLM, and
    /// near misses (`--no-X` of a plain switch, `-X` of a long name) are
    /// none of them.
    #[test]
    fn spelt_agrees_with_spellings() {
        let mut checked = 0;
        for v in super::vllm_versions() {
            let r = super::vllm(v).unwrap_or_else(|e| unreachable!("vLLM {v}: {e}"));
            for f in &r.serve_flags {
                for (s, neg) in f.spellings() {
                    assert_eq!(f.spelt(&s), Some(neg), "vLLM {v} `{s}`");
                    checked += 1;
                }
                if !f.negatable {
                    assert_eq!(f.spelt(&format!("--no-{}", f.name)), None, "vLLM {v}");
                }
                assert_eq!(f.spelt(&format!("-{}", f.name)), None, "vLLM {v}");
                assert_eq!(f.spelt(&f.name), None, "vLLM {v}");
            }
        }
        assert!(checked > 1000, "only {checked} spellings checked");
    }

    /// Every `text_unless` pattern of the embedded vLLMs is one
    /// [`super::ServeFlag::is_json_word`] reads, and some option has one.
    #[test]
    fn every_text_unless_pattern_is_read() {
        let mut with = 0;
        for v in super::vllm_versions() {
            let r = super::vllm(v).unwrap_or_else(|e| unreachable!("vLLM {v}: {e}"));
            for f in r.serve_flags.iter().filter(|f| f.text_unless.is_some()) {
                assert_eq!(
                    f.is_json_word(" {\"a\": 1} "),
                    Ok(true),
                    "vLLM {v} --{}",
                    f.name
                );
                assert_eq!(f.is_json_word("cpu"), Ok(false), "vLLM {v} --{}", f.name);
                with += 1;
            }
        }
        assert!(with > 0, "no option keeps text");
    }
}

#[cfg(test)]
mod python_number_tests {
    use super::{python_float, python_int};

    /// The forms Python's `int()` takes and refuses, as argparse hands it a
    /// word of an `int` option.
    #[test]
    fn python_int_reads_what_python_reads() {
        for (word, want) in [
            ("16", Some(16)),
            (" 16\n", Some(16)),
            ("+16", Some(16)),
            ("-3", Some(-3)),
            ("1_6", Some(16)),
            ("1__6", None),
            ("_16", None),
            ("16_", None),
            ("", None),
            ("-", None),
            ("16.0", None),
            ("0x10", None),
            ("sixteen", None),
        ] {
            assert_eq!(python_int(word), want, "{word:?}");
        }
    }

    /// The same for Python's `float()`.
    #[test]
    fn python_float_reads_what_python_reads() {
        for (word, want) in [
            ("0.5", Some(0.5)),
            (" .5 ", Some(0.5)),
            ("5.", Some(5.0)),
            ("+1e3", Some(1000.0)),
            ("1_000.5", Some(1000.5)),
            ("-inf", Some(f64::NEG_INFINITY)),
            ("Infinity", Some(f64::INFINITY)),
            ("1__0", None),
            ("_1", None),
            ("1e", None),
            ("", None),
            ("0x1p3", None),
            ("half", None),
        ] {
            assert_eq!(python_float(word), want, "{word:?}");
        }
        assert!(python_float("nan").is_some_and(f64::is_nan));
    }
}
