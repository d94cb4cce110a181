//! Node discovery: `PD_NODE_IPS` trimmed and validated, a node index that
//! must name this host, and the address and NIC without the `ip` command.

use crate::preflight::{bin_with, skip_all_but};
use crate::scripts::which;
use crate::{PD, dry_run, render, run};
use std::process::Command;

#[test]
fn node_ips_are_trimmed_and_validated() {
    let (_tmp, dir) = render(PD);
    // Spaces after commas: trimmed, the endpoints are whole addresses.
    let (code, out) = dry_run(
        &dir,
        "127.0.0.1, 127.0.0.2 ,127.0.0.3,  127.0.0.4",
        "2",
        &[],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("--dp-address 127.0.0.3"), "{out}");
    assert!(!out.contains("' 127"), "{out}");
    for (ips, want) in [
        (
            "127.0.0.1,127.0.0.2,127.0.0.3,10.0.0.300",
            "node 3's address '10.0.0.300' in PD_NODE_IPS is not an IPv4 address",
        ),
        (
            "127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.2",
            "nodes 1 and 3 have the same address 127.0.0.2 in PD_NODE_IPS",
        ),
        (
            "127.0.0.1,127.0.0.2,127.0.0.3,bad_host!",
            "node 3's address 'bad_host!' in PD_NODE_IPS is not an IP address or host name",
        ),
        (
            "127.0.0.1,,127.0.0.3,127.0.0.4",
            "node 1 has an empty address in PD_NODE_IPS",
        ),
    ] {
        let (code, out) = dry_run(&dir, ips, "2", &[]);
        assert_eq!(code, 1, "{ips}: {out}");
        assert!(out.contains(want), "{ips}: missing {want:?} in {out}");
    }
}

#[test]
fn a_node_index_that_is_not_this_host_is_an_error() {
    let (_tmp, dir) = render(PD);
    let ips = "10.9.9.1,10.9.9.2,127.0.0.3,10.9.9.4";
    let (code, out) = dry_run(&dir, ips, "1", &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "node index 1 names 10.9.9.2, which is not an address of this host (local IP 127.0.0.3;"
        ),
        "{out}"
    );
    assert!(out.contains("set PD_FORCE_NODE_INDEX=1"), "{out}");
    let (code, out) = dry_run(&dir, ips, "1", &[("PD_FORCE_NODE_INDEX", "1")]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("going on because PD_FORCE_NODE_INDEX=1"),
        "{out}"
    );
    let (code, out) = dry_run(&dir, ips, "2", &[]);
    assert_eq!(code, 0, "{out}");
}

/// The image installs net-tools, not iproute2: without `ip` on PATH, run.sh
/// finds the local IP (the source address towards the DP master), the NIC
/// holding it and this host's addresses (the node index) through python3.
#[test]
fn run_sh_finds_ip_and_nic_without_the_ip_command() {
    let (_tmp, dir) = render(PD);
    let tools = [
        "bash", "awk", "getent", "hostname", "tr", "dirname", "python3", "cat",
    ];
    assert!(
        which("ip").is_ok(),
        "this test compares with iproute2's `ip`: install iproute2"
    );
    let bin = bin_with(&tools, &[]);
    assert!(!bin.path().join("ip").exists());
    let path = bin.path().display().to_string();
    let ips = "127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4";
    let go = |path: &str, index: Option<&str>| {
        let mut env = vec![("PATH", path), ("PD_DRY_RUN", "1"), ("PD_NODE_IPS", ips)];
        if let Some(i) = index {
            env.push(("PD_NODE_INDEX", i));
        }
        run(&dir, "run.sh", &[], &env)
    };
    let (code, out) = go(&path, Some("0"));
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("run.sh: node 0: local IP 127.0.0.1 (the route to the DP master 127.0.0.1, by python3 (no ip command)), NIC lo (the interface holding 127.0.0.1, by python3 (no ip command))"),
        "{out}"
    );
    // No index given: this host's addresses (python3's listing; `hostname -I`
    // has no loopback address) name node 0.
    let (code, out) = go(&path, None);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("run.sh: node 0 would run:"), "{out}");
    // With iproute2 the same IP and NIC.
    let full = std::env::var("PATH").unwrap();
    let (code, out) = go(&full, Some("0"));
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("run.sh: node 0: local IP 127.0.0.1 (the route to the DP master 127.0.0.1, by ip), NIC lo (the interface holding 127.0.0.1, by ip)"),
        "{out}"
    );
    // Both listings of this host's addresses agree, line for line.
    let list = |path: &str| {
        let o = Command::new("bash")
            .arg("-c")
            .arg("source <(sed -n '/^addr_table() {/,/^}/p' \"$1\") && addr_table | sort")
            .arg("-")
            .arg(dir.join("run.sh"))
            .env("PATH", path)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let by_ip = list(&full);
    let with_sed = bin_with(&["sed", "sort"], &[]);
    let by_python = list(&format!("{}:{path}", with_sed.path().display()));
    assert!(by_ip.contains("lo 127.0.0.1 8\n"), "{by_ip}");
    assert_eq!(by_python, by_ip);
    // Neither ip nor python3: named.
    let bare = bin_with(
        &["bash", "awk", "getent", "hostname", "tr", "dirname", "cat"],
        &[],
    );
    let (code, out) = go(&bare.path().display().to_string(), Some("0"));
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("run.sh: error: neither ip (iproute2) nor python3 is installed: one of them finds this node's IP and NIC"),
        "{out}"
    );
    // preflight's `tools` check asks for python3 and curl, not ip.
    let mut with_curl = tools.to_vec();
    with_curl.push("curl");
    let bin = bin_with(&with_curl, &[]);
    let skip = skip_all_but(&dir, &["tools"]);
    let path = bin.path().display().to_string();
    let (code, out) = run(
        &dir,
        "preflight.sh",
        &["0"],
        &[
            ("PATH", path.as_str()),
            ("PD_SKIP_PREFLIGHT", skip.as_str()),
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("preflight: ok   tools: python3, curl"),
        "{out}"
    );
}
