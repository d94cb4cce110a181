//! HTTP proxies in the environment: the scripts and a pod bypass them for
//! the deployment's own addresses.

use crate::preflight::bin_with;
use crate::{PD, dry_run, render, run};
use std::process::Command;

/// A dead HTTP proxy in the environment, in every spelling curl, httpx and
/// aiohttp read.
const DEAD_PROXY: [(&str, &str); 5] = [
    ("http_proxy", "http://127.0.0.1:9"),
    ("https_proxy", "http://127.0.0.1:9"),
    ("HTTP_PROXY", "http://127.0.0.1:9"),
    ("HTTPS_PROXY", "http://127.0.0.1:9"),
    ("all_proxy", "http://127.0.0.1:9"),
];

/// A one-request chat completions server on 127.0.0.1; returns its port.
fn one_shot_chat_server() -> (std::process::Child, u16) {
    let script = r#"
import http.server, json, socket, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.dumps({"choices": [{"message": {"content": "ok"}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.handle_request()
"#;
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    (child, line.trim().parse().unwrap())
}

/// With http_proxy and friends pointing at a dead proxy, verify.sh still
/// reaches the deployment; run.sh, proxy.sh and bench.sh put every node
/// address on NO_PROXY/no_proxy and keep what the operator had there.
#[test]
fn scripts_bypass_http_proxies_for_the_deployment() {
    let (_tmp, dir) = render(PD);
    let (mut server, port) = one_shot_chat_server();
    let url = format!("http://127.0.0.1:{port}");
    let mut env: Vec<(&str, &str)> = DEAD_PROXY.to_vec();
    env.push(("PD_PROXY_URL", url.as_str()));
    let (code, out) = run(&dir, "verify.sh", &[], &env);
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("verify.sh: ok: HTTP 200 with choices"),
        "{out}"
    );

    // run.sh: every node by address and by the name it was given (a name
    // that does not resolve is kept in a dry run).
    let ips = "127.0.0.1,node1.cluster.example,127.0.0.3,127.0.0.4";
    let mut env: Vec<(&str, &str)> = DEAD_PROXY.to_vec();
    env.extend([
        ("NO_PROXY", "corp.example, .internal"),
        ("no_proxy", "corp.example,mirror.example"),
    ]);
    let (code, out) = dry_run(&dir, ips, "2", &env);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("run.sh: node 2 bypasses HTTP proxies for NO_PROXY=corp.example,.internal,mirror.example,127.0.0.1,localhost,::1,node1.cluster.example,127.0.0.3,127.0.0.4\n"),
        "{out}"
    );
    // node 0 also dry-runs the proxy with the same list.
    let (code, out) = dry_run(
        &dir,
        "127.0.0.1,127.0.0.2,127.0.0.3,10.0.0.4",
        "0",
        &[
            ("PD_LOCAL_IP", "127.0.0.1"),
            ("http_proxy", "http://127.0.0.1:9"),
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("proxy.sh: bypasses HTTP proxies for NO_PROXY=127.0.0.1,localhost,::1,127.0.0.2,127.0.0.3,10.0.0.4\n"),
        "{out}"
    );

    // bench.sh: vllm bench (aiohttp, trust_env) gets the target on NO_PROXY.
    let record = tempfile::tempdir().unwrap();
    let seen = record.path().join("env");
    let vllm = format!(
        "#!/usr/bin/env bash\nprintf 'NO_PROXY=%s\\nno_proxy=%s\\n' \"$NO_PROXY\" \"$no_proxy\" >{}\n",
        seen.display()
    );
    let bin = bin_with(&[], &[("vllm", &vllm)]);
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap()
    );
    for (host, want) in [("10.1.2.3", "10.1.2.3"), ("[fd00::7]", "fd00::7")] {
        let mut env: Vec<(&str, &str)> = DEAD_PROXY.to_vec();
        env.extend([("PATH", path.as_str()), ("NO_PROXY", "corp.example")]);
        let (code, out) = run(&dir, "bench.sh", &[host], &env);
        assert_eq!(code, 0, "{out}");
        let list = format!("corp.example,127.0.0.1,localhost,::1,{want}");
        assert_eq!(
            std::fs::read_to_string(&seen).unwrap(),
            format!("NO_PROXY={list}\nno_proxy={list}\n"),
            "{host}"
        );
    }
}

/// On Kubernetes run.sh puts every node's pod DNS name (as well as its
/// address) on NO_PROXY, and takes its local IP from PD_LOCAL_IP (the
/// downward API's pod IP), finding the NIC holding it.
#[test]
fn a_pod_bypasses_http_proxies_for_every_pod_name() {
    let (_tmp, dir) = render(PD);
    let layout = layouts::catalog()
        .unwrap()
        .iter()
        .find(|l| l.name() == PD)
        .unwrap();
    let names = pd_dsl::render::k8s::names(layout).unwrap();
    // The leader of the first engine, node 0: its pod IP 127.0.0.1 is held by
    // `lo` (the other loopback addresses are routed to it, not held).
    let set = names.sets.iter().find(|s| s.nodes[0] == 0).unwrap();
    // Pod names resolve to 127.0.0.(node + 1), the way cluster DNS would.
    let mut getent = String::from("#!/usr/bin/env bash\ncase $2 in\n");
    for (i, h) in names.node_hosts.iter().enumerate() {
        getent.push_str(&format!("    {h}) echo \"127.0.0.{} {h}\" ;;\n", i + 1));
    }
    getent.push_str("    *) exit 2 ;;\nesac\n");
    let bin = bin_with(&[], &[("getent", &getent)]);
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap()
    );
    let hosts = names.node_hosts.join(",");
    let node = set.nodes[0];
    let pod_ip = format!("127.0.0.{}", node + 1);
    let size = set.nodes.len().to_string();
    let first = node.to_string();
    let leader = format!("{}-0.{}.vllm", set.name, set.name);
    let (code, out) = run(
        &dir,
        "run.sh",
        &[],
        &[
            ("PATH", path.as_str()),
            ("PD_DRY_RUN", "1"),
            ("LWS_LEADER_ADDRESS", leader.as_str()),
            ("LWS_GROUP_SIZE", size.as_str()),
            ("LWS_WORKER_INDEX", "0"),
            (pd_dsl::render::k8s::ENV_NODE_HOSTS, hosts.as_str()),
            (pd_dsl::render::k8s::ENV_FIRST_NODE, first.as_str()),
            (pd_dsl::render::k8s::ENV_ENGINE_NODES, size.as_str()),
            (pd_dsl::render::k8s::ENV_LOCAL_IP, pod_ip.as_str()),
            ("PD_FORCE_NODE_INDEX", "1"),
            ("http_proxy", "http://127.0.0.1:9"),
        ],
    );
    assert_eq!(code, 0, "{out}");
    let line = out
        .lines()
        .find_map(|l| {
            l.strip_prefix(&format!(
                "run.sh: node {node} bypasses HTTP proxies for NO_PROXY="
            ))
        })
        .unwrap_or_else(|| panic!("no NO_PROXY line for node {node}:\n{out}"));
    let entries: Vec<&str> = line.split(',').collect();
    for (i, h) in names.node_hosts.iter().enumerate() {
        let ip = format!("127.0.0.{}", i + 1);
        assert!(entries.contains(&h.as_str()), "{h} not in {line}");
        assert!(entries.contains(&ip.as_str()), "{ip} not in {line}");
    }
    assert!(
        out.contains(&format!(
            "run.sh: node {node}: local IP {pod_ip} (PD_LOCAL_IP), NIC"
        )),
        "{out}"
    );
}
