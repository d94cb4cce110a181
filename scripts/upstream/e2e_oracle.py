#!/usr/bin/env python3
"""The e2e oracle: what each vllm-ascend release's own e2e runner starts for
each of its multi-node configs, node by node and rank by rank.

    e2e_oracle.py list [--release VERSION]        one line per multi-node config: release, path
    e2e_oracle.py run --release VERSION PATH      the JSON for one config (PATH relative to the release)
    e2e_oracle.py dump --out DIR [--release V]    one JSON per config of every release, plus DIR/index.json

Nothing here re-implements the runner. Each release runs in its own Python
process with the release's source tree (from `corpus.py`) first on
`sys.path` and as the working directory, the way upstream's CI pod runs
`pytest` from the repository root. For every node index of a config the
oracle sets the environment the LWS pod gives that node (`LWS_WORKER_INDEX`,
`LWS_LEADER_ADDRESS`, `CONFIG_YAML_PATH`, `CONFIG_BASE_PATH`), calls the
same loader and launcher objects the release's test function calls, in the
same order and with the same arguments, and records every process they
start instead of starting it.

Which runner a config goes to is the release's own rule: up to 0.29,
`tests/e2e/nightly/multi_node/scripts/run.sh` picks the external-DP test when
the config path holds `external_dp/config`, the internal-DP test otherwise
(0.18/0.19 have one runner, `tests/e2e/nightly/multi_node/scripts/`); from
0.30, `tests/e2e/common/multi_node/test_multi_node.py` asks
`dp_mode.resolve_dp_load_balancing()` (executed here).

Stand-ins (only for what needs a network, hardware or a process):
- `socket`: `gethostbyname` answers the LWS DNS names (`vllm-0.vllm.e2e`,
  `vllm-0-K.vllm.e2e`) with `10.0.0.(K+1)`, `gethostname`/`getaddrinfo`
  give the current node's name and address, `socket.socket` binds any port
  (so the free-port search returns its first candidate) and refuses to
  connect, `create_connection` to a cluster address succeeds without
  connecting (the KV-pool readiness probe). Anything else raises.
- `psutil` (module): `net_if_addrs()` lists `eth0` with the current node's
  address (the NIC lookup); process helpers find no process.
- `requests` (module) and `urllib.request.urlopen`: `GET` of a cluster
  address's `/health` or `/healthcheck` answers 200 (the readiness polls);
  anything else raises.
- `subprocess.Popen`: records argv, env and cwd and returns a process that
  stays running; `subprocess.call/run/check_call/check_output` raise.
- `time.sleep` raises: a runner that sleeps is waiting for something the
  stand-ins will never give, so the config is recorded as an error.
- `sys.executable` is `python3` (the runner puts it at the head of some
  commands).
- Heavy imports irrelevant to command building, served as empty modules by
  an import hook (`STUBBED_PACKAGES`): any attribute is a placeholder during
  import; once the runner runs, touching a placeholder raises, so a command
  never depends on one.
- The external-DP log root (the runner's `DEFAULT_LOG_ROOT`) is a temporary
  directory; its path is written back as the runner's `DEFAULT_LOG_ROOT` in
  the recorded commands, env and files.

A config the runner cannot execute is recorded as `{"error": ...}` with the
exception, never a guess. Output JSON is sorted and byte-identical on rerun.

One config's JSON:
    release, config              the release and the config path inside its tree
    format                       external_dp | internal_dp | internal_dp_legacy (0.18/0.19)
    runner                       the test module whose calls were made
    dp_load_balancing            (0.30 cases) what `dp_mode` resolved
    model, cluster_ips           as the runner resolved them
    nodes[]                      node_index, ip, role (prefiller/decoder/worker, null for
                                 internal DP without PD), pod_env (the environment the pod
                                 had; a rank's env is what the runner set on top of it),
                                 ranks[] {argv, env, kv_transfer_config (parsed from argv,
                                 null when absent), cwd (only when the runner gives one);
                                 external DP adds dp_rank, local_rank, port, host,
                                 visible_devices from the runner's RankInfo},
                                 services[] {argv, env} (KV-pool master on node 0);
                                 internal DP adds headless, server_port, proxy_port
    proxy                        {node_index, argv, env} or null
    files                        {path: text} the runner wrote for the ranks (KV-pool configs)
    routing / disaggregated_prefill   the runner's view of the PD grouping
    special_dependencies         what the runner would `pip install` first
    benchmarks[]                 the `benchmarks:` cases as written, each with its case_name
    runner_warnings              WARNING+ log lines of the runner
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402  (scripts/upstream/corpus.py)

PACKAGE = "vllm-ascend"
HARNESS_TIMEOUT_S = 300
JOBS = 2  # releases run in parallel by `dump`

# The LWS leader's DNS name; workers are `<leader>-K.<group>.<namespace>`
# (tests/e2e/nightly/multi_node/scripts/utils.py `get_cluster_dns_list`).
LEADER_DNS = "vllm-0.vllm.e2e"
NIC = "eth0"

# Top-level packages served as empty placeholders (heavy, and irrelevant to
# building commands: the runner modules and `tests/e2e/conftest.py` import
# them at module level).
STUBBED_PACKAGES = (
    "PIL",
    "filelock",
    "huggingface_hub",
    "modelscope",
    "numpy",
    "openai",
    "pandas",
    "pytest",
    "torch",
    "torch_npu",
    "transformers",
    "vllm",
    "vllm_ascend",
)


def node_ip(k: int) -> str:
    return f"10.0.0.{k + 1}"


class OracleError(Exception):
    """The oracle itself could not run (not a config the runner rejects)."""


def die(msg: str) -> None:
    print(f"e2e_oracle.py: {msg}", file=sys.stderr)
    sys.exit(1)


# --------------------------------------------------------------------------
# The parent side: releases, config discovery, one harness process per release
# --------------------------------------------------------------------------


def releases() -> list[str]:
    lock = corpus.load_lock()
    vs = [p["version"] for p in lock["packages"] if p["name"] == PACKAGE]
    return sorted(vs, key=corpus.version_key)


def release_root(version: str) -> Path:
    """The unpacked tree of `vllm-ascend==version`; raises `corpus.CorpusError`."""
    return corpus.unpacked(corpus.entry(corpus.load_lock(), PACKAGE, version))


def _num_nodes(path: Path):
    import yaml

    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except Exception:  # an unreadable YAML is the runner's to reject
        return None
    if isinstance(data, dict) and isinstance(data.get("num_nodes"), int):
        return data["num_nodes"]
    return None


def discover(root: Path) -> list[str]:
    """Every multi-node config of one release tree, as paths relative to it.

    Up to 0.29 every YAML in a multi-node config directory (the CI runs each
    on an LWS group of `num_nodes` pods); from 0.30 every YAML under
    `tests/e2e/cases/` with `num_nodes > 1` (the single-node runner reads
    `test_cases` and no `num_nodes`)."""
    out = []
    e2e = root / "tests" / "e2e"
    dirs = [e2e / "nightly" / "multi_node" / "config"]
    for sched in ("nightly", "weekly"):
        for mode in ("external_dp", "internal_dp"):
            dirs.append(e2e / sched / "multi_node" / mode / "config")
    for d in dirs:
        if d.is_dir():
            for f in sorted(d.glob("*.yaml")):
                nn = _num_nodes(f)
                if nn is None or nn > 1:
                    out.append(f.relative_to(root).as_posix())
    cases = e2e / "cases"
    if cases.is_dir():
        for f in sorted(cases.rglob("*.yaml")):
            nn = _num_nodes(f)
            if nn is not None and nn > 1:
                out.append(f.relative_to(root).as_posix())
    return sorted(out)


def run_release(version: str, paths: list[str]) -> dict:
    """Runs the harness for `paths` of one release in a fresh interpreter:
    `{"results": [one JSON per path], "stubbed_packages": [...]}`."""
    root = release_root(version)
    with tempfile.TemporaryDirectory(prefix="e2e-oracle-") as tmp:
        out = Path(tmp) / "out.json"
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
        }
        for m, pkg in (("yaml", "PyYAML"), ("regex", "regex")):
            if importlib.util.find_spec(m) is None:
                raise OracleError(f"the oracle needs the Python package `{pkg}` (the upstream runner imports "
                                  f"`{m}`); install it (`pip install {pkg}`)")
        cmd = [sys.executable, str(Path(__file__).resolve()), "_harness", version, str(root), str(out), *paths]
        try:
            r = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=HARNESS_TIMEOUT_S)
        except subprocess.TimeoutExpired as e:
            raise OracleError(f"the harness for {PACKAGE}=={version} ran longer than {HARNESS_TIMEOUT_S}s") from e
        if r.returncode != 0 or not out.exists():
            raise OracleError(f"the harness for {PACKAGE}=={version} failed (exit {r.returncode}):\n"
                              f"{r.stderr[-4000:]}")
        return json.loads(out.read_text(encoding="utf-8"))


def oracle(versions: list[str]) -> dict:
    """Every multi-node config of every release in `versions`:
    `{version: {"results": [...], "stubbed_packages": [...]}}`, `JOBS`
    releases at a time."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=JOBS) as pool:
        futs = {v: pool.submit(lambda v=v: run_release(v, discover(release_root(v)))) for v in versions}
        return {v: f.result() for v, f in futs.items()}


def dumps(obj) -> str:
    return json.dumps(obj, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def out_name(path: str) -> str:
    return path.removesuffix(".yaml").replace("/", "__") + ".json"


def summary(results: dict[str, list[dict]]) -> dict:
    rel = {}
    for version, rs in results.items():
        errors = {r["config"]: r["error"] for r in rs if "error" in r}
        rel[version] = {
            "multi_node": len(rs),
            "ok": len(rs) - len(errors),
            "errors": errors,
            "formats": _count(r.get("format", "?") for r in rs),
        }
    return {"releases": rel}


def _count(xs) -> dict:
    c: dict = {}
    for x in xs:
        c[x] = c.get(x, 0) + 1
    return c


def main(argv: list[str]) -> int:
    if len(argv) >= 1 and argv[0] == "_harness":
        return harness_main(argv[1:])
    import argparse

    ap = argparse.ArgumentParser(prog="e2e_oracle.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("list")
    p.add_argument("--release")
    p = sub.add_parser("run")
    p.add_argument("--release", required=True)
    p.add_argument("path")
    p = sub.add_parser("dump")
    p.add_argument("--out", required=True)
    p.add_argument("--release", action="append")
    a = ap.parse_args(argv)

    known = releases()
    if a.cmd == "dump":
        wanted = a.release or known
    else:
        wanted = [a.release] if a.release else known
    for v in wanted:
        if v not in known:
            die(f"unknown release `{v}`; the corpus pins {', '.join(known)}")
    try:
        if a.cmd == "list":
            for v in wanted:
                for path in discover(release_root(v)):
                    print(f"{v}\t{path}")
        elif a.cmd == "run":
            root = release_root(a.release)
            path = a.path
            if Path(path).is_absolute():
                try:
                    path = Path(path).resolve().relative_to(root.resolve()).as_posix()
                except ValueError:
                    die(f"`{a.path}` is not inside the {PACKAGE}=={a.release} tree {root}")
            if not (root / path).is_file():
                die(f"`{path}` is not a file of {PACKAGE}=={a.release} "
                    f"(see `e2e_oracle.py list --release {a.release}`)")
            (res,) = run_release(a.release, [path])["results"]
            sys.stdout.write(dumps(res))
        else:
            out = Path(a.out)
            t0 = time.monotonic()
            runs = oracle(wanted)
            results = {v: r["results"] for v, r in runs.items()}
            for v in wanted:
                d = out / v
                d.mkdir(parents=True, exist_ok=True)
                for stale in d.glob("*.json"):
                    stale.unlink()
                for r in results[v]:
                    (d / out_name(r["config"])).write_text(dumps(r), encoding="utf-8")
            index = summary(results)
            for v, r in runs.items():
                index["releases"][v]["stubbed_packages"] = r["stubbed_packages"]
            (out / "index.json").write_text(dumps(index), encoding="utf-8")
            n = sum(len(rs) for rs in results.values())
            ok = sum(1 for rs in results.values() for r in rs if "error" not in r)
            print(f"e2e_oracle.py: {n} configs of {len(results)} releases, {ok} executed, "
                  f"{n - ok} errors, {time.monotonic() - t0:.1f}s -> {out}", file=sys.stderr)
    except (corpus.CorpusError, OracleError) as e:
        die(str(e))
    return 0


# --------------------------------------------------------------------------
# The harness: runs inside one interpreter per release, cwd = release root
# --------------------------------------------------------------------------


class StandInRefused(Exception):
    """The runner asked a stand-in for something only the real thing can do."""


class _State:
    run_phase = False  # placeholders refuse use once the runner runs
    node = 0
    ips: list[str] = []
    phase = "setup"
    launches: list[dict] = []
    stubbed: set[str] = set()
    next_pid = 40000


S = _State


def _refuse(what: str):
    raise StandInRefused(what)


class _Placeholder:
    """An attribute of a stubbed package."""

    __slots__ = ("_p",)

    def __init__(self, path: str):
        object.__setattr__(self, "_p", path)

    def _use(self, how: str):
        if S.run_phase:
            _refuse(f"the runner used `{self._p}{how}` of the stubbed package `{self._p.split('.')[0]}` "
                    "while building commands")

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        self._use("." + name)
        return _Placeholder(f"{self._p}.{name}")

    def __call__(self, *args, **kwargs):
        self._use("()")
        # A decorator applied to a function or class leaves it as it is.
        if len(args) == 1 and not kwargs and (callable(args[0]) and not isinstance(args[0], _Placeholder)):
            return args[0]
        return _Placeholder(f"{self._p}()")

    def __getitem__(self, key):
        self._use("[]")
        return _Placeholder(f"{self._p}[]")

    def __or__(self, other):
        return _Placeholder(f"{self._p}|")

    __ror__ = __or__

    def __mro_entries__(self, bases):
        self._use(" (as a base class)")
        return (object,)

    def __iter__(self):
        _refuse(f"the runner iterated `{self._p}` of a stubbed package")

    def __str__(self):
        _refuse(f"the runner turned `{self._p}` of a stubbed package into text")

    __repr__ = lambda self: f"<placeholder {self._p}>"  # noqa: E731


def _install_import_hook():
    import importlib.abc
    import importlib.machinery
    import types

    class _StubModule(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__") and name.endswith("__"):
                raise AttributeError(name)
            if S.run_phase:
                _refuse(f"the runner used `{self.__name__}.{name}` of a stubbed package while building commands")
            return _Placeholder(f"{self.__name__}.{name}")

    class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in STUBBED_PACKAGES:
                return importlib.machinery.ModuleSpec(name, self, is_package=True)
            return None

        def create_module(self, spec):
            m = _StubModule(spec.name)
            m.__path__ = []
            return m

        def exec_module(self, module):
            S.stubbed.add(module.__name__)

    sys.meta_path.insert(0, _Finder())


def _cluster_url_ok(url: str) -> bool:
    import urllib.parse

    u = urllib.parse.urlsplit(url)
    return u.scheme == "http" and u.hostname in S.ips and u.path in ("/health", "/healthcheck")


def _install_stand_ins():
    import socket
    import types
    import urllib.request

    # --- socket: DNS, local address, port search, no connections
    def gethostbyname(name):
        if name == LEADER_DNS:
            return node_ip(0)
        head, _, rest = name.partition(".")
        lead, _, rest0 = LEADER_DNS.partition(".")
        if rest == rest0 and head.startswith(lead + "-") and head[len(lead) + 1:].isdigit():
            return node_ip(int(head[len(lead) + 1:]))
        if name == gethostname():
            return node_ip(S.node)
        _refuse(f"the runner resolved `{name}`, which is no LWS pod name")

    def gethostname():
        return f"node-{S.node}"

    def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
        if host == gethostname():
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (node_ip(S.node), port or 0))]
        _refuse(f"the runner looked up `{host}`")

    class FakeSocket:
        def __init__(self, *a, **k):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def bind(self, addr):
            return None

        def setsockopt(self, *a):
            return None

        def connect(self, addr):
            raise OSError(f"e2e oracle: no network (connect to {addr})")

        def close(self):
            return None

    def create_connection(address, timeout=None, source_address=None):
        host, port = address
        if host in S.ips:
            return FakeSocket()
        _refuse(f"the runner connected to {host}:{port}")

    socket.gethostbyname = gethostbyname
    socket.gethostname = gethostname
    socket.getaddrinfo = getaddrinfo
    socket.socket = FakeSocket
    socket.create_connection = create_connection

    # --- HTTP readiness polls
    class Response:
        status = 200
        status_code = 200
        text = ""

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self):
            return b""

    def urlopen(url, *a, **k):
        u = url if isinstance(url, str) else url.full_url
        if _cluster_url_ok(u):
            return Response()
        _refuse(f"the runner opened `{u}`")

    urllib.request.urlopen = urlopen

    requests = types.ModuleType("requests")
    exceptions = types.ModuleType("requests.exceptions")

    class RequestException(OSError):
        pass

    exceptions.RequestException = RequestException
    exceptions.ConnectionError = RequestException
    requests.exceptions = exceptions
    requests.RequestException = RequestException

    def get(url, *a, **k):
        if _cluster_url_ok(url):
            return Response()
        _refuse(f"the runner sent GET `{url}`")

    requests.get = get
    sys.modules["requests"] = requests
    sys.modules["requests.exceptions"] = exceptions

    # --- psutil: the NIC lookup; no process is ever real
    psutil = types.ModuleType("psutil")

    class NoSuchProcess(Exception):
        pass

    class TimeoutExpired(Exception):
        pass

    def net_if_addrs():
        addr = types.SimpleNamespace(family=socket.AF_INET, address=node_ip(S.node), netmask="255.255.255.0",
                                     broadcast=None, ptp=None)
        lo = types.SimpleNamespace(family=socket.AF_INET, address="127.0.0.1", netmask="255.0.0.0",
                                   broadcast=None, ptp=None)
        return {"lo": [lo], NIC: [addr]}

    def process(pid):
        raise NoSuchProcess(pid)

    psutil.net_if_addrs = net_if_addrs
    psutil.NoSuchProcess = NoSuchProcess
    psutil.TimeoutExpired = TimeoutExpired
    psutil.Process = process
    psutil.wait_procs = lambda procs, timeout=None: ([], [])
    sys.modules["psutil"] = psutil

    # --- processes
    class Process:
        def __init__(self, args, *rest, env=None, cwd=None, shell=False, **kw):
            if rest or shell or isinstance(args, (str, bytes)):
                _refuse(f"the runner started a shell command or passed positional Popen options: {args!r}")
            S.next_pid += 1
            self.pid = S.next_pid
            self.returncode = None
            self.args = args
            S.launches.append({
                "phase": S.phase,
                "argv": [str(x) if isinstance(x, os.PathLike) else x for x in args],
                "env": None if env is None else dict(env),
                "cwd": None if cwd is None else str(cwd),
            })

        def poll(self):
            return None

        def wait(self, timeout=None):
            return 0

        def terminate(self):
            return None

        kill = send_signal = terminate

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    def refuse_run(*a, **k):
        _refuse(f"the runner ran a command synchronously: {a[0] if a else k!r}")

    subprocess.Popen = Process
    subprocess.call = subprocess.run = subprocess.check_call = subprocess.check_output = refuse_run

    def sleep(seconds):
        _refuse(f"the runner waited ({seconds}s) for something the stand-ins never give")

    time.sleep = sleep
    sys.executable = "python3"

    # Not a stand-in: every node's loader parses the same file, so each text
    # is parsed once (by PyYAML's own `safe_load`) and every caller gets a
    # fresh deep copy, as a fresh parse would give it.
    import copy

    import yaml

    real_safe_load = yaml.safe_load
    parsed: dict = {}

    def safe_load(stream):
        text = stream if isinstance(stream, (str, bytes)) else stream.read()
        if text not in parsed:
            parsed[text] = real_safe_load(text)
        return copy.deepcopy(parsed[text])

    yaml.safe_load = safe_load


def _import(name: str):
    import importlib

    return importlib.import_module(name)


def _module_names(rel: str) -> dict:
    """The test modules of the runner that serves config `rel` (see the
    docstring); each imports the loader and launcher modules it calls."""
    if rel.startswith("tests/e2e/cases/"):
        base = "tests.e2e.common.multi_node"
        return {
            "dispatch": f"{base}.dp_mode",
            "external": {"test": f"{base}.external_dp.test_external_dp"},
            "internal": {"test": f"{base}.internal_dp.test_multi_node"},
            "entry": f"{base}.test_multi_node",
        }
    base = "tests.e2e.nightly.multi_node"
    if rel.startswith("tests/e2e/nightly/multi_node/config/"):
        return {"legacy": {"test": f"{base}.scripts.test_multi_node"}}
    if "external_dp/config" in rel:  # run.sh:14-20 (0.23.0): `*"external_dp/config"*` picks the external-DP test
        return {"external": {"test": f"{base}.external_dp.scripts.test_external_dp"}}
    return {"internal": {"test": f"{base}.internal_dp.scripts.test_multi_node"}}


def _pod_env(rel: str, k: int) -> dict:
    # What the LWS template (`lws.yaml.jinja2`) and the LWS controller give
    # every pod that the runner reads.
    return {
        "CONFIG_BASE_PATH": str(Path(rel).parent.as_posix()),
        "CONFIG_YAML_PATH": Path(rel).name,
        "LWS_LEADER_ADDRESS": LEADER_DNS,
        "LWS_WORKER_INDEX": str(k),
    }


def _set_environ(env: dict):
    os.environ.clear()
    os.environ.update(env)


def _kv_transfer_config(argv: list[str]):
    for i, a in enumerate(argv):
        val = None
        for flag in ("--kv-transfer-config", "--kv_transfer_config"):
            if a == flag and i + 1 < len(argv):
                val = argv[i + 1]
            elif a.startswith(flag + "="):
                val = a[len(flag) + 1:]
        if val is not None:
            try:
                return json.loads(val)
            except json.JSONDecodeError as e:
                return {"error": f"`--kv-transfer-config` is not JSON ({e}): {val}"}
    return None


def _own_env(env, base: dict) -> dict:
    """What the runner sets for a process: its env minus what the pod had."""
    if env is None:
        return {}
    return {k: v for k, v in env.items() if not (k in base and base[k] == v)}


def _launch_record(launch: dict, base: dict, with_kv: bool) -> dict:
    for x in launch["argv"]:
        if not isinstance(x, str):
            _refuse(f"the runner put a non-string argument {x!r} on a command line")
    env = _own_env(launch["env"], base)
    for key, v in env.items():
        if not isinstance(v, str):
            _refuse(f"the runner passed a non-string env value {key}={v!r}")
    rec = {"argv": list(launch["argv"]), "env": env}
    if launch["cwd"] is not None:
        rec["cwd"] = launch["cwd"]
    if with_kv:
        rec["kv_transfer_config"] = _kv_transfer_config(rec["argv"])
    return rec


def _external_node(mods: dict, k: int, log_root: Path, out: dict):
    """One node of an external-DP config, as `test_external_dp()` starts it
    (0.23.0 `tests/e2e/nightly/multi_node/external_dp/scripts/test_external_dp.py:102-125`;
    from 0.27 with the KV-pool manager first and its env passed to the
    ranks, `test_external_dp.py` `kv_pool_manager = create_kv_pool_manager(...)`)."""
    test = _import(mods["test"])
    S.run_phase = True
    config = test.ExternalDPConfigLoader.from_yaml()
    ranks = test.RankResolver(config).resolve()
    current = test.resolve_current_node_index(config)
    if current != k:
        _refuse(f"the runner resolved node index {current} for pod {k}")
    extra = {}
    if hasattr(test, "create_kv_pool_manager"):
        S.phase = "service"
        pool = test.create_kv_pool_manager(config=config, current_node_index=current, log_root=log_root)
        pool.__enter__()
        extra = {"extra_envs": pool.server_envs}
    S.phase = "rank"
    test.ExternalDPServerManager(config=config, ranks=ranks, current_node_index=current, log_root=log_root,
                                 **extra).start_current_node()
    S.phase = "proxy"
    test.ExternalDPProxyLauncher(config=config, ranks=ranks, current_node_index=current, log_root=log_root).start()
    S.run_phase = False
    local = [r for r in ranks if r.node_index == k]
    roles = sorted({r.role for r in local})
    out["model"] = config.model
    out["cluster_ips"] = list(config.cluster_ips)
    out["routing"] = {"type": config.routing.type, "groups": config.routing.groups,
                      "proxy_node_index": config.routing.proxy_node_index}
    out["special_dependencies"] = dict(config.special_dependencies)
    out["default_log_root"] = str(test.DEFAULT_LOG_ROOT)
    return {"role": roles[0] if len(roles) == 1 else roles, "rank_info": [
        {"dp_rank": r.dp_rank, "local_rank": r.local_rank, "port": r.port, "visible_devices": r.visible_devices,
         "host": r.host} for r in local]}


def _internal_node(mods: dict, k: int, out: dict):
    """One node of an internal-DP config, as `test_multi_node()` starts it
    (0.23.0 `tests/e2e/nightly/multi_node/internal_dp/scripts/test_multi_node.py:162-194`;
    0.18.0 `tests/e2e/nightly/multi_node/scripts/test_multi_node.py:11-32`, the same calls)."""
    test = _import(mods["test"])
    S.run_phase = True
    config = test.MultiNodeConfigLoader.from_yaml()
    if config.cur_index != k:
        _refuse(f"the runner resolved node index {config.cur_index} for pod {k}")
    S.phase = "proxy"
    proxy = test.ProxyLauncher(nodes=config.nodes, disagg_cfg=config.disagg_cfg, envs=config.envs,
                               proxy_port=config.proxy_port, cur_index=config.cur_index).__enter__()
    S.phase = "rank"
    test.RemoteOpenAIServer(model=config.model, vllm_serve_args=config.server_cmd, server_port=config.server_port,
                            server_host=config.master_ip, env_dict=config.envs, auto_port=False,
                            proxy_port=proxy.proxy_port, disaggregated_prefill=config.disagg_cfg,
                            nodes_info=config.nodes, max_wait_seconds=2800)
    S.run_phase = False
    d = config.disagg_cfg
    out["model"] = config.model
    out["cluster_ips"] = [n.ip for n in config.nodes]
    out["disaggregated_prefill"] = None if d is None else {
        "prefiller_host_index": list(d.prefiller_indices), "decoder_host_index": list(d.decoder_indices)}
    out["special_dependencies"] = dict(getattr(config, "special_dependencies", {}) or {})
    node = config.nodes[k]
    role = None if d is None else ("prefiller" if d.is_prefiller(k) else "decoder" if d.is_decoder(k) else None)
    return {"role": role, "headless": node.headless, "server_port": str(config.server_port),
            "proxy_port": config.proxy_port}


def _benchmarks(raw) -> list:
    """The config's `benchmarks:` cases as the runner hands them to AISBench
    (each with its `case_name`), values as written."""
    if not isinstance(raw, dict) or not isinstance(raw.get("benchmarks"), dict):
        return []
    out = []
    for name, case in raw["benchmarks"].items():
        c = dict(case) if isinstance(case, dict) else {"value": case}
        c["case_name"] = name
        out.append(c)
    return out


def _swap(obj, old: str, new: str):
    if isinstance(obj, str):
        return obj.replace(old, new)
    if isinstance(obj, list):
        return [_swap(x, old, new) for x in obj]
    if isinstance(obj, dict):
        return {_swap(k, old, new): _swap(v, old, new) for k, v in obj.items()}
    return obj


def _jsonable(obj):
    return json.loads(json.dumps(obj, sort_keys=True, default=str))


def run_config(root: Path, version: str, rel: str) -> dict:
    import logging

    import yaml

    res: dict = {"release": version, "config": rel}
    try:
        raw = yaml.safe_load((root / rel).read_text(encoding="utf-8"))
    except Exception as e:
        raw = None
        res["error"] = f"the YAML does not load: {type(e).__name__}: {e}"
        return res
    res["benchmarks"] = _jsonable(_benchmarks(raw))
    num_nodes = raw.get("num_nodes") if isinstance(raw, dict) else None
    if not isinstance(num_nodes, int) or num_nodes < 1:
        res["error"] = f"`num_nodes` is {num_nodes!r}, expected a positive integer"
        return res
    mods = _module_names(rel)
    S.ips = [node_ip(k) for k in range(num_nodes)]
    warnings: list[str] = []

    class Catch(logging.Handler):
        def emit(self, record):
            if record.levelno >= logging.WARNING:
                warnings.append(f"{record.levelname}: {record.getMessage()}")

    catch = Catch()
    logging.getLogger().addHandler(catch)
    nodes = []
    proxy = None
    files: dict = {}
    node_k = 0
    try:
        for k in range(num_nodes):
            node_k = k
            S.node, S.launches, S.phase = k, [], "setup"
            base = _pod_env(rel, k)
            _set_environ(base)
            log_tmp = tempfile.mkdtemp(prefix="e2e-oracle-logs-")
            try:
                if "dispatch" in mods:
                    _import(mods["entry"])
                    S.run_phase = True
                    mode = _import(mods["dispatch"]).resolve_dp_load_balancing()
                    S.run_phase = False
                    kind = mods[mode]
                    res["dp_load_balancing"] = mode
                elif "legacy" in mods:
                    mode, kind = "internal", mods["legacy"]
                else:
                    mode = "external" if "external" in mods else "internal"
                    kind = mods[mode]
                res["runner"] = kind["test"].replace(".", "/") + ".py"
                res["format"] = ("external_dp" if mode == "external" else
                                 "internal_dp_legacy" if "legacy" in mods else "internal_dp")
                if mode == "external":
                    info = _external_node(kind, k, Path(log_tmp), res)
                else:
                    info = _internal_node(kind, k, res)
                swap_to = res.get("default_log_root")
                node = {"node_index": k, "ip": node_ip(k), "pod_env": base, "ranks": [], "services": [], **info}
                for launch in S.launches:
                    if launch["phase"] == "proxy":
                        if proxy is not None:
                            _refuse("the runner started a second proxy")
                        proxy = {"node_index": k, **_launch_record(launch, base, with_kv=False)}
                    elif launch["phase"] == "rank":
                        node["ranks"].append(_launch_record(launch, base, with_kv=True))
                    else:
                        node["services"].append(_launch_record(launch, base, with_kv=False))
                if "rank_info" in node:
                    if len(node["rank_info"]) != len(node["ranks"]):
                        _refuse(f"the runner started {len(node['ranks'])} ranks for {len(node['rank_info'])} "
                                "resolved ranks")
                    for r, ri in zip(node["ranks"], node.pop("rank_info")):
                        r.update(ri)
                if swap_to:
                    for p in sorted(Path(log_tmp).rglob("*")):
                        if p.is_file() and "runtime" in p.relative_to(log_tmp).parts:
                            files[str(Path(swap_to) / p.relative_to(log_tmp))] = p.read_text(encoding="utf-8")
                    node = _swap(node, log_tmp, swap_to)
                    if proxy is not None:
                        proxy = _swap(proxy, log_tmp, swap_to)
                    files = _swap(files, log_tmp, swap_to)
                nodes.append(node)
            finally:
                S.run_phase = False
                import shutil

                shutil.rmtree(log_tmp, ignore_errors=True)
        res.pop("default_log_root", None)
        res["nodes"] = nodes
        res["proxy"] = proxy
        res["files"] = files
        res["runner_warnings"] = sorted(set(warnings))
    except (Exception, SystemExit) as e:  # the runner's own refusal or a stand-in's
        for key in ("nodes", "proxy", "files", "runner_warnings", "default_log_root", "model", "cluster_ips",
                    "routing", "special_dependencies", "disaggregated_prefill"):
            res.pop(key, None)
        res["error"] = f"node {node_k}: {type(e).__name__}: {e}"
    finally:
        logging.getLogger().removeHandler(catch)
    return _jsonable(res)


def harness_main(argv: list[str]) -> int:
    version, root, out, *paths = argv
    root_p = Path(root)
    sys.dont_write_bytecode = True
    sys.path.insert(0, str(root_p))
    import logging

    import regex  # noqa: F401  (real, imported before the stand-ins)
    import yaml  # noqa: F401

    logging.getLogger().setLevel(logging.INFO)
    _install_import_hook()
    _install_stand_ins()
    results = [run_config(root_p, version, rel) for rel in paths]
    stubbed = sorted({m.split(".")[0] for m in S.stubbed})
    Path(out).write_text(json.dumps({"results": results, "stubbed_packages": stubbed}), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
