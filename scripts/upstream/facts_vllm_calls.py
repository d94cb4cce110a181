"""The abstract interpreter of `facts_vllm.py`, part two: `Caller` follows
calls (functions, methods, classes, `super()`) and records every
`add_argument` on the parser; `flag_kind` and `type_is_json` decide a flag's
kind from its kwargs as argparse would."""

from __future__ import annotations

import ast
from typing import Any

from facts_vllm_eval import (
    ActionSym,
    Bound,
    Evaluator,
    Frame,
    Group,
    KwError,
    Lambda,
    Method,
    Opaque,
    Parser,
    Return,
    Subparsers,
    SuperProxy,
    TypeFn,
    _mentions_json,
)
from facts_vllm_source import ClassObj, External, FactsError, FuncObj, Module, Unknown, describe
from facts_vllm_types import TH


class Caller(Evaluator):
    """Calls, classes and the parser's methods."""

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
        option = {
            "name": longs[0][2:],
            "kind": kind,
            "aliases": sorted(a for a in args if a != longs[0]),
            "negatable": negatable,
            "source": m.rel,
        }
        if kind == "json":
            pattern = text_unless_pattern(kwargs.get("type"))
            if pattern is not None:
                option["text_unless"] = pattern
            keys = getattr(kwargs.get("type"), "keys", None)
            if keys is not None:
                option["keys"] = keys
        if kwargs.get("nargs") == "?":
            # A bare use takes the `const` (vllm/engine/arg_utils.py
            # `_compute_kwargs`: `bool | str | None` fields, e.g. `--hf-token`).
            option["value_optional"] = True
        if kind in ("value", "many"):
            option["type"] = type_fact(kwargs.get("type"))
        if kwargs.get("choices") is not None:
            option["choices"] = choices_fact(kwargs["choices"])
        parser.options.append(option)


# The one `lambda` `type=` whose conversion is known: vllm/engine/arg_utils.py
# (`moe_backend_kwargs["type"]` and its neighbours, 0.18.0 on).
LOWER_UNDERSCORE = "lambda s: s.lower().replace('-', '_')"


def choice_conversion(t: Any) -> tuple[str | None, bool]:
    """How argparse's `type=` turns a word into the value the option takes
    (and looks up in its `choices`): `str`, `int`, `float` or
    `lower_underscore` (None when not known), and whether `optional_type`
    wraps it."""
    if t is None:
        return "str", False  # argparse's default: the word itself
    if isinstance(t, TypeFn):
        return t.conv, t.optional
    if isinstance(t, TH) and t.module == "builtins" and t.origin in ("str", "int", "float"):
        return t.origin, False
    if isinstance(t, External) and t.name in ("builtins.str", "builtins.int", "builtins.float"):
        return t.name.split(".")[1], False
    if isinstance(t, Lambda) and ast.unparse(t.node) == LOWER_UNDERSCORE:
        return "lower_underscore", False
    return None, False


def text_unless_pattern(t: Any) -> str | None:
    """The regex a JSON option's `type=` helper tests a word with before it
    parses it, keeping any other word as text: `if not re.match(PATTERN,
    val): return str(val)` as the helper's first statement
    (vllm/engine/arg_utils.py `union_dict_and_str`: `--hf-overrides`,
    `--additional-config`, ...). None for a helper that parses every word."""
    if not isinstance(t, FuncObj):
        return None
    for st in t.node.body:
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
            continue  # the docstring
        if not (isinstance(st, ast.If) and isinstance(st.test, ast.UnaryOp) and isinstance(st.test.op, ast.Not)):
            return None
        call = st.test.operand
        is_match = (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "match"
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id == "re"
            and call.args
            and isinstance(call.args[0], ast.Constant)
            and isinstance(call.args[0].value, str)
        )
        keeps_text = (
            len(st.body) == 1
            and isinstance(st.body[0], ast.Return)
            and isinstance(st.body[0].value, ast.Call)
            and isinstance(st.body[0].value.func, ast.Name)
            and st.body[0].value.func.id == "str"
        )
        return call.args[0].value if is_match and keeps_text else None
    return None


def type_fact(t: Any) -> dict:
    """The `type=` of a valued option: the conversion argparse runs on each
    word (a word it cannot convert ends the start), or why it is not known
    (a vLLM helper such as `human_readable_int`, JSON)."""
    conv, optional = choice_conversion(t)
    if conv is None:
        if isinstance(t, TypeFn):
            what = f"`{t.desc}`"
        elif isinstance(t, Lambda):
            what = f"`{ast.unparse(t.node)}`"
        else:
            what = describe(t)
        return {"unread": f"the `type=` {what} (how it converts a word is not known)"}
    return {"convert": conv, "optional": optional}


def choices_fact(choices: Any) -> dict:
    """The `choices` of one option, or why they cannot be read (a list
    built at run time)."""
    if isinstance(choices, Unknown):
        return {"unread": choices.why}
    ok = isinstance(choices, (list, tuple)) and all(
        isinstance(c, (str, int)) and not isinstance(c, bool) for c in choices
    )
    if not ok:
        return {"unread": f"choices {describe(choices)}"}
    return {"values": list(choices)}


def type_is_json(t: Any, interp: Caller, seen: int = 0) -> bool | None:
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


def flag_kind(kw: dict, where: str, names: list, interp: Caller) -> tuple[str, bool]:
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
