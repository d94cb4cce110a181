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

This file is the parent side; the harness is e2e_oracle_harness.py, its
stand-ins e2e_oracle_standins.py.
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
from e2e_oracle_harness import harness_main  # noqa: E402
from e2e_oracle_standins import (  # noqa: E402,F401  (re-exported: the tests use them as e2e_oracle's)
    LEADER_DNS,
    NIC,
    S,
    STUBBED_PACKAGES,
    StandInRefused,
    _Placeholder,
    node_ip,
)

PACKAGE = "vllm-ascend"
HARNESS_TIMEOUT_S = 300
JOBS = 2  # releases run in parallel by `dump`


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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
