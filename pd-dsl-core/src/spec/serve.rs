//! What a role serves as written: graph mode, speculative decoding, env, flags and settings.

use super::*;

/// How the compute graph runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GraphMode {
    /// `--enforce-eager`.
    Eager,
    /// `--compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}'`.
    FullDecodeOnly,
    /// `--compilation-config '{"cudagraph_mode": "FULL"}'`.
    Full,
    /// `--compilation-config '{"cudagraph_mode": "PIECEWISE"}'`.
    Piecewise,
}

impl GraphMode {
    /// Every mode, for lookups by name.
    pub const ALL: [GraphMode; 4] = [
        GraphMode::Eager,
        GraphMode::FullDecodeOnly,
        GraphMode::Full,
        GraphMode::Piecewise,
    ];

    /// The mode whose `cudagraph_mode` value is `value` (`None` for a value
    /// pd-dsl does not name, and for `Eager`, which has none).
    pub fn from_cudagraph_mode(value: &str) -> Option<GraphMode> {
        Self::ALL
            .into_iter()
            .find(|g| g.cudagraph_mode() == Some(value))
    }

    /// The DSL keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            GraphMode::Eager => "eager",
            GraphMode::FullDecodeOnly => "full_decode_only",
            GraphMode::Full => "full",
            GraphMode::Piecewise => "piecewise",
        }
    }

    /// Parses the DSL keyword.
    pub fn parse(s: &str) -> Option<GraphMode> {
        match s {
            "eager" => Some(GraphMode::Eager),
            "full_decode_only" => Some(GraphMode::FullDecodeOnly),
            "full" => Some(GraphMode::Full),
            "piecewise" => Some(GraphMode::Piecewise),
            _ => None,
        }
    }

    /// The `cudagraph_mode` value, or `None` for eager.
    pub fn cudagraph_mode(self) -> Option<&'static str> {
        match self {
            GraphMode::Eager => None,
            GraphMode::FullDecodeOnly => Some("FULL_DECODE_ONLY"),
            GraphMode::Full => Some("FULL"),
            GraphMode::Piecewise => Some("PIECEWISE"),
        }
    }
}

/// `speculative: { method: mtp, tokens: 1, enforce_eager: true }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpeculativeSpec {
    /// Method name (`mtp`, `deepseek_mtp`, ...).
    pub method: Spanned<String>,
    /// `num_speculative_tokens`.
    pub tokens: Spanned<u64>,
    /// `enforce_eager` inside the speculative config.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enforce_eager: Option<Spanned<bool>>,
    /// Where the block was written.
    #[serde(skip)]
    pub site: Site,
}

/// An environment value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EnvValue {
    /// `NAME=value`.
    Literal(String),
    /// `NAME=value${NAME:+:$NAME}`: put `dir` in front of a path list.
    Prepend {
        /// Directory (or file) to put first.
        prepend: String,
    },
}

impl EnvValue {
    /// The literal text or prepended entry.
    pub fn text(&self) -> &str {
        match self {
            EnvValue::Literal(s) => s,
            EnvValue::Prepend { prepend } => prepend,
        }
    }
}

/// One environment entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvEntry {
    /// Variable name.
    pub name: Spanned<String>,
    /// Value.
    pub value: Spanned<EnvValue>,
}

/// One extra `vllm serve` flag.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlagEntry {
    /// Flag with its dashes, e.g. `--tokenizer-mode`.
    pub name: Spanned<String>,
    /// Value; `None` for a switch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Spanned<Json>>,
}

/// Serve settings for all roles (`serve`) or one role (`prefill`, `decode`,
/// `mixed`). Role settings override common ones field by field; env, flags and
/// `additional_config` merge by name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServeSpec {
    /// `--max-model-len`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_model_len: Option<Spanned<u64>>,
    /// `--max-num-batched-tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_num_batched_tokens: Option<Spanned<u64>>,
    /// `--max-num-seqs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_num_seqs: Option<Spanned<u64>>,
    /// `--gpu-memory-utilization`, kept as written (`0.92`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_memory_utilization: Option<Spanned<String>>,
    /// `--block-size`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_size: Option<Spanned<u64>>,
    /// `--seed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<Spanned<u64>>,
    /// `--enable-expert-parallel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expert_parallel: Option<Spanned<bool>>,
    /// `--trust-remote-code`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust_remote_code: Option<Spanned<bool>>,
    /// `--async-scheduling`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub async_scheduling: Option<Spanned<bool>>,
    /// `false` renders `--no-enable-prefix-caching`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_caching: Option<Spanned<bool>>,
    /// Eager or a cudagraph mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph: Option<Spanned<GraphMode>>,
    /// `cudagraph_capture_sizes` of the graph mode written in the same
    /// block (`graph: full_decode_only { capture_sizes: [4, 8] }`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capture_sizes: Vec<Spanned<u64>>,
    /// `--speculative-config`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speculative: Option<SpeculativeSpec>,
    /// `--additional-config` entries.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub additional_config: BTreeMap<String, Spanned<Json>>,
    /// Where nested `additional_config` values were written, by dotted
    /// path (`finegrained_tp_config.lmhead_tensor_parallel_size`), so a
    /// rule about an inner value points at it rather than at its top key.
    #[serde(skip)]
    pub additional_config_sites: BTreeMap<String, Site>,
    /// Further flags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<FlagEntry>,
    /// Environment exported before `vllm serve`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvEntry>,
    /// Where the block was written.
    #[serde(skip)]
    pub site: Site,
}

impl ServeSpec {
    /// Whether the block sets nothing (its site aside).
    pub fn is_empty(&self) -> bool {
        let mut bare = self.clone();
        bare.site = Site::NONE;
        bare.additional_config_sites.clear();
        bare == ServeSpec::default()
    }

    /// This block with `over` written on top (each setting `over` has wins,
    /// `additional_config` keys, flags and env by name), keeping every
    /// setting's site: the one block a node's ranks run, for the rules.
    pub fn overlay(&self, over: &ServeSpec) -> ServeSpec {
        let mut out = self.clone();
        macro_rules! take {
            ($($f:ident),*) => {$(
                if over.$f.is_some() {
                    out.$f = over.$f.clone();
                }
            )*};
        }
        take!(
            max_model_len,
            max_num_batched_tokens,
            max_num_seqs,
            gpu_memory_utilization,
            block_size,
            seed,
            expert_parallel,
            trust_remote_code,
            async_scheduling,
            prefix_caching,
            speculative
        );
        if over.graph.is_some() {
            out.graph = over.graph.clone();
            out.capture_sizes = over.capture_sizes.clone();
        }
        for (k, v) in &over.additional_config {
            out.additional_config.insert(k.clone(), v.clone());
        }
        for (k, v) in &over.additional_config_sites {
            out.additional_config_sites.insert(k.clone(), *v);
        }
        for f in &over.flags {
            match out.flags.iter_mut().find(|x| x.name.value == f.name.value) {
                Some(slot) => *slot = f.clone(),
                None => out.flags.push(f.clone()),
            }
        }
        for e in &over.env {
            match out.env.iter_mut().find(|x| x.name.value == e.name.value) {
                Some(slot) => *slot = e.clone(),
                None => out.env.push(e.clone()),
            }
        }
        if out.site == Site::NONE {
            out.site = over.site;
        }
        out
    }
}
