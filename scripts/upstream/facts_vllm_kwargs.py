"""`_compute_kwargs` (vllm/engine/arg_utils.py) for `facts_vllm.py`:
`KwargsRules` runs the release's own rule chain on a config field's type
hints (`_CKInterp`, with vLLM's type helpers emulated and pinned by
sha256) to get the argparse kwargs of its flag."""

from __future__ import annotations

import ast
import copy
import hashlib
import re
from typing import Any

from facts_vllm_calls import Caller, choice_conversion, type_is_json
from facts_vllm_eval import ActionSym, Frame, KwError, TypeFn, _mentions_json
from facts_vllm_source import Alias, ClassObj, External, FactsError, FuncObj, Module, Unknown, describe
from facts_vllm_types import ELLIPSIS_TH, NONE_TH, TH, Union_, hint_set


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
    def __init__(self, interp: Caller, au: Module):
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
                    f"expected {want[:16]}...): read it and update the emulation in facts_vllm_kwargs.py"
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


class _CKInterp(Caller):
    """The statements of `_compute_kwargs`' loop after its rule chain starts,
    with vLLM's type helpers emulated on `HintSet`/`TH` values."""

    def __init__(self, base: Caller, au: Module, ctx: str):
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
            keys = None
            if "TypeAdapter(cls)" in ast.unparse(st):
                keys = dataclass_keys(self, f.env.get("dataclass_cls"))
            f.env[st.name] = TypeFn(_mentions_json(st), st.name, keys=keys)
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
                conv, optional = choice_conversion(inner)
                # the wrapped parser still validates a word that is not
                # `""`/`"None"`: a dataclass's keys carry over
                keys = inner.keys if isinstance(inner, TypeFn) else None
                return TypeFn(j, ast.unparse(e), conv, optional or n == "optional_type", keys=keys)
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
        return {"type": TypeFn(False, t0.__name__, t0.__name__ if t0 in (str, int, float) else None), key: sorted(opts)}

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


def _forbids_extra(call: ast.Call | None) -> bool | None:
    """What a `config=ConfigDict(extra=...)` keyword of `call` says: True for
    "forbid", False for another policy, None without one."""
    if call is None:
        return None
    for k in call.keywords:
        if k.arg == "config":
            v = k.value
            if isinstance(v, ast.Call) and ast.unparse(v.func) == "ConfigDict":
                for kk in v.keywords:
                    if kk.arg == "extra":
                        return isinstance(kk.value, ast.Constant) and kk.value.value == "forbid"
                # a ConfigDict without `extra`: the decorator's default stands
                return None
            return False
    return None


def _passes_input_through(fn: ast.FunctionDef) -> bool:
    """Whether a raw-input validator only reads its input (it may raise):
    every `return` hands back its input parameter unchanged, and nothing is
    deleted, popped, assigned by subscript or mutated by a method call.
    Such a validator cannot make a key the fields do not name acceptable
    (pooler.py `PoolerConfig.reject_removed_parameters` @0.30.0 refuses two
    removed ones)."""
    params = [a.arg for a in fn.args.args if a.arg not in ("cls", "self")]
    if not params:
        return False
    data = params[0]
    for n in ast.walk(fn):
        if isinstance(n, ast.Return) and not (isinstance(n.value, ast.Name) and n.value.id == data):
            return False
        if isinstance(n, ast.Delete):
            return False
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(not isinstance(t, ast.Name) for t in targets):
                return False
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in ("pop", "popitem", "update", "setdefault", "clear", "__setitem__")
        ):
            return False
    return True


def dataclass_keys(c: Caller, th: Any) -> dict | None:
    """The top-level keys `TypeAdapter(cls).validate_json` takes for the
    dataclass `th` of a JSON option (`parse_dataclass` in
    vllm/engine/arg_utils.py `_compute_kwargs`), where its class forbids
    any other: decorated with vLLM's `@config` (vllm/config/utils.py, which
    merges `ConfigDict(extra="forbid")` into its `config=`) or with a
    pydantic dataclass given `config=ConfigDict(extra="forbid")`. `fields`:
    its dataclass fields (bases' too) and the `alias`/`validation_alias` a
    `Field(...)` gives one; `source`: `path:line` of the class. None where
    the class may take other keys or cannot be read."""
    if not (isinstance(th, TH) and isinstance(th.cls, ClassObj)):
        return None
    cls = th.cls
    forbid = None
    for d in cls.node.decorator_list:
        call = d if isinstance(d, ast.Call) else None
        fe = d.func if call else d
        try:
            o = c.res.deref(c.res.resolve_expr(cls.mod, fe))
        except FactsError:
            return None
        if isinstance(o, FuncObj) and o.node.name == "config":
            base = any(
                isinstance(n, ast.Assign)
                and ast.unparse(n.value) in ("ConfigDict(extra='forbid')",)
                for n in ast.walk(o.node)
            )
            own = _forbids_extra(call)
            forbid = own if own is not None else base
        elif isinstance(o, External) and o.name == "pydantic.dataclasses.dataclass":
            forbid = bool(_forbids_extra(call))
    if not forbid:
        return None
    for n in cls.node.body:
        # its own `__init__`, or a validator that sees the raw input and may
        # change it, may take or rename keys the fields do not name: not
        # judged
        if isinstance(n, ast.FunctionDef) and (
            n.name == "__init__"
            or (
                any("mode='before'" in ast.unparse(d) or "mode='wrap'" in ast.unparse(d)
                    for d in n.decorator_list if "model_validator" in ast.unparse(d))
                and not _passes_input_through(n)
            )
        ):
            return None
    names: set[str] = set()
    for st in cls.node.body:
        # `InitVar` pseudo-fields are init arguments too
        if (
            isinstance(st, ast.AnnAssign)
            and isinstance(st.target, ast.Name)
            and re.match(r"(dataclasses\.)?InitVar\b", ast.unparse(st.annotation))
        ):
            names.add(st.target.id)
    for name, fmod, st in c.types.fields(cls):
        names.add(name)
        if isinstance(st.value, ast.Call):
            for k in st.value.keywords:
                if k.arg in ("alias", "validation_alias") and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str):
                    names.add(k.value.value)
    return {"class": cls.node.name, "fields": sorted(names), "source": f"{cls.mod.rel}:{cls.node.lineno}"}
