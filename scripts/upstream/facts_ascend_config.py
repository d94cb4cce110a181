"""The `additional_config` keys of `facts_ascend.py`: `ConfigReads`, a small
abstract interpreter over the package's reads of the dict, and
`additional_config`, its table."""

from __future__ import annotations

import ast

from facts_ascend_package import Module, Package, _str_const


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
