//! The proxy compared: the input's proxy command against the one node 0
//! of the rendered layout runs, endpoint lists as ordered `host:port` pairs.

use super::{Addresses, Diff, acknowledged, diff};
use crate::harness::flags;
use pd_dsl::import::{Imported, InputProxy};
use std::collections::BTreeMap;
use std::path::Path;

/// The endpoint lists of the proxy: `(hosts flag, ports flag, what)`.
pub const PROXY_LISTS: &[(&str, &str, &str)] = &[
    ("--prefiller-hosts", "--prefiller-ports", "prefill"),
    ("--decoder-hosts", "--decoder-ports", "decode"),
];

/// Every difference between the input's proxy command and the one node 0
/// of the rendered layout runs (`python3 SCRIPT OPTIONS...`).
pub fn compare_proxy(
    input: Option<&InputProxy>,
    ours: Option<&[String]>,
    addresses: &Addresses,
) -> Vec<Diff> {
    let mut diffs = Vec::new();
    let (input, ours) = match (input, ours) {
        (None, None) => return diffs,
        (Some(i), Some(o)) => (i, o),
        (None, Some(o)) => {
            diffs.push(diff(
                "the proxy",
                format!("ours runs {}, the input runs no proxy", o.join(" ")),
            ));
            return diffs;
        }
        (Some(i), None) => {
            diffs.push(diff(
                "the proxy",
                format!("the input runs `{}`, ours no proxy", i.script),
            ));
            return diffs;
        }
    };
    // The interpreter (`python`, `python3`, the runner's own) and the
    // script's directory are where the image keeps them: the file name is
    // what is compared.
    let script = ours
        .get(1)
        .and_then(|p| Path::new(p).file_name())
        .and_then(|f| f.to_str())
        .unwrap_or_default();
    if script != input.script {
        diffs.push(diff(
            format!("`{}", input.script),
            format!("the input runs `{}`, ours `{script}`", input.script),
        ));
    }
    let mut want: BTreeMap<&str, &[String]> = BTreeMap::new();
    for (f, v) in &input.options {
        if want.insert(f.as_str(), v.as_slice()).is_some() {
            diffs.push(diff(
                format!("`{f}"),
                format!("the input passes `{f}` twice"),
            ));
        }
    }
    let got = flags(ours.get(2..).unwrap_or_default());
    let list = |m: &BTreeMap<&str, &[String]>, f: &str| m.get(f).map_or(Vec::new(), |v| v.to_vec());
    let want_hosts: Vec<Vec<String>> = PROXY_LISTS.iter().map(|(h, _, _)| list(&want, h)).collect();
    let (prefill, decode) = addresses.lists(&want_hosts[0], &want_hosts[1]);
    for ((hosts_flag, ports_flag, what), hosts) in PROXY_LISTS.iter().zip([prefill, decode]) {
        let theirs = pairs(&hosts, &list(&want, ports_flag));
        let mine = pairs(
            got.get(*hosts_flag).map_or(&[][..], Vec::as_slice),
            got.get(*ports_flag).map_or(&[][..], Vec::as_slice),
        );
        if theirs != mine {
            let at = theirs
                .iter()
                .zip(&mine)
                .position(|(a, b)| a != b)
                .unwrap_or(theirs.len().min(mine.len()));
            let show = |v: &[String]| v.get(at).map_or("nothing".to_owned(), |e| format!("`{e}`"));
            diffs.push(diff(
                "the proxy lists",
                format!(
                    "the {what} endpoints (`{hosts_flag}`, `{ports_flag}`): the input lists {}, ours {}; at position {}, the input has {}, ours {}",
                    theirs.len(),
                    mine.len(),
                    at + 1,
                    show(&theirs),
                    show(&mine)
                ),
            ));
        }
    }
    let lists: Vec<&str> = PROXY_LISTS.iter().flat_map(|(h, p, _)| [*h, *p]).collect();
    for (flag, w) in &want {
        if lists.contains(flag) {
            continue;
        }
        let w: Vec<String> = if *flag == "--host" {
            w.iter().map(|h| addresses.known(h)).collect()
        } else {
            w.to_vec()
        };
        match got.get(*flag) {
            None => diffs.push(diff(
                format!("`{flag}"),
                format!(
                    "`{flag} {}`: the input passes it, ours does not",
                    w.join(" ")
                ),
            )),
            Some(g) if *g != w => diffs.push(diff(
                format!("`{flag}"),
                format!(
                    "`{flag}`: the input passes `{}`, ours `{}`",
                    w.join(" "),
                    g.join(" ")
                ),
            )),
            Some(_) => {}
        }
    }
    for (flag, g) in &got {
        if !want.contains_key(flag.as_str()) && !lists.contains(&flag.as_str()) {
            diffs.push(diff(
                format!("`{flag}"),
                format!(
                    "`{flag} {}`: ours passes it, the input does not",
                    g.join(" ")
                ),
            ));
        }
    }
    diffs
}

/// `host:port` per endpoint; a list longer than the other keeps its
/// extra entries with `?` for the missing half.
pub fn pairs(hosts: &[String], ports: &[String]) -> Vec<String> {
    (0..hosts.len().max(ports.len()))
        .map(|i| {
            format!(
                "{}:{}",
                hosts.get(i).map_or("?", String::as_str),
                ports.get(i).map_or("?", String::as_str)
            )
        })
        .collect()
}

/// Every difference between the input's proxy and ours not normalised
/// away, as `NAME: proxy: message`.
pub fn proxy_failures(
    name: &str,
    imported: &Imported,
    input: Option<&InputProxy>,
    ours: Option<&[String]>,
    addresses: &Addresses,
) -> Vec<String> {
    compare_proxy(input, ours, addresses)
        .into_iter()
        .filter(|d| !acknowledged(d, imported))
        .map(|d| format!("{name}: proxy: {}", d.message))
        .collect()
}
