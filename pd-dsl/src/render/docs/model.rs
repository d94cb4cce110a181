//! The documents view: everything a layout's `README.md`, its entry on the
//! catalog index and its `meta.yaml` say, built once from the checked
//! [`Layout`] by [`docs_view`]. The templates in `templates/docs/` read this
//! and nothing else; values the serializable views of [`view`] already carry
//! (the `meta.yaml` document, the `index.json` row, the node and proxy views)
//! are reused, not recomputed.

use crate::render::view::{self, NodeView};
use crate::{DeployStatus, Layout, Verification};

/// The banner a layout carries when its image cannot run it.
#[derive(Clone, Debug)]
pub struct Banner {
    /// The image tag that cannot run the layout.
    pub image_tag: &'static str,
    /// The acknowledged rule that blocks it.
    pub rule: &'static str,
    /// Why: the rule's first finding, else its summary.
    pub why: String,
    /// The first image of the table that can run it, if any.
    pub first_image: Option<&'static str>,
}

/// What the README says about the layout's `k8s/` manifests (as the
/// committed catalog renders them, with the default settings).
#[derive(Clone, Debug)]
pub struct K8sDoc {
    /// One LeaderWorkerSet per engine, in engine order.
    pub sets: Vec<String>,
    /// The Service clients reach: the proxy's (PD) or the API servers' (mixed).
    pub service: String,
}

/// What each role runs, as a table: one row per `vllm serve` option any role
/// sets, one column per role (`-` where a role does not set it).
#[derive(Clone, Debug, Default)]
pub struct RoleSettings {
    /// Role names, in role order.
    pub roles: Vec<String>,
    /// Option, then its value per role.
    pub rows: Vec<(String, Vec<String>)>,
}

/// One line of the topology table.
#[derive(Clone, Debug)]
pub struct TopologyRow {
    /// The node as the serializable views show it.
    pub node: NodeView,
    /// `engine_id` or `-`.
    pub engine_id: String,
    /// `first-last of dp`, or `-` for a node without ranks.
    pub ranks: String,
    /// `first-last (n per rank)`, or `-`.
    pub devices: String,
    /// API ports as a range or a list, or `- (headless)`.
    pub ports: String,
    /// The node's kv handshake span `first-last`, or `-`.
    pub kv: String,
}

/// The topology table of the README and `catalog show`.
#[derive(Clone, Debug)]
pub struct TopologyTable {
    /// One row per node, in node order.
    pub rows: Vec<TopologyRow>,
}

/// One role's line of the memory-budget table (values per rank, as text).
#[derive(Clone, Debug)]
pub struct BudgetRow {
    /// Role.
    pub role: String,
    /// `dp2tp8, experts over 16`.
    pub shape: String,
    /// What vLLM may use: `54.86 GiB (0.9 x 60.96)`.
    pub usable: String,
    /// Weights in GiB.
    pub weights: String,
    /// Reserves in GiB.
    pub reserves: String,
    /// KV cache in GiB.
    pub kv: String,
    /// KV bytes per token.
    pub kv_per_token: String,
    /// Tokens the KV cache holds.
    pub kv_tokens: String,
    /// `65536 (fits 76288)`.
    pub max_len: String,
    /// Requests of `max_model_len` at once.
    pub at_max_len: String,
    /// Requests of the declared workload at once over the role, or `-`.
    pub workload: String,
}

/// The budget rows of a layout, from the view's budget.
pub fn budget_rows(budget: &[crate::capacity::RoleBudget]) -> Vec<BudgetRow> {
    use crate::capacity::{gib, gib_signed};
    budget
        .iter()
        .map(|b| BudgetRow {
            role: b.role.to_string(),
            shape: format!(
                "{}, experts over {}",
                pd_dsl_core::spec::shape_text(u64::from(b.dp), u64::from(b.tp), u64::from(b.pcp)),
                b.ep
            ),
            usable: format!(
                "{} GiB ({}.{:03} x {})",
                gib(b.requested_bytes),
                b.utilization_milli / 1000,
                b.utilization_milli % 1000,
                gib(b.total_bytes)
            ),
            weights: format!("{} GiB", gib(b.weights.total())),
            reserves: format!("{} GiB", gib(b.reserves.total())),
            kv: format!("{} GiB", gib_signed(b.kv_bytes)),
            kv_per_token: if b.kv_bytes_per_request > 0 {
                format!(
                    "{} B + {}.{} MiB per request",
                    b.kv_bytes_per_token,
                    b.kv_bytes_per_request * 10 / crate::capacity::MIB / 10,
                    b.kv_bytes_per_request * 10 / crate::capacity::MIB % 10
                )
            } else {
                format!("{} B", b.kv_bytes_per_token)
            } + if b.estimate { " (estimate)" } else { "" },
            kv_tokens: b.kv_tokens.to_string(),
            max_len: format!("{} (fits {})", b.max_model_len, b.max_len_fits),
            at_max_len: b.requests_at_max_len.to_string(),
            workload: b.workload.map_or("-".to_owned(), |w| {
                format!(
                    "{} requests of {} tokens ({} per rank x {} ranks; `max_num_seqs` {} in all)",
                    w.fit_total, w.tokens_per_request, w.fit_per_rank, w.ranks, w.seqs_total
                )
            }),
        })
        .collect()
}

/// Everything the layout's documents say.
#[derive(Clone, Debug)]
pub struct DocsView {
    /// The `meta.yaml` document; the README reads its facts from here.
    pub meta: view::Meta,
    /// The `index.json` row; the index page reads its row from here.
    pub index_row: view::IndexEntry,
    /// The part of the name after its family (the index link text).
    pub variant: String,
    /// A PD layout (engines behind a proxy) rather than a mixed one.
    pub pd: bool,
    /// The catalog root relative to the layout's directory (`../../`): the
    /// rules reference is there.
    pub root: String,
    /// What each role runs: its `vllm serve` options after the derived ones
    /// (filled in by the layout model from its role models).
    pub role_settings: RoleSettings,
    /// The banner when the image cannot run the layout.
    pub banner: Option<Banner>,
    /// Summary paragraphs, trimmed.
    pub summary: Vec<String>,
    /// When to use it, trimmed.
    pub workload: Option<String>,
    /// Where the model is published.
    pub model_source: &'static str,
    /// The proxy's script and port (PD).
    pub proxy: Option<view::ProxyView>,
    /// The port clients send requests to: the proxy's, else the API port.
    pub endpoint_port: u32,
    /// The deployment status label.
    pub status: String,
    /// The index's verified column: the status when the image cannot run
    /// the layout, else `true`/`false`.
    pub verified_or_status: String,
    /// `kv_connector_extra_config` as compact JSON (PD).
    pub kv_connector_extra_config: Option<String>,
    /// The verification names an image, so a new image resets it.
    pub image_bound: bool,
    /// The topology table.
    pub topology: TopologyTable,
    /// The scripts the layout's directory holds, in the index's order.
    pub scripts: Vec<&'static str>,
    /// The last node index.
    pub last_node: usize,
    /// The Kubernetes manifests, when their names derive.
    pub k8s: Option<K8sDoc>,
    /// What each later image changes for the layout.
    pub newer: NewerDoc,
    /// The memory budget per role.
    pub budget: Vec<BudgetRow>,
    /// Why some role has no budget.
    pub budget_not_planned: Option<String>,
    /// What the layout serves at its workload.
    pub estimate: Option<EstimateDoc>,
}

/// The "What it serves" section (values as text).
#[derive(Clone, Debug)]
pub struct EstimateDoc {
    /// `3500-token prompts, 1500 output tokens, 1024 at once, 12 requests/s`.
    pub workload: String,
    /// Output tokens/s over the deployment, with the band.
    pub output: String,
    /// Input + output tokens/s.
    pub total: String,
    /// Output tokens/s per NPU.
    pub per_npu: String,
    /// Requests/s.
    pub requests: String,
    /// TTFT (of which KV transfer).
    pub ttft: String,
    /// TPOT.
    pub tpot: String,
    /// What bounds it.
    pub bound: String,
    /// Per role: `role`, ranks, batch per rank, capacity.
    pub roles: Vec<EstimateRoleRow>,
    /// The P:D balance line, if one side idles.
    pub balance: Option<String>,
    /// The band in percent.
    pub band: String,
}

/// One role's line of the estimate table.
#[derive(Clone, Debug)]
pub struct EstimateRoleRow {
    /// Role.
    pub role: String,
    /// DP ranks over the role's engines.
    pub ranks: String,
    /// Requests a decode rank runs at once (`-` for prefill).
    pub batch: String,
    /// Prefill seconds per prompt on one rank (`-` for decode).
    pub prefill: String,
    /// Decode step, ms (`-` for prefill).
    pub step: String,
    /// Requests/s the role can take.
    pub capacity: String,
}

/// The estimate section of a layout.
pub fn estimate_doc(e: &crate::estimate::Estimate) -> EstimateDoc {
    let w = &e.workload;
    let mut workload = format!(
        "{}-token prompts, {} output tokens",
        w.input_len, w.output_len
    );
    if w.prefix_rate > 0.0 {
        workload.push_str(&format!(
            ", {:.0}% prefix-cache hits",
            w.prefix_rate * 100.0
        ));
    }
    if let Some(c) = w.concurrency {
        workload.push_str(&format!(", {c} at once"));
    }
    if let Some(r) = w.request_rate {
        workload.push_str(&format!(", {r} requests/s"));
    }
    let dash = || "-".to_owned();
    EstimateDoc {
        workload,
        output: format!("{:.0}", e.output_tokens_per_s),
        total: format!("{:.0}", e.total_tokens_per_s),
        per_npu: format!("{:.1}", e.output_tokens_per_s_per_npu),
        requests: format!("{:.2}", e.requests_per_s),
        ttft: match e.queue_s {
            Some(q) if q >= 0.005 => format!(
                "{} (waiting {q:.2} s, KV transfer {:.0} ms)",
                e.ttft_text(),
                e.kv_transfer_s * 1e3
            ),
            Some(_) => format!(
                "{} (KV transfer {:.0} ms)",
                e.ttft_text(),
                e.kv_transfer_s * 1e3
            ),
            None => format!(
                "{}: the requests offered outrun what the layout completes, so they wait longer the longer the run",
                crate::estimate::NO_BOUND
            ),
        },
        tpot: format!("{:.1} ms", e.tpot_ms),
        bound: e.bound.to_owned(),
        roles: e
            .roles
            .iter()
            .map(|r| EstimateRoleRow {
                role: r.role.to_string(),
                ranks: r.ranks.to_string(),
                batch: if r.step_s > 0.0 {
                    format!("{:.0}", r.batch_per_rank)
                } else {
                    dash()
                },
                prefill: if r.prefill_s > 0.0 {
                    format!("{:.2} s", r.prefill_s)
                } else {
                    dash()
                },
                step: if r.step_s > 0.0 {
                    format!(
                        "{:.1} ms, {:.2} tokens per request",
                        r.step_s * 1e3,
                        r.tokens_per_step
                    )
                } else {
                    dash()
                },
                capacity: format!("{:.2}", r.capacity_rps),
            })
            .collect(),
        balance: e.balance.as_ref().map(crate::estimate::Balance::summary),
        band: format!("{:.0}", e.band * 100.0),
    }
}

/// The "Newer images" section: one row per set of changes (the later
/// images that change the same things for the layout share a row), the
/// images that change nothing collapsed into one list.
#[derive(Clone, Debug, Default)]
pub struct NewerDoc {
    /// The layout's own image tag.
    pub own: &'static str,
    /// One row per distinct set of changes, in the order of the first image
    /// that has it.
    pub changed: Vec<NewerRow>,
    /// Later images that change nothing for the layout (`v0.26.0rc1 to v0.30.0rc2`).
    pub unchanged: String,
    /// How many later images have a build for the hardware.
    pub count: usize,
}

/// The later images with one set of changes.
#[derive(Clone, Debug)]
pub struct NewerRow {
    /// The images, as runs of table rows (`v0.22.1rc1 to v0.30.0rc2`).
    pub images: String,
    /// What changes, one clause each.
    pub lines: Vec<String>,
}

/// The "Newer images" section of a layout.
pub fn newer_doc(layout: &Layout) -> NewerDoc {
    let all = layout.newer_images();
    let mut groups: Vec<(Vec<String>, Vec<&'static crate::tables::Image>)> = Vec::new();
    let mut same = Vec::new();
    for n in &all {
        let Some(img) = crate::tables::image(n.tag) else {
            continue;
        };
        if n.is_unchanged() {
            same.push(img);
            continue;
        }
        // A message that names the newer image's tag names "the newer
        // image" instead, so that images with the same change share a row.
        let lines: Vec<String> = n
            .lines()
            .iter()
            .map(|l| {
                l.replace(&format!("image `{}`", n.tag), "the newer image")
                    .replace(&format!("`{}`", n.tag), "the newer image")
            })
            .collect();
        match groups.iter_mut().find(|(l, _)| *l == lines) {
            Some((_, imgs)) => imgs.push(img),
            None => groups.push((lines, vec![img])),
        }
    }
    NewerDoc {
        own: layout.image.tag,
        changed: groups
            .into_iter()
            .map(|(lines, imgs)| NewerRow {
                images: crate::upstream::describe(&imgs),
                lines,
            })
            .collect(),
        unchanged: if same.is_empty() {
            String::new()
        } else {
            crate::upstream::describe(&same)
        },
        count: all.len(),
    }
}

/// Builds the documents view of a layout.
pub fn docs_view(layout: &Layout) -> DocsView {
    let meta = view::meta(layout);
    let status = meta.deploy;
    let pd = layout.is_pd();
    DocsView {
        role_settings: RoleSettings::default(),
        root: crate::render::site::root_of(layout.name()),
        index_row: view::index_entry(layout),
        variant: variant(layout.name()).to_owned(),
        pd,
        banner: banner(layout),
        summary: meta.summary.iter().map(|p| p.trim().to_owned()).collect(),
        workload: meta.workload.as_ref().map(|w| w.trim().to_owned()),
        model_source: layout.model.source,
        endpoint_port: meta.proxy.as_ref().map_or(meta.api_port, |p| p.port),
        proxy: meta.proxy.clone(),
        status: status.label(),
        verified_or_status: if status.is_deployable() {
            meta.verified.to_string()
        } else {
            status.label()
        },
        kv_connector_extra_config: meta
            .kv_connector_extra_config
            .as_ref()
            .map(|j| j.to_string()),
        image_bound: matches!(
            layout.spec.verified.value,
            Verification::On(_) | Verification::Before(_)
        ),
        topology: topology(&meta.nodes),
        scripts: scripts(pd),
        last_node: meta.node_count.saturating_sub(1),
        k8s: k8s_doc(layout),
        newer: newer_doc(layout),
        budget: budget_rows(&crate::capacity::budget(layout)),
        budget_not_planned: crate::capacity::not_planned(layout),
        estimate: crate::estimate::estimate(layout).as_ref().map(estimate_doc),
        meta,
    }
}

fn k8s_doc(layout: &Layout) -> Option<K8sDoc> {
    use crate::render::k8s;
    let names = k8s::names(layout).ok()?;
    let service = if layout.proxy.is_some() {
        "proxy"
    } else {
        "api"
    };
    Some(K8sDoc {
        service: format!("{}-{service}", names.base),
        sets: names.sets.into_iter().map(|s| s.name).collect(),
    })
}

/// The part of a layout name after its family.
fn variant(name: &str) -> &str {
    name.rsplit_once('/').map_or(name, |(_, v)| v)
}

fn banner(layout: &Layout) -> Option<Banner> {
    let DeployStatus::BlockedOnImage { rule, first_image } = layout.deploy_status() else {
        return None;
    };
    let why = layout
        .acknowledged
        .iter()
        .find(|a| a.rule == rule)
        .and_then(|a| a.findings.first())
        .map_or_else(|| rule.summary().to_owned(), Clone::clone);
    Some(Banner {
        image_tag: layout.image.tag,
        rule: rule.name(),
        why,
        first_image,
    })
}

/// The files of a layout's directory the index links, run order first.
fn scripts(pd: bool) -> Vec<&'static str> {
    let mut scripts = vec!["run.sh", "preflight.sh"];
    if pd {
        scripts.extend([
            "run_dp_template_prefill.sh",
            "run_dp_template_decode.sh",
            "launch_online_dp.py",
            "proxy.sh",
        ]);
    } else {
        scripts.push("run_mixed.sh");
    }
    scripts.extend(["verify.sh", "bench.sh", "docker.sh", "stop.sh"]);
    scripts
}

/// The topology table from the node views.
pub fn topology(nodes: &[NodeView]) -> TopologyTable {
    TopologyTable {
        rows: nodes.iter().map(topology_row).collect(),
    }
}

fn topology_row(n: &NodeView) -> TopologyRow {
    let ranks = match (n.ranks.first(), n.ranks.last()) {
        (Some(a), Some(b)) => format!("{}-{} of {}", a.dp_rank, b.dp_rank, n.dp_size),
        _ => "-".to_owned(),
    };
    let ports: Vec<u32> = n.ranks.iter().filter_map(|r| r.api_port).collect();
    let kv = match (
        n.ranks.first().and_then(|r| r.kv_span),
        n.ranks.last().and_then(|r| r.kv_span),
    ) {
        (Some((a, _)), Some((_, b))) => format!("{a}-{b}"),
        _ => "-".to_owned(),
    };
    TopologyRow {
        engine_id: n
            .engine_id
            .map_or_else(|| "-".to_owned(), |i| i.to_string()),
        ranks,
        devices: devices(n),
        ports: if ports.is_empty() {
            "- (headless)".to_owned()
        } else {
            list_ports(&ports)
        },
        kv,
        node: n.clone(),
    }
}

/// `first-last (n per rank)` over every device of the node's ranks.
fn devices(n: &NodeView) -> String {
    let all: Vec<u32> = n
        .ranks
        .iter()
        .flat_map(|r| r.devices.iter().copied())
        .collect();
    match (all.first(), all.last()) {
        (Some(a), Some(b)) => format!(
            "{a}-{b} ({} per rank)",
            n.ranks.first().map_or(0, |r| r.devices.len())
        ),
        _ => "-".to_owned(),
    }
}

/// A run of consecutive ports as `a-b`, anything else as a list.
fn list_ports(ports: &[u32]) -> String {
    view::span_text(ports, ", ")
}
