//! What a node's weights must say for the layout to start: the checks the
//! generated preflight runs on the checkpoint's own `config.json` before the
//! model loads.
//!
//! The compiler judges the start-up checks that read the checkpoint's config
//! (its derived context length, its text `model_type`, its routed experts)
//! from the model table and the pinned copies of the checkpoints' configs
//! ([`crate::dims`]). Where no source gives the compiler a fact (no copy of
//! the build's config exists, e.g. GLM-4.7, DeepSeek-V4.1), or where the
//! weights on a node differ from the build the layout names, only the file on
//! the node can tell; vLLM would then refuse minutes into the start. So each
//! layout carries, for its preflight, the same conditions its rules test:
//! which typed `max_model_len` vLLM holds to the derived length
//! (`max_model_len_within_model`), which speculative method meets vLLM's
//! aux-hidden-states gate (`speculative_aux_hidden_states`), which role runs
//! hierarchy MC2 and with how many redundant experts
//! (`mc2_hierarchy_experts`), plus how the image's vLLM reads the file
//! (generated `checkpoint_reads`). Next to the config, the ModelSlim
//! description `--quantization ascend` needs (generated
//! `modelslim_description`). The conditions come from the same
//! functions the rules call; the reading of the file is
//! `pd-dsl/templates/py/checkpoint_config.py`, the one the generator of the
//! copies' facts runs too.

use crate::layout::Layout;
use crate::upstream::CheckpointReads;
use serde::Serialize;

/// The checkpoint checks of one layout, serialized into its preflight.
#[derive(Debug, Serialize)]
pub struct CheckpointChecks {
    /// The build's weights name (for messages).
    pub model: &'static str,
    /// The text `model_type` the compiler judged the layout with (the copy
    /// of the build's config, else the family's), `None` when unknown: the
    /// node's weights must have it.
    pub model_type: Option<&'static str>,
    /// The image's vLLM version.
    pub vllm: &'static str,
    /// How that vLLM reads the file.
    pub reads: &'static CheckpointReads,
    /// The ModelSlim description the layout's `--quantization` needs next
    /// to the config (the image's `modelslim_description` fact), when the
    /// build is quantized that way.
    pub quantization: Option<&'static crate::upstream::ModelslimDescription>,
    /// Per role, what its settings ask of the file.
    pub roles: Vec<RoleCheckpointChecks>,
}

/// What one role's settings ask of the checkpoint's config.
#[derive(Debug, Serialize)]
pub struct RoleCheckpointChecks {
    /// `prefill`, `decode` or `mixed`.
    pub role: &'static str,
    /// The typed `max_model_len` vLLM holds to the derived length
    /// (`None`: unset, `--hf-overrides`, or `VLLM_ALLOW_LONG_MAX_MODEL_LEN`).
    pub max_model_len: Option<u64>,
    /// The aux-hidden-states gate the role's speculative method meets.
    pub aux_hidden_states: Option<AuxGate>,
    /// Hierarchy MC2's expert limit, when the role runs it.
    pub mc2_hierarchy: Option<Mc2Limit>,
}

/// vLLM's aux-hidden-states gate for one method (vllm/config/speculative.py
/// `SpeculativeConfig._verify_args`, vLLM 0.18.0 to 0.20.2).
#[derive(Debug, Serialize)]
pub struct AuxGate {
    /// The role's speculative method.
    pub method: String,
    /// The text model type must contain one of these.
    pub model_types: &'static [String],
    /// vllm-ascend lets a lowercased model type containing this through.
    pub exempt_contains: Option<&'static str>,
    /// `path:line` of the raising `if`.
    pub source: &'static str,
}

/// Hierarchy MC2's limit for one role (vllm_ascend/ascend_config.py
/// `AscendConfig._validate_mc2_comm_alg`).
#[derive(Debug, Serialize)]
pub struct Mc2Limit {
    /// The `additional_config` key that turns it on.
    pub key: String,
    /// Experts allowed, the model's routed plus `redundant`.
    pub max_experts: u64,
    /// Redundant EPLB experts counted.
    pub redundant: u64,
    /// `path:line` of the raising `if`.
    pub source: &'static str,
}

/// The checkpoint checks of a checked layout; `None` when the image's vLLM
/// has no facts (every image of the table has them).
pub fn checkpoint_checks(layout: &Layout) -> Option<CheckpointChecks> {
    let v = crate::upstream::vllm_of(layout.image).ok()?;
    let rel = layout.image.facts();
    let roles = layout
        .serve
        .iter()
        .map(|(role, serve)| {
            let aux_hidden_states = serve.speculative.as_ref().and_then(|s| {
                let (_, gate, exempt) =
                    crate::rules::speculative::aux_gate(layout.image, &s.method)?;
                Some(AuxGate {
                    method: s.method.clone(),
                    model_types: &gate.model_types,
                    exempt_contains: exempt
                        .filter(|e| e.methods.contains(&s.method))
                        .map(|e| e.model_type_contains.as_str()),
                    source: &gate.source,
                })
            });
            let mc2_hierarchy =
                rel.and_then(|r| r.mc2_hierarchy_experts.as_ref())
                    .and_then(|limit| {
                        let (key, redundant) = crate::rules::features::mc2_hierarchy(limit, serve)?;
                        Some(Mc2Limit {
                            key: key.to_owned(),
                            max_experts: limit.max_experts,
                            redundant,
                            source: &limit.source,
                        })
                    });
            RoleCheckpointChecks {
                role: role.as_str(),
                max_model_len: crate::rules::budget::judged_max_model_len(serve),
                aux_hidden_states,
                mc2_hierarchy,
            }
        })
        .collect();
    Some(CheckpointChecks {
        model: layout.model.weights,
        model_type: crate::dims::text_model_type(layout.model),
        vllm: layout.image.vllm(),
        reads: &v.checkpoint_reads,
        quantization: rel
            .and_then(|r| r.modelslim_description.as_ref())
            .filter(|d| layout.model.quantization == Some(d.method.as_str())),
        roles,
    })
}
