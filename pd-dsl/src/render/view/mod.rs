//! Serializable views of a layout: the stable `catalog show --format json`
//! interface ([`LayoutView`]), the catalog index row ([`IndexEntry`]) and the
//! machine-readable `meta.yaml` ([`Meta`]).
//!
//! # `catalog show NAME --format json` (stable interface)
//!
//! ```text
//! {
//!   "name": "family/variant",            layout name
//!   "model": "deepseek_v3_1_w8a8_mtp_quarot",   model table id
//!   "hardware": "a3",                     hardware table id
//!   "image": "quay.io/ascend/vllm-ascend:v0.21.0rc1-a3",
//!   "verified": false,                    true only when verified on exactly this image
//!   "deploy": {"status": "deployable"}    or {"status": "blocked_on_image", "rule": "connector_hybrid_kv",
//!                                         "first_image": "v0.22.1rc1"} (null when no image can run it yet)
//!   "connector": "MooncakeConnectorV1",   registered kv_connector name, null for mixed
//!   "nodes": [{
//!     "index": 0, "role": "prefill", "engine": 0, "engine_id": 0,
//!     "dp_size": 2, "tp_size": 8, "dp_size_local": 2, "dp_rank_start": 0,
//!     "dp_master": 0,                     node index of the engine's DP master
//!     "kv_port": 30000,                   engine kv_port base (null for mixed)
//!     "headless": false,
//!     "ranks": [{"dp_rank": 0, "devices": [0,..,7], "api_port": 7100, "kv_span": [30000, 30007]}]
//!   }],
//!   "proxy": {"node": 0, "port": 1999, "script": "load_balance_proxy_server_example.py",
//!             "prefill": [[0, 7100], ...], "decode": [[2, 7100], ...]}   null for mixed
//!   "newer_images": [{                  every later image of the table with a build for the
//!                                       hardware, in version order; the layout stays on its own
//!     "tag": "v0.26.0rc1", "vllm": "0.26.0",
//!     "findings_added": [{"rule": "...", "field": "decode.additional_config.x", "message": "..."}],
//!     "findings_removed": [...],        findings of the own image this one clears (own message)
//!     "flags_unaccepted": ["--x"],      `vllm serve` flags the layout passes that this vLLM refuses
//!     "config_keys_unread": ["key", "key.sub_key"],   read by the own release, not by this one
//!     "env_unread": ["VLLM_ASCEND_X"],  read by vllm-ascend on the own image, not on this one
//!     "connector_unregistered": null,   the layout's kv_connector when this release lacks it
//!     "proxy_flags_removed": ["--x"]    flags of the layout's proxy script this release dropped
//!   }]
//!   "budget": [{                          memory budget of one rank per role (`pd_dsl::capacity`),
//!     "role": "prefill", "dp": 2, "tp": 8,  empty when the model has no dimensions
//!     "ep": 16,                           ranks the routed experts are split over
//!     "total_bytes": .., "requested_bytes": .., "utilization_milli": 900,
//!     "weights": {"embedding", "dense", "routed", "router", "mtp"},   bytes per rank
//!     "reserves": {"activations", "sampler", "hccl", "graph", "runtime"},
//!     "kv_bytes": .., "kv_bytes_per_token": 71424, "block_size": 128, "kv_blocks": ..,
//!     "kv_tokens": ..,                    tokens the rank's KV cache holds
//!     "max_model_len": 65536, "model_max_len": 163840,
//!     "max_len_fits": ..,                 the largest `max_model_len` one request of which fits
//!     "requests_at_max_len": ..,
//!     "workload": {"tokens_per_request", "concurrency", "fit_per_rank", "fit_total",
//!                  "seqs_total", "ranks"} or null,
//!     "estimate": false, ...}]            true where the KV layout is estimated (DeepSeek-V4)
//!   "estimate": {                         what it serves at the layout's `bench` workload
//!                                         (`pd_dsl::estimate`), null without a bench or dimensions
//!     "workload": {"input_len", "output_len", "prefix_rate", "concurrency", "request_rate"},
//!     "roles": [{"role", "ranks", "npus_per_rank", "batch_per_rank", "prefill_s", "step_s",
//!                "tokens_per_step", "capacity_rps"}],
//!     "requests_per_s", "output_tokens_per_s", "total_tokens_per_s",   whole deployment
//!     "output_tokens_per_s_per_npu", "ttft_s", "kv_transfer_s", "tpot_ms",
//!     "queue_s": 0.0,                     the wait in ttft_s; null: no bound (an open loop
//!                                         offering more than the layout completes)
//!     "bound": "decode",                  concurrency | prefill | decode | request rate
//!     "band": 0.29,                       leave-one-out median error on upstream's baselines
//!     "balance": {"idle": "decode", "ratio": 2.1, "engines": 2.1} or null   PD only, see below
//!   }
//! }
//! ```
//! Fields are only ever added, never renamed or removed.

mod meta;

pub use meta::{
    Meta, MetaDeviation, MetaEngine, MetaHardware, MetaImage, MetaModel, MetaServe, env_text, meta,
};

use crate::{DeployStatus, Layout, Role};
use serde::Serialize;
use serde_json::Value as Json;

/// One DP rank in the views.
#[derive(Clone, Debug, Serialize)]
pub struct RankView {
    /// Global DP rank within the engine.
    pub dp_rank: u32,
    /// `ASCEND_RT_VISIBLE_DEVICES`.
    pub devices: Vec<u32>,
    /// API port (`null` on a headless mixed node).
    pub api_port: Option<u32>,
    /// Inclusive kv handshake port span.
    pub kv_span: Option<(u32, u32)>,
}

/// One node in the views.
#[derive(Clone, Debug, Serialize)]
pub struct NodeView {
    /// Node index in cluster order.
    pub index: usize,
    /// Role.
    pub role: Role,
    /// Engine index.
    pub engine: usize,
    /// `engine_id` of the engine (PD only).
    pub engine_id: Option<u64>,
    /// `--data-parallel-size`.
    pub dp_size: u32,
    /// `--tensor-parallel-size`.
    pub tp_size: u32,
    /// `--prefill-context-parallel-size`, when above 1.
    #[serde(skip_serializing_if = "is_one")]
    pub pcp_size: u32,
    /// `--dp-size-local`.
    pub dp_size_local: u32,
    /// `--dp-rank-start`.
    pub dp_rank_start: u32,
    /// Node index of the DP master.
    pub dp_master: usize,
    /// `kv_port` base of the engine (PD only).
    pub kv_port: Option<u32>,
    /// Mixed engine, non-first node.
    pub headless: bool,
    /// Ranks on this node.
    pub ranks: Vec<RankView>,
}

/// The proxy in the views.
#[derive(Clone, Debug, Serialize)]
pub struct ProxyView {
    /// Node that runs it (always 0).
    pub node: usize,
    /// Listen port.
    pub port: u32,
    /// Script file name.
    pub script: &'static str,
    /// Prefill backends as (node index, port), proxy order.
    pub prefill: Vec<(usize, u32)>,
    /// Decode backends as (node index, port), proxy order.
    pub decode: Vec<(usize, u32)>,
}

/// The stable `show --format json` document (see the module docs).
#[derive(Clone, Debug, Serialize)]
pub struct LayoutView {
    /// Layout name.
    pub name: String,
    /// Model id.
    pub model: &'static str,
    /// Hardware id.
    pub hardware: &'static str,
    /// Full image reference.
    pub image: String,
    /// Computed verification.
    pub verified: bool,
    /// Computed deployment status.
    pub deploy: DeployStatus,
    /// `kv_connector` name (PD).
    pub connector: Option<&'static str>,
    /// Every node.
    pub nodes: Vec<NodeView>,
    /// The proxy (PD).
    pub proxy: Option<ProxyView>,
    /// What each later image changes for the layout.
    pub newer_images: Vec<crate::newer::NewerImage>,
    /// The memory budget of one rank per role, in node order.
    pub budget: Vec<crate::capacity::RoleBudget>,
    /// Why some role has no budget (`capacity::not_planned`).
    pub budget_not_planned: Option<String>,
    /// What the layout serves at its declared workload.
    pub estimate: Option<crate::estimate::Estimate>,
}

/// One row of `index.json` and of `catalog list --format json`.
#[derive(Clone, Debug, Serialize)]
pub struct IndexEntry {
    /// Layout name.
    pub name: String,
    /// Model id.
    pub model: &'static str,
    /// Hardware id.
    pub hardware: &'static str,
    /// Topology in the card's notation.
    pub topology: String,
    /// Node count.
    pub nodes: usize,
    /// NPUs used.
    pub npus: usize,
    /// Full image reference.
    pub image: String,
    /// Computed verification.
    pub verified: bool,
    /// Computed deployment status.
    pub deploy: DeployStatus,
    /// Provenance date.
    pub recorded: String,
    /// Directory of the layout inside the catalog.
    pub path: String,
}

/// The node views of a layout.
pub fn node_views(layout: &Layout) -> Vec<NodeView> {
    let p = &layout.placement;
    p.nodes
        .iter()
        .map(|n| {
            let e = p.engines.get(n.engine);
            NodeView {
                index: n.index,
                role: n.role,
                engine: n.engine,
                engine_id: n.engine_id,
                dp_size: e.map_or(0, |e| e.dp),
                tp_size: e.map_or(0, |e| e.tp),
                pcp_size: e.map_or(1, |e| e.pcp),
                dp_size_local: n.dp_size_local,
                dp_rank_start: n.dp_rank_start,
                dp_master: n.dp_master,
                kv_port: e.and_then(|e| e.kv_port),
                headless: n.headless,
                ranks: n
                    .ranks
                    .iter()
                    .map(|r| RankView {
                        dp_rank: r.dp_rank,
                        devices: r.devices.to_vec(),
                        api_port: r.api_port,
                        kv_span: r.kv_span,
                    })
                    .collect(),
            }
        })
        .collect()
}

/// The proxy view of a PD layout.
pub fn proxy_view(layout: &Layout) -> Option<ProxyView> {
    let proxy = layout.proxy?;
    let pairs = |l: &[crate::Endpoint]| l.iter().map(|e| (e.node, e.port)).collect();
    Some(ProxyView {
        node: 0,
        port: proxy.port,
        script: proxy.script.file_name(),
        prefill: pairs(&layout.placement.proxy.prefill),
        decode: pairs(&layout.placement.proxy.decode),
    })
}

/// The stable `show --format json` view.
pub fn layout_view(layout: &Layout) -> LayoutView {
    LayoutView {
        name: layout.name().to_owned(),
        model: layout.model.id,
        hardware: layout.hardware.id,
        image: layout.image_ref.clone(),
        verified: layout.verified,
        deploy: layout.deploy_status(),
        connector: layout.connector.map(|c| c.kv_connector()),
        nodes: node_views(layout),
        proxy: proxy_view(layout),
        newer_images: layout.newer_images(),
        budget: crate::capacity::budget(layout),
        budget_not_planned: crate::capacity::not_planned(layout),
        estimate: crate::estimate::estimate(layout),
    }
}

/// The index row of a layout.
pub fn index_entry(layout: &Layout) -> IndexEntry {
    IndexEntry {
        name: layout.name().to_owned(),
        model: layout.model.id,
        hardware: layout.hardware.id,
        topology: layout.topology_text(),
        nodes: layout.node_count(),
        npus: layout.npus_used(),
        image: layout.image_ref.clone(),
        verified: layout.verified,
        deploy: layout.deploy_status(),
        recorded: layout.spec.provenance.recorded.value.clone(),
        path: format!("{}/", layout.name()),
    }
}

/// A run of consecutive numbers as `a-b`; anything else (gaps, one value)
/// listed with `sep`. The one formatting of port and device spans in the
/// README, the HTML page, the picture and `catalog show`.
pub fn span_text(values: &[u32], sep: &str) -> String {
    match (values.first(), values.last()) {
        (Some(a), Some(b))
            if values.len() > 1 && values.windows(2).all(|w| w[0].checked_add(1) == Some(w[1])) =>
        {
            format!("{a}-{b}")
        }
        _ => values
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(sep),
    }
}

/// `skip_serializing_if` for sizes that default to 1.
fn is_one(n: &u32) -> bool {
    *n == 1
}

#[cfg(test)]
mod tests {
    use super::span_text;

    #[test]
    fn spans_and_lists() {
        assert_eq!(span_text(&[7100, 7101, 7102], ", "), "7100-7102");
        assert_eq!(span_text(&[7100], ", "), "7100");
        assert_eq!(span_text(&[], ", "), "");
        // A gap, or a run out of order, is a list, never a span.
        assert_eq!(span_text(&[0, 2, 3], ","), "0,2,3");
        assert_eq!(span_text(&[3, 1, 2], ", "), "3, 1, 2");
        assert_eq!(
            span_text(&[u32::MAX - 1, u32::MAX], ","),
            "4294967294-4294967295"
        );
    }
}
