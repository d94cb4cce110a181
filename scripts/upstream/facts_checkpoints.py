#!/usr/bin/env python3
"""Checkpoint configs: what sizing and the model rules read of each model's
Hugging Face `config.json`, from the copies a pinned package ships.

Hugging Face and ModelScope are not reachable from the machines pd-dsl is
built on; the `aiconfigurator-core` wheel (pinned in `upstream/corpus.lock.json`)
ships copies of the `config.json` of the models it estimates, in
`aiconfigurator_core/model_configs/<Org>--<Name>_config.json`. They are
third-party copies: the Rust side (`pd-dsl-core/src/dims/`) holds every
hand-typed dimension equal to them in a test, and reads from them what no
other source states (model types, context lengths, routed-expert counts of
the builds it does not size).

`checkpoint_facts(src, version)` gives one table: per copy (keyed by its
Hugging Face id), the fields below, read from the text model's config where
the checkpoint nests one (`text_config`, as vLLM's `get_hf_text_config`), and
the context length vLLM derives from it.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import corpus

CONFIGS = "aiconfigurator_core/model_configs"

# The fields kept, as the config names them. Absent fields are null.
FIELDS = [
    "hidden_size",
    "vocab_size",
    "num_hidden_layers",
    "intermediate_size",
    "first_k_dense_replace",
    "moe_intermediate_size",
    "n_routed_experts",
    "num_experts",
    "num_local_experts",
    "n_shared_experts",
    "shared_expert_intermediate_size",
    "num_experts_per_tok",
    "num_nextn_predict_layers",
    "mtp_num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "q_lora_rank",
    "kv_lora_rank",
    "qk_nope_head_dim",
    "qk_rope_head_dim",
    "v_head_dim",
    "index_n_heads",
    "index_head_dim",
    "index_topk",
    "o_lora_rank",
    "o_groups",
    "sliding_window",
    "linear_num_key_heads",
    "linear_num_value_heads",
    "linear_key_head_dim",
    "linear_value_head_dim",
    "linear_conv_kernel_dim",
    "mamba_ssm_dtype",
    "dspark_block_size",
    "max_position_embeddings",
]

# Where vLLM's max-length keys and RoPE rule are read (the derivation below
# follows them; `_derivations` reads the key list from each pinned vLLM).
KEYS_SOURCE = "vllm/transformers_utils/model_arch_config_convertor.py"
RULE_SOURCE = "vllm/config/model.py"


class CheckpointError(Exception):
    pass


def _possible_keys(vllm_src: Path) -> list[str]:
    """The `possible_keys` list of `derive_max_model_len_and_key`."""
    tree = ast.parse((vllm_src / KEYS_SOURCE).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "derive_max_model_len_and_key":
            for sub in ast.walk(node):
                if (
                    isinstance(sub, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "possible_keys" for t in sub.targets)
                    and isinstance(sub.value, ast.List)
                ):
                    return [ast.literal_eval(e) for e in sub.value.elts]
    raise CheckpointError(f"{KEYS_SOURCE}: no `possible_keys` list in `derive_max_model_len_and_key`")


def _rope_rule(vllm_src: Path) -> tuple[list[str], bool]:
    """How `_get_and_verify_max_len` scales the derived length by RoPE: the
    types it leaves unscaled (the tuple of its `if rope_type not in (...)`:
    su/longrope/llama3, with yarn and the deepseek variants from vLLM 0.30),
    and whether YaRN starts from `original_max_position_embeddings` (vLLM up
    to 0.29: `if rope_type == "yarn": derived = rp[original]`)."""
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
        return unscaled, yarn_original
    raise CheckpointError(f"{RULE_SOURCE}: no `_get_and_verify_max_len` testing `rope_type not in (...)`")


def _yarn_uses_original(vllm_src: Path) -> bool:
    return _rope_rule(vllm_src)[1]


def _rope(text: dict) -> dict | None:
    """The RoPE scaling as vLLM's `patch_rope_parameters` sees it: `type` is
    read as `rope_type`; `rope_parameters` (Transformers v5) or `rope_scaling`."""
    rp = text.get("rope_parameters") or text.get("rope_scaling")
    if not rp:
        return None
    return {
        "type": rp.get("rope_type", rp.get("type")),
        "factor": rp.get("factor"),
        "original_max_position_embeddings": rp.get("original_max_position_embeddings"),
    }


def derived_len(text: dict, keys: list[str], unscaled: list[str], yarn_original: bool) -> int | None:
    """The length vLLM derives: the smallest of its keys present, times the
    RoPE factor unless the type is one the vLLM leaves `unscaled`; YaRN, where
    it is scaled, from `original_max_position_embeddings` when
    `yarn_original` (vLLM up to 0.29). None when no key is present. (vLLM's
    Gemma-3 exception does not apply to the table's models.)"""
    present = [text[k] for k in keys if text.get(k) is not None]
    if not present:
        return None
    n = min(present)
    rope = _rope(text)
    if rope is None or rope["type"] in unscaled:
        return int(n)
    if rope["type"] == "yarn" and yarn_original:
        n = rope["original_max_position_embeddings"]
    factor = rope["factor"] if rope["factor"] is not None else 1.0
    return int(n * factor)


def _derivations() -> list[tuple[str, list[str], list[str], bool]]:
    """Per pinned vLLM: version, max-length keys, unscaled RoPE types, the
    YaRN rule."""
    lock = corpus.load_lock()
    out = []
    for p in lock["packages"]:
        if p["name"] == "vllm":
            src = corpus.unpacked(p)
            unscaled, yarn_original = _rope_rule(src)
            out.append((p["version"], _possible_keys(src), unscaled, yarn_original))
    if not out:
        raise CheckpointError("upstream/corpus.lock.json pins no vllm to read the length derivation from")
    return out


def _layer_counts(values) -> dict[str, int] | None:
    if not isinstance(values, list):
        return None
    out: dict[str, int] = {}
    for v in values:
        out[str(v)] = out.get(str(v), 0) + 1
    return dict(sorted(out.items()))


def one(path: Path, rel: str, derivations) -> dict:
    cfg = json.loads(path.read_text(encoding="utf-8"))
    text = cfg.get("text_config") or cfg
    entry = {
        "source": rel,
        "architectures": cfg.get("architectures"),
        "model_type": cfg.get("model_type"),
        "text_model_type": text.get("model_type"),
    }
    entry.update({f: text.get(f) for f in FIELDS})
    entry["rope"] = _rope(text)
    lens = {}
    for version, keys, unscaled, yarn_original in derivations:
        lens[version] = derived_len(text, keys, unscaled, yarn_original)
    # One length when every pinned vLLM derives the same, else per version.
    entry["derived_max_model_len"] = next(iter(lens.values())) if len(set(lens.values())) == 1 else lens
    entry["compress_ratios"] = text.get("compress_ratios")
    entry["layer_types"] = _layer_counts(text.get("layer_types"))
    entry["indexer_types"] = _layer_counts(text.get("indexer_types"))
    return entry


def checkpoint_facts(src: Path, version: str) -> dict:
    root = src / CONFIGS
    files = sorted(root.glob("*_config.json"))
    if not files:
        raise CheckpointError(f"aiconfigurator-core {version}: no `{CONFIGS}/*_config.json`")
    derivations = _derivations()
    configs = {}
    for f in files:
        if f.name.endswith("_hf_quant_config.json"):
            continue
        hf_id = f.name[: -len("_config.json")].replace("--", "/", 1)
        configs[hf_id] = one(f, f"{CONFIGS}/{f.name}", derivations)
    return {
        "package": "aiconfigurator-core",
        "version": version,
        "about": "third-party copies of Hugging Face config.json files, as scripts/upstream/facts_checkpoints.py reads them",
        "length_rule": f"{RULE_SOURCE} _get_and_verify_max_len; keys: {KEYS_SOURCE} derive_max_model_len_and_key",
        "configs": configs,
    }
