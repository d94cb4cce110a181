# What vLLM reads of a checkpoint's config.json where a start-up check depends
# on it. One reading for two callers: generated preflight scripts run it on
# each node's weights (templates/sh/model_config.sh includes this file), and
# scripts/upstream/facts_checkpoints.py runs it on the pinned copies the
# compiler judges from. `reads` is one vLLM's `checkpoint_reads` fact
# (upstream/facts/vllm/<version>.json), generated from that vLLM's source by
# scripts/upstream/facts_vllm_checkpoint.py. Python 3.8+, standard library only.


def text_config(cfg):
    """The text model's config where the checkpoint nests one (vLLM's
    `get_hf_text_config`: `text_config`), else the config itself."""
    text = cfg.get("text_config")
    return text if isinstance(text, dict) and text else cfg


def rope(text):
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


def derived_len(text, reads):
    """The length vLLM derives (`_get_and_verify_max_len`): the smallest of
    its keys present, times the RoPE factor unless the type is one it leaves
    unscaled; YaRN, where scaled, from `original_max_position_embeddings`
    when `yarn_from_original` (vLLM up to 0.29). None when no key is present.
    (vLLM's Gemma-3 exception does not apply to the table's models.)"""
    present = [text[k] for k in reads["max_len_keys"] if text.get(k) is not None]
    if not present:
        return None
    n = min(present)
    scaling = rope(text)
    if scaling is None or scaling["type"] in reads["unscaled_rope_types"]:
        return int(n)
    if scaling["type"] == "yarn" and reads["yarn_from_original"]:
        n = scaling["original_max_position_embeddings"]
    factor = scaling["factor"] if scaling["factor"] is not None else 1.0
    return int(n * factor)


def num_experts(text, reads):
    """`ModelConfig.get_num_experts`: the first of its keys the config has
    (`getattr_iter`, even when null), the first entry of a list, 0 for a
    null or absent count. (A Transformers config class may default a key the
    file leaves out; the table's models write theirs.)"""
    for key in reads["expert_keys"]:
        if key in text:
            value = text[key]
            if isinstance(value, list):
                value = value[0] if value else 0
            return value or 0
    return 0
