# One HTTP request to the deployment, never through an HTTP proxy (http_proxy,
# https_proxy, all_proxy are for downloads): curl when it is installed, else
# python3's urllib with the same options, output and exit status. The image
# may lack curl (v0.30.0rc2's Dockerfile installs it itself); python3 runs vLLM.
# Options, curl's and only these: -f -s -S, --connect-timeout SECONDS,
# -m SECONDS, -o FILE, -w '%{http_code}', -H 'Name: value' or -H @FILE,
# -d DATA, then the URL. Exit status: 0; 6 cannot resolve the host; 7 cannot
# connect; 22 HTTP 400 or above under -f; 28 timed out; 52 empty reply;
# 56 receive failure; 2 an option this helper lacks.
http_request() {
    if command -v curl >/dev/null 2>&1; then
        curl --noproxy '*' "$@"
    elif command -v python3 >/dev/null 2>&1; then
        python3 - "$@" <<'PY'
import argparse
import http.client
import signal
import socket
import sys
import urllib.error
import urllib.request

NAME = "http_request"


class TimedOut(Exception):
    pass


def on_alarm(signum, frame):
    raise TimedOut()


class Parser(argparse.ArgumentParser):
    def error(self, message):
        print(f"{NAME}: (2) {message} (python3 urllib, no curl command)", file=sys.stderr)
        sys.exit(2)


p = Parser(prog=NAME, add_help=False, allow_abbrev=False)
p.add_argument("-f", "--fail", action="store_true")
p.add_argument("-s", "--silent", action="store_true")
p.add_argument("-S", "--show-error", action="store_true")
p.add_argument("--connect-timeout", type=float)
p.add_argument("-m", "--max-time", type=float)
p.add_argument("-o", "--output")
p.add_argument("-w", "--write-out", choices=["%{http_code}"])
p.add_argument("-H", "--header", action="append", default=[])
p.add_argument("-d", "--data")
p.add_argument("url")
a = p.parse_args()


def fail(code, message, status=0):
    if a.show_error or not a.silent:
        print(f"{NAME}: ({code}) {message} (python3 urllib, no curl command)", file=sys.stderr)
    if a.write_out:
        sys.stdout.write(f"{status:03d}")
    sys.exit(code)


# curl without -L does not follow a redirect: the 3xx is the answer.
class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


# --connect-timeout bounds the connection (TLS included), -m the whole request.
def unbounded_after_connect(base):
    class Connection(base):
        def connect(self):
            super().connect()
            self.sock.settimeout(None)

    return Connection


class Plain(urllib.request.HTTPHandler):
    def http_open(self, req):
        return self.do_open(unbounded_after_connect(http.client.HTTPConnection), req)


class Secure(urllib.request.HTTPSHandler):
    def https_open(self, req):
        return self.do_open(unbounded_after_connect(http.client.HTTPSConnection), req, context=self._context)


if not a.url.startswith(("http://", "https://")):
    fail(1, f"unsupported protocol in {a.url}: expected http:// or https://")
if a.data is not None and a.data.startswith("@"):
    fail(2, "-d @FILE is not supported: pass the data itself")
headers = {}
for h in a.header:
    try:
        lines = open(h[1:]).read().splitlines() if h.startswith("@") else [h]
    except OSError as e:
        fail(26, f"cannot read the header file {h[1:]}: {e.strerror}")
    for line in lines:
        if not line.strip():
            continue
        name, colon, value = line.partition(":")
        if not colon or not name.strip():
            fail(2, f"header {line!r} is not `Name: value`")
        headers[name.strip()] = value.strip()

# No proxy at all: the deployment's addresses are reached directly.
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirect(), Plain(), Secure())
request = urllib.request.Request(a.url, data=None if a.data is None else a.data.encode(), headers=headers)
kwargs = {"timeout": a.connect_timeout} if a.connect_timeout else {}
if a.max_time:
    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, a.max_time)
try:
    try:
        response = opener.open(request, **kwargs)
    except urllib.error.HTTPError as e:
        response = e
    status = response.getcode()
    body = response.read() if response.fp is not None else b""
except TimedOut:
    fail(28, f"{a.url}: timed out after {a.max_time:g} seconds")
except urllib.error.URLError as e:
    r = e.reason
    if isinstance(r, socket.gaierror):
        fail(6, f"cannot resolve the host of {a.url}: {r}")
    if isinstance(r, (socket.timeout, TimeoutError)):
        fail(28, f"cannot connect to {a.url}: timed out")
    fail(7, f"cannot connect to {a.url}: {r}")
except http.client.RemoteDisconnected:
    fail(52, f"empty reply from {a.url}")
except (OSError, http.client.HTTPException) as e:
    fail(56, f"failure receiving from {a.url}: {e!r}")
signal.setitimer(signal.ITIMER_REAL, 0)
if a.fail and status >= 400:
    fail(22, f"the requested URL returned error: {status}", status)
try:
    if a.output and a.output != "-":
        with open(a.output, "wb") as out:
            out.write(body)
    else:
        sys.stdout.buffer.write(body)
except OSError as e:
    fail(23, f"cannot write the body to {a.output}: {e.strerror}", status)
if a.write_out:
    sys.stdout.buffer.write(f"{status:03d}".encode())
PY
    else
        echo "http_request: neither curl nor python3 is installed: one of them sends the deployment's HTTP requests" >&2
        return 2
    fi
}

# What http_request uses here (said in the logs).
http_client() {
    if command -v curl >/dev/null 2>&1; then echo "curl"; else echo "python3's urllib (no curl command)"; fi
}
