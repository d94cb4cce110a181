"""What the vllm-ascend package's code reads and registers, for
`facts_ascend.py`: the environment variables it reads, the KV connectors it
registers, and the KV pool's storage backends with their config variables."""

from __future__ import annotations

import ast

from facts_ascend_package import PKG, FactsError, Package, _str_const


# --------------------------------------------------------------------------------------
# Environment variables
# --------------------------------------------------------------------------------------


def _is_os_environ(node) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ" and isinstance(node.value, ast.Name) and node.value.id == "os"


def _env_reads_in(tree: ast.AST, helpers: dict[str, int] | None = None) -> list[tuple[str, ast.AST]]:
    """(name or param marker, node) of every env read; names are constants or
    `("param", name)` when the read goes through a parameter."""
    out = []
    for node in ast.walk(tree):
        target = None
        if isinstance(node, ast.Call):
            f = node.func
            if (
                isinstance(f, ast.Attribute)
                and f.attr == "getenv"
                and isinstance(f.value, ast.Name)
                and f.value.id == "os"
                and node.args
            ):
                target = node.args[0]
            elif isinstance(f, ast.Attribute) and f.attr in ("get", "pop") and _is_os_environ(f.value) and node.args:
                target = node.args[0]
            elif helpers and isinstance(f, ast.Name) and f.id in helpers:
                i = helpers[f.id]
                if len(node.args) > i:
                    target = node.args[i]
        elif isinstance(node, ast.Subscript) and _is_os_environ(node.value) and isinstance(node.ctx, ast.Load):
            target = node.slice
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            if _is_os_environ(node.comparators[0]):
                target = node.left
        if target is not None:
            out.append((target, node))
    return out


def env_reads(pkg: Package) -> list[dict]:
    found: dict[str, list[str]] = {}
    for m in pkg.modules.values():
        if "environ" not in m.text and "getenv" not in m.text and m.rel != f"{PKG}/envs.py":
            continue
        # helpers `def f(name, ...): os.getenv(name)` read their argument
        helpers: dict[str, int] = {}
        for fn in ast.walk(m.tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
                for target, _ in _env_reads_in(fn):
                    if isinstance(target, ast.Name) and target.id in params:
                        helpers[fn.name] = params.index(target.id) - (1 if params and params[0] in ("self", "cls") else 0)
        for target, _ in _env_reads_in(m.tree, helpers):
            s = _str_const(target)
            if s:
                found.setdefault(s, []).append(m.rel)
        if m.rel == f"{PKG}/envs.py":
            for node in ast.walk(m.tree):
                if isinstance(node, (ast.Assign, ast.AnnAssign)):
                    tgt = node.targets[0] if isinstance(node, ast.Assign) else node.target
                    if isinstance(tgt, ast.Name) and tgt.id == "env_variables" and isinstance(node.value, ast.Dict):
                        for k in node.value.keys:
                            s = _str_const(k)
                            if s:
                                found.setdefault(s, []).append(m.rel)
    return [{"name": n, "source": sorted(found[n])[0]} for n in sorted(found)]


# --------------------------------------------------------------------------------------
# KV connectors
# --------------------------------------------------------------------------------------


def kv_connectors(pkg: Package) -> list[dict]:
    found: dict[str, list[str]] = {}
    for m in pkg.modules.values():
        if "register_connector" not in m.text:
            continue
        for node in ast.walk(m.tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "register_connector"
                and node.args
            ):
                s = _str_const(node.args[0])
                if s:
                    found.setdefault(s, []).append(m.rel)
    if not found:
        raise FactsError(
            f"no `KVConnectorFactory.register_connector(\"NAME\", ...)` call found under `{pkg.src / PKG}`; "
            "expected the release to register its KV connectors"
        )
    return [{"name": n, "source": sorted(found[n])[0]} for n in sorted(found)]


# --------------------------------------------------------------------------------------


POOL_BACKENDS = f"{PKG}/distributed/kv_transfer/kv_pool/ascend_store/backend"


def kv_pool_backends(pkg: Package) -> list[dict]:
    """The stores `AscendStoreConnector` can keep a KV pool in: one
    `<name>_backend.py` each under the pool's `backend/` package, with the
    environment variable it reads its per-node config file from
    (`os.getenv("MMC_LOCAL_CONFIG_PATH")`), when it reads one."""
    out = []
    for rel, m in sorted(pkg.modules.items()):
        if not (rel.startswith(POOL_BACKENDS + "/") and rel.endswith("_backend.py")):
            continue
        name = rel.rsplit("/", 1)[1][: -len("_backend.py")]
        names = (_str_const(t) for t, _ in _env_reads_in(m.tree))
        env = sorted({n for n in names if n and n.endswith("_CONFIG_PATH")})
        out.append({"name": name, "config_env": env[0] if env else None, "source": rel})
    return out
