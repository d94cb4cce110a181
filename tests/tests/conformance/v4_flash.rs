//! Seed 000: DeepSeek-V4-Flash-w8a8-mtp on A3 (the catalog page's facts).

use crate::kv_config;
use crate::mixed::mixed_node;
use pd_dsl_tests::harness::{DryRun, dry_run, flags, one, ranks, render, serve};
use serde_json::Value;

/// One seed-000 PD entry: written from the page's text.
struct V4Entry {
    name: &'static str,
    /// "fans N prefill + M decode endpoints".
    endpoints: (usize, usize),
    /// "engine_id 0/2/4", "engine_id 1/3/5", per node in node order.
    engine_ids: &'static [&'static str],
    /// kv port per node in node order.
    kv_ports: &'static [&'static str],
    connector: &'static str,
    /// kv_connector_extra_config "prefill{dp 4,tp 4}/decode{dp 16,tp 1}".
    extra: (u64, u64, u64, u64),
}

const V4_PD: [V4Entry; 5] = [
    V4Entry {
        name: "deepseek-v4-flash-w8a8-mtp/a3-1p1d",
        endpoints: (4, 16),
        engine_ids: &["0", "1"],
        kv_ports: &["36000", "36100"],
        connector: "MooncakeHybridConnector",
        extra: (4, 4, 16, 1),
    },
    V4Entry {
        name: "deepseek-v4-flash-w8a8-mtp/a3-1p3d",
        endpoints: (4, 48),
        engine_ids: &["0", "1", "3", "5"],
        kv_ports: &["36000", "36100", "36100", "36100"],
        connector: "MooncakeHybridConnector",
        extra: (4, 4, 16, 1),
    },
    V4Entry {
        name: "deepseek-v4-flash-w8a8-mtp/a3-2p2d",
        endpoints: (8, 32),
        engine_ids: &["0", "2", "1", "3"],
        kv_ports: &["36000", "36000", "36100", "36100"],
        connector: "MooncakeHybridConnector",
        extra: (4, 4, 16, 1),
    },
    V4Entry {
        name: "deepseek-v4-flash-w8a8-mtp/a3-3p1d",
        endpoints: (12, 16),
        engine_ids: &["0", "2", "4", "1"],
        kv_ports: &["36000", "36000", "36000", "36100"],
        connector: "MooncakeHybridConnector",
        extra: (4, 4, 16, 1),
    },
    V4Entry {
        name: "deepseek-v4-flash-w8a8-mtp/a3-2p1d-v1",
        endpoints: (32, 32),
        engine_ids: &["0", "2", "1", "1"],
        kv_ports: &["30000", "30100", "30200", "30200"],
        connector: "MooncakeConnectorV1",
        extra: (16, 1, 32, 1),
    },
];

#[test]
fn v4_flash_pd_layouts_carry_the_catalog_page_facts() {
    let ips = ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"];
    for e in &V4_PD {
        let r = render(e.name);
        let nodes = e.engine_ids.len();
        let runs: Vec<DryRun> = (0..nodes).map(|n| dry_run(&r, n, &ips[..nodes])).collect();
        let proxy = flags(
            &runs[0]
                .proxy_command
                .as_ref()
                .expect("node 0 runs the proxy")[2..],
        );
        assert_eq!(
            (
                proxy["--prefiller-ports"].len(),
                proxy["--decoder-ports"].len()
            ),
            e.endpoints,
            "{}: proxy fan-out",
            e.name
        );
        for (n, d) in runs.iter().enumerate() {
            assert_eq!(
                d.engine_id.as_deref(),
                Some(e.engine_ids[n]),
                "{} node {n} engine_id",
                e.name
            );
            assert_eq!(
                d.kv_port.as_deref(),
                Some(e.kv_ports[n]),
                "{} node {n} kv_port",
                e.name
            );
            // The template of the node's first rank: connector, role, shapes.
            let rank0 = &ranks(&r, &d.node_command)[0];
            let role = if d
                .node_command
                .iter()
                .any(|a| a.ends_with("run_dp_template_prefill.sh"))
            {
                "prefill"
            } else {
                "decode"
            };
            let s = serve(
                &r,
                &format!("run_dp_template_{role}.sh"),
                rank0,
                &[("ENGINE_ID", e.engine_ids[n]), ("KV_PORT", e.kv_ports[n])],
            );
            let kv = kv_config(&s);
            assert_eq!(kv["kv_connector"], e.connector);
            assert_eq!(
                kv["kv_role"],
                if role == "prefill" {
                    "kv_producer"
                } else {
                    "kv_consumer"
                }
            );
            assert_eq!(kv["engine_id"], e.engine_ids[n]);
            assert_eq!(kv["kv_port"], e.kv_ports[n]);
            let x = &kv["kv_connector_extra_config"];
            assert_eq!(
                (
                    x["prefill"]["dp_size"].as_u64(),
                    x["prefill"]["tp_size"].as_u64(),
                    x["decode"]["dp_size"].as_u64(),
                    x["decode"]["tp_size"].as_u64()
                ),
                (
                    Some(e.extra.0),
                    Some(e.extra.1),
                    Some(e.extra.2),
                    Some(e.extra.3)
                ),
                "{} node {n}: extra-config shapes identical on every engine",
                e.name
            );
            // v0.21.0rc1 refresh: mtp with enforce_eager; the seed-000
            // deployment deviations; none of the dead toggles.
            let spec: Value =
                serde_json::from_str(&one(&flags(&s.argv[2..]), "--speculative-config"))
                    .expect("json");
            assert_eq!(spec["method"], "mtp");
            assert_eq!(spec["enforce_eager"], true);
            let tokens = if e.name.ends_with("2p1d-v1") && role == "decode" {
                2
            } else {
                1
            };
            assert_eq!(spec["num_speculative_tokens"], tokens, "{} {role}", e.name);
            assert_eq!(s.argv[1], "/root/model");
            assert!(s.env["LD_LIBRARY_PATH"].starts_with("/usr/local/lib"));
            for dead in [
                "ACL_OP_INIT_MODE",
                "ASCEND_A3_ENABLE",
                "USE_MULTI_BLOCK_POOL",
                "VLLM_ASCEND_ENABLE_FUSED_MC2",
                "USE_MULTI_GROUPS_KV_CACHE",
            ] {
                assert!(
                    !s.env.contains_key(dead),
                    "{}: dead toggle {dead} exported",
                    e.name
                );
            }
        }
        // API ports: prefill instances 7100..7103, decode 7100..7115.
        let p = &proxy["--prefiller-ports"];
        assert_eq!(p.first().map(String::as_str), Some("7100"));
        let last_p = if e.extra.0 == 4 { "7103" } else { "7115" };
        assert_eq!(p.last().map(String::as_str), Some(last_p));
        assert_eq!(
            proxy["--decoder-ports"].last().map(String::as_str),
            Some("7115")
        );
    }
}

#[test]
fn v4_flash_mixed_layouts_carry_the_catalog_page_facts() {
    // Single node DP4 x TP4 with one API server on 8900.
    let r = render("deepseek-v4-flash-w8a8-mtp/a3-1node-dp4tp4");
    let s = mixed_node(&r, 0, &["10.0.0.1"]);
    let f = flags(&s.argv[2..]);
    assert_eq!(
        (
            one(&f, "--data-parallel-size"),
            one(&f, "--tensor-parallel-size")
        ),
        ("4".into(), "4".into())
    );
    assert_eq!(one(&f, "--port"), "8900");
    assert_eq!(one(&f, "--api-server-count"), "1");

    // 2x A3 DP8 x TP4: `--data-parallel-size 8 --data-parallel-size-local 4`,
    // the second node `--headless --data-parallel-start-rank 4`.
    let r = render("deepseek-v4-flash-w8a8-mtp/a3x2-mixed-dp8tp4");
    let ips = ["10.0.0.1", "10.0.0.2"];
    let n0 = flags(&mixed_node(&r, 0, &ips).argv[2..]);
    let n1s = mixed_node(&r, 1, &ips);
    let n1 = flags(&n1s.argv[2..]);
    for f in [&n0, &n1] {
        assert_eq!(one(f, "--data-parallel-size"), "8");
        assert_eq!(one(f, "--data-parallel-size-local"), "4");
        assert_eq!(one(f, "--data-parallel-address"), "10.0.0.1");
        assert_eq!(one(f, "--tensor-parallel-size"), "4");
    }
    assert!(!n0.contains_key("--headless") && n1.contains_key("--headless"));
    assert_eq!(one(&n1, "--data-parallel-start-rank"), "4");
    let spec: Value = serde_json::from_str(&one(&n1, "--speculative-config")).expect("json");
    assert_eq!(
        (spec["method"].as_str(), spec["enforce_eager"].as_bool()),
        (Some("mtp"), Some(true))
    );
    for dead in [
        "ACL_OP_INIT_MODE",
        "ASCEND_A3_ENABLE",
        "USE_MULTI_BLOCK_POOL",
        "VLLM_ASCEND_ENABLE_FUSED_MC2",
        "USE_MULTI_GROUPS_KV_CACHE",
    ] {
        assert!(!n1s.env.contains_key(dead), "dead toggle {dead} exported");
    }
}

#[test]
fn seed_000_provenance_verification_and_guidance_reach_the_docs() {
    let catalog = layouts::catalog().unwrap_or_else(|e| panic!("{e}"));
    let index = pd_dsl::render::render_catalog(catalog).expect("render");
    let page = &index
        .iter()
        .find(|a| a.path.as_os_str() == "README.md")
        .expect("index page")
        .contents;
    // Written from seed 000: recorded dates per entry and the page notes.
    for (name, date) in [
        ("deepseek-v4-flash-w8a8-mtp/a3-1node-dp4tp4", "2026-06-27"),
        ("deepseek-v4-flash-w8a8-mtp/a3-1p1d", "2026-06-27"),
        ("deepseek-v4-flash-w8a8-mtp/a3-1p3d", "2026-06-30"),
        ("deepseek-v4-flash-w8a8-mtp/a3x2-mixed-dp8tp4", "2026-06-27"),
        ("deepseek-v4-flash-w8a8-mtp/a3-2p1d-v1", "2026-06-27"),
        ("deepseek-v4-flash-w8a8-mtp/a3-2p2d", "2026-06-30"),
        ("deepseek-v4-flash-w8a8-mtp/a3-3p1d", "2026-06-30"),
    ] {
        let l = catalog
            .iter()
            .find(|l| l.name() == name)
            .expect("registered");
        assert_eq!(l.spec.provenance.recorded.value, date, "{name}");
        assert_eq!(l.image.tag, "v0.21.0rc1");
        assert!(
            !l.verified,
            "{name}: no seed-000 layout is verified on v0.21.0rc1"
        );
        assert!(page.contains(name), "index lists {name}");
    }
    assert!(page.contains("此页面不重新认定硬件验证结果"));
    assert!(
        page.contains("历史使用基线不代表当前镜像已经跑通")
            || page.contains("does not mean the current image")
    );
    // The fan-outs say they are derived and not separately validated, and
    // carry their workload guidance.
    let readme = |name: &str| -> String {
        let l = catalog
            .iter()
            .find(|l| l.name() == name)
            .expect("registered");
        pd_dsl::render::render_layout(l)
            .expect("render")
            .into_iter()
            .find(|a| a.path.ends_with("README.md"))
            .expect("README")
            .contents
    };
    for (name, guidance) in [
        (
            "deepseek-v4-flash-w8a8-mtp/a3-1p3d",
            "short prompts, long outputs",
        ),
        (
            "deepseek-v4-flash-w8a8-mtp/a3-3p1d",
            "long prompts, short outputs",
        ),
    ] {
        let text = readme(name);
        assert!(text.contains("not separately validated"), "{name}");
        assert!(text.contains(guidance), "{name}");
        assert!(
            text.contains("kv_port_on_adxl_edge"),
            "{name}: acknowledged deviation listed"
        );
        assert!(
            text.contains("/root/model"),
            "{name}: model path deviation listed"
        );
    }
    let v1 = readme("deepseek-v4-flash-w8a8-mtp/a3-2p1d-v1");
    assert!(v1.contains("kv_port_in_adxl_range") && v1.contains("connector_hybrid_kv"));
    assert!(v1.contains("deepseek_mtp -> mtp"));
    // Seed 001's published figures, with the hardware they came from.
    let a3 = readme("deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d");
    for fig in ["6.16 s", "48.82 ms", "478 TPS per card", "A3-752T"] {
        assert!(a3.contains(fig), "figure {fig}");
    }
    // The accuracy figures need `max_model_len` >= 35000 (tutorial §5.1):
    // they sit on a one-node layout long enough for them, and the 16384-token
    // base says it is too short.
    let single = readme("deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp4tp4");
    assert!(!single.contains("90.94") && !single.contains("96.28"));
    assert!(single.contains("too short") && single.contains("35000"));
    let long = readme("deepseek-v3.1-w8a8-mtp-quarot/a3-1node-dp4tp4-3.5k-throughput");
    assert!(long.contains("90.94") && long.contains("96.28") && long.contains(">= 35000"));
}
