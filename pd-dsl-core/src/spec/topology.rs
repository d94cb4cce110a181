//! Roles and engine groups: the topology as written.

use super::*;

/// What an engine does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(Default)]
pub enum Role {
    /// Prefill engine (`kv_producer`).
    Prefill,
    /// Decode engine (`kv_consumer`).
    Decode,
    /// No PD: one engine does both.
    #[default]
    Mixed,
}

impl Role {
    /// The DSL keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Prefill => "prefill",
            Role::Decode => "decode",
            Role::Mixed => "mixed",
        }
    }

    /// The `kv_role` of the connector config, if any.
    pub fn kv_role(self) -> Option<&'static str> {
        match self {
            Role::Prefill => Some("kv_producer"),
            Role::Decode => Some("kv_consumer"),
            Role::Mixed => None,
        }
    }

    /// Parses the DSL keyword.
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "prefill" => Some(Role::Prefill),
            "decode" => Some(Role::Decode),
            "mixed" => Some(Role::Mixed),
            _ => None,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `prefill 3 x dp4tp4` (optionally `/ 2` ranks per node).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineGroup {
    /// Role of every engine in the group.
    pub role: Spanned<Role>,
    /// Number of independent engines.
    pub count: Spanned<u64>,
    /// `--data-parallel-size` of each engine.
    pub dp: Spanned<u64>,
    /// `--tensor-parallel-size` of each rank.
    pub tp: Spanned<u64>,
    /// `--prefill-context-parallel-size` of each rank (`pcp<N>` after the
    /// TP size), when above 1: a rank then spans `tp x pcp` NPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcp: Option<Spanned<u64>>,
    /// Ranks per node, when not packed as densely as the node allows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks_per_node: Option<Spanned<u64>>,
    /// Where the whole `dpXtpY` shape was written.
    #[serde(skip)]
    pub shape_site: Site,
}

impl EngineGroup {
    /// The PCP size (1 unless written).
    pub fn pcp(&self) -> u64 {
        self.pcp.as_ref().map_or(1, |p| p.value)
    }

    /// The shape as written: `dp4tp4`, `dp1tp8pcp2`.
    pub fn shape(&self) -> String {
        shape_text(self.dp.value, self.tp.value, self.pcp())
    }
}

/// `dp{dp}tp{tp}`, with `pcp{pcp}` when above 1.
pub fn shape_text(dp: u64, tp: u64, pcp: u64) -> String {
    if pcp > 1 {
        format!("dp{dp}tp{tp}pcp{pcp}")
    } else {
        format!("dp{dp}tp{tp}")
    }
}
