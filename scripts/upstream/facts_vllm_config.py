"""Facts of vLLM's config files for `facts_vllm.py`, read from their AST
rather than by the interpreter: the start-up refusals of context-parallel
sizes (vllm/config/parallel.py) and what the V2 model runner refuses
(vllm/config/vllm.py); with `_read`, `_parents` and `_raises`, which
facts_vllm_speculative.py uses too."""

from __future__ import annotations

import ast

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
