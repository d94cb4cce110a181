"""The stand-ins of the e2e oracle's harness (`e2e_oracle.py _harness`): the
LWS pod names and addresses they answer with, the placeholder modules served
for `STUBBED_PACKAGES`, and `_install_stand_ins`, which replaces the network,
process and sleep calls the runner makes (see `e2e_oracle.py`'s docstring).
`S` holds the state of the node being run."""

from __future__ import annotations

import os
import subprocess
import sys
import time

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
