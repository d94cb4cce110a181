"""The terms of `ParallelConfig.use_sequence_parallel_moe`, the property that
turns sequence-parallel MoE on, read from its AST: shared by the vLLM reader
(vllm/config/parallel.py, `facts_vllm_config.sequence_parallel_moe`) and the
vllm-ascend one (the platform patch that redefines it,
`facts_ascend_features.sp_moe`). Raises `ValueError` for a body it cannot
read, so a changed property fails the generation instead of being guessed."""

from __future__ import annotations

import ast


def property_terms(fn: ast.FunctionDef) -> dict:
    """`backends` (the `all2all_backend in (...)` tuple, sorted) and
    `requires` (the other `and` terms, sorted: a bare `self.<attr>` as
    `<attr>`, `self.<attr> > N` as `<attr> > N`) of a property returning one
    `and` of them."""
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        raise ValueError(f"`{fn.name}` (line {fn.lineno}) is not a single `return`")
    value = body[0].value
    terms = value.values if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And) else [value]
    backends: list[str] | None = None
    requires: list[str] = []
    for t in terms:
        if (
            isinstance(t, ast.Compare)
            and ast.unparse(t.left) == "self.all2all_backend"
            and len(t.ops) == 1
            and isinstance(t.ops[0], ast.In)
            and isinstance(t.comparators[0], (ast.Tuple, ast.List, ast.Set))
            and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in t.comparators[0].elts)
        ):
            backends = sorted(e.value for e in t.comparators[0].elts)
        elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
            requires.append(t.attr)
        elif (
            isinstance(t, ast.Compare)
            and isinstance(t.left, ast.Attribute)
            and ast.unparse(t.left.value) == "self"
            and len(t.ops) == 1
            and isinstance(t.ops[0], ast.Gt)
            and isinstance(t.comparators[0], ast.Constant)
            and isinstance(t.comparators[0].value, int)
        ):
            requires.append(f"{t.left.attr} > {t.comparators[0].value}")
        else:
            raise ValueError(f"`{fn.name}` (line {fn.lineno}) has a term pd-dsl does not read: `{ast.unparse(t)}`")
    if backends is None:
        raise ValueError(f"`{fn.name}` (line {fn.lineno}) tests no `self.all2all_backend in (...)`")
    return {"backends": backends, "requires": sorted(requires)}
