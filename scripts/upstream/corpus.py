#!/usr/bin/env python3
"""The upstream corpus: the released source distributions pd-dsl tests against.

Every vllm-ascend release the image table names, and the vLLM release each of
them ships, is fetched through pip's configured package index, checked
against the sha256 pinned in `upstream/corpus.lock.json`, cached outside the
tree and unpacked on demand. Nothing of upstream is committed. One package
is a wheel, not an sdist: aiconfigurator-core, for the copies of the models'
Hugging Face `config.json` it ships (`aiconfigurator_core/model_configs/`),
which Hugging Face itself (unreachable here) would otherwise give; only those
files are unpacked.

    corpus.py fetch [--all | NAME==VERSION ...]   download + verify (all pinned by default)
    corpus.py path NAME==VERSION                  print the unpacked source directory (fetches if needed)
    corpus.py pin NAME==VERSION ...               add or refresh lock entries from the index
    corpus.py list                                one line per pinned package

The cache is `$PD_UPSTREAM_CACHE` (a pre-filled cache makes runs offline), else
`$XDG_CACHE_HOME/pd-dsl/upstream`, else `~/.cache/pd-dsl/upstream`.
The index is pip's: `$PIP_INDEX_URL`, else `pip config get global.index-url`,
else the default index pip uses.
"""

from __future__ import annotations

import hashlib
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "upstream" / "corpus.lock.json"
DEFAULT_INDEX = "https://pypi.org/simple"

# What of each package the tests read; everything else in the archive stays
# packed. vllm-ascend: the whole repository at its tag (configs, runner,
# examples, Dockerfiles, docs, the package). vLLM: its Python sources (the
# argument definitions and config classes), not its kernels.
KEEP = {
    "vllm-ascend": lambda rel: True,
    "vllm": lambda rel: rel.endswith(".py") and rel.startswith("vllm/") or "/" not in rel,
    "aiconfigurator-core": lambda rel: rel.startswith("aiconfigurator_core/model_configs/")
    and rel.endswith("_config.json"),
}


class CorpusError(Exception):
    pass


def die(msg: str) -> "None":
    print(f"corpus.py: {msg}", file=sys.stderr)
    sys.exit(1)


def cache_dir() -> Path:
    if os.environ.get("PD_UPSTREAM_CACHE"):
        return Path(os.environ["PD_UPSTREAM_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pd-dsl" / "upstream"


def index_url() -> str:
    if os.environ.get("PIP_INDEX_URL"):
        return os.environ["PIP_INDEX_URL"].rstrip("/")
    try:
        out = subprocess.run(
            [sys.executable, "-m", "pip", "config", "get", "global.index-url"],
            capture_output=True, text=True, timeout=60,
        )
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip().rstrip("/")
    except (OSError, subprocess.TimeoutExpired):
        pass
    return DEFAULT_INDEX


def load_lock() -> dict:
    try:
        return json.loads(LOCK.read_text())
    except FileNotFoundError:
        return {"packages": []}
    except json.JSONDecodeError as e:
        die(f"{LOCK}: not valid JSON ({e})")


def save_lock(lock: dict) -> None:
    lock["packages"].sort(key=lambda p: (p["name"], version_key(p["version"])))
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    LOCK.write_text(json.dumps(lock, indent=2) + "\n")


def version_key(v: str):
    """Orders 0.23.0rc1 < 0.23.0 < 0.23.0.post1 (enough for the lock's order)."""
    import re

    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)(?:rc(\d+))?(?:\.post(\d+))?", v)
    if not m:
        return (9999, v)
    a, b, c, rc, post = m.groups()
    return (int(a), int(b), int(c), int(rc) if rc else 10**6, int(post or 0))


def parse_req(text: str) -> tuple[str, str]:
    if "==" not in text:
        die(f"expected NAME==VERSION, found `{text}`")
    name, version = text.split("==", 1)
    return name.strip().lower().replace("_", "-"), version.strip()


# Packages pinned as a wheel (no sdist on the index), with the wheel's tags.
# Any platform's wheel carries the same data files; this one is pinned.
WHEELS = {"aiconfigurator-core": "cp311-abi3-manylinux_2_28_x86_64"}


def sdist_name(name: str, version: str) -> str:
    """The archive pinned for `name==version`: its sdist, or its wheel for the
    packages of `WHEELS`."""
    if name in WHEELS:
        return f"{name.replace('-', '_')}-{version}-{WHEELS[name]}.whl"
    return f"{name.replace('-', '_')}-{version}.tar.gz"


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            for k, v in attrs:
                if k == "href" and v:
                    self.links.append(v)


def index_links(name: str) -> dict[str, tuple[str, str | None]]:
    """File name -> (absolute URL, sha256 from the link fragment) for `name`."""
    base = index_url()
    page = f"{base}/{name}/"
    try:
        with urllib.request.urlopen(page, timeout=120) as r:
            body = r.read().decode("utf-8", "replace")
    except (urllib.error.URLError, OSError) as e:
        raise CorpusError(
            f"cannot read the package index page {page} for `{name}` ({e}); "
            "set PD_UPSTREAM_CACHE to a pre-filled cache to run offline"
        ) from e
    p = _Links()
    p.feed(body)
    out = {}
    for href in p.links:
        url = urllib.parse.urljoin(page, href)
        path, _, frag = url.partition("#")
        fname = urllib.parse.unquote(path.rsplit("/", 1)[-1])
        sha = frag[len("sha256="):] if frag.startswith("sha256=") else None
        out[fname] = (path, sha)
    return out


def entry(lock: dict, name: str, version: str) -> dict:
    for p in lock["packages"]:
        if p["name"] == name and p["version"] == version:
            return p
    raise CorpusError(
        f"`{name}=={version}` is not pinned in {LOCK.relative_to(ROOT)}; "
        f"add it with `scripts/upstream/corpus.py pin {name}=={version}` and review the hash"
    )


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def archive(p: dict) -> Path:
    """The verified archive of lock entry `p`, downloaded once per machine."""
    dest = cache_dir() / "sdist" / p["file"]
    if dest.exists():
        got = sha256_of(dest)
        if got == p["sha256"]:
            return dest
        print(f"corpus.py: {dest} has sha256 {got}, expected {p['sha256']}: fetching again", file=sys.stderr)
        dest.unlink()
    links = index_links(p["name"])
    if p["file"] not in links:
        raise CorpusError(f"the index lists no `{p['file']}` for `{p['name']}=={p['version']}`")
    url, _ = links[p["file"]]
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".part-")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=600) as r:
            shutil.copyfileobj(r, out, 1 << 20)
        got = sha256_of(Path(tmp))
        if got != p["sha256"]:
            raise CorpusError(
                f"`{p['file']}` from {url} has sha256 {got}, but {LOCK.relative_to(ROOT)} pins {p['sha256']}: "
                "the index serves another file than the one pinned; refusing it"
            )
        os.replace(tmp, dest)
    except (urllib.error.URLError, OSError) as e:
        raise CorpusError(f"cannot download `{p['file']}` for `{p['name']}=={p['version']}` ({e})") from e
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    print(f"corpus.py: fetched {p['file']} ({dest.stat().st_size // 1024} KiB)", file=sys.stderr)
    return dest


def unpacked(p: dict) -> Path:
    """The unpacked source tree of lock entry `p` (the archive's top folder)."""
    root = cache_dir() / "src" / f"{p['name']}-{p['version']}"
    stamp = root / ".pd-dsl-sha256"
    if stamp.exists() and stamp.read_text().strip() == p["sha256"]:
        return root
    src = archive(p)
    tmp = Path(tempfile.mkdtemp(dir=cache_dir(), prefix=".unpack-"))
    keep = KEEP.get(p["name"], lambda rel: True)
    try:
        if p["file"].endswith(".whl"):
            _unpack_wheel(src, p, keep, tmp)
        else:
            _unpack_sdist(src, p, keep, tmp)
        (tmp / ".pd-dsl-sha256").write_text(p["sha256"] + "\n")
        if root.exists():
            shutil.rmtree(root)
        root.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp, root)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return root


def _unpack_sdist(src: Path, p: dict, keep, tmp: Path) -> None:
    """An sdist's files below its top folder, those `keep` takes."""
    with tarfile.open(src, "r:gz") as tf:
        members = []
        for m in tf.getmembers():
            parts = m.name.split("/", 1)
            rel = parts[1] if len(parts) > 1 else ""
            if not rel or not (m.isfile() or m.isdir()) or not keep(rel):
                continue
            if m.name.startswith("/") or ".." in m.name.split("/"):
                raise CorpusError(f"`{p['file']}` holds an unsafe path `{m.name}`")
            m.name = rel
            members.append(m)
        tf.extractall(tmp, members=members, filter="data")


def _unpack_wheel(src: Path, p: dict, keep, tmp: Path) -> None:
    """A wheel's files (it has no top folder), those `keep` takes."""
    with zipfile.ZipFile(src) as zf:
        for info in zf.infolist():
            rel = info.filename
            if info.is_dir() or not keep(rel):
                continue
            if rel.startswith("/") or ".." in rel.split("/"):
                raise CorpusError(f"`{p['file']}` holds an unsafe path `{rel}`")
            dest = tmp / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(zf.read(info))


def cmd_pin(reqs: list[str]) -> None:
    lock = load_lock()
    for r in reqs:
        name, version = parse_req(r)
        fname = sdist_name(name, version)
        links = index_links(name)
        if fname not in links:
            die(f"the index has no `{fname}` for `{name}=={version}`")
        url, sha = links[fname]
        if not sha:
            die(f"the index gives no sha256 for `{fname}`; download it and pin the hash by hand")
        lock["packages"] = [p for p in lock["packages"] if not (p["name"] == name and p["version"] == version)]
        lock["packages"].append({"name": name, "version": version, "file": fname, "sha256": sha})
        print(f"pinned {name}=={version} {sha}")
    save_lock(lock)


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    lock = load_lock()
    try:
        if cmd == "pin":
            cmd_pin(rest)
        elif cmd == "list":
            for p in lock["packages"]:
                print(f"{p['name']}=={p['version']} {p['sha256']}")
        elif cmd == "fetch":
            wanted = [entry(lock, *parse_req(r)) for r in rest if r != "--all"] or lock["packages"]
            for p in wanted:
                unpacked(p)
            print(f"corpus.py: {len(wanted)} packages verified in {cache_dir()}", file=sys.stderr)
        elif cmd == "path":
            if len(rest) != 1:
                die("usage: corpus.py path NAME==VERSION")
            print(unpacked(entry(lock, *parse_req(rest[0]))))
        else:
            die(f"unknown command `{cmd}`; expected fetch, path, pin or list")
    except CorpusError as e:
        die(str(e))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
