//! The settings one engine role runs with ([`Serve`]), resolved from the
//! layout's `serve` block and the role's own, and the `vllm serve` options
//! they become.

use crate::spec::{EnvValue, GraphMode, Json, ServeSpec};
use crate::tables::Model;
use serde::Serialize;
use serde_json::json;
use std::collections::BTreeMap;

/// The speculative config as resolved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Speculative {
    /// Method.
    pub method: String,
    /// `num_speculative_tokens`.
    pub tokens: u64,
    /// `enforce_eager`.
    pub enforce_eager: Option<bool>,
}

impl Speculative {
    /// The `--speculative-config` JSON, keys in upstream's order.
    pub fn to_json(&self) -> Json {
        self.to_json_with_draft(None)
    }

    /// The `--speculative-config` JSON with the draft model the model table
    /// names for this method (`model`, as upstream's eagle3/dflash runs pass it).
    pub fn to_json_with_draft(&self, draft: Option<&str>) -> Json {
        let mut m = serde_json::Map::new();
        m.insert("num_speculative_tokens".into(), json!(self.tokens));
        m.insert("method".into(), json!(self.method));
        if let Some(d) = draft {
            m.insert("model".into(), json!(d));
        }
        if let Some(e) = self.enforce_eager {
            m.insert("enforce_eager".into(), json!(e));
        }
        Json::Object(m)
    }
}

/// Serve settings of one role after merging `serve` and the role's block.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Serve {
    /// `--max-model-len`.
    pub max_model_len: Option<u64>,
    /// `--max-num-batched-tokens`.
    pub max_num_batched_tokens: Option<u64>,
    /// `--max-num-seqs`.
    pub max_num_seqs: Option<u64>,
    /// `--gpu-memory-utilization` as written.
    pub gpu_memory_utilization: Option<String>,
    /// `--block-size`.
    pub block_size: Option<u64>,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--enable-expert-parallel`.
    pub expert_parallel: bool,
    /// `--trust-remote-code`.
    pub trust_remote_code: bool,
    /// `--async-scheduling`.
    pub async_scheduling: bool,
    /// `Some(false)` renders `--no-enable-prefix-caching`.
    pub prefix_caching: Option<bool>,
    /// Graph mode.
    pub graph: Option<GraphMode>,
    /// `cudagraph_capture_sizes` written with the graph mode (empty: vLLM's
    /// defaults).
    pub capture_sizes: Vec<u64>,
    /// Speculative config.
    pub speculative: Option<Speculative>,
    /// `--additional-config`, merged by top-level key.
    pub additional_config: BTreeMap<String, Json>,
    /// Extra flags in order.
    pub flags: Vec<(String, Option<Json>)>,
    /// Env in order.
    pub env: Vec<(String, EnvValue)>,
}

impl Serve {
    /// Merges the common block and a role block (role wins).
    pub fn resolve(common: &ServeSpec, role: Option<&ServeSpec>) -> Serve {
        match role {
            Some(r) => Serve::resolve_layers(&[common, r]),
            None => Serve::resolve_layers(&[common]),
        }
    }

    /// The settings of the ranks on one node: common, then role, then the
    /// node's own block (each later one wins).
    pub fn resolve_node(
        common: &ServeSpec,
        role: Option<&ServeSpec>,
        node: Option<&ServeSpec>,
    ) -> Serve {
        let layers: Vec<&ServeSpec> = std::iter::once(common).chain(role).chain(node).collect();
        Serve::resolve_layers(&layers)
    }

    /// The block among `layers` (later ones winning) whose capture sizes
    /// hold: capture sizes belong to the graph mode they were written with,
    /// so a block that sets its own `graph` does not inherit earlier sizes;
    /// the last block that sets a graph mode, else the first.
    pub fn graph_layer<'a>(layers: &[&'a ServeSpec]) -> Option<&'a ServeSpec> {
        layers
            .iter()
            .rev()
            .find(|l| l.graph.is_some())
            .or(layers.first())
            .copied()
    }

    /// Merges blocks in order, later ones winning: scalars by the last block
    /// that sets them, `additional_config` keys, flags and env by name.
    pub fn resolve_layers(layers: &[&ServeSpec]) -> Serve {
        macro_rules! pick {
            ($f:ident) => {
                layers
                    .iter()
                    .rev()
                    .find_map(|l| l.$f.as_ref())
                    .map(|s| s.value.clone())
            };
        }
        let mut additional_config: BTreeMap<String, Json> = BTreeMap::new();
        for (k, v) in layers.iter().flat_map(|l| l.additional_config.iter()) {
            additional_config.insert(k.clone(), v.value.clone());
        }
        let mut flags: Vec<(String, Option<Json>)> = Vec::new();
        for f in layers.iter().flat_map(|l| l.flags.iter()) {
            let v = f.value.as_ref().map(|v| v.value.clone());
            match flags.iter_mut().find(|(n, _)| *n == f.name.value) {
                Some(slot) => slot.1 = v,
                None => flags.push((f.name.value.clone(), v)),
            }
        }
        let mut env: Vec<(String, EnvValue)> = Vec::new();
        for e in layers.iter().flat_map(|l| l.env.iter()) {
            match env.iter_mut().find(|(n, _)| *n == e.name.value) {
                Some(slot) => slot.1 = e.value.value.clone(),
                None => env.push((e.name.value.clone(), e.value.value.clone())),
            }
        }
        let spec = layers.iter().rev().find_map(|l| l.speculative.as_ref());
        let graph_block = Serve::graph_layer(layers);
        Serve {
            max_model_len: pick!(max_model_len),
            max_num_batched_tokens: pick!(max_num_batched_tokens),
            max_num_seqs: pick!(max_num_seqs),
            gpu_memory_utilization: pick!(gpu_memory_utilization),
            block_size: pick!(block_size),
            seed: pick!(seed),
            expert_parallel: pick!(expert_parallel).unwrap_or(false),
            trust_remote_code: pick!(trust_remote_code).unwrap_or(false),
            async_scheduling: pick!(async_scheduling).unwrap_or(false),
            prefix_caching: pick!(prefix_caching),
            graph: pick!(graph),
            capture_sizes: graph_block
                .map(|b| b.capture_sizes.iter().map(|c| c.value).collect())
                .unwrap_or_default(),
            speculative: spec.map(|s| Speculative {
                method: s.method.value.clone(),
                tokens: s.tokens.value,
                enforce_eager: s.enforce_eager.as_ref().map(|e| e.value),
            }),
            additional_config,
            flags,
            env,
        }
    }

    /// The value of an env var, if set.
    pub fn env_value(&self, name: &str) -> Option<&EnvValue> {
        self.env.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// A boolean `additional_config` entry, looking at the top level and,
    /// for scheduler keys, inside `scheduler_config`.
    pub fn config_flag(&self, key: &str) -> bool {
        let truthy = |v: &Json| {
            matches!(v, Json::Bool(true)) || matches!(v, Json::String(s) if !s.is_empty())
        };
        self.additional_config.get(key).is_some_and(truthy)
            || self
                .additional_config
                .get("scheduler_config")
                .and_then(|s| s.get(key))
                .is_some_and(truthy)
    }

    /// The `vllm serve` options this role adds after the derived ones, in
    /// the order the upstream tutorials write them. Values are raw (the
    /// renderer quotes them).
    pub fn options(&self, model: &Model, served_name: &str) -> Vec<(String, Option<String>)> {
        let mut o: Vec<(String, Option<String>)> = Vec::new();
        let mut push = |k: &str, v: Option<String>| o.push((k.to_owned(), v));
        if self.expert_parallel {
            push("--enable-expert-parallel", None);
        }
        if let Some(s) = self.seed {
            push("--seed", Some(s.to_string()));
        }
        push("--served-model-name", Some(served_name.to_owned()));
        if let Some(v) = self.max_model_len {
            push("--max-model-len", Some(v.to_string()));
        }
        if let Some(v) = self.max_num_batched_tokens {
            push("--max-num-batched-tokens", Some(v.to_string()));
        }
        if let Some(v) = self.max_num_seqs {
            push("--max-num-seqs", Some(v.to_string()));
        }
        if let Some(v) = &self.gpu_memory_utilization {
            push("--gpu-memory-utilization", Some(v.clone()));
        }
        if let Some(v) = self.block_size {
            push("--block-size", Some(v.to_string()));
        }
        if self.trust_remote_code {
            push("--trust-remote-code", None);
        }
        if let Some(q) = model.quantization {
            push("--quantization", Some(q.to_owned()));
        }
        // The model's tokenizer mode, unless the layout passes its own.
        if let Some(t) = model.tokenizer_mode
            && !self.flags.iter().any(|(n, _)| n == "--tokenizer-mode")
        {
            push("--tokenizer-mode", Some(t.to_owned()));
        }
        if self.async_scheduling {
            push("--async-scheduling", None);
        }
        match self.prefix_caching {
            Some(false) => push("--no-enable-prefix-caching", None),
            Some(true) => push("--enable-prefix-caching", None),
            None => {}
        }
        match self.graph {
            Some(GraphMode::Eager) => push("--enforce-eager", None),
            Some(g) => push(
                "--compilation-config",
                g.cudagraph_mode().map(|m| {
                    let mut c = serde_json::Map::new();
                    c.insert("cudagraph_mode".into(), json!(m));
                    if !self.capture_sizes.is_empty() {
                        c.insert("cudagraph_capture_sizes".into(), json!(self.capture_sizes));
                    }
                    Json::Object(c).to_string()
                }),
            ),
            None => {}
        }
        if let Some(s) = &self.speculative {
            let draft = model.draft(&s.method).map(|d| d.model);
            push(
                "--speculative-config",
                Some(s.to_json_with_draft(draft).to_string()),
            );
        }
        if !self.additional_config.is_empty() {
            let m: serde_json::Map<String, Json> =
                self.additional_config.clone().into_iter().collect();
            push("--additional-config", Some(Json::Object(m).to_string()));
        }
        for (k, v) in &self.flags {
            let v = v.as_ref().map(|v| match v {
                Json::String(s) => s.clone(),
                other => other.to_string(),
            });
            push(k, v);
        }
        o
    }
}
