#!/usr/bin/env python3
"""The capture sizes an engine settles on when a layout types none, run from
the released sources of one image: vLLM's and vllm-ascend's.

    graph_sizes_oracle.py VLLM_SRC ASCEND_SRC < cases.json > results.json

Runs, exactly as released and in the order the engine's start-up runs them:

1. vllm-ascend's `apply_config_platform_defaults` (vllm_ascend/platform.py),
   with its default-cap helper (`_get_default_max_cudagraph_capture_size`, a
   classmethod, or `_get_reduced_cg_cap`, a module function): the platform's
   `max_cudagraph_capture_size` before vLLM sizes anything
   (`VllmConfig.__post_init__` calls it first);
2. vLLM's `VllmConfig._set_cudagraph_sizes` (vllm/config/vllm.py), which
   `__post_init__` calls next;
3. vllm-ascend's second pass: where `_setup_compile_backend` exists, its
   statements up to and including its `vllm_config._set_cudagraph_sizes()`
   (the reduced cap's union, from v0.30.0rc1); before, the
   `vllm_config._set_cudagraph_sizes()` that `check_and_update_config` calls.

What comes after is not run: the hardware's sampling of the list
(`update_aclgraph_sizes` up to v0.20.2rc1, `_prune_reduced_capture_sizes`),
which keeps the smallest and the largest size, and the sequence-parallel
filter (the cases are at TP 1).

The config objects are stand-ins holding only what that code reads; one it
reads and the stand-in lacks fails loudly (AttributeError).

Each case: {"max_num_seqs", "max_num_batched_tokens", "tokens"} (speculative
tokens, 0 for none), and "sizes" when the layout types them. Each result:
{"sizes": [...], "max": N}, or {"refused": "<exception>: <message>"} when the
released code refuses to start (an exception raised by that code itself;
a stand-in's AttributeError is not caught).
"""

from __future__ import annotations

import ast
import json
import sys
import types
from pathlib import Path


class OracleError(Exception):
    pass


class _Mode:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"CUDAGraphMode.{self.name}"


CUDAGraphMode = types.SimpleNamespace(
    NONE=_Mode("NONE"),
    PIECEWISE=_Mode("PIECEWISE"),
    FULL=_Mode("FULL"),
    FULL_DECODE_ONLY=_Mode("FULL_DECODE_ONLY"),
    FULL_AND_PIECEWISE=_Mode("FULL_AND_PIECEWISE"),
)


class _Quiet:
    def __getattr__(self, _name: str):
        return lambda *a, **k: None


def _function(tree: ast.AST, name: str, cls: str | None = None) -> ast.FunctionDef:
    scope: list[ast.stmt] = tree.body  # type: ignore[attr-defined]
    if cls is not None:
        c = next((n for n in scope if isinstance(n, ast.ClassDef) and n.name == cls), None)
        if c is None:
            raise OracleError(f"no class {cls}")
        scope = c.body
    fn = next((n for n in scope if isinstance(n, ast.FunctionDef) and n.name == name), None)
    if fn is None:
        raise OracleError(f"no function {name}")
    fn.decorator_list = []
    return fn


def _globals() -> dict:
    platforms = types.ModuleType("vllm.platforms")
    platforms.current_platform = types.SimpleNamespace(is_device_capability_family=lambda *_a: False)
    sys.modules.setdefault("vllm", types.ModuleType("vllm"))
    sys.modules["vllm.platforms"] = platforms
    return {
        "__name__": "oracle",
        "CUDAGraphMode": CUDAGraphMode,
        "logger": _Quiet(),
        "getattr": getattr,
    }


def _exec(fns: list[ast.stmt], path: str, g: dict) -> dict:
    mod = ast.Module(body=fns, type_ignores=[])
    ast.fix_missing_locations(mod)
    exec(compile(mod, path, "exec"), g)
    return g


def load(vllm_src: Path, ascend_src: Path) -> dict:
    vllm_py = "vllm/config/vllm.py"
    vtree = ast.parse((vllm_src / vllm_py).read_text(), vllm_py)
    g = _globals()
    _exec([_function(vtree, "_set_cudagraph_sizes", "VllmConfig")], vllm_py, g)

    plat_py = "vllm_ascend/platform.py"
    atree = ast.parse((ascend_src / plat_py).read_text(), plat_py)
    cls = "NPUPlatform"
    defaults = _function(atree, "apply_config_platform_defaults", cls)
    # The default-cap helper: the function (a method of the platform class
    # or a module function, by release) returning `min(max_num_seqs *
    # decode_query_len, ...)`.
    helper, on_class = None, False
    for scope, is_class in [(c.body, True) for c in atree.body if isinstance(c, ast.ClassDef) and c.name == cls] + [(atree.body, False)]:
        for n in scope:
            if isinstance(n, ast.FunctionDef) and any(
                isinstance(r, ast.Return) and r.value is not None and "max_num_seqs * decode_query_len" in ast.unparse(r.value)
                for r in ast.walk(n)
            ):
                helper, on_class = n, is_class
    if helper is None:
        raise OracleError(f"{plat_py}: no default-cap helper")
    helper.decorator_list = []
    _exec([defaults, helper], plat_py, g)
    fn = g[helper.name]
    platform = types.SimpleNamespace()
    setattr(platform, helper.name, (lambda c: fn(platform, c)) if on_class else fn)

    # The second pass: `_setup_compile_backend`'s statements up to its
    # `_set_cudagraph_sizes()`, imports left out (their names are given).
    second = None
    backend = next((n for n in atree.body if isinstance(n, ast.FunctionDef) and n.name == "_setup_compile_backend"), None)
    if backend is not None:
        body: list[ast.stmt] = []
        for s in backend.body:
            if isinstance(s, (ast.Import, ast.ImportFrom)) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)):
                continue
            body.append(s)
            if ast.unparse(s) == "vllm_config._set_cudagraph_sizes()":
                break
        else:
            raise OracleError(f"{plat_py}: `_setup_compile_backend` does not call `_set_cudagraph_sizes()`")
        backend.body = body
        backend.decorator_list = []
        backend.name = "_second_pass"
        _exec([backend], plat_py, g)
        g["CompilationMode"] = types.SimpleNamespace(NONE="NONE", VLLM_COMPILE="VLLM_COMPILE")
        second = g["_second_pass"]
    elif "vllm_config._set_cudagraph_sizes()" not in ast.unparse(_function(atree, "check_and_update_config", cls)):
        raise OracleError(f"{plat_py}: no second `_set_cudagraph_sizes()`")
    return {"defaults": g["apply_config_platform_defaults"], "platform": platform, "set_sizes": g["_set_cudagraph_sizes"], "second": second}


def config(case: dict) -> types.SimpleNamespace:
    tokens = case["tokens"]
    compilation = types.SimpleNamespace(
        cudagraph_mode=CUDAGraphMode.FULL_DECODE_ONLY,
        max_cudagraph_capture_size=None,
        cudagraph_capture_sizes=None,
        cudagraph_num_of_warmups=0,
        pass_config=types.SimpleNamespace(enable_sp=False, sp_min_token_num=None),
        post_init_cudagraph_sizes=lambda: None,
    )
    spec = (
        types.SimpleNamespace(num_speculative_tokens=tokens, uses_dynamic_speculative_decoding=lambda: False)
        if tokens
        else None
    )
    c = types.SimpleNamespace(
        model_config=types.SimpleNamespace(enforce_eager=False),
        compilation_config=compilation,
        scheduler_config=types.SimpleNamespace(
            max_num_seqs=case["max_num_seqs"], max_num_batched_tokens=case["max_num_batched_tokens"]
        ),
        speculative_config=spec,
        parallel_config=types.SimpleNamespace(tensor_parallel_size=1),
        performance_mode="balanced",
        uniform_decode_query_len=1 + tokens,
        num_speculative_tokens=tokens,
        additional_config={},
    )
    return c


def run(case: dict, mods: dict) -> dict:
    c = config(case)
    c.compilation_config.cudagraph_capture_sizes = case.get("sizes")
    c._set_cudagraph_sizes = lambda: mods["set_sizes"](c)
    try:
        mods["defaults"](mods["platform"], c)
        c._set_cudagraph_sizes()
        if mods["second"] is not None:
            mods["second"](c, "oracle")
        else:
            c._set_cudagraph_sizes()
    except (AssertionError, ValueError) as e:
        return {"refused": f"{type(e).__name__}: {e}"}
    cc = c.compilation_config
    return {"sizes": list(cc.cudagraph_capture_sizes), "max": cc.max_cudagraph_capture_size}


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    mods = load(Path(argv[1]), Path(argv[2]))
    cases = json.load(sys.stdin)
    json.dump([run(case, mods) for case in cases], sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
