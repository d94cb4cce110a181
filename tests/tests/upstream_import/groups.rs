//! Failures grouped by their reason: values masked, the config, node and
//! rank dropped.

/// A reason to group by: values masked (every backticked span but the
/// first, numbers), the config, node and rank dropped.
pub(crate) fn group(failure: &str) -> String {
    let rest = failure
        .split_once(": node ")
        .and_then(|(_, r)| r.split_once(": ").map(|(_, m)| m))
        .or_else(|| failure.split_once(": proxy: ").map(|(_, m)| m))
        .or_else(|| failure.split_once(": ").map(|(_, m)| m))
        .unwrap_or(failure);
    let mut out = String::new();
    let mut spans = 0;
    let mut parts = rest.split('`');
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    for (i, part) in parts.enumerate() {
        if i % 2 == 0 {
            spans += 1;
            out.push('`');
            if spans <= 1 || part.starts_with("--") || part.starts_with("env ") {
                // A flag's name, not its value (`--port 8080` → `--port`).
                match part.split_once(' ') {
                    Some((flag, _)) if flag.starts_with("--") => out.push_str(flag),
                    _ => out.push_str(part),
                }
            } else {
                out.push('…');
            }
            out.push('`');
        } else {
            out.push_str(part);
        }
    }
    let masked: String = out
        .split(' ')
        .map(|w| {
            if w.chars().any(|c| c.is_ascii_digit())
                && w.chars()
                    .all(|c| c.is_ascii_digit() || ",.;:()".contains(c))
            {
                "N"
            } else {
                w
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    masked.chars().take(200).collect()
}

#[test]
fn failures_group_by_their_reason_not_their_values() {
    assert_eq!(
        group("a.yaml: node 1 DP rank 3: `--port`: the input passes `8080`, ours `7100`"),
        "`--port`: the input passes `…`, ours `…`"
    );
    assert_eq!(
        group("a.yaml: proxy: `--port`: the input passes `6000`, ours `1999`"),
        "`--port`: the input passes `…`, ours `…`"
    );
    assert_eq!(
        group("x: error: found model `a/b`, expected one of 3"),
        "error: found model `a/b`, expected one of N"
    );
    assert_eq!(
        group(
            "x: error: found `--gpu-memory-utilization 0.9` here and `0.92` on another node (line 224):"
        ),
        "error: found `--gpu-memory-utilization` here and `…` on another node (line N"
    );
}
