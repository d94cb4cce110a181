"""The container images of a vllm-ascend release, for `facts_ascend.py`: each
hardware's Dockerfile read as text (base image, apt packages, env, `.bashrc`
lines, the tools on PATH, Mooncake) and the tag suffix the image workflow
pushes it with."""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

from facts_ascend_package import FactsError


# --------------------------------------------------------------------------------------
# Images
# --------------------------------------------------------------------------------------

TOOLS = [
    "bash", "curl", "ip", "ifconfig", "hostname", "python3", "ps", "pgrep", "pkill", "kill", "ss",
    "netstat", "getent", "timeout", "awk", "sed", "grep", "setsid", "numactl", "npu-smi", "hccn_tool",
]

# Debian/Ubuntu package -> the commands it puts on PATH (the packages' file lists).
PROVIDES = {
    "bash": ["bash", "kill"],  # `kill` is a bash builtin
    "coreutils": ["timeout"],
    "grep": ["grep"],
    "sed": ["sed"],
    "mawk": ["awk"],
    "gawk": ["awk"],
    "hostname": ["hostname"],
    "libc-bin": ["getent"],
    "util-linux": ["setsid"],
    "procps": ["ps", "pgrep", "pkill", "kill"],
    "iproute2": ["ip", "ss"],
    "net-tools": ["ifconfig", "netstat"],
    "curl": ["curl"],
    "numactl": ["numactl"],
}

# Packages every Ubuntu/Debian root file system holds: the Essential/Priority
# required set (Debian Policy 3.8 "Essential packages"; `apt-cache show P` gives
# `Essential: yes` for bash coreutils grep sed hostname libc-bin util-linux and
# `Priority: required` for mawk). procps and iproute2 are only `Priority:
# important`, net-tools/numactl/curl `optional`: the minimal ubuntu:22.04 image
# the CANN images start from does not hold them.
BASE_REQUIRED = ["bash", "coreutils", "grep", "sed", "mawk", "hostname", "libc-bin", "util-linux"]

# What the CANN base image's final stage installs, from its Dockerfile in
# github.com/Ascend/cann-container-image (snapshot c5a67b3a, 2026-07-07):
#   cann/<tag>/Dockerfile, stage 3 `FROM ubuntu:22.04 AS official-ubuntu`:
#   `apt-get install --no-install-recommends -y apt-transport-https ca-certificates
#   bash libc6 libsqlite3-dev gcc g++ make cmake git vim wget jq curl build-essential
#   libnuma-dev`, `ENV PATH=/usr/local/python3.X/bin:${PATH}` (python3 on PATH),
#   `SHELL ["/bin/bash", "-c"]`, and an ENTRYPOINT that sources the toolkit,
#   ascendnpu-ir and ATB set_env.sh before `exec "$@"` (bypassed when a pod sets
#   `command:`). Identical for 8.5.1-{910b,a3}-ubuntu22.04-py3.11 (49b07637),
#   9.0.0-{910b,a3}-ubuntu22.04-py3.11 (aec63618), 9.0.0-{910b,950}-ubuntu22.04-py3.12
#   (8145b0b2), 9.0.0-a3-ubuntu22.04-py3.12 (deff45cf), 9.0.1-{910b,a3,950}-ubuntu22.04-py3.12
#   (c5a67b3a). The repository holds no Dockerfile for 9.1.0 or 9.2.0 (only
#   9.1.0-beta.*): their tools stay unknown (null) unless the vllm-ascend
#   Dockerfile itself installs or runs them.
CANN_BASE_PACKAGES = [
    "apt-transport-https", "ca-certificates", "bash", "libc6", "libsqlite3-dev", "gcc", "g++", "make",
    "cmake", "git", "vim", "wget", "jq", "curl", "build-essential", "libnuma-dev",
]
CANN_BASE_KNOWN = {
    "8.5.1-910b-ubuntu22.04-py3.11", "8.5.1-a3-ubuntu22.04-py3.11",
    "9.0.0-910b-ubuntu22.04-py3.11", "9.0.0-a3-ubuntu22.04-py3.11",
    "9.0.0-910b-ubuntu22.04-py3.12", "9.0.0-a3-ubuntu22.04-py3.12", "9.0.0-950-ubuntu22.04-py3.12",
    "9.0.1-910b-ubuntu22.04-py3.12", "9.0.1-a3-ubuntu22.04-py3.12", "9.0.1-950-ubuntu22.04-py3.12",
}
CANN_BASE_TOOLS_ON_PATH = ["python3"]
# npu-smi and hccn_tool come from the host's driver (mounted into the container by
# the run command, see docs/source/installation.md `-v /usr/local/bin/npu-smi`);
# the image alone cannot say: always null.
HOST_TOOLS = {"npu-smi", "hccn_tool"}

IMAGES = {"a2": "Dockerfile", "a3": "Dockerfile.a3", "950dt": "Dockerfile.a5"}


def _logical_lines(text: str) -> list[str]:
    out, cur = [], ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if not cur and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if cur and line.lstrip().startswith("#"):
            continue
        if line.endswith("\\"):
            cur += line[:-1] + " "
            continue
        cur += line
        out.append(cur.strip())
        cur = ""
    if cur.strip():
        out.append(cur.strip())
    return out


def _subst(s: str, args: dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args.get(m.group(1) or m.group(2), m.group(0)), s)


def _shell_tokens(cmd: str) -> list[str]:
    lex = shlex.shlex(cmd, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    try:
        return list(lex)
    except ValueError:
        return cmd.split()


OPS = {"&&", "||", ";", "|", "(", ")", "&", ";;"}


def _commands(cmd: str) -> list[list[str]]:
    out, cur = [], []
    for t in _shell_tokens(cmd.replace("$(", " ( ")):
        if t in OPS or set(t) <= set("&|;()"):
            if cur:
                out.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        out.append(cur)
    return out


BASHRC_ECHO = re.compile(
    r"""echo\s+(?:(["'])(.*?)\1|([^|&;>]+?))\s*>>\s*(?:~|/root|\$HOME|\$\{HOME\})/\.bashrc"""
)


def parse_dockerfile(src: Path, name: str) -> dict | None:
    p = src / name
    if not p.exists():
        return None
    lines = _logical_lines(p.read_text(encoding="utf-8"))
    args: dict[str, str] = {}
    stage = None
    for line in lines:
        word, _, rest = line.partition(" ")
        word = word.upper()
        rest = rest.strip()
        if word == "ARG":
            k, eq, v = rest.partition("=")
            if eq:
                args[k.strip()] = v.strip().strip('"').strip("'")
            continue
        if word == "FROM":
            image = _subst(rest.split()[0], args)
            stage = {"from": image, "lines": []}
            continue
        if stage is not None:
            stage["lines"].append((word, rest))
    if stage is None:
        raise FactsError(f"`{p}` has no FROM line; expected a Dockerfile")
    apt, env, bashrc, set_env, runs = [], {}, [], [], []
    workdir, cmd = None, None
    for word, rest in stage["lines"]:
        if word == "ENV":
            toks = _shell_tokens(rest)
            if toks and "=" not in toks[0]:
                env[toks[0]] = rest[len(rest.split()[0]):].strip()
            else:
                for t in toks:
                    k, _, v = t.partition("=")
                    env[k] = v
        elif word == "WORKDIR":
            workdir = rest
        elif word == "CMD":
            try:
                cmd = ast.literal_eval(rest) if rest.startswith("[") else ["/bin/sh", "-c", rest]
            except (ValueError, SyntaxError):
                cmd = [rest]
        elif word == "RUN":
            runs.append(rest)
            for m in BASHRC_ECHO.finditer(rest):
                bashrc.append(m.group(2) if m.group(2) is not None else m.group(3).strip())
            for c in _commands(rest):
                # apt-get install
                words = [w for w in c if "=" not in w or w.startswith("-")]
                if len(words) >= 2 and words[0] in ("apt-get", "apt") and "install" in words:
                    i = words.index("install")
                    apt += [w for w in words[i + 1:] if not w.startswith("-")]
                if c[0] in ("source", ".") and len(c) > 1 and c[1].endswith("set_env.sh"):
                    set_env.append(c[1])
    used = set()
    for r in runs:
        for c in _commands(r):
            words = [w for w in c if not re.match(r"^\w+=", w)]
            if words:
                used.add(words[0])
    return {
        "dockerfile": name,
        "from": stage["from"],
        "apt_packages": sorted(set(apt)),
        "env": env,
        "bashrc": bashrc,
        "set_env_scripts": sorted(set(set_env), key=set_env.index),
        "workdir": workdir,
        "cmd": cmd,
        "mooncake": _mooncake(args, p),
        "_used": used,
    }


def _mooncake(args: dict[str, str], p: Path) -> str | None:
    """The Mooncake the Dockerfile builds or installs: its `ARG MOONCAKE_TAG`
    (`v0.3.9` is a git tag, `0.3.11.post1` the npu wheel's version), without
    the `v`; None when the Dockerfile installs no Mooncake."""
    tag = args.get("MOONCAKE_TAG")
    if tag is None:
        return None
    if not re.fullmatch(r"v?\d+(\.\d+)*(\.post\d+)?", tag):
        raise FactsError(f"`{p}` has `ARG MOONCAKE_TAG={tag}`; expected a version such as `v0.3.9` or `0.3.11.post1`")
    return tag.removeprefix("v")


def _tools(img: dict) -> dict:
    tag = img["from"].rsplit(":", 1)[-1] if ":" in img["from"] else None
    base_known = tag in CANN_BASE_KNOWN
    have = set()
    for pkg in img["apt_packages"] + BASE_REQUIRED + (CANN_BASE_PACKAGES if base_known else []):
        have |= set(PROVIDES.get(pkg, []))
    if base_known:
        have |= set(CANN_BASE_TOOLS_ON_PATH)
    # a command the image's own RUN steps execute is on PATH (else the build fails)
    have |= img["_used"] & set(TOOLS)
    out = {}
    for t in TOOLS:
        if t in HOST_TOOLS:
            out[t] = None
        elif t in have:
            out[t] = True
        else:
            out[t] = False if base_known else None
    return out


def images(src: Path) -> dict:
    out = {}
    for key, name in IMAGES.items():
        img = parse_dockerfile(src, name)
        if img is None:
            out[key] = None
            continue
        out[key] = {
            "dockerfile": img["dockerfile"],
            "from": img["from"],
            "apt_packages": img["apt_packages"],
            "tools": _tools(img),
            "env": img["env"],
            "bashrc": img["bashrc"],
            "set_env_scripts": img["set_env_scripts"],
            "workdir": img["workdir"],
            "cmd": img["cmd"],
            "mooncake": img["mooncake"],
        }
    return out


IMAGE_WORKFLOW = ".github/workflows/schedule_image_build_and_push.yaml"
WORKFLOW_SUFFIX = re.compile(
    r"""dockerfile:\s*["']?(?P<dockerfile>[\w.]+)["']?\s*,?\s*(?:\n\s*)?suffix:\s*["'](?P<suffix>[\w-]*)["']"""
)


def image_suffixes(src: Path) -> dict:
    """The tag suffix of each image the release's image workflow pushes
    (`quay.io/ascend/vllm-ascend:<tag><suffix>`), per hardware key: the
    workflow's build matrix pairs each Dockerfile with a suffix (`a3`), the
    tag is `<tag>-<suffix>`, or `<tag>` for an empty suffix; None when the
    workflow builds no image from that hardware's Dockerfile."""
    p = src / IMAGE_WORKFLOW
    if not p.exists():
        raise FactsError(f"`{p}` is missing; expected the image workflow that names each image's suffix")
    pairs: dict[str, set[str]] = {}
    for m in WORKFLOW_SUFFIX.finditer(p.read_text(encoding="utf-8")):
        pairs.setdefault(m.group("dockerfile"), set()).add(m.group("suffix"))
    if IMAGES["a2"] not in pairs:
        raise FactsError(f"`{p}` pairs no `dockerfile: {IMAGES['a2']}` with a `suffix:`; expected the build matrix")
    out: dict = {"source": IMAGE_WORKFLOW}
    for key, name in IMAGES.items():
        got = pairs.get(name)
        if got is None:
            out[key] = None
            continue
        if len(got) != 1:
            raise FactsError(f"`{p}` gives `{name}` the suffixes {sorted(got)}; expected one")
        suffix = got.pop()
        out[key] = f"-{suffix}" if suffix else ""
    return out
