"""The start-up refusals of parallel sizes in vllm-ascend, for
`facts_ascend.py`: prefill context parallelism (PCP) and its patches of
vLLM's `ParallelConfig`, the V2-runner features it allows again, fine-grained
tensor parallelism and the CP interleave size."""

from __future__ import annotations

import ast

from facts_ascend_package import FactsError, Package


# --------------------------------------------------------------------------------------
# Start-up refusals of prefill context parallelism
# --------------------------------------------------------------------------------------


def pcp_refusals(pkg: Package) -> list[dict]:
    """Every `if` of a `_validate_parallel_config` (method or function) whose
    condition tests `prefill_context_parallel_size > ...` and whose body raises: the
    platform's start-up refusals of PCP. `with` names what else the condition
    reads (`data_parallel_size`: refused with DP; `use_v2_model_runner`:
    refused on the V1 model runner), sorted by path and line."""
    out = []
    for rel, mod in pkg.modules.items():
        if "_validate_parallel_config" not in mod.text:
            continue
        for fn in ast.walk(mod.tree):
            if not (isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name == "_validate_parallel_config"):
                continue
            for node in ast.walk(fn):
                if not isinstance(node, ast.If):
                    continue
                cond = ast.unparse(node.test)
                if not any(
                    isinstance(c, ast.Compare)
                    and isinstance(c.left, ast.Attribute)
                    and c.left.attr == "prefill_context_parallel_size"
                    and isinstance(c.ops[0], ast.Gt)
                    for c in ast.walk(node.test)
                ):
                    continue
                if not any(isinstance(x, ast.Raise) for b in node.body for x in ast.walk(b)):
                    continue
                reads = sorted(
                    {
                        a.attr
                        for a in ast.walk(node.test)
                        if isinstance(a, ast.Attribute) and a.attr in ("data_parallel_size", "use_v2_model_runner")
                    }
                )
                out.append({"with": reads, "condition": cond, "source": f"{rel}:{node.lineno}"})
    return sorted(out, key=lambda r: r["source"])


def v2_runner_allows(pkg: Package) -> list[dict]:
    """The features of vLLM's V2-runner refusal list that the package's
    patch takes out again: the string constants removed from the list inside
    `_patched_get_unsupported_features` (vllm_ascend/patch/platform/
    patch_use_v2_model_runner.py), with where. A `vllm_version_is(...)`
    guard in the same `if` is kept as `only_vllm`."""
    out = []
    for rel, mod in pkg.modules.items():
        if "_patched_get_unsupported_features" not in mod.text:
            continue
        for fn in ast.walk(mod.tree):
            if not (isinstance(fn, ast.FunctionDef) and fn.name == "_patched_get_unsupported_features"):
                continue
            for node in ast.walk(fn):
                if not isinstance(node, ast.If):
                    continue
                only = None
                for c in ast.walk(node.test):
                    if (
                        isinstance(c, ast.Call)
                        and isinstance(c.func, ast.Name)
                        and c.func.id == "vllm_version_is"
                        and c.args
                        and isinstance(c.args[0], ast.Constant)
                    ):
                        only = c.args[0].value
                for stmt in node.body:
                    for call in ast.walk(stmt):
                        if (
                            isinstance(call, ast.Call)
                            and isinstance(call.func, ast.Attribute)
                            and call.func.attr == "remove"
                            and call.args
                            and isinstance(call.args[0], ast.Constant)
                            and isinstance(call.args[0].value, str)
                        ):
                            out.append({"name": call.args[0].value, "only_vllm": only, "source": f"{rel}:{call.lineno}"})
    return sorted(out, key=lambda r: (r["name"], r["source"]))


def _refuses_pcp_with_dp(fn: ast.AST) -> bool:
    """Whether `fn` holds vLLM's raising `if pcp > 1 and dp > 1`."""
    for node in ast.walk(fn):
        if not (isinstance(node, ast.If) and any(isinstance(x, ast.Raise) for b in node.body for x in ast.walk(b))):
            continue
        reads = {ast.unparse(c.left) for c in ast.walk(node.test) if isinstance(c, ast.Compare) and isinstance(c.ops[0], ast.Gt)}
        if reads & {"pcp", "self.prefill_context_parallel_size"} and reads & {"self.data_parallel_size", "dp"}:
            return True
    return False


def parallel_config_patches(pkg: Package) -> list[dict]:
    """Where the package replaces vLLM's `ParallelConfig._validate_parallel_config`
    (`if vllm_version_is("V"):` at module level assigning it): under which
    vLLM version, and whether the replacement lets PCP with DP through.
    `lifts_pcp_with_dp`: `always` (the replacement has no `pcp > 1 and dp >
    1` refusal and does not call the original), `when` (it calls the
    original with PCP set aside only under an `if`, whose test is kept as
    `when` with what it reads: `v2_runner` for `VLLM_USE_V2_MODEL_RUNNER`,
    `dcp1` for `decode_context_parallel_size == 1`) or `never`."""
    out = []
    for rel, mod in pkg.modules.items():
        if "_validate_parallel_config" not in mod.text:
            continue
        defs = {n.name: n for n in mod.tree.body if isinstance(n, ast.FunctionDef)}
        for top in mod.tree.body:
            if not isinstance(top, ast.If):
                continue
            only = next(
                (
                    c.args[0].value
                    for c in ast.walk(top.test)
                    if isinstance(c, ast.Call)
                    and isinstance(c.func, ast.Name)
                    and c.func.id == "vllm_version_is"
                    and c.args
                    and isinstance(c.args[0], ast.Constant)
                ),
                None,
            )
            if only is None:
                continue
            inner = {n.name: n for n in top.body if isinstance(n, ast.FunctionDef)}
            for stmt in top.body:
                if not (
                    isinstance(stmt, ast.Assign)
                    and any(ast.unparse(t) == "ParallelConfig._validate_parallel_config" for t in stmt.targets)
                    and isinstance(stmt.value, ast.Name)
                ):
                    continue
                fn = inner.get(stmt.value.id) or defs.get(stmt.value.id)
                if fn is None:
                    raise FactsError(f"{rel}:{stmt.lineno}: `{stmt.value.id}` is not defined in the module")
                calls_original = [
                    c for c in ast.walk(fn) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id.startswith("_original")
                ]
                entry = {"only_vllm": only, "source": f"{rel}:{stmt.lineno}", "when": None, "needs": []}
                if not calls_original:
                    entry["lifts_pcp_with_dp"] = "never" if _refuses_pcp_with_dp(fn) else "always"
                else:
                    guard = next(
                        (n for n in ast.walk(fn) if isinstance(n, ast.If) and any(isinstance(b, ast.With) for b in n.body)),
                        None,
                    )
                    if guard is None:
                        entry["lifts_pcp_with_dp"] = "never"
                    else:
                        test = ast.unparse(guard.test)
                        entry["lifts_pcp_with_dp"] = "when"
                        entry["when"] = test
                        entry["needs"] = sorted(
                            ({"v2_runner"} if "VLLM_USE_V2_MODEL_RUNNER" in test else set())
                            | ({"dcp1"} if "decode_context_parallel_size == 1" in test else set())
                        )
                out.append(entry)
    return sorted(out, key=lambda r: r["source"])


def _size_tests(test: ast.expr) -> list[tuple[str, int]]:
    """`self.X_tensor_parallel_size > N` (also inside `or`): [(X..., N)]."""
    out = []
    for c in ast.walk(test):
        if (
            isinstance(c, ast.Compare)
            and isinstance(c.left, ast.Attribute)
            and c.left.attr.endswith("_tensor_parallel_size")
            and isinstance(c.left.value, ast.Name)
            and c.left.value.id == "self"
            and len(c.ops) == 1
            and isinstance(c.ops[0], ast.Gt)
            and isinstance(c.comparators[0], ast.Constant)
            and isinstance(c.comparators[0].value, int)
        ):
            out.append((c.left.attr, c.comparators[0].value))
    return out


# What a raising `if` inside a size's block requires, by what its test reads.
_FINEGRAINED_NEEDS = {
    "tensor_parallel_size": "tp1",
    "enforce_eager": "graph",
    "cudagraph_mode": "graph",
    "is_kv_consumer": "decode",
    "prefill_context_parallel_size": "no_pcp",
}


def finegrained_tp(pkg: Package) -> dict | None:
    """The preconditions `FinegrainedTPConfig` puts on each fine-grained TP
    size (`additional_config.finegrained_tp_config.*_tensor_parallel_size`):
    for each size an `if self.SIZE > N:` block guards, the bound `above` and
    what its raising `if`s require (`tp1`: `tensor_parallel_size == 1`;
    `graph`: not eager; `decode`: a kv_consumer engine; `no_pcp`: PCP 1);
    `divide_dp`: the sizes that must divide `data_parallel_size` (the list
    its DP loop walks); `disabled_below_capture`: the sizes it turns off with
    a warning when graph capture does not cover the largest step. None when
    the release has no such class."""
    for rel, mod in pkg.modules.items():
        if not rel.endswith("ascend_config.py"):
            continue
        for cls in ast.walk(mod.tree):
            if not (isinstance(cls, ast.ClassDef) and cls.name == "FinegrainedTPConfig"):
                continue
            sizes: dict[str, dict] = {}
            divide: list[str] = []
            disabled: set[str] = set()
            for node in ast.walk(cls):
                if isinstance(node, ast.If):
                    guarded = _size_tests(node.test)
                    if not guarded:
                        continue
                    needs = set()
                    for inner in node.body:
                        for x in ast.walk(inner):
                            if isinstance(x, ast.If) and any(isinstance(r, ast.Raise) for b in x.body for r in ast.walk(b)):
                                for a in ast.walk(x.test):
                                    if isinstance(a, ast.Attribute) and a.attr in _FINEGRAINED_NEEDS:
                                        needs.add(_FINEGRAINED_NEEDS[a.attr])
                    if not needs:
                        continue
                    for name, above in guarded:
                        e = sizes.setdefault(name, {"above": above, "needs": set(), "source": f"{rel}:{node.lineno}"})
                        e["needs"] |= needs
                elif isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "module_tp_sizes" for t in node.targets
                ):
                    if isinstance(node.value, ast.List):
                        divide = [e.attr for e in node.value.elts if isinstance(e, ast.Attribute)]
                elif (
                    isinstance(node, ast.Assign)
                    and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Attribute)
                    and node.targets[0].attr.endswith("_tensor_parallel_size")
                    and isinstance(node.value, ast.Constant)
                    and node.value.value == 0
                ):
                    disabled.add(node.targets[0].attr)
            return {
                "sizes": {k: {**v, "needs": sorted(v["needs"])} for k, v in sorted(sizes.items())},
                "divide_dp": divide,
                "disabled_below_capture": sorted(disabled),
                "source": rel,
            }
    return None


_CP_SIZES = ("prefill_context_parallel_size", "decode_context_parallel_size")


def finegrained_tp_connector(pkg: Package) -> dict | None:
    """The kv connector the platform requires when a fine-grained TP size is
    split: a raising `if` of vllm_ascend/platform.py that tests a name
    assigned from `...has_connector("X")` together with
    `<cfg>.<size> > 1` comparisons. The connector, the sizes (their
    `finegrained_tp_config` keys) and the `if`'s line; None before the
    check."""
    for rel, mod in pkg.modules.items():
        if not rel.endswith("platform.py"):
            continue
        for fn in ast.walk(mod.tree):
            if not isinstance(fn, ast.FunctionDef):
                continue
            missing: dict[str, str] = {}
            for node in ast.walk(fn):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    for c in ast.walk(node.value):
                        if (
                            isinstance(c, ast.Call)
                            and isinstance(c.func, ast.Attribute)
                            and c.func.attr == "has_connector"
                            and c.args
                            and isinstance(c.args[0], ast.Constant)
                        ):
                            missing[node.targets[0].id] = c.args[0].value
            if not missing:
                continue
            for node in ast.walk(fn):
                if not (isinstance(node, ast.If) and any(isinstance(r, ast.Raise) for b in node.body for r in ast.walk(b))):
                    continue
                names = {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)}
                conn = next((missing[n] for n in sorted(names) if n in missing), None)
                if conn is None:
                    continue
                sizes = [
                    c.left.attr
                    for c in ast.walk(node.test)
                    if isinstance(c, ast.Compare)
                    and isinstance(c.left, ast.Attribute)
                    and c.left.attr.endswith("_tensor_parallel_size")
                    and isinstance(c.ops[0], ast.Gt)
                    and isinstance(c.comparators[0], ast.Constant)
                    and c.comparators[0].value == 1
                ]
                if sizes:
                    return {"connector": conn, "sizes": sorted(sizes), "source": f"{rel}:{node.lineno}"}
    return None


def cp_interleave_refusal(pkg: Package) -> dict | None:
    """The platform's refusal of a PD engine (`kv_transfer_config` set) with
    context parallelism whose `cp_kv_cache_interleave_size` differs from its
    block size: the raising `if` comparing the two, and which CP sizes turn
    it on (`reads`: `prefill_context_parallel_size`,
    `decode_context_parallel_size`, from the test or from the assignments of
    the names it tests, e.g. `cp_size = dcp * pcp`). None when the release
    has none."""
    for rel, mod in pkg.modules.items():
        if not rel.endswith("platform.py") or "cp_kv_cache_interleave_size" not in mod.text:
            continue
        for fn in ast.walk(mod.tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            assigned: dict[str, set[str]] = {}
            for st in ast.walk(fn):
                if isinstance(st, ast.Assign):
                    names = {a.attr for a in ast.walk(st.value) if isinstance(a, ast.Attribute) and a.attr in _CP_SIZES}
                    for t in st.targets:
                        if isinstance(t, ast.Name) and names:
                            assigned.setdefault(t.id, set()).update(names)
            for node in ast.walk(fn):
                if not isinstance(node, ast.If):
                    continue
                attrs = {a.attr for a in ast.walk(node.test) if isinstance(a, ast.Attribute)}
                if not {"cp_kv_cache_interleave_size", "block_size", "kv_transfer_config"} <= attrs:
                    continue
                if not any(isinstance(x, ast.Raise) for b in node.body for x in ast.walk(b)):
                    continue
                reads = attrs & set(_CP_SIZES)
                for n in ast.walk(node.test):
                    if isinstance(n, ast.Name):
                        reads |= assigned.get(n.id, set())
                return {"reads": sorted(reads), "source": f"{rel}:{node.lineno}"}
    return None
