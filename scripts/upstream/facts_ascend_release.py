"""Facts of the vllm-ascend release's other files, for `facts_ascend.py`: the
vLLM it is built on (the Dockerfile's `VLLM_TAG`), its version module, the
flags of its example scripts, its multi-node e2e configs and how their runner
starts a KV pool."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import yaml

from facts_ascend_package import PKG, FactsError, _parse, _rel, _str_const


# --------------------------------------------------------------------------------------
# Version
# --------------------------------------------------------------------------------------


def _dockerfile_arg(text: str, name: str) -> str | None:
    m = re.search(rf"^\s*ARG\s+{name}=\"?([^\"\s]+)\"?", text, re.M)
    return m.group(1) if m else None


def vllm_version(src: Path) -> dict:
    # The image is built from the Dockerfile's `ARG VLLM_TAG` (`git clone -b $VLLM_TAG`);
    # docs/source/community/versioning_policy.md may say otherwise (0.21.0rc1:
    # Dockerfile.a3 v0.22.1, the policy table v0.21.0): the Dockerfile wins.
    for name in ("Dockerfile.a3", "Dockerfile"):
        p = src / name
        if p.exists():
            tag = _dockerfile_arg(p.read_text(encoding="utf-8"), "VLLM_TAG")
            if tag:
                return {"version": tag.removeprefix("v"), "source": name}
    raise FactsError(f"neither `{src}/Dockerfile.a3` nor `{src}/Dockerfile` has an `ARG VLLM_TAG=...`; expected the vLLM tag the image clones")


def version_module(src: Path) -> dict:
    setup = src / "setup.py"
    module_path = None
    if setup.exists():
        for node in ast.walk(_parse(setup)):
            if isinstance(node, ast.Call):
                for k in node.keywords:
                    if k.arg in ("write_to", "version_file") and _str_const(k.value):
                        module_path = _str_const(k.value)
    pyproject = src / "pyproject.toml"
    if module_path is None and pyproject.exists():
        m = re.search(r"^\s*(?:version_file|write_to)\s*=\s*\"([^\"]+)\"", pyproject.read_text(encoding="utf-8"), re.M)
        if m:
            module_path = m.group(1)
    if module_path is None:
        raise FactsError(f"`{src}`: neither setup.py nor pyproject.toml names the setuptools-scm version file")
    vp = src / module_path
    if not vp.exists():
        raise FactsError(f"`{vp}` is missing; setup.py writes the version there, so the sdist should hold it")
    attribute = None
    for node in _parse(vp).body:
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name) and t.id == "__version__":
                    attribute = "__version__"
    init = src / PKG / "__init__.py"
    defines = False
    for node in ast.walk(_parse(init)):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name) and n.id == "__version__":
                        defines = True
        if isinstance(node, ast.ImportFrom):
            if any((a.asname or a.name) == "__version__" for a in node.names):
                defines = True
    return {
        "module": module_path[:-3].replace("/", "."),
        "attribute": attribute,
        "init_defines_version": defines,
        "source": module_path,
    }


# --------------------------------------------------------------------------------------
# Scripts (argparse flags)
# --------------------------------------------------------------------------------------

SCRIPTS = {
    "load_balance_proxy_server_example.py": "examples/disaggregated_prefill_v1/load_balance_proxy_server_example.py",
    "load_balance_proxy_layerwise_server_example.py": "examples/disaggregated_prefill_v1/load_balance_proxy_layerwise_server_example.py",
    "launch_online_dp.py": "examples/external_online_dp/launch_online_dp.py",
}


def _literal_text(node) -> str | None:
    if node is None:
        return None
    try:
        v = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return ast.unparse(node)
    if isinstance(v, str):
        return v
    if isinstance(v, bool) or v is None:
        return ast.unparse(node)
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(v)
    return ast.unparse(node)


def script_flags(src: Path, rel: str) -> dict | None:
    p = src / rel
    if not p.exists():
        return None
    flags = []
    for node in ast.walk(_parse(p)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            names = [_str_const(a) for a in node.args if _str_const(a)]
            longs = [n for n in names if n.startswith("--")]
            if not longs:
                continue
            kw = {k.arg: k.value for k in node.keywords if k.arg}
            typ = kw.get("type")
            nargs = kw.get("nargs")
            flags.append(
                {
                    "name": longs[0],
                    "default": _literal_text(kw.get("default")),
                    "nargs": None if nargs is None else _literal_text(nargs),
                    "type": None if typ is None else ast.unparse(typ),
                }
            )
    flags.sort(key=lambda f: f["name"])
    return {"source": rel, "flags": flags}


# --------------------------------------------------------------------------------------
# e2e configs
# --------------------------------------------------------------------------------------


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    pass


def _any_tag(loader, suffix, node):
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_scalar(node)


_Loader.add_multi_constructor("!", _any_tag)


def _load_yaml(p: Path):
    try:
        return yaml.load(p.read_text(encoding="utf-8"), Loader=_Loader)
    except yaml.YAMLError as e:
        raise FactsError(f"`{p}` is not valid YAML ({e}); expected an e2e config") from e


def e2e(src: Path) -> dict:
    base = src / "tests" / "e2e"
    configs = []
    for p in sorted(base.rglob("*.yaml")) + sorted(base.rglob("*.yml")):
        rel = _rel(src, p)
        parts = rel.split("/")
        if "multi_node" in parts and ("config" in parts or "configs" in parts):
            data = _load_yaml(p)
            if isinstance(data, dict):
                configs.append((rel, data))
        elif "cases" in parts:
            data = _load_yaml(p)
            if isinstance(data, dict) and isinstance(data.get("num_nodes"), int) and data["num_nodes"] > 1:
                configs.append((rel, data))
    dirs = sorted({rel.rsplit("/", 1)[0] for rel, _ in configs})
    keys = sorted({k for _, d in configs for k in d})
    runner = sorted(
        _rel(src, p)
        for p in base.rglob("*.py")
        if "multi_node" in _rel(src, p).split("/") and p.name != "__init__.py"
    )
    return {"config_dirs": dirs, "configs": len(configs), "root_keys": keys, "runner": runner}


POOL_RUNNERS = (
    "tests/e2e/common/multi_node/external_dp/runtime.py",  # 0.30
    "tests/e2e/nightly/multi_node/external_dp/scripts/runtime.py",  # 0.27.1rc1-0.29
)


def kv_pool_runner(src: Path) -> dict | None:
    """How upstream's e2e runner starts a KV pool's service on node 0
    (`ExternalDPMemcacheManager._start_service`: the `python -c` program and
    the env naming its config; `ExternalDPMooncakeManager._start_service`:
    `mooncake_master`'s flags from the module's `MOONCAKE_*` constants and
    the library paths it prepends). `None` before the runner has a pool."""
    found = [r for r in POOL_RUNNERS if (Path(src) / r).is_file()]
    if not found:
        return None
    p = Path(src) / found[0]
    tree = _parse(p)
    consts = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                consts[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    out = {"source": found[0]}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "_start_service"):
            for node in ast.walk(fn):
                if not (isinstance(node, ast.Assign) and isinstance(node.value, (ast.List, ast.Dict))):
                    continue
                name = node.targets[0].id if isinstance(node.targets[0], ast.Name) else None
                if name == "cmd" and isinstance(node.value, ast.List):
                    items = []
                    for e in node.value.elts:
                        if isinstance(e, ast.Constant):
                            items.append(e.value)
                        elif (
                            isinstance(e, ast.Call)
                            and isinstance(e.func, ast.Name)
                            and e.func.id == "str"
                            and isinstance(e.args[0], ast.Name)
                        ):
                            items.append(consts.get(e.args[0].id, "{" + e.args[0].id + "}"))
                        elif isinstance(e, ast.Attribute) and e.attr == "executable":
                            items.append("python3")
                        else:
                            items.append(None)
                    if "Memcache" in cls.name:
                        out["memcache_argv"] = items
                    elif "Mooncake" in cls.name:
                        out["mooncake_argv"] = items
                if name == "env" and isinstance(node.value, ast.Dict) and "Memcache" in cls.name:
                    out["memcache_env"] = [k.value for k in node.value.keys if isinstance(k, ast.Constant)]
    if "MOONCAKE_LIBRARY_PATHS" in consts:
        out["mooncake_library_paths"] = list(consts["MOONCAKE_LIBRARY_PATHS"])
    if "memcache_argv" not in out:
        return None
    return out


# --------------------------------------------------------------------------------------
# Env variables moved to additional_config keys (the docs' migration table)
# --------------------------------------------------------------------------------------

ADDITIONAL_CONFIG_DOC = "docs/source/user_guide/configuration/additional_config.md"


def env_migration(src: Path) -> list[dict] | None:
    """The environment variables the release moved to `additional_config`
    keys: the rows of the "Quick Reference" table (`| `ENV` | `key` | ... |`)
    in docs/source/user_guide/configuration/additional_config.md, each with
    the `path:line` of its row, in the table's order. `None` where the doc or
    the table is absent."""
    p = src / ADDITIONAL_CONFIG_DOC
    if not p.exists():
        return None
    lines = p.read_text(encoding="utf-8").splitlines()
    start = next((i for i, line in enumerate(lines) if re.fullmatch(r"#+\s*Quick Reference\s*", line)), None)
    if start is None:
        return None
    rows: list[dict] = []
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if line.startswith("#"):
            break
        m = re.match(r"\|\s*`([A-Z][A-Z0-9_]*)`\s*\|\s*`([a-z][a-z0-9_]*)`\s*\|", line)
        if m:
            rows.append({"env": m.group(1), "key": m.group(2), "source": f"{ADDITIONAL_CONFIG_DOC}:{i + 1}"})
        elif rows and not line.startswith("|"):
            break
    if not rows:
        raise FactsError(f"`{ADDITIONAL_CONFIG_DOC}`: a Quick Reference heading with no `| `ENV` | `key` |` rows")
    return rows
