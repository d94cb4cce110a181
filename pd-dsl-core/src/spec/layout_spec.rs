//! The whole layout as written: hardware, provenance, acknowledged deviations, benchmark and figures.

use super::*;

/// Hardware of the layout: one kind, or one per role.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum HardwareSpec {
    /// Every node is this kind.
    All(Spanned<String>),
    /// Per role (must still be one family).
    PerRole(BTreeMap<Role, Spanned<String>>),
}

impl Default for HardwareSpec {
    fn default() -> Self {
        HardwareSpec::All(Spanned::default())
    }
}

/// When the layout was last verified on hardware.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(Default)]
pub enum Verification {
    /// Never verified on hardware.
    #[default]
    Never,
    /// Verified on this image tag.
    On(Spanned<String>),
    /// Verified on an image earlier than this tag; which one was not recorded.
    Before(Spanned<String>),
}

/// Provenance of the layout.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProvenanceSpec {
    /// Date the layout was recorded (`YYYY-MM-DD`).
    pub recorded: Spanned<String>,
    /// Name of the layout this one was derived from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derived_from: Option<Spanned<String>>,
    /// Upstream sources (path @ref).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<Spanned<String>>,
    /// What the last refresh changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refresh: Vec<Spanned<String>>,
}

/// `allow(rule, "reason")`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllowSpec {
    /// Rule name.
    pub rule: Spanned<String>,
    /// Why the layout breaks it.
    pub reason: Spanned<String>,
}

/// `deviate("what", "why")`: a difference from upstream that no rule covers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviationSpec {
    /// What differs.
    pub what: Spanned<String>,
    /// Why.
    pub why: Spanned<String>,
}

/// The benchmark workload `bench.sh` runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchSpec {
    /// `--random-input-len`.
    pub input_len: Spanned<u64>,
    /// `--random-output-len`.
    pub output_len: Spanned<u64>,
    /// `--num-prompts`.
    pub num_prompts: Spanned<u64>,
    /// `--request-rate` (requests/s, as written) or `inf`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_rate: Option<Spanned<String>>,
    /// `--max-concurrency`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<Spanned<u64>>,
}

/// A published figure, kept as reference data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureSpec {
    /// Metric (`TTFT`).
    pub metric: Spanned<String>,
    /// Value with unit (`6.16 s`).
    pub value: Spanned<String>,
    /// Hardware, image and workload it came from.
    pub context: Spanned<String>,
}

/// A whole layout as written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayoutSpec {
    /// Doc comment: what the layout is and when to use it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub summary: Vec<String>,
    /// `family/variant` name, unique in the catalog.
    pub name: Spanned<String>,
    /// Model table id.
    pub model: Spanned<String>,
    /// Hardware table id(s).
    pub hardware: HardwareSpec,
    /// Image tag without hardware suffix.
    pub image: Spanned<String>,
    /// Engines by role.
    pub topology: Vec<EngineGroup>,
    /// Where the topology was written.
    #[serde(skip)]
    pub topology_site: Site,
    /// KV connector (PD layouts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connector: Option<ConnectorSpec>,
    /// Port bases.
    pub ports: PortsSpec,
    /// Proxy (PD layouts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<ProxySpec>,
    /// Engine ids overriding the derived ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_ids: Option<EngineIdsSpec>,
    /// Weights path inside the container (default: the model table's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_path: Option<Spanned<String>>,
    /// `--served-model-name` (default: the model table's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served_model_name: Option<Spanned<String>>,
    /// Settings for every role.
    #[serde(default)]
    pub serve: ServeSpec,
    /// Settings per role.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub roles: BTreeMap<Role, ServeSpec>,
    /// Settings per node over its role's (cluster node index, as `catalog
    /// show` numbers nodes): for the nodes of one role, or of one engine,
    /// that run different settings, as upstream's per-node `vllm serve`
    /// commands may.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub nodes: BTreeMap<u32, ServeSpec>,
    /// Provenance.
    pub provenance: ProvenanceSpec,
    /// Hardware verification.
    #[serde(default)]
    pub verified: Spanned<Verification>,
    /// Acknowledged rule deviations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<AllowSpec>,
    /// Differences from upstream no rule covers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deviations: Vec<DeviationSpec>,
    /// Workload guidance (when to use this layout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<Spanned<String>>,
    /// Benchmark workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bench: Option<BenchSpec>,
    /// Published reference figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<FigureSpec>,
}

impl LayoutSpec {
    /// The layout runs a KV pool (`AscendStoreConnector` beside the P2P
    /// connector), which on some images puts a hybrid model's Mamba cache
    /// in 'align' mode (the rules and the capacity budget both ask).
    pub fn runs_kv_pool(&self) -> bool {
        self.connector.as_ref().is_some_and(|c| c.pool.is_some())
    }
}
