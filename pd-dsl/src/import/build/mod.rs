//! From what the front ends read (nodes with their serve options and env) to
//! a [`LayoutSpec`]: engines, topology, ports, connector, engine ids and
//! per-role settings. Values pd-dsl derives are compared, not copied;
//! values that differ are kept as overrides (engine ids, kv ports) or
//! reported as notes.

use super::{Imported, Input, InputRank, Loc, Note, Options, SourceMap};
use crate::spec::{
    BenchSpec, ConnectorKind, FigureSpec, HardwareSpec, Json, LayoutSpec, ProvenanceSpec, Role,
    ServeSpec,
};
use crate::{Spanned, tables};
use std::collections::BTreeMap;

mod connector;
mod engines;
mod flags;
mod input;
mod kv;
mod ports;
mod proxy;
mod ranks;
mod serve;

use connector::connector_of;
use engines::{engines_of, pcp_v, ranks_per_node, take_pcp, topology};
use flags::{DERIVED_ENV, PCP_FLAG, VLLM_DP_RPC_PORT};
pub(crate) use flags::{RANK_FLAGS, is_switch, normalise_flag, number};
pub(crate) use input::{Arg, BenchIn, Deployment, FigureIn, NodeIn, P, PoolIn, ProxyIn, p};
use kv::{kv_of, pool_of};
use ports::ports_of;
use proxy::{proxy_of, proxy_order};
use ranks::{input_rank, out_of_order};
pub use serve::PROXY_ENV;
use serve::{factor_common, serve_block};

type Fail = (Loc, String);

struct Engine {
    role: Role,
    dp: P<u64>,
    tp: P<u64>,
    /// `--prefill-context-parallel-size` above 1, as written.
    pcp: Option<P<u64>>,
    /// Input node indices, in rank order.
    nodes: Vec<usize>,
    kv: Option<KvIn>,
    /// Each node's `engine_id` as written (upstream gives a multi-node
    /// engine's nodes their own).
    node_ids: Vec<Option<P<u64>>>,
}

#[derive(Clone, Debug)]
struct KvIn {
    kind: P<ConnectorKind>,
    port: Option<P<u64>>,
    engine_id: Option<P<u64>>,
    extra: BTreeMap<String, P<Json>>,
    shapes: BTreeMap<String, (P<Json>, Loc)>,
    /// Top-level keys pd-dsl does not render (`kv_connector_module_path`,
    /// `kv_buffer_device`), with their values.
    dropped: Vec<(String, Json)>,
    /// `AscendStoreConnector`'s extra config, when a MultiConnector chains
    /// it after the PD connector (a KV pool).
    store: Option<P<serde_json::Map<String, Json>>>,
}

/// The deployment as a spec, with the errors the build went on after
/// (empty: the import succeeds).
pub(crate) type Built = (Imported, Vec<(Loc, String)>);

pub(crate) fn build(
    mut d: Deployment,
    mut map: SourceMap,
    inputs: &[Input],
    opts: &Options,
) -> Result<Built, (SourceMap, Loc, String)> {
    match build_inner(&mut d, &mut map, inputs, opts) {
        Ok((spec, ranks)) => Ok((
            Imported {
                proxy: spec.proxy.as_ref().and(d.proxy_command),
                spec,
                map,
                notes: d.notes,
                ranks,
            },
            d.errors,
        )),
        Err((at, m)) => Err((map, at, m)),
    }
}

fn build_inner(
    d: &mut Deployment,
    map: &mut SourceMap,
    inputs: &[Input],
    opts: &Options,
) -> Result<(LayoutSpec, Vec<InputRank>), Fail> {
    let file0 = Loc {
        file: 0,
        line: 0,
        column: 0,
    };
    let node_pcp = take_pcp(&mut d.nodes)?;

    let Some(first) = d.nodes.first() else {
        return Err((
            file0,
            "found no node that runs `vllm serve`, expected at least one: nothing to import".into(),
        ));
    };
    let mut s = |v: Loc| map.site(v);

    // --- model ---------------------------------------------------------
    let model_at = first.model.clone();
    for n in &d.nodes {
        if n.model.v != model_at.v {
            return Err((
                n.model.at,
                format!(
                    "found model `{}` here and `{}` on another node, expected one model per deployment",
                    n.model.v, model_at.v
                ),
            ));
        }
    }
    // A path equal to the table's default path names its model too.
    let by_path = || {
        tables::MODELS.iter().copied().find(|m| {
            m.default_path.trim_end_matches('/') == model_at.v.trim().trim_end_matches('/')
        })
    };
    let Some(model) = tables::model_by_hub_id(&model_at.v).or_else(by_path) else {
        let known: Vec<String> = tables::MODELS
            .iter()
            .flat_map(|m| m.hub_ids.iter().map(|h| format!("`{h}`")))
            .collect();
        return Err((
            model_at.at,
            format!(
                "found model `{}`, expected a model of the table (hub id, weights name or a path ending in one): known are {}",
                model_at.v,
                known.join(", ")
            ),
        ));
    };
    let model_path = if model_at.v.starts_with('/')
        && model_at.v.trim_end_matches('/') != model.default_path.trim_end_matches('/')
    {
        Some(Spanned::new(model_at.v.clone(), s(model_at.at)))
    } else {
        if !model_at.v.starts_with('/') {
            d.notes.push(Note {
                at: model_at.at,
                what: format!("model `{}` loaded from the hub", model_at.v),
                why: format!(
                    "pd-dsl serves weights from a path; the model table's is `{}`",
                    model.default_path
                ),
            });
        }
        None
    };

    // --- engines -----------------------------------------------------------
    let engines = engines_of(&d.nodes, &node_pcp, &mut d.errors)?;

    // --- hardware ------------------------------------------------------------
    let comm_res = engines
        .iter()
        .filter_map(|e| e.kv.as_ref())
        .any(|k| k.extra.contains_key("ascend_local_comm_res_path"));
    let hw_id: String = match (&opts.hardware, &d.npus) {
        (Some(h), _) => h.clone(),
        (None, Some(npus)) => match npus.v {
            16 => "a3".into(),
            8 if comm_res => "ascend_950dt".into(),
            8 => "a2".into(),
            n => {
                return Err((
                    npus.at,
                    format!(
                        "found `npu_per_node: {n}`, expected 16 (Atlas 800 A3) or 8 (A2, 950DT): no other node kind is in the hardware table"
                    ),
                ));
            }
        },
        (None, None) => {
            let most = d
                .nodes
                .iter()
                .zip(&node_pcp)
                .map(|(n, pcp)| n.dp_local.v * n.tp.v * pcp_v(pcp))
                .max()
                .unwrap_or(0);
            if comm_res {
                "ascend_950dt".into()
            } else if most > 8 {
                "a3".into()
            } else {
                return Err((
                    first.at,
                    format!(
                        "found nodes using at most {most} NPUs, expected `--hardware a2|a3|ascend_950dt`: the scripts do not say which node kind they run on"
                    ),
                ));
            }
        }
    };
    let Some(hw) = tables::hardware(&hw_id) else {
        return Err((
            file0,
            format!(
                "found hardware `{hw_id}`, expected one of `a2`, `a3`, `ascend_950dt`{}",
                crate::rules::did_you_mean(&hw_id, tables::HARDWARE.iter().map(|h| h.id))
            ),
        ));
    };
    let npus = hw.npus_per_node;

    // --- ranks per node, node coverage --------------------------------------
    let mut order: Vec<usize> = Vec::new(); // engine indices in pd-dsl order
    for role in [Role::Prefill, Role::Decode, Role::Mixed] {
        order.extend((0..engines.len()).filter(|&i| engines[i].role == role));
    }
    let engine_rpn = ranks_per_node(&d.nodes, &engines)?;
    let groups = topology(&d.nodes, &engines, &order, &engine_rpn, npus, &mut s);

    // --- ports -------------------------------------------------------------------
    let ports = ports_of(first, &d.nodes, &mut d.notes, &engines, &mut s);

    // --- connector, engine ids ---------------------------------------------------
    let pd = engines.iter().any(|e| e.role != Role::Mixed);
    let (connector, connector_at, engine_ids) = if pd {
        let (c, at, ids) = connector_of(
            first,
            &d.nodes,
            &mut d.notes,
            &mut d.pool,
            &engines,
            &order,
            &mut s,
        )?;
        (Some(c), at, ids)
    } else {
        (None, file0, None)
    };

    // --- proxy -------------------------------------------------------------------
    let proxy = if pd {
        Some(proxy_of(
            &d.proxy,
            &d.proxy_command,
            &connector,
            connector_at,
            &engines,
            &mut d.notes,
            &mut s,
        ))
    } else {
        None
    };
    // The proxy balances over its lists in order; pd-dsl derives them,
    // every rank once, in node order, then port.
    if let (true, Some(cmd)) = (pd, &d.proxy_command) {
        let at = d.proxy.as_ref().map_or(connector_at, |px| px.port.at);
        proxy_order(cmd, at, &d.nodes, &engines, &order, &mut d.notes);
    }

    // --- serve settings per role ----------------------------------------------------
    let mut roles: BTreeMap<Role, ServeSpec> = BTreeMap::new();
    let mut served: Option<P<String>> = None;
    // The layout's node index of each input node: engines in pd-dsl order,
    // each engine's nodes in order (as the ranks below are numbered).
    let mut layout_index: BTreeMap<usize, u32> = BTreeMap::new();
    for &ei in &order {
        for &ni in &engines[ei].nodes {
            let next = layout_index.len() as u32;
            layout_index.insert(ni, next);
        }
    }
    let mut per_node: BTreeMap<u32, ServeSpec> = BTreeMap::new();
    for role in [Role::Prefill, Role::Decode, Role::Mixed] {
        let nodes: Vec<(usize, &NodeIn)> = d
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.role == role)
            .collect();
        if nodes.is_empty() {
            continue;
        }
        // Each node's settings; what every node of the role sets alike is
        // the role's, the rest each node's own (`nodes:`), as upstream runs
        // one `vllm serve` per node.
        let mut blocks: BTreeMap<u32, ServeSpec> = BTreeMap::new();
        let mut notes = Vec::new();
        for (ni, n) in &nodes {
            let block = serve_block(n, model, &mut served, &mut notes, &mut s)?;
            blocks.insert(layout_index.get(ni).copied().unwrap_or(*ni as u32), block);
        }
        for note in notes {
            if !d.notes.iter().any(|x| x.what == note.what) {
                d.notes.push(note);
            }
        }
        let block = factor_common(&mut blocks);
        for (node, b) in blocks {
            if !b.is_empty() {
                per_node.insert(node, b);
            }
        }
        roles.insert(role, block);
    }
    let serve = factor_common(&mut roles);
    // Without `--served-model-name` vLLM serves the model under the model
    // argument; pd-dsl always passes one (a hub id is no valid served name,
    // rule `served_name_format`), so clients must ask for another name.
    if served.is_none() && model_at.v != model.served_name {
        d.notes.push(Note {
            at: model_at.at,
            what: format!(
                "no `--served-model-name` (vLLM serves the model as `{}`)",
                model_at.v
            ),
            why: format!(
                "pd-dsl passes the model table's `--served-model-name {}`: clients ask for that name",
                model.served_name
            ),
        });
    }
    let served_model_name = served
        .filter(|x| x.v != model.served_name)
        .map(|x| Spanned::new(x.v, s(x.at)));

    // --- identity -----------------------------------------------------------------
    let image_tag = opts
        .image
        .clone()
        .or_else(|| {
            tables::IMAGES
                .iter()
                .rev()
                .find(|i| i.reference(hw).is_some())
                .map(|i| i.tag.to_owned())
        })
        .unwrap_or_default();
    let recorded = opts.recorded.clone().unwrap_or_else(|| {
        tables::image(&image_tag)
            .map(|i| i.date.to_owned())
            .unwrap_or_else(|| "1970-01-01".into())
    });
    let name = opts.name.clone().unwrap_or_else(|| {
        // A script set is named after its directory, a config after its file.
        let first = inputs.first().map(|i| i.name.as_str()).unwrap_or_default();
        let mut parts = first.rsplit('/');
        let file = parts.next().unwrap_or(first);
        let stem = match parts.next() {
            Some(dir) if inputs.len() > 1 && !dir.is_empty() && dir != "." => dir.to_owned(),
            // The file name without its extension (`DeepSeek_V3.1T_PD.yaml`
            // → `deepseek_v3.1t_pd`, not `deepseek_v3`).
            _ => file
                .rsplit_once('.')
                .map_or(file, |(stem, _)| stem)
                .to_owned(),
        };
        let clean: String = stem
            .to_ascii_lowercase()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        // A layout name part starts with a letter or digit (`.tmpXYZ`).
        let clean = clean
            .trim_start_matches(|c: char| !c.is_ascii_alphanumeric())
            .trim_end_matches('-');
        format!(
            "imported/{}",
            if clean.is_empty() { "layout" } else { clean }
        )
    });
    let spec = LayoutSpec {
        summary: vec![format!(
            "Imported from {}.",
            inputs
                .iter()
                .map(|i| format!("`{}`", i.name))
                .collect::<Vec<_>>()
                .join(", ")
        )],
        name: Spanned::bare(name),
        model: Spanned::new(model.id.to_owned(), s(model_at.at)),
        hardware: HardwareSpec::All(Spanned::bare(hw.id.to_owned())),
        image: Spanned::bare(image_tag),
        topology: groups,
        topology_site: s(first.at),
        connector,
        ports,
        proxy,
        engine_ids,
        model_path,
        served_model_name,
        serve,
        roles,
        nodes: per_node,
        provenance: ProvenanceSpec {
            recorded: Spanned::bare(recorded),
            derived_from: None,
            sources: inputs
                .iter()
                .map(|i| Spanned::bare(format!("imported from {}", i.name)))
                .collect(),
            refresh: Vec::new(),
        },
        figures: d
            .figures
            .iter()
            .map(|(at, metric, value, context)| FigureSpec {
                metric: Spanned::new(metric.clone(), s(*at)),
                value: Spanned::new(value.clone(), s(*at)),
                context: Spanned::new(context.clone(), s(*at)),
            })
            .collect(),
        bench: d.bench.as_ref().map(|(at, b)| BenchSpec {
            input_len: Spanned::new(b.input_len, s(*at)),
            output_len: Spanned::new(b.output_len, s(*at)),
            num_prompts: Spanned::new(b.num_prompts, s(*at)),
            request_rate: b.request_rate.clone().map(|r| Spanned::new(r, s(*at))),
            max_concurrency: b.max_concurrency.map(|c| Spanned::new(c, s(*at))),
        }),
        ..LayoutSpec::default()
    };

    // --- the input's ranks, in pd-dsl node order -------------------------------------
    let mut ranks = Vec::new();
    let mut node_index = 0usize;
    for &ei in &order {
        let e = &engines[ei];
        for &ni in &e.nodes {
            let n = &d.nodes[ni];
            for local in 0..n.dp_local.v {
                ranks.push(input_rank(n, node_index, local, e.kv.is_some()));
            }
            node_index += 1;
        }
    }
    Ok((spec, ranks))
}
