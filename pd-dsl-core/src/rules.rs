//! The rules, by stable name. The name is the same in code, in error text, in
//! the compile-fail case (`tests/ui/<name>.rs`) and in the README.

use crate::site::Site;
use serde::Serialize;
use std::fmt;

/// Whether a layout may acknowledge a violation with `allow(rule, "reason")`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The deployment fails or collides: never allowed.
    Hard,
    /// A convention or upstream recommendation: may be acknowledged.
    Convention,
}

impl Severity {
    /// `hard` or `convention`, as the JSON and the references write it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Severity::Hard => "hard",
            Severity::Convention => "convention",
        }
    }
}

macro_rules! rules {
    ($( $(#[doc = $doc:literal])* $variant:ident = $name:literal, $sev:ident, $summary:literal; )*) => {
        /// Every rule the checker knows.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        pub enum Rule {
            $( $(#[doc = $doc])* #[serde(rename = $name)] $variant, )*
        }

        impl Rule {
            /// Every rule, in table order.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant),*];

            /// The stable name.
            pub fn name(self) -> &'static str {
                match self { $(Rule::$variant => $name,)* }
            }

            /// Whether it may be acknowledged.
            pub fn severity(self) -> Severity {
                match self { $(Rule::$variant => Severity::$sev,)* }
            }

            /// One line saying what the rule guards.
            pub fn summary(self) -> &'static str {
                match self { $(Rule::$variant => $summary,)* }
            }

            /// The rule's doc comment here, as written (each line starts
            /// with the space after `///`): what it checks and the upstream
            /// source and releases it comes from. [`Rule::explanation`]
            /// reads it as text.
            pub fn doc_source(self) -> &'static str {
                match self { $(Rule::$variant => concat!($($doc, "\n",)* ""),)* }
            }

            /// Looks a rule up by its stable name.
            pub fn from_name(name: &str) -> Option<Rule> {
                match name { $($name => Some(Rule::$variant),)* _ => None }
            }
        }
    };
}

rules! {
    // --- names from the closed tables -----------------------------------
    /// The model is not in the model table.
    UnknownModel = "unknown_model", Hard, "the model must be an entry of the model table";
    /// The hardware is not in the hardware table.
    UnknownHardware = "unknown_hardware", Hard, "the hardware must be an entry of the hardware table";
    /// The image is not in the image table.
    UnknownImage = "unknown_image", Hard, "the image must be an entry of the image table";
    /// The image ships no build for the hardware: the facts' `image_suffixes`
    /// (the build matrix of .github/workflows/schedule_image_build_and_push.yaml
    /// pushes a 950DT `a5` image at v0.23.0 and from v0.26.0rc1 to
    /// v0.30.0rc2, none from v0.18.0 to v0.23.0rc1 or at v0.24.0rc1 and
    /// v0.25.1rc1).
    ImageHardwareUnavailable = "image_hardware_unavailable", Hard, "the image must ship a build for the hardware";
    /// P and D on different hardware families (docs/source/developer_guide/
    /// Design_Documents/disaggregated_prefill.md "Limitations", L101 at every
    /// release from v0.18.0 to v0.30.0rc2).
    HardwareHomogeneous = "hardware_homogeneous", Hard, "prefill and decode run on one hardware family";
    // --- topology ----------------------------------------------------------
    /// Roles do not make a PD or a mixed layout.
    TopologyRoles = "topology_roles", Hard, "a layout is PD (prefill and decode) or mixed, not both";
    /// A size is zero.
    TopologySizes = "topology_sizes", Hard, "engine counts, DP and TP sizes are at least 1";
    /// TP does not divide the node.
    TpDividesNode = "tp_divides_node", Hard, "a TP group divides the node and never spans nodes";
    /// Engine neither fits one node nor fills whole nodes.
    EngineWholeNodes = "engine_whole_nodes", Hard, "an engine fits in one node or fills whole nodes";
    /// More NPUs used on a node than it has.
    NodeOversubscribed = "node_oversubscribed", Hard, "a node never runs more NPUs than it has";
    /// Per-node rank ranges do not tile `[0, dp)`.
    DpRanksTile = "dp_ranks_tile", Hard, "per-node DP rank ranges tile `[0, dp)` exactly";
    /// Engines of one role have different shapes.
    RoleShapeUniform = "role_shape_uniform", Hard, "all engines of a role share one shape";
    /// Prefill TP below decode TP, or not a multiple: the V1 connector's TP
    /// mapping (vllm_ascend/distributed/kv_transfer/kv_p2p/mooncake_connector.py
    /// @v0.18.0 L1098, @v0.23.0 L1129, @v0.30.0rc2 L1213).
    PrefillTpGeDecodeTp = "prefill_tp_ge_decode_tp", Hard, "prefill TP is at least decode TP and a multiple of it";
    // --- ports ---------------------------------------------------------------
    /// A port outside 1..=65535.
    PortRange = "port_range", Hard, "ports are between 1 and 65535";
    /// Two sockets on one host share a port.
    PortCollision = "port_collision", Hard, "API ports, DP RPC port, proxy port and kv spans are disjoint per host";
    /// kv span inside the AscendDirectTransport dynamic range (the kv_port
    /// table of docs/source/tutorials/.../pd_disaggregation_mooncake_multi_node.md
    /// @v0.18.0 L229 … @v0.30.0rc2 L279).
    KvPortInAdxlRange = "kv_port_in_adxl_range", Convention, "kv spans stay outside `[20000, 20000 + 1000 x NPUs)`";
    /// kv span on the inclusive upper edge of the ADXL range (same table,
    /// every release v0.18.0 to v0.30.0rc2).
    KvPortOnAdxlEdge = "kv_port_on_adxl_edge", Convention, "kv spans avoid `20000 + 1000 x NPUs`, which Mooncake can still draw";
    /// Wrong number of kv ports.
    KvPortCount = "kv_port_count", Hard, "one kv port per role, or one per engine of the role";
    /// DP RPC port missing where one is needed: `--dp-rpc-port` of
    /// examples/external_online_dp/launch_online_dp.py (L15 at every release
    /// v0.18.0 to v0.30.0rc2) has an int default that crashes `subprocess`.
    DpRpcPortRequired = "dp_rpc_port_required", Hard, "external and multi-node DP need an explicit DP RPC port";
    /// An engine without an API start port.
    ApiPortRequired = "api_port_required", Hard, "every engine has an API start port, common or per role";
    // --- engine ids ----------------------------------------------------------
    /// Wrong number of engine ids.
    EngineIdCount = "engine_id_count", Hard, "an engine id override names every engine of the role";
    /// Two engines share an id.
    EngineIdUnique = "engine_id_unique", Convention, "engine ids are unique";
    /// Prefill ids not even / decode ids not odd.
    EngineIdParity = "engine_id_parity", Convention, "prefill engine ids are even and decode engine ids odd (ids given per node are not held to it)";
    // --- connector and proxy ---------------------------------------------------
    /// Connector or proxy present/absent for the layout's roles.
    ConnectorRoleMismatch = "connector_role_mismatch", Hard, "PD layouts have a connector and a proxy; mixed layouts have neither";
    /// Connector not available on the image: the facts' `kv_connectors`
    /// (`MooncakeHybridConnector` registered from v0.20.2rc1,
    /// vllm_ascend/distributed/kv_transfer/__init__.py).
    ConnectorUnavailable = "connector_unavailable", Hard, "the connector is registered in the image";
    /// Proxy script does not pair with the connector: the multi-node PD
    /// tutorial pairs Layerwise with load_balance_proxy_layerwise_server_example.py
    /// (docs/source/tutorials/.../pd_disaggregation_mooncake_multi_node.md
    /// @v0.18.0 L754, @v0.23.0 L770, @v0.30.0rc2 L784); both proxies ship in
    /// every release (the facts' `scripts`).
    ConnectorProxyPairing = "connector_proxy_pairing", Hard, "V1 and Hybrid pair with the load-balance proxy, Layerwise with the layerwise proxy";
    /// V1 connector carrying a hybrid KV cache before it supported one
    /// (#10342: `self.use_hybrid` in kv_p2p/mooncake_connector.py from
    /// v0.22.1rc1 to v0.30.0rc2; the rows' `v1_hybrid_kv`).
    ConnectorHybridKv = "connector_hybrid_kv", Convention, "`MooncakeConnectorV1` carries hybrid-KV models (DeepSeek-V4) from v0.22.1rc1";
    /// A 950-only connector setting on other hardware
    /// (`ascend_local_comm_res_path`, vllm_ascend/utils.py @v0.21.0rc1 L532,
    /// @v0.23.0 L584, @v0.30.0rc2 L700; not read before v0.21.0rc1).
    CommResPathHardware = "comm_res_path_hardware", Hard, "`ascend_local_comm_res_path` is for 950DT only";
    /// A connector extra key that is derived.
    ConnectorExtraDerived = "connector_extra_derived", Hard, "the `prefill`/`decode` shapes of `kv_connector_extra_config` are derived";
    /// A KV pool's service ports: exactly its backend's two
    /// (`meta_service_port` + `config_store_port` for memcache,
    /// `master_port` + `metrics_port` for mooncake), each 1-65535 and
    /// distinct, as upstream's e2e runner validates them
    /// (tests/e2e/common/kv_pool/config.py `validate_kv_pool_config`
    /// @v0.27.1rc1+). Collisions with node 0's other ports are
    /// `port_collision`'s.
    KvPoolPorts = "kv_pool_ports", Hard, "a KV pool names its backend's two service ports, distinct TCP ports";
    /// A KV pool's configuration in the shape its files take: memcache
    /// `meta` and `local` maps of scalars (`key = value` files), without the
    /// URLs the scripts write; mooncake without `master_server_address`;
    /// `${..}` only those filled per node (runtime.py
    /// `ExternalDPMemcacheManager._write_config`, external_dp_config.py
    /// `replace_cluster_placeholders` @v0.27.1rc1+).
    KvPoolConfig = "kv_pool_config", Hard, "a KV pool's configuration has its backend's shape, without what the scripts derive";
    /// `backend` in `AscendStoreConnector`'s extra config is the pool's own
    /// keyword, derived.
    KvPoolStoreExtra = "kv_pool_store_extra", Hard, "`AscendStoreConnector`'s `backend` is the pool's";
    // --- additional_config and env -------------------------------------------
    /// Balance scheduling in a PD layout: ValueError "only supports PD-mixed
    /// mode" (vllm_ascend/platform.py @v0.18.0 L456, @v0.23.0 L682,
    /// @v0.26.0rc1 L639, @v0.30.0rc2 L1034).
    BalanceSchedulingInPd = "balance_scheduling_in_pd", Hard, "balance scheduling is for PD-mixed only";
    /// Recompute scheduler in a mixed layout: ValueError without a
    /// kv_consumer (vllm_ascend/platform.py @v0.18.0 L461-468, @v0.23.0rc1
    /// L692, @v0.30.0rc2 L1128).
    RecomputeSchedulerMixed = "recompute_scheduler_mixed", Hard, "the recompute scheduler needs a kv_consumer";
    /// Recompute scheduler on prefill where the image ignores it (#11537;
    /// platform.py "ignored on PD-disaggregated P nodes" from v0.23.0rc1 to
    /// v0.30.0rc2; the rows' `recompute`).
    RecomputeSchedulerOnPrefill = "recompute_scheduler_on_prefill", Convention, "the recompute scheduler is decode-only from v0.23.0rc1";
    /// MLAPO on a non-decode engine of an MLA model where the MLA backend
    /// takes it only on pure decode instances (`enabling_mlapo`,
    /// vllm_ascend/attention/utils.py @v0.18.0 L327 … @v0.30.0rc2 L581; A2/A3
    /// at every release, 950DT at v0.18.0 only). DSA models are exempt: the
    /// SFA backend reads the switch on every role (attention/sfa_v1.py
    /// @v0.18.0 L412 … @v0.30.0rc2 L898).
    MlapoDecodeOnly = "mlapo_decode_only", Convention, "on A2/A3 the MLA backend takes MLAPO only on pure decode engines";
    /// LMHead TP misuse: `data_parallel_size % lmhead_tensor_parallel_size`
    /// (vllm_ascend/ascend_config.py @v0.18.0 L248, @v0.23.0 L592,
    /// @v0.30.0rc2 L1437). The `tensor_parallel_size == 1` requirement next
    /// to it is for oproj (and, from v0.30, MLP) TP only: upstream's own
    /// configs run lmhead TP 8 on TP4 decode engines.
    LmheadTensorParallel = "lmhead_tensor_parallel", Hard, "lmhead TP divides DP";
    /// A fine-grained TP size beyond its bound where vllm-ascend refuses it
    /// at start (`FinegrainedTPConfig`, vllm_ascend/ascend_config.py
    /// @v0.18.0 L225, @v0.23.0 L537, @v0.30.0rc2 L1362): oproj (and olora
    /// v0.20.2rc1 to v0.27.1rc1, MLP from v0.30.0rc1) only on decode engines
    /// of a PD layout, with graphs, TP 1 (from v0.23.0rc1) and PCP 1 (from
    /// v0.30.0rc1); every size but lmhead's (`lmhead_tensor_parallel`)
    /// divides DP. Read per release from the generated facts
    /// (`finegrained_tp`), not typed.
    FinegrainedTpPreconditions = "finegrained_tp_preconditions", Hard, "fine-grained TP sizes meet vllm-ascend's preconditions";
    /// A PD engine with context parallelism (PCP from the topology, DCP from
    /// `--decode-context-parallel-size`) whose `--cp-kv-cache-interleave-size`
    /// (vLLM's default 1) is not its block size (128 unless set): vllm-ascend
    /// asserts they are equal (platform.py `check_and_update_config`
    /// @v0.18.0 L484, @v0.23.0 L743; DCP only from v0.28.0rc1, @v0.30.0rc2
    /// L1408). Which sizes count is the generated facts'
    /// `cp_interleave_refusal`.
    CpInterleaveMatchesBlock = "cp_interleave_matches_block", Hard, "a PD engine with context parallelism interleaves its KV cache by its block size";
    /// Dynamic EPLB without its env switch (`DYNAMIC_EPLB`,
    /// vllm_ascend/ascend_config.py @v0.18.0 L422, @v0.23.0 L887, @v0.30.0rc2
    /// L326).
    EplbRequiresEnv = "eplb_requires_env", Hard, "`eplb_config.dynamic_eplb` needs env `DYNAMIC_EPLB=true` (model runner V1)";
    /// `eplb_config` fields and EPLB env switches of the other model runner:
    /// on the V2 runner (`VLLM_USE_V2_MODEL_RUNNER=1`) only its fields, and
    /// no `DYNAMIC_EPLB`/`EXPERT_MAP_RECORD`; on the V1 runner none of the V2
    /// fields (vllm_ascend/platform.py `_validate_eplb_config` @v0.27.1rc1
    /// L896, @v0.30.0rc2 L967). Read from the generated facts
    /// (`eplb_runner`).
    EplbConfigModelRunner = "eplb_config_model_runner", Hard, "EPLB settings belong to the model runner the engine runs";
    /// Key not read by the image: the facts' `additional_config` (every
    /// top-level key vllm_ascend/ reads, per release v0.18.0 to v0.30.0rc2).
    UnknownAdditionalConfigKey = "unknown_additional_config_key", Convention, "`additional_config` keys are read by the image";
    /// Env toggle that does nothing on the image: `VLLM_ASCEND_*` missing
    /// from the facts' `env` of that release, or a variable of
    /// `tables::UNREAD_ENV` that no `tables::OTHER_ENV_READERS` entry
    /// (torch_npu, Mooncake) reads, or a lowercase spelling of a variable
    /// they read upper-case (names are case-sensitive).
    DeadEnvToggle = "dead_env_toggle", Convention, "env toggles have an effect on the image";
    /// A flag or env var that is derived.
    DerivedSetting = "derived_setting", Hard, "derived flags and env are never set by hand";
    /// `--pipeline-parallel-size` above 1 (a rank would span `tp x pp` NPUs,
    /// vllm/config/parallel.py `world_size`, and `tp x pp` kv ports,
    /// mooncake_connector.py, which the placement does not derive), or
    /// `--prefill-context-parallel-size` above 1 as a flag instead of the
    /// topology's `pcp<N>`, where the placement derives it.
    ParallelGroupsExpressible = "parallel_groups_expressible", Hard, "pipeline parallelism stays at 1 and PCP is written in the topology (`dp1tp8pcp2`), where the placement derives its devices and kv ports";
    /// `pcp<N>` above 1 where the image refuses it: vllm-ascend's
    /// `_validate_parallel_config` (platform.py) refuses PCP with DP above 1
    /// at 0.21.0rc1 to 0.24.0rc1, and on the V1 model runner from 0.25.1rc1;
    /// vLLM's V2 runner refuses PCP up to 0.28.0 (vllm/config/vllm.py
    /// `_get_v2_model_runner_unsupported_features`), except where
    /// vllm-ascend's patch allows it (0.28.0rc1). Read from the generated
    /// facts (`pcp_refusals`, `v2_runner_allows`, `v2_model_runner`).
    PrefillContextParallelSupported = "prefill_context_parallel_supported", Hard, "PCP only where the image's vllm-ascend and vLLM start it";
    /// `nodes: { N: ... }` naming a node the layout does not have.
    NodeSettingsExist = "node_settings_exist", Hard, "per-node settings name a node of the layout";
    /// The same flag or env var twice in one block.
    DuplicateSetting = "duplicate_setting", Hard, "a flag or env var is set once per block";
    /// A flag not spelled `--kebab-case`.
    FlagFormat = "flag_format", Hard, "extra flags are spelled `--kebab-case`";
    // --- serve settings ------------------------------------------------------------
    /// Speculative method not known (`SpeculativeMethod` in vLLM's
    /// vllm/config/speculative.py).
    SpeculativeMethodUnknown = "speculative_method_unknown", Hard, "the speculative method is known to vLLM";
    /// Deprecated speculative method name (`deepseek_mtp`, rewritten to
    /// `mtp` in vllm/config/speculative.py; vllm-ascend keeps the alias,
    /// patch_speculative_config.py from v0.20.2rc1).
    SpeculativeMethodDeprecated = "speculative_method_deprecated", Convention, "use `mtp`, not the deprecated `deepseek_mtp`";
    /// Too many speculative tokens: the FIA operator runs at most 16 tokens
    /// per decode round (documented from v0.25.1rc1, docs/source/user_guide/
    /// feature_guide/speculative_decoding.md @v0.25.1rc1 L63, @v0.30.0rc2
    /// L64; the operator limit holds at every image).
    SpeculativeTokenLimit = "speculative_token_limit", Hard, "`num_speculative_tokens` is at least 1 and `+ 1 <= 16`";
    /// Prefill with more than one speculative token: prefill emits one token
    /// per request (the multi-node PD tutorial, every release).
    SpeculativePrefillTokens = "speculative_prefill_tokens", Convention, "prefill runs `num_speculative_tokens = 1`";
    /// MTP on weights without an MTP layer (vLLM's vllm/config/speculative.py
    /// `MTPModelTypes`; the model table's `mtp`).
    SpeculativeNeedsMtp = "speculative_needs_mtp", Hard, "MTP needs weights with an MTP layer";
    /// Decode batch budget below seqs x (1 + spec).
    DecodeBatchBudget = "decode_batch_budget", Convention, "decode `max_num_batched_tokens >= max_num_seqs x (1 + num_speculative_tokens)`";
    /// gpu-memory-utilization out of range (`Field(gt=0, le=1)` in vLLM's
    /// vllm/config/cache.py, 0.18.0 L41 to 0.30.0 L103).
    GpuMemoryUtilization = "gpu_memory_utilization", Hard, "`gpu_memory_utilization` is a number in (0, 1]";
    /// Capture sizes without a cudagraph mode, or malformed.
    GraphCaptureSizes = "graph_capture_sizes", Hard, "capture sizes go with a cudagraph mode and are positive and distinct";
    /// Full graph with several speculative tokens and capture sizes that are
    /// not multiples of tokens + 1 (speculative_decoding.md @v0.21.0rc1 L175,
    /// @v0.26.0rc1 L176, @v0.30.0rc2 L220).
    CaptureSizesSpeculative = "capture_sizes_speculative", Convention, "full-graph capture sizes are multiples of `num_speculative_tokens + 1` when speculating more than one token";
    // --- identity, text fields -------------------------------------------------------
    /// Name not `family/variant` in lowercase.
    NameFormat = "name_format", Hard, "layout names are `family/variant` in `[a-z0-9._-]`";
    /// Path not absolute or with unsafe characters.
    PathFormat = "path_format", Hard, "paths are absolute and free of shell and control characters";
    /// Served name not a plain token.
    ServedNameFormat = "served_name_format", Hard, "served model names are `[A-Za-z0-9._-]`";
    /// Env var name not a shell identifier.
    EnvNameFormat = "env_name_format", Hard, "env var names are shell names, `[A-Za-z_][A-Za-z0-9_]*`";
    /// Text with control characters.
    TextFormat = "text_format", Hard, "text fields hold no control characters";
    /// Date not `YYYY-MM-DD`.
    DateFormat = "date_format", Hard, "dates are `YYYY-MM-DD`";
    // --- role limits and model facts (appended) ------------------------------------
    /// `enable_kv_nz` outside a PD decode engine: NotImplementedError unless
    /// kv_consumer (vllm_ascend/ascend_config.py @v0.18.0 L143-149, @v0.23.0
    /// L274, @v0.30.0rc2 L900).
    KvNzDecodeOnly = "kv_nz_decode_only", Hard, "`enable_kv_nz` runs only on decode engines of a PD layout";
    /// `enable_kv_nz` on a model without plain MLA: RuntimeError "only
    /// supported for mla" (same check, v0.18.0 to v0.30.0rc2).
    KvNzNeedsMla = "kv_nz_needs_mla", Hard, "`enable_kv_nz` needs an MLA model without sparse attention";
    /// `enable_reduce_sample` on prefill or with lmhead TP: ValueError at
    /// v0.23.0 (ascend_config.py L318-340) and v0.27.1rc1 to v0.29.0rc1
    /// (L729, L811, L819), silently wrong on the other images that read the
    /// key (v0.20.2rc1 to v0.29.0rc1, the facts).
    ReduceSampleDecodeOnly = "reduce_sample_decode_only", Hard, "`enable_reduce_sample` never runs on prefill engines nor with lmhead TP";
    /// `eplb_config` sub-key or value the image rejects: `EplbConfig` in
    /// vllm_ascend/ascend_config.py ("Config has no attribute" @v0.18.0 L391
    /// … @v0.26.0rc1 L884, pydantic `extra="forbid"` from v0.27.1rc1); the
    /// sub-keys are the facts' `eplb_config` entry.
    EplbConfigStrict = "eplb_config_strict", Hard, "`eplb_config` holds only the sub-keys and values the image accepts";
    /// `max_num_seqs` of zero (`Field(ge=1)` in vLLM's vllm/config/scheduler.py).
    MaxNumSeqsPositive = "max_num_seqs_positive", Hard, "`max_num_seqs` is at least 1";
    /// `max_model_len: 0`: vLLM refuses it from 0.23.0 ("must be a positive
    /// integer", vllm/config/model.py `validate_model_config_after` @v0.23.0
    /// L788); the vLLMs before take it and serve no request at all.
    MaxModelLenPositive = "max_model_len_positive", Hard, "`max_model_len` is at least 1";
    /// A block size the backend replaces: `refresh_block_size` in
    /// vllm_ascend/utils.py (128 with prefix caching or chunked prefill
    /// @v0.18.0 L1188 … @v0.30.0rc2 L1461; DeepSeek-V4 128 only at
    /// v0.20.2rc1, 32/64/128 from v0.21.0rc1 to v0.30.0rc2).
    BlockSizeBackend = "block_size_backend", Hard, "`block_size` is one the attention backend keeps";
    /// `mlapo_keep_prefill_weights` on a GQA model: ValueError "only
    /// supported for MLA models" (vllm_ascend/ascend_config.py `AscendConfig`
    /// @v0.27.1rc1-v0.30.0rc2, where the facts list the key).
    MlapoKeepNeedsMla = "mlapo_keep_needs_mla", Hard, "`mlapo_keep_prefill_weights` is for MLA models";
    /// `enable_kvpp` with TP x PCP above 1 against `KVPPConfig.validate`'s
    /// preconditions (generated facts `kvpp`, vllm_ascend/ascend_config.py
    /// @v0.28.0rc1-v0.30.0rc2): mixed engines only (its PD connector is
    /// `MooncakeConnectorV2`), eager or piecewise graphs, MLA, its
    /// speculative methods, no DCP.
    KvppPreconditions = "kvpp_preconditions", Hard, "KV layer parallelism runs on a mixed MLA engine with an eager (or piecewise) graph, its speculative methods and no DCP";
    /// Sparse KV offload on a model without DSA sparse attention: vllm-ascend
    /// refuses `sparse_kv_offload_config.enabled` when the config has
    /// `compress_ratios` or lacks `index_topk` (vllm_ascend/ascend_config.py
    /// `SparseKVOffloadConfig` @v0.26.0rc1-v0.30.0rc2).
    SparseKvOffloadNeedsDsa = "sparse_kv_offload_needs_dsa", Hard, "sparse KV offload needs a DSA-sparse model (DeepSeek-V3.2, GLM-5.x)";
    /// Sparse KV offload with PCP or DCP above 1: refused at start
    /// (vllm_ascend/ascend_config.py `SparseKVOffloadConfig` @v0.26.0rc1-v0.30.0rc2).
    SparseKvOffloadWithoutCp = "sparse_kv_offload_without_cp", Hard, "sparse KV offload runs without context parallelism";
    /// Draft-model speculative method without a draft for the weights.
    SpeculativeNeedsDraft = "speculative_needs_draft", Hard, "a speculative method that runs a draft model (eagle, eagle3, dflash, medusa, draft_model, mlp_speculator, custom_class) needs one the model table names";
    /// An attention-specific `additional_config` key on a model whose backend
    /// ignores it (`tables::ATTENTION_CONFIG_KEYS`: MLAPO read by the MLA and
    /// SFA backends, the sparse C8 keys ANDed with `use_sparse` in
    /// ascend_config.py, v0.18.0 to v0.30.0rc2).
    ConfigKeyAttention = "config_key_attention", Convention, "attention-specific `additional_config` keys are set only for models whose backend reads them";
    /// `enable_dsa_cp` on a model without the DSA indexer: DSA CP needs
    /// `index_topk` (vllm_ascend/utils.py `enable_dsa_cp` @v0.20.2rc1 L1389,
    /// @v0.26.0rc1 L1386; ascend_config.py `has_indexer` @v0.27.1rc1
    /// L578-584, @v0.30.0rc2 L800-806).
    /// `enable_dsa_cp` with PCP above 1 or on the V2 model runner: from
    /// v0.30.0rc1 vllm-ascend refuses both at start (ascend_config.py
    /// `AscendConfig` @v0.30.0rc1 L703-714: "use PCP instead").
    DsaCpConflicts = "dsa_cp_conflicts", Hard, "`enable_dsa_cp` runs without PCP and on the V1 model runner (from v0.30.0rc1)";
    DsaCpNeedsIndexer = "dsa_cp_needs_indexer", Convention, "`enable_dsa_cp` is set only for models with the DSA indexer (DeepSeek-V3.2, GLM-5.x, DeepSeek-V4)";
    /// `enable_dsa_cp` on an indexer model without sequence parallelism, on
    /// an image that refuses it: ValueError "DSA CP requires SP to be
    /// enabled" in vllm_ascend/utils.py from v0.20.2rc1 (L1407) to v0.26.0rc1
    /// (L1404); from v0.27.1rc1 DSA CP turns SP on itself (ascend_config.py
    /// L524-529). The rows' `dsa_cp_checks_sp`.
    DsaCpNeedsSp = "dsa_cp_needs_sp", Hard, "`enable_dsa_cp` on an indexer model comes with sequence parallelism (FlashComm1 or shared-expert DP) on v0.20.2rc1 to v0.26.0rc1";
    /// C8 KV weights on a GQA model through `MooncakeConnectorV1`:
    /// `_check_mooncake_c8_kv_cache_quant` raises from v0.23.0rc1
    /// (ascend_config.py @v0.23.0rc1 L35 … @v0.30.0rc2 L715); earlier images corrupt the
    /// transfer silently.
    C8KvGqaConnector = "c8_kv_gqa_connector", Hard, "C8 KV weights of GQA models move KV with the Layerwise connector, not V1";
    /// Verification image malformed or newer than the layout's.
    VerificationImage = "verification_image", Hard, "verification names an image no newer than the layout's";
    // --- capacity (the per-rank memory budget, capacity.rs) ----------------------------
    /// Weights and reserves leave no memory for the KV cache.
    WeightsFit = "weights_fit", Hard, "a rank's weights and reserves fit in `gpu_memory_utilization` x its HBM";
    /// One `max_model_len` request does not fit the KV cache.
    MaxModelLenFitsKv = "max_model_len_fits_kv", Hard, "the KV cache of a rank holds one request of `max_model_len` tokens";
    /// `max_model_len` beyond the model's position embeddings.
    MaxModelLenWithinModel = "max_model_len_within_model", Hard, "`max_model_len` is within the model's `max_position_embeddings` unless `VLLM_ALLOW_LONG_MAX_MODEL_LEN` is set";
    /// The declared workload runs more requests at once than the role holds.
    WorkloadConcurrency = "workload_concurrency", Convention, "the declared workload's concurrency fits `max_num_seqs` x ranks and the KV cache";
    /// `max_num_batched_tokens` below `max_num_seqs`.
    BatchedTokensCoverSeqs = "batched_tokens_cover_seqs", Hard, "`max_num_batched_tokens >= max_num_seqs`";
    /// `max_num_batched_tokens` below `max_model_len` without chunked prefill.
    BatchedTokensCoverModelLen = "batched_tokens_cover_model_len", Hard, "without chunked prefill `max_num_batched_tokens >= max_model_len`";
    // --- acknowledgements -------------------------------------------------------------
    /// `allow` names no rule.
    AllowUnknownRule = "allow_unknown_rule", Hard, "`allow` names a rule";
    /// `allow` of a hard rule.
    AllowHardRule = "allow_hard_rule", Hard, "hard rules cannot be allowed";
    /// `allow` matching no violation.
    AllowUnused = "allow_unused", Hard, "an `allow` must match a violation (no stale excuses)";
    /// The same rule allowed twice.
    AllowDuplicate = "allow_duplicate", Hard, "a rule is allowed once";
}

impl Rule {
    /// The doc comment as plain text: lines joined into paragraphs, the
    /// `///` margin removed. Empty when the rule has none beyond its summary.
    pub fn explanation(self) -> String {
        let mut out = String::new();
        for line in self.doc_source().lines() {
            let line = line.strip_prefix(' ').unwrap_or(line).trim_end();
            if line.is_empty() {
                out.push_str("\n\n");
            } else {
                if !out.is_empty() && !out.ends_with('\n') {
                    out.push(' ');
                }
                out.push_str(line);
            }
        }
        out.trim().to_owned()
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One violation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The rule.
    pub rule: Rule,
    /// Where to point.
    pub site: Site,
    /// Field path for tools and the runtime loader (`topology[1].tp`).
    pub field: String,
    /// What was found, what was expected, and why (lowercase, no period).
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [rule `{}`]", self.message, self.rule.name())
    }
}

/// Every violation of one layout.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// Records a violation.
    pub fn push(
        &mut self,
        rule: Rule,
        site: Site,
        field: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.0.push(Diagnostic {
            rule,
            site,
            field: field.into(),
            message: message.into(),
        });
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Iterates the violations.
    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.0.iter()
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}: {d}", d.field)?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

/// Edit distance with adjacent transpositions (optimal string alignment),
/// for "did you mean" suggestions: `hsot` is one edit from `host`.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // rows[i][j] = distance between a[..i] and b[..j]
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = d;
        }
    }
    rows[a.len()][b.len()]
}

/// The candidate closest to `word`, if it is similar enough to be what the
/// author meant: at most one edit per three characters of `word` (at least
/// one), the threshold rustc uses for its own suggestions. `host` is two
/// edits from `port`, so it is not offered.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = word.chars().count().max(3) / 3;
    candidates
        .into_iter()
        .filter(|c| *c != word)
        .map(|c| (edit_distance(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, c)| c)
}

/// [`closest`] as "; did you mean `x`?", or an empty string.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, candidates)
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for r in Rule::ALL {
            assert_eq!(Rule::from_name(r.name()), Some(*r));
            assert!(seen.insert(r.name()), "duplicate rule name {}", r.name());
            assert!(
                r.name()
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit())
            );
        }
    }

    #[test]
    fn suggestions() {
        assert_eq!(
            did_you_mean("enable_cpu_bindng", ["enable_cpu_binding", "refresh"]),
            "; did you mean `enable_cpu_binding`?"
        );
        assert_eq!(did_you_mean("zzz", ["enable_cpu_binding"]), "");
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("hsot", "host"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    /// Near misses are offered, unrelated names of the same length are not.
    #[test]
    fn suggestions_need_real_similarity() {
        let fields = ["name", "port", "ports", "proxy", "provenance"];
        assert_eq!(closest("host", fields), None);
        assert_eq!(closest("nam", fields), Some("name"));
        assert_eq!(closest("provenence", fields), Some("provenance"));
        assert_eq!(closest("prot", fields), Some("port"));
        assert_eq!(
            closest("max_num_sqs", ["max_num_seqs", "max_model_len"]),
            Some("max_num_seqs")
        );
        assert_eq!(closest("ab", ["cd"]), None);
    }
}
