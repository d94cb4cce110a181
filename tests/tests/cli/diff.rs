//! `catalog diff` between layouts or images, and `catalog upstream diff`
//! against `scripts/upstream/facts.py diff`.

use crate::{run, samples};

/// One change of a release diff, as a comparable value: `(title, item)`
/// for the `  + x` / `  - x` / `  ~ x` lines under a `title:` line, and
/// `(title, old, new)` with the JSON values parsed for `title: OLD -> NEW`.
fn diff_entries(text: &str) -> std::collections::BTreeSet<(String, String, String, String)> {
    let mut out = std::collections::BTreeSet::new();
    let mut title = String::new();
    for line in text.lines() {
        if let Some(item) = line.strip_prefix("  ") {
            let item = item
                .split_once(": ")
                .map_or(item.to_owned(), |(name, rest)| {
                    // `~ name: {..} -> {..}`: the JSON values, normalized.
                    let norm = rest.split_once(" -> ").map_or(rest.to_owned(), |(a, b)| {
                        let p = |x: &str| {
                            serde_json::from_str::<serde_json::Value>(x)
                                .map_or(x.to_owned(), |v| v.to_string())
                        };
                        format!("{} -> {}", p(a), p(b))
                    });
                    format!("{name}: {norm}")
                });
            out.insert((title.clone(), item, String::new(), String::new()));
        } else if let Some(t) = line.strip_suffix(':') {
            title = t.to_owned();
        } else if let Some((t, rest)) = line.split_once(": ")
            && let Some((a, b)) = rest.split_once(" -> ")
            && let (Ok(a), Ok(b)) = (
                serde_json::from_str::<serde_json::Value>(a),
                serde_json::from_str::<serde_json::Value>(b),
            )
        {
            out.insert((t.to_owned(), String::new(), a.to_string(), b.to_string()));
        } else {
            out.insert((line.to_owned(), String::new(), String::new(), String::new()));
        }
    }
    out
}

/// `catalog upstream diff` says what `scripts/upstream/facts.py diff` says
/// from the corpus (run here on the cached sdists), as sets of changes.
#[test]
fn upstream_diff_agrees_with_facts_py() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for (a, b) in [
        ("0.22.1rc1", "0.23.0"),
        ("0.25.1rc1", "0.30.0rc2"),
        ("0.20.2rc1", "0.21.0rc1"),
    ] {
        let py = std::process::Command::new("python3")
            .arg(root.join("scripts/upstream/facts.py"))
            .args(["diff", a, b])
            .output()
            .unwrap_or_else(|e| panic!("cannot run python3 scripts/upstream/facts.py: {e}"));
        assert!(
            py.status.success(),
            "`python3 scripts/upstream/facts.py diff {a} {b}` failed ({}); fill the corpus with \
             `python3 scripts/upstream/corpus.py fetch --all`:\n{}",
            py.status,
            String::from_utf8_lossy(&py.stderr)
        );
        let py = String::from_utf8(py.stdout).expect("utf8");
        let (code, rs, err) = run(&["upstream", "diff", &format!("v{a}"), b]);
        assert_eq!(code, 0, "{err}");
        let (pe, re) = (diff_entries(&py), diff_entries(&rs));
        assert!(
            pe.len() > 10,
            "{a} -> {b}: facts.py names only {} changes:\n{py}",
            pe.len()
        );
        let only_py: Vec<_> = pe.difference(&re).collect();
        let only_rs: Vec<_> = re.difference(&pe).collect();
        assert!(
            only_py.is_empty() && only_rs.is_empty(),
            "{a} -> {b}: only facts.py: {only_py:#?}\nonly catalog: {only_rs:#?}"
        );
    }
    let (code, _, err) = run(&["upstream", "diff", "v0.23.0", "v0.99.0"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("found release `v0.99.0`, expected an image of the table"),
        "{err}"
    );
}

/// `catalog diff A B`: exit 0 and "no differences" for a layout against
/// itself; exit 1 with every differing key otherwise, the topology and the
/// derived ranks among them, in text and JSON; `--image TAG` compares a
/// layout with itself on another image, and an image that cannot run it is
/// refused with the findings.
#[test]
fn diff_two_layouts_and_one_layout_on_two_images() {
    let all = samples();
    let (a, b) = (all[0].name(), all[1].name());
    let (code, out, err) = run(&["diff", a, a]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("no differences"), "{out}");
    let (code, out, err) = run(&["diff", a, b]);
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains(&format!(
            "~ layout.topology: {} -> {}",
            all[0].topology_text(),
            all[1].topology_text()
        )),
        "{out}"
    );
    let (code, json, _) = run(&["diff", a, b, "--format", "json"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    let changes = v["changes"].as_array().expect("changes");
    let lines = out.lines().filter(|l| l.starts_with("  ")).count();
    assert_eq!(
        changes.len(),
        lines,
        "the text and the JSON list the same keys"
    );
    assert!(
        changes
            .iter()
            .any(|c| c["key"].as_str().unwrap().starts_with("node["))
    );
    let (code, _, err) = run(&["diff", a, "--image", "v9.9.9"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("on image v9.9.9 does not check") && err.contains("unknown_image"),
        "{err}"
    );
    let (code, _, err) = run(&["diff", a]);
    assert_eq!(code, 2, "{err}");
}
