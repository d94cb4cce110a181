#!/usr/bin/env python3
"""The vllm-ascend fact table of one release, read statically from its sdist.

`ascend_facts(src, version)` returns the `upstream/facts/vllm-ascend/<version>.json`
table of `upstream/README.md` for the unpacked
source distribution `src`. Nothing of the package is imported: Python sources are
read with `ast`, Dockerfiles and YAML as text. Every fact carries the path inside
the sdist it was read from.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from pathlib import Path

import yaml

PKG = "vllm_ascend"


class FactsError(Exception):
    pass


def _rel(src: Path, p: Path) -> str:
    return p.relative_to(src).as_posix()


def _parse(path: Path) -> ast.Module:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as e:
        raise FactsError(f"`{path}` is not valid Python ({e}); expected a parsable source file") from e


def _str_const(node) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


# --------------------------------------------------------------------------------------
# Package modules
# --------------------------------------------------------------------------------------


class Module:
    """One source file; parsed on first use (most files read none of the facts)."""

    def __init__(self, pkg: "Package", rel: str, path: Path):
        self.pkg = pkg
        self.rel = rel
        self.path = path
        self.text = path.read_text(encoding="utf-8")
        self._tree: ast.Module | None = None
        self.defs: dict[str, ast.AST] = {}
        self.imports: dict[str, tuple[str, str]] = {}

    @property
    def tree(self) -> ast.Module:
        if self._tree is None:
            self._tree = tree = _parse(self.path)
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    self.defs[node.name] = node
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    for a in node.names:
                        self.imports[a.asname or a.name] = (node.module, a.name)
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    self.pkg.owner[id(node)] = self
                if isinstance(node, ast.ClassDef):
                    for item in node.body:
                        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            self.pkg.parent_class[id(item)] = node
        return self._tree


class Package:
    """Every module of `vllm_ascend/` in path order."""

    def __init__(self, src: Path):
        self.src = src
        root = src / PKG
        if not root.is_dir():
            raise FactsError(f"`{src}` has no `{PKG}/` directory; expected an unpacked vllm-ascend sdist")
        self.modules: dict[str, Module] = {}
        self.by_name: dict[str, Module] = {}
        self.owner: dict[int, Module] = {}
        self.parent_class: dict[int, ast.ClassDef] = {}
        for p in sorted(root.rglob("*.py")):
            rel = _rel(src, p)
            m = Module(self, rel, p)
            self.modules[rel] = m
            dotted = rel[:-3].replace("/", ".")
            if dotted.endswith(".__init__"):
                dotted = dotted[: -len(".__init__")]
            self.by_name[dotted] = m

    def lookup(self, mod: Module, name: str):
        mod.tree  # noqa: B018 (parses the module, filling defs and imports)
        if name in mod.defs:
            return mod.defs[name]
        if name in mod.imports:
            target_mod, target_name = mod.imports[name]
            tm = self.by_name.get(target_mod)
            if tm is not None and tm.tree is not None and target_name in tm.defs:
                return tm.defs[target_name]
        return None


# --------------------------------------------------------------------------------------
# additional_config: a small abstract interpreter over dict reads
# --------------------------------------------------------------------------------------
#
# A value is a frozenset of items: ("ref", path, exclude) is `additional_config`
# (path ()) or a nested dict read from it; ("str", s) a string constant;
# ("strs", frozenset) a literal set of strings. Reads `.get(k)`, `[k]`, `k in d`,
# `.pop(k)` on a ref record the key path. Calls pass refs and strings into the
# callee (helpers such as `_get_config_value(additional_config, "key", ...)`);
# a class built from a ref describes that dict: its `__init__` reads, its
# `_defaults`, its parameters when built with `**ref`, or its fields when it is a
# `@config` (pydantic, extra="forbid") dataclass.

ROOT = ("ref", (), frozenset())
MAX_DEPTH = 8


def _is_config_class(cls: ast.ClassDef) -> bool:
    for d in cls.decorator_list:
        f = d.func if isinstance(d, ast.Call) else d
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        if name in ("config", "dataclass"):
            return True
    return False


def _config_extra_allows(cls: ast.ClassDef) -> bool:
    for d in cls.decorator_list:
        if isinstance(d, ast.Call):
            for sub in ast.walk(d):
                if isinstance(sub, ast.keyword) and sub.arg == "extra" and _str_const(sub.value) in ("allow", "ignore"):
                    return True
    return False


def _annotation_names(node) -> list[str]:
    if node is None:
        return []
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return _annotation_names(ast.parse(node.value, mode="eval").body)
        except SyntaxError:
            return []
    if isinstance(node, ast.BinOp):
        return _annotation_names(node.left) + _annotation_names(node.right)
    if isinstance(node, ast.Subscript):
        return _annotation_names(node.slice)
    if isinstance(node, ast.Tuple):
        return [n for e in node.elts for n in _annotation_names(e)]
    return []


def _config_fields(cls: ast.ClassDef) -> list[tuple[str, ast.AST]]:
    out = []
    for item in cls.body:
        if not isinstance(item, ast.AnnAssign) or not isinstance(item.target, ast.Name):
            continue
        if "ClassVar" in _annotation_names(item.annotation) or "ClassVar" in ast.unparse(item.annotation):
            continue
        v = item.value
        if isinstance(v, ast.Call) and any(
            k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False for k in v.keywords
        ):
            continue
        out.append((item.target.id, item.annotation))
    return out


class ConfigReads:
    def __init__(self, pkg: Package):
        self.pkg = pkg
        self.keys: dict[tuple, set[str]] = {}
        self.strict: set[tuple] = set()
        self.memo: dict[tuple, frozenset] = {}
        self.active: set[tuple] = set()
        self.attached: set[tuple] = set()

    # ---- records ----
    def record(self, path: tuple, mod: Module):
        self.keys.setdefault(path, set()).add(mod.rel)

    # ---- entry ----
    def run(self):
        for m in self.pkg.modules.values():
            if "additional_config" not in m.text:
                continue
            self.analyze_body(m.tree.body, {}, m, None, [], 0)
            for node in ast.walk(m.tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.call(node, [], {}, None, 0, standalone=True)
        return self

    # ---- classes ----
    def attach_class(self, cls: ast.ClassDef, ref, depth: int, splat: bool = False):
        _, path, exclude = ref
        mod = self.pkg.owner[id(cls)]
        key = (id(cls), path, exclude)
        if key in self.attached or depth > MAX_DEPTH:
            return
        self.attached.add(key)
        if _is_config_class(cls):
            if not _config_extra_allows(cls):
                self.strict.add(path)
            for name, ann in _config_fields(cls):
                if name not in exclude:
                    self.record(path + (name,), mod)
                for tname in _annotation_names(ann):
                    sub = self.pkg.lookup(mod, tname)
                    if isinstance(sub, ast.ClassDef) and sub is not cls and _is_config_class(sub):
                        self.attach_class(sub, ("ref", path + (name,), frozenset()), depth + 1)
            return
        for item in cls.body:
            if isinstance(item, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_defaults" for t in item.targets):
                if isinstance(item.value, ast.Dict):
                    for k in item.value.keys:
                        s = _str_const(k)
                        if s is not None:
                            self.record(path + (s,), mod)

    def construct(self, cls: ast.ClassDef, args, kwargs, splats, env_mod, depth):
        init = next(
            (i for i in cls.body if isinstance(i, (ast.FunctionDef, ast.AsyncFunctionDef)) and i.name == "__init__"),
            None,
        )
        # `Cls(ref, ...)`: a hand-written class reading the dict it is given
        # (its `_defaults`); a `@config` class is only built from `**ref`.
        if not _is_config_class(cls):
            for r in (v for vals in args[:1] for v in vals if v[0] == "ref"):
                self.attach_class(cls, r, depth)
        for vals in splats:
            for r in vals:
                if r[0] == "dict" and _is_config_class(cls):
                    mod = self.pkg.owner[id(cls)]
                    fields = dict(_config_fields(cls))
                    for k, kvals in r[1]:
                        for tname in _annotation_names(fields.get(k)):
                            sub = self.pkg.lookup(mod, tname)
                            if isinstance(sub, ast.ClassDef) and _is_config_class(sub):
                                for kr in kvals:
                                    if kr[0] == "ref":
                                        self.attach_class(sub, kr, depth + 1)
                if r[0] != "ref":
                    continue
                if _is_config_class(cls):
                    self.attach_class(cls, r, depth, splat=True)
                elif init is not None:
                    mod = self.pkg.owner[id(cls)]
                    a = init.args
                    for p in (a.posonlyargs + a.args)[1:] + a.kwonlyargs:
                        if p.arg not in r[2]:
                            self.record(r[1] + (p.arg,), mod)
                    if a.kwarg is None:
                        self.strict.add(r[1])
        if init is not None:
            kw = dict(kwargs)
            if init.args.kwarg is not None:
                for vals in splats:
                    kw.setdefault(init.args.kwarg.arg, frozenset()).__class__
                    kw[init.args.kwarg.arg] = frozenset(kw.get(init.args.kwarg.arg, frozenset()) | vals)
            self.call(init, [frozenset()] + list(args), kw, cls, depth + 1)

    # ---- functions ----
    def call(self, fn, args, kwargs, cls, depth, closure=None, standalone=False):
        if depth > MAX_DEPTH:
            return frozenset()
        mod = self.pkg.owner[id(fn)]
        a = fn.args
        params = a.posonlyargs + a.args
        env: dict[str, frozenset] = dict(closure or {})
        for i, p in enumerate(params):
            if i < len(args):
                env[p.arg] = args[i]
        for k, v in kwargs.items():
            env[k] = frozenset(env.get(k, frozenset()) | v)
        if standalone:
            for p in params + a.kwonlyargs:
                if p.arg == "additional_config":
                    env[p.arg] = frozenset([ROOT])
        sig = (id(fn), tuple(sorted((k, tuple(sorted(map(repr, v)))) for k, v in env.items())))
        if sig in self.memo:
            return self.memo[sig]
        if sig in self.active:
            return frozenset()
        self.active.add(sig)
        if cls is None:
            cls = self.pkg.parent_class.get(id(fn))
        ret: list = []
        self.analyze_body(fn.body, env, mod, cls, ret, depth)
        self.detect_strict(fn, env)
        out = frozenset(v for r in ret for v in r)
        self.active.discard(sig)
        self.memo[sig] = out
        return out

    def detect_strict(self, fn, env):
        has_raise = any(isinstance(n, ast.Raise) for n in ast.walk(fn))
        if not has_raise:
            return
        for node in ast.walk(fn):
            if isinstance(node, ast.For):
                it = node.iter
                if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr in ("items", "keys"):
                    it = it.func.value
                if isinstance(it, ast.Name) and any(isinstance(n, ast.Raise) for n in ast.walk(node)):
                    for v in env.get(it.id, ()):
                        if v[0] == "ref":
                            self.strict.add(v[1])
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
                left = node.left
                if (
                    isinstance(left, ast.Call)
                    and isinstance(left.func, ast.Name)
                    and left.func.id == "set"
                    and left.args
                    and isinstance(left.args[0], ast.Name)
                ):
                    for v in env.get(left.args[0].id, ()):
                        if v[0] == "ref":
                            self.strict.add(v[1])

    def analyze_body(self, body, env, mod, cls, ret, depth):
        local_defs = {}
        for _ in range(2):  # flow-insensitive: a second pass sees every binding
            for stmt in body:
                self.stmt(stmt, env, mod, cls, ret, depth, local_defs)

    def bind(self, target, vals, env):
        if isinstance(target, ast.Name):
            env[target.id] = frozenset(env.get(target.id, frozenset()) | vals)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self.bind(t, frozenset(), env)

    def stmt(self, s, env, mod, cls, ret, depth, local_defs):
        ev = lambda e: self.expr(e, env, mod, cls, depth, local_defs)  # noqa: E731
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            local_defs[s.name] = (s, env)
            return
        if isinstance(s, ast.ClassDef):
            return
        if isinstance(s, ast.Assign):
            vals = ev(s.value)
            for t in s.targets:
                if isinstance(t, (ast.Subscript, ast.Attribute)):
                    self.expr(t.value, env, mod, cls, depth, local_defs)
                self.bind(t, vals, env)
            return
        if isinstance(s, ast.AnnAssign):
            if s.value is not None:
                self.bind(s.target, ev(s.value), env)
            return
        if isinstance(s, ast.AugAssign):
            ev(s.value)
            return
        if isinstance(s, ast.Return):
            if s.value is not None:
                ret.append(ev(s.value))
            return
        if isinstance(s, (ast.For, ast.AsyncFor)):
            vals = ev(s.iter)
            strs = frozenset(("str", x) for v in vals if v[0] == "strs" for x in v[1])
            self.bind(s.target, strs, env)
            for b in s.body + s.orelse:
                self.stmt(b, env, mod, cls, ret, depth, local_defs)
            return
        for field in ("test", "value", "exc", "items", "subject"):
            sub = getattr(s, field, None)
            if isinstance(sub, ast.expr):
                ev(sub)
            elif isinstance(sub, list):
                for it in sub:
                    if isinstance(it, ast.withitem):
                        vals = ev(it.context_expr)
                        if it.optional_vars is not None:
                            self.bind(it.optional_vars, vals, env)
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for b in getattr(s, field, []) or []:
                if isinstance(b, ast.ExceptHandler) or (hasattr(ast, "match_case") and isinstance(b, ast.match_case)):
                    for bb in b.body:
                        self.stmt(bb, env, mod, cls, ret, depth, local_defs)
                else:
                    self.stmt(b, env, mod, cls, ret, depth, local_defs)

    def keys_of(self, vals):
        return [v[1] for v in vals if v[0] == "str"]

    def expr(self, e, env, mod, cls, depth, local_defs) -> frozenset:
        ev = lambda x: self.expr(x, env, mod, cls, depth, local_defs)  # noqa: E731
        if e is None:
            return frozenset()
        if isinstance(e, ast.Constant):
            return frozenset([("str", e.value)]) if isinstance(e.value, str) else frozenset()
        if isinstance(e, ast.Name):
            if e.id in env:
                return env[e.id]
            if e.id == "additional_config":
                return frozenset([ROOT])
            return frozenset()
        if isinstance(e, (ast.Set, ast.List, ast.Tuple)):
            items = [ev(x) for x in e.elts]
            strs = [v[1] for vals in items for v in vals if v[0] == "str"]
            if strs and len(strs) == len(e.elts):
                return frozenset([("strs", frozenset(strs))])
            return frozenset()
        if isinstance(e, ast.Attribute):
            base = ev(e.value)
            if e.attr == "additional_config":
                return frozenset([ROOT])
            return frozenset(v for v in base if v[0] == "ref" and False)
        if isinstance(e, ast.BoolOp):
            return frozenset(v for x in e.values for v in ev(x))
        if isinstance(e, ast.IfExp):
            ev(e.test)
            return ev(e.body) | ev(e.orelse)
        if isinstance(e, ast.NamedExpr):
            vals = ev(e.value)
            self.bind(e.target, vals, env)
            return vals
        if isinstance(e, ast.Dict):
            # a dict literal keeps what each string key holds, for `Cls(**literal)`
            items = []
            for k, v in zip(e.keys, e.values):
                vals = ev(v)
                ks = _str_const(k) if k is not None else None
                if ks is not None:
                    items.append((ks, vals))
            return frozenset([("dict", tuple(sorted(items, key=lambda kv: kv[0])))])
        if isinstance(e, ast.Subscript):
            base = ev(e.value)
            keys = self.keys_of(ev(e.slice))
            out = set()
            for b in base:
                if b[0] == "ref":
                    for k in keys:
                        if k not in b[2]:
                            if isinstance(e.ctx, ast.Load):
                                self.record(b[1] + (k,), mod)
                            out.add(("ref", b[1] + (k,), frozenset()))
            return frozenset(out)
        if isinstance(e, ast.Compare):
            left = ev(e.left)
            for op, comp in zip(e.ops, e.comparators):
                right = ev(comp)
                if isinstance(op, (ast.In, ast.NotIn)):
                    for r in right:
                        if r[0] == "ref":
                            for k in self.keys_of(left):
                                self.record(r[1] + (k,), mod)
                left = right
            return frozenset()
        if isinstance(e, ast.DictComp):
            gens = e.generators
            if len(gens) == 1:
                g = gens[0]
                it = g.iter
                if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "items":
                    base = ev(it.func.value)
                    exclude = set()
                    for cond in g.ifs:
                        if (
                            isinstance(cond, ast.Compare)
                            and len(cond.ops) == 1
                            and isinstance(cond.ops[0], ast.NotIn)
                        ):
                            for v in ev(cond.comparators[0]):
                                if v[0] == "strs":
                                    exclude |= set(v[1])
                    return frozenset(
                        ("ref", b[1], frozenset(b[2] | exclude)) for b in base if b[0] == "ref"
                    )
            for x in ast.iter_child_nodes(e):
                if isinstance(x, ast.expr):
                    ev(x)
            return frozenset()
        if isinstance(e, ast.Call):
            return self.call_expr(e, env, mod, cls, depth, local_defs)
        if isinstance(e, ast.Lambda):
            return frozenset()
        for x in ast.iter_child_nodes(e):
            if isinstance(x, ast.expr):
                ev(x)
            elif isinstance(x, ast.comprehension):
                ev(x.iter)
                for c in x.ifs:
                    ev(c)
        return frozenset()

    def call_expr(self, e: ast.Call, env, mod, cls, depth, local_defs) -> frozenset:
        ev = lambda x: self.expr(x, env, mod, cls, depth, local_defs)  # noqa: E731
        args = []
        splats = []
        for a in e.args:
            if isinstance(a, ast.Starred):
                ev(a.value)
                continue
            args.append(ev(a))
        kwargs = {}
        for k in e.keywords:
            if k.arg is None:
                splats.append(ev(k.value))
            else:
                kwargs[k.arg] = ev(k.value)
        f = e.func
        # getattr(x, "additional_config", ...)
        if isinstance(f, ast.Name) and f.id == "getattr" and len(e.args) >= 2 and _str_const(e.args[1]) == "additional_config":
            return frozenset([ROOT])
        if isinstance(f, ast.Attribute):
            base = ev(f.value)
            refs = [b for b in base if b[0] == "ref"]
            if refs:
                if f.attr in ("get", "pop") and args:
                    out = set()
                    for b in refs:
                        for k in self.keys_of(args[0]):
                            if k in b[2]:
                                continue
                            self.record(b[1] + (k,), mod)
                            out.add(("ref", b[1] + (k,), frozenset()))
                    return frozenset(out)
                if f.attr == "setdefault" and args:
                    return frozenset(("ref", b[1] + (k,), frozenset()) for b in refs for k in self.keys_of(args[0]))
                if f.attr == "copy":
                    return frozenset(refs)
                return frozenset()
        target = None
        target_cls = None
        closure = None
        if isinstance(f, ast.Name):
            if f.id in local_defs:
                target, closure = local_defs[f.id]
            elif f.id == "cls" and cls is not None:
                target = cls
            else:
                target = self.pkg.lookup(mod, f.id)
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            owner = None
            if f.value.id in ("self", "cls") and cls is not None:
                owner = cls
            else:
                o = self.pkg.lookup(mod, f.value.id)
                if isinstance(o, ast.ClassDef):
                    owner = o
            if owner is not None:
                target = next(
                    (
                        i
                        for i in owner.body
                        if isinstance(i, (ast.FunctionDef, ast.AsyncFunctionDef)) and i.name == f.attr
                    ),
                    None,
                )
                target_cls = owner
        if isinstance(target, ast.ClassDef):
            self.construct(target, args, kwargs, splats, mod, depth)
            return frozenset()
        if isinstance(target, (ast.FunctionDef, ast.AsyncFunctionDef)):
            is_method = id(target) in self.pkg.parent_class
            decos = {d.id for d in target.decorator_list if isinstance(d, ast.Name)}
            call_args = list(args)
            if is_method and "staticmethod" not in decos:
                call_args = [frozenset()] + call_args
            owner_cls = target_cls or self.pkg.parent_class.get(id(target))
            if splats and target.args.kwarg is not None:
                kwargs = dict(kwargs)
                kwargs[target.args.kwarg.arg] = frozenset(v for s in splats for v in s)
            return self.call(target, call_args, kwargs, owner_cls, depth + 1, closure=closure)
        return frozenset()


def additional_config(pkg: Package) -> list[dict]:
    r = ConfigReads(pkg).run()
    # a key is listed when the package reads it at the top level; the nested
    # keys of a field it never lets through (e.g. a factory-injected sub-config)
    # are not user input
    top = {path[0]: sorted(sources) for path, sources in r.keys.items() if len(path) == 1}
    out = []
    for key in sorted(top):
        srcs = top[key]
        subs = sorted({p[1] for p in r.keys if len(p) >= 2 and p[0] == key})
        out.append(
            {
                "key": key,
                "source": srcs[0],
                "sub_keys": subs or None,
                "strict": (key,) in r.strict,
            }
        )
    return out


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


# --------------------------------------------------------------------------------------
# Start-up refusals of prefill context parallelism
# --------------------------------------------------------------------------------------


def pcp_refusals(pkg: Package) -> list[dict]:
    """Every `if` of a `_validate_parallel_config` (method or function) whose
    condition tests `prefill_context_parallel_size > ...` and whose body raises: the
    platform's start-up refusals of PCP. `with` names what else the condition
    reads (`data_parallel_size`: refused with DP; `use_v2_model_runner`:
    refused on the V1 model runner), sorted by path and line."""
    out = []
    for rel, mod in pkg.modules.items():
        if "_validate_parallel_config" not in mod.text:
            continue
        for fn in ast.walk(mod.tree):
            if not (isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name == "_validate_parallel_config"):
                continue
            for node in ast.walk(fn):
                if not isinstance(node, ast.If):
                    continue
                cond = ast.unparse(node.test)
                if not any(
                    isinstance(c, ast.Compare)
                    and isinstance(c.left, ast.Attribute)
                    and c.left.attr == "prefill_context_parallel_size"
                    and isinstance(c.ops[0], ast.Gt)
                    for c in ast.walk(node.test)
                ):
                    continue
                if not any(isinstance(x, ast.Raise) for b in node.body for x in ast.walk(b)):
                    continue
                reads = sorted(
                    {
                        a.attr
                        for a in ast.walk(node.test)
                        if isinstance(a, ast.Attribute) and a.attr in ("data_parallel_size", "use_v2_model_runner")
                    }
                )
                out.append({"with": reads, "condition": cond, "source": f"{rel}:{node.lineno}"})
    return sorted(out, key=lambda r: r["source"])


def v2_runner_allows(pkg: Package) -> list[dict]:
    """The features of vLLM's V2-runner refusal list that the package's
    patch takes out again: the string constants removed from the list inside
    `_patched_get_unsupported_features` (vllm_ascend/patch/platform/
    patch_use_v2_model_runner.py), with where. A `vllm_version_is(...)`
    guard in the same `if` is kept as `only_vllm`."""
    out = []
    for rel, mod in pkg.modules.items():
        if "_patched_get_unsupported_features" not in mod.text:
            continue
        for fn in ast.walk(mod.tree):
            if not (isinstance(fn, ast.FunctionDef) and fn.name == "_patched_get_unsupported_features"):
                continue
            for node in ast.walk(fn):
                if not isinstance(node, ast.If):
                    continue
                only = None
                for c in ast.walk(node.test):
                    if (
                        isinstance(c, ast.Call)
                        and isinstance(c.func, ast.Name)
                        and c.func.id == "vllm_version_is"
                        and c.args
                        and isinstance(c.args[0], ast.Constant)
                    ):
                        only = c.args[0].value
                for stmt in node.body:
                    for call in ast.walk(stmt):
                        if (
                            isinstance(call, ast.Call)
                            and isinstance(call.func, ast.Attribute)
                            and call.func.attr == "remove"
                            and call.args
                            and isinstance(call.args[0], ast.Constant)
                            and isinstance(call.args[0].value, str)
                        ):
                            out.append({"name": call.args[0].value, "only_vllm": only, "source": f"{rel}:{call.lineno}"})
    return sorted(out, key=lambda r: (r["name"], r["source"]))


def _refuses_pcp_with_dp(fn: ast.AST) -> bool:
    """Whether `fn` holds vLLM's raising `if pcp > 1 and dp > 1`."""
    for node in ast.walk(fn):
        if not (isinstance(node, ast.If) and any(isinstance(x, ast.Raise) for b in node.body for x in ast.walk(b))):
            continue
        reads = {ast.unparse(c.left) for c in ast.walk(node.test) if isinstance(c, ast.Compare) and isinstance(c.ops[0], ast.Gt)}
        if reads & {"pcp", "self.prefill_context_parallel_size"} and reads & {"self.data_parallel_size", "dp"}:
            return True
    return False


def parallel_config_patches(pkg: Package) -> list[dict]:
    """Where the package replaces vLLM's `ParallelConfig._validate_parallel_config`
    (`if vllm_version_is("V"):` at module level assigning it): under which
    vLLM version, and whether the replacement lets PCP with DP through.
    `lifts_pcp_with_dp`: `always` (the replacement has no `pcp > 1 and dp >
    1` refusal and does not call the original), `when` (it calls the
    original with PCP set aside only under an `if`, whose test is kept as
    `when` with what it reads: `v2_runner` for `VLLM_USE_V2_MODEL_RUNNER`,
    `dcp1` for `decode_context_parallel_size == 1`) or `never`."""
    out = []
    for rel, mod in pkg.modules.items():
        if "_validate_parallel_config" not in mod.text:
            continue
        defs = {n.name: n for n in mod.tree.body if isinstance(n, ast.FunctionDef)}
        for top in mod.tree.body:
            if not isinstance(top, ast.If):
                continue
            only = next(
                (
                    c.args[0].value
                    for c in ast.walk(top.test)
                    if isinstance(c, ast.Call)
                    and isinstance(c.func, ast.Name)
                    and c.func.id == "vllm_version_is"
                    and c.args
                    and isinstance(c.args[0], ast.Constant)
                ),
                None,
            )
            if only is None:
                continue
            inner = {n.name: n for n in top.body if isinstance(n, ast.FunctionDef)}
            for stmt in top.body:
                if not (
                    isinstance(stmt, ast.Assign)
                    and any(ast.unparse(t) == "ParallelConfig._validate_parallel_config" for t in stmt.targets)
                    and isinstance(stmt.value, ast.Name)
                ):
                    continue
                fn = inner.get(stmt.value.id) or defs.get(stmt.value.id)
                if fn is None:
                    raise FactsError(f"{rel}:{stmt.lineno}: `{stmt.value.id}` is not defined in the module")
                calls_original = [
                    c for c in ast.walk(fn) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id.startswith("_original")
                ]
                entry = {"only_vllm": only, "source": f"{rel}:{stmt.lineno}", "when": None, "needs": []}
                if not calls_original:
                    entry["lifts_pcp_with_dp"] = "never" if _refuses_pcp_with_dp(fn) else "always"
                else:
                    guard = next(
                        (n for n in ast.walk(fn) if isinstance(n, ast.If) and any(isinstance(b, ast.With) for b in n.body)),
                        None,
                    )
                    if guard is None:
                        entry["lifts_pcp_with_dp"] = "never"
                    else:
                        test = ast.unparse(guard.test)
                        entry["lifts_pcp_with_dp"] = "when"
                        entry["when"] = test
                        entry["needs"] = sorted(
                            ({"v2_runner"} if "VLLM_USE_V2_MODEL_RUNNER" in test else set())
                            | ({"dcp1"} if "decode_context_parallel_size == 1" in test else set())
                        )
                out.append(entry)
    return sorted(out, key=lambda r: r["source"])


def _size_tests(test: ast.expr) -> list[tuple[str, int]]:
    """`self.X_tensor_parallel_size > N` (also inside `or`): [(X..., N)]."""
    out = []
    for c in ast.walk(test):
        if (
            isinstance(c, ast.Compare)
            and isinstance(c.left, ast.Attribute)
            and c.left.attr.endswith("_tensor_parallel_size")
            and isinstance(c.left.value, ast.Name)
            and c.left.value.id == "self"
            and len(c.ops) == 1
            and isinstance(c.ops[0], ast.Gt)
            and isinstance(c.comparators[0], ast.Constant)
            and isinstance(c.comparators[0].value, int)
        ):
            out.append((c.left.attr, c.comparators[0].value))
    return out


# What a raising `if` inside a size's block requires, by what its test reads.
_FINEGRAINED_NEEDS = {
    "tensor_parallel_size": "tp1",
    "enforce_eager": "graph",
    "cudagraph_mode": "graph",
    "is_kv_consumer": "decode",
    "prefill_context_parallel_size": "no_pcp",
}


def finegrained_tp(pkg: Package) -> dict | None:
    """The preconditions `FinegrainedTPConfig` puts on each fine-grained TP
    size (`additional_config.finegrained_tp_config.*_tensor_parallel_size`):
    for each size an `if self.SIZE > N:` block guards, the bound `above` and
    what its raising `if`s require (`tp1`: `tensor_parallel_size == 1`;
    `graph`: not eager; `decode`: a kv_consumer engine; `no_pcp`: PCP 1);
    `divide_dp`: the sizes that must divide `data_parallel_size` (the list
    its DP loop walks); `disabled_below_capture`: the sizes it turns off with
    a warning when graph capture does not cover the largest step. None when
    the release has no such class."""
    for rel, mod in pkg.modules.items():
        if not rel.endswith("ascend_config.py"):
            continue
        for cls in ast.walk(mod.tree):
            if not (isinstance(cls, ast.ClassDef) and cls.name == "FinegrainedTPConfig"):
                continue
            sizes: dict[str, dict] = {}
            divide: list[str] = []
            disabled: set[str] = set()
            for node in ast.walk(cls):
                if isinstance(node, ast.If):
                    guarded = _size_tests(node.test)
                    if not guarded:
                        continue
                    needs = set()
                    for inner in node.body:
                        for x in ast.walk(inner):
                            if isinstance(x, ast.If) and any(isinstance(r, ast.Raise) for b in x.body for r in ast.walk(b)):
                                for a in ast.walk(x.test):
                                    if isinstance(a, ast.Attribute) and a.attr in _FINEGRAINED_NEEDS:
                                        needs.add(_FINEGRAINED_NEEDS[a.attr])
                    if not needs:
                        continue
                    for name, above in guarded:
                        e = sizes.setdefault(name, {"above": above, "needs": set(), "source": f"{rel}:{node.lineno}"})
                        e["needs"] |= needs
                elif isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "module_tp_sizes" for t in node.targets
                ):
                    if isinstance(node.value, ast.List):
                        divide = [e.attr for e in node.value.elts if isinstance(e, ast.Attribute)]
                elif (
                    isinstance(node, ast.Assign)
                    and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Attribute)
                    and node.targets[0].attr.endswith("_tensor_parallel_size")
                    and isinstance(node.value, ast.Constant)
                    and node.value.value == 0
                ):
                    disabled.add(node.targets[0].attr)
            return {
                "sizes": {k: {**v, "needs": sorted(v["needs"])} for k, v in sorted(sizes.items())},
                "divide_dp": divide,
                "disabled_below_capture": sorted(disabled),
                "source": rel,
            }
    return None


_CP_SIZES = ("prefill_context_parallel_size", "decode_context_parallel_size")


def finegrained_tp_connector(pkg: Package) -> dict | None:
    """The kv connector the platform requires when a fine-grained TP size is
    split: a raising `if` of vllm_ascend/platform.py that tests a name
    assigned from `...has_connector("X")` together with
    `<cfg>.<size> > 1` comparisons. The connector, the sizes (their
    `finegrained_tp_config` keys) and the `if`'s line; None before the
    check."""
    for rel, mod in pkg.modules.items():
        if not rel.endswith("platform.py"):
            continue
        for fn in ast.walk(mod.tree):
            if not isinstance(fn, ast.FunctionDef):
                continue
            missing: dict[str, str] = {}
            for node in ast.walk(fn):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    for c in ast.walk(node.value):
                        if (
                            isinstance(c, ast.Call)
                            and isinstance(c.func, ast.Attribute)
                            and c.func.attr == "has_connector"
                            and c.args
                            and isinstance(c.args[0], ast.Constant)
                        ):
                            missing[node.targets[0].id] = c.args[0].value
            if not missing:
                continue
            for node in ast.walk(fn):
                if not (isinstance(node, ast.If) and any(isinstance(r, ast.Raise) for b in node.body for r in ast.walk(b))):
                    continue
                names = {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)}
                conn = next((missing[n] for n in sorted(names) if n in missing), None)
                if conn is None:
                    continue
                sizes = [
                    c.left.attr
                    for c in ast.walk(node.test)
                    if isinstance(c, ast.Compare)
                    and isinstance(c.left, ast.Attribute)
                    and c.left.attr.endswith("_tensor_parallel_size")
                    and isinstance(c.ops[0], ast.Gt)
                    and isinstance(c.comparators[0], ast.Constant)
                    and c.comparators[0].value == 1
                ]
                if sizes:
                    return {"connector": conn, "sizes": sorted(sizes), "source": f"{rel}:{node.lineno}"}
    return None


def cp_interleave_refusal(pkg: Package) -> dict | None:
    """The platform's refusal of a PD engine (`kv_transfer_config` set) with
    context parallelism whose `cp_kv_cache_interleave_size` differs from its
    block size: the raising `if` comparing the two, and which CP sizes turn
    it on (`reads`: `prefill_context_parallel_size`,
    `decode_context_parallel_size`, from the test or from the assignments of
    the names it tests, e.g. `cp_size = dcp * pcp`). None when the release
    has none."""
    for rel, mod in pkg.modules.items():
        if not rel.endswith("platform.py") or "cp_kv_cache_interleave_size" not in mod.text:
            continue
        for fn in ast.walk(mod.tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            assigned: dict[str, set[str]] = {}
            for st in ast.walk(fn):
                if isinstance(st, ast.Assign):
                    names = {a.attr for a in ast.walk(st.value) if isinstance(a, ast.Attribute) and a.attr in _CP_SIZES}
                    for t in st.targets:
                        if isinstance(t, ast.Name) and names:
                            assigned.setdefault(t.id, set()).update(names)
            for node in ast.walk(fn):
                if not isinstance(node, ast.If):
                    continue
                attrs = {a.attr for a in ast.walk(node.test) if isinstance(a, ast.Attribute)}
                if not {"cp_kv_cache_interleave_size", "block_size", "kv_transfer_config"} <= attrs:
                    continue
                if not any(isinstance(x, ast.Raise) for b in node.body for x in ast.walk(b)):
                    continue
                reads = attrs & set(_CP_SIZES)
                for n in ast.walk(node.test):
                    if isinstance(n, ast.Name):
                        reads |= assigned.get(n.id, set())
                return {"reads": sorted(reads), "source": f"{rel}:{node.lineno}"}
    return None


def kvpp(pkg: Package) -> dict | None:
    """What `KVPPConfig.validate` refuses when `additional_config.enable_kvpp`
    turns KV layer parallelism on (size TP x PCP above 1,
    `KVPPConfig.from_vllm_config`): the PD connector it needs (the string the
    raising `kv_connector !=` compares with, besides `AscendStoreConnector`),
    whether a `kv_consumer` is refused, the graph modes it runs under (eager,
    plus `piecewise` where it compares `cudagraph_mode` with
    `CUDAGraphMode.PIECEWISE`), whether it needs MLA (`use_mla`), whether DCP
    is refused, and the speculative methods it allows. None before it."""
    for rel, mod in pkg.modules.items():
        if "class KVPPConfig" not in mod.text:
            continue
        cls = next((n for n in mod.tree.body if isinstance(n, ast.ClassDef) and n.name == "KVPPConfig"), None)
        fn = cls and next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "validate"), None)
        if fn is None:
            raise FactsError(f"`{rel}`: `KVPPConfig` has no `validate`")
        out: dict = {"connector": None, "decode_refused": False, "graphs": ["eager"], "mla_only": False,
                     "dcp_refused": False, "methods": None, "source": f"{rel}:{fn.lineno}"}
        for node in ast.walk(fn):
            if not isinstance(node, ast.If):
                continue
            test = ast.unparse(node.test)
            raises = any(isinstance(x, ast.Raise) for b in node.body for x in ast.walk(b))
            if "kv_connector !=" in test and raises:
                names = [x for x in _strs(node.test) if x != "AscendStoreConnector"]
                if names:
                    out["connector"] = names[0]
            if "kv_role ==" in test and "kv_consumer" in _strs(node.test) and raises:
                out["decode_refused"] = True
            if "CUDAGraphMode.PIECEWISE" in test and raises:
                out["graphs"].append("piecewise")
            if "use_mla" in test and raises:
                out["mla_only"] = True
            if "decode_context_parallel_size" in test and raises:
                out["dcp_refused"] = True
            allowed = [
                c
                for c in ast.walk(node.test)
                if isinstance(c, ast.Compare)
                and ast.unparse(c.left).endswith(".method")
                and isinstance(c.ops[0], (ast.NotIn, ast.NotEq))
            ]
            if allowed and raises:
                out["methods"] = sorted({x for c in allowed for x in _strs(c)})
        if out["connector"] is None or out["methods"] is None:
            raise FactsError(f"`{rel}`: `KVPPConfig.validate` no longer reads as expected: {out}")
        return out
    return None


def _strs(node: ast.AST) -> list[str]:
    return [c.value for c in ast.walk(node) if isinstance(c, ast.Constant) and isinstance(c.value, str)]


def eplb_runner(pkg: Package) -> dict | None:
    """What `_validate_eplb_config` (vllm_ascend/platform.py) allows per model
    runner: on the V2 runner the `eplb_config` fields it accepts
    (`v2_fields`, the set subtracted from the config's keys) and the env
    switches it refuses (`v2_refused_env`, read with `os.getenv` in a raising
    `if`); on the V1 runner the fields it refuses (`v1_refused_fields`, the
    `elif` tests `"x" in eplb_config` or `{...} & eplb_config.keys()`). None
    before the function tells the runners apart."""
    for rel, mod in pkg.modules.items():
        if not rel.endswith("platform.py"):
            continue
        for fn in ast.walk(mod.tree):
            if not (isinstance(fn, ast.FunctionDef) and fn.name == "_validate_eplb_config"):
                continue
            for node in ast.walk(fn):
                if not (isinstance(node, ast.If) and "use_v2_model_runner" in ast.unparse(node.test)):
                    continue
                v2_fields: list[str] = []
                env: list[str] = []
                body = ast.Module(body=node.body, type_ignores=[])
                sets = {
                    t.id: x.value
                    for x in ast.walk(body)
                    if isinstance(x, ast.Assign) and isinstance(x.value, ast.Set)
                    for t in x.targets
                    if isinstance(t, ast.Name)
                }
                for x in ast.walk(body):
                    if isinstance(x, ast.BinOp) and isinstance(x.op, ast.Sub):
                        right = sets.get(x.right.id) if isinstance(x.right, ast.Name) else x.right
                        if isinstance(right, ast.Set):
                            v2_fields = sorted(_strs(right))
                    if isinstance(x, ast.If) and any(isinstance(r, ast.Raise) for b in x.body for r in ast.walk(b)):
                        for c in ast.walk(x.test):
                            if (
                                isinstance(c, ast.Call)
                                and ast.unparse(c.func).endswith("getenv")
                                and c.args
                                and isinstance(c.args[0], ast.Constant)
                            ):
                                env.append(c.args[0].value)
                needs_flag = _v2_fields_needing_flag(body, rel)
                v1: list[str] = []
                rest = node.orelse
                while len(rest) == 1 and isinstance(rest[0], ast.If):
                    e = rest[0]
                    if "eplb_config" in ast.unparse(e.test) and any(
                        isinstance(r, ast.Raise) for b in e.body for r in ast.walk(b)
                    ):
                        v1 += _strs(e.test)
                    rest = e.orelse
                return {
                    "v2_fields": v2_fields,
                    "v2_refused_env": sorted(set(env)),
                    "v1_refused_fields": sorted(set(v1)),
                    "v2_fields_need_flag": needs_flag,
                    "source": f"{rel}:{node.lineno}",
                }
    return None


def _v2_fields_needing_flag(body: ast.Module, rel: str) -> list[dict]:
    """The V2 runner's `eplb_config` fields that need a vLLM flag when set
    off their default: a name assigned `eplb_config.get("F", D)` and a raising
    `if` testing `name != D and not vllm_config.parallel_config.ATTR`; the
    flag is vLLM's option for that `ParallelConfig` field (`--` + ATTR with
    dashes, as `EngineArgs.add_cli_args` names it)."""
    gets: dict[str, tuple[str, object]] = {}
    for x in ast.walk(body):
        if (
            isinstance(x, ast.Assign)
            and len(x.targets) == 1
            and isinstance(x.targets[0], ast.Name)
            and isinstance(x.value, ast.Call)
            and isinstance(x.value.func, ast.Attribute)
            and x.value.func.attr == "get"
            and ast.unparse(x.value.func.value) == "eplb_config"
            and len(x.value.args) == 2
            and all(isinstance(a, ast.Constant) for a in x.value.args)
        ):
            gets[x.targets[0].id] = (x.value.args[0].value, x.value.args[1].value)
    out: list[dict] = []
    for x in ast.walk(body):
        if not (
            isinstance(x, ast.If)
            and any(isinstance(r, ast.Raise) for b in x.body for r in ast.walk(b))
            and isinstance(x.test, ast.BoolOp)
            and isinstance(x.test.op, ast.And)
        ):
            continue
        field = None
        attr = None
        for v in x.test.values:
            if (
                isinstance(v, ast.Compare)
                and isinstance(v.left, ast.Name)
                and v.left.id in gets
                and len(v.ops) == 1
                and isinstance(v.ops[0], ast.NotEq)
                and isinstance(v.comparators[0], ast.Constant)
                and v.comparators[0].value == gets[v.left.id][1]
            ):
                field = gets[v.left.id]
            if (
                isinstance(v, ast.UnaryOp)
                and isinstance(v.op, ast.Not)
                and isinstance(v.operand, ast.Attribute)
                and ast.unparse(v.operand.value).endswith("parallel_config")
            ):
                attr = v.operand.attr
        if field and attr:
            out.append(
                {
                    "field": field[0],
                    "default": field[1],
                    "flag": "--" + attr.replace("_", "-"),
                    "source": f"{rel}:{x.lineno}",
                }
            )
    return out


def _device_capabilities(pkg: Package) -> dict[str, str]:
    """Each `AscendDeviceType.X: HardwareProfile(...)` entry of
    vllm_ascend/device/hardware_profile.py: X -> the unparsed `capabilities=`
    expression, module-level names in it expanded one level (`_A3_CAPABILITIES
    | {...}`). Empty before hardware profiles exist."""
    out: dict[str, str] = {}
    for rel, mod in pkg.modules.items():
        if not rel.endswith("device/hardware_profile.py"):
            continue
        names = {
            t.id: ast.unparse(n.value)
            for n in mod.tree.body
            if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
            if isinstance(t, ast.Name)
        }
        for d in ast.walk(mod.tree):
            if not isinstance(d, ast.Dict):
                continue
            for k, v in zip(d.keys, d.values):
                if not (k is not None and ast.unparse(k).startswith("AscendDeviceType.") and isinstance(v, ast.Call)):
                    continue
                caps = next((kw.value for kw in v.keywords if kw.arg == "capabilities"), None)
                if caps is None:
                    continue
                text = ast.unparse(caps)
                for n in ast.walk(caps):
                    if isinstance(n, ast.Name) and n.id in names:
                        text += " " + names[n.id]
                out[ast.unparse(k).split(".", 1)[1].lstrip("_")] = text
    return out


def v2_runner_required(pkg: Package) -> list[dict]:
    """The models the platform refuses on the V1 model runner: each raising
    `if` of `_validate_model_runner_config` (vllm_ascend/platform.py) that
    tests `model_config.architecture in (...)`, a hardware capability
    (`supports(HardwareCapability.X)`) and `not ....use_v2_model_runner`:
    the architectures, the capability and the device types whose profile
    has it (`A2`, `A3`, `A5`, ...). Empty before the check exists."""
    caps = None
    out = []
    for rel, mod in pkg.modules.items():
        if not rel.endswith("platform.py"):
            continue
        for fn in ast.walk(mod.tree):
            if not (isinstance(fn, ast.FunctionDef) and fn.name == "_validate_model_runner_config"):
                continue
            for node in ast.walk(fn):
                if not (isinstance(node, ast.If) and any(isinstance(r, ast.Raise) for b in node.body for r in ast.walk(b))):
                    continue
                test = ast.unparse(node.test)
                if "use_v2_model_runner" not in test:
                    continue
                archs: list[str] = []
                cap = None
                for c in ast.walk(node.test):
                    if (
                        isinstance(c, ast.Compare)
                        and ast.unparse(c.left).endswith("architecture")
                        and isinstance(c.ops[0], ast.In)
                    ):
                        archs += _strs(c.comparators[0])
                    if isinstance(c, ast.Attribute) and ast.unparse(c).startswith("HardwareCapability."):
                        cap = c.attr
                if not archs or cap is None:
                    continue
                if caps is None:
                    caps = _device_capabilities(pkg)
                devices = sorted(d for d, text in caps.items() if f"HardwareCapability.{cap}" in text)
                out.append(
                    {"architectures": sorted(archs), "capability": cap, "devices": devices, "source": f"{rel}:{node.lineno}"}
                )
    return out


def engram_tp(pkg: Package) -> dict | None:
    """The tensor-parallel sizes `_validate_engram_config`
    (vllm_ascend/platform.py) allows a model with Engram tables, and that
    model's architecture (the `architecture != "..."` test). None before
    Ascend Engram."""
    for rel, mod in pkg.modules.items():
        if not rel.endswith("platform.py"):
            continue
        for fn in ast.walk(mod.tree):
            if not (isinstance(fn, ast.FunctionDef) and fn.name == "_validate_engram_config"):
                continue
            arch = None
            for c in ast.walk(fn):
                if (
                    isinstance(c, ast.Compare)
                    and ast.unparse(c.left).endswith("architecture")
                    and isinstance(c.ops[0], ast.NotEq)
                    and isinstance(c.comparators[0], ast.Constant)
                ):
                    arch = c.comparators[0].value
            for node in ast.walk(fn):
                if not (isinstance(node, ast.If) and any(isinstance(r, ast.Raise) for b in node.body for r in ast.walk(b))):
                    continue
                for c in ast.walk(node.test):
                    if (
                        isinstance(c, ast.Compare)
                        and ast.unparse(c.left).endswith("tensor_parallel_size")
                        and isinstance(c.ops[0], ast.NotIn)
                        and isinstance(c.comparators[0], (ast.Tuple, ast.List, ast.Set))
                    ):
                        sizes = [e.value for e in c.comparators[0].elts if isinstance(e, ast.Constant)]
                        if arch:
                            return {"architecture": arch, "tp_sizes": sizes, "source": f"{rel}:{node.lineno}"}
    return None


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


def ascend_facts(src: Path, version: str) -> dict:
    src = Path(src)
    pkg = Package(src)
    scripts = {}
    for name, rel in SCRIPTS.items():
        scripts[name] = script_flags(src, rel)
    return {
        "package": "vllm-ascend",
        "version": version,
        "vllm": vllm_version(src),
        "version_module": version_module(src),
        "additional_config": additional_config(pkg),
        "env": env_reads(pkg),
        "kv_connectors": kv_connectors(pkg),
        "scripts": scripts,
        "images": images(src),
        "image_suffixes": image_suffixes(src),
        "e2e": e2e(src),
        "pcp_refusals": pcp_refusals(pkg),
        "parallel_config_patches": parallel_config_patches(pkg),
        "v2_runner_allows": v2_runner_allows(pkg),
        "finegrained_tp": finegrained_tp(pkg),
        "finegrained_tp_connector": finegrained_tp_connector(pkg),
        "cp_interleave_refusal": cp_interleave_refusal(pkg),
        "eplb_runner": eplb_runner(pkg),
        "kvpp": kvpp(pkg),
        "v2_runner_required": v2_runner_required(pkg),
        "engram_tp": engram_tp(pkg),
        "kv_pool_backends": kv_pool_backends(pkg),
        "kv_pool_runner": kv_pool_runner(src),
    }


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(ascend_facts(Path(sys.argv[1]), sys.argv[2]), indent=2))
