//! What the HTML catalog tells an operator choosing a layout: no raw
//! Markdown in any page, a layout its image cannot run flagged "do not
//! deploy" on its index row and at the top of its page, and every page
//! states what each role runs, with the values the scripts pass.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl::render::{self, model::LayoutModel};
use std::path::Path;

#[test]
fn pages_have_no_raw_markdown_flag_blocked_layouts_and_show_each_roles_settings() {
    let layouts = layouts::catalog().expect("catalog");
    let all = render::render_catalog(layouts).expect("render");
    let page = |p: &Path| {
        all.iter()
            .find(|a| a.path == p)
            .unwrap_or_else(|| panic!("no {}", p.display()))
            .contents
            .as_str()
    };
    for a in all
        .iter()
        .filter(|a| a.path.extension().is_some_and(|e| e == "html"))
    {
        assert!(
            !a.contents.contains('`'),
            "{}: a raw Markdown backtick: {}",
            a.path.display(),
            a.contents
                .lines()
                .find(|l| l.contains('`'))
                .unwrap_or_default()
        );
    }
    let index = page(Path::new("index.html"));
    let mut blocked = 0;
    for l in layouts {
        let html = page(&Path::new(l.name()).join("index.html"));
        let status = l.deploy_status();
        let row = index
            .lines()
            .find(|r| r.starts_with("<tr") && r.contains(&format!("data-layout=\"{}\"", l.name())))
            .unwrap_or_else(|| panic!("{}: no index row", l.name()));
        if status.is_deployable() {
            assert!(!html.contains("class=\"banner\""), "{}", l.name());
            assert!(!row.contains("do not deploy"), "{row}");
        } else {
            blocked += 1;
            assert!(
                html.contains(
                    "<div class=\"banner\" role=\"alert\"><strong>Blocked on image: do not deploy"
                ),
                "{}",
                l.name()
            );
            assert!(
                row.contains("class=\"blocked\"")
                    && row.contains(&format!("{}: do not deploy", status.label())),
                "{row}"
            );
        }
        // What each role runs: a column per role, the options the scripts pass.
        let m = LayoutModel::new(l).expect("model");
        let section = html
            .split_once("<h2 id=\"roles\">")
            .and_then(|(_, s)| s.split_once("<h2 "))
            .map(|(s, _)| s)
            .unwrap_or_else(|| panic!("{}: no roles section", l.name()));
        for r in &m.roles {
            assert!(
                section.contains(&format!("<th scope=\"col\">{}</th>", r.role.as_str())),
                "{}",
                l.name()
            );
            for o in &r.options {
                assert!(
                    section.contains(&format!("<code>{}</code>", o.flag)),
                    "{}: {} missing from the roles table",
                    l.name(),
                    o.flag
                );
            }
        }
    }
    assert!(blocked >= 1, "the catalog has a blocked layout to show");
}
