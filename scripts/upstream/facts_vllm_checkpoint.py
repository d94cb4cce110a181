"""How a vLLM reads a checkpoint's `config.json` where a start-up check
depends on it, from each released vLLM's source (`facts_vllm.py` key
`checkpoint_reads`):

- the keys `derive_max_model_len_and_key` takes the smallest of
  (vllm/transformers_utils/model_arch_config_convertor.py);
- the RoPE types `_get_and_verify_max_len` leaves unscaled, and whether YaRN
  starts from `original_max_position_embeddings` (vllm/config/model.py; vLLM
  up to 0.29: `if rope_type == "yarn": derived = rp[original]`);
- the keys `get_num_experts` reads the routed-expert count from, first
  present wins (the same convertor).

The arithmetic that applies them is `pd-dsl/templates/py/checkpoint_config.py`,
which generated preflight scripts run on each node's weights and
`facts_checkpoints.py` runs on the pinned copies: one reading, one place.
"""

from __future__ import annotations

import ast
from pathlib import Path

KEYS_SOURCE = "vllm/transformers_utils/model_arch_config_convertor.py"
RULE_SOURCE = "vllm/config/model.py"


class CheckpointReadsError(Exception):
    pass


def _base_method(tree: ast.AST, name: str) -> ast.FunctionDef | None:
    """`name` of the convertors' base class (the first class defining it)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "ModelArchConfigConvertorBase":
            for sub in node.body:
                if isinstance(sub, ast.FunctionDef) and sub.name == name:
                    return sub
    return None


def _list_assigned(fn: ast.FunctionDef, target: str) -> tuple[list[str], int] | None:
    for sub in ast.walk(fn):
        if (
            isinstance(sub, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == target for t in sub.targets)
            and isinstance(sub.value, ast.List)
        ):
            return [ast.literal_eval(e) for e in sub.value.elts], sub.lineno
    return None


def possible_keys(vllm_src: Path) -> tuple[list[str], int]:
    """The `possible_keys` list of `derive_max_model_len_and_key`, and its line."""
    tree = ast.parse((vllm_src / KEYS_SOURCE).read_text(encoding="utf-8"))
    fn = _base_method(tree, "derive_max_model_len_and_key")
    got = _list_assigned(fn, "possible_keys") if fn else None
    if got is None:
        raise CheckpointReadsError(f"{KEYS_SOURCE}: no `possible_keys` list in `derive_max_model_len_and_key`")
    return got


def expert_keys(vllm_src: Path) -> tuple[list[str], int]:
    """The `num_expert_names` list of `get_num_experts`, read through
    `getattr_iter` (first present wins), and its line."""
    tree = ast.parse((vllm_src / KEYS_SOURCE).read_text(encoding="utf-8"))
    fn = _base_method(tree, "get_num_experts")
    got = _list_assigned(fn, "num_expert_names") if fn else None
    if got is None or "getattr_iter(self.hf_text_config, num_expert_names" not in ast.unparse(fn):
        raise CheckpointReadsError(
            f"{KEYS_SOURCE}: no `num_expert_names` list read by `getattr_iter(self.hf_text_config, ...)` in `get_num_experts`"
        )
    return got


def rope_rule(vllm_src: Path) -> tuple[list[str], bool, int]:
    """How `_get_and_verify_max_len` scales the derived length by RoPE: the
    types it leaves unscaled (the tuple of its `if rope_type not in (...)`:
    su/longrope/llama3, with yarn and the deepseek variants from vLLM 0.30),
    whether YaRN starts from `original_max_position_embeddings`, and the
    function's line."""
    tree = ast.parse((vllm_src / RULE_SOURCE).read_text(encoding="utf-8"))
    for fn in ast.walk(tree):
        if not (isinstance(fn, ast.FunctionDef) and fn.name == "_get_and_verify_max_len"):
            continue
        unscaled = None
        for node in ast.walk(fn):
            if (
                isinstance(node, ast.Compare)
                and ast.unparse(node.left) == "rope_type"
                and isinstance(node.ops[0], ast.NotIn)
                and isinstance(node.comparators[0], ast.Tuple)
            ):
                unscaled = [ast.literal_eval(e) for e in node.comparators[0].elts]
        body = ast.unparse(fn)
        yarn_original = "if rope_type == 'yarn':" in body and "rp['original_max_position_embeddings']" in body
        if unscaled is None:
            break
        return unscaled, yarn_original, fn.lineno
    raise CheckpointReadsError(f"{RULE_SOURCE}: no `_get_and_verify_max_len` testing `rope_type not in (...)`")


def checkpoint_reads(vllm_src: Path) -> dict:
    """The `checkpoint_reads` fact of one vLLM."""
    vllm_src = Path(vllm_src)
    keys, keys_line = possible_keys(vllm_src)
    unscaled, yarn_original, rule_line = rope_rule(vllm_src)
    experts, experts_line = expert_keys(vllm_src)
    return {
        "max_len_keys": keys,
        "unscaled_rope_types": unscaled,
        "yarn_from_original": yarn_original,
        "expert_keys": experts,
        # Plain text (no backticks): preflight scripts carry it in a shell word.
        "max_len_source": f"{RULE_SOURCE}:{rule_line} _get_and_verify_max_len, {KEYS_SOURCE}:{keys_line}",
        "experts_source": f"{KEYS_SOURCE}:{experts_line} get_num_experts",
    }
