//! The rules reference: `RULES.md` and `rules.html` at the catalog root hold
//! every rule under its name, and every rule a README or page cites links
//! to an entry that exists.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl::render;
use pd_dsl::rules::Rule;

#[test]
fn every_rule_has_an_entry_and_every_citation_resolves() {
    let layouts = layouts::catalog().expect("catalog");
    let all = render::render_catalog(layouts).expect("render");
    let file = |p: &str| {
        all.iter()
            .find(|a| a.path == std::path::Path::new(p))
            .unwrap_or_else(|| panic!("no {p}"))
            .contents
            .as_str()
    };
    let md = file(render::rules_doc::RULES_MD);
    let html = file(render::rules_doc::RULES_HTML);
    for r in Rule::ALL {
        assert!(
            md.contains(&format!("\n## {}\n", r.name())),
            "RULES.md lacks {}",
            r.name()
        );
        assert!(
            md.contains(r.summary()),
            "RULES.md lacks the summary of {}",
            r.name()
        );
        assert!(
            html.contains(&format!("<section id=\"{}\">", r.name())),
            "rules.html lacks {}",
            r.name()
        );
    }
    // Every citation in a README or page names a rule and links to the
    // root's reference from where the file is.
    let mut cited = 0;
    for a in &all {
        let depth = a.path.components().count() - 1;
        let root = "../".repeat(depth);
        for (marker, end) in [("RULES.md#", ')'), ("rules.html#", '"')] {
            for (i, _) in a.contents.match_indices(marker) {
                if a.path.ends_with(render::rules_doc::RULES_MD)
                    || a.path.ends_with(render::rules_doc::RULES_HTML)
                {
                    continue;
                }
                let name: String = a.contents[i + marker.len()..]
                    .chars()
                    .take_while(|&c| c != end)
                    .collect();
                assert!(
                    Rule::from_name(&name).is_some(),
                    "{}: cites `{name}`, which is no rule",
                    a.path.display()
                );
                assert!(
                    a.contents[..i].ends_with(&root),
                    "{}: the link to {marker}{name} does not start at the catalog root `{root}`",
                    a.path.display()
                );
                cited += 1;
            }
        }
    }
    assert!(cited > 10, "only {cited} citations in the catalog");
    // Nothing cites a rule without the link: not a deviation's `- rule`,
    // nor a blocked layout's banner `[rule ...]`, the index's included.
    for a in all.iter().filter(|a| a.path.ends_with("README.md")) {
        for unlinked in ["- rule `", "[rule `"] {
            assert!(
                a.path.components().count() == 1 && unlinked == "- rule `"
                    || !a.contents.contains(unlinked),
                "{}: a rule cited without its link (`{unlinked}`)",
                a.path.display()
            );
        }
    }
}
