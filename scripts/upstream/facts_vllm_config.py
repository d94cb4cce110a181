"""Facts of vLLM's config files for `facts_vllm.py`, read from their AST
rather than by the interpreter: the start-up refusals of context-parallel
sizes (vllm/config/parallel.py) and what the V2 model runner refuses
(vllm/config/vllm.py); with `_read`, `_parents` and `_raises`, which
facts_vllm_speculative.py uses too."""

from __future__ import annotations

import ast

from facts_sp_moe import property_terms
from facts_vllm_source import FactsError, Source


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
    kept, or `VLLM_USE_V2_MODEL_RUNNER=1` raises, when one applies; vLLM
    0.20.2 appends them in `_validate_v2_model_runner` itself, which raises),
    and `DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES`. `None` before the V2 runner."""
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
    gate = _v2_gate(tree)
    for node in ast.walk(tree):
        if node is gate:
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
    refusal, line = _v2_refusal(tree)
    return {
        "unsupported": sorted(unsupported),
        "default_architectures": sorted(archs),
        "source": VLLM_CONFIG,
        "refusal": refusal,
        "refusal_source": f"{VLLM_CONFIG}:{line}",
    }


def _v2_refusal(tree: ast.Module) -> tuple[str, int]:
    """The words vLLM raises its V2-runner refusal with, before the list of
    what it does not support, and the `raise`'s line: the `ValueError` of
    `_validate_v2_model_runner` whose message joins `unsupported`
    ("VLLM_USE_V2_MODEL_RUNNER does not yet support:" at 0.20.2 and 0.22.1,
    "Model Runner V2 does not yet support:" from 0.23.0), its leading
    string constant (`"..." + ", ".join(...)` or an f-string)."""
    fn = next(
        (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_validate_v2_model_runner"),
        None,
    )
    if fn is None:
        raise FactsError(f"`{VLLM_CONFIG}`: no `_validate_v2_model_runner`; vLLM's V2-runner refusal moved")
    for r in ast.walk(fn):
        if not (
            isinstance(r, ast.Raise)
            and isinstance(r.exc, ast.Call)
            and ast.unparse(r.exc.func) == "ValueError"
            and r.exc.args
            and "unsupported" in ast.unparse(r.exc.args[0])
        ):
            continue
        msg = r.exc.args[0]
        head = msg.left if isinstance(msg, ast.BinOp) else msg.values[0] if isinstance(msg, ast.JoinedStr) else msg
        if isinstance(head, ast.Constant) and isinstance(head.value, str) and head.value.strip():
            return head.value.strip(), r.lineno
    raise FactsError(f"`{VLLM_CONFIG}`: `_validate_v2_model_runner` raises no ValueError joining `unsupported`")


def _v2_gate(tree: ast.Module) -> ast.FunctionDef | None:
    """The function of vllm/config/vllm.py that collects what the V2 model
    runner refuses: `_get_v2_model_runner_unsupported_features` (vLLM
    0.22.1+), else `_validate_v2_model_runner` (0.20.2, where it raises on
    the list itself); `None` before the V2 runner."""
    funcs = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    return funcs.get("_get_v2_model_runner_unsupported_features") or funcs.get("_validate_v2_model_runner")


def _appends(stmts: list[ast.stmt]) -> bool:
    """Whether `stmts` append to `unsupported` themselves (not in a nested
    `if`)."""
    return any(
        isinstance(s, ast.Expr)
        and isinstance(s.value, ast.Call)
        and isinstance(s.value.func, ast.Attribute)
        and s.value.func.attr == "append"
        and ast.unparse(s.value.func.value) == "unsupported"
        for s in stmts
    )


def _method_truth(test: ast.expr, method: str) -> bool | None:
    """`test` evaluated for a speculative config of `method`: compares of
    `<x>.method` with `==`, `!=`, `in`, `not in` string constants, and
    `<x>speculative_config is not None` (true: the layout has one), joined
    by `and`/`or`; `None` when it reads anything else (the branch depends
    on more than the method)."""
    if isinstance(test, ast.BoolOp):
        vals = [_method_truth(v, method) for v in test.values]
        if isinstance(test.op, ast.And):
            return False if False in vals else (None if None in vals else True)
        return True if True in vals else (None if None in vals else False)
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, op, right = ast.unparse(test.left), test.ops[0], test.comparators[0]
    if isinstance(op, ast.IsNot) and left.endswith("speculative_config") and ast.unparse(right) == "None":
        return True
    if not left.endswith("speculative_config.method"):
        return None
    if isinstance(right, ast.Constant) and isinstance(right.value, str) and isinstance(op, (ast.Eq, ast.NotEq)):
        return (method == right.value) == isinstance(op, ast.Eq)
    if (
        isinstance(right, (ast.Tuple, ast.List, ast.Set))
        and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in right.elts)
        and isinstance(op, (ast.In, ast.NotIn))
    ):
        return (method in [e.value for e in right.elts]) == isinstance(op, ast.In)
    return None


def v2_speculative_methods(source: Source, methods: list[str]) -> dict | None:
    """Which of `methods` (the release's `SpeculativeConfig` methods) the V2
    model runner refuses: the `if`/`elif` chains of the gate (`_v2_gate`)
    whose tests read only the speculative method, each evaluated per method
    as `SpeculativeConfig` leaves it (an MTP model type `deepseek_mtp` is
    rewritten to `mtp` first); a method is refused when the first branch
    whose test holds appends to `unsupported` (0.20.2: `method not in
    ("eagle", "eagle3", "mtp")`; 0.22.1-0.29.0: `in ("ngram", "ngram_gpu")`
    then `elif not in (...)`; 0.30.0: `in (...)` alone). A chain whose test
    also reads another setting (`parallel_drafting`, the PP size) refuses
    nothing here. `source`: `path:line` of the first refusing chain's `if`.
    `None` before the V2 runner, or when no chain refuses."""
    text = _read(source, VLLM_CONFIG)
    if text is None:
        return None
    gate = _v2_gate(ast.parse(text, VLLM_CONFIG))
    if gate is None:
        return None
    parent = _parents(gate)
    heads = [
        n
        for n in ast.walk(gate)
        if isinstance(n, ast.If)
        and ".method" in ast.unparse(n.test)
        and not (isinstance(parent.get(n), ast.If) and parent[n].orelse == [n])
    ]
    refused: dict[str, str] = {}
    first: int | None = None

    def refuse(m: str, seen: str, stmts: list[ast.stmt], line: int) -> None:
        nonlocal first
        if m not in refused:
            refused[m] = _appended(stmts, seen)
        first = line if first is None else min(first, line)

    for head in sorted(heads, key=lambda n: n.lineno):
        for m in methods:
            seen = "mtp" if m.endswith("_mtp") else m
            node: ast.If | None = head
            while node is not None:
                truth = _method_truth(node.test, seen)
                if truth is None:
                    break
                if truth:
                    if _appends(node.body):
                        refuse(m, seen, node.body, head.lineno)
                    break
                if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
                    node = node.orelse[0]
                else:
                    if node.orelse and _appends(node.orelse):
                        refuse(m, seen, node.orelse, head.lineno)
                    node = None
    if first is None:
        return None
    return {
        "refused": sorted(refused),
        "features": {m: refused[m] for m in sorted(refused)},
        "source": f"{VLLM_CONFIG}:{first}",
    }


def _appended(stmts: list[ast.stmt], method: str) -> str:
    """What `stmts` append to `unsupported` for a speculative config of
    `method`, as vLLM words it: a string constant, or an f-string whose
    only value is the config's `.method` (0.20.2, 0.22.1-0.29.0:
    "speculative method '<m>'")."""
    for s in stmts:
        if not (
            isinstance(s, ast.Expr)
            and isinstance(s.value, ast.Call)
            and isinstance(s.value.func, ast.Attribute)
            and s.value.func.attr == "append"
            and s.value.args
        ):
            continue
        arg = s.value.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return arg.value
        if isinstance(arg, ast.JoinedStr):
            parts = []
            for v in arg.values:
                if isinstance(v, ast.Constant):
                    parts.append(str(v.value))
                elif isinstance(v, ast.FormattedValue) and ast.unparse(v.value).endswith(".method"):
                    parts.append(method)
                else:
                    raise FactsError(f"`{VLLM_CONFIG}`:{s.lineno}: the V2 runner's refusal of a method reads `{ast.unparse(v)}`")
            return "".join(parts)
        raise FactsError(f"`{VLLM_CONFIG}`:{s.lineno}: the V2 runner appends `{ast.unparse(arg)}`, not a string")
    raise FactsError(f"`{VLLM_CONFIG}`: a refusing branch of the V2 runner appends nothing")


def _read(source: Source, rel: str) -> str | None:
    text = source.overrides.get(rel)
    if text is None:
        path = source.root / rel
        if not path.is_file():
            return None
        text = path.read_text(encoding="utf-8")
    return text


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    parent: dict[ast.AST, ast.AST] = {}
    for n in ast.walk(tree):
        for c in ast.iter_child_nodes(n):
            parent[c] = n
    return parent


COMPILATION = "vllm/config/compilation.py"
GPU_RUNNER = "vllm/v1/worker/gpu_model_runner.py"


def spec_decode_sp_alignment(source: Source) -> dict | None:
    """vLLM's refusal of capture sizes that cannot be multiples of both the
    decode step and TP (`CompilationConfig.adjust_cudagraph_sizes_for_spec_decode`,
    vllm/config/compilation.py): under `if tensor_parallel_size > 1 and
    self.pass_config.enable_sp:` the step is `max(uniform_decode_query_len,
    tensor_parallel_size)`, and an `if` raises when it is not a multiple of
    both. `source`: `path:line` of that `if`. `call`: `path:line` of the
    V1 runner's call (vllm/config/compilation.py from vLLM 0.20.2, the GPU
    model runner before), made under `decode_mode() == CUDAGraphMode.FULL`;
    `needs_separate_routine`: the call also needs `separate_routine()`, which
    vLLM's `FULL` mode lacks and `FULL_DECODE_ONLY` has (vLLM 0.18.0,
    0.19.1). `None` without the refusal."""
    text = _read(source, COMPILATION)
    if text is None:
        return None
    tree = ast.parse(text, COMPILATION)
    fn = next(
        (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "adjust_cudagraph_sizes_for_spec_decode"),
        None,
    )
    if fn is None:
        return None
    at = None
    for sp in ast.walk(fn):
        if not (
            isinstance(sp, ast.If)
            and {"tensor_parallel_size > 1", "self.pass_config.enable_sp"}
            <= {ast.unparse(v) for v in (sp.test.values if isinstance(sp.test, ast.BoolOp) else [sp.test])}
        ):
            continue
        takes_max = any(
            isinstance(s, ast.Assign) and ast.unparse(s.value) == "max(uniform_decode_query_len, tensor_parallel_size)"
            for s in sp.body
        )
        for r in sp.body:
            test = ast.unparse(r.test) if isinstance(r, ast.If) else ""
            if (
                takes_max
                and isinstance(r, ast.If)
                and _raises(r)
                and "% uniform_decode_query_len != 0" in test
                and "% tensor_parallel_size != 0" in test
            ):
                at = r.lineno
    if at is None:
        return None
    return {"source": f"{COMPILATION}:{at}", **_spec_decode_call(source)}


def _spec_decode_call(source: Source) -> dict:
    """`call` and `needs_separate_routine` of `spec_decode_sp_alignment`."""
    call = None
    for rel in (COMPILATION, GPU_RUNNER):
        t = _read(source, rel)
        if t is None:
            continue
        mod = ast.parse(t, rel)
        parent = _parents(mod)
        for c in ast.walk(mod):
            if not (
                isinstance(c, ast.Call)
                and isinstance(c.func, ast.Attribute)
                and c.func.attr == "adjust_cudagraph_sizes_for_spec_decode"
            ):
                continue
            up = parent.get(c)
            while up is not None and not isinstance(up, ast.If):
                up = parent.get(up)
            if up is None or "decode_mode() == CUDAGraphMode.FULL" not in ast.unparse(up.test):
                raise FactsError(f"`{rel}`:{c.lineno}: the call of `adjust_cudagraph_sizes_for_spec_decode` is not under `decode_mode() == CUDAGraphMode.FULL`")
            call = {"call": f"{rel}:{c.lineno}", "needs_separate_routine": "separate_routine()" in ast.unparse(up.test)}
        if call:
            break
    if call is None:
        raise FactsError(f"`{COMPILATION}`: nothing calls `adjust_cudagraph_sizes_for_spec_decode`")
    return call


def spec_decode_rounding(source: Source) -> dict | None:
    """vLLM's refusal of capture sizes none of which, rounded up to the
    decode step (`multiple_of`, at least `uniform_decode_query_len`), fits
    under the largest (`CompilationConfig.adjust_cudagraph_sizes_for_spec_decode`):
    the `if len(rounded_sizes) == 0:` that raises, after the fallback to
    `[multiple_of]` when `multiple_of <= self.max_cudagraph_capture_size`.
    `source`: `path:line` of that `if`; `call`, `needs_separate_routine` as in
    `spec_decode_sp_alignment`. `None` without it."""
    text = _read(source, COMPILATION)
    if text is None:
        return None
    tree = ast.parse(text, COMPILATION)
    fn = next(
        (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "adjust_cudagraph_sizes_for_spec_decode"),
        None,
    )
    if fn is None:
        return None
    fallback = False
    for x in fn.body:
        if not isinstance(x, ast.If):
            continue
        test = ast.unparse(x.test)
        if (
            test == "len(rounded_sizes) == 0 and multiple_of <= self.max_cudagraph_capture_size"
            and ast.unparse(x.body[0]) == "rounded_sizes = [multiple_of]"
        ):
            fallback = True
        if fallback and test == "len(rounded_sizes) == 0" and _raises(x):
            return {"source": f"{COMPILATION}:{x.lineno}", **_spec_decode_call(source)}
    return None


# The default capture-size grid of `VllmConfig._set_cudagraph_sizes` up to
# the largest size `m`: 1, 2, 4, then every 8 below 256, then every 16 (the
# statements below, each required as written; pd-dsl's
# `upstream::default_size_grid` builds the same, and
# graph_sizes_oracle.py runs the function itself against it).
_GRID = (
    "[i for i in [1, 2, 4] if i <= max_cudagraph_capture_size]",
    "list(range(8, min(max_cudagraph_capture_size + 1, 256), 8))",
    "list(range(256, max_cudagraph_capture_size + 1, 16))",
)


def default_capture_grid(source: Source) -> dict:
    """How `VllmConfig._set_cudagraph_sizes` (vllm/config/vllm.py) lists the
    capture sizes when none is typed, up to the largest size it settles on:
    the grid `_GRID` (required; a release that lists them otherwise fails
    the facts), and `appends_max_num_tokens`: an `if` that appends
    `max_num_tokens` (the `max_num_batched_tokens`) when it is not above the
    largest and not in the list (from vLLM 0.20.2). Typed sizes above
    `max_num_tokens` are dropped (required); `positive_largest`: `path:line`
    of the `assert` that the largest size is at least 1. `source`:
    `path:line` of the function."""
    text = _read(source, VLLM_CONFIG)
    if text is None:
        raise FactsError(f"`{VLLM_CONFIG}` is missing")
    tree = ast.parse(text, VLLM_CONFIG)
    fn = next(
        (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_set_cudagraph_sizes"),
        None,
    )
    if fn is None:
        raise FactsError(f"`{VLLM_CONFIG}`: no `_set_cudagraph_sizes`")
    exprs = {ast.unparse(n) for n in ast.walk(fn) if isinstance(n, (ast.ListComp, ast.Call))}
    missing = [g for g in _GRID if g not in exprs]
    if missing:
        raise FactsError(f"`{VLLM_CONFIG}`:{fn.lineno}: `_set_cudagraph_sizes` no longer lists the default sizes as `{missing[0]}`")
    appends = any(
        isinstance(x, ast.If)
        and "max_num_tokens not in cudagraph_capture_sizes" in ast.unparse(x.test)
        and "max_num_tokens <= max_cudagraph_capture_size" in ast.unparse(x.test)
        and [ast.unparse(b) for b in x.body] == ["cudagraph_capture_sizes.append(max_num_tokens)"]
        for x in ast.walk(fn)
    )
    # Typed sizes: those above `max_num_tokens` are dropped
    # (`[i for i in dedup_sizes if i <= max_num_tokens]`), and the largest
    # size then kept must be at least 1 (`assert max_cudagraph_capture_size
    # >= 1`), which fails when vllm-ascend sizes the graphs again after
    # none was kept (its second `_set_cudagraph_sizes()`).
    if "[i for i in dedup_sizes if i <= max_num_tokens]" not in exprs:
        raise FactsError(f"`{VLLM_CONFIG}`:{fn.lineno}: `_set_cudagraph_sizes` no longer keeps the typed sizes up to `max_num_tokens` as `[i for i in dedup_sizes if i <= max_num_tokens]`")
    asserts = [
        x.lineno
        for x in ast.walk(fn)
        if isinstance(x, ast.Assert) and ast.unparse(x.test) == "max_cudagraph_capture_size >= 1"
    ]
    if len(asserts) != 1:
        raise FactsError(f"`{VLLM_CONFIG}`:{fn.lineno}: `_set_cudagraph_sizes` has {len(asserts)} `assert max_cudagraph_capture_size >= 1`, expected one")
    return {
        "appends_max_num_tokens": appends,
        "positive_largest": f"{VLLM_CONFIG}:{asserts[0]}",
        "source": f"{VLLM_CONFIG}:{fn.lineno}",
    }


def sequence_parallel_moe(source: Source) -> dict | None:
    """What turns vLLM's sequence-parallel MoE on (`ParallelConfig`,
    vllm/config/parallel.py): the property `use_sequence_parallel_moe`'s
    `backends` and `requires` (facts_sp_moe.py), the `all2all_backend`
    field's `default`, and `replaced`: the backends `__post_init__` swaps for
    another (`if self.all2all_backend in [...]: self.all2all_backend = X`),
    each to what it becomes. `source`: `path:line` of the property. `None`
    without it."""
    text = _read(source, PARALLEL_CONFIG)
    if text is None:
        return None
    tree = ast.parse(text, PARALLEL_CONFIG)
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ParallelConfig"), None)
    if cls is None:
        return None
    prop = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "use_sequence_parallel_moe"), None)
    if prop is None:
        return None
    try:
        terms = property_terms(prop)
    except ValueError as e:
        raise FactsError(f"{PARALLEL_CONFIG}: {e}") from e
    default = next(
        (
            n.value.value
            for n in cls.body
            if isinstance(n, ast.AnnAssign)
            and ast.unparse(n.target) == "all2all_backend"
            and isinstance(n.value, ast.Constant)
        ),
        None,
    )
    if default is None:
        raise FactsError(f"{PARALLEL_CONFIG}: `ParallelConfig.all2all_backend` has no constant default")
    replaced: dict[str, str] = {}
    for node in ast.walk(cls):
        if not (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Compare)
            and ast.unparse(node.test.left) == "self.all2all_backend"
            and isinstance(node.test.ops[0], ast.In)
            and isinstance(node.test.comparators[0], (ast.List, ast.Tuple, ast.Set))
        ):
            continue
        to = [
            s.value.value
            for s in node.body
            if isinstance(s, ast.Assign)
            and [ast.unparse(t) for t in s.targets] == ["self.all2all_backend"]
            and isinstance(s.value, ast.Constant)
        ]
        if to:
            for e in node.test.comparators[0].elts:
                if isinstance(e, ast.Constant) and isinstance(e.value, str):
                    replaced[e.value] = to[-1]
    return {
        **terms,
        "default": default,
        "replaced": dict(sorted(replaced.items())),
        "source": f"{PARALLEL_CONFIG}:{prop.lineno}",
    }


MODELS_CONFIG = "vllm/model_executor/models/config.py"
MODELS_DIR = "vllm/model_executor/models"


def _model_classes_with(source: Source, interface: str) -> list[str]:
    """The model classes of vllm/model_executor/models that implement
    `interface` (`SupportsMambaPrefixCaching`, `IsHybrid`): those naming it
    among their bases, and their subclasses there, by class name."""
    bases: dict[str, set[str]] = {}
    root = source.root / MODELS_DIR
    rels = sorted({f"{MODELS_DIR}/{p.name}" for p in root.glob("*.py")} | {r for r in source.overrides if r.startswith(MODELS_DIR + "/")})
    for rel in rels:
        text = _read(source, rel)
        if text is None:
            continue
        for n in ast.walk(ast.parse(text, rel)):
            if isinstance(n, ast.ClassDef):
                names = {b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in n.bases}
                bases.setdefault(n.name, set()).update(names)
    found = {interface}
    grew = True
    while grew:
        grew = False
        for cls, bs in bases.items():
            if cls not in found and bs & found:
                found.add(cls)
                grew = True
    found.discard(interface)
    return sorted(found)


def mamba_align(source: Source) -> dict | None:
    """vLLM's Mamba cache 'align' mode, which hybrid models run in with prefix
    caching on, and what `VllmConfig` asserts of an engine in it.

    `prefix_caching`: `path:line` of `MambaModelConfig.verify_and_update_config`'s
    `if cache_config.enable_prefix_caching:` (vllm/model_executor/models/
    config.py) when its body sets `mamba_cache_mode` to "align" (for a model
    whose class does not support Mamba prefix caching); `hybrid`: the model
    classes vLLM sizes as hybrid (`IsHybrid` and its subclasses: their
    `is_hybrid` sends `HybridAttentionMambaModelConfig`, and so
    `MambaModelConfig`, over them, vllm/config/vllm.py); `classes`: those
    supporting Mamba prefix caching (`SupportsMambaPrefixCaching` and its
    subclasses), which run in 'all' mode instead. `source`: `path:line` of `if
    self.cache_config.mamba_cache_mode == "align":` in vllm/config/vllm.py,
    and under it each assert's `path:line`, `None` without it:
    `block_within_batch` (`block_size <= ...max_num_batched_tokens`),
    `v2_runner` (`not envs.VLLM_USE_V2_MODEL_RUNNER`). `None` without that
    `if` or without the prefix-caching switch."""
    text = _read(source, VLLM_CONFIG)
    models = _read(source, MODELS_CONFIG)
    if text is None or models is None:
        return None
    switch = None
    for cls in ast.parse(models, MODELS_CONFIG).body:
        if not (isinstance(cls, ast.ClassDef) and cls.name == "MambaModelConfig"):
            continue
        for n in ast.walk(cls):
            if (
                isinstance(n, ast.If)
                and ast.unparse(n.test) == "cache_config.enable_prefix_caching"
                and any(
                    isinstance(a, ast.Assign)
                    and [ast.unparse(t) for t in a.targets] == ["cache_config.mamba_cache_mode"]
                    and any(isinstance(c, ast.Constant) and c.value == "align" for c in ast.walk(a.value))
                    for b in n.body
                    for a in ast.walk(b)
                )
            ):
                switch = f"{MODELS_CONFIG}:{n.lineno}"
                break
    if switch is None:
        return None
    for node in ast.walk(ast.parse(text, VLLM_CONFIG)):
        if not (isinstance(node, ast.If) and ast.unparse(node.test) == "self.cache_config.mamba_cache_mode == 'align'"):
            continue
        out: dict = {"block_within_batch": None, "v2_runner": None}
        for a in node.body:
            if not isinstance(a, ast.Assert):
                continue
            test = ast.unparse(a.test)
            if test == "block_size <= self.scheduler_config.max_num_batched_tokens":
                out["block_within_batch"] = f"{VLLM_CONFIG}:{a.lineno}"
            elif test == "not envs.VLLM_USE_V2_MODEL_RUNNER":
                out["v2_runner"] = f"{VLLM_CONFIG}:{a.lineno}"
        return {
            "prefix_caching": switch,
            "hybrid": _model_classes_with(source, "IsHybrid"),
            "classes": _model_classes_with(source, "SupportsMambaPrefixCaching"),
            **out,
            "source": f"{VLLM_CONFIG}:{node.lineno}",
        }
    return None
