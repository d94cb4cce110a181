"""The abstract interpreter of `facts_vllm.py`, part one: the symbolic values
of the parser-building code (`Parser`, `Group`, `Bound`, `TypeFn`, ...), the
`Frame` of one call, and `Evaluator`, which runs statements and evaluates
expressions. Calls (`call`, `method_of`) are `Caller`'s, in
facts_vllm_calls.py."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from facts_vllm_source import Alias, ClassObj, External, FactsError, FuncObj, ModRef, Module, Unknown, describe
from facts_vllm_types import _alias_name


# Symbolic values of the parser-building code


@dataclass(frozen=True)
class TypeFn:
    """A `type=` callable: `json` when it parses JSON. `conv` is how it turns
    a word into the option's value (`str`, `int`, `float`,
    `lower_underscore`), None when that is not known; `optional` when
    `optional_type` wraps it (`""` and `"None"` become None)."""

    json: bool
    desc: str
    conv: str | None = None
    optional: bool = False
    # the top-level keys a dataclass `type=` (`parse_dataclass`) takes, where
    # its class forbids others (`dataclass_keys`), else None
    keys: Any = field(default=None, compare=False, hash=False)


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


@dataclass
class KwError:
    """A field whose argparse kwargs could not be computed: fatal only when used."""

    msg: str

    def fail(self, ctx: str) -> None:
        raise FactsError(f"{ctx}: {self.msg}")


@dataclass
class Frame:
    mod: Module
    env: dict
    owner: ClassObj | None
    recv: Any


class Evaluator:
    """Statements and expressions of the parser-building code."""

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
                    if key == "choices" and isinstance(cont, dict):
                        # `kwargs["x"]["choices"] += [...]`: the list grows
                        # where it can be read, else it is marked unread
                        # (the flag's values are then not judged).
                        cont[key] = self.grown_choices(cont[key], st, f)
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

    def grown_choices(self, have: Any, st: ast.AugAssign, f: "Frame") -> Any:
        why = Unknown(f"`{ast.unparse(st)}` at {f.mod.where(st)}")
        if not isinstance(st.op, ast.Add) or not isinstance(have, list):
            return why
        try:
            more = self.ev(st.value, f)
        except FactsError:
            return why
        if isinstance(more, (list, tuple)) and all(isinstance(x, str) for x in more):
            return have + list(more)
        return why

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
