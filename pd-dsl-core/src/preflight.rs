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
    /// The `model_type` the compiler judged the layout with, `None` when
    /// unknown: the node's weights must have it.
    pub model_type: Option<ExpectedModelType>,
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

/// The model type a node's weights must have.
#[derive(Debug, Serialize)]
pub struct ExpectedModelType {
    /// The type.
    pub name: &'static str,
    /// The copy of the build's config it comes from (its path): the text
    /// config's type must be it. `None`: the model table types it from
    /// vllm-ascend's source for the family, where it may name the text or
    /// the top-level type, so either level of the file may have it
    /// (`dims::tests` holds each such type to a copy of the family).
    pub copy: Option<&'static str>,
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

/// The aux-hidden-states gate `method` meets on `img`, for the preflight.
fn aux_gate(img: &crate::tables::Image, method: &str) -> Option<AuxGate> {
    let (_, gate, exempt) = crate::rules::speculative::aux_gate(img, method)?;
    Some(AuxGate {
        method: method.to_owned(),
        model_types: &gate.model_types,
        exempt_contains: exempt
            .filter(|e| e.methods.iter().any(|m| m == method))
            .map(|e| e.model_type_contains.as_str()),
        source: &gate.source,
    })
}

/// What one engine's settings ask of the checkpoint's config: `max_model_len`
/// as vLLM holds it to the derived length (`None` where it does not), the
/// speculative `method`, and `--additional-config` read through `config`.
/// The layout's preflight ([`checkpoint_checks`]) and the rehearsal's stand-in
/// vllm (from its argv) both ask this, so the two judge alike.
pub fn role_checks<'c>(
    image: &'static crate::tables::Image,
    role: &'static str,
    max_model_len: Option<u64>,
    method: Option<&str>,
    config: impl Fn(&str) -> Option<&'c serde_json::Value>,
) -> RoleCheckpointChecks {
    let mc2_hierarchy = image
        .facts()
        .and_then(|r| r.mc2_hierarchy_experts.as_ref())
        .and_then(|limit| {
            let (key, redundant) = crate::rules::features::mc2_hierarchy(limit, config)?;
            Some(Mc2Limit {
                key: key.to_owned(),
                max_experts: limit.max_experts,
                redundant,
                source: &limit.source,
            })
        });
    RoleCheckpointChecks {
        role,
        max_model_len,
        aux_hidden_states: method.and_then(|m| aux_gate(image, m)),
        mc2_hierarchy,
    }
}

/// The checks vLLM and vllm-ascend themselves make of a checkpoint's config
/// for one engine, `role`: [`checkpoint_checks`] without the layout's model
/// (no expected model type, no ModelSlim description, which the stand-in
/// vllm judges on its own). `None` when the image's vLLM has no facts.
pub fn engine_checks(
    image: &'static crate::tables::Image,
    role: RoleCheckpointChecks,
) -> Option<CheckpointChecks> {
    let v = crate::upstream::vllm_of(image).ok()?;
    Some(CheckpointChecks {
        model: "the model",
        model_type: None,
        vllm: image.vllm(),
        reads: &v.checkpoint_reads,
        quantization: None,
        roles: vec![role],
    })
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
            role_checks(
                layout.image,
                role.as_str(),
                crate::rules::budget::judged_max_model_len(serve),
                serve.speculative.as_ref().map(|s| s.method.as_str()),
                |k| serve.additional_config.get(k),
            )
        })
        .collect();
    Some(CheckpointChecks {
        model: layout.model.weights,
        model_type: crate::dims::text_model_type(layout.model).map(|name| ExpectedModelType {
            name,
            copy: crate::dims::config_of(layout.model)
                .filter(|c| c.text_model_type.is_some())
                .map(|c| c.source.as_str()),
        }),
        vllm: layout.image.vllm(),
        reads: &v.checkpoint_reads,
        quantization: rel
            .and_then(|r| r.modelslim_description.as_ref())
            .filter(|d| layout.model.quantization == Some(d.method.as_str())),
        roles,
    })
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::tables::IMAGES;
    use std::io::Write;
    use std::process::{Command, Stdio};

    /// Runs the preflight's own Python (the two files its template includes
    /// verbatim) on each `(config.json, checks)` and returns each judge's
    /// problems.
    fn judge_all(cases: &[(serde_json::Value, serde_json::Value)]) -> Vec<Vec<String>> {
        let py = concat!(env!("CARGO_MANIFEST_DIR"), "/../pd-dsl/templates/py/");
        let mut program = String::new();
        for f in ["checkpoint_config.py", "model_config_judge.py"] {
            program += &std::fs::read_to_string(format!("{py}{f}")).unwrap();
            program += "\n";
        }
        program += "print(json.dumps([judge_config(c, k, '/nonexistent')[0] for c, k in json.load(sys.stdin)]))\n";
        let mut child = Command::new("python3")
            .args(["-c", &program])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(serde_json::to_string(cases).unwrap().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "the judge failed");
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// Every model type the corpus knows (the copies' text and top-level
    /// types, the table's), and near misses of the gate's and exemption's
    /// substring and case tests.
    fn model_types() -> Vec<String> {
        let mut t: std::collections::BTreeSet<String> = crate::dims::CHECKPOINTS
            .values()
            .flat_map(|c| [c.model_type.clone(), c.text_model_type.clone()])
            .flatten()
            .chain(
                crate::tables::MODELS
                    .iter()
                    .filter_map(|m| m.model_type.map(str::to_owned)),
            )
            .collect();
        for extra in [
            "",
            "MiniMax-M2",
            "MINIMAX",
            "minimax",
            "mini_max",
            "Llama",
            "llama4_text",
            "qwen",
            "Qwen3",
            "glm",
            "gpt_oss",
            "deepseek",
            "mimo_v2",
        ] {
            t.insert(extra.to_owned());
        }
        t.into_iter().collect()
    }

    fn checks(img: &'static crate::tables::Image, role: serde_json::Value) -> serde_json::Value {
        let v = crate::upstream::vllm_of(img).unwrap();
        serde_json::json!({
            "model": "m", "model_type": null, "vllm": v.version, "reads": &v.checkpoint_reads,
            "quantization": null, "roles": [role],
        })
    }

    /// The preflight's aux-hidden-states test and the rule
    /// `speculative_aux_hidden_states` give the same verdict for every image,
    /// gated method and model type.
    #[test]
    fn the_preflight_judges_the_aux_gate_as_the_rule_does() {
        let mut cases = Vec::new();
        let mut want = Vec::new();
        for img in IMAGES.iter() {
            let Some(g) = crate::upstream::vllm_of(img)
                .ok()
                .and_then(|v| v.aux_hidden_states.as_ref())
            else {
                continue;
            };
            for method in &g.methods {
                let gate = aux_gate(img, method).unwrap();
                let role = serde_json::json!({
                    "role": "decode", "max_model_len": null, "aux_hidden_states": gate, "mc2_hierarchy": null,
                });
                for t in model_types() {
                    cases.push((
                        serde_json::json!({ "model_type": t }),
                        checks(img, role.clone()),
                    ));
                    want.push((
                        img.tag,
                        method,
                        t.clone(),
                        crate::rules::speculative::aux_refused(img, method, &t),
                    ));
                }
            }
        }
        let got = judge_all(&cases);
        let (mut refused, mut passed) = (0, 0);
        for ((tag, method, t, rule), problems) in want.iter().zip(&got) {
            let judged = problems.iter().any(|p| p.contains("speculative method"));
            assert_eq!(
                judged, *rule,
                "{tag} {method} on model type {t:?}: preflight {problems:?}, rule {rule}"
            );
            if *rule { refused += 1 } else { passed += 1 }
        }
        assert!(
            refused > 20 && passed > 20,
            "{refused} refused, {passed} passed"
        );
    }

    /// The preflight's hierarchy MC2 test and the rule `mc2_hierarchy_experts`
    /// give the same verdict at and around every image's limit, with and
    /// without redundant experts, under each key vLLM reads the experts from.
    #[test]
    fn the_preflight_judges_hierarchy_mc2_as_the_rule_does() {
        let mut cases = Vec::new();
        let mut want = Vec::new();
        for img in IMAGES.iter() {
            let (Some(limit), Ok(v)) = (
                img.facts().and_then(|r| r.mc2_hierarchy_experts.as_ref()),
                crate::upstream::vllm_of(img),
            ) else {
                continue;
            };
            for redundant in [0, 32] {
                let role = serde_json::json!({
                    "role": "decode", "max_model_len": null, "aux_hidden_states": null,
                    "mc2_hierarchy": Mc2Limit {
                        key: "mc2_comm_alg".into(), max_experts: limit.max_experts, redundant, source: &limit.source,
                    },
                });
                let at = limit.max_experts - redundant;
                for experts in [at - 1, at, at + 1] {
                    for key in &v.checkpoint_reads.expert_keys {
                        cases.push((
                            serde_json::json!({ "model_type": "x", key.as_str(): experts }),
                            checks(img, role.clone()),
                        ));
                        want.push((
                            img.tag,
                            key.clone(),
                            experts,
                            redundant,
                            limit.exceeds(experts, redundant),
                        ));
                    }
                }
            }
        }
        let got = judge_all(&cases);
        let mut refused = 0;
        for ((tag, key, experts, redundant, rule), problems) in want.iter().zip(&got) {
            let judged = problems.iter().any(|p| p.contains("hierarchy MC2"));
            assert_eq!(
                judged, *rule,
                "{tag} {key}={experts} + {redundant}: preflight {problems:?}, rule {rule}"
            );
            refused += usize::from(*rule);
        }
        assert!(
            refused > 10 && refused < want.len(),
            "{refused} of {}",
            want.len()
        );
    }
}
