//! `kv_transfer_params` as the real pull-mode connectors write and read them,
//! per connector and image, so the stand-in `vllm` speaks what vllm-ascend
//! speaks.
//!
//! A prefill rank (kv producer) returns `kv_transfer_params` only when the
//! request asked for remote decode (`do_remote_decode: true`, which the
//! proxy sets) and the request finished capped at its length (the proxy asks
//! for one token): `request_finished` returns `(False, None)` otherwise
//! (`MooncakeConnectorScheduler.request_finished`, mooncake_connector.py
//! @v0.21.0rc1 L1501-1552; `mooncake_hybrid_connector.py`
//! `request_finished_all_groups` @v0.21.0rc1 L1308-1355).
//!
//! A decode rank (kv consumer) reads `remote_block_ids`, `remote_engine_id`,
//! `remote_request_id`, `remote_host` and `remote_port` with `[]` (a
//! `KeyError` when absent) and the rest with `.get` and a default
//! (`MooncakeConnectorMetadata.add_new_req`, mooncake_connector.py
//! @v0.21.0rc1 L1239-1260, @v0.23.0 L1484-1504; the hybrid connector's
//! @v0.21.0rc1 L948-966). `remote_block_ids` holds one list of block ids
//! per KV cache group (the worker indexes `remote_block_ids[group_idx]`,
//! mooncake_connector.py @v0.21.0rc1 L667; hybrid L577-579).
//!
//! `MooncakeLayerwiseConnector` (push mode) is not modelled here: its decode
//! side accepts any object (crate docs).

use pd_dsl::ConnectorKind;
use serde_json::{Value as Json, json};

/// What a V1 prefill rank returns on every image (mooncake_connector.py
/// `request_finished` @v0.18.0 through @v0.22.1rc1).
const V1_FIELDS: &[&str] = &[
    "do_remote_prefill",
    "do_remote_decode",
    "remote_block_ids",
    "remote_engine_id",
    "remote_request_id",
    "remote_host",
    "remote_port",
    "remote_pcp_size",
    "remote_dcp_size",
    "remote_ptp_size",
    "last_token_id",
    "remote_multi_nodes_meta_mapping",
    "num_prompt_blocks",
];

/// Images whose V1 connector also returns `remote_block_size` (present
/// @v0.23.0rc1, @v0.23.0, @v0.24.0rc1, @v0.25.1rc1 and @v0.26.0rc1 to
/// @v0.30.0rc2; absent @v0.22.1rc1 and earlier). A test classifies every
/// image of the table.
pub const V1_BLOCK_SIZE_IMAGES: &[&str] = &[
    "v0.23.0rc1",
    "v0.23.0",
    "v0.24.0rc1",
    "v0.25.1rc1",
    "v0.26.0rc1",
    "v0.27.1rc1",
    "v0.28.0rc1",
    "v0.29.0rc1",
    "v0.30.0rc1",
    "v0.30.0rc2",
];

/// Images whose V1 connector does not return `remote_block_size`.
pub const V1_NO_BLOCK_SIZE_IMAGES: &[&str] = &[
    "v0.18.0",
    "v0.19.1rc1",
    "v0.20.2rc1",
    "v0.21.0rc1",
    "v0.22.1rc1",
];

/// What a Hybrid prefill rank returns (mooncake_hybrid_connector.py
/// `request_finished_all_groups`, the same from @v0.20.2rc1 to @v0.25.1rc1):
/// no PCP/DCP sizes.
const HYBRID_FIELDS: &[&str] = &[
    "do_remote_prefill",
    "do_remote_decode",
    "remote_block_ids",
    "remote_engine_id",
    "remote_request_id",
    "remote_host",
    "remote_port",
    "remote_ptp_size",
    "last_token_id",
    "remote_multi_nodes_meta_mapping",
    "num_prompt_blocks",
];

/// The keys a decode rank reads with `[]` (a missing one is a `KeyError`
/// in the engine), for V1 and Hybrid on every image.
pub const DECODE_REQUIRED: &[&str] = &[
    "remote_block_ids",
    "remote_engine_id",
    "remote_request_id",
    "remote_host",
    "remote_port",
];

/// The fields a prefill rank returns, or `None` for a connector this module
/// does not model (Layerwise) or an image it does not know.
pub fn prefill_fields(kind: ConnectorKind, image: &str) -> Option<Vec<&'static str>> {
    match kind {
        ConnectorKind::MooncakeV1 => {
            let mut f = V1_FIELDS.to_vec();
            if V1_BLOCK_SIZE_IMAGES.contains(&image) {
                f.push("remote_block_size");
            } else if !V1_NO_BLOCK_SIZE_IMAGES.contains(&image) {
                return None;
            }
            Some(f)
        }
        ConnectorKind::MooncakeHybrid => pd_dsl::tables::image(image)
            .is_some_and(|i| i.hybrid_connector())
            .then(|| HYBRID_FIELDS.to_vec()),
        ConnectorKind::MooncakeLayerwise => None,
    }
}

/// What a prefill rank knows when it answers.
#[derive(Clone, Debug)]
pub struct Producer<'a> {
    pub kind: ConnectorKind,
    pub image: &'a str,
    pub engine_id: Option<&'a str>,
    pub host: &'a str,
    /// The rank's first handshake port (`side_channel_port`).
    pub port: u32,
    pub tp: u32,
    pub block_size: u32,
    /// KV cache groups (one list of block ids each).
    pub kv_groups: usize,
}

/// The `kv_transfer_params` a prefill rank returns for `request_id` with
/// `prompt_tokens` tokens, in the connector's field set for the image.
pub fn produce(p: &Producer, request_id: &str, prompt_tokens: usize) -> Json {
    let blocks = prompt_tokens.div_ceil(p.block_size.max(1) as usize).max(1);
    let ids: Vec<usize> = (0..blocks).collect();
    let fields = prefill_fields(p.kind, p.image).unwrap_or_default();
    let mut out = serde_json::Map::new();
    for f in fields {
        let v = match f {
            "do_remote_prefill" => json!(true),
            "do_remote_decode" => json!(false),
            "remote_block_ids" => json!(vec![ids.clone(); p.kv_groups.max(1)]),
            "remote_engine_id" => json!(p.engine_id),
            "remote_request_id" => json!(request_id),
            "remote_host" => json!(p.host),
            "remote_port" => json!(p.port),
            "remote_pcp_size" | "remote_dcp_size" => json!(1),
            "remote_ptp_size" => json!(p.tp),
            "last_token_id" => json!(0),
            "remote_multi_nodes_meta_mapping" => {
                json!({"0": {"host": p.host, "engine_id": p.engine_id}})
            }
            "num_prompt_blocks" => json!(blocks),
            "remote_block_size" => json!(p.block_size),
            _ => Json::Null,
        };
        out.insert(f.to_owned(), v);
    }
    Json::Object(out)
}

/// What a decode rank checks the parameters against.
#[derive(Clone, Debug)]
pub struct Consumer {
    pub kind: ConnectorKind,
    /// `kv_connector_extra_config.prefill.tp_size`.
    pub prefill_tp: Option<u32>,
    pub block_size: u32,
    pub kv_groups: usize,
}

/// Checks a decode request's `kv_transfer_params` the way the connector
/// would use them; `Err` says what the connector would refuse or silently
/// ignore (then the decode rank would recompute the prompt: a decode-only
/// fallback).
pub fn consume(c: &Consumer, params: Option<&Json>, prompt_tokens: usize) -> Result<(), String> {
    let Some(params) = params.filter(|p| !p.is_null()) else {
        return Err("no kv_transfer_params (the decode rank would recompute the prompt: a decode-only fallback)".into());
    };
    let Json::Object(m) = params else {
        return Err(format!(
            "kv_transfer_params is {params}, expected an object"
        ));
    };
    if !m.get("do_remote_prefill").is_some_and(truthy) {
        return Err(
            "kv_transfer_params lacks `do_remote_prefill: true` (the connector would not pull KV: a decode-only fallback)"
                .into(),
        );
    }
    let missing: Vec<&str> = DECODE_REQUIRED
        .iter()
        .copied()
        .filter(|k| m.get(*k).is_none_or(Json::is_null))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "kv_transfer_params lacks {} ({} reads them with `[]`: a KeyError)",
            missing
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", "),
            c.kind.kv_connector()
        ));
    }
    for k in ["remote_engine_id", "remote_request_id", "remote_host"] {
        if !m.get(k).is_some_and(Json::is_string) {
            return Err(format!("`{k}` is {}, expected a string", m[k]));
        }
    }
    if m.get("remote_port").is_none_or(|v| v.as_u64().is_none()) {
        return Err(format!(
            "`remote_port` is {}, expected an integer",
            m["remote_port"]
        ));
    }
    let groups = m
        .get("remote_block_ids")
        .and_then(Json::as_array)
        .filter(|g| {
            g.iter().all(|ids| {
                ids.as_array()
                    .is_some_and(|ids| ids.iter().all(|i| i.as_u64().is_some()))
            })
        });
    let Some(groups) = groups else {
        return Err(format!(
            "`remote_block_ids` is {}, expected one list of block ids per KV cache group",
            m["remote_block_ids"]
        ));
    };
    if groups.len() != c.kv_groups.max(1) {
        return Err(format!(
            "`remote_block_ids` has {} KV cache group(s), this rank has {}",
            groups.len(),
            c.kv_groups.max(1)
        ));
    }
    let need = prompt_tokens.div_ceil(c.block_size.max(1) as usize).max(1);
    if let Some(short) = groups
        .iter()
        .filter_map(Json::as_array)
        .map(Vec::len)
        .find(|n| *n < need)
    {
        return Err(format!(
            "`remote_block_ids` holds {short} block(s) for a {prompt_tokens}-token prompt, expected {need} (block size {})",
            c.block_size
        ));
    }
    if let (Some(want), Some(v)) = (c.prefill_tp, m.get("remote_ptp_size"))
        && !v.is_null()
        && v.as_u64() != Some(u64::from(want))
    {
        return Err(format!(
            "`remote_ptp_size` is {v}, but kv_connector_extra_config says prefill TP {want}"
        ));
    }
    Ok(())
}

fn truthy(v: &Json) -> bool {
    match v {
        Json::Bool(b) => *b,
        Json::Number(n) => n.as_i64().is_some_and(|n| n != 0),
        _ => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_image_of_the_table_is_classified() {
        for img in &pd_dsl::tables::IMAGES {
            let a = V1_BLOCK_SIZE_IMAGES.contains(&img.tag);
            let b = V1_NO_BLOCK_SIZE_IMAGES.contains(&img.tag);
            assert!(a ^ b, "image {} must be in exactly one V1 list", img.tag);
        }
    }

    #[test]
    fn what_a_producer_writes_a_consumer_accepts() {
        for (kind, image) in [
            (ConnectorKind::MooncakeV1, "v0.21.0rc1"),
            (ConnectorKind::MooncakeV1, "v0.23.0"),
            (ConnectorKind::MooncakeHybrid, "v0.21.0rc1"),
        ] {
            let p = Producer {
                kind,
                image,
                engine_id: Some("0"),
                host: "127.0.0.1",
                port: 30000,
                tp: 4,
                block_size: 128,
                kv_groups: 1,
            };
            let v = produce(&p, "cmpl-1", 300);
            let c = Consumer {
                kind,
                prefill_tp: Some(4),
                block_size: 128,
                kv_groups: 1,
            };
            assert_eq!(consume(&c, Some(&v), 300), Ok(()), "{kind:?} {image}");
            assert_eq!(v["remote_block_ids"], json!([[0, 1, 2]]));
            assert_eq!(
                v.get("remote_block_size").is_some(),
                kind == ConnectorKind::MooncakeV1 && image == "v0.23.0"
            );
            assert_eq!(
                v.get("remote_pcp_size").is_some(),
                kind == ConnectorKind::MooncakeV1
            );
            // Every required key is refused when missing.
            for k in DECODE_REQUIRED {
                let mut bad = v.clone();
                bad.as_object_mut().unwrap().remove(*k);
                let e = consume(&c, Some(&bad), 300).unwrap_err();
                assert!(e.contains(&format!("`{k}`")), "{e}");
            }
            let c2 = Consumer {
                prefill_tp: Some(8),
                ..c.clone()
            };
            assert!(
                consume(&c2, Some(&v), 300)
                    .unwrap_err()
                    .contains("prefill TP 8")
            );
            assert!(
                consume(&c, Some(&v), 1000)
                    .unwrap_err()
                    .contains("expected 8")
            );
        }
    }

    #[test]
    fn a_flat_block_list_and_the_proxys_request_params_are_refused() {
        let c = Consumer {
            kind: ConnectorKind::MooncakeV1,
            prefill_tp: None,
            block_size: 128,
            kv_groups: 1,
        };
        let flat = json!({"do_remote_prefill": true, "remote_block_ids": [0, 1],
            "remote_engine_id": "0", "remote_request_id": "r", "remote_host": "h", "remote_port": 1});
        assert!(
            consume(&c, Some(&flat), 10)
                .unwrap_err()
                .contains("one list of block ids per KV cache group")
        );
        // What the proxy sends to prefill is not what decode needs.
        let ask = json!({"do_remote_decode": true, "do_remote_prefill": false,
            "remote_engine_id": null, "remote_block_ids": null, "remote_host": null, "remote_port": null});
        assert!(
            consume(&c, Some(&ask), 10)
                .unwrap_err()
                .contains("do_remote_prefill")
        );
        assert!(
            consume(&c, None, 10)
                .unwrap_err()
                .contains("decode-only fallback")
        );
    }
}
