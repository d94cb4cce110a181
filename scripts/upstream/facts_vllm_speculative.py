"""The speculative-decoding facts of `facts_vllm.py`, from
vllm/config/speculative.py and vllm/config/vllm.py: the methods
`SpeculativeConfig` accepts and which of them need a draft model, those
`--async-scheduling` runs with, and the batch slots reserved for drafting."""

from __future__ import annotations

import ast

from facts_vllm_config import VLLM_CONFIG, _parents, _raises, _read
from facts_vllm_source import FactsError, Source


SPECULATIVE = "vllm/config/speculative.py"


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


def aux_hidden_states(source: Source) -> dict | None:
    """vLLM's gate on methods that read the target's auxiliary hidden states
    (`SpeculativeConfig._verify_args`, vllm/config/speculative.py): a raising
    `if self.method in (...) and ... not any(supported in
    ...hf_text_config.model_type for supported in <list>)`, the list a local
    `<list> = [...]` of the function. `methods`: the tuple the method is
    tested against; `model_types`: the list, matched as substrings of the
    target's text `model_type`; `source`: `path:line` of the `if`. `None`
    where no such gate is (vLLM 0.22.1 on)."""
    text = _read(source, SPECULATIVE)
    if text is None:
        return None
    tree = ast.parse(text, SPECULATIVE)
    fn = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_verify_args"), None)
    if fn is None:
        return None
    lists: dict[str, list[str]] = {}
    for n in ast.walk(fn):
        if (
            isinstance(n, ast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name)
            and isinstance(n.value, (ast.List, ast.Tuple))
            and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in n.value.elts)
        ):
            lists[n.targets[0].id] = [e.value for e in n.value.elts]
    for node in ast.walk(fn):
        if not (isinstance(node, ast.If) and _raises(node)):
            continue
        gen = next(
            (
                g
                for g in ast.walk(node.test)
                if isinstance(g, ast.GeneratorExp)
                and len(g.generators) == 1
                and isinstance(g.generators[0].iter, ast.Name)
                and g.generators[0].iter.id in lists
                and isinstance(g.elt, ast.Compare)
                and isinstance(g.elt.ops[0], ast.In)
                and ast.unparse(g.elt.comparators[0]).endswith("hf_text_config.model_type")
            ),
            None,
        )
        if gen is None:
            continue
        methods = None
        for c in ast.walk(node.test):
            if isinstance(c, ast.Compare) and ast.unparse(c.left) == "self.method":
                methods = _method_test(c)
        if methods is None:
            raise FactsError(f"`{SPECULATIVE}`:{node.lineno}: the aux-hidden-states gate tests no `self.method in (...)`")
        # `not any(...)`: the gate raises when no entry matches.
        negated = any(
            isinstance(u, ast.UnaryOp) and isinstance(u.op, ast.Not) and isinstance(u.operand, ast.Call)
            and ast.unparse(u.operand.func) == "any" and gen in u.operand.args
            for u in ast.walk(node.test)
        )
        if not negated:
            raise FactsError(f"`{SPECULATIVE}`:{node.lineno}: the aux-hidden-states gate is not `not any(...)`")
        return {"methods": methods, "model_types": lists[gen.generators[0].iter.id], "source": f"{SPECULATIVE}:{node.lineno}"}
    return None
