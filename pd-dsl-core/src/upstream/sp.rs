//! Sequence parallelism as one engine gets it: vllm-ascend's `enable_sp()`
//! (vllm_ascend/utils.py), from what the release's generated facts say it
//! reads. One decision, run by the rules on a layout's settings and by the
//! stand-in on `vllm serve`'s argv and its environment.

use super::{Release, SequenceParallelMoe, SpMoe, SpMoeSwitch, VllmRelease};
use serde_json::Value as Json;

/// An env variable as an engine sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnvRead<'a> {
    /// Not set.
    Unset,
    /// Set to this text.
    Value(&'a str),
    /// Set to what is only known at start (a prepended path list).
    Unknown,
}

/// What the decision reads of one engine.
pub trait EngineSettings {
    /// A top-level `additional_config` entry.
    fn config(&self, key: &str) -> Option<&Json>;
    /// An env variable.
    fn env(&self, name: &str) -> EnvRead<'_>;
    /// `--all2all-backend` as typed; `None` when it is not.
    fn all2all_backend(&self) -> Option<&Json>;
    /// `--enable-expert-parallel`.
    fn expert_parallel(&self) -> bool;
    /// The engine's DP and TP sizes, where known.
    fn dp_tp(&self) -> Option<(u32, u32)>;
}

/// Python's `bool()` of a JSON value as vllm-ascend reads `additional_config`
/// (`bool(additional_config[key])`): absent, `false`, `null`, `0`, `""`, `[]`
/// and `{}` are false.
pub fn python_truthy(v: Option<&Json>) -> bool {
    match v {
        None | Some(Json::Null) | Some(Json::Bool(false)) => false,
        Some(Json::Bool(true)) => true,
        Some(Json::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Json::String(s)) => !s.is_empty(),
        Some(Json::Array(a)) => !a.is_empty(),
        Some(Json::Object(o)) => !o.is_empty(),
    }
}

/// An `additional_config` value as pydantic's lax `bool` reads it
/// (`validate_additional_config_bool`, ascend_config.py @v0.27.1rc1 L50, and
/// `AscendConfig`'s bool fields): booleans, 0 and 1, and the strings
/// pydantic names; `None` for what it refuses.
pub fn pydantic_bool(v: &Json) -> Option<bool> {
    match v {
        Json::Bool(b) => Some(*b),
        Json::Number(n) => match n.as_f64() {
            Some(0.0) => Some(false),
            Some(1.0) => Some(true),
            _ => None,
        },
        Json::String(s) => match s.to_ascii_lowercase().as_str() {
            "0" | "off" | "f" | "false" | "n" | "no" => Some(false),
            "1" | "on" | "t" | "true" | "y" | "yes" => Some(true),
            _ => None,
        },
        _ => None,
    }
}

impl Release {
    /// Whether `enable_sp()` is true for an engine, from what the generated
    /// `enable_sp` says it reads: `additional_config.enable_flashcomm1` when
    /// the key is present (even `false` wins over the env), else the env
    /// variables it reads as integers (`VLLM_ASCEND_ENABLE_FLASHCOMM` and
    /// `..._FLASHCOMM1` at v0.18.0/v0.19.1rc1, `..._FLASHCOMM1` from
    /// v0.20.2rc1); forced on by `enable_shared_expert_dp` where it reads
    /// `shared_expert_dp` (up to v0.25.1rc1), which `AscendConfig` keeps only
    /// with `--enable-expert-parallel` and TP > 1 (ascend_config.py
    /// @v0.20.2rc1 L106-114, @v0.25.1rc1 L101-109). From v0.27.1rc1 it
    /// returns vLLM's `use_sequence_parallel_moe`:
    /// [`Release::sequence_parallel_moe`]. `None` where the release has no
    /// such fact or the engine holds what cannot be judged.
    pub fn sequence_parallel(&self, v: &VllmRelease, e: &impl EngineSettings) -> Option<bool> {
        let f = self.enable_sp.as_ref()?;
        if f.reads
            .iter()
            .any(|r| r == "parallel_config.use_sequence_parallel_moe")
        {
            return self.sequence_parallel_moe(v, e);
        }
        let mut key = false;
        let mut forced = false;
        let mut envs = Vec::new();
        for r in &f.reads {
            match r.as_str() {
                "additional_config.enable_flashcomm1" => key = true,
                "shared_expert_dp" => forced = true,
                _ => envs.push(r.strip_prefix("env.")?),
            }
        }
        let switched = match e.config("enable_flashcomm1") {
            Some(x) if key => python_truthy(Some(x)),
            _ => envs.iter().any(|name| {
                matches!(e.env(name), EnvRead::Value(s) if s.trim().parse::<i64>().is_ok_and(|n| n != 0))
            }),
        };
        let shared = forced
            && python_truthy(e.config("enable_shared_expert_dp"))
            && e.expert_parallel()
            && e.dp_tp().is_some_and(|(_, tp)| tp > 1);
        Some(switched || shared)
    }

    /// Sequence-parallel MoE as vllm-ascend decides it from v0.27.1rc1 (the
    /// generated `sp_moe`, with vLLM's `sequence_parallel_moe`):
    /// `AscendConfig` switches the all2all backend to one outside the
    /// property's unless one of the switch's terms is on
    /// (`enable_flashcomm1`, `enable_dsa_cp`, env
    /// `VLLM_ASCEND_ENABLE_FLASHCOMM1`; ascend_config.py @v0.27.1rc1 L540,
    /// @v0.30.0rc2 L764), and the property (vllm-ascend's patch without
    /// vLLM's DP > 1, except at v0.28.0rc1, which has no patch) then needs
    /// the backend, expert parallelism and TP above 1.
    pub fn sequence_parallel_moe(&self, v: &VllmRelease, e: &impl EngineSettings) -> Option<bool> {
        let (dp, tp) = e.dp_tp()?;
        let moe = self.sp_moe.as_ref()?;
        let vp = v.sequence_parallel_moe.as_ref()?;
        let property = moe.property.as_ref().unwrap_or(&vp.property);
        let mut backend = all2all_backend(e, vp)?;
        if let Some(s) = &moe.switch {
            let any = !s.asked(e)?.is_empty();
            let mut all = true;
            for t in &s.all_of {
                all &= parallel_term(t, e, dp, tp)?;
            }
            if !(any && all) {
                backend = s.off_backend.as_str();
            }
        }
        let mut on = property.backends.iter().any(|b| b == backend);
        for t in &property.requires {
            on &= parallel_term(t, e, dp, tp)?;
        }
        Some(on)
    }

    /// What keeps sequence-parallel MoE off for an engine on a release with
    /// the generated `sp_moe`: the switch's and the property's unmet terms
    /// and an all2all backend outside the property's, in words.
    pub fn sequence_parallel_unmet(&self, v: &VllmRelease, e: &impl EngineSettings) -> Vec<String> {
        let (Some(moe), Some(vp), Some((dp, tp))) =
            (&self.sp_moe, &v.sequence_parallel_moe, e.dp_tp())
        else {
            return Vec::new();
        };
        let property = moe.property.as_ref().unwrap_or(&vp.property);
        let mut out = Vec::new();
        let terms = moe
            .switch
            .iter()
            .flat_map(|s| s.all_of.iter())
            .chain(&property.requires);
        for t in terms {
            let words = match t.split_once(" > ") {
                Some(("tensor_parallel_size", _)) => format!("TP {tp} (needs {})", term_words(t)),
                Some(("data_parallel_size", _)) => format!("DP {dp} (needs {})", term_words(t)),
                _ => term_words(t),
            };
            if parallel_term(t, e, dp, tp) == Some(false) && !out.contains(&words) {
                out.push(words);
            }
        }
        if let Some(b) = all2all_backend(e, vp)
            && !property.backends.iter().any(|x| x == b)
        {
            let names: Vec<String> = property.backends.iter().map(|b| format!("`{b}`")).collect();
            out.push(format!(
                "all2all backend `{b}` (needs one of {})",
                names.join(", ")
            ));
        }
        out
    }

    /// `path:line` of the `use_sequence_parallel_moe` the release runs:
    /// vllm-ascend's patch, else vLLM's own.
    pub fn sequence_parallel_property_source(&self, v: &VllmRelease) -> String {
        match self.sp_moe.as_ref().and_then(|m| m.property.as_ref()) {
            Some(p) => p.source.clone(),
            None => v
                .sequence_parallel_moe
                .as_ref()
                .map_or_else(String::new, |x| {
                    format!("vLLM {} {}", v.version, x.property.source)
                }),
        }
    }

    /// How an engine turns [`Release::sequence_parallel`] on, in words.
    pub fn sequence_parallel_switches(&self, v: Option<&VllmRelease>) -> String {
        let Some(f) = self.enable_sp.as_ref() else {
            return "FlashComm1".to_owned();
        };
        if let (Some(moe), Some(vp)) = (
            &self.sp_moe,
            v.and_then(|v| v.sequence_parallel_moe.as_ref()),
        ) {
            return sp_moe_switches(moe, vp);
        }
        let key = f
            .reads
            .iter()
            .any(|r| r == "additional_config.enable_flashcomm1");
        let envs: Vec<String> = f
            .reads
            .iter()
            .filter_map(|r| r.strip_prefix("env."))
            .map(|e| format!("env `{e}: 1`"))
            .collect();
        let mut ways = Vec::new();
        if key {
            ways.push("`additional_config.enable_flashcomm1: true`".to_owned());
        }
        if !envs.is_empty() {
            let when = if key { " (when the key is absent)" } else { "" };
            ways.push(format!("{}{when}", envs.join(" or ")));
        }
        if f.reads.iter().any(|r| r == "shared_expert_dp") {
            ways.push("`enable_shared_expert_dp` with `expert_parallel` and TP > 1".to_owned());
        }
        or_list(&ways).unwrap_or_else(|| "FlashComm1".to_owned())
    }
}

impl SpMoeSwitch {
    /// The terms an engine turns on: `additional_config.<key>` read as a
    /// pydantic bool, `env.<NAME>` whose stripped, lower-cased value is one
    /// of `env_true`. `None` when one cannot be read (a value pydantic
    /// refuses, an env value only known at start).
    pub fn asked(&self, e: &impl EngineSettings) -> Option<Vec<&str>> {
        let mut on = Vec::new();
        for r in &self.any_of {
            let set = if let Some(key) = r.strip_prefix("additional_config.") {
                match e.config(key) {
                    None => false,
                    Some(v) => pydantic_bool(v)?,
                }
            } else {
                match e.env(r.strip_prefix("env.")?) {
                    EnvRead::Unset => false,
                    EnvRead::Value(x) => self.env_true.contains(&x.trim().to_lowercase()),
                    EnvRead::Unknown => return None,
                }
            };
            if set {
                on.push(r.as_str());
            }
        }
        Some(on)
    }
}

/// The all2all backend vLLM runs for an engine: `--all2all-backend`, else
/// the field's default, after `ParallelConfig`'s swaps of removed backends.
/// `None` for a value that is not a string.
fn all2all_backend<'a>(e: &'a impl EngineSettings, v: &'a SequenceParallelMoe) -> Option<&'a str> {
    let typed = match e.all2all_backend() {
        Some(Json::String(s)) => s.as_str(),
        Some(_) => return None,
        None => v.default.as_str(),
    };
    Some(v.replaced.get(typed).map_or(typed, String::as_str))
}

/// A `ParallelConfig` term of the property (`enable_expert_parallel`,
/// `tensor_parallel_size > 1`); `None` for one pd-dsl does not know.
fn parallel_term(term: &str, e: &impl EngineSettings, dp: u32, tp: u32) -> Option<bool> {
    if term == "enable_expert_parallel" {
        return Some(e.expert_parallel());
    }
    let (field, n) = term.split_once(" > ")?;
    let n: u32 = n.parse().ok()?;
    match field {
        "tensor_parallel_size" => Some(tp > n),
        "data_parallel_size" => Some(dp > n),
        _ => None,
    }
}

/// A `ParallelConfig` term of the property in a layout's words:
/// `enable_expert_parallel` → `` `expert_parallel` ``,
/// `tensor_parallel_size > 1` → `TP > 1`; another term as written.
fn term_words(term: &str) -> String {
    match term {
        "enable_expert_parallel" => "`expert_parallel`".to_owned(),
        t => match t.split_once(" > ") {
            Some(("tensor_parallel_size", n)) => format!("TP > {n}"),
            Some(("data_parallel_size", n)) => format!("DP > {n}"),
            _ => format!("`{t}`"),
        },
    }
}

/// `a, b, or c`; `None` for nothing.
fn or_list(ways: &[String]) -> Option<String> {
    match ways.split_last() {
        Some((last, rest)) if !rest.is_empty() => Some(format!("{}, or {last}", rest.join(", "))),
        Some((last, _)) => Some(last.clone()),
        None => None,
    }
}

/// [`Release::sequence_parallel_switches`] from v0.27.1rc1: the switch's
/// terms, then what the property needs.
fn sp_moe_switches(moe: &SpMoe, vp: &SequenceParallelMoe) -> String {
    let property = moe.property.as_ref().unwrap_or(&vp.property);
    let ways: Vec<String> = moe
        .switch
        .iter()
        .flat_map(|s| {
            s.any_of.iter().map(|r| match r.strip_prefix("env.") {
                Some(e) => format!("env `{e}: 1`"),
                None => format!("`{r}: true`"),
            })
        })
        .collect();
    let mut needs: Vec<String> = property.requires.iter().map(|t| term_words(t)).collect();
    let names: Vec<String> = property.backends.iter().map(|b| format!("`{b}`")).collect();
    needs.push(format!(
        "an all2all backend of {} (`--all2all-backend`, default `{}`)",
        names.join(", "),
        vp.default
    ));
    format!(
        "{}, with {} ({}; {})",
        or_list(&ways).unwrap_or_else(|| "FlashComm1".to_owned()),
        needs.join(" and "),
        moe.switch.as_ref().map_or("", |s| s.source.as_str()),
        property.source
    )
}

/// What makes vllm-ascend require a TP-aligned capture size
/// ([`Release::tp_aligned_refusal`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TpAlignedBy {
    /// `enable_shared_expert_dp` with `--enable-expert-parallel`.
    SharedExpertDp,
    /// `enable_sp()`, or `enable_dsa_cp`, which `AscendConfig` keeps only
    /// with it.
    SequenceParallel,
}

/// vLLM's refusal of a decode step and TP that are not multiples of one
/// another under sequence parallelism, as the release reaches it
/// ([`Release::sp_alignment_refusal`]).
#[derive(Clone, Copy, Debug)]
pub struct SpAlignmentRefusal<'a> {
    /// vLLM's raising `if` (`spec_decode_sp_alignment`).
    pub vllm: &'a super::SpecDecodeSpAlignment,
    /// How vllm-ascend's runner hands vLLM the TP size
    /// (`sp_graph_alignment`).
    pub ascend: &'a super::SpGraphAlignment,
    /// Capture sizes all multiples of lcm(step, TP) would have avoided it
    /// (`unless_sizes_aligned`).
    pub unless_aligned: bool,
}

impl Release {
    /// The refusal of typed capture `sizes` none of which is a multiple of
    /// TP where the release requires one (`tp_aligned_capture_sizes`:
    /// vllm_ascend/platform.py, with TP above 1 and a cudagraph mode), with
    /// what requires it. The `enable_dsa_cp`
    /// term counts only with sequence parallelism on an indexer model
    /// (`has_indexer`), as `AscendConfig` keeps it (ascend_config.py
    /// @v0.27.1rc1 L584, @v0.30.0rc2 L806). `None` where it starts or the
    /// sizes are not typed.
    pub fn tp_aligned_refusal(
        &self,
        v: &VllmRelease,
        e: &impl EngineSettings,
        graph: Option<crate::spec::GraphMode>,
        sizes: &[u64],
        has_indexer: Option<bool>,
    ) -> Option<(&super::TpAlignedCaptureSizes, TpAlignedBy)> {
        let r = self.tp_aligned_capture_sizes.as_ref()?;
        let (_, tp) = e.dp_tp()?;
        if tp <= 1
            || matches!(graph, None | Some(crate::spec::GraphMode::Eager))
            || sizes.is_empty()
            || sizes.iter().any(|s| s % u64::from(tp) == 0)
        {
            return None;
        }
        let needs = |term: &str| r.requires.iter().any(|x| x == term);
        let shared = python_truthy(e.config("enable_shared_expert_dp")) && e.expert_parallel();
        if needs("enable_shared_expert_dp") && shared {
            return Some((r, TpAlignedBy::SharedExpertDp));
        }
        let sp = self.sequence_parallel(v, e) == Some(true);
        let dsa_cp = sp && python_truthy(e.config("enable_dsa_cp")) && has_indexer == Some(true);
        (needs("enable_sp") && sp || needs("enable_dsa_cp") && dsa_cp)
            .then_some((r, TpAlignedBy::SequenceParallel))
    }

    /// vLLM's refusal to size the graphs ("Can't determine cudagraph
    /// shapes", `adjust_cudagraph_sizes_for_spec_decode`) for `tokens`
    /// speculative tokens with graph mode `graph`, TP `tp` and sequence
    /// parallelism `sp`, on the V1 runner: the decode step (`tokens + 1`)
    /// and TP are not multiples of one another where vllm-ascend hands
    /// vLLM the TP size ([`Release::sp_sizing`]). `None` where it starts.
    #[allow(clippy::too_many_arguments)]
    pub fn sp_alignment_refusal<'a>(
        &'a self,
        v: &'a VllmRelease,
        graph: crate::spec::GraphMode,
        tokens: u64,
        tp: u32,
        sizes: &[u64],
        v2_runner: bool,
        sp: Option<bool>,
    ) -> Option<SpAlignmentRefusal<'a>> {
        let refusal = v.spec_decode_sp_alignment.as_ref()?;
        let step = tokens.saturating_add(1);
        let tp64 = u64::from(tp);
        if !refusal.reached(graph)
            || tokens == 0
            || v2_runner
            || sp != Some(true)
            || step.max(tp64) % step.min(tp64) == 0
        {
            return None;
        }
        let sizing = self.sp_sizing(tokens, tp, sizes)?;
        sizing.handed_tp.then_some(SpAlignmentRefusal {
            vllm: refusal,
            ascend: sizing.alignment,
            unless_aligned: sizing.alignment.passes_tp == super::PassesTp::UnlessSizesAligned,
        })
    }

    /// The multiple vLLM rounds a FULL decode graph's capture sizes to for
    /// `tokens` speculative tokens at TP `tp` with sequence parallelism `sp`:
    /// the decode step (`tokens + 1`), or with sequence parallelism
    /// [`Release::sp_sizing`]'s.
    pub fn decode_graph_multiple(
        &self,
        tokens: u64,
        tp: u32,
        sizes: &[u64],
        sp: Option<bool>,
    ) -> u64 {
        let step = tokens.saturating_add(1);
        match self.sp_sizing(tokens, tp, sizes) {
            Some(s) if sp == Some(true) => s.multiple,
            _ => step,
        }
    }

    /// How vllm-ascend's V1 runner (`_check_and_update_cudagraph_mode`)
    /// sizes a FULL decode graph under sequence parallelism for `tokens`
    /// speculative tokens at TP `tp` with typed capture `sizes` (the
    /// generated `sp_graph_alignment`), and so the multiple vLLM's
    /// `adjust_cudagraph_sizes_for_spec_decode` (vllm/config/compilation.py)
    /// rounds them to: where it hands vLLM the TP size (`always`;
    /// `unless_sizes_aligned` unless the sizes are all multiples of
    /// lcm(step, TP)), max(step, TP); where it does not because they are,
    /// the step; where it pre-aligns (`never`, from v0.29.0rc1:
    /// `adjust_cudagraph_sizes_for_spec_decode(lcm, 1)`, model_runner_v1.py
    /// @v0.29.0rc1 L6129, @v0.30.0rc2 L6387), lcm(step, TP). `None` at TP 1
    /// or without the fact.
    pub fn sp_sizing(&self, tokens: u64, tp: u32, sizes: &[u64]) -> Option<SpSizing<'_>> {
        use super::PassesTp;
        let alignment = self.sp_graph_alignment.as_ref()?;
        let step = tokens.saturating_add(1);
        let tp = u64::from(tp);
        if tp <= 1 {
            return None;
        }
        // Saturating: a layout may hold any token count (the rules refuse
        // one above 15 elsewhere, and keep checking).
        let lcm = (step / gcd(step, tp)).saturating_mul(tp);
        let aligned = !sizes.is_empty() && sizes.iter().all(|s| s % lcm == 0);
        let (handed_tp, multiple) = match alignment.passes_tp {
            PassesTp::Always => (true, step.max(tp)),
            PassesTp::UnlessSizesAligned if aligned => (false, step),
            PassesTp::UnlessSizesAligned => (true, step.max(tp)),
            PassesTp::Never => (false, lcm),
        };
        Some(SpSizing {
            alignment,
            handed_tp,
            multiple,
        })
    }
}

/// [`Release::sp_sizing`]: what vLLM gets and rounds to.
#[derive(Clone, Copy, Debug)]
pub struct SpSizing<'a> {
    /// The generated fact it follows.
    pub alignment: &'a super::SpGraphAlignment,
    /// vLLM is handed the TP size (and refuses a step it does not align
    /// with).
    pub handed_tp: bool,
    /// The multiple the capture sizes are rounded to.
    pub multiple: u64,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}
