//! The rules on the command line (`rules`, `explain`, `lint`'s findings) and
//! the command line for the shell (`completions`, `man`).

use crate::run;

/// `catalog completions SHELL` prints a script the shell accepts, offering
/// every subcommand; `catalog man` prints a man page naming them; `catalog
/// rules` and `catalog explain` list and explain the rules, an unknown rule
/// is a usage error.
#[test]
fn completions_man_page_rules_and_explain() {
    let (code, bash, err) = run(&["completions", "bash"]);
    assert_eq!(code, 0, "{err}");
    let script =
        std::env::temp_dir().join(format!("catalog-completion-{}.bash", std::process::id()));
    std::fs::write(&script, &bash).expect("write");
    let st = std::process::Command::new("bash")
        .arg("-n")
        .arg(&script)
        .status()
        .expect("bash runs");
    let _ = std::fs::remove_file(&script);
    assert!(st.success(), "bash refuses the completion script");
    let (code, man, err) = run(&["man"]);
    assert_eq!(code, 0, "{err}");
    assert!(man.contains(".TH catalog 1"), "{man}");
    for sub in [
        "render",
        "rehearse",
        "plan",
        "rules",
        "explain",
        "completions",
    ] {
        assert!(bash.contains(sub), "completions lack `{sub}`");
        assert!(man.contains(sub), "the man page lacks `{sub}`");
    }
    let (code, rules, _) = run(&["rules"]);
    assert_eq!(code, 0);
    assert_eq!(
        rules
            .lines()
            .filter(|l| l.contains("  hard  ") || l.contains("  convention  "))
            .count(),
        pd_dsl::rules::Rule::ALL.len()
    );
    let (code, text, _) = run(&["explain", "port_collision"]);
    assert_eq!(code, 0);
    assert!(text.contains("[rule `port_collision`]"), "{text}");
    let (code, _, err) = run(&["explain", "port_colision"]);
    assert_eq!(code, 2);
    assert!(err.contains("did you mean port_collision"), "{err}");
}

/// `catalog lint` shows a finding as rustc shows an error: the rule, the
/// file and position, the offending line and a caret under the token; plain
/// with `--color never` (or in a pipe, or under NO_COLOR), coloured with
/// `--color always`.
#[test]
fn lint_findings_show_the_line_and_a_caret() {
    let example = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/layouts/a3-1p1d.yaml"),
    )
    .expect("the example layout");
    let bad = example.replacen("tp: 4", "tp: 3", 1);
    assert_ne!(bad, example);
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("bad.yaml");
    std::fs::write(&file, &bad).expect("write");
    let path = file.to_str().unwrap();
    let (code, out, _) = run(&["lint", path, "--color", "never"]);
    assert_eq!(code, 1, "{out}");
    let line_no = bad.lines().position(|l| l.contains("tp: 3")).unwrap() + 1;
    assert!(out.contains("error[tp_divides_node]: found `tp3`"), "{out}");
    let source = out
        .lines()
        .find(|l| l.starts_with(&format!("{line_no} |")))
        .unwrap_or_else(|| panic!("no source line {line_no}:\n{out}"));
    let caret = out
        .lines()
        .find(|l| l.trim_start_matches([' ', '|']).starts_with('^'))
        .expect("a caret");
    assert_eq!(
        caret.find('^'),
        source.rfind("3 }").or(source.rfind('3')),
        "{out}"
    );
    assert!(!out.contains('\u{1b}'), "{out}");
    let (_, colored, _) = run(&["lint", path, "--color", "always"]);
    assert!(colored.contains('\u{1b}'), "{colored}");
}
