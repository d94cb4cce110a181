#!/usr/bin/env python3
"""The vllm-ascend fact table of one release, read statically from its sdist.

`ascend_facts(src, version)` returns the `upstream/facts/vllm-ascend/<version>.json`
table of `upstream/README.md` for the unpacked
source distribution `src`. Nothing of the package is imported: Python sources are
read with `ast`, Dockerfiles and YAML as text. Every fact carries the path inside
the sdist it was read from.

The readers, by concern: facts_ascend_package.py (the parsed package),
facts_ascend_config.py (`additional_config`), facts_ascend_reads.py (env
reads, KV connectors, KV pool backends), facts_ascend_release.py (vLLM
version, version module, scripts, e2e), facts_ascend_image.py (images),
facts_ascend_parallel.py and facts_ascend_features.py (start-up refusals).
"""

from __future__ import annotations

from pathlib import Path

from facts_ascend_config import additional_config
from facts_ascend_features import (  # noqa: F401
    _v2_fields_needing_flag,
    aux_hidden_states_exemption,
    default_capture_cap,
    sp_asserts,
    dsa_cp_needs_sp,
    recompute_on_prefill,
    enable_sp,
    engram_tp,
    eplb_runner,
    hybrid_attn_block,
    hybrid_block_vllm,
    kv_store_align,
    kvpp,
    mc2_hierarchy_experts,
    modelslim_description,
    parser_choices_widened,
    sp_graph_alignment,
    sp_moe,
    tp_aligned_capture_sizes,
    v1_hybrid_kv,
    v2_runner_required,
)
from facts_ascend_image import IMAGE_WORKFLOW, IMAGES, TOOLS, image_suffixes, images  # noqa: F401
from facts_ascend_package import FactsError, Package  # noqa: F401
from facts_ascend_parallel import (
    cp_interleave_refusal,
    finegrained_tp,
    finegrained_tp_connector,
    parallel_config_patches,
    pcp_refusals,
    v2_runner_allows,
)
from facts_ascend_reads import env_reads, kv_connectors, kv_pool_backends
from facts_ascend_release import SCRIPTS, e2e, env_migration, kv_pool_runner, script_flags, version_module, vllm_version


def ascend_facts(src: Path, version: str) -> dict:
    src = Path(src)
    pkg = Package(src)
    scripts = {}
    for name, rel in SCRIPTS.items():
        scripts[name] = script_flags(src, rel)
    return {
        "package": "vllm-ascend",
        "version": version,
        "vllm": vllm_version(src),
        "version_module": version_module(src),
        "additional_config": additional_config(pkg),
        "env": env_reads(pkg),
        "kv_connectors": kv_connectors(pkg),
        "scripts": scripts,
        "images": images(src),
        "image_suffixes": image_suffixes(src),
        "e2e": e2e(src),
        "pcp_refusals": pcp_refusals(pkg),
        "parallel_config_patches": parallel_config_patches(pkg),
        "v2_runner_allows": v2_runner_allows(pkg),
        "finegrained_tp": finegrained_tp(pkg),
        "finegrained_tp_connector": finegrained_tp_connector(pkg),
        "cp_interleave_refusal": cp_interleave_refusal(pkg),
        "eplb_runner": eplb_runner(pkg),
        "kvpp": kvpp(pkg),
        "v2_runner_required": v2_runner_required(pkg),
        "engram_tp": engram_tp(pkg),
        "sp_graph_alignment": sp_graph_alignment(pkg),
        "enable_sp": enable_sp(pkg),
        "tp_aligned_capture_sizes": tp_aligned_capture_sizes(pkg),
        "default_capture_cap": default_capture_cap(pkg),
        "sp_asserts": sp_asserts(pkg),
        "kv_pool_backends": kv_pool_backends(pkg),
        "kv_pool_runner": kv_pool_runner(src),
        "aux_hidden_states_exemption": aux_hidden_states_exemption(pkg),
        "mc2_hierarchy_experts": mc2_hierarchy_experts(pkg),
        "sp_moe": sp_moe(pkg),
        "dsa_cp_needs_sp": dsa_cp_needs_sp(pkg),
        "recompute_on_prefill": recompute_on_prefill(pkg),
        "v1_hybrid_kv": v1_hybrid_kv(pkg),
        "env_migration": env_migration(src),
        "parser_choices_widened": parser_choices_widened(pkg),
        "hybrid_attn_block": hybrid_attn_block(pkg),
        "hybrid_block_vllm": hybrid_block_vllm(pkg),
        "modelslim_description": modelslim_description(pkg),
        "kv_store_align": kv_store_align(pkg),
    }


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(ascend_facts(Path(sys.argv[1]), sys.argv[2]), indent=2))
