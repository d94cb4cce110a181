"""Type hints for `facts_vllm.py`, as vLLM's `get_type_hints`
(vllm/engine/arg_utils.py) sees them: `TH`, `Union_`, `Annotated_`, and
`Types`, which evaluates a field's annotation statically."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from facts_vllm_source import Alias, ClassObj, External, FactsError, FuncObj, Module, Resolver, describe


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
