# preflight's `model_config`: a node's config.json against the checks the
# compiler serialized for its layout (pd_dsl_core::preflight). Included
# verbatim after checkpoint_config.py by templates/sh/model_config.sh; the
# aux-hidden-states gate and hierarchy MC2's limit below are the rules'
# own decisions restated, and pd_dsl_core's preflight tests hold them to the
# Rust (`AuxHiddenStates::refuses` with the exemption, `Mc2HierarchyExperts::
# exceeds`) over every model type and limit the corpus has.
import json
import os
import sys


def judge(path, checks):
    """(problems, facts read): what vLLM would refuse at start, and what
    was read for the pass line."""
    try:
        with open(path, encoding="utf-8") as f:
            cfg = json.load(f)
    except (OSError, ValueError) as e:
        return ["cannot read it: " + (e.strerror or str(e) if isinstance(e, OSError) else str(e))], []
    if not isinstance(cfg, dict):
        return ["not a JSON object"], []
    return judge_config(cfg, checks, os.path.dirname(path))


def judge_config(cfg, checks, weights_dir):
    """judge() of a parsed config.json in the directory weights_dir."""
    text = text_config(cfg)
    reads = checks["reads"]
    vllm = "vLLM " + checks["vllm"]
    problems = []
    seen = []
    model_type = text.get("model_type")
    if not isinstance(model_type, str):
        model_type = ""
    seen.append("model_type " + (model_type or "(none)"))
    want = checks["model_type"]
    top = cfg.get("model_type") if isinstance(cfg.get("model_type"), str) else ""
    if want is not None and model_type != want["name"] and (want["copy"] is not None or top != want["name"]):
        problems.append(
            "the text model_type is '" + model_type + "'"
            + (", the top-level '" + top + "'" if top and top != model_type else "")
            + ", the layout's model " + checks["model"] + " has '" + want["name"] + "' ("
            + ("its text model_type in the copy " + want["copy"] if want["copy"] is not None
               else "the model table's type for the family, at either level of config.json")
            + "): these weights are another model's, and the layout was checked against " + want["name"]
        )
    derived = derived_len(text, reads)
    seen.append("derived max_model_len " + (str(derived) if derived is not None else "(no length key)"))
    experts = None
    for role in checks["roles"]:
        name = role["role"]
        length = role["max_model_len"]
        if length is not None and derived is not None and length > derived:
            problems.append(
                name + " max_model_len " + str(length) + " is above the " + str(derived) + " " + vllm
                + " derives from this config.json (its length keys with RoPE scaling): it refuses to start"
                + " unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (" + reads["max_len_source"] + ")"
            )
        gate = role["aux_hidden_states"]
        if gate is not None:
            listed = any(t in model_type for t in gate["model_types"])
            exempt = gate["exempt_contains"] is not None and gate["exempt_contains"] in model_type.lower()
            if not listed and not exempt:
                problems.append(
                    name + " speculative method " + gate["method"] + " needs a model type containing one of "
                    + ", ".join(gate["model_types"]) + "; '" + model_type + "' has none, so " + vllm
                    + " refuses to start (" + gate["source"] + " SpeculativeConfig._verify_args)"
                )
        mc2 = role["mc2_hierarchy"]
        if mc2 is not None:
            experts = num_experts(text, reads)
            total = experts + mc2["redundant"]
            if total > mc2["max_experts"]:
                problems.append(
                    name + " runs hierarchy MC2 (" + mc2["key"] + ") on " + str(total) + " experts ("
                    + str(experts) + " routed in config.json + " + str(mc2["redundant"]) + " redundant), above its "
                    + str(mc2["max_experts"]) + ": vllm-ascend refuses to start (" + mc2["source"] + "; experts as "
                    + reads["experts_source"] + " reads them)"
                )
    if experts is not None:
        seen.append(str(experts) + " routed experts")
    quant = checks["quantization"]
    if quant is not None:
        description = os.path.join(weights_dir, quant["file"])
        if os.path.isfile(description):
            seen.append(quant["file"])
        else:
            problems.append(
                "no " + quant["file"] + " next to it: the layout passes --quantization " + quant["method"]
                + " (the model table's " + checks["model"] + " is ModelSlim-quantized), and vllm-ascend refuses"
                + " to start without it (" + quant["source"] + "); these weights are not that build"
            )
    return problems, seen
