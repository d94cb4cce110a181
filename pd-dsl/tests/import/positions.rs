//! Positions: hostile text never panics, and findings inside a
//! `server_cmd` or at a lone carriage return point into the file.

use super::*;

#[test]
fn hostile_text_never_panics() {
    for text in [
        "",
        ":",
        "model: [",
        "config: 3",
        "- a",
        "deployment:\n  - server_cmd: 'vllm serve'\n",
        "templates: [{node_index: 0}]",
    ] {
        let _ = lint(&[Input::new("x.yaml", text)], &Options::default());
    }
    for text in [
        "vllm serve '",
        "vllm serve /m --x $(",
        "python launch_online_dp.py --dp-size",
        "export A=\"",
        "vllm serve /m ${",
    ] {
        let _ = lint(&[Input::new("x.sh", text)], &Options::default());
    }
}

/// A read error inside a `server_cmd` points at the offending character in
/// the file, whatever the scalar's style (found by the `import` fuzz target:
/// a folded `>` scalar put an unterminated quote at column 658 of a
/// 43-character line).
#[test]
fn errors_inside_a_server_cmd_point_into_the_file() {
    let head = "model: m\nnum_nodes: 1\nnpu_per_node: 16\ndeployment:\n";
    for (cmd, line, column) in [
        // Folded: the quote on the scalar's third line.
        (
            "  - server_cmd: >\n      vllm serve m\n      --port 8015 'oops\n",
            7,
            19,
        ),
        // Literal: the same, line breaks kept.
        (
            "  - server_cmd: |\n      vllm serve m \\\n        --port 8015 'oops\n",
            7,
            21,
        ),
        // Plain, on the key's line.
        ("  - server_cmd: vllm serve m --port 8015 'oops\n", 5, 42),
        // Double-quoted: the opening `\"` is not part of the command.
        (
            "  - server_cmd: \"vllm serve m --port 8015 'oops\"\n",
            5,
            43,
        ),
        // Plain over two lines (folded by YAML).
        (
            "  - server_cmd: vllm serve m\n      --port 8015 'oops\n",
            6,
            19,
        ),
    ] {
        let text = format!("{head}{cmd}");
        let f = lint(&[Input::new("x.yaml", text.as_str())], &Options::default());
        assert_eq!(f.len(), 1, "{text}\n{f:?}");
        assert!(f[0].message.contains("unterminated `'`"), "{f:?}");
        assert_eq!((f[0].line, f[0].column), (line, column), "{text}\n{}", f[0]);
    }
}

/// A finding on a word of a `server_cmd` points at that word in the file,
/// for every scalar style: at the value of a `--flag value` pair, as in a
/// script.
#[test]
fn findings_on_a_server_cmd_word_point_at_the_word() {
    let head = "model: m\nnum_nodes: 1\nnpu_per_node: 16\ndeployment:\n";
    for (cmd, line, column) in [
        // Plain over three lines.
        (
            "  - server_cmd: vllm serve m\n      --port 8015\n      --max-num-seqs $((4 * 4))\n",
            7,
            22,
        ),
        // Folded, with a chomping indicator and a comment on the header.
        (
            "  - server_cmd: >- # note\n      vllm serve m --port 8015\n      --max-num-seqs\n      $((4 * 4))\n",
            8,
            7,
        ),
        // Literal, line breaks kept (and continued).
        (
            "  - server_cmd: |\n      vllm serve m \\\n        --port 8015 \\\n        --max-num-seqs $((4 * 4))\n",
            8,
            24,
        ),
        // Double-quoted: escapes are one character each.
        (
            "  - server_cmd: \"vllm serve m --served-model-name \\\"a\\x62\\\" --max-num-seqs $((4 * 4))\"\n",
            5,
            76,
        ),
        // Double-quoted over two lines: a `\t` escape and an escaped line
        // break.
        (
            "  - server_cmd: \"vllm serve m\\t--port 8015 \\\n    --max-num-seqs $((4 * 4))\"\n",
            6,
            20,
        ),
        // Single-quoted: `''` is one quote.
        (
            "  - server_cmd: 'vllm serve m --served-model-name ''ab'' --max-num-seqs $((4 * 4))'\n",
            5,
            73,
        ),
    ] {
        let text = format!("{head}{cmd}");
        let f = lint(&[Input::new("x.yaml", text.as_str())], &Options::default());
        let e: Vec<_> = f.iter().filter(|f| f.level == Level::Error).collect();
        assert_eq!(e.len(), 1, "{text}\n{f:?}");
        assert!(
            e[0].message.contains("`--max-num-seqs $((4 * 4))`"),
            "{}",
            e[0]
        );
        assert_eq!((e[0].line, e[0].column), (line, column), "{text}\n{}", e[0]);
        let at = text.lines().nth(line as usize - 1).unwrap();
        assert!(at[column as usize - 1..].starts_with("$((4"), "{text}");
    }
}

/// A lone carriage return is a line break to YAML but not to editors and
/// shells: the config is refused at its position (found by the `import`
/// fuzz target: a read error after one pointed past the end of the file),
/// while `\r\n` line ends read as `\n` ones do.
#[test]
fn a_lone_carriage_return_is_refused_where_it_is() {
    let p = root().join("configs/a3-v4-1p1d-hybrid.yaml");
    let text = std::fs::read_to_string(&p).unwrap();
    let (line, at) = text
        .lines()
        .enumerate()
        .find_map(|(i, l)| l.find("a3-v4-").map(|k| (i, k)))
        .unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[line].replace_range(at + 5..at + 6, "\r");
    let broken = lines.join("\n");
    let f = pd_dsl::import::lint_unit(
        &[Input::new("x.yaml", broken.as_str())],
        &Options::default(),
    );
    assert_eq!(f.findings.len(), 1, "{f:?}");
    let f = &f.findings[0];
    assert_eq!(
        (f.level, f.line, f.column),
        (Level::Error, line as u64 + 1, at as u64 + 6),
        "{f}"
    );
    assert!(
        f.message
            .starts_with("found a carriage return (`\\r`) without a line feed"),
        "{f}"
    );
    // The same through the loader's path (a pd-dsl layout document).
    let layout = "name: x\ntopology: [\"a\r\"]\n";
    let f = pd_dsl::import::lint_unit(&[Input::new("l.yaml", layout)], &Options::default());
    assert_eq!((f.findings[0].line, f.findings[0].column), (2, 14), "{f:?}");
    // CRLF: the same findings, at the same places, as with LF.
    let text = std::fs::read_to_string(root().join("configs/a3-v31-2p1d-v1.yaml")).unwrap();
    let crlf = text.replace('\n', "\r\n");
    let lf = lint(&[Input::new("x.yaml", text.as_str())], &Options::default());
    let both = lint(&[Input::new("x.yaml", crlf.as_str())], &Options::default());
    // The fixture breaks these conventions, so the comparison is not empty.
    for rule in ["kv_port_in_adxl_range", "engine_id_parity"] {
        assert!(
            lf.iter().any(|f| f.rule.as_deref() == Some(rule)),
            "{rule}: {lf:?}"
        );
    }
    assert_eq!(lf, both);
    assert!(import(&[Input::new("x.yaml", crlf)], &Options::default()).is_ok());
}
