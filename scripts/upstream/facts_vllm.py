#!/usr/bin/env python3
"""The `vllm serve` flags of one vLLM release, read statically from its sdist.

    facts_vllm.py VERSION        print the facts of vllm==VERSION (from the corpus)
    facts_vllm.py --write        write `upstream/facts/vllm/<version>.json` for every vllm pinned
                                 in `upstream/corpus.lock.json`

`vllm_facts(src, version)` returns the object of the agreed schema
(`upstream/facts/vllm/<version>.json`: package, version, serve_flags). Nothing
of vLLM is imported (it needs torch): the parser `vllm serve` builds is
reconstructed by a small abstract interpreter over vLLM's own source, starting
where vLLM starts:

- `vllm/entrypoints/cli/serve.py`: `ServeSubcommand.subparser_init` (the
  subcommand named "serve") creates the parser and calls `make_arg_parser`
  (`vllm/entrypoints/openai/cli_args.py`, from 0.29 `vllm/entrypoints/launchers/
  cli_args.py`), which adds `--headless`, `--api-server-count`, `--config`...,
  then `FrontendArgs.add_cli_args` (every dataclass field becomes a flag) and
  `AsyncEngineArgs.add_cli_args` (`vllm/engine/arg_utils.py`, which calls
  `EngineArgs.add_cli_args`).
- `group.add_argument("--flag", **xxx_kwargs["field"])`: the kwargs come from
  `get_kwargs(ConfigClass)`. Their `action`/`nargs`/`type` are computed by
  running the release's own `_compute_kwargs` rule chain (the if/elif chain on
  the field's type hints in `vllm/engine/arg_utils.py`) on the field's
  annotation, itself evaluated statically (type aliases, imports,
  `if TYPE_CHECKING: ... else: ...` resolved as at run time).
- The kind of a flag follows argparse: store_true/store_false/
  BooleanOptionalAction are switches (the latter negatable), nargs `+`/`*` is
  `many`, one value whose `type` parses JSON (json.loads, a config dataclass,
  `union_dict_and_str`) is `json`, anything else one value.

Whatever the interpreter cannot follow (an unknown statement in a function that
builds the parser, an option string or kind-deciding kwarg it cannot evaluate,
an annotation it cannot resolve, a helper of `_compute_kwargs` whose code
changed) raises `FactsError` naming the file and line. Nothing is guessed.
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


class FactsError(Exception):
    pass


# ---------------------------------------------------------------------------
# Source loading and name resolution


class Module:
    def __init__(self, name: str, path: Path, rel: str, tree: ast.Module, is_pkg: bool):
        self.name = name
        self.path = path
        self.rel = rel  # path inside the sdist, e.g. vllm/engine/arg_utils.py
        self.tree = tree
        self.is_pkg = is_pkg
        # name -> list of binding nodes (ordered: primary first)
        self.bindings: dict[str, list[tuple[str, Any]]] = {}
        self._collect(tree.body, primary=True)

    def where(self, node: ast.AST | None) -> str:
        line = getattr(node, "lineno", None)
        return f"`{self.rel}:{line}`" if line else f"`{self.rel}`"

    def _bind(self, name: str, kind: str, payload: Any, primary: bool) -> None:
        lst = self.bindings.setdefault(name, [])
        if primary:
            # a later top-level binding replaces an earlier one (run-time order)
            lst[:] = [b for b in lst if b[2] is False]
            lst.insert(0, (kind, payload, True))
        else:
            lst.append((kind, payload, False))

    def _collect(self, body: list[ast.stmt], primary: bool) -> None:
        for st in body:
            if isinstance(st, ast.Import):
                for a in st.names:
                    if a.asname:
                        self._bind(a.asname, "module", a.name, primary)
                    else:
                        top = a.name.split(".")[0]
                        self._bind(top, "module", top, primary)
            elif isinstance(st, ast.ImportFrom):
                base = self._resolve_from(st)
                for a in st.names:
                    if a.name == "*":
                        self._bind("*", "star", base, primary)
                        continue
                    self._bind(a.asname or a.name, "from", (base, a.name), primary)
            elif isinstance(st, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                self._bind(st.name, "def", st, primary)
            elif isinstance(st, ast.Assign):
                for t in st.targets:
                    if isinstance(t, ast.Name):
                        self._bind(t.id, "assign", st, primary)
            elif isinstance(st, ast.AnnAssign):
                if isinstance(st.target, ast.Name) and st.value is not None:
                    self._bind(st.target.id, "assign", st, primary)
            elif isinstance(st, ast.If):
                if _is_type_checking(st.test):
                    # at run time TYPE_CHECKING is False: the else branch binds
                    self._collect(st.orelse, primary)
                else:
                    self._collect(st.body, False)
                    self._collect(st.orelse, False)
            elif isinstance(st, ast.Try):
                self._collect(st.body, primary)
                for h in st.handlers:
                    self._collect(h.body, False)
                self._collect(st.orelse, primary)
                self._collect(st.finalbody, primary)

    def _resolve_from(self, st: ast.ImportFrom) -> str:
        if not st.level:
            return st.module or ""
        parts = self.name.split(".")
        pkg = parts if self.is_pkg else parts[:-1]
        if st.level > 1:
            pkg = pkg[: len(pkg) - (st.level - 1)]
        return ".".join(pkg + ([st.module] if st.module else []))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class Source:
    """The unpacked sdist: modules by dotted name, parsed on demand."""

    def __init__(self, root: Path, overrides: dict[str, str] | None = None):
        self.root = root
        # path inside the sdist -> replacement text (the self-check's mutations)
        self.overrides = overrides or {}
        self._mods: dict[str, Module | None] = {}

    def module(self, name: str) -> Module | None:
        if name in self._mods:
            return self._mods[name]
        mod = None
        if name == "vllm" or name.startswith("vllm."):
            rel = name.replace(".", "/")
            for cand, is_pkg in ((rel + ".py", False), (rel + "/__init__.py", True)):
                p = self.root / cand
                if cand in self.overrides or p.is_file():
                    text = self.overrides.get(cand)
                    if text is None:
                        text = p.read_text(encoding="utf-8")
                    try:
                        tree = ast.parse(text, filename=cand)
                    except SyntaxError as e:
                        raise FactsError(
                            f"cannot parse `{cand}:{e.lineno}` with Python "
                            f"{sys.version_info.major}.{sys.version_info.minor}: {e.msg}"
                        ) from e
                    mod = Module(name, p, cand, tree, is_pkg)
                    break
        self._mods[name] = mod
        return mod

    def require(self, name: str, why: str) -> Module:
        m = self.module(name)
        if m is None:
            raise FactsError(f"module `{name}` not found in `{self.root}` ({why})")
        return m


# Resolved objects -----------------------------------------------------------


@dataclass(eq=False)
class ClassObj:
    mod: Module
    node: ast.ClassDef

    @property
    def qualname(self) -> str:
        return f"{self.mod.name}.{self.node.name}"


@dataclass(eq=False)
class FuncObj:
    mod: Module
    node: ast.FunctionDef
    owner: ClassObj | None = None


@dataclass(frozen=True)
class ModRef:
    name: str  # dotted module name (vllm or external)


@dataclass(frozen=True)
class External:
    name: str  # dotted name of something outside vLLM, e.g. typing.Literal, json.loads


@dataclass(eq=False)
class Alias:
    mod: Module
    node: ast.Assign | ast.AnnAssign

    @property
    def value(self) -> ast.expr:
        return self.node.value  # type: ignore[return-value]


BUILTIN_NAMES = {
    "bool", "int", "float", "str", "bytes", "dict", "list", "tuple", "set",
    "frozenset", "object", "type", "complex", "range", "len", "sorted", "any",
    "all", "next", "isinstance", "getattr", "hasattr", "super", "print",
    "callable", "iter", "map", "filter", "zip", "enumerate", "min", "max",
    "repr", "id", "Ellipsis", "NotImplemented", "ValueError", "TypeError",
    "KeyError", "RuntimeError", "NotImplementedError", "Exception",
}


class Resolver:
    def __init__(self, src: Source):
        self.src = src
        self._depth = 0

    def lookup(self, mod: Module, name: str, node: ast.AST | None = None) -> Any:
        b = mod.bindings.get(name)
        if not b:
            star = mod.bindings.get("*")
            if star:
                for _, base, _ in star:
                    m = self.src.module(base)
                    if m is not None and name in m.bindings:
                        return self.lookup(m, name, node)
            if name in BUILTIN_NAMES:
                return External(f"builtins.{name}")
            raise FactsError(f"name `{name}` used at {mod.where(node)} is not defined in `{mod.rel}`")
        if len(b) > 1 and not b[0][2]:
            raise FactsError(
                f"name `{name}` used at {mod.where(node)} has {len(b)} conditional "
                f"definitions in `{mod.rel}`; which one runs cannot be read statically"
            )
        kind, payload, _ = b[0]
        return self._materialise(mod, kind, payload, node)

    def _materialise(self, mod: Module, kind: str, payload: Any, node: ast.AST | None) -> Any:
        if kind == "module":
            return self.module_ref(payload)
        if kind == "from":
            base, attr = payload
            return self.import_from(base, attr, mod, node)
        if kind == "def":
            if isinstance(payload, ast.ClassDef):
                return ClassObj(mod, payload)
            return FuncObj(mod, payload)
        if kind == "assign":
            return Alias(mod, payload)
        raise AssertionError(kind)

    def module_ref(self, name: str) -> Any:
        if self.src.module(name) is not None:
            return ModRef(name)
        if name == "vllm" or name.startswith("vllm."):
            raise FactsError(f"module `{name}` is not in the sdist")
        return External(name)

    def import_from(self, base: str, attr: str, mod: Module, node: ast.AST | None) -> Any:
        m = self.src.module(base)
        if m is None:
            if base == "vllm" or base.startswith("vllm."):
                raise FactsError(f"`from {base} import {attr}` at {mod.where(node)}: `{base}` is not in the sdist")
            return External(f"{base}.{attr}")
        if attr in m.bindings or "*" in m.bindings and self._star_has(m, attr):
            self._depth += 1
            if self._depth > 60:
                raise FactsError(f"import cycle resolving `{base}.{attr}` from {mod.where(node)}")
            try:
                return self.lookup(m, attr, node)
            finally:
                self._depth -= 1
        sub = self.src.module(f"{base}.{attr}")
        if sub is not None:
            return ModRef(sub.name)
        if "__getattr__" in m.bindings:
            # a module-level `__getattr__` decides it at run time
            # (e.g. `vllm.platforms.current_platform`)
            return Unknown(f"`{base}.{attr}`, resolved at run time by `{m.rel}`'s `__getattr__`")
        raise FactsError(f"`from {base} import {attr}` at {mod.where(node)}: `{m.rel}` defines no `{attr}`")

    def _star_has(self, m: Module, attr: str) -> bool:
        for _, base, _ in m.bindings.get("*", []):
            sm = self.src.module(base)
            if sm is not None and attr in sm.bindings:
                return True
        return False

    def attr(self, obj: Any, attr: str, mod: Module, node: ast.AST | None) -> Any:
        if isinstance(obj, ModRef):
            m = self.src.module(obj.name)
            assert m is not None
            if attr in m.bindings:
                return self.lookup(m, attr, node)
            sub = self.src.module(f"{obj.name}.{attr}")
            if sub is not None:
                return ModRef(sub.name)
            raise FactsError(f"`{obj.name}.{attr}` at {mod.where(node)}: `{m.rel}` defines no `{attr}`")
        if isinstance(obj, External):
            return External(f"{obj.name}.{attr}")
        raise FactsError(f"cannot read attribute `{attr}` of {describe(obj)} at {mod.where(node)}")

    def resolve_expr(self, mod: Module, e: ast.expr) -> Any:
        """A Name or dotted Attribute, as an object (no evaluation of values)."""
        if isinstance(e, ast.Name):
            return self.lookup(mod, e.id, e)
        if isinstance(e, ast.Attribute):
            return self.attr(self.resolve_expr(mod, e.value), e.attr, mod, e)
        raise FactsError(f"cannot resolve `{ast.unparse(e)}` at {mod.where(e)}")

    def deref(self, obj: Any, depth: int = 0) -> Any:
        """Follow plain aliases (`X = Y`, `X = mod.Y`)."""
        while isinstance(obj, Alias) and isinstance(obj.value, (ast.Name, ast.Attribute)) and depth < 30:
            obj = self.resolve_expr(obj.mod, obj.value)
            depth += 1
        return obj


def describe(v: Any) -> str:
    if isinstance(v, ClassObj):
        return f"class `{v.qualname}`"
    if isinstance(v, FuncObj):
        return f"function `{v.mod.name}.{v.node.name}`"
    if isinstance(v, (ModRef, External)):
        return f"`{v.name}`"
    if isinstance(v, Unknown):
        return f"an unreadable value ({v.why})"
    return f"`{type(v).__name__}`"


# ---------------------------------------------------------------------------
# Type hints, as vLLM's `get_type_hints` (vllm/engine/arg_utils.py) sees them


@dataclass(frozen=True)
class TH:
    """One type hint: `origin` is what `get_origin(h) or h` is (bare builtin
    names for builtins, `Literal`, or a dotted name); `module` is `h.__module__`."""

    origin: str
    module: str
    args: tuple = ()
    dataclass: bool = False
    literal: tuple = ()
    cls: Any = field(default=None, compare=False, hash=False)

    def __str__(self) -> str:
        if self.literal:
            return f"Literal{list(self.literal)}"
        return self.origin + (f"[{', '.join(map(str, self.args))}]" if self.args else "")


@dataclass(frozen=True)
class Union_:
    members: tuple


@dataclass(frozen=True)
class Annotated_:
    inner: Any


NONE_TH = TH("NoneType", "builtins")
ELLIPSIS_TH = TH("Ellipsis", "builtins")

# typing / collections.abc names: what get_origin() reports and h.__module__
TYPING_ORIGIN = {
    "Dict": "dict", "List": "list", "Tuple": "tuple", "Set": "set", "FrozenSet": "frozenset",
    "Type": "type",
}
ABC_NAMES = {
    "Callable", "Sequence", "Mapping", "MutableMapping", "Iterable", "Iterator",
    "Collection", "Hashable", "Awaitable", "Coroutine", "AsyncIterator", "Generator",
    "MutableSequence", "AbstractSet",
}
# Classes outside vLLM that config field annotations name (0.18.0-0.30.0).
# `_compute_kwargs` asks `is_dataclass()` of them: `torch.dtype` is a C type
# and `pathlib.Path` a plain class, neither a dataclass. Any other outside
# class stops the reading until it is checked and added here.
EXTERNAL_NOT_DATACLASS = {"torch.dtype", "pathlib.Path"}


class Types:
    def __init__(self, res: Resolver):
        self.res = res
        self._dc_cache: dict[int, bool] = {}

    def eval(self, mod: Module, e: ast.expr, depth: int = 0) -> Any:
        if depth > 40:
            raise FactsError(f"type alias recursion at {mod.where(e)}")
        if isinstance(e, ast.Constant):
            if e.value is None:
                return NONE_TH
            if e.value is Ellipsis:
                return ELLIPSIS_TH
            if isinstance(e.value, str):
                raise FactsError(
                    f"string annotation `{e.value}` at {mod.where(e)}: vLLM's `get_type_hints` "
                    "sees a `str` object there, which the extractor does not model"
                )
            raise FactsError(f"constant `{e.value!r}` as a type at {mod.where(e)}")
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.BitOr):
            return Union_((self.eval(mod, e.left, depth + 1), self.eval(mod, e.right, depth + 1)))
        if isinstance(e, (ast.Name, ast.Attribute)):
            return self.of_object(self.res.resolve_expr(mod, e), mod, e, depth)
        if isinstance(e, ast.Subscript):
            base = self.res.resolve_expr(mod, e.value)
            base = self.res.deref(base)
            items = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
            name = base.name if isinstance(base, External) else None
            short = name.split(".")[-1] if name else None
            tmod = name.rsplit(".", 1)[0] if name and "." in name else ""
            if name and tmod in ("typing", "typing_extensions"):
                if short == "Optional":
                    return Union_((self.eval(mod, items[0], depth + 1), NONE_TH))
                if short == "Union":
                    return Union_(tuple(self.eval(mod, i, depth + 1) for i in items))
                if short == "Literal":
                    vals = []
                    for i in items:
                        v = self.literal_value(mod, i, depth)
                        vals.extend(v)
                    return TH("Literal", "typing", literal=tuple(vals))
                if short == "Annotated":
                    return Annotated_(self.eval(mod, items[0], depth + 1))
                if short in TYPING_ORIGIN:
                    return TH(TYPING_ORIGIN[short], "typing", self.args(mod, items, depth))
                if short in ABC_NAMES:
                    return TH(f"collections.abc.{short}", "typing", self.args(mod, items, depth))
                if short in ("ClassVar", "Final", "Required", "NotRequired"):
                    return TH(short, "typing", self.args(mod, items, depth))
                if short == "TypeAlias":
                    raise FactsError(f"`TypeAlias` subscripted at {mod.where(e)}")
            if name and tmod == "collections.abc":
                return TH(f"collections.abc.{short}", "collections.abc", self.args(mod, items, depth))
            if name and name == "pydantic.SkipValidation":
                # SkipValidation[X] is Annotated[X, SkipValidation()]
                return Annotated_(self.eval(mod, items[0], depth + 1))
            if name and name.startswith("builtins."):
                return TH(short, "builtins", self.args(mod, items, depth))
            inner = self.of_object(base, mod, e.value, depth)
            if isinstance(inner, TH):
                return TH(inner.origin, inner.module, self.args(mod, items, depth), inner.dataclass, cls=inner.cls)
            raise FactsError(f"cannot read the type `{ast.unparse(e)}` at {mod.where(e)}")
        if isinstance(e, ast.List):
            return TH("list-of-args", "builtins", self.args(mod, e.elts, depth))
        raise FactsError(f"cannot read the type `{ast.unparse(e)}` at {mod.where(e)}")

    def args(self, mod: Module, items: list[ast.expr], depth: int) -> tuple:
        out = []
        for i in items:
            if isinstance(i, ast.Constant) and isinstance(i.value, str):
                out.append(TH(f"forward-ref:{i.value}", "builtins"))
            else:
                out.append(self.eval(mod, i, depth + 1))
        return tuple(out)

    def literal_value(self, mod: Module, e: ast.expr, depth: int) -> list:
        if isinstance(e, ast.Constant):
            return [e.value]
        # Literal[OtherLiteral, "x"] nests: flatten an alias of a Literal
        obj = self.res.deref(self.res.resolve_expr(mod, e))
        t = self.of_object(obj, mod, e, depth)
        if isinstance(t, TH) and t.origin == "Literal":
            return list(t.literal)
        raise FactsError(f"cannot read the Literal value `{ast.unparse(e)}` at {mod.where(e)}")

    def of_object(self, obj: Any, mod: Module, e: ast.AST, depth: int) -> Any:
        obj = self.res.deref(obj)
        if isinstance(obj, Alias):
            v = obj.value
            if isinstance(v, ast.Call):
                fn = self.res.deref(self.res.resolve_expr(obj.mod, v.func)) if isinstance(v.func, (ast.Name, ast.Attribute)) else None
                fname = fn.name if isinstance(fn, External) else ""
                if fname.endswith(".TypeVar") or fname.endswith(".ParamSpec"):
                    return TH(f"{obj.mod.name}.{_alias_name(obj)}", obj.mod.name)
                if fname.endswith(".NewType"):
                    return TH(f"{obj.mod.name}.{_alias_name(obj)}", obj.mod.name)
                raise FactsError(f"type alias `{_alias_name(obj)}` at {obj.mod.where(obj.node)} is a call, not a type")
            return self.eval(obj.mod, v, depth + 1)
        if isinstance(obj, ClassObj):
            return TH(obj.qualname, obj.mod.name, dataclass=self.is_dataclass(obj), cls=obj)
        if isinstance(obj, External):
            n = obj.name
            mname, _, short = n.rpartition(".")
            if mname == "builtins":
                if short == "None":
                    return NONE_TH
                return TH(short, "builtins")
            if mname in ("typing", "typing_extensions"):
                if short in TYPING_ORIGIN:
                    return TH(TYPING_ORIGIN[short], "typing")
                if short in ABC_NAMES:
                    return TH(f"collections.abc.{short}", "typing")
                if short == "Any":
                    return TH("Any", "typing")
                if short == "Literal":
                    raise FactsError(f"bare `Literal` at {mod.where(e)}")
                return TH(f"typing.{short}", "typing")
            if mname == "collections.abc":
                return TH(f"collections.abc.{short}", "abc")
            if mname == "types" and short == "NoneType":
                return NONE_TH
            if n in EXTERNAL_NOT_DATACLASS:
                return TH(n, mname)
            raise FactsError(
                f"`{n}` (at {mod.where(e)}) is a class outside vLLM the extractor does not know; "
                "whether it is a dataclass decides the flag's kind: add it to "
                "`EXTERNAL_NOT_DATACLASS` only after checking"
            )
        if isinstance(obj, FuncObj):
            raise FactsError(f"function `{obj.node.name}` used as a type at {mod.where(e)}")
        raise FactsError(f"cannot read {describe(obj)} as a type at {mod.where(e)}")

    def is_dataclass(self, c: ClassObj) -> bool:
        k = id(c.node)
        if k in self._dc_cache:
            return self._dc_cache[k]
        self._dc_cache[k] = False
        r = any(self._dataclass_decorator(c.mod, d) for d in c.node.decorator_list)
        if not r:
            for b in c.node.bases:
                be = b.value if isinstance(b, ast.Subscript) else b
                bo = self.res.deref(self.res.resolve_expr(c.mod, be))
                if isinstance(bo, ClassObj) and self.is_dataclass(bo):
                    r = True
        self._dc_cache[k] = r
        return r

    def _dataclass_decorator(self, mod: Module, d: ast.expr) -> bool:
        fe = d.func if isinstance(d, ast.Call) else d
        try:
            o = self.res.deref(self.res.resolve_expr(mod, fe))
        except FactsError:
            return False
        if isinstance(o, External):
            return o.name in ("dataclasses.dataclass", "pydantic.dataclasses.dataclass")
        if isinstance(o, FuncObj):
            # vLLM's `@config` (vllm/config/utils.py) returns `dataclass(cls, ...)`
            # of pydantic.dataclasses: a function whose body calls a dataclass maker.
            for n in ast.walk(o.node):
                if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute)):
                    try:
                        f = self.res.deref(self.res.resolve_expr(o.mod, n.func))
                    except FactsError:
                        continue
                    if isinstance(f, External) and f.name in ("dataclasses.dataclass", "pydantic.dataclasses.dataclass"):
                        return True
        return False

    def fields(self, c: ClassObj, seen: set | None = None) -> list[tuple[str, Module, ast.AnnAssign]]:
        """dataclasses.fields(cls): base dataclass fields first, own fields after,
        an override keeping the base's position."""
        seen = seen or set()
        if id(c.node) in seen:
            return []
        seen.add(id(c.node))
        out: dict[str, tuple[str, Module, ast.AnnAssign]] = {}
        for b in reversed(c.node.bases):
            be = b.value if isinstance(b, ast.Subscript) else b
            bo = self.res.deref(self.res.resolve_expr(c.mod, be))
            if isinstance(bo, ClassObj) and self.is_dataclass(bo):
                for f in self.fields(bo, seen):
                    out[f[0]] = f
        for st in c.node.body:
            if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                ann = st.annotation
                head = ann.value if isinstance(ann, ast.Subscript) else ann
                if isinstance(head, (ast.Name, ast.Attribute)):
                    try:
                        ho = self.res.deref(self.res.resolve_expr(c.mod, head))
                    except FactsError:
                        ho = None
                    if isinstance(ho, External) and ho.name.rsplit(".", 1)[-1] in ("ClassVar", "InitVar", "KW_ONLY"):
                        continue
                out[st.target.id] = (st.target.id, c.mod, st)
        return list(out.values())


def _alias_name(a: Alias) -> str:
    n = a.node
    if isinstance(n, ast.AnnAssign):
        return ast.unparse(n.target)
    return ", ".join(ast.unparse(t) for t in n.targets)


def hint_set(t: Any) -> frozenset:
    """vLLM's get_type_hints: Annotated -> its first argument, unions flattened."""
    if isinstance(t, Annotated_):
        return hint_set(t.inner)
    if isinstance(t, Union_):
        out: set = set()
        for m in t.members:
            out |= hint_set(m)
        return frozenset(out)
    return frozenset([t])


# ---------------------------------------------------------------------------
# Symbolic values of the parser-building code


@dataclass(frozen=True)
class Unknown:
    why: str


@dataclass(frozen=True)
class TypeFn:
    """A `type=` callable: `json` when it parses JSON."""

    json: bool
    desc: str


@dataclass(frozen=True)
class ActionSym:
    name: str  # BooleanOptionalAction, or a custom argparse.Action subclass


class Parser:
    def __init__(self) -> None:
        self.options: list[dict] = []
        self.seen: dict[str, str] = {}


@dataclass(eq=False)
class Group:
    parser: Parser


class Subparsers:
    pass


class Argv:
    """`sys.argv[1:]` of `vllm serve MODEL [options]` without `--help`."""


@dataclass(eq=False)
class Bound:
    func: FuncObj
    recv: Any  # the class for a classmethod, None for a staticmethod
    owner: ClassObj | None


@dataclass(eq=False)
class SuperProxy:
    cls: ClassObj
    after: ClassObj


@dataclass(eq=False)
class Method:
    recv: Any
    name: str


@dataclass(eq=False)
class Lambda:
    mod: Module
    node: ast.AST


@dataclass(eq=False)
class Opaque:
    """The result of a vLLM helper called on plain values (`optional_type(json.loads)`)."""

    callee: Any
    args: tuple


class Return(Exception):
    def __init__(self, value: Any):
        self.value = value


JSON_MARKERS = ("json.loads", "validate_json", "model_validate_json")
# kwargs whose value never decides how a flag consumes argv
IRRELEVANT_KW = {"help", "default", "metavar", "choices", "dest", "required", "deprecated", "const"}


def _mentions_json(node: ast.AST) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and n.attr in ("loads", "validate_json", "model_validate_json"):
            if n.attr != "loads" or (isinstance(n.value, ast.Name) and n.value.id == "json"):
                return True
    return False


class Interp:
    def __init__(self, src: Source):
        self.src = src
        self.res = Resolver(src)
        self.types = Types(self.res)
        self.arg_utils = src.require("vllm.engine.arg_utils", "it defines `get_kwargs`")
        self.rules = KwargsRules(self, self.arg_utils)
        self.depth = 0

    # -- entry ---------------------------------------------------------------
    def serve_parser(self) -> Parser:
        serve = self.src.require("vllm.entrypoints.cli.serve", "it defines `vllm serve`")
        sub = None
        for st in serve.tree.body:
            if isinstance(st, ast.ClassDef):
                for b in st.body:
                    if (
                        isinstance(b, ast.Assign)
                        and any(isinstance(t, ast.Name) and t.id == "name" for t in b.targets)
                        and isinstance(b.value, ast.Constant)
                        and b.value.value == "serve"
                    ):
                        sub = st
        if sub is None:
            raise FactsError(f"no subcommand class with `name = \"serve\"` in `{serve.rel}`")
        init = next((b for b in sub.body if isinstance(b, ast.FunctionDef) and b.name == "subparser_init"), None)
        if init is None:
            raise FactsError(f"`{sub.name}` in `{serve.rel}` has no `subparser_init`")
        owner = ClassObj(serve, sub)
        fn = FuncObj(serve, init, owner)
        result = self.call_func(fn, [Unknown("self"), Subparsers()], {}, recv=None, owner=owner, node=init)
        parser = result.parser if isinstance(result, Group) else result
        if not isinstance(parser, Parser):
            raise FactsError(f"`{sub.name}.subparser_init` in `{serve.rel}` returned {describe(result)}, not the parser")
        return parser

    # -- calls ---------------------------------------------------------------
    def call_func(self, fn: FuncObj, args: list, kwargs: dict, recv: Any, owner: ClassObj | None, node: ast.AST) -> Any:
        self.depth += 1
        if self.depth > 40:
            raise FactsError(f"call depth exceeded at {fn.mod.where(node)}")
        try:
            env: dict[str, Any] = {}
            a = fn.node.args
            params = [p.arg for p in a.posonlyargs + a.args]
            vals = list(args)
            if recv is not None:
                vals = [recv] + vals
            defaults = a.defaults
            dstart = len(params) - len(defaults)
            for i, p in enumerate(params):
                if i < len(vals):
                    env[p] = vals[i]
                elif p in kwargs:
                    env[p] = kwargs.pop(p)
                elif i >= dstart:
                    env[p] = self.ev(defaults[i - dstart], Frame(fn.mod, {}, None, None))
                else:
                    raise FactsError(f"missing argument `{p}` calling `{fn.node.name}` at {fn.mod.where(node)}")
            for p, d in zip(a.kwonlyargs, a.kw_defaults):
                if p.arg in kwargs:
                    env[p.arg] = kwargs.pop(p.arg)
                elif d is not None:
                    env[p.arg] = self.ev(d, Frame(fn.mod, {}, None, None))
            if kwargs and a.kwarg is None:
                raise FactsError(f"unexpected arguments {sorted(kwargs)} calling `{fn.node.name}` at {fn.mod.where(node)}")
            if len(vals) > len(params) and a.vararg is None:
                raise FactsError(f"too many arguments calling `{fn.node.name}` at {fn.mod.where(node)}")
            frame = Frame(fn.mod, env, owner, recv)
            try:
                self.exec_block(fn.node.body, frame)
            except Return as r:
                return r.value
            return None
        finally:
            self.depth -= 1

    def method_of(self, cls: ClassObj, name: str, node: ast.AST, mod: Module, start_after: ClassObj | None = None) -> Any:
        mro = self.mro(cls)
        if start_after is not None:
            idx = next(i for i, c in enumerate(mro) if c.node is start_after.node)
            mro = mro[idx + 1 :]
        for c in mro:
            for st in c.node.body:
                if isinstance(st, ast.FunctionDef) and st.name == name:
                    decos = {ast.unparse(d) for d in st.decorator_list}
                    fo = FuncObj(c.mod, st, c)
                    if "classmethod" in decos:
                        return Bound(fo, cls, c)
                    if "staticmethod" in decos:
                        return Bound(fo, None, c)
                    return Bound(fo, Unknown(f"instance of {cls.qualname}"), c)
                if isinstance(st, (ast.Assign, ast.AnnAssign)):
                    targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                    if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                        return Unknown(f"class attribute `{c.qualname}.{name}`")
        if name == "__name__":
            return cls.node.name
        if name == "__doc__":
            return Unknown("docstring")
        raise FactsError(f"class `{cls.qualname}` has no attribute `{name}` (at {mod.where(node)})")

    def is_action_class(self, cls: ClassObj) -> bool:
        for b in cls.node.bases:
            bo = self.res.deref(self.res.resolve_expr(cls.mod, b))
            if isinstance(bo, External) and bo.name == "argparse.Action":
                return True
            if isinstance(bo, ClassObj) and self.is_action_class(bo):
                return True
        return False

    def mro(self, cls: ClassObj) -> list[ClassObj]:
        out = [cls]
        for b in cls.node.bases:
            be = b.value if isinstance(b, ast.Subscript) else b
            try:
                bo = self.res.deref(self.res.resolve_expr(cls.mod, be))
            except FactsError:
                continue
            if isinstance(bo, ClassObj):
                for c in self.mro(bo):
                    if all(c.node is not o.node for o in out):
                        out.append(c)
        return out

    # -- statements ----------------------------------------------------------
    def exec_block(self, body: list[ast.stmt], f: "Frame") -> None:
        for st in body:
            self.exec_stmt(st, f)

    def exec_stmt(self, st: ast.stmt, f: "Frame") -> None:
        m = f.mod
        if isinstance(st, ast.Expr):
            if isinstance(st.value, ast.Constant):
                return
            self.ev(st.value, f, stmt=True)
        elif isinstance(st, ast.Assign):
            val = self.ev(st.value, f)
            for t in st.targets:
                self.assign(t, val, f)
        elif isinstance(st, ast.AnnAssign):
            if st.value is not None:
                self.assign(st.target, self.ev(st.value, f), f)
        elif isinstance(st, ast.AugAssign):
            t = st.target
            if isinstance(t, ast.Subscript):
                key = self.ev(t.slice, f)
                if key in IRRELEVANT_KW:
                    cont = self.ev(t.value, f)
                    if isinstance(cont, dict) and key not in cont:
                        raise FactsError(f"`{ast.unparse(t)}` at {m.where(st)}: no key `{key}` (vLLM would fail here)")
                    return
            if isinstance(t, ast.Name):
                f.env[t.id] = Unknown(f"`{ast.unparse(st)}`")
                return
            raise FactsError(f"cannot follow `{ast.unparse(st)}` at {m.where(st)}")
        elif isinstance(st, ast.Delete):
            for t in st.targets:
                if not isinstance(t, ast.Subscript):
                    raise FactsError(f"cannot follow `{ast.unparse(st)}` at {m.where(st)}")
                cont = self.ev(t.value, f)
                key = self.ev(t.slice, f)
                if not isinstance(cont, dict) or not isinstance(key, str):
                    raise FactsError(f"cannot follow `{ast.unparse(st)}` at {m.where(st)}")
                if key not in cont:
                    raise FactsError(f"`{ast.unparse(st)}` at {m.where(st)}: no key `{key}` (vLLM would raise KeyError)")
                del cont[key]
        elif isinstance(st, ast.If):
            c = self.ev(st.test, f)
            if isinstance(c, (list, dict, str, int, type(None))) and not isinstance(c, bool):
                c = bool(c)
            if not isinstance(c, bool):
                raise FactsError(
                    f"the condition `{ast.unparse(st.test)}` at {m.where(st)} cannot be decided statically "
                    f"({describe(c)}); the flags under it may or may not exist"
                )
            self.exec_block(st.body if c else st.orelse, f)
        elif isinstance(st, ast.For):
            it = self.ev(st.iter, f)
            if not isinstance(it, list):
                raise FactsError(f"cannot iterate `{ast.unparse(st.iter)}` at {m.where(st)} ({describe(it)})")
            for item in it:
                self.assign(st.target, item, f)
                self.exec_block(st.body, f)
            if st.orelse:
                self.exec_block(st.orelse, f)
        elif isinstance(st, ast.Return):
            raise Return(self.ev(st.value, f) if st.value is not None else None)
        elif isinstance(st, ast.Pass):
            return
        elif isinstance(st, (ast.Import, ast.ImportFrom)):
            tmp = Module(m.name, m.path, m.rel, ast.Module(body=[st], type_ignores=[]), m.is_pkg)
            for name in tmp.bindings:
                f.env[name] = self.res.lookup(tmp, name, st)
        elif isinstance(st, ast.FunctionDef):
            f.env[st.name] = Lambda(m, st)
        else:
            raise FactsError(f"cannot follow the statement `{ast.unparse(st).splitlines()[0]}` at {m.where(st)}")

    def assign(self, t: ast.expr, val: Any, f: "Frame") -> None:
        if isinstance(t, ast.Name):
            f.env[t.id] = val
        elif isinstance(t, ast.Tuple):
            if not isinstance(val, (list, tuple)) or len(val) != len(t.elts):
                raise FactsError(f"cannot unpack into `{ast.unparse(t)}` at {f.mod.where(t)}")
            for sub, v in zip(t.elts, val):
                self.assign(sub, v, f)
        elif isinstance(t, ast.Subscript):
            cont = self.ev(t.value, f)
            key = self.ev(t.slice, f)
            if not isinstance(cont, dict) or not isinstance(key, str):
                raise FactsError(f"cannot follow the assignment to `{ast.unparse(t)}` at {f.mod.where(t)}")
            cont[key] = val
        elif isinstance(t, ast.Attribute):
            base = self.ev(t.value, f)
            if isinstance(base, (Parser, Group, Unknown)) and t.attr not in ("_actions", "_option_string_actions"):
                return  # e.g. `serve_parser.epilog = ...`
            raise FactsError(f"cannot follow the assignment to `{ast.unparse(t)}` at {f.mod.where(t)}")
        else:
            raise FactsError(f"cannot follow the assignment to `{ast.unparse(t)}` at {f.mod.where(t)}")

    # -- expressions ---------------------------------------------------------
    def ev(self, e: ast.expr, f: "Frame", stmt: bool = False) -> Any:
        m = f.mod
        if isinstance(e, ast.Constant):
            return e.value
        if isinstance(e, ast.Name):
            if e.id in f.env:
                return f.env[e.id]
            return self.value_of(self.res.lookup(m, e.id, e))
        if isinstance(e, ast.Attribute):
            base = self.ev(e.value, f)
            return self.getattr(base, e.attr, m, e)
        if isinstance(e, ast.Subscript):
            base = self.ev(e.value, f)
            if isinstance(base, Argv):
                return base
            if isinstance(base, Unknown):
                return Unknown(f"`{ast.unparse(e)}`")
            key = self.ev(e.slice, f) if not isinstance(e.slice, ast.Slice) else None
            if isinstance(base, dict) and isinstance(key, str):
                if key not in base:
                    if key in IRRELEVANT_KW:
                        return Unknown(f"`{ast.unparse(e)}`")
                    raise FactsError(f"`{ast.unparse(e)}` at {m.where(e)}: no key `{key}` (vLLM would raise KeyError)")
                v = base[key]
                if isinstance(v, KwError):
                    v.fail(f"`{ast.unparse(e)}` at {m.where(e)}")
                return v
            return Unknown(f"`{ast.unparse(e)}`")
        if isinstance(e, ast.Call):
            return self.call(e, f)
        if isinstance(e, ast.Dict):
            out: dict = {}
            for k, v in zip(e.keys, e.values):
                if k is None:
                    d = self.ev(v, f)
                    if not isinstance(d, dict):
                        raise FactsError(f"cannot expand `**{ast.unparse(v)}` at {m.where(v)} ({describe(d)})")
                    out.update(d)
                else:
                    out[self.ev(k, f)] = self.ev(v, f)
            return out
        if isinstance(e, (ast.List, ast.Tuple)):
            out_l: list = []
            for x in e.elts:
                if isinstance(x, ast.Starred):
                    v = self.ev(x.value, f)
                    if not isinstance(v, list):
                        return Unknown(f"`{ast.unparse(e)}`")
                    out_l.extend(v)
                else:
                    out_l.append(self.ev(x, f))
            return out_l
        if isinstance(e, ast.JoinedStr):
            parts = []
            for v in e.values:
                if isinstance(v, ast.Constant):
                    parts.append(str(v.value))
                else:
                    x = self.ev(v.value, f)  # type: ignore[attr-defined]
                    if not isinstance(x, (str, int)) or getattr(v, "format_spec", None) or getattr(v, "conversion", -1) not in (-1,):
                        return Unknown(f"`{ast.unparse(e)}`")
                    parts.append(str(x))
            return "".join(parts)
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            v = self.ev(e.operand, f)
            return (not v) if isinstance(v, bool) else Unknown(f"`{ast.unparse(e)}`")
        if isinstance(e, ast.BoolOp):
            vals = [self.ev(v, f) for v in e.values]
            if not all(isinstance(v, bool) for v in vals):
                return Unknown(f"`{ast.unparse(e)}`")
            return all(vals) if isinstance(e.op, ast.And) else any(vals)
        if isinstance(e, ast.Compare) and len(e.ops) == 1:
            left = self.ev(e.left, f)
            right = self.ev(e.comparators[0], f)
            op = e.ops[0]
            if isinstance(op, (ast.In, ast.NotIn)):
                if isinstance(right, Argv):
                    if left == "serve":
                        r = True
                    elif left in ("--help", "-h"):
                        r = False
                    else:
                        raise FactsError(f"`{ast.unparse(e)}` at {m.where(e)} depends on the command line")
                elif isinstance(right, (dict, list)) and isinstance(left, str):
                    r = left in right
                else:
                    return Unknown(f"`{ast.unparse(e)}`")
                return r if isinstance(op, ast.In) else not r
            if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(left, (str, int, bool, type(None))) and isinstance(right, (str, int, bool, type(None))):
                return (left == right) if isinstance(op, ast.Eq) else (left != right)
            return Unknown(f"`{ast.unparse(e)}`")
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
            l, r = self.ev(e.left, f), self.ev(e.right, f)
            if isinstance(l, str) and isinstance(r, str):
                return l + r
            if isinstance(l, list) and isinstance(r, list):
                return l + r
            return Unknown(f"`{ast.unparse(e)}`")
        if isinstance(e, ast.Lambda):
            return Lambda(m, e)
        return Unknown(f"`{ast.unparse(e)}`")

    def value_of(self, obj: Any) -> Any:
        """A module-level object in value position."""
        obj = self.res.deref(obj)
        if isinstance(obj, Alias):
            v = obj.value
            if isinstance(v, ast.Constant):
                return v.value
            return Unknown(f"`{_alias_name(obj)}` ({obj.mod.where(obj.node)})")
        if isinstance(obj, External) and obj.name == "sys.argv":
            return Argv()
        return obj

    def getattr(self, base: Any, attr: str, m: Module, node: ast.AST) -> Any:
        if isinstance(base, ModRef):
            o = self.res.attr(base, attr, m, node)
            if isinstance(o, External) and o.name == "sys.argv":
                return Argv()
            return self.value_of(o)
        if isinstance(base, External):
            if base.name == "sys" and attr == "argv":
                return Argv()
            return External(f"{base.name}.{attr}")
        if isinstance(base, ClassObj):
            return self.method_of(base, attr, node, m)
        if isinstance(base, SuperProxy):
            return self.method_of(base.cls, attr, node, m, start_after=base.after)
        if isinstance(base, (Parser, Group, Subparsers, dict, str, list)):
            return Method(base, attr)
        if isinstance(base, Unknown):
            return Unknown(f"{base.why}.{attr}")
        if isinstance(base, KwError):
            base.fail(f"`.{attr}` at {m.where(node)}")
        raise FactsError(f"cannot read `.{attr}` of {describe(base)} at {m.where(node)}")

    def call(self, e: ast.Call, f: "Frame") -> Any:
        m = f.mod
        fn = self.ev(e.func, f)
        args: list = []
        for a in e.args:
            if isinstance(a, ast.Starred):
                v = self.ev(a.value, f)
                if not isinstance(v, list):
                    raise FactsError(f"cannot expand `*{ast.unparse(a.value)}` at {m.where(a)} ({describe(v)})")
                args.extend(v)
            else:
                args.append(self.ev(a, f))
        kwargs: dict = {}
        for k in e.keywords:
            v = self.ev(k.value, f)
            if k.arg is None:
                if isinstance(v, KwError):
                    v.fail(f"`**{ast.unparse(k.value)}` at {m.where(k)}")
                if not isinstance(v, dict):
                    raise FactsError(f"cannot expand `**{ast.unparse(k.value)}` at {m.where(k)} ({describe(v)})")
                kwargs.update(v)
            else:
                kwargs[k.arg] = v
        has_parser = any(isinstance(x, (Parser, Group, Subparsers)) for x in list(args) + list(kwargs.values()))

        if isinstance(fn, Method):
            r = fn.recv
            if isinstance(r, (Parser, Group)):
                parser = r if isinstance(r, Parser) else r.parser
                if fn.name == "add_argument":
                    self.add_argument(parser, args, kwargs, m, e)
                    return Unknown("argparse.Action")
                if fn.name in ("add_argument_group", "add_mutually_exclusive_group"):
                    return Group(parser)
                if fn.name in ("set_defaults",):
                    return None
                raise FactsError(f"cannot follow the parser method `{fn.name}` at {m.where(e)}")
            if isinstance(r, Subparsers) and fn.name == "add_parser":
                return Parser()
            if isinstance(r, dict):
                if fn.name == "items":
                    return [[k, v] for k, v in r.items()]
                if fn.name == "pop":
                    if args and args[0] in r:
                        return r.pop(args[0])
                    if len(args) > 1:
                        return args[1]
                    raise FactsError(f"`.pop` of a missing key at {m.where(e)}")
                if fn.name == "get":
                    return r.get(args[0], args[1] if len(args) > 1 else None)
                if fn.name == "update" and args and isinstance(args[0], dict):
                    r.update(args[0])
                    return None
                if fn.name == "copy":
                    return dict(r)
            if isinstance(r, str) and fn.name in ("replace", "lower", "upper", "strip", "removeprefix", "removesuffix"):
                if all(isinstance(a, str) for a in args):
                    return getattr(r, fn.name)(*args)
            if isinstance(r, list) and fn.name == "append":
                r.append(args[0] if args else None)
                return None
            if has_parser:
                raise FactsError(f"cannot follow `{ast.unparse(e.func)}` with the parser at {m.where(e)}")
            return Unknown(f"`{ast.unparse(e)}`")

        if isinstance(fn, Bound):
            if has_parser or any(isinstance(x, dict) for x in args):
                return self.call_func(fn.func, args, kwargs, recv=fn.recv, owner=fn.owner, node=e)
            return Opaque(fn.func, tuple(args))
        if isinstance(fn, FuncObj):
            if fn.node.name == "get_kwargs" and fn.mod is self.arg_utils:
                return self.rules.get_kwargs(args[0], m, e)
            if has_parser or any(isinstance(x, dict) for x in args):
                return self.call_func(fn, args, kwargs, recv=None, owner=None, node=e)
            return Opaque(fn, tuple(args))
        if isinstance(fn, External):
            if fn.name == "builtins.super":
                if f.owner is None or not isinstance(f.recv, ClassObj):
                    raise FactsError(f"`super()` outside a classmethod at {m.where(e)}")
                return SuperProxy(f.recv, f.owner)
            if fn.name in ("builtins.list", "builtins.sorted") and args and isinstance(args[0], list):
                return list(args[0])
            if has_parser:
                raise FactsError(f"cannot follow `{ast.unparse(e.func)}` with the parser at {m.where(e)}")
            return Opaque(fn, tuple(args))
        if isinstance(fn, ClassObj):
            if has_parser:
                raise FactsError(f"cannot follow `{ast.unparse(e.func)}` with the parser at {m.where(e)}")
            return Unknown(f"instance of {fn.qualname}")
        if isinstance(fn, Unknown):
            if has_parser:
                if self.is_platform_hook_expr(e, f):
                    return None
                raise FactsError(
                    f"`{ast.unparse(e.func)}` at {m.where(e)} receives the parser but cannot be read "
                    "statically; it may add flags"
                )
            return Unknown(f"`{ast.unparse(e)}`")
        if has_parser:
            raise FactsError(f"cannot follow `{ast.unparse(e)}` at {m.where(e)}")
        return Unknown(f"`{ast.unparse(e)}`")

    # `current_platform.pre_register_and_update(parser)` (vllm/engine/arg_utils.py,
    # AsyncEngineArgs.add_cli_args) hands the parser to the platform plugin chosen
    # at run time. vLLM's own hook (`Platform.pre_register_and_update` in
    # vllm/platforms/interface.py) does nothing, which is checked here; an
    # out-of-tree platform's hook is that package's code, not vLLM's flag set.
    def is_platform_hook_expr(self, e: ast.Call, f: "Frame") -> bool:
        fe = e.func
        if not (isinstance(fe, ast.Attribute) and fe.attr == "pre_register_and_update"):
            return False
        base = fe.value
        if not (isinstance(base, ast.Name) and base.id == "current_platform"):
            return False
        iface = self.src.require("vllm.platforms.interface", "its `Platform` defines the hook")
        for st in ast.walk(iface.tree):
            if isinstance(st, ast.ClassDef) and st.name == "Platform":
                for b in st.body:
                    if isinstance(b, ast.FunctionDef) and b.name == "pre_register_and_update":
                        body = [s for s in b.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
                        if all(isinstance(s, ast.Pass) for s in body):
                            return True
                        raise FactsError(
                            f"`Platform.pre_register_and_update` at {iface.where(b)} is no longer empty; "
                            "read what it does to the parser"
                        )
        raise FactsError(f"`Platform.pre_register_and_update` not found in `{iface.rel}`")

    # -- add_argument --------------------------------------------------------
    def add_argument(self, parser: Parser, args: list, kwargs: dict, m: Module, e: ast.Call) -> None:
        where = m.where(e)
        for a in args:
            if not isinstance(a, str):
                raise FactsError(f"an option string at {where} cannot be read statically ({describe(a)})")
        for k, v in kwargs.items():
            if isinstance(v, KwError):
                v.fail(f"the flag {args} at {where}")
        if not args:
            raise FactsError(f"`add_argument` without names at {where}")
        if not args[0].startswith("-"):
            return  # a positional (the model tag)
        longs = [a for a in args if a.startswith("--")]
        if not longs:
            raise FactsError(f"the option {args} at {where} has no long name")
        for a in args:
            if a in parser.seen:
                raise FactsError(f"option `{a}` at {where} is also added at {parser.seen[a]} (argparse would refuse)")
            parser.seen[a] = where
        kind, negatable = flag_kind(kwargs, where, args, self)
        parser.options.append(
            {
                "name": longs[0][2:],
                "kind": kind,
                "aliases": sorted(a for a in args if a != longs[0]),
                "negatable": negatable,
                "source": m.rel,
            }
        )


@dataclass
class Frame:
    mod: Module
    env: dict
    owner: ClassObj | None
    recv: Any


def type_is_json(t: Any, interp: Interp, seen: int = 0) -> bool | None:
    """Whether a `type=` value parses JSON; None when it cannot be told."""
    if seen > 10:
        return None
    if isinstance(t, TypeFn):
        return t.json
    if isinstance(t, TH):
        return False  # a class or builtin called on the string
    if isinstance(t, External):
        if t.name == "json.loads":
            return True
        if t.name.startswith("builtins.") or t.name.startswith(("pathlib.", "ipaddress.")):
            return False
        return None
    if isinstance(t, ClassObj):
        return False
    if isinstance(t, Lambda):
        return _mentions_json(t.node)
    if isinstance(t, FuncObj):
        if _mentions_json(t.node):
            return True
        # a helper that hands the value to another vLLM function which parses JSON
        for n in ast.walk(t.node):
            if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute)) and seen < 4:
                try:
                    callee = interp.res.deref(interp.res.resolve_expr(t.mod, n.func))
                except FactsError:
                    continue
                if isinstance(callee, FuncObj) and callee.node is not t.node and type_is_json(callee, interp, seen + 1):
                    return True
        return False
    if isinstance(t, Opaque):
        inner = [type_is_json(a, interp, seen + 1) for a in t.args]
        if any(x is True for x in inner):
            return True
        c = type_is_json(t.callee, interp, seen + 1)
        if c is None:
            return None
        if any(x is None for x in inner):
            return None
        return c
    return None


def flag_kind(kw: dict, where: str, names: list, interp: Interp) -> tuple[str, bool]:
    action = kw.get("action")
    nargs = kw.get("nargs")
    if isinstance(action, External) and action.name == "argparse.BooleanOptionalAction":
        action = ActionSym("BooleanOptionalAction")
    elif isinstance(action, ClassObj):
        if not interp.is_action_class(action):
            raise FactsError(f"the action `{action.qualname}` of {names} at {where} is not an `argparse.Action`")
        action = ActionSym(action.qualname)
    for k in ("action", "nargs"):
        if isinstance(kw.get(k), Unknown):
            raise FactsError(f"the `{k}` of {names} at {where} cannot be read statically ({kw[k].why})")
    if isinstance(action, ActionSym) and action.name == "BooleanOptionalAction":
        return "switch", True
    if action in ("store_true", "store_false", "store_const", "count", "append_const"):
        return "switch", False
    if not (action in (None, "store", "append", "extend") or isinstance(action, ActionSym)):
        raise FactsError(f"unknown action `{action}` of {names} at {where}")
    if nargs in ("+", "*"):
        return "many", False
    if nargs == "?":
        # `nargs="?"` with a `const`: a value, or none. The schema has no such
        # kind; `value` is the nearer (a bare use is refused by a `value` reader).
        return "value", False
    if nargs is not None:
        # a fixed count (`tuple[int, int]` gives nargs=2) has no kind in the schema
        raise FactsError(f"unknown nargs `{nargs!r}` of {names} at {where}")
    t = kw.get("type")
    if t is None:
        return "value", False
    j = type_is_json(t, interp)
    if j is None:
        raise FactsError(f"the `type` of {names} at {where} cannot be told JSON or not ({describe(t)})")
    return ("json" if j else "value"), False


@dataclass
class KwError:
    """A field whose argparse kwargs could not be computed: fatal only when used."""

    msg: str

    def fail(self, ctx: str) -> None:
        raise FactsError(f"{ctx}: {self.msg}")


# ---------------------------------------------------------------------------
# `_compute_kwargs` (vllm/engine/arg_utils.py), run on a field's type hints

# The helpers `_compute_kwargs` calls are emulated here; their code (as
# `ast.unparse` prints it) is pinned by sha256 so that a change upstream stops
# the extractor instead of being silently mis-emulated.
HELPER_SHA256 = {
    # the same code in every release from 0.18.0 to 0.30.0
    "is_type": "b5449169180022095bf73a6462e35ecc93e9e3b6e558c625d51a965d250b8f76",
    "contains_type": "9fe45090b93c8c8d82f38c74a8e7eb7c23aadd3dde5503246b751fc6c135da6a",
    "get_type": "fb0c0feda3ce7dcbd5345126737f87831ae1c905060979f57cc92e536fca6122",
    "literal_to_kwargs": "65edd4e560e694d32c7ea38fa2fdbfa7011167161aefbb33850e7503307eee18",
    "collection_to_kwargs": "e6e2fcd26a3b45e6e5689f6d84ee02ac8c55d0f75d93c8ee56fbed8c77e4d44f",
    "is_not_builtin": "3672e8944d2b5a9d1353a4b104576e0ecaf82e15fe89b47139649864c7229580",
    "get_type_hints": "c78d2b6226468d33273f6aa98e6c6cd1ec0aa49525488b1b4283b51ea71a31df",
}


def _sha(node: ast.AST) -> str:
    return hashlib.sha256(ast.unparse(node).encode()).hexdigest()


class HintSet(frozenset):
    pass


class KwargsRules:
    def __init__(self, interp: Interp, au: Module):
        self.interp = interp
        self.au = au
        funcs = {n.name: n for n in au.tree.body if isinstance(n, ast.FunctionDef)}
        for name, want in HELPER_SHA256.items():
            if name not in funcs:
                raise FactsError(f"`{au.rel}` defines no `{name}` (the extractor emulates it)")
            got = _sha(funcs[name])
            if got != want:
                raise FactsError(
                    f"`{name}` at {au.where(funcs[name])} changed (sha256 of its code {got[:16]}..., "
                    f"expected {want[:16]}...): read it and update the emulation in facts_vllm.py"
                )
        ck = funcs.get("_compute_kwargs")
        if ck is None:
            raise FactsError(f"`{au.rel}` defines no `_compute_kwargs`")
        self.ck = ck
        loop = next((s for s in ck.body if isinstance(s, ast.For)), None)
        if loop is None:
            raise FactsError(f"`_compute_kwargs` at {au.where(ck)} has no loop over the fields")
        self.loop = loop
        chain_i = next(
            (i for i, s in enumerate(loop.body) if isinstance(s, ast.If) and "dataclass_cls" in ast.unparse(s.test)),
            None,
        )
        if chain_i is None:
            raise FactsError(f"`_compute_kwargs` at {au.where(ck)}: no `if dataclass_cls ...` rule chain")
        # statements before the chain may only compute names the chain reads
        allowed = {"type_hints", "generator", "dataclass_cls", "default", "name", "help", "json_tip"}
        for s in loop.body[:chain_i]:
            for n in ast.walk(s):
                if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                    targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                    for t in targets:
                        tt = ast.unparse(t)
                        if tt not in allowed and tt != "kwargs[name]":
                            raise FactsError(
                                f"`_compute_kwargs` sets `{tt}` at {au.where(n)} before its rule chain; "
                                "the extractor does not model it"
                            )
        # ...and those the emulation stands in for must read as modelled
        expect = {
            "type_hints": "get_type_hints(field.type)",
            "generator": "(th for th in type_hints if is_dataclass(th))",
            "dataclass_cls": "next(generator, None)",
            "kwargs[name]": "{'default': default, 'help': help}",
        }
        for s in loop.body[:chain_i]:
            if isinstance(s, (ast.Assign, ast.AnnAssign)):
                t = ast.unparse(s.targets[0] if isinstance(s, ast.Assign) else s.target)
                if t in expect and (s.value is None or ast.unparse(s.value) != expect[t]):
                    raise FactsError(
                        f"`_compute_kwargs` computes `{t}` at {au.where(s)} as "
                        f"`{ast.unparse(s.value) if s.value else ''}`, expected `{expect[t]}`"
                    )
        self.rest = loop.body[chain_i:]
        self.cache: dict[int, dict] = {}

    def get_kwargs(self, cls: Any, m: Module, node: ast.AST) -> dict:
        cls = self.interp.res.deref(cls)
        if not isinstance(cls, ClassObj):
            raise FactsError(f"`get_kwargs` of {describe(cls)} at {m.where(node)}")
        k = id(cls.node)
        if k not in self.cache:
            self.cache[k] = self.compute(cls)
        return copy.deepcopy(self.cache[k])

    def compute(self, cls: ClassObj) -> dict:
        types = self.interp.types
        if not types.is_dataclass(cls):
            raise FactsError(f"`get_kwargs({cls.node.name})`: `{cls.qualname}` is not a dataclass")
        out: dict = {}
        for name, fmod, st in types.fields(cls):
            try:
                hints = HintSet(hint_set(types.eval(fmod, st.annotation)))
            except FactsError as e:
                out[name] = KwError(f"field `{cls.node.name}.{name}` ({fmod.where(st)}): {e}")
                continue
            kw: dict = {"default": Unknown("default"), "help": Unknown("help")}
            dc = next((h for h in hints if isinstance(h, TH) and h.dataclass), None)
            env = {
                "type_hints": hints,
                "dataclass_cls": dc,
                "name": name,
                "kwargs": {name: kw},
                "json_tip": "",
                "help": "",
                "default": Unknown("default"),
                "field": Unknown("field"),
                "cls": cls,
            }
            frame = Frame(self.au, env, None, None)
            try:
                ck = _CKInterp(self.interp, self.au, f"`{cls.node.name}.{name}` ({fmod.where(st)})")
                ck.exec_block(self.rest, frame)
            except FactsError as e:
                out[name] = KwError(str(e))
                continue
            out[name] = kw
        return out


class _CKInterp(Interp):
    """The statements of `_compute_kwargs`' loop after its rule chain starts,
    with vLLM's type helpers emulated on `HintSet`/`TH` values."""

    def __init__(self, base: Interp, au: Module, ctx: str):
        self.src = base.src
        self.res = base.res
        self.types = base.types
        self.arg_utils = base.arg_utils
        self.depth = 0
        self.au = au
        self.ctx = ctx

    def exec_stmt(self, st: ast.stmt, f: Frame) -> None:
        if isinstance(st, ast.Raise):
            raise FactsError(f"vLLM's `_compute_kwargs` raises for {self.ctx} at {self.au.where(st)}")
        if isinstance(st, ast.FunctionDef):
            # a local `type=` parser (parse_dataclass): JSON when it reads JSON
            f.env[st.name] = TypeFn(_mentions_json(st), st.name)
            return
        super().exec_stmt(st, f)

    def ev(self, e: ast.expr, f: Frame, stmt: bool = False) -> Any:
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id not in f.env:
            n = e.func.id
            if n == "contains_type":
                hs, t = self.ev(e.args[0], f), self.type_token(e.args[1], f)
                return any(self.is_type(h, t) for h in hs)
            if n == "get_type":
                hs, t = self.ev(e.args[0], f), self.type_token(e.args[1], f)
                return next((h for h in hs if self.is_type(h, t)), None)
            if n == "literal_to_kwargs":
                return self.literal_to_kwargs(self.ev(e.args[0], f), e)
            if n == "collection_to_kwargs":
                return self.collection_to_kwargs(self.ev(e.args[0], f), self.type_token(e.args[1], f), e)
            if n == "get_origin":
                v = self.ev(e.args[0], f)
                return ("origin", v.origin) if isinstance(v, TH) else ("origin", None)
            if n == "type" and len(e.args) == 1 and isinstance(e.args[0], ast.Constant) and e.args[0].value is None:
                return NONE_TH
            if n == "any" and isinstance(e.args[0], ast.GeneratorExp):
                g = e.args[0]
                gen = g.generators[0]
                seq = self.ev(gen.iter, f)
                for item in seq:
                    f2 = Frame(f.mod, dict(f.env), None, None)
                    self.assign(gen.target, item, f2)
                    v = self.ev(g.elt, f2)
                    if v is True:
                        return True
                return False
            if n == "is_not_builtin":
                v = self.ev(e.args[0], f)
                return isinstance(v, TH) and v.module != "builtins"
            if n in ("optional_type", "parse_type"):
                inner = self.ev(e.args[0], f)
                j = type_is_json(inner, self)
                if j is None:
                    raise FactsError(f"cannot tell `{ast.unparse(e)}` at {self.au.where(e)} JSON or not")
                return TypeFn(j, ast.unparse(e))
            if n == "_maybe_add_docs_url":
                return ""
        if isinstance(e, ast.Set):
            if all(isinstance(x, ast.Constant) for x in e.elts):
                return [x.value for x in e.elts]
            return HintSet(self.type_token(x, f) for x in e.elts)
        if isinstance(e, ast.Compare) and len(e.ops) == 1:
            op = e.ops[0]
            l, r = self.ev(e.left, f), self.ev(e.comparators[0], f)
            if isinstance(op, (ast.Is, ast.IsNot)):
                if isinstance(l, tuple) and l and l[0] == "origin":
                    res = l[1] is not None and l[1] == self.type_token(e.comparators[0], f).origin
                elif r is None:
                    res = l is None
                else:
                    raise FactsError(f"cannot decide `{ast.unparse(e)}` at {self.au.where(e)}")
                return res if isinstance(op, ast.Is) else not res
            if isinstance(op, ast.Eq) and isinstance(l, HintSet) and isinstance(r, HintSet):
                return frozenset(map(_key, l)) == frozenset(map(_key, r))
            if isinstance(op, (ast.In, ast.NotIn)) and isinstance(r, HintSet):
                res = _key(l) in set(map(_key, r))
                return res if isinstance(op, ast.In) else not res
            if isinstance(op, (ast.In, ast.NotIn)) and isinstance(r, list) and isinstance(l, str):
                return (l in r) if isinstance(op, ast.In) else (l not in r)
        if isinstance(e, ast.Tuple) and all(isinstance(x, ast.Constant) for x in e.elts):
            return [x.value for x in e.elts]
        if isinstance(e, ast.Name) and e.id not in f.env:
            o = self.res.deref(self.res.lookup(self.au, e.id, e))
            if isinstance(o, External) and o.name == "argparse.BooleanOptionalAction":
                return ActionSym("BooleanOptionalAction")
            if isinstance(o, Alias) and isinstance(o.value, ast.Set):
                return [self.ev(x, Frame(o.mod, {}, None, None)) for x in o.value.elts]
            return o
        if isinstance(e, ast.Attribute):
            if isinstance(e.value, ast.Name) and e.value.id == "argparse" and e.attr == "BooleanOptionalAction":
                return ActionSym("BooleanOptionalAction")
            base = self.ev(e.value, f)
            if isinstance(base, TypeFn) and e.attr == "__doc__":
                return ""
            if isinstance(base, FuncObj) and e.attr == "__doc__":
                return ""
        return super().ev(e, f, stmt)

    def type_token(self, e: ast.expr, f: Frame) -> Any:
        """A type named in `_compute_kwargs` (bool, Literal, type(None)...)."""
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "type":
            return NONE_TH
        o = self.ev(e, f)
        if isinstance(o, TH):
            return o
        if isinstance(o, External):
            n = o.name.rsplit(".", 1)[-1]
            if o.name.startswith("builtins."):
                return TH(n, "builtins")
            if o.name in ("typing.Literal", "typing_extensions.Literal"):
                return TH("Literal", "typing")
        raise FactsError(f"cannot read the type `{ast.unparse(e)}` at {self.au.where(e)}")

    @staticmethod
    def is_type(h: Any, t: Any) -> bool:
        # is_type: `type_hint is type or get_origin(type_hint) is type`
        return isinstance(h, TH) and isinstance(t, TH) and h.origin == t.origin

    def literal_to_kwargs(self, hs: Any, e: ast.AST) -> dict:
        lit = next((h for h in hs if isinstance(h, TH) and h.origin == "Literal"), None)
        if lit is None or not lit.literal:
            raise FactsError(f"`literal_to_kwargs` without a Literal for {self.ctx}")
        opts = list(lit.literal)
        t0 = type(opts[0])
        if not all(isinstance(o, t0) for o in opts):
            raise FactsError(f"vLLM's `literal_to_kwargs` raises for {self.ctx}: mixed Literal types")
        key = "metavar" if any(isinstance(h, TH) and h.origin == "str" for h in hs) else "choices"
        return {"type": TypeFn(False, t0.__name__), key: sorted(opts)}

    def collection_to_kwargs(self, hs: Any, t: Any, e: ast.AST) -> dict:
        h = next((h for h in hs if self.is_type(h, t)), None)
        if h is None:
            raise FactsError(f"`collection_to_kwargs` without a {t} for {self.ctx}")
        types = h.args
        if not types:
            raise FactsError(f"vLLM's `collection_to_kwargs` fails on the bare `{h}` of {self.ctx} (no element type)")
        elem = types[0]
        if isinstance(elem, Union_):
            elem = TH("str", "builtins")
        nargs: Any = "+" if t.origin != "tuple" or ELLIPSIS_TH in types else len(types)
        return {"type": elem, "nargs": nargs}


def _key(h: Any) -> Any:
    if isinstance(h, TH):
        return (h.origin, h.module, h.args, h.literal)
    return h


# ---------------------------------------------------------------------------


def vllm_facts(src: Path, version: str, *, overrides: dict[str, str] | None = None) -> dict:
    """The `upstream/facts/vllm/<version>.json` object for the vLLM sdist unpacked at `src`.

    `overrides` (path inside the sdist -> text) replaces files as read; the
    self-check uses it to mutate upstream's code and watch the result change."""
    src = Path(src)
    if not (src / "vllm" / "engine" / "arg_utils.py").is_file():
        raise FactsError(f"`{src}` is not an unpacked vLLM sdist (no `vllm/engine/arg_utils.py`)")
    interp = Interp(Source(src, overrides))
    parser = interp.serve_parser()
    flags = sorted(parser.options, key=lambda o: o["name"])
    names = [o["name"] for o in flags]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise FactsError(f"flags defined twice in vllm {version}: {dup}")
    return {
        "package": "vllm",
        "version": version,
        "serve_flags": flags,
        "speculative_methods": speculative_methods(Source(src, overrides)),
        "v2_model_runner": v2_model_runner(Source(src, overrides)),
        "async_speculative_methods": async_speculative_methods(Source(src, overrides)),
        "context_parallel": context_parallel(Source(src, overrides)),
        "drafting_slots": drafting_slots(Source(src, overrides)),
    }


PARALLEL_CONFIG = "vllm/config/parallel.py"


def _names(node: ast.AST, *attrs: str) -> bool:
    """Whether `node` is `self.<attr>` or a local spelled like one of
    `attrs`' short names (`tp`, `dcp`, `pcp`) vLLM binds them to."""
    short = {
        "tensor_parallel_size": "tp",
        "decode_context_parallel_size": "dcp",
        "prefill_context_parallel_size": "pcp",
        "data_parallel_size": "dp",
    }
    text = ast.unparse(node)
    return any(text in (f"self.{a}", short.get(a, a)) for a in attrs)


def _raises(node: ast.If) -> bool:
    return any(isinstance(x, ast.Raise) for b in node.body for x in ast.walk(b))


def context_parallel(source: Source) -> dict | None:
    """The start-up refusals of context-parallel sizes in `ParallelConfig`
    (vllm/config/parallel.py), each as `path:line` of its raising `if`:
    `tp_divisible_by_dcp` (`tp % dcp != 0`; `only_without_pcp` when it sits
    under `if pcp == 1`), `dcp_sizes_with_pcp` (`dcp not in (1, pcp, tp *
    pcp)`), `pcp_with_dp` (`pcp > 1 and dp > 1`). `None` without the file."""
    text = _read(source, PARALLEL_CONFIG)
    if text is None:
        return None
    tree = ast.parse(text, PARALLEL_CONFIG)
    parent = _parents(tree)
    out: dict = {"tp_divisible_by_dcp": None, "only_without_pcp": False, "dcp_sizes_with_pcp": None, "pcp_with_dp": None}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.If) and _raises(node)):
            continue
        t = node.test
        at = f"{PARALLEL_CONFIG}:{node.lineno}"
        if (
            isinstance(t, ast.Compare)
            and isinstance(t.left, ast.BinOp)
            and isinstance(t.left.op, ast.Mod)
            and _names(t.left.left, "tensor_parallel_size")
            and _names(t.left.right, "decode_context_parallel_size")
            and isinstance(t.ops[0], ast.NotEq)
        ):
            out["tp_divisible_by_dcp"] = at
            up = parent.get(node)
            out["only_without_pcp"] = bool(
                isinstance(up, ast.If) and node in up.body and ast.unparse(up.test) in ("pcp == 1", "self.prefill_context_parallel_size == 1")
            )
        elif (
            isinstance(t, ast.Compare)
            and isinstance(t.ops[0], ast.NotIn)
            and _names(t.left, "decode_context_parallel_size")
            and isinstance(t.comparators[0], ast.Tuple)
            and [ast.unparse(e) for e in t.comparators[0].elts] == ["1", "pcp", "tp * pcp"]
        ):
            out["dcp_sizes_with_pcp"] = at
        elif isinstance(t, ast.BoolOp) and isinstance(t.op, ast.And) and len(t.values) == 2:
            def gt1(c: ast.AST, attr: str) -> bool:
                return (
                    isinstance(c, ast.Compare)
                    and _names(c.left, attr)
                    and isinstance(c.ops[0], ast.Gt)
                    and ast.unparse(c.comparators[0]) == "1"
                )
            a, b = t.values
            if (gt1(a, "prefill_context_parallel_size") and gt1(b, "data_parallel_size")) or (
                gt1(b, "prefill_context_parallel_size") and gt1(a, "data_parallel_size")
            ):
                out["pcp_with_dp"] = at
    if out["tp_divisible_by_dcp"] is None:
        raise FactsError(f"`{PARALLEL_CONFIG}`: no `tp % dcp != 0` refusal found; vLLM's DCP check moved")
    return out


VLLM_CONFIG = "vllm/config/vllm.py"


def v2_model_runner(source: Source) -> dict | None:
    """What vLLM's V2 model runner refuses and which MoE architectures it
    runs by default (vllm/config/vllm.py): the string constants
    `_get_v2_model_runner_unsupported_features` appends (the V1 runner is
    kept, or `VLLM_USE_V2_MODEL_RUNNER=1` raises, when one applies), and
    `DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES`. `None` before the V2 runner."""
    text = source.overrides.get(VLLM_CONFIG)
    if text is None:
        path = source.root / VLLM_CONFIG
        if not path.is_file():
            return None
        text = path.read_text(encoding="utf-8")
    tree = ast.parse(text, VLLM_CONFIG)
    unsupported: set[str] = set()
    found = False
    archs: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "_get_v2_model_runner_unsupported_features":
            found = True
            for call in ast.walk(node):
                if (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "append"
                    and call.args
                    and isinstance(call.args[0], ast.Constant)
                    and isinstance(call.args[0].value, str)
                ):
                    unsupported.add(call.args[0].value)
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES" for t in node.targets
        ):
            for c in ast.walk(node.value):
                if isinstance(c, ast.Constant) and isinstance(c.value, str):
                    archs.add(c.value)
    if not found:
        return None
    return {"unsupported": sorted(unsupported), "default_architectures": sorted(archs), "source": VLLM_CONFIG}


SPECULATIVE = "vllm/config/speculative.py"


def _read(source: Source, rel: str) -> str | None:
    text = source.overrides.get(rel)
    if text is None:
        path = source.root / rel
        if not path.is_file():
            return None
        text = path.read_text(encoding="utf-8")
    return text


def _literal_aliases(source: Source) -> dict[str, list[str]]:
    """Module-level `X = Literal[...]` aliases of vllm/config/speculative.py,
    nested aliases flattened: name -> its strings."""
    text = _read(source, SPECULATIVE)
    if text is None:
        return {}
    tree = ast.parse(text, SPECULATIVE)
    raw: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            raw[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            raw[node.target.id] = node.value

    def flat(node: ast.AST, seen: tuple[str, ...]) -> list[str] | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.Name) and node.id in raw and node.id not in seen:
            return flat(raw[node.id], seen + (node.id,))
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal":
            out: list[str] = []
            for i in node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]:
                f = flat(i, seen)
                if f is None:
                    return None
                out += f
            return out
        return None

    return {k: v for k in raw if (v := flat(raw[k], (k,))) is not None}


def async_speculative_methods(source: Source) -> dict | None:
    """The speculative methods `--async-scheduling` runs with: the raising
    `if` of `VllmConfig.__post_init__` (vllm/config/vllm.py) whose message
    says async scheduling is "only supported" with some kinds of speculative
    decoding; its test is a conjunction of `method not in get_args(Alias)`
    (aliases of vllm/config/speculative.py, flattened) and `method != "x"`.
    The methods are those after vLLM's own rewriting of `*_mtp` to `mtp`.
    `None` when no such check exists."""
    text = _read(source, VLLM_CONFIG)
    if text is None:
        return None
    tree = ast.parse(text, VLLM_CONFIG)
    aliases = None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.If) and ".method" in ast.unparse(node.test)):
            continue
        msgs = [
            c.value
            for b in node.body
            for r in ast.walk(b)
            if isinstance(r, ast.Raise)
            for c in ast.walk(r)
            if isinstance(c, ast.Constant) and isinstance(c.value, str)
        ]
        if not any("async scheduling is only supported" in m for m in msgs):
            continue
        if aliases is None:
            aliases = _literal_aliases(source)
        methods: set[str] = set()
        for c in ast.walk(node.test):
            if not (isinstance(c, ast.Compare) and ast.unparse(c.left).endswith(".method")):
                continue
            op, right = c.ops[0], c.comparators[0]
            if isinstance(op, ast.NotEq) and isinstance(right, ast.Constant):
                methods.add(right.value)
            elif isinstance(op, ast.NotIn):
                if isinstance(right, ast.Call) and ast.unparse(right.func).endswith("get_args") and right.args:
                    name = ast.unparse(right.args[0])
                    if name not in aliases:
                        raise FactsError(f"`{VLLM_CONFIG}`:{c.lineno}: async scheduling names `{name}`, expected a Literal alias of `{SPECULATIVE}`")
                    methods.update(aliases[name])
                else:
                    raise FactsError(f"`{VLLM_CONFIG}`:{c.lineno}: cannot read `{ast.unparse(c)}`")
        return {"methods": sorted(methods), "source": f"{VLLM_CONFIG}:{node.lineno}"}
    return None


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    parent: dict[ast.AST, ast.AST] = {}
    for n in ast.walk(tree):
        for c in ast.iter_child_nodes(n):
            parent[c] = n
    return parent


def _method_test(test: ast.expr) -> list[str] | None:
    """The methods of `self.method == "x"` or `self.method in ("x", ...)`."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and ast.unparse(test.left) == "self.method"):
        return None
    op, right = test.ops[0], test.comparators[0]
    if isinstance(op, ast.Eq) and isinstance(right, ast.Constant) and isinstance(right.value, str):
        return [right.value]
    if isinstance(op, ast.In) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
        if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in right.elts):
            return [e.value for e in right.elts]
    return None


def drafting_slots(source: Source) -> dict | None:
    """The batch slots vLLM reserves for drafting
    (`VllmConfig._set_max_num_scheduled_tokens`, vllm/config/vllm.py): a
    layout whose `max_num_batched_tokens` is at most the reserve is refused
    at start. Per method, the reserve per request is `per_token` x
    `num_speculative_tokens` + `constant`, read by running
    `SpeculativeConfig.max_num_new_slots_for_drafting` (and the `self.*()`
    predicates it calls, with no builtins) for 1 to 15 tokens, with
    `parallel_drafting` as `__post_init__` sets it for the method (`if
    self.method == ...: self.parallel_drafting = True`); only methods with a
    reserve are listed. `per_seq`: the reserve is multiplied by
    `max_num_seqs` (vLLM before 0.28.0). `source`: `path:line` of the
    raising `if` a layout reaches, `None` where only a typed
    `max_num_scheduled_tokens` is checked. `None` without the property."""
    spec_text = _read(source, SPECULATIVE)
    vllm_text = _read(source, VLLM_CONFIG)
    if spec_text is None or vllm_text is None:
        return None
    tree = ast.parse(spec_text, SPECULATIVE)
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "SpeculativeConfig"), None)
    if cls is None:
        raise FactsError(f"`{SPECULATIVE}`: no class SpeculativeConfig")
    funcs = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}
    prop = funcs.get("max_num_new_slots_for_drafting")
    if prop is None:
        return None
    # `parallel_drafting = True` under a test of the method.
    parent = _parents(cls)
    parallel: set[str] = set()
    for node in ast.walk(cls):
        if not (
            isinstance(node, ast.Assign)
            and [ast.unparse(t) for t in node.targets] == ["self.parallel_drafting"]
            and isinstance(node.value, ast.Constant)
            and node.value.value is True
        ):
            continue
        up = parent.get(node)
        methods = _method_test(up.test) if isinstance(up, ast.If) and node in up.body else None
        if methods is None:
            raise FactsError(f"`{SPECULATIVE}`:{node.lineno}: `parallel_drafting = True` under a test that is not of `self.method`")
        parallel.update(methods)
    # The property and the predicates it calls, as plain functions.
    needed: list[ast.FunctionDef] = []
    todo, seen = ["max_num_new_slots_for_drafting"], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        f = funcs.get(name)
        if f is None:
            raise FactsError(f"`{SPECULATIVE}`: `max_num_new_slots_for_drafting` calls `self.{name}()`, not a method of SpeculativeConfig")
        needed.append(f)
        for c in ast.walk(f):
            if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and ast.unparse(c.func.value) == "self":
                todo.append(c.func.attr)
    body = []
    for f in needed:
        g = ast.FunctionDef(name=f.name, args=f.args, body=f.body, decorator_list=[], returns=None, type_params=[])
        body.append(g)
    mod = ast.fix_missing_locations(ast.Module(body=body, type_ignores=[]))
    ns: dict = {"__builtins__": {}}
    exec(compile(mod, SPECULATIVE, "exec"), ns)  # noqa: S102 - pinned upstream source, pure predicates
    fns = {f.name: ns[f.name] for f in needed}

    class Conf:
        def __init__(self, method: str, k: int):
            self.method, self.num_speculative_tokens = method, k
            self.parallel_drafting = method in parallel

        def __getattr__(self, name: str):
            if name in fns:
                return lambda *a: fns[name](self, *a)
            raise FactsError(f"`{SPECULATIVE}`: `max_num_new_slots_for_drafting` reads `self.{name}`, which the extractor does not model")

    names = [m["name"] for m in speculative_methods(source)]
    slots = []
    for m in names:
        try:
            got = [fns["max_num_new_slots_for_drafting"](Conf(m, k)) for k in range(1, 16)]
        except NameError as e:
            raise FactsError(f"`{SPECULATIVE}`: `max_num_new_slots_for_drafting` needs {e}") from e
        a, b = got[1] - got[0], got[0] - (got[1] - got[0])
        if any(g != a * k + b for k, g in zip(range(1, 16), got)):
            raise FactsError(f"`{SPECULATIVE}`: drafting slots of `{m}` are not linear in the tokens: {got}")
        if got != [0] * 15:
            slots.append({"method": m, "per_token": a, "constant": b})
    # Where the reserve is compared with max_num_batched_tokens.
    vtree = ast.parse(vllm_text, VLLM_CONFIG)
    fn = next((n for n in ast.walk(vtree) if isinstance(n, ast.FunctionDef) and n.name == "_set_max_num_scheduled_tokens"), None)
    if fn is None:
        raise FactsError(f"`{VLLM_CONFIG}`: drafting slots exist but `_set_max_num_scheduled_tokens` does not")
    delta = next(
        (n.value for n in ast.walk(fn) if isinstance(n, ast.Assign) and [ast.unparse(t) for t in n.targets] == ["scheduled_token_delta"]),
        None,
    )
    if delta is None or "max_num_new_slots_for_drafting" not in ast.unparse(delta):
        raise FactsError(f"`{VLLM_CONFIG}`: `_set_max_num_scheduled_tokens` has no `scheduled_token_delta` from the drafting slots")
    per_seq = "max_num_seqs" in ast.unparse(delta)
    raising = [n for n in ast.walk(fn) if isinstance(n, ast.If) and _raises(n)]
    at = next((n for n in raising if "scheduled_token_delta" in ast.unparse(n.test) and "max_num_scheduled_tokens" not in ast.unparse(n.test)), None)
    if at is None:
        at = next((n for n in raising if ast.unparse(n.test).endswith("max_num_scheduled_tokens <= 0")), None)
    # Before vLLM 0.20.2 only a typed `max_num_scheduled_tokens` is compared
    # with the reserve: no refusal a layout reaches.
    return {"per_seq": per_seq, "slots": slots, "source": None if at is None else f"{VLLM_CONFIG}:{at.lineno}"}


def speculative_methods(source: Source) -> list[dict]:
    """Every `method` `SpeculativeConfig` accepts: the strings of the
    `SpeculativeMethod` Literal alias in vllm/config/speculative.py, with the
    module-level Literal aliases it nests (`EagleModelTypes`,
    `MTPModelTypes`, ...) flattened; sorted by name. Every MTP model type
    (`deepseek_mtp`) is accepted and rewritten to `mtp` by `__post_init__`."""
    text = source.overrides.get(SPECULATIVE)
    if text is None:
        path = source.root / SPECULATIVE
        if not path.is_file():
            raise FactsError(f"no `{SPECULATIVE}` in the vLLM sdist; expected the module defining `SpeculativeMethod`")
        text = path.read_text(encoding="utf-8")
    tree = ast.parse(text, SPECULATIVE)
    aliases: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            aliases[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            aliases[node.target.id] = node.value

    def flatten(node: ast.AST, seen: tuple[str, ...]) -> list[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.Name):
            if node.id in seen or node.id not in aliases:
                raise FactsError(
                    f"`{SPECULATIVE}`: `SpeculativeMethod` names `{node.id}`, expected a module-level Literal alias"
                )
            return flatten(aliases[node.id], seen + (node.id,))
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal":
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return [m for i in items for m in flatten(i, seen)]
        raise FactsError(
            f"`{SPECULATIVE}`: `SpeculativeMethod` holds `{ast.unparse(node)}`, expected strings and Literal aliases"
        )

    if "SpeculativeMethod" not in aliases:
        raise FactsError(f"`{SPECULATIVE}` defines no `SpeculativeMethod`; expected the Literal of accepted methods")
    names = sorted(set(flatten(aliases["SpeculativeMethod"], ("SpeculativeMethod",))))
    free = draft_free_methods(tree, lambda a: flatten(aliases[a], (a,)) if a in aliases else [])
    return [{"name": n, "needs_model": n not in free, "source": SPECULATIVE} for n in names]


def draft_free_methods(tree: ast.Module, alias) -> set[str]:
    """The methods `SpeculativeConfig.__post_init__` runs without a draft
    `model`: those its `if self.model is None and self.num_speculative_tokens
    is not None:` chain gives a model of their own (`mtp` and `dspark` the
    target's, `ngram`, `suffix`, ...), plus every MTP model type, which it
    rewrites to `mtp` first (`get_args(MTPModelTypes)`). A branch that
    raises when `self.model` is None (`custom_class`), and the final
    `else` ("num_speculative_tokens was provided but without speculative
    model"), need one."""
    cls = next(
        (n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "SpeculativeConfig"), None
    )
    post = cls and next(
        (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__post_init__"), None
    )
    if post is None:
        raise FactsError(f"`{SPECULATIVE}` has no `SpeculativeConfig.__post_init__`")
    src = ast.unparse(post)
    if "self.method in get_args(MTPModelTypes)" not in src:
        raise FactsError(f"`{SPECULATIVE}`: `__post_init__` no longer rewrites MTP model types to `mtp`")
    chain = next(
        (
            n
            for n in ast.walk(post)
            if isinstance(n, ast.If)
            and "self.model is None" in ast.unparse(n.test)
            and "num_speculative_tokens" in ast.unparse(n.test)
        ),
        None,
    )
    if chain is None or not chain.body or not isinstance(chain.body[0], ast.If):
        raise FactsError(
            f"`{SPECULATIVE}`: no `if self.model is None and self.num_speculative_tokens is not None:` chain"
        )

    def methods(test: ast.AST) -> list[str]:
        out = []
        for c in ast.walk(test):
            if isinstance(c, ast.Compare) and ast.unparse(c.left) == "self.method":
                for comp in c.comparators:
                    out += [x.value for x in ast.walk(comp) if isinstance(x, ast.Constant) and isinstance(x.value, str)]
        return out

    def needs_model(body: list[ast.stmt]) -> bool:
        for n in body:
            for c in ast.walk(n):
                if isinstance(c, ast.If) and "self.model" in ast.unparse(c.test):
                    if any(isinstance(r, ast.Raise) for b in c.body for r in ast.walk(b)):
                        return True
        return False

    free: set[str] = set()
    branch: ast.stmt | None = chain.body[0]
    while isinstance(branch, ast.If):
        if not needs_model(branch.body):
            free.update(methods(branch.test))
        branch = branch.orelse[0] if len(branch.orelse) == 1 else None
    if "mtp" not in free:
        raise FactsError(f"`{SPECULATIVE}`: the draft-free chain has no `mtp` branch")
    return free | set(alias("MTPModelTypes"))


def dumps(obj: dict) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def corpus_path(version: str) -> Path:
    out = subprocess.run(
        [sys.executable, str(HERE / "corpus.py"), "path", f"vllm=={version}"],
        capture_output=True, text=True,
    )
    if out.returncode != 0:
        raise FactsError(f"the corpus has no vllm=={version}: {out.stderr.strip()}")
    return Path(out.stdout.strip())


ROOT = HERE.parents[1]
FACTS_DIR = ROOT / "upstream" / "facts" / "vllm"


def pinned_versions() -> list[str]:
    lock = json.loads((ROOT / "upstream" / "corpus.lock.json").read_text(encoding="utf-8"))
    return [p["version"] for p in lock["packages"] if p["name"] == "vllm"]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="the `vllm serve` flag facts of vLLM releases")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("version", nargs="?", help="print the facts of this vllm version")
    g.add_argument("--write", action="store_true", help="write the facts of every pinned vllm version")
    ns = ap.parse_args(argv)
    try:
        if ns.write:
            FACTS_DIR.mkdir(parents=True, exist_ok=True)
            for v in pinned_versions():
                facts = vllm_facts(corpus_path(v), v)
                (FACTS_DIR / f"{v}.json").write_text(dumps(facts), encoding="utf-8")
                print(f"{FACTS_DIR.relative_to(ROOT)}/{v}.json: {len(facts['serve_flags'])} flags")
        else:
            sys.stdout.write(dumps(vllm_facts(corpus_path(ns.version), ns.version)))
    except FactsError as e:
        print(f"facts_vllm.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
