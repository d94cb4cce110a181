//! Whether a layout can start as written: derived from the rules, never
//! typed by hand.
//!
//! A layout may acknowledge a convention rule with `allow(rule, "why")`, and
//! most acknowledged rules are deliberate deviations that still run. A few
//! mean the image cannot run the layout at all ([`Rule::blocks_deployment`]):
//! such a layout is *blocked on image*, and the first image that can run it
//! is the first later image of the table on which the checker no longer
//! reports that rule for the same layout.

use crate::check::violations;
use crate::layout::Layout;
use crate::rules::Rule;
use crate::tables::IMAGES;
use serde::Serialize;
use std::fmt;

/// A layout's deployment status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum DeployStatus {
    /// Starts as written on its image.
    Deployable,
    /// An acknowledged rule means its image cannot run it.
    BlockedOnImage {
        /// The acknowledged rule that blocks it.
        rule: Rule,
        /// The first image of the table on which that rule no longer fires
        /// (`None`: no image of the table can run it yet).
        first_image: Option<&'static str>,
    },
}

impl Rule {
    /// Whether an acknowledged violation of this rule means the layout
    /// cannot start on its image (rather than a deviation that still runs).
    ///
    /// `connector_hybrid_kv`: `MooncakeConnectorV1` cannot carry a hybrid KV
    /// cache (DeepSeek-V4) before v0.22.1rc1 (#10342), so the engines fail
    /// to transfer KV.
    pub fn blocks_deployment(self) -> bool {
        matches!(self, Rule::ConnectorHybridKv)
    }
}

impl DeployStatus {
    /// `true` when the layout starts as written.
    pub fn is_deployable(self) -> bool {
        self == DeployStatus::Deployable
    }

    /// A short label for tables: `deployable` or `blocked on image (needs v0.22.1rc1)`.
    pub fn label(self) -> String {
        match self {
            DeployStatus::Deployable => "deployable".into(),
            DeployStatus::BlockedOnImage {
                first_image: Some(t),
                ..
            } => format!("blocked on image (needs {t})"),
            DeployStatus::BlockedOnImage {
                first_image: None, ..
            } => "blocked on image (no image yet)".into(),
        }
    }
}

impl fmt::Display for DeployStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

impl Layout {
    /// The deployment status, derived from the acknowledged rules and the
    /// image table.
    pub fn deploy_status(&self) -> DeployStatus {
        let Some(rule) = self
            .acknowledged
            .iter()
            .map(|a| a.rule)
            .find(|r| r.blocks_deployment())
        else {
            return DeployStatus::Deployable;
        };
        let own = self.image.version();
        let mut later: Vec<_> = IMAGES
            .iter()
            .filter(|i| i.version() > own && i.reference(self.hardware).is_some())
            .collect();
        later.sort_by_key(|i| i.version());
        let first_image = later
            .into_iter()
            .find(|img| {
                let mut spec = self.spec.clone();
                spec.image.value = img.tag.to_owned();
                !violations(&spec).contains(&rule)
            })
            .map(|i| i.tag);
        DeployStatus::BlockedOnImage { rule, first_image }
    }
}
