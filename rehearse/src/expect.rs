//! The expectation file (schema in the crate docs).

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// What the layout says every rank must run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Expectation {
    /// Schema version (1).
    #[serde(default = "one")]
    pub version: u32,
    /// Layout name, informational.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    /// One entry per DP rank of every engine.
    pub ranks: Vec<ExpectedRank>,
}

fn one() -> u32 {
    1
}

/// One DP rank.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExpectedRank {
    /// Node index in cluster order.
    pub node: usize,
    /// The node's `PD_STANDIN_NODE_IP`.
    pub node_ip: String,
    /// `prefill`, `decode` or `mixed`.
    pub role: String,
    /// Engine index, informational.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<usize>,
    /// `engine_id` (string or number); absent or null = not checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_id: Option<Json>,
    /// `--data-parallel-size`.
    pub dp_size: u32,
    /// `--tensor-parallel-size`.
    pub tp: u32,
    /// Global DP rank.
    pub dp_rank: u32,
    /// `ASCEND_RT_VISIBLE_DEVICES` of this rank.
    pub devices: Vec<u32>,
    /// API port, `None` for a rank without its own API server.
    #[serde(default)]
    pub api_port: Option<u16>,
    /// `--data-parallel-address`.
    pub dp_master_ip: String,
    /// `--data-parallel-rpc-port`; `None` = not checked.
    #[serde(default)]
    pub rpc_port: Option<u16>,
    /// `kv_transfer_config.kv_port` (the engine's base); `None` for mixed.
    #[serde(default)]
    pub kv_port: Option<u16>,
}

impl Expectation {
    /// Parses the file's text: an object with `ranks`, or a bare array.
    pub fn parse(text: &str) -> Result<Expectation, String> {
        let v: Json = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if v.is_array() {
            let ranks = serde_json::from_value(v).map_err(|e| e.to_string())?;
            return Ok(Expectation {
                version: 1,
                layout: None,
                ranks,
            });
        }
        serde_json::from_value(v).map_err(|e| e.to_string())
    }

    /// The entry for `(node_ip, dp_rank)`.
    pub fn find(&self, node_ip: &str, dp_rank: u32) -> Option<&ExpectedRank> {
        self.ranks
            .iter()
            .find(|r| r.node_ip == node_ip && r.dp_rank == dp_rank)
    }
}

/// The text form of an `engine_id` value (`"0"` and `0` compare equal).
pub fn id_text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}
