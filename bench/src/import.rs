//! The inputs of the `import` section: the importer's fixtures
//! (`tests/fixtures/import/configs/*.yaml`, one e2e config each, and
//! `tests/fixtures/import/scripts/*/`, one script set each), varied into as
//! many deployments as asked so no two inputs are the same bytes.

use pd_dsl::import::{Input, Options};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// One deployment to import: an e2e config, or a set of scripts.
#[derive(Clone, Debug)]
pub struct Unit {
    /// The fixture it was made from, and the variant (`name#3`).
    pub label: String,
    /// Its files.
    pub inputs: Vec<Input>,
    /// What the files cannot say (the A2 script set names its hardware, as
    /// `catalog import --hardware a2` would).
    pub opts: Options,
    /// Whether it is an e2e config (YAML) rather than scripts.
    pub yaml: bool,
}

fn sorted(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut v = fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<io::Result<Vec<_>>>()?;
    v.sort();
    Ok(v)
}

fn read(path: &Path) -> io::Result<Input> {
    let text = fs::read_to_string(path)?;
    Ok(Input::new(path.display().to_string(), text))
}

/// The fixtures under `root` (`tests/fixtures/import`): every config, then
/// every script set.
pub fn fixtures(root: &Path) -> io::Result<Vec<Unit>> {
    let mut out = Vec::new();
    for f in sorted(&root.join("configs"))? {
        out.push(Unit {
            label: stem(&f),
            inputs: vec![read(&f)?],
            opts: Options::default(),
            yaml: true,
        });
    }
    for d in sorted(&root.join("scripts"))? {
        let label = stem(&d);
        let opts = Options {
            hardware: label.starts_with("a2-").then(|| "a2".to_owned()),
            ..Options::default()
        };
        let inputs = sorted(&d)?
            .iter()
            .map(|f| read(f))
            .collect::<io::Result<Vec<_>>>()?;
        out.push(Unit {
            label,
            inputs,
            opts,
            yaml: false,
        });
    }
    Ok(out)
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `n` deployments cycling through `fixtures`: the `k`-th pass (from 0)
/// moves every `10.a.b.c` address to `10.a.(b+k).c`, every DP RPC port
/// `12321` to `12321 + k`, and appends a comment naming the variant, so the
/// inputs differ while each stays the deployment its fixture is.
pub fn deployments(fixtures: &[Unit], n: usize) -> Vec<Unit> {
    (0..n)
        .filter_map(|i| {
            let base = fixtures.get(i % fixtures.len().max(1))?;
            let k = i / fixtures.len();
            Some(Unit {
                label: format!("{}#{k}", base.label),
                inputs: base
                    .inputs
                    .iter()
                    .map(|inp| Input::new(inp.name.clone(), vary(&inp.text, k)))
                    .collect(),
                opts: base.opts.clone(),
                yaml: base.yaml,
            })
        })
        .collect()
}

/// The text of variant `k` (see [`deployments`]); variant 0 is the text.
pub fn vary(text: &str, k: usize) -> String {
    if k == 0 {
        return text.to_owned();
    }
    let port = (12321 + k).to_string();
    let mut out = shift_addresses(text, k).replace("12321", &port);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!("# variant {k}\n"));
    out
}

/// `10.a.b.c` → `10.a.(b+k).c` (when the third octet stays below 256).
fn shift_addresses(text: &str, k: usize) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(i) = rest.find("10.") {
        let boundary = !matches!(
            rest[..i].chars().next_back(),
            Some(c) if c.is_ascii_alphanumeric() || c == '.'
        );
        out.push_str(&rest[..i]);
        let tail = &rest[i + 3..];
        match boundary.then(|| address_tail(tail, k)).flatten() {
            Some((shifted, len)) => {
                out.push_str("10.");
                out.push_str(&shifted);
                rest = &tail[len..];
            }
            None => {
                out.push_str("10.");
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `a.b.c` at the start of `tail` with `b` moved by `k`, and the length read.
fn address_tail(tail: &str, k: usize) -> Option<(String, usize)> {
    let digits = |s: &str| s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let a = &tail[..digits(tail)];
    let t = tail[a.len()..].strip_prefix('.')?;
    let b = &t[..digits(t)];
    let t = t[b.len()..].strip_prefix('.')?;
    let c = &t[..digits(t)];
    if a.is_empty() || b.is_empty() || c.is_empty() {
        return None;
    }
    let moved = b.parse::<usize>().ok()? + k;
    (moved < 256).then(|| (format!("{a}.{moved}.{c}"), a.len() + b.len() + c.len() + 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_rpc_ports_move_with_the_variant() {
        let t = "ip: 10.0.0.3\nport: 12321\nv: 0.10.0\nx10.1.2.3 10.2.250.1";
        assert_eq!(vary(t, 0), t);
        assert_eq!(
            vary(t, 7),
            "ip: 10.0.7.3\nport: 12328\nv: 0.10.0\nx10.1.2.3 10.2.250.1\n# variant 7\n"
        );
    }
}
