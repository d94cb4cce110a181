"""What vLLM's one-request KV check counts, from each released vLLM's
source (`facts_vllm.py` key `kv_memory_check`), for KV caches in several
groups (a hybrid model's full-attention and Mamba groups):

- `blocks_per_request`: `"first_group"` where
  `_max_memory_usage_bytes_from_groups` (vllm/v1/core/kv_cache_utils.py)
  sizes a request by the first group's spec alone (`any_spec =
  kv_cache_groups[0].kv_cache_spec`, vLLM 0.18), `"every_group"` where it
  sums the blocks each group's spec needs (a loop or generator over
  `kv_cache_groups` with `cdiv`);
- `reserves_pool_block`: whether `get_kv_cache_configs` compares that need
  with the available memory less one block of the shared pool
  (`avail_mem - _pool_bytes_per_block(groups)` assigned to `check_memory`,
  the block vLLM keeps back as its null block).

pd-dsl's budget (`pd-dsl-core/src/capacity`) applies them; its
`hybrid_kv_oracle` test holds the arithmetic to vLLM's code run from every
sdist (scripts/upstream/hybrid_kv_oracle.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = "vllm/v1/core/kv_cache_utils.py"


class KvCheckError(Exception):
    pass


def _function(tree: ast.AST, name: str) -> ast.FunctionDef:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise KvCheckError(f"{SOURCE}: no function `{name}`")


def _calls(node: ast.AST, name: str) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name
        for n in ast.walk(node)
    )


def blocks_per_request(fn: ast.FunctionDef) -> tuple[str, int]:
    """`first_group` or `every_group`, and the line that decides it."""
    for node in ast.walk(fn):
        # any_spec = kv_cache_groups[0].kv_cache_spec
        if (
            isinstance(node, ast.Assign)
            and ast.unparse(node.value) == "kv_cache_groups[0].kv_cache_spec"
        ):
            return "first_group", node.lineno
    for node in ast.walk(fn):
        loops = []
        if isinstance(node, ast.For) and ast.unparse(node.iter) == "kv_cache_groups":
            loops.append(node)
        if isinstance(node, (ast.GeneratorExp, ast.ListComp)) and any(
            ast.unparse(g.iter) == "kv_cache_groups" for g in node.generators
        ):
            loops.append(node)
        for loop in loops:
            if _calls(loop, "cdiv"):
                return "every_group", loop.lineno
    raise KvCheckError(
        f"{SOURCE}: `{fn.name}` neither sizes a request by the first group nor sums over `kv_cache_groups`"
    )


def reserves_pool_block(fn: ast.FunctionDef) -> int | None:
    """The line where `get_kv_cache_configs` assigns `check_memory` the
    available memory less `_pool_bytes_per_block(groups)`, else None."""
    for node in ast.walk(fn):
        if not (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "check_memory" for t in node.targets)
        ):
            continue
        for sub in ast.walk(node.value):
            if (
                isinstance(sub, ast.BinOp)
                and isinstance(sub.op, ast.Sub)
                and isinstance(sub.right, ast.Call)
                and isinstance(sub.right.func, ast.Name)
                and sub.right.func.id == "_pool_bytes_per_block"
            ):
                return node.lineno
    return None


def kv_memory_check(vllm_src: Path) -> dict:
    tree = ast.parse((Path(vllm_src) / SOURCE).read_text(encoding="utf-8"))
    blocks, line = blocks_per_request(_function(tree, "_max_memory_usage_bytes_from_groups"))
    reserve = reserves_pool_block(_function(tree, "get_kv_cache_configs"))
    return {
        "blocks_per_request": blocks,
        "reserves_pool_block": reserve is not None,
        "source": f"{SOURCE}:{line}" + (f", {SOURCE}:{reserve}" if reserve is not None else ""),
    }


COMPILATION = "vllm/config/compilation.py"


def mamba_blocks_check(vllm_src: Path) -> dict | None:
    """Where `CompilationConfig.resolve_cudagraph_mode_and_sizes`
    (vllm/config/compilation.py) refuses a full-graph mode on a model with
    Mamba layers when `max_num_seqs` exceeds the KV cache's blocks: the
    `if` whose test reads `cudagraph_mode.has_full_cudagraphs()`,
    `kv_cache_config.has_mamba_layers` and `max_num_reqs >
    kv_cache_config.num_blocks` and whose body raises. `{"source":
    "path:line"}` of the `raise`, or None where no such check is (vLLM up to
    0.19)."""
    path = Path(vllm_src) / COMPILATION
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        test = ast.unparse(node.test)
        if all(
            part in test
            for part in (
                "cudagraph_mode.has_full_cudagraphs()",
                "kv_cache_config.has_mamba_layers",
                "max_num_reqs > kv_cache_config.num_blocks",
            )
        ):
            raises = [s for s in node.body if isinstance(s, ast.Raise)]
            if raises:
                return {"source": f"{COMPILATION}:{raises[0].lineno}"}
    return None
