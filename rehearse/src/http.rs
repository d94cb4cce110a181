//! A minimal HTTP/1.1 server and client on std: one request per connection
//! (`Connection: close`), `Content-Length` or chunked bodies. Enough for
//! `curl`, Python's `httpx`/`aiohttp` and the stand-ins talking to each other.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

/// Largest body accepted.
const MAX_BODY: usize = 64 << 20;

/// A parsed request.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// `GET`, `POST`, ….
    pub method: String,
    /// Path without the query string.
    pub path: String,
    /// Headers, names lowercased.
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
}

/// A response.
#[derive(Clone, Debug, Default)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// `Content-Type`.
    pub content_type: String,
    /// Body bytes.
    pub body: Vec<u8>,
}

impl Response {
    /// A JSON response.
    pub fn json(status: u16, v: &serde_json::Value) -> Response {
        Response {
            status,
            content_type: "application/json".into(),
            body: v.to_string().into_bytes(),
        }
    }

    /// A `{"error": msg}` response.
    pub fn error(status: u16, msg: &str) -> Response {
        Response::json(
            status,
            &serde_json::json!({"error": {"message": msg, "code": status}}),
        )
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

fn bad(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_string())
}

/// Reads headers then the body. `first` is the request or status line.
/// First line, lowercased headers, body.
type Message = (String, Vec<(String, String)>, Vec<u8>);

/// The largest request head (request line and headers) the real servers
/// take: uvicorn's h11 protocol (its default without `httptools`) builds
/// `h11.Connection(h11.SERVER, DEFAULT_MAX_INCOMPLETE_EVENT_SIZE)`
/// (`uvicorn/protocols/http/h11_impl.py`; `h11/_connection.py`:
/// `DEFAULT_MAX_INCOMPLETE_EVENT_SIZE = 16 * 1024`, h11 0.16.0) and answers a
/// larger head with 400.
pub const MAX_REQUEST_HEAD: usize = 16 * 1024;

fn read_message<R: BufRead>(r: &mut R, max_head: Option<usize>) -> io::Result<Message> {
    let mut first = String::new();
    if r.read_line(&mut first)? == 0 {
        return Err(bad("connection closed before a message"));
    }
    let mut head = first.len();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            break;
        }
        head += line.len();
        if let Some(max) = max_head.filter(|m| head > *m) {
            return Err(bad(&format!(
                "request head larger than {max} bytes (uvicorn's h11 limit)"
            )));
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
        if headers.len() > 200 {
            return Err(bad("too many headers"));
        }
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let mut body = Vec::new();
    if header("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked")) {
        loop {
            let mut size = String::new();
            r.read_line(&mut size)?;
            let hex = size.trim().split(';').next().unwrap_or("");
            let n = usize::from_str_radix(hex, 16).map_err(|_| bad("bad chunk size"))?;
            if n == 0 {
                let mut trailer = String::new();
                while r.read_line(&mut trailer)? > 0 && !trailer.trim().is_empty() {
                    trailer.clear();
                }
                break;
            }
            if body.len() + n > MAX_BODY {
                return Err(bad("body too large"));
            }
            let start = body.len();
            body.resize(start + n, 0);
            r.read_exact(&mut body[start..])?;
            let mut crlf = String::new();
            r.read_line(&mut crlf)?;
        }
    } else if let Some(len) = header("content-length") {
        let n: usize = len.parse().map_err(|_| bad("bad content-length"))?;
        if n > MAX_BODY {
            return Err(bad("body too large"));
        }
        body.resize(n, 0);
        r.read_exact(&mut body)?;
    }
    Ok((first.trim_end().to_string(), headers, body))
}

/// Reads one request.
pub fn read_request<R: BufRead>(r: &mut R) -> io::Result<Request> {
    let (first, headers, body) = read_message(r, Some(MAX_REQUEST_HEAD))?;
    let mut parts = first.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("/");
    let path = target.split('?').next().unwrap_or("/").to_string();
    Ok(Request {
        method,
        path,
        headers,
        body,
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// Writes a response and closes the exchange.
pub fn write_response<W: Write>(w: &mut W, resp: &Response) -> io::Result<()> {
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        resp.status,
        reason(resp.status),
        resp.content_type,
        resp.body.len()
    );
    w.write_all(head.as_bytes())?;
    w.write_all(&resp.body)?;
    w.flush()
}

/// The accept backlog of the real servers: uvicorn's `Config(backlog=2048)`
/// default (`uvicorn/config.py`, `backlog: int = 2048`, uvicorn 0.32.1 on
/// PyPI), which both the upstream proxy (`uvicorn.run(app, …)`) and vLLM's
/// API server (`serve_http` → `uvicorn.Config`, no `backlog` given) listen
/// with. `std::net::TcpListener::bind` listens with 128, so a burst of more
/// connections than that (a 64-node layout's request wave) overflowed the
/// stand-ins' queue where the real proxy's would not. The kernel caps it at
/// `net.core.somaxconn` (4096 by default since Linux 5.4), as for uvicorn.
pub const BACKLOG: i32 = 2048;

/// Binds `host:port` (`SO_REUSEADDR`, as `std` and uvicorn set it) and
/// listens with [`BACKLOG`].
pub fn listen(host: &str, port: u16) -> io::Result<TcpListener> {
    use rustix::net::{AddressFamily, SocketType, sockopt};
    let addr = host_port(host, port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| bad("no address"))?;
    let family = if addr.is_ipv4() {
        AddressFamily::INET
    } else {
        AddressFamily::INET6
    };
    let fd = rustix::net::socket(family, SocketType::STREAM, None)?;
    sockopt::set_socket_reuseaddr(&fd, true)?;
    rustix::net::bind(&fd, &addr)?;
    rustix::net::listen(&fd, BACKLOG)?;
    Ok(TcpListener::from(fd))
}

/// Handler type of [`serve`].
pub type Handler = Arc<dyn Fn(&Request) -> Response + Send + Sync>;

/// Accepts forever, one thread per connection.
pub fn serve(listener: TcpListener, handler: Handler) {
    serve_counted(listener, handler, &Arc::new(AtomicUsize::new(0)));
}

/// [`serve`], counting in `open` each connection from its accept until its
/// response is written and its write side shut: a server draining on
/// SIGTERM waits for this count, not for its handlers, or it exits while a
/// finished request's answer is still on its way out.
pub fn serve_counted(listener: TcpListener, handler: Handler, open: &Arc<AtomicUsize>) {
    /// One open connection for as long as it lives.
    struct Open(Arc<AtomicUsize>);
    impl Drop for Open {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::SeqCst);
        }
    }
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        open.fetch_add(1, Ordering::SeqCst);
        let guard = Open(Arc::clone(open));
        let h = Arc::clone(&handler);
        thread::spawn(move || {
            let _open = guard;
            let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
            let Ok(read_half) = stream.try_clone() else {
                return;
            };
            let mut reader = BufReader::new(read_half);
            let mut writer = stream;
            let resp = match read_request(&mut reader) {
                Ok(req) => h(&req),
                Err(e) => Response::error(400, &format!("bad request: {e}")),
            };
            let _ = write_response(&mut writer, &resp);
            // FIN right behind the response: the server closes first, so the
            // TIME_WAIT lands on the server's (reusable) port, not on the
            // client's ephemeral one (see [`probe`]).
            let _ = writer.shutdown(std::net::Shutdown::Write);
        });
    }
}

/// Formats `host:port` for a URL/socket (brackets IPv6).
pub fn host_port(host: &str, port: u16) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Connects with a timeout to the first resolved address.
pub fn connect(host: &str, port: u16, timeout: Duration) -> io::Result<TcpStream> {
    let mut last = bad("no address");
    // `rehearse --k8s-env` names nodes by pod DNS names only its map knows.
    let host = crate::k8s_env::lookup(host).unwrap_or_else(|| host.to_owned());
    for addr in host_port(&host, port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(s) => return Ok(s),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Checks that `host:port` accepts a TCP connection, then resets it
/// (`SO_LINGER` 0): a probe leaves no `TIME_WAIT` socket behind. That
/// matters on one machine, where every node's outgoing connections to
/// `127.0.0.N` come from `127.0.0.1`'s ephemeral ports, and a client socket
/// in `TIME_WAIT` on a port blocks a later bind of that port (kv handshake
/// spans such as 36000+ lie in the ephemeral range).
pub fn probe(host: &str, port: u16, timeout: Duration) -> io::Result<()> {
    let stream = connect(host, port, timeout)?;
    let _ = rustix::net::sockopt::set_socket_linger(&stream, Some(Duration::ZERO));
    drop(stream);
    Ok(())
}

/// One request; `body` `None` sends no body.
pub fn request(
    method: &str,
    host: &str,
    port: u16,
    path: &str,
    body: Option<&[u8]>,
    timeout: Duration,
) -> io::Result<Response> {
    let mut stream = connect(host, port, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    let body = body.unwrap_or(&[]);
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: */*\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        host_port(host, port),
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    stream.flush()?;
    let mut reader = BufReader::new(stream);
    let (first, headers, mut body) = read_message(&mut reader, None)?;
    let has_len = headers
        .iter()
        .any(|(k, _)| k == "content-length" || k == "transfer-encoding");
    if !has_len {
        reader.read_to_end(&mut body)?;
    }
    // The whole response is read: reset rather than close, so this client
    // never holds a `TIME_WAIT` port (see [`probe`]).
    let _ = rustix::net::sockopt::set_socket_linger(reader.get_ref(), Some(Duration::ZERO));
    let status = first
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("bad status line"))?;
    let content_type = headers
        .iter()
        .find(|(k, _)| k == "content-type")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    Ok(Response {
        status,
        content_type,
        body,
    })
}

/// `POST` a JSON body.
pub fn post_json(
    host: &str,
    port: u16,
    path: &str,
    body: &serde_json::Value,
    timeout: Duration,
) -> io::Result<Response> {
    let bytes = body.to_string().into_bytes();
    request("POST", host, port, path, Some(&bytes), timeout)
}

/// `GET`.
pub fn get(host: &str, port: u16, path: &str, timeout: Duration) -> io::Result<Response> {
    request("GET", host, port, path, None, timeout)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// More pending connections than `std`'s backlog (128) all complete
    /// their handshake before any is accepted, as with uvicorn's 2048.
    #[test]
    fn the_accept_backlog_is_uvicorns() {
        let Ok(l) = listen("127.0.0.1", 0) else {
            return assert!(listen("127.0.0.1", 0).is_ok());
        };
        let Ok(addr) = l.local_addr() else {
            return assert!(l.local_addr().is_ok());
        };
        let mut held = Vec::new();
        let failed = (0..600).find_map(|i| {
            TcpStream::connect_timeout(&addr, Duration::from_secs(2))
                .map(|s| held.push(s))
                .err()
                .map(|e| format!("connection {i} not queued: {e}"))
        });
        assert_eq!(failed, None);
        assert_eq!(held.len(), 600);
    }

    /// A request head over h11's 16 KiB is refused (400), as uvicorn does.
    #[test]
    fn a_request_head_over_16_kib_is_refused() {
        let small = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(100));
        let large = format!(
            "GET / HTTP/1.1\r\nX: {}\r\n\r\n",
            "a".repeat(MAX_REQUEST_HEAD)
        );
        assert!(read_request(&mut small.as_bytes()).is_ok());
        let err = read_request(&mut large.as_bytes())
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("request head larger than 16384 bytes (uvicorn's h11 limit)")
        );
    }

    /// A connection counts as open until its answer is out, not only while
    /// its handler runs: with a 16 MiB answer the client has not read, the
    /// handler has long returned and the connection is still counted; once
    /// the client reads it all, the count falls to 0. A draining server
    /// waits on this count, so it cannot exit with an answer half-sent.
    #[test]
    fn a_connection_is_open_until_its_answer_is_written() -> Result<(), String> {
        let l = listen("127.0.0.1", 0).map_err(|e| format!("listen: {e}"))?;
        let addr = l.local_addr().map_err(|e| format!("addr: {e}"))?;
        let open = Arc::new(AtomicUsize::new(0));
        let returned = Arc::new(AtomicUsize::new(0));
        let (o, r) = (Arc::clone(&open), Arc::clone(&returned));
        thread::spawn(move || {
            let handler: Handler = Arc::new(move |_req: &Request| {
                r.fetch_add(1, Ordering::SeqCst);
                Response {
                    status: 200,
                    content_type: "application/octet-stream".into(),
                    body: vec![b'x'; 16 << 20],
                }
            });
            serve_counted(l, handler, &o);
        });
        let mut client = TcpStream::connect_timeout(&addr, Duration::from_secs(2))
            .map_err(|e| format!("connect: {e}"))?;
        client
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .map_err(|e| format!("send: {e}"))?;
        let until = std::time::Instant::now() + Duration::from_secs(10);
        while returned.load(Ordering::SeqCst) == 0 && std::time::Instant::now() < until {
            thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(returned.load(Ordering::SeqCst), 1, "the handler ran");
        thread::sleep(Duration::from_millis(200));
        assert_eq!(
            open.load(Ordering::SeqCst),
            1,
            "the handler returned, its answer is unread: still open"
        );
        let mut all = Vec::new();
        client
            .read_to_end(&mut all)
            .map_err(|e| format!("read: {e}"))?;
        assert!(all.len() > 16 << 20, "the whole answer arrived");
        let until = std::time::Instant::now() + Duration::from_secs(10);
        while open.load(Ordering::SeqCst) > 0 && std::time::Instant::now() < until {
            thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(open.load(Ordering::SeqCst), 0, "answered: closed");
        Ok(())
    }
}
