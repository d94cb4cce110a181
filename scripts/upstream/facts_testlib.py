"""The corpus helpers of the vllm-ascend fact tests (test_facts.py and the
test cases it imports): the pinned releases, each release's unpacked sdist
(`src`, failing naming a missing package) and its fact table (`table`,
computed once per run)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import corpus
import facts_ascend

LOCK = corpus.load_lock()
ASCEND = [p["version"] for p in LOCK["packages"] if p["name"] == "vllm-ascend"]


def src(version: str, name: str = "vllm-ascend") -> Path:
    try:
        p = corpus.entry(LOCK, name, version)
    except corpus.CorpusError as e:
        raise AssertionError(str(e)) from e
    root = corpus.cache_dir() / "src" / f"{name}-{version}"
    stamp = root / ".pd-dsl-sha256"
    if not (stamp.exists() and stamp.read_text().strip() == p["sha256"]):
        raise AssertionError(
            f"the corpus has no unpacked `{name}=={version}` in {corpus.cache_dir()}; "
            f"fetch it with `python3 scripts/upstream/corpus.py fetch {name}=={version}` "
            "(or point PD_UPSTREAM_CACHE at a filled cache)"
        )
    return root


@lru_cache(maxsize=None)
def table(version: str) -> dict:
    return facts_ascend.ascend_facts(src(version), version)


def keys(version: str) -> dict:
    return {k["key"]: k for k in table(version)["additional_config"]}


def releases_from(first: str) -> list[str]:
    return [v for v in ASCEND if corpus.version_key(v) >= corpus.version_key(first)]
