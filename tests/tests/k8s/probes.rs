//! `health.sh`, the script every probe runs.

use crate::layouts;
use pd_dsl::render;
use pd_dsl::render::k8s;
use std::process::Command;

/// `health.sh`, which every probe runs: 0 when each given port answers
/// `/health` with a 2xx, 1 when one does not (nothing listening, or an
/// error status), 2 for an argument that is no port.
#[test]
fn the_probes_script_tells_up_from_down() {
    use std::io::{Read, Write};
    let l = &layouts()[0];
    let tmp = tempfile::tempdir().expect("tempdir");
    let files = render::render_layout(l).expect("render");
    render::write_catalog(tmp.path(), &files).expect("write");
    let script = tmp.path().join(l.name()).join(k8s::HEALTH_SCRIPT);
    // A server answering /health with the given status, for a few requests.
    let serve = |status: &'static str| {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for stream in listener.incoming().take(4) {
                let mut s = stream.expect("accept");
                let mut buf = [0u8; 1024];
                let _ = s.read(&mut buf);
                let _ = write!(
                    s,
                    "HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
            }
        });
        port
    };
    let up = serve("200 OK");
    let sick = serve("503 Service Unavailable");
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .unwrap()
        .port(); // dropped: nothing listens there now
    let run = |args: &[String]| -> i32 {
        Command::new("bash")
            .arg(&script)
            .args(args)
            .output()
            .expect("bash runs")
            .status
            .code()
            .unwrap_or(-1)
    };
    assert_eq!(run(&[up.to_string()]), 0, "a port answering 200");
    assert_eq!(
        run(&[up.to_string(), sick.to_string()]),
        1,
        "one port answering 503"
    );
    assert_eq!(run(&[closed.to_string()]), 1, "nothing listening");
    assert_eq!(run(&["http".into()]), 2, "not a port");
    assert_eq!(run(&[]), 2, "no port");
}
