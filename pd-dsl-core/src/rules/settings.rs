//! The serve blocks as written: flag syntax, settings the library derives, duplicates, parallel groups the topology cannot express, per-node blocks, memory utilisation and graph capture sizes.

use super::text::has_control;
use super::text::is_env_name;
use super::text::is_flag;
use super::text::is_safe_path;
use super::text::json_control_text;
use crate::check::Cx;
use crate::placement::{NodePlan, Placement};
use crate::rules::Rule;
use crate::site::{Site, Spanned};
use crate::spec::{EnvValue, GraphMode, Json, LayoutSpec, Role, ServeSpec};
use crate::tables::Image;
use std::collections::BTreeSet;

declare_rules! {
    /// Env var name not a shell identifier.
    EnvNameFormat = "env_name_format", Hard, "env var names are shell names, `[A-Za-z_][A-Za-z0-9_]*`";
    /// A flag not spelled `--kebab-case`.
    FlagFormat = "flag_format", Hard, "extra flags are spelled `--kebab-case`";
    /// A flag or env var that is derived.
    DerivedSetting = "derived_setting", Hard, "derived flags and env are never set by hand";
    /// The same flag or env var twice in one block.
    DuplicateSetting = "duplicate_setting", Hard, "a flag or env var is set once per block";
    /// `--pipeline-parallel-size` above 1 (a rank would span `tp x pp` NPUs,
    /// vllm/config/parallel.py `world_size`, and `tp x pp` kv ports,
    /// mooncake_connector.py, which the placement does not derive), or
    /// `--prefill-context-parallel-size` above 1 as a flag instead of the
    /// topology's `pcp<N>`, where the placement derives it.
    ParallelGroupsExpressible = "parallel_groups_expressible", Hard, "pipeline parallelism stays at 1 and PCP is written in the topology (`dp1tp8pcp2`), where the placement derives its devices and kv ports";
    /// `nodes: { N: ... }` naming a node the layout does not have.
    NodeSettingsExist = "node_settings_exist", Hard, "per-node settings name a node of the layout";
    /// gpu-memory-utilization out of range (`Field(gt=0, le=1)` in vLLM's
    /// vllm/config/cache.py, 0.18.0 L41 to 0.30.0 L103).
    GpuMemoryUtilization = "gpu_memory_utilization", Hard, "`gpu_memory_utilization` is a number in (0, 1]";
    /// Capture sizes without a cudagraph mode, or malformed.
    GraphCaptureSizes = "graph_capture_sizes", Hard, "capture sizes go with a cudagraph mode and are positive and distinct";
    /// Typed capture sizes all above `max_num_batched_tokens`: vLLM keeps
    /// only the sizes at most that (`VllmConfig._set_cudagraph_sizes`,
    /// vllm/config/vllm.py @0.18.0 L1363 … @0.30.0 L2320), and with none
    /// left its `assert max_cudagraph_capture_size >= 1` (@0.18.0 L1349 …
    /// @0.30.0 L2306) fails when vllm-ascend sizes the graphs again
    /// (vllm_ascend/platform.py `check_and_update_config` up to v0.26.0rc1,
    /// `_setup_compile_backend` from v0.27.1rc1): every image refuses to
    /// start. The generated vLLM facts' `default_capture_grid` cite the
    /// lines; pd-dsl-core/tests/graph_sizes_oracle.rs runs the released code.
    CaptureSizesWithinBatchedTokens = "capture_sizes_within_batched_tokens", Hard, "with a cudagraph mode, some typed capture size is at most `max_num_batched_tokens`";
    /// An extra flag the image's `vllm serve` refuses: argparse exits at
    /// start on an unknown or ambiguous option, a switch given a value, an
    /// option missing its value, a word its `type=` cannot convert (`int`,
    /// `float`) or a value outside its `choices` (vllm/engine/arg_utils.py `_compute_kwargs`/`literal_to_kwargs` and
    /// the `add_argument` calls, read into the generated facts
    /// `serve_flags` at every pinned vLLM; the choices vllm-ascend's
    /// `NPUPlatform.pre_register_and_update` widens are judged with the
    /// values it appends, and then against the `Literal` vllm-ascend's
    /// platform patch gives the config field, as pydantic does; facts
    /// `parser_choices_widened`); a dataclass option's JSON holds only the
    /// keys its class takes, as pydantic validates it while parsing (facts
    /// `serve_flags` `keys`). A unique prefix argparse
    /// would expand is refused too: the rules compare full names.
    ServeFlagAccepted = "serve_flag_accepted", Hard, "every extra flag is one the image's `vllm serve` accepts, written in full, with a value it accepts";
}

/// Flags the library derives; `Some(field)` names the typed field to use.
pub(crate) const DERIVED_FLAGS: &[(&str, Option<&str>)] = &[
    ("--host", None),
    ("--port", None),
    ("--data-parallel-size", None),
    ("--data-parallel-rank", None),
    ("--data-parallel-address", None),
    ("--data-parallel-rpc-port", None),
    ("--data-parallel-size-local", None),
    ("--data-parallel-start-rank", None),
    ("--tensor-parallel-size", None),
    ("--headless", None),
    ("--kv-transfer-config", None),
    ("--model", Some("model_path")),
    ("--served-model-name", Some("served_model_name")),
    ("--quantization", Some("model")),
    ("--max-model-len", Some("max_model_len")),
    ("--max-num-batched-tokens", Some("max_num_batched_tokens")),
    ("--max-num-seqs", Some("max_num_seqs")),
    ("--gpu-memory-utilization", Some("gpu_memory_utilization")),
    ("--block-size", Some("block_size")),
    ("--seed", Some("seed")),
    ("--enable-expert-parallel", Some("expert_parallel")),
    ("--trust-remote-code", Some("trust_remote_code")),
    ("--async-scheduling", Some("async_scheduling")),
    ("--enable-prefix-caching", Some("prefix_caching")),
    ("--no-enable-prefix-caching", Some("prefix_caching")),
    ("--enforce-eager", Some("graph")),
    ("--compilation-config", Some("graph")),
    ("--speculative-config", Some("speculative")),
    ("--additional-config", Some("additional_config")),
];

/// Parallel groups that multiply a rank's NPUs and kv ports, which a flag
/// cannot state (rule `parallel_groups_expressible`): the short name, and
/// where a size above 1 is written instead, if anywhere.
pub(crate) const UNEXPRESSED_GROUPS: &[(&str, &str, Option<&str>)] = &[
    ("--pipeline-parallel-size", "pp", None),
    (
        "--prefill-context-parallel-size",
        "pcp",
        Some("the topology shape (`dp1tp8pcp2`)"),
    ),
];

/// The PCP flag, rendered from the topology's `pcp<N>`.
pub const PCP_FLAG: &str = "--prefill-context-parallel-size";

/// Env the spine derives per node or rank.
pub(crate) const DERIVED_ENV: &[&str] = &[
    "ASCEND_RT_VISIBLE_DEVICES",
    "HCCL_IF_IP",
    "GLOO_SOCKET_IFNAME",
    "TP_SOCKET_IFNAME",
    "HCCL_SOCKET_IFNAME",
    "ENGINE_ID",
    "KV_PORT",
];

pub(crate) fn check_serve_block(block: &ServeSpec, scope: &str, cx: &mut Cx) {
    let mut flags: BTreeSet<&str> = BTreeSet::new();
    for (i, f) in block.flags.iter().enumerate() {
        let field = format!("{scope}.flags[{i}]");
        let name = f.name.value.as_str();
        if !is_flag(name) {
            let dashed = format!(
                "--{}",
                name.trim_start_matches('-')
                    .replace('_', "-")
                    .to_lowercase()
            );
            cx.report(
                Rule::FlagFormat,
                f.name.site,
                field.clone(),
                format!("found flag {name:?}, expected `--kebab-case`: one spelling lets the rules find derived and duplicate flags{}", if is_flag(&dashed) { format!("; did you mean `{dashed}`?") } else { String::new() }),
            );
            continue;
        }
        // `--speculative-config.method x`: vLLM gathers the dotted keys of a
        // JSON option into one more `--speculative-config {...}` placed after
        // every other argument, so it replaces the JSON pd-dsl renders
        // instead of merging into it (vllm/utils/argparse_utils.py
        // `FlexibleArgumentParser.parse_args` @v0.30.0 L392-446).
        if let Some((base, _)) = name.split_once('.')
            && let Some((_, typed)) = DERIVED_FLAGS.iter().find(|(n, _)| *n == base)
        {
            cx.report(
                Rule::DerivedSetting,
                f.name.site,
                field.clone(),
                format!(
                    "found flag `{name}`, expected {}: vLLM gathers dotted keys into one more `{base}` JSON after the one pd-dsl renders, which it then replaces (vllm/utils/argparse_utils.py `FlexibleArgumentParser.parse_args`)",
                    match typed {
                        Some(t) => format!("the key in the `{t}:` setting"),
                        None => "it left out: that JSON is derived for every rank".to_owned(),
                    }
                ),
            );
        }
        if let Some((_, typed)) = DERIVED_FLAGS.iter().find(|(n, _)| *n == name) {
            cx.report(
                Rule::DerivedSetting,
                f.name.site,
                field.clone(),
                match typed {
                    Some(t) => format!("found flag `{name}`, expected the `{t}:` setting: it is rendered from the typed setting so the rules can see it"),
                    None => format!("found flag `{name}`, expected it left out: it is derived from the topology for every rank"),
                },
            );
        }
        if let Some((_, what, instead)) = UNEXPRESSED_GROUPS.iter().find(|(n, _, _)| *n == name) {
            let size = f.value.as_ref().map(|v| match &v.value {
                Json::String(s) => s.trim().to_owned(),
                other => other.to_string(),
            });
            if size.as_deref() != Some("1") {
                cx.report(
                    Rule::ParallelGroupsExpressible,
                    f.value.as_ref().map_or(f.name.site, |v| v.site),
                    field.clone(),
                    match instead {
                        Some(there) => format!(
                            "found `{name} {}`, expected 1 or the flag left out: a {what} size above 1 is written in {there}, where the placement derives a rank's tp x {what} NPUs and kv ports (vllm/config/parallel.py `world_size`, mooncake_connector.py)",
                            size.as_deref().unwrap_or("(no value)")
                        ),
                        None => format!(
                            "found `{name} {}`, expected 1 or the flag left out: with {what} above 1 a rank spans tp x {what} NPUs and tp x {what} kv ports (vllm/config/parallel.py `world_size`, mooncake_connector.py), and pd-dsl derives device lists and kv port spans for TP, PCP and DP only",
                            size.as_deref().unwrap_or("(no value)")
                        ),
                    },
                );
            }
        }
        if !flags.insert(name) {
            cx.report(
                Rule::DuplicateSetting,
                f.name.site,
                field.clone(),
                format!("found flag `{name}` twice in `{scope}`, expected once: the later one would silently win"),
            );
        }
        if let Some(v) = &f.value
            && let Json::String(s) = &v.value
            && has_control(s)
        {
            cx.report(
                Rule::TextFormat,
                v.site,
                field,
                format!("found {s:?}, expected a flag value without control characters: generated scripts must show exactly what was written"),
            );
        }
    }
    let mut names: BTreeSet<&str> = BTreeSet::new();
    for (i, e) in block.env.iter().enumerate() {
        let field = format!("{scope}.env[{i}]");
        let name = e.name.value.as_str();
        if !is_env_name(name) {
            cx.report(
                Rule::EnvNameFormat,
                e.name.site,
                field.clone(),
                format!("found env name {name:?}, expected `[A-Za-z_][A-Za-z0-9_]*`: it becomes a shell `export`"),
            );
            continue;
        }
        if DERIVED_ENV.contains(&name) {
            cx.report(
                Rule::DerivedSetting,
                e.name.site,
                field.clone(),
                format!("found env `{name}`, expected it left out: the spine derives it per node or rank"),
            );
        }
        if !names.insert(name) {
            cx.report(
                Rule::DuplicateSetting,
                e.name.site,
                field.clone(),
                format!("found env `{name}` twice in `{scope}`, expected once: the later one would silently win"),
            );
        }
        if has_control(e.value.value.text()) {
            cx.report(
                Rule::TextFormat,
                e.value.site,
                field.clone(),
                format!(
                    "found {:?}, expected an env value without control characters: generated scripts must show exactly what was written",
                    e.value.value.text()
                ),
            );
        }
        if let EnvValue::Prepend { prepend } = &e.value.value
            && !is_safe_path(prepend)
        {
            cx.report(
                Rule::PathFormat,
                e.value.site,
                field,
                format!("found {prepend:?}, expected an absolute path of `[A-Za-z0-9/._+@=,:-]` to put in front of `{name}`: it is spliced into a path list in every role template"),
            );
        }
    }
    for (k, v) in &block.additional_config {
        if let Some(t) = json_control_text(k, &v.value) {
            cx.report(
                Rule::TextFormat,
                v.site,
                format!("{scope}.additional_config.{k}"),
                format!("found {t:?} in `additional_config`, expected text without control characters: generated docs and scripts must show exactly what was written"),
            );
        }
    }
    check_capture_sizes(block, scope, cx);
    if let Some(g) = &block.gpu_memory_utilization {
        let ok = g.value.parse::<f64>().is_ok_and(|x| x > 0.0 && x <= 1.0);
        if !ok {
            cx.report(
                Rule::GpuMemoryUtilization,
                g.site,
                format!("{scope}.gpu_memory_utilization"),
                format!("found {}, expected a number in (0, 1]: it is the fraction of NPU memory vLLM may use", g.value),
            );
        }
    }
}

/// The capture sizes a role's engines run, as written (with their sites):
/// those of the block [`crate::layout::Serve::graph_layer`] picks from the
/// common block and the role's, the same the rendered
/// `cudagraph_capture_sizes` come from.
pub(crate) fn role_capture_sizes(spec: &LayoutSpec, role: Role) -> &[Spanned<u64>] {
    let layers: Vec<&ServeSpec> = std::iter::once(&spec.serve)
        .chain(spec.roles.get(&role))
        .collect();
    crate::layout::Serve::graph_layer(&layers).map_or(&[], |b| b.capture_sizes.as_slice())
}

/// Flags by which a layout sizes the graphs itself, outside `graph`:
/// vLLM's `CompilationConfig` fields as options, its `-cc`/dotted forms and
/// `--performance-mode` (whose `interactivity` lists every size up to 32).
const GRAPH_SIZE_FLAGS: &[&str] = &[
    "--cudagraph-capture-sizes",
    "--max-cudagraph-capture-size",
    "--compilation-config",
    "-cc",
    "--performance-mode",
];

/// The capture sizes a role's engines settle on
/// ([`crate::upstream::Release::settled_capture_sizes`]): the typed ones
/// vLLM keeps (those at most a typed `max_num_batched_tokens`), else what
/// the image lists by default for the role's `max_num_seqs` and
/// `max_num_batched_tokens` (vLLM's defaults for the hardware when unset)
/// and speculative tokens. Empty where the engine refuses to start (rule
/// `capture_sizes_within_batched_tokens`). Typed sizes as written where
/// the image has no facts for them; `None` for the defaults there, where
/// the hardware is unknown, or where a flag sizes the graphs.
pub(crate) fn effective_capture_sizes(
    spec: &LayoutSpec,
    role: Role,
    serve: &crate::layout::Serve,
    image: &Image,
    hw: Option<&crate::tables::Hardware>,
) -> Option<CaptureSizes> {
    let typed = role_capture_sizes(spec, role);
    let scope = role.as_str();
    let tokens = serve.speculative.as_ref().map_or(0, |s| s.tokens);
    let facts = image.facts().zip(crate::upstream::vllm_of(image).ok());
    if let Some(first) = typed.first() {
        let written: Vec<u64> = typed.iter().map(|c| c.value).collect();
        let batch = serve.max_num_batched_tokens;
        let values = facts
            .and_then(|(rel, v)| {
                rel.settled_capture_sizes(v, &written, 0, batch.unwrap_or(u64::MAX), tokens)
            })
            .unwrap_or_else(|| written.clone());
        let mut text = format!("capture sizes {}", sizes_text(typed));
        if let Some(b) = batch
            && values.len() < written.len()
        {
            text.push_str(&format!(
                " (vLLM keeps those at most `max_num_batched_tokens` {b}: {})",
                list_text(&values)
            ));
        }
        return Some(CaptureSizes {
            values,
            site: first.site,
            field: format!("{scope}.graph.capture_sizes"),
            text,
        });
    }
    if serve.flags.iter().any(|(n, _)| {
        GRAPH_SIZE_FLAGS
            .iter()
            .any(|f| n == f || n.starts_with(&format!("{f}.")))
    }) {
        return None;
    }
    let (rel, v) = facts?;
    let cap = rel.default_capture_cap.as_ref()?;
    let (default_mbt, default_seqs) = crate::capacity::default_batching(hw?);
    let seqs = serve.max_num_seqs.unwrap_or(default_seqs);
    let mbt = serve.max_num_batched_tokens.unwrap_or(default_mbt);
    let values = rel.settled_capture_sizes(v, &[], seqs, mbt, tokens)?;
    let (site, field) = match spec
        .roles
        .get(&role)
        .and_then(|b| b.max_num_seqs.as_ref())
        .or(spec.serve.max_num_seqs.as_ref())
    {
        Some(s) => (s.site, format!("{scope}.max_num_seqs")),
        None => (Site::NONE, format!("{scope}.graph")),
    };
    let given = |typed: bool| if typed { "" } else { " (vLLM's default)" };
    Some(CaptureSizes {
        text: format!(
            "no capture sizes, so the image's defaults {} (from `max_num_seqs` {seqs}{}, `max_num_batched_tokens` {mbt}{} and {tokens} speculative tokens: vllm-ascend {} caps them at min(max_num_seqs x (tokens + 1) x {}, {}), {}, and vLLM {} lists 1, 2, 4, then every 8, up to it, {})",
            list_text(&values),
            given(serve.max_num_seqs.is_some()),
            given(serve.max_num_batched_tokens.is_some()),
            rel.version,
            cap.per_seq,
            cap.ceiling,
            cap.source,
            v.version,
            v.default_capture_grid
                .as_ref()
                .map_or("", |g| g.source.as_str()),
        ),
        values,
        site,
        field,
    })
}

/// Numbers as a message lists them: `1, 2, 4`.
fn list_text(values: &[u64]) -> String {
    values
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Typed capture sizes all above a typed `max_num_batched_tokens` with a
/// cudagraph mode (rule `capture_sizes_within_batched_tokens`).
pub(crate) fn check_capture_sizes_batch(
    spec: &LayoutSpec,
    role: Role,
    serve: &crate::layout::Serve,
    image: Option<&Image>,
    cx: &mut Cx,
) {
    let (Some(img), Some(batch)) = (image, serve.max_num_batched_tokens) else {
        return;
    };
    if matches!(serve.graph, None | Some(GraphMode::Eager)) {
        return;
    }
    let (Some(rel), Ok(v)) = (img.facts(), crate::upstream::vllm_of(img)) else {
        return;
    };
    let (Some(sizes), Some(grid)) = (
        effective_capture_sizes(spec, role, serve, img, None),
        v.default_capture_grid.as_ref(),
    ) else {
        return;
    };
    let typed = role_capture_sizes(spec, role);
    if typed.is_empty() || !sizes.values.is_empty() {
        return;
    }
    let scope = role.as_str();
    cx.report(
        Rule::CaptureSizesWithinBatchedTokens,
        sizes.site,
        sizes.field,
        format!(
            "found capture sizes {} on {scope} with `max_num_batched_tokens` {batch}, expected at least one size at most {batch}: vLLM {} drops every size above `max_num_batched_tokens` ({} `_set_cudagraph_sizes`), and with none left vllm-ascend {}'s second sizing pass fails \"Maximum cudagraph size should be greater than or equal to 1\" ({}) at start on image `{}`",
            sizes_text(typed),
            v.version,
            grid.source,
            rel.version,
            grid.positive_largest,
            img.tag
        ),
    );
}

/// [`effective_capture_sizes`]: the sizes, where a message points and how
/// it names them.
pub(crate) struct CaptureSizes {
    /// The sizes.
    pub(crate) values: Vec<u64>,
    /// The typed sizes' first, or the `max_num_seqs` the defaults follow.
    pub(crate) site: Site,
    /// The field at that site.
    pub(crate) field: String,
    /// "capture sizes 1, 2" or how the defaults came about.
    pub(crate) text: String,
}

/// Capture sizes as a message lists them: `1, 2, 4`.
pub(crate) fn sizes_text<'a>(sizes: impl IntoIterator<Item = &'a Spanned<u64>>) -> String {
    sizes
        .into_iter()
        .map(|c| c.value.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Capture sizes as written in one block: with the cudagraph mode they
/// belong to, each at least 1 and listed once.
pub(crate) fn check_capture_sizes(block: &ServeSpec, scope: &str, cx: &mut Cx) {
    let Some(first) = block.capture_sizes.first() else {
        return;
    };
    let field = format!("{scope}.graph.capture_sizes");
    match block.graph.as_ref().map(|g| g.value) {
        Some(GraphMode::Eager) | None => cx.report(
            Rule::GraphCaptureSizes,
            first.site,
            field.clone(),
            format!(
                "found capture sizes with {} in `{scope}`, expected them with a cudagraph mode like `graph: full_decode_only {{ capture_sizes: [...] }}`: without graphs they would be silently unused",
                if block.graph.is_some() { "`graph: eager`" } else { "no `graph`" }
            ),
        ),
        Some(_) => {}
    }
    let mut seen = BTreeSet::new();
    for c in &block.capture_sizes {
        if c.value == 0 {
            cx.report(
                Rule::GraphCaptureSizes,
                c.site,
                field.clone(),
                "found capture size 0, expected sizes of at least 1: each is the token count of one captured graph",
            );
        } else if !seen.insert(c.value) {
            cx.report(
                Rule::GraphCaptureSizes,
                c.site,
                field.clone(),
                format!("found capture size {} twice, expected each size once: a graph is captured once per size", c.value),
            );
        }
    }
}

/// Where in the spec a role's setting was written: the role block if it sets
/// it, else the common block.
pub(crate) fn site_in<'a, T: 'a>(
    spec: &'a LayoutSpec,
    role: Role,
    get: impl Fn(&'a ServeSpec) -> Option<&'a Spanned<T>>,
) -> Site {
    spec.roles
        .get(&role)
        .and_then(&get)
        .or_else(|| get(&spec.serve))
        .map_or(Site::NONE, |s| s.site)
}

pub(crate) fn config_site(spec: &LayoutSpec, role: Role, key: &str) -> Site {
    site_in(spec, role, |b| b.additional_config.get(key))
}

/// Where a nested `additional_config` value (`top.inner`) was written, in
/// the block its top-level key comes from; its top key when not known.
pub(crate) fn config_value_site(spec: &LayoutSpec, role: Role, path: &str) -> Site {
    let top = path.split('.').next().unwrap_or(path);
    let block = spec
        .roles
        .get(&role)
        .filter(|b| b.additional_config.contains_key(top))
        .unwrap_or(&spec.serve);
    block
        .additional_config_sites
        .get(path)
        .copied()
        .filter(|s| s.is_known())
        .unwrap_or_else(|| config_site(spec, role, top))
}

pub(crate) fn env_site(spec: &LayoutSpec, role: Role, name: &str) -> Site {
    let find = |b: &ServeSpec| {
        b.env
            .iter()
            .find(|e| e.name.value == name)
            .map(|e| e.name.site)
    };
    spec.roles
        .get(&role)
        .and_then(find)
        .or_else(|| find(&spec.serve))
        .unwrap_or(Site::NONE)
}

/// Settings for node `node` name a node of the layout; returns the node's
/// plan when they do.
pub(crate) fn node_block_exists<'p>(
    placement: &'p Placement,
    node: u32,
    block: &ServeSpec,
    cx: &mut Cx,
) -> Option<&'p NodePlan> {
    let plan = placement.nodes.get(node as usize);
    if plan.is_none() {
        cx.report(
            Rule::NodeSettingsExist,
            block.site,
            format!("nodes.{node}"),
            format!(
                "found settings for node {node}, expected a node of the layout (0 to {}): they would be silently unused",
                placement.nodes.len().saturating_sub(1)
            ),
        );
    }
    plan
}

/// The extra flags of one serve block against the `vllm serve` of the
/// image (rule `serve_flag_accepted`). Flags the library derives are left
/// to `derived_setting`, misspelt ones to `flag_format`.
pub(crate) fn check_flags_accepted(
    block: &ServeSpec,
    scope: &str,
    image: Option<&'static Image>,
    cx: &mut Cx,
) {
    let Some(img) = image else {
        return;
    };
    let (Ok(v), rel) = (crate::upstream::vllm_of(img), img.facts()) else {
        return;
    };
    let whose = format!("vLLM {} (image `{}`)", v.version, img.tag);
    for (i, f) in block.flags.iter().enumerate() {
        let field = format!("{scope}.flags[{i}]");
        let written = f.name.value.as_str();
        if !is_flag(written) {
            continue;
        }
        let (spelling, dotted) = match written.split_once('.') {
            Some((base, _)) => (base, true),
            None => (written, false),
        };
        if DERIVED_FLAGS.iter().any(|(n, _)| *n == spelling) {
            continue;
        }
        let Some((flag, _)) = v.lookup(spelling) else {
            let expansions = v.expansions(spelling);
            let plain = spelling
                .strip_prefix("--no-")
                .and_then(|base| v.lookup(&format!("--{base}")))
                .map(|(f, _)| f);
            let message = match (expansions.as_slice(), plain) {
                ([one], _) => format!(
                    "found flag `{spelling}`, expected it written in full, `{one}`: {whose} takes a unique prefix for the whole option (argparse's `allow_abbrev`), but pd-dsl's rules compare full names, so a derived, repeated or per-release flag would pass them unseen"
                ),
                ([], Some(base)) => format!(
                    "found flag `{spelling}`, expected `--{}` left out (or given): it is a plain switch in {whose} (`{}`), with no `--no-` form, so `vllm serve` exits at start with `unrecognized arguments`",
                    base.name, base.source
                ),
                ([], None) => format!(
                    "found flag `{spelling}`, expected a `vllm serve` option of {whose}: it exits at start with `unrecognized arguments` (options read from vLLM's own definitions, generated facts `serve_flags`){}",
                    v.nearest(spelling)
                        .map(|n| format!("; did you mean `--{n}`?"))
                        .unwrap_or_default()
                ),
                (many, _) => format!(
                    "found flag `{spelling}`, expected one option written in full: in {whose} it is the start of {}, so `vllm serve` exits at start with `ambiguous option`",
                    many.iter()
                        .map(|m| format!("`{m}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            cx.report(Rule::ServeFlagAccepted, f.name.site, field, message);
            continue;
        };
        use crate::upstream::FlagKind;
        let value = f.value.as_ref();
        let word = value.map(|v| match &v.value {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        });
        let refusal = match (flag.kind, &word) {
            // vllm/utils/argparse_utils.py `FlexibleArgumentParser.parse_args`
            // replaces `--config FILE` with the flags the YAML file holds,
            // reading it at parse time (every vLLM of the images).
            _ if flag.name == "config" => Some(format!(
                "found `{written}`, expected the settings written in the layout: {whose} reads the YAML file it names while parsing and turns its keys into flags, which pd-dsl's rules never see, and exits at start when the file is missing or not `.yaml`/`.yml` (`FlexibleArgumentParser._pull_args_from_config`, vllm/utils/argparse_utils.py)"
            )),
            (kind, _) if dotted && kind != FlagKind::Json => Some(format!(
                "found flag `{written}`, expected `{spelling}` without a dotted sub-key: in {whose} it is not a JSON option, so `vllm serve` exits at start with `unrecognized arguments`"
            )),
            (FlagKind::Switch, Some(w)) => Some(format!(
                "found `{written}` with the value `{w}`, expected the switch alone (`\"{written}\"`{}): in {whose} it takes no value, so the word after it is left over and `vllm serve` exits at start with `unrecognized arguments`",
                if flag.negatable {
                    format!(", or `\"--no-{}\"` to turn it off", flag.name)
                } else {
                    String::new()
                }
            )),
            (FlagKind::Value | FlagKind::Many | FlagKind::Json, None) if !flag.value_optional => {
                Some(format!(
                    "found `{written}` without a value, expected `\"{written}\" = VALUE`: in {whose} it takes one, so `vllm serve` exits at start with `expected one argument`"
                ))
            }
            (FlagKind::Value | FlagKind::Many | FlagKind::Json, Some(w))
                if let Some(why) = v.value_word_refusal(w) =>
            {
                Some(format!(
                    "found `{written} {w}`, expected a value `vllm serve` reads as one: {why}, and it exits at start (`expected one argument` or worse)"
                ))
            }
            (FlagKind::Json, Some(w)) if !dotted && let Some(why) = flag.json_word_refusal(w) => {
                Some(format!(
                    "found `{written} {w}`, expected a JSON value: {whose} parses the word of `{written}` as JSON and {why}, so `vllm serve` exits at start with `argument {written}: invalid ... value` (the option's `type=` in `{}`, generated facts `serve_flags`)",
                    flag.source
                ))
            }
            // A dataclass option's JSON (or a dotted key of it): pydantic
            // validates it as argparse's `type=`, refusing keys the class
            // lacks.
            (FlagKind::Json, Some(w))
                if let Some(why) = match written.split_once('.') {
                    Some((_, sub)) => flag.keys.as_ref().and_then(|k| {
                        k.refusal(std::iter::once(crate::upstream::JsonKeys::top_key(sub)))
                    }),
                    None => flag.json_key_refusal(w),
                } =>
            {
                Some(format!(
                    "found `{written} {w}`, expected keys the option's config class takes: {whose} validates the JSON while parsing and exits at start with `argument --{}: {why}`",
                    flag.name
                ))
            }
            (FlagKind::Value | FlagKind::Many, Some(w)) => {
                let widened = rel.and_then(|r| r.widens_choices(&flag.name));
                let extra = crate::upstream::extra_choices(widened);
                flag.value_refusal(w, extra).map(|why| format!(
                    "found `{written} {w}`, expected a value {whose} accepts: `vllm serve` exits at start with `argument {written}: {why}` (the option's argparse `type=` and `choices` in `{}`, generated facts `serve_flags`{})",
                    flag.source,
                    widened.map_or(String::new(), |w| format!(", and the values vllm-ascend's `pre_register_and_update` appends, {}", w.source))
                )).or_else(|| widened.and_then(|wc| wc.field_refusal(w)).map(|why| format!(
                    "found `{written} {w}`, expected a value the image's `CacheConfig` accepts: argparse takes it, but pydantic refuses it when vLLM builds the config at start: {why}"
                )))
            }
            _ => None,
        };
        if let Some(message) = refusal {
            let word_refused = word.as_deref().is_some_and(|w| {
                v.value_word_refusal(w).is_some()
                    || flag.json_word_refusal(w).is_some()
                    || flag.json_key_refusal(w).is_some()
            });
            let site = match flag.kind {
                FlagKind::Switch if value.is_some() => value.map_or(f.name.site, |v| v.site),
                FlagKind::Json if word_refused && !dotted => value.map_or(f.name.site, |v| v.site),
                FlagKind::Value | FlagKind::Many if !dotted => {
                    value.map_or(f.name.site, |v| v.site)
                }
                _ => f.name.site,
            };
            cx.report(Rule::ServeFlagAccepted, site, field, message);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::UNEXPRESSED_GROUPS;

    /// The parallel-group flags the rule refuses are real `vllm serve`
    /// flags at every vLLM of the embedded tables, so the rule cannot
    /// silently match nothing after an upstream rename.
    #[test]
    fn unexpressed_groups_are_vllm_flags_everywhere() {
        for v in crate::upstream::vllm_versions() {
            let Ok(t) = crate::upstream::vllm(v) else {
                unreachable!("vllm {v} table parses")
            };
            for (flag, _, _) in UNEXPRESSED_GROUPS {
                let name = flag.trim_start_matches("--");
                assert!(t.flag(name).is_some(), "vllm {v} has no `{flag}`");
            }
        }
    }
}
