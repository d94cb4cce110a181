//! The scenario guide of the catalog index: which layout to start from for a
//! workload. Reference rows are seed 001's tuning tables (DeepSeek-V3.1.md §9,
//! "verified in a specific test environment, for reference only"), each
//! implemented by a registered layout (`deepseek_v3_1_reference`); guidance
//! rows are seed 000's workload notes. Layout names are links, checked by a
//! test against the registry.

/// One row of a tuning table, as published.
#[derive(Debug, Clone, Copy)]
pub struct TuningRow {
    /// Scenario as the tutorial names it.
    pub scenario: &'static str,
    /// Server / single node, P node or D node.
    pub config: &'static str,
    /// NPUs.
    pub npus: u32,
    /// TP.
    pub tp: u32,
    /// DP.
    pub dp: u32,
    /// Max model length as published.
    pub max_len: &'static str,
    /// MTP speculative tokens.
    pub mtp: u32,
    /// The registered layout that implements the row.
    pub layout: &'static str,
}

/// One need with the layout that serves it.
#[derive(Debug, Clone, Copy)]
pub struct Scenario {
    /// What the operator needs.
    pub need: &'static str,
    /// The registered layout to deploy as is.
    pub layout: &'static str,
    /// What only the operator's own traffic can decide.
    pub advice: &'static str,
}

/// Seed 001 table 2 (A3, 64 GB x 16 per node).
pub const A3_TUNING: &[TuningRow] = &[
    TuningRow {
        scenario: "high throughput (3.5k)",
        config: "single node",
        npus: 16,
        tp: 4,
        dp: 4,
        max_len: "39k",
        mtp: 3,
        layout: "deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp4tp4-3.5k-throughput",
    },
    TuningRow {
        scenario: "high throughput (16k)",
        config: "single node",
        npus: 16,
        tp: 4,
        dp: 4,
        max_len: "36k",
        mtp: 3,
        layout: "deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp4tp4-16k-throughput",
    },
    TuningRow {
        scenario: "low latency (3.5k)",
        config: "single node",
        npus: 16,
        tp: 8,
        dp: 2,
        max_len: "36k",
        mtp: 3,
        layout: "deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp2tp8-16k-low-latency",
    },
    TuningRow {
        scenario: "low latency (16k)",
        config: "single node",
        npus: 16,
        tp: 8,
        dp: 2,
        max_len: "36k",
        mtp: 3,
        layout: "deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp2tp8-16k-low-latency",
    },
    TuningRow {
        scenario: "high throughput / low latency (64k)",
        config: "single node",
        npus: 16,
        tp: 8,
        dp: 2,
        max_len: "132k",
        mtp: 3,
        layout: "deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp2tp8-64k",
    },
    TuningRow {
        scenario: "high throughput (16k)",
        config: "P node",
        npus: 16,
        tp: 8,
        dp: 2,
        max_len: "36k",
        mtp: 1,
        layout: "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d-16k-throughput",
    },
    TuningRow {
        scenario: "high throughput (16k)",
        config: "D node",
        npus: 16,
        tp: 4,
        dp: 8,
        max_len: "36k",
        mtp: 1,
        layout: "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d-16k-throughput",
    },
    TuningRow {
        scenario: "low latency (16k)",
        config: "P node",
        npus: 16,
        tp: 8,
        dp: 2,
        max_len: "36k",
        mtp: 3,
        layout: "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d-16k-low-latency",
    },
    TuningRow {
        scenario: "low latency (16k)",
        config: "D node",
        npus: 16,
        tp: 4,
        dp: 8,
        max_len: "36k",
        mtp: 3,
        layout: "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d-16k-low-latency",
    },
    TuningRow {
        scenario: "long context (64k)",
        config: "P node",
        npus: 16,
        tp: 16,
        dp: 1,
        max_len: "132k",
        mtp: 3,
        layout: "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d-64k",
    },
    TuningRow {
        scenario: "long context (64k)",
        config: "D node",
        npus: 16,
        tp: 4,
        dp: 8,
        max_len: "132k",
        mtp: 3,
        layout: "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d-64k",
    },
];

/// Seed 001 table 4 (Ascend 950DT, 96 GB x 8 per node).
pub const A950DT_TUNING: &[TuningRow] = &[
    TuningRow {
        scenario: "high throughput (3.5k)",
        config: "single node",
        npus: 8,
        tp: 8,
        dp: 1,
        max_len: "39k",
        mtp: 3,
        layout: "deepseek-v3.1-w4a4c8-mxfp4/950dt-1node-tp8-3.5k-throughput",
    },
    TuningRow {
        scenario: "high throughput (16k)",
        config: "single node",
        npus: 8,
        tp: 8,
        dp: 1,
        max_len: "36k",
        mtp: 3,
        layout: "deepseek-v3.1-w4a4c8-mxfp4/950dt-1node-tp8-16k-throughput",
    },
    TuningRow {
        scenario: "low latency (3.5k)",
        config: "single node",
        npus: 8,
        tp: 8,
        dp: 1,
        max_len: "36k",
        mtp: 3,
        layout: "deepseek-v3.1-w4a4c8-mxfp4/950dt-1node-tp8-16k-low-latency",
    },
    TuningRow {
        scenario: "low latency (16k)",
        config: "single node",
        npus: 8,
        tp: 8,
        dp: 1,
        max_len: "36k",
        mtp: 3,
        layout: "deepseek-v3.1-w4a4c8-mxfp4/950dt-1node-tp8-16k-low-latency",
    },
    TuningRow {
        scenario: "high throughput / low latency (64k)",
        config: "single node",
        npus: 8,
        tp: 8,
        dp: 1,
        max_len: "132k",
        mtp: 3,
        layout: "deepseek-v3.1-w4a4c8-mxfp4/950dt-1node-tp8",
    },
    TuningRow {
        scenario: "high throughput (16k)",
        config: "P node",
        npus: 16,
        tp: 4,
        dp: 4,
        max_len: "36k",
        mtp: 1,
        layout: "deepseek-v3.1-w8a8c8-mxfp8/950dt-2p1d-16k-throughput",
    },
    TuningRow {
        scenario: "high throughput (16k)",
        config: "D node",
        npus: 32,
        tp: 1,
        dp: 32,
        max_len: "36k",
        mtp: 1,
        layout: "deepseek-v3.1-w8a8c8-mxfp8/950dt-2p1d-16k-throughput",
    },
    TuningRow {
        scenario: "low latency (16k)",
        config: "P node",
        npus: 16,
        tp: 4,
        dp: 4,
        max_len: "36k",
        mtp: 3,
        layout: "deepseek-v3.1-w8a8c8-mxfp8/950dt-2p1d-16k-low-latency",
    },
    TuningRow {
        scenario: "low latency (16k)",
        config: "D node",
        npus: 32,
        tp: 1,
        dp: 32,
        max_len: "36k",
        mtp: 3,
        layout: "deepseek-v3.1-w8a8c8-mxfp8/950dt-2p1d-16k-low-latency",
    },
    TuningRow {
        scenario: "long context (64k)",
        config: "P node",
        npus: 16,
        tp: 4,
        dp: 4,
        max_len: "132k",
        mtp: 3,
        layout: "deepseek-v3.1-w8a8c8-mxfp8/950dt-2p1d-64k",
    },
    TuningRow {
        scenario: "long context (64k)",
        config: "D node",
        npus: 32,
        tp: 1,
        dp: 32,
        max_len: "132k",
        mtp: 3,
        layout: "deepseek-v3.1-w8a8c8-mxfp8/950dt-2p1d-64k",
    },
];

/// Which layout serves which need: every V3.1 row is a reference
/// configuration of the tutorial (§9.1) or one of its base commands, ready to
/// deploy; the advice keeps only what depends on the operator's traffic.
pub const SCENARIOS: &[Scenario] = &[
    Scenario {
        need: "V3.1 on one A3 node, high throughput, prompts up to 3.5k",
        layout: "deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp4tp4-3.5k-throughput",
        advice: "size `max_num_seqs` to your concurrency; its 39k context also serves the tutorial's accuracy runs",
    },
    Scenario {
        need: "V3.1 on one A3 node, high throughput, prompts up to 16k",
        layout: "deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp4tp4-16k-throughput",
        advice: "size `max_num_seqs` to your concurrency",
    },
    Scenario {
        need: "V3.1 on one A3 node, low latency, prompts up to 16k",
        layout: "deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp2tp8-16k-low-latency",
        advice: "fewer running sequences (`max_num_seqs`) trade concurrency for TPOT",
    },
    Scenario {
        need: "V3.1 on one A3 node, prompts up to 64k",
        layout: "deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp2tp8-64k",
        advice: "size `max_num_seqs` to your concurrency; balance scheduling is on, turn it off if TTFT matters more than throughput",
    },
    Scenario {
        need: "V3.1 PD on four A3 nodes, prompts up to 3.5k",
        layout: "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d",
        advice: "the tutorial's published TTFT/TPOT come from this layout; the P:D ratio follows your prompt and output lengths",
    },
    Scenario {
        need: "V3.1 PD on four A3 nodes, high throughput, prompts up to 16k",
        layout: "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d-16k-throughput",
        advice: "the P:D ratio and decode `max_num_seqs` follow your prompt and output lengths",
    },
    Scenario {
        need: "V3.1 PD on four A3 nodes, low latency, prompts up to 16k",
        layout: "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d-16k-low-latency",
        advice: "the P:D ratio and decode `max_num_seqs` follow your prompt and output lengths",
    },
    Scenario {
        need: "V3.1 PD on four A3 nodes, prompts up to 64k",
        layout: "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d-64k",
        advice: "prefix caching stays off as measured; turn it on only if your prompts share long prefixes",
    },
    Scenario {
        need: "V3.1 on one 950DT node, high throughput, prompts up to 3.5k",
        layout: "deepseek-v3.1-w4a4c8-mxfp4/950dt-1node-tp8-3.5k-throughput",
        advice: "size `max_num_seqs` to your concurrency",
    },
    Scenario {
        need: "V3.1 on one 950DT node, high throughput, prompts up to 16k",
        layout: "deepseek-v3.1-w4a4c8-mxfp4/950dt-1node-tp8-16k-throughput",
        advice: "size `max_num_seqs` to your concurrency",
    },
    Scenario {
        need: "V3.1 on one 950DT node, low latency, prompts up to 16k",
        layout: "deepseek-v3.1-w4a4c8-mxfp4/950dt-1node-tp8-16k-low-latency",
        advice: "fewer running sequences (`max_num_seqs`) trade concurrency for TPOT",
    },
    Scenario {
        need: "V3.1 on one 950DT node, prompts up to 64k",
        layout: "deepseek-v3.1-w4a4c8-mxfp4/950dt-1node-tp8",
        advice: "size `max_num_seqs` to your concurrency",
    },
    Scenario {
        need: "V3.1 PD on eight 950DT nodes, prompts up to 3.5k",
        layout: "deepseek-v3.1-w8a8c8-mxfp8/950dt-2p1d",
        advice: "the P:D ratio follows your prompt and output lengths",
    },
    Scenario {
        need: "V3.1 PD on eight 950DT nodes, high throughput, prompts up to 16k",
        layout: "deepseek-v3.1-w8a8c8-mxfp8/950dt-2p1d-16k-throughput",
        advice: "the P:D ratio and decode `max_num_seqs` follow your prompt and output lengths",
    },
    Scenario {
        need: "V3.1 PD on eight 950DT nodes, low latency, prompts up to 16k",
        layout: "deepseek-v3.1-w8a8c8-mxfp8/950dt-2p1d-16k-low-latency",
        advice: "the P:D ratio and decode `max_num_seqs` follow your prompt and output lengths",
    },
    Scenario {
        need: "V3.1 PD on eight 950DT nodes, prompts up to 64k",
        layout: "deepseek-v3.1-w8a8c8-mxfp8/950dt-2p1d-64k",
        advice: "prefix caching stays off as measured; turn it on only if your prompts share long prefixes",
    },
    Scenario {
        need: "V3.1 on two A2 nodes (the smallest A2 cluster for the w8a8 weights)",
        layout: "deepseek-v3.1-w8a8-mtp-quarot/a2x2-mixed-dp4tp4",
        advice: "size `max_num_seqs` to your concurrency",
    },
    Scenario {
        need: "V4-Flash on one A3 node",
        layout: "deepseek-v4-flash-w8a8-mtp/a3-1node-dp4tp4",
        advice: "size `max_num_seqs` to your concurrency",
    },
    Scenario {
        need: "V4-Flash, decode-bound traffic (short prompts, long outputs; chat)",
        layout: "deepseek-v4-flash-w8a8-mtp/a3-1p3d",
        advice: "one prefill engine feeding three decode engines; derived from the verified 1P1D, not separately validated",
    },
    Scenario {
        need: "V4-Flash, prefill-bound traffic (long prompts, short outputs; RAG, summarisation)",
        layout: "deepseek-v4-flash-w8a8-mtp/a3-3p1d",
        advice: "three prefill engines feeding one decode engine; derived from the verified 1P1D, not separately validated",
    },
    Scenario {
        need: "V4-Flash, balanced PD traffic",
        layout: "deepseek-v4-flash-w8a8-mtp/a3-1p1d",
        advice: "the verified base; scale out with `a3-2p2d`",
    },
    Scenario {
        need: "V4-Flash, more capacity without PD",
        layout: "deepseek-v4-flash-w8a8-mtp/a3x2-mixed-dp8tp4",
        advice: "one engine over two nodes with native DP; simpler to operate than PD",
    },
];

/// The part of a layout name after its model family.
fn variant(name: &str) -> &str {
    name.rsplit_once('/').map_or(name, |(_, v)| v)
}

fn table(out: &mut String, rows: &[TuningRow]) {
    out.push_str("| scenario | config | NPUs | TP | DP | max model len | MTP tokens | layout |\n|---|---|---|---|---|---|---|---|\n");
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | [`{}`]({}/README.md) |\n",
            r.scenario,
            r.config,
            r.npus,
            r.tp,
            r.dp,
            r.max_len,
            r.mtp,
            variant(r.layout),
            r.layout
        ));
    }
}

/// The scenario guide as markdown, for the catalog index.
pub fn scenario_guide() -> String {
    let mut s = String::from("## 场景指南 · Scenario guide\n\n");
    s.push_str("| need | layout | what depends on your traffic |\n|---|---|---|\n");
    for sc in SCENARIOS {
        s.push_str(&format!(
            "| {} | [`{}`]({}/README.md) | {} |\n",
            sc.need, sc.layout, sc.layout, sc.advice
        ));
    }
    s.push_str(
        "\n### 参考配置 · Reference configurations (DeepSeek-V3.1 tutorial §9)\n\n\
         Verified upstream in a specific test environment and given for reference only; the best \
         configuration depends on input/output lengths, prefix-cache hit rate, accuracy needs and \
         the P:D machine ratio. Each row links the layout that implements it; what a table leaves \
         open is stated in that layout's Deviations.\n\n\
         Atlas 800 A3 (64 GB x 16 per node):\n\n",
    );
    table(&mut s, A3_TUNING);
    s.push_str("\nAscend 950DT (96 GB x 8 per node):\n\n");
    table(&mut s, A950DT_TUNING);
    upstream_table(&mut s);
    s
}

/// The upstream deployments (`crate::upstream`, generated from upstream's
/// e2e configs): one row each, with the workload and the frozen baseline
/// their config records.
fn upstream_table(out: &mut String) {
    out.push_str(
        "\n### 上游部署 · Upstream's CI deployments\n\n\
         One per model family, hardware and kind that upstream vllm-ascend's multi-node e2e \
         tests deploy, imported from the newest release's config; the baseline is the output \
         throughput upstream's CI requires of it (tools/aisbench.py, token/s over the whole \
         deployment). Each layout's Deviations say what pd-dsl runs differently.\n\n\
         | model family | hardware | layout | workload | baseline |\n|---|---|---|---|---|\n",
    );
    for spec in crate::upstream::all() {
        let name = &spec.name.value;
        let family = spec
            .summary
            .first()
            .and_then(|s| s.split(" on ").next())
            .unwrap_or("");
        let hw = match &spec.hardware {
            pd_dsl::spec::HardwareSpec::All(h) => pd_dsl::tables::hardware(&h.value)
                .map_or(h.value.as_str(), |h| h.product)
                .to_owned(),
            other => format!("{other:?}"),
        };
        let workload = spec.workload.as_ref().map_or("", |w| w.value.as_str());
        let baseline = spec
            .figures
            .first()
            .map_or_else(|| "none recorded".to_owned(), |f| f.value.value.clone());
        out.push_str(&format!(
            "| {family} | {hw} | [`{}`]({name}/README.md) | {} | {baseline} |\n",
            variant(name),
            workload.replace('|', "\\|")
        ));
    }
}
