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

import json
import sys
from pathlib import Path

import corpus
import facts_vllm_checkpoint

# The reading of a config.json that generated preflight scripts run on each
# node: imported from the template, not copied.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "pd-dsl" / "templates" / "py"))
import checkpoint_config  # noqa: E402

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

# Where vLLM's max-length keys and RoPE rule are read (`facts_vllm_checkpoint`
# reads them from each pinned vLLM; the arithmetic is the preflight's).
KEYS_SOURCE = facts_vllm_checkpoint.KEYS_SOURCE
RULE_SOURCE = facts_vllm_checkpoint.RULE_SOURCE


class CheckpointError(Exception):
    pass


def _derivations() -> list[tuple[str, dict]]:
    """Per pinned vLLM: version and its `checkpoint_reads` fact."""
    lock = corpus.load_lock()
    out = []
    for p in lock["packages"]:
        if p["name"] == "vllm":
            src = corpus.unpacked(p)
            out.append((p["version"], facts_vllm_checkpoint.checkpoint_reads(src)))
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
    text = checkpoint_config.text_config(cfg)
    entry = {
        "source": rel,
        "architectures": cfg.get("architectures"),
        "model_type": cfg.get("model_type"),
        "text_model_type": text.get("model_type"),
    }
    entry.update({f: text.get(f) for f in FIELDS})
    entry["rope"] = checkpoint_config.rope(text)
    lens = {}
    for version, reads in derivations:
        lens[version] = checkpoint_config.derived_len(text, reads)
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
