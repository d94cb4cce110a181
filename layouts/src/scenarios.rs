//! The scenario guide of the catalog index: which layout to start from for a
//! workload. Reference rows are seed 001's tuning tables (DeepSeek-V3.1.md §9,
//! "verified in a specific test environment, for reference only"); guidance
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
}

/// One scenario with the layout to start from.
#[derive(Debug, Clone, Copy)]
pub struct Scenario {
    /// What the operator needs.
    pub need: &'static str,
    /// Layout to start from.
    pub start_from: &'static str,
    /// What to change or watch.
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
    },
    TuningRow {
        scenario: "high throughput (16k)",
        config: "single node",
        npus: 16,
        tp: 4,
        dp: 4,
        max_len: "36k",
        mtp: 3,
    },
    TuningRow {
        scenario: "low latency (3.5k)",
        config: "single node",
        npus: 16,
        tp: 8,
        dp: 2,
        max_len: "36k",
        mtp: 3,
    },
    TuningRow {
        scenario: "low latency (16k)",
        config: "single node",
        npus: 16,
        tp: 8,
        dp: 2,
        max_len: "36k",
        mtp: 3,
    },
    TuningRow {
        scenario: "high throughput / low latency (64k)",
        config: "single node",
        npus: 16,
        tp: 8,
        dp: 2,
        max_len: "132k",
        mtp: 3,
    },
    TuningRow {
        scenario: "high throughput (16k)",
        config: "P node",
        npus: 16,
        tp: 8,
        dp: 2,
        max_len: "36k",
        mtp: 1,
    },
    TuningRow {
        scenario: "high throughput (16k)",
        config: "D node",
        npus: 16,
        tp: 4,
        dp: 8,
        max_len: "36k",
        mtp: 1,
    },
    TuningRow {
        scenario: "low latency (16k)",
        config: "P node",
        npus: 16,
        tp: 8,
        dp: 2,
        max_len: "36k",
        mtp: 3,
    },
    TuningRow {
        scenario: "low latency (16k)",
        config: "D node",
        npus: 16,
        tp: 4,
        dp: 8,
        max_len: "36k",
        mtp: 3,
    },
    TuningRow {
        scenario: "long context (64k)",
        config: "P node",
        npus: 16,
        tp: 16,
        dp: 1,
        max_len: "132k",
        mtp: 3,
    },
    TuningRow {
        scenario: "long context (64k)",
        config: "D node",
        npus: 16,
        tp: 4,
        dp: 8,
        max_len: "132k",
        mtp: 3,
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
    },
    TuningRow {
        scenario: "high throughput (16k)",
        config: "single node",
        npus: 8,
        tp: 8,
        dp: 1,
        max_len: "36k",
        mtp: 3,
    },
    TuningRow {
        scenario: "low latency (3.5k)",
        config: "single node",
        npus: 8,
        tp: 8,
        dp: 1,
        max_len: "36k",
        mtp: 3,
    },
    TuningRow {
        scenario: "low latency (16k)",
        config: "single node",
        npus: 8,
        tp: 8,
        dp: 1,
        max_len: "36k",
        mtp: 3,
    },
    TuningRow {
        scenario: "high throughput / low latency (64k)",
        config: "single node",
        npus: 8,
        tp: 8,
        dp: 1,
        max_len: "132k",
        mtp: 3,
    },
    TuningRow {
        scenario: "high throughput (16k)",
        config: "P node",
        npus: 16,
        tp: 4,
        dp: 4,
        max_len: "36k",
        mtp: 1,
    },
    TuningRow {
        scenario: "high throughput (16k)",
        config: "D node",
        npus: 32,
        tp: 1,
        dp: 32,
        max_len: "36k",
        mtp: 1,
    },
    TuningRow {
        scenario: "low latency (16k)",
        config: "P node",
        npus: 16,
        tp: 4,
        dp: 4,
        max_len: "36k",
        mtp: 3,
    },
    TuningRow {
        scenario: "low latency (16k)",
        config: "D node",
        npus: 32,
        tp: 1,
        dp: 32,
        max_len: "36k",
        mtp: 3,
    },
    TuningRow {
        scenario: "long context (64k)",
        config: "P node",
        npus: 16,
        tp: 4,
        dp: 4,
        max_len: "132k",
        mtp: 3,
    },
    TuningRow {
        scenario: "long context (64k)",
        config: "D node",
        npus: 32,
        tp: 1,
        dp: 32,
        max_len: "132k",
        mtp: 3,
    },
];

/// Which layout to start from.
pub const SCENARIOS: &[Scenario] = &[
    Scenario {
        need: "high throughput, one A3 node (3.5k-16k input)",
        start_from: "deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp4tp4",
        advice: "dp4 tp4 balances memory and compute (table 1); for V4-Flash start from its a3-1node-dp4tp4",
    },
    Scenario {
        need: "low latency or 64k input, one A3 node",
        start_from: "deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp4tp4",
        advice: "change the topology to `<mixed 1 x dp2tp8;>` (table 1 recommends dp2 tp8) and raise `max_model_len` to 132k for 64k input",
    },
    Scenario {
        need: "high throughput or low latency at scale on A3 (3.5k-16k input)",
        start_from: "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d",
        advice: "2P1D over four nodes; the tutorial recommends it over 1P1D, whose NPU memory cannot serve high concurrency; low latency uses 3 MTP tokens (table 2)",
    },
    Scenario {
        need: "long context (64k input, no prefix cache) on A3",
        start_from: "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d",
        advice: "table 2 uses prefill dp1 tp16 and decode dp8 tp4 with 132k max length: `<prefill 2 x dp1tp16; decode 1 x dp8tp4;>` (the table lists the decode node as 16 NPUs although dp8 x tp4 is 32); drop the decode `finegrained_tp_config`, since lmhead TP needs decode TP1",
    },
    Scenario {
        need: "one 950DT node",
        start_from: "deepseek-v3.1-w4a4c8-mxfp4/950dt-1node-tp8",
        advice: "dp1 tp8 for every single-node scenario (tables 3 and 4)",
    },
    Scenario {
        need: "PD at scale on 950DT (any input length)",
        start_from: "deepseek-v3.1-w8a8c8-mxfp8/950dt-2p1d",
        advice: "prefill dp4 tp4 over two nodes, decode dp32 tp1 over four; 132k max length for 64k input (table 4)",
    },
    Scenario {
        need: "decode-bound traffic (short prompts, long outputs; chat) with V4-Flash",
        start_from: "deepseek-v4-flash-w8a8-mtp/a3-1p3d",
        advice: "one prefill engine feeding three decode engines; derived from the verified 1P1D, not separately validated",
    },
    Scenario {
        need: "prefill-bound traffic (long prompts, short outputs; RAG, summarisation) with V4-Flash",
        start_from: "deepseek-v4-flash-w8a8-mtp/a3-3p1d",
        advice: "three prefill engines feeding one decode engine; derived from the verified 1P1D, not separately validated",
    },
    Scenario {
        need: "balanced PD traffic with V4-Flash",
        start_from: "deepseek-v4-flash-w8a8-mtp/a3-1p1d",
        advice: "the verified base; scale out with a3-2p2d",
    },
    Scenario {
        need: "more capacity without PD with V4-Flash",
        start_from: "deepseek-v4-flash-w8a8-mtp/a3x2-mixed-dp8tp4",
        advice: "one engine over two nodes with native DP; simpler to operate than PD",
    },
];

fn table(out: &mut String, rows: &[TuningRow]) {
    out.push_str("| scenario | config | NPUs | TP | DP | max model len | MTP tokens |\n|---|---|---|---|---|---|---|\n");
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            r.scenario, r.config, r.npus, r.tp, r.dp, r.max_len, r.mtp
        ));
    }
}

/// The scenario guide as markdown, for the catalog index.
pub fn scenario_guide() -> String {
    let mut s = String::from("## 场景指南 · Scenario guide\n\n");
    s.push_str("| need | start from | what to change or watch |\n|---|---|---|\n");
    for sc in SCENARIOS {
        s.push_str(&format!(
            "| {} | [`{}`]({}/README.md) | {} |\n",
            sc.need, sc.start_from, sc.start_from, sc.advice
        ));
    }
    s.push_str(
        "\n### 参考配置 · Reference configurations (DeepSeek-V3.1 tutorial §9)\n\n\
         Verified upstream in a specific test environment and given for reference only; the best \
         configuration depends on input/output lengths, prefix-cache hit rate, accuracy needs and \
         the P:D machine ratio.\n\n\
         Atlas 800 A3 (64 GB x 16 per node):\n\n",
    );
    table(&mut s, A3_TUNING);
    s.push_str("\nAscend 950DT (96 GB x 8 per node):\n\n");
    table(&mut s, A950DT_TUNING);
    s
}
