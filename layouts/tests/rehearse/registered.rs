//! Every registered layout through `catalog rehearse`, end to end, and with
//! a dead HTTP proxy in the environment.

use crate::{PD, rehearse, rehearse_env};

#[test]
fn every_registered_layout_rehearses_end_to_end() {
    let layouts = layouts::catalog().unwrap();
    let mut times = Vec::new();
    // Every PD layout under both stand-in proxy policies: upstream's
    // least-loaded policy reaches every rank only when requests overlap.
    let runs = layouts.iter().flat_map(|l| {
        let policies: &[&str] = if l.is_pd() {
            &["round-robin", "least-loaded"]
        } else {
            &["round-robin"]
        };
        policies.iter().map(move |p| (l, *p))
    });
    for (l, policy) in runs {
        let run = rehearse(&[l.name(), "--proxy-policy", policy]);
        assert_eq!(run.code, Some(0), "{}", run.out);
        assert!(
            run.out.contains(&format!("PASS {}", l.name())),
            "{}",
            run.out
        );
        let what = if l.is_pd() {
            "every prefill and decode rank served"
        } else {
            "every API server served"
        };
        assert!(run.out.contains(what), "{}", run.out);
        assert!(run.out.contains("verify.sh: ok"), "{}", run.out);
        // Node 0 says it is ready, and verify.sh finds it in a fresh shell
        // (no PD_NODE_IPS) through the URL run.sh recorded.
        let front = if l.is_pd() {
            "the proxy"
        } else {
            "the API server"
        };
        assert!(
            run.out.contains(&format!(
                "node 0: run.sh: ready: {front} answers on http://127.0.0.1:"
            )),
            "{}",
            run.out
        );
        assert!(
            run.out
                .contains("/endpoint.url, recorded by run.sh on node 0)"),
            "{}",
            run.out
        );
        times.push(format!(
            "{} {policy} {:.1}s",
            l.name(),
            run.took.as_secs_f64()
        ));
    }
    eprintln!("{}", times.join("\n"));
}

/// An HTTP proxy in the environment (a dead one here) must not sit between
/// the deployment's own parts: run.sh's health polls and verify.sh go
/// straight to the ranks and the proxy.
#[test]
fn a_dead_http_proxy_in_the_environment_changes_nothing() {
    let dead = "http://127.0.0.1:9";
    let r = rehearse_env(
        &[PD],
        &[
            ("http_proxy", dead),
            ("https_proxy", dead),
            ("HTTP_PROXY", dead),
            ("HTTPS_PROXY", dead),
            ("all_proxy", dead),
            ("NO_PROXY", ""),
            ("no_proxy", ""),
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.out);
    assert!(r.out.contains(&format!("PASS {PD}:")), "{}", r.out);
}
