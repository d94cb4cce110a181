//! `pd_dsl::plan`: every candidate passes the rules and fits the node
//! budget, the ranking follows the estimate, refusals are counted by rule,
//! and the best layout's file loads back.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use pd_dsl::estimate::Workload;
use pd_dsl::plan::{Request, plan};

fn request(model: &str, max_nodes: u32) -> Request {
    Request {
        model: model.into(),
        hardware: "a3".into(),
        image: None,
        max_nodes,
        min_nodes: 1,
        workload: Workload {
            input_len: 3500,
            output_len: 1500,
            prefix_rate: 0.0,
            concurrency: Some(700),
            request_rate: None,
        },
        ttft_s: None,
        tpot_ms: None,
        target_tokens_per_s: None,
    }
}

#[test]
fn candidates_pass_every_rule_within_the_budget_and_rank_by_output() {
    let mut req = request("deepseek_v3_1_w8a8_mtp_quarot", 4);
    req.min_nodes = 2;
    req.tpot_ms = Some(50.0);
    let p = plan(&req).unwrap();
    assert!(p.candidates.len() >= 5, "{:?}", p.refused);
    assert!(p.enumerated > p.candidates.len());
    // Refused for the reasons the rules give: MooncakeConnectorV1 needs
    // prefill TP >= decode TP; a V3 rank of 1-2 NPUs cannot hold its share.
    assert!(
        p.refused.contains_key("prefill_tp_ge_decode_tp"),
        "{:?}",
        p.refused
    );
    assert!(p.refused.contains_key("weights_fit"), "{:?}", p.refused);
    assert_eq!(
        p.enumerated,
        p.candidates.len() + p.refused.values().sum::<usize>()
    );
    for c in &p.candidates {
        assert!((2..=4).contains(&c.nodes), "{}", c.topology);
        assert_eq!(c.npus, c.nodes * 16);
        let layout = pd_dsl::check(&p.spec(c).unwrap()).expect("a candidate passes every rule");
        assert_eq!(layout.placement.nodes.len() as u32, c.nodes);
        assert_eq!(c.meets, c.estimate.tpot_ms <= 50.0, "{}", c.topology);
    }
    // Those meeting the limit first, each part by output tokens/s.
    let meets: Vec<bool> = p.candidates.iter().map(|c| c.meets).collect();
    assert!(meets.windows(2).all(|w| w[0] >= w[1]), "{meets:?}");
    for part in [true, false] {
        let out: Vec<f64> = p
            .candidates
            .iter()
            .filter(|c| c.meets == part)
            .map(|c| c.estimate.output_tokens_per_s)
            .collect();
        assert!(out.windows(2).all(|w| w[0] >= w[1]), "{out:?}");
    }
    // The best one's file loads back to the same layout.
    let best = &p.candidates[0];
    let spec = p.spec(best).unwrap();
    let yaml = serde_saphyr::to_string(&spec).unwrap();
    let back = pd_dsl::load::parse_yaml("best.yaml", &yaml).unwrap();
    assert_eq!(back, spec);
}

/// With a target, the fewest nodes that reach it come first.
#[test]
fn a_target_ranks_the_fewest_nodes_that_reach_it_first() {
    let mut req = request("deepseek_v3_1_w8a8_mtp_quarot", 4);
    let all = plan(&req).unwrap();
    let best = all.candidates[0].estimate.output_tokens_per_s;
    req.target_tokens_per_s = Some(best * 0.5);
    let p = plan(&req).unwrap();
    let first = &p.candidates[0];
    assert!(first.meets);
    let fewest = p
        .candidates
        .iter()
        .filter(|c| c.estimate.output_tokens_per_s >= best * 0.5)
        .map(|c| c.nodes)
        .min()
        .unwrap();
    assert_eq!(first.nodes, fewest);
    // Beyond any layout: nothing meets it.
    req.target_tokens_per_s = Some(best * 10.0);
    assert!(plan(&req).unwrap().candidates.iter().all(|c| !c.meets));
}

#[test]
fn bad_requests_say_what_and_why() {
    let e = plan(&request("deepseek_v3_1_w8a8_mtp_quarott", 2))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("did you mean `deepseek_v3_1_w8a8_mtp_quarot`"),
        "{e}"
    );
    let mut r = request("deepseek_v3_1_w8a8_mtp_quarot", 2);
    r.hardware = "a4".into();
    let e = plan(&r).unwrap_err().to_string();
    assert!(
        e.contains("expected one of `a2`, `a3`, `ascend_950dt`"),
        "{e}"
    );
    let e = plan(&request("glm_5_2", 2)).unwrap_err().to_string();
    assert!(e.contains("has no dimensions"), "{e}");
    let e = plan(&request("deepseek_v3_1_w8a8_mtp_quarot", 0))
        .unwrap_err()
        .to_string();
    assert!(e.contains("expected at least one node"), "{e}");
}
