//! The capture sizes an engine settles on, typed or the defaults, against
//! the released code of every image:
//! vllm-ascend's `apply_config_platform_defaults` and second sizing pass
//! and vLLM's `VllmConfig._set_cudagraph_sizes`, run from the images'
//! source distributions (`scripts/upstream/graph_sizes_oracle.py`, through
//! `scripts/upstream/corpus.py`). A missing corpus fails the test.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl_core::tables::IMAGES;
use pd_dsl_core::upstream::vllm_of;
use serde_json::{Value, json};
use std::collections::BTreeSet;

mod support;

use support::corpus;

/// `max_num_seqs`, `max_num_batched_tokens` and speculative tokens on both
/// sides of every step of the grid and of the caps (8, 256, 512), with
/// `max_num_batched_tokens` below, at and above the platform's cap.
const SEQS: &[u64] = &[1, 2, 3, 5, 7, 16, 33, 64, 100, 128, 256, 1024];
const BATCHED: &[u64] = &[1, 2, 3, 7, 8, 12, 100, 255, 256, 300, 511, 512, 2048, 8192];
const TOKENS: &[u64] = &[0, 1, 2, 3, 4, 5, 7, 15];
/// Typed size lists (none, unordered, repeated, around the batch sizes).
const TYPED: &[&[u64]] = &[&[], &[1], &[16, 4, 4], &[300, 8], &[1024, 2048], &[9000]];

#[test]
fn settled_capture_sizes_are_the_images_own() {
    let mut releases = BTreeSet::new();
    let mut compared = 0;
    let mut refused = 0;
    for img in &IMAGES {
        let Some(rel) = img.facts() else { continue };
        if !releases.insert(rel.version.as_str()) {
            continue;
        }
        let v = vllm_of(img).expect("the image's vLLM facts");
        let mut cases = Vec::new();
        let mut ours = Vec::new();
        for &s in SEQS {
            for &b in BATCHED {
                for &t in TOKENS {
                    for typed in TYPED {
                        let mut case =
                            json!({"max_num_seqs": s, "max_num_batched_tokens": b, "tokens": t});
                        if !typed.is_empty() {
                            case["sizes"] = json!(typed);
                        }
                        cases.push(case);
                        ours.push(
                            rel.settled_capture_sizes(v, typed, s, b, t)
                                .unwrap_or_else(|| {
                                    panic!("{}: no capture-size facts", rel.version)
                                }),
                        );
                    }
                }
            }
        }
        let theirs = support::oracle(
            "graph_sizes_oracle.py",
            &[
                &corpus("vllm", &v.version),
                &corpus("vllm-ascend", &rel.version),
            ],
            &Value::Array(cases.clone()),
        );
        assert_eq!(theirs.len(), ours.len());
        let mut wrong = Vec::new();
        for ((case, mine), got) in cases.iter().zip(&ours).zip(&theirs) {
            if let Some(refusal) = got["refused"].as_str() {
                // Only the assert on the largest size kept refuses here.
                assert!(
                    refusal.starts_with("AssertionError: Maximum cudagraph size"),
                    "{}: {case}: {refusal}",
                    rel.version
                );
                if !mine.is_empty() {
                    wrong.push(format!(
                        "{case}: ours {mine:?}, the image refuses: {refusal}"
                    ));
                }
                refused += 1;
                compared += 1;
                continue;
            }
            let sizes: Vec<u64> = serde_json::from_value(got["sizes"].clone()).expect("sizes");
            assert_eq!(
                got["max"].as_u64(),
                sizes.last().copied(),
                "{}: the released code's largest size is its list's last",
                rel.version
            );
            if &sizes != mine {
                wrong.push(format!("{case}: ours {mine:?}, the image's {sizes:?}"));
            }
            compared += 1;
        }
        assert!(
            wrong.is_empty(),
            "vllm-ascend {} (vLLM {}): {} of {} cases differ, e.g.\n{}",
            rel.version,
            v.version,
            wrong.len(),
            cases.len(),
            wrong[..wrong.len().min(8)].join("\n")
        );
    }
    // Every release of the image table was compared.
    assert!(releases.len() >= 15, "{releases:?}");
    assert_eq!(
        compared,
        releases.len() * SEQS.len() * BATCHED.len() * TOKENS.len() * TYPED.len()
    );
    // Typed sizes all above the batch refuse on every release.
    assert!(refused > 0);
}
