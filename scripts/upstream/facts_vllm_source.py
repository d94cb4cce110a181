"""Source loading and name resolution for `facts_vllm.py`: the unpacked sdist's
modules (`Source`, `Module`), what their names resolve to (`Resolver` and the
resolved objects `ClassObj`, `FuncObj`, `ModRef`, `External`, `Alias`,
`Unknown`), and `FactsError`, raised for whatever cannot be read."""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any


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


@dataclass(frozen=True)
class Unknown:
    why: str


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
