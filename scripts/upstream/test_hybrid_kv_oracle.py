"""Tests of hybrid_kv_oracle.py against the cached upstream corpus, and of the
closed-form block count (`formula`, what pd-dsl's Rust side implements) against
it.

    cd scripts/upstream && python3 -m unittest test_hybrid_kv_oracle -v

A missing corpus fails naming the package (`corpus.py fetch` fills it).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import unittest
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import facts_testlib  # noqa: E402

ROOT = HERE.parents[1]
GiB = 1 << 30

# Qwen3.5's Gated-DeltaNet and attention dimensions (397B-A17B and 122B-A10B
# share them).
QWEN35 = {
    "linear_num_key_heads": 16,
    "linear_num_value_heads": 64,
    "linear_key_head_dim": 128,
    "linear_value_head_dim": 128,
    "linear_conv_kernel_dim": 4,
    "num_key_value_heads": 2,
    "head_dim": 256,
    "mamba_ssm_dtype": "float32",
}
MODELS = {"Qwen3.5-397B-A17B": (15, 45), "Qwen3.5-122B-A10B": (12, 36)}

# How each release sizes the pages and checks one request (see `formula`):
#   page:    "ascend": vllm-ascend's patch_mamba_config sizes the block so one
#            K page equals the SSM state and pads the Mamba page by the conv
#            state; "vllm": vLLM's Platform._align_hybrid_block_size (called
#            by NPUPlatform.update_block_size_for_backend from 0.30) sizes the
#            smallest 128-multiple block whose K+V page holds the whole state.
#   need:    "first": vLLM 0.18 counts only the first group's blocks;
#            "sum": every group's blocks.
#   reserve: the memory check subtracts the null block's pool bytes (0.29+).
#   batched: with prefix caching (Mamba cache mode "align"), vLLM's
#            VllmConfig.validate_block_size asserts block_size <=
#            max_num_batched_tokens after the plan (vLLM up to 0.26).
#   rows:    MambaSpec.max_num_blocks_per_req exists (vLLM 0.26 on).
FAMILY = {
    "0.18.0": ("ascend", "first", False, True, False),
    "0.19.1rc1": ("ascend", "sum", False, True, False),
    "0.20.2rc1": ("ascend", "sum", False, True, False),
    "0.21.0rc1": ("ascend", "sum", False, True, False),
    "0.22.1rc1": ("ascend", "sum", False, True, False),
    "0.23.0": ("ascend", "sum", False, True, False),
    "0.23.0rc1": ("ascend", "sum", False, True, False),
    "0.24.0rc1": ("ascend", "sum", False, True, False),
    "0.25.1rc1": ("ascend", "sum", False, True, False),
    "0.26.0rc1": ("ascend", "sum", False, True, True),
    "0.27.1rc1": ("ascend", "sum", False, False, True),
    "0.28.0rc1": ("ascend", "sum", False, False, True),
    "0.29.0rc1": ("ascend", "sum", True, False, True),
    "0.30.0rc1": ("vllm", "sum", True, False, True),
    "0.30.0rc2": ("vllm", "sum", True, False, True),
}


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def formula(case: dict, release: str) -> dict:
    """The block count of vllm-ascend `release` in closed form, for the
    uniform-page path every release takes for these models. Keys as the
    oracle's; {"refused": True} where upstream refuses.

    With "prefix_caching" (--enable-prefix-caching) every release puts the
    Mamba cache in "align" mode (vLLM's MambaModelConfig: Qwen3.5 does not
    support Mamba cache mode "all"); block, pages, groups and num_blocks stay
    as without it, the Mamba block becomes the attention block, and each
    Mamba group needs 2 + num_spec blocks instead of 1 + num_spec
    (MambaSpec.max_memory_usage_bytes), independent of max_model_len."""
    page_family, need_family, reserve, batched, rows = FAMILY[release]
    c, tp, spec = case["config"], case["tp"], case["num_spec"]
    prefix = bool(case.get("prefix_caching"))  # Mamba cache mode "align"
    hk, hv = c["linear_num_key_heads"], c["linear_num_value_heads"]
    dk, dv = c["linear_key_head_dim"], c["linear_value_head_dim"]
    conv_dim = 2 * hk * dk + hv * dv
    if conv_dim % tp or hv % tp:
        return {"refused": True}  # vLLM's divide() in the state shapes
    ssm_size = {"float32": 4, "bfloat16": 2, "float16": 2}[c["mamba_ssm_dtype"]]
    conv = conv_dim // tp * (c["linear_conv_kernel_dim"] - 1 + spec) * 2  # bf16
    ssm = hv // tp * dv * dk * ssm_size
    kvh = max(1, c["num_key_value_heads"] // tp)
    k_token = kvh * c["head_dim"] * 2  # bf16 K bytes per token
    typed = case.get("block_size")
    if page_family == "ascend":
        # vllm_ascend/patch/platform/patch_mamba_config.py
        b = 128 * cdiv(ssm, 128 * k_token)
        if k_token * b != ssm:
            return {"refused": True}  # "Cannot align ssm_page_size and attn_page_size."
        block = max(typed, b) if typed else b
        page = block * 2 * k_token + conv  # Mamba page padded; attention padded to it
    else:
        # vllm/platforms/interface.py Platform._align_hybrid_block_size
        raw = ssm + conv
        kernel = max(128, typed) if typed else 128
        b = kernel * cdiv(raw, kernel * 2 * k_token)
        block = max(typed, b) if typed else max(128, b)
        page = block * 2 * k_token
    f, m = case["full_layers"], case["mamba_layers"]
    lo, hi = min(f, m), max(f, m)
    group_size = hi if hi < lo * 1.5 else lo
    attn_groups, mamba_groups = cdiv(f, group_size), cdiv(m, group_size)
    pool = group_size * page  # bytes of one block across the pool
    req_blocks = cdiv(case["max_model_len"], block)
    # MambaSpec.max_memory_usage_bytes: one state (+ one per speculative
    # token); in align mode one more (the running state and the last cached
    # one), whatever max_model_len.
    mamba_blocks = (2 if prefix else 1) + spec
    if need_family == "first":
        # vLLM 0.18: only the first (attention) group's blocks.
        need = pool * req_blocks
    else:
        need = pool * (attn_groups * req_blocks + mamba_groups * mamba_blocks)
    check = case["available_memory"] - (pool if reserve else 0)
    out = {
        "mamba_cache_mode": "align" if prefix else "none",
        "mamba_block_size": block if prefix else case["max_model_len"],
        "num_speculative_blocks": spec,
        "block_size": block,
        "attn_page_size_bytes": page,
        "mamba_page_size_bytes": page,
        "group_size": group_size,
        # layers[i::n] of each type (kv_cache_utils._get_kv_cache_groups_uniform_page_size)
        "groups": [["FullAttentionSpec", cdiv(f - i, attn_groups)] for i in range(attn_groups)]
        + [["MambaSpec", cdiv(m - i, mamba_groups)] for i in range(mamba_groups)],
        "max_memory_usage_bytes": need,
        "check_available_bytes": check,
    }
    if check <= 0:
        # "No available memory for the cache blocks." (needed is not asked)
        del out["max_memory_usage_bytes"]
        return {**out, "refused": True, "enough": False}
    if need > check:
        return {**out, "refused": True, "enough": False}
    if prefix and batched and block > case.get("max_num_batched_tokens", 8192):
        # "In Mamba cache align mode, block_size (...) must be <=
        # max_num_batched_tokens (...)." (after the plan)
        return {"refused": True}
    if rows:
        # The GDN groups' block-table row: in align mode position-indexed over
        # max_model_len (this is what grows with it, not the memory check).
        out["mamba_max_num_blocks_per_req"] = (
            cdiv(case["max_model_len"], block) + spec if prefix else mamba_blocks
        )
    return {**out, "num_blocks": case["available_memory"] // pool, "enough": True}


def case(
    model: tuple[int, int],
    tp: int,
    spec: int,
    avail: int,
    max_len: int,
    block=None,
    prefix: bool = False,
    batched: int | None = None,
) -> dict:
    full, linear = model
    mtp = 1 if spec else 0
    extra = {"prefix_caching": True} if prefix else {}
    if batched is not None:
        extra["max_num_batched_tokens"] = batched
    return {
        **extra,
        "tp": tp,
        "num_spec": spec,
        "block_size": block,
        "config": QWEN35,
        "full_layers": full + mtp,
        "draft_layers": mtp,
        "mamba_layers": linear,
        "available_memory": avail,
        "max_model_len": max_len,
        "kv_dtype": "bfloat16",
    }


def brief_cases(prefix: bool = False) -> list[dict]:
    return [
        case(model, tp, spec, avail, max_len, prefix=prefix)
        for model in MODELS.values()
        for tp in (1, 2, 4, 8, 16)
        for spec in (0, 3)
        for avail in (20 * GiB, 2 * GiB)
        for max_len in (32768, 262144)
    ]


def random_cases(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        spec = rng.choice((0, 0, 1, 2, 3, 5))
        full = rng.randint(1, 24)
        c = case(
            (full, rng.randint(1, 72)),
            rng.choice((1, 2, 3, 4, 8, 16)),
            spec,
            rng.choice((rng.randint(1, 8 * GiB), rng.randint(1, 96 * GiB), rng.randint(1, 1 << 24))),
            rng.choice((rng.randint(1, 1 << 20), 4096, 32768, 131072, 262144)),
            rng.choice((None, None, None, 128, 256, 16384)),
        )
        out.append(c)
    return out


def random_prefix_cases(n: int, seed: int) -> list[dict]:
    """Random cases with --enable-prefix-caching, typed blocks and batch
    budgets around the blocks the releases size."""
    rng = random.Random(seed)
    return [
        case(
            (rng.randint(1, 24), rng.randint(1, 72)),
            rng.choice((1, 2, 3, 4, 8, 16)),
            rng.choice((0, 0, 1, 2, 3, 5)),
            rng.choice((rng.randint(1, 8 * GiB), rng.randint(1, 96 * GiB), rng.randint(1, 1 << 24))),
            rng.choice((rng.randint(1, 1 << 20), 4096, 32768, 131072, 262144)),
            rng.choice((None, None, None, 128, 256, 1024, 4096, 8192, 16384)),
            prefix=True,
            batched=rng.choice((None, None, 512, 2048, 4096, 8192, 16384, 32768)),
        )
        for _ in range(n)
    ]


@lru_cache(maxsize=None)
def vllm_of(release: str) -> str:
    facts = json.loads((ROOT / "upstream/facts/vllm-ascend" / f"{release}.json").read_text())
    return facts["vllm"]["version"]


def oracle(script: str, release: str, cases: list[dict]) -> list[dict]:
    ascend = facts_testlib.src(release)
    vllm = facts_testlib.src(vllm_of(release), "vllm")
    out = subprocess.run(
        [sys.executable, str(HERE / script), str(ascend), str(vllm)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=600,
    )
    if out.returncode != 0:
        raise AssertionError(f"{script} on vllm-ascend {release}: {out.stderr}")
    got = json.loads(out.stdout)
    assert len(got) == len(cases)
    return got


def where(release: str, c: dict, r: dict) -> str:
    keep = ("tp", "num_spec", "block_size", "full_layers", "mamba_layers", "available_memory", "max_model_len")
    keep += tuple(k for k in ("prefix_caching", "max_num_batched_tokens") if k in c)
    return f"vllm-ascend {release} {json.dumps({k: c[k] for k in keep})}: {json.dumps(r)}"


class TwoReleases(unittest.TestCase):
    """The oracle's own invariants, on one release that sizes the block in
    vllm-ascend's patch and on the first that leaves it to vLLM."""

    RELEASES = ("0.29.0rc1", "0.30.0rc1")

    def test_the_plan_is_consistent(self):
        cases = brief_cases() + random_cases(150, seed=7) + brief_cases(prefix=True) + random_prefix_cases(100, seed=8)
        for release in self.RELEASES:
            got = oracle("hybrid_kv_oracle.py", release, cases)
            blocks = oracle("hybrid_block_oracle.py", release, cases)
            counted = refused = 0
            for c, r, b in zip(cases, got, blocks):
                at = where(release, c, r)
                if "refused" in b:
                    # The patch's own refusal is the oracle's.
                    self.assertIn("refused", r, at)
                    self.assertNotIn("num_blocks", r, at)
                    continue
                if "refused" in r and "enough" not in r:
                    if "In Mamba cache align mode" in r["refused"]:
                        # After the plan, vLLM up to 0.26 only.
                        self.assertTrue(c.get("prefix_caching") and FAMILY[release][3], at)
                        continue
                    # Refused before the plan: only vLLM's divide() in the
                    # state shapes, on a TP that divides no head count.
                    self.assertNotEqual(c["config"]["linear_num_value_heads"] % c["tp"], 0, at)
                    continue
                if FAMILY[release][0] == "ascend":
                    # The Mamba page and block are the ones vllm-ascend's
                    # patch sizes (hybrid_block_oracle.py).
                    self.assertEqual(r["mamba_page_size_padded"], b["mamba_page_size_padded"], at)
                    self.assertEqual(r["block_size"], b["block_size"], at)
                else:
                    # The patch leaves them to vLLM's platform code.
                    self.assertIsNone(b["mamba_page_size_padded"], at)
                    self.assertIsNotNone(r.get("mamba_page_size_padded"), at)
                if "refused" in r:
                    # Otherwise only the memory check refuses.
                    self.assertIs(r["enough"], False, at)
                    if r["check_available_bytes"] <= 0:
                        self.assertIn("No available memory for the cache blocks", r["refused"], at)
                    else:
                        self.assertIn("To serve at least one request", r["refused"], at)
                        self.assertGreater(r["max_memory_usage_bytes"], r["check_available_bytes"], at)
                    refused += 1
                    continue
                counted += 1
                page = r["attn_page_size_bytes"]
                # Uniform pages: every group shares one page.
                self.assertEqual(page, r["mamba_page_size_bytes"], at)
                self.assertEqual(page, r["mamba_page_size_padded"], at)
                self.assertGreaterEqual(page, r["mamba_raw_page_size_bytes"], at)
                g = r["group_size"]
                self.assertEqual(sum(n for _, n in r["groups"]), c["full_layers"] + c["mamba_layers"], at)
                self.assertTrue(all(n <= g for _, n in r["groups"]), at)
                n = r["num_blocks"]
                self.assertLessEqual(n * page * g, c["available_memory"], at)
                self.assertLess(c["available_memory"], (n + 1) * page * g, at)
                self.assertLessEqual(r["max_memory_usage_bytes"], r["check_available_bytes"], at)
                self.assertEqual(r["num_speculative_blocks"], c["num_spec"], at)
                # Qwen3.5 supports no Mamba cache mode "all": prefix caching
                # aligns the Mamba block to the attention block; one state
                # more per request, whatever max_model_len.
                prefix = c.get("prefix_caching", False)
                self.assertEqual(r["mamba_cache_mode"], "align" if prefix else "none", at)
                self.assertEqual(r["mamba_block_size"], r["block_size"] if prefix else c["max_model_len"], at)
                self.assertEqual(r["mamba_spec_block_size"], r["mamba_block_size"], at)
                self.assertEqual(r["mamba_max_memory_usage_bytes"], page * ((2 if prefix else 1) + c["num_spec"]), at)
            self.assertGreater(counted, 150, release)
            self.assertGreater(refused, 30, release)

    def test_prefix_caching_changes_the_mode_and_the_check_only(self):
        # The same cases with and without --enable-prefix-caching: block,
        # pages, groups and num_blocks agree; the request needs one Mamba
        # block more per GDN group (0.18.0's check counts only the attention
        # group, so there it needs the same).
        off = brief_cases() + random_cases(60, seed=9)
        on = [{**c, "prefix_caching": True, "max_num_batched_tokens": 1 << 20} for c in off]
        same = ("block_size", "attn_page_size_bytes", "mamba_page_size_bytes", "groups", "num_blocks", "group_size")
        for release in ("0.18.0", "0.24.0rc1", "0.29.0rc1", "0.30.0rc2"):
            got = oracle("hybrid_kv_oracle.py", release, off + on)
            paired = 0
            for c, r0, r1 in zip(off, got[: len(off)], got[len(off) :]):
                at = where(release, c, r0) + " / " + json.dumps(r1)
                if "num_blocks" not in r0 or "num_blocks" not in r1:
                    continue
                paired += 1
                for k in same:
                    self.assertEqual(r0[k], r1[k], f"{k}: {at}")
                mamba_groups = sum(1 for kind, _ in r0["groups"] if kind == "MambaSpec")
                more = 0 if release == "0.18.0" else r0["group_size"] * r0["mamba_page_size_bytes"] * mamba_groups
                self.assertEqual(r1["max_memory_usage_bytes"] - r0["max_memory_usage_bytes"], more, at)
            self.assertGreater(paired, 40, release)

    def test_a_typed_block_with_prefix_caching(self):
        # Qwen3.5-397B TP1, --enable-prefix-caching --block-size 16384: the
        # typed block stays (it exceeds what the pages need) and becomes the
        # Mamba block; up to vLLM 0.26 the engine then refuses it against the
        # default batch budget of 8192 tokens, and accepts it with 16384.
        model = MODELS["Qwen3.5-397B-A17B"]
        cases = [
            case(model, 1, 0, 96 * GiB, 32768, block=16384, prefix=True),
            case(model, 1, 0, 96 * GiB, 32768, block=16384, prefix=True, batched=16384),
            case(model, 1, 0, 96 * GiB, 32768, block=1024, prefix=True),
        ]
        for release in ("0.26.0rc1", "0.27.1rc1", "0.30.0rc1"):
            default, budget, small = oracle("hybrid_kv_oracle.py", release, cases)
            if FAMILY[release][3]:
                self.assertEqual(
                    default,
                    {
                        "refused": "In Mamba cache align mode, block_size (16384) must be <= "
                        "max_num_batched_tokens (8192)."
                    },
                    release,
                )
            else:
                self.assertEqual(default, budget, release)
            self.assertEqual((budget["block_size"], budget["mamba_block_size"]), (16384, 16384), release)
            self.assertEqual(budget["mamba_cache_mode"], "align", release)
            self.assertEqual(budget["mamba_max_num_blocks_per_req"], 2, release)  # cdiv(32768, 16384) + 0
            # A typed block below what the pages need is raised: to 4096 by
            # vllm-ascend's patch; in 0.30 by vLLM's alignment to a multiple
            # of the typed block (1024 * cdiv(4.19 MiB, 1024 * 2 KiB) = 3072,
            # not the 2176 of an unset block).
            want = 3072 if FAMILY[release][0] == "vllm" else 4096
            self.assertEqual((small["block_size"], small["mamba_block_size"]), (want, want), release)

    def test_the_pages_differ_between_the_two_paths(self):
        # Qwen3.5-397B TP1 without MTP: vllm-ascend's patch makes one K page
        # the 4 MiB SSM state (block 4096) and pads the Mamba page by the conv
        # state; vLLM 0.30 takes the smallest 128-multiple block whose K+V
        # page holds state and conv (2176 tokens).
        c = case(MODELS["Qwen3.5-397B-A17B"], 1, 0, 20 * GiB, 32768)
        (old,) = oracle("hybrid_kv_oracle.py", "0.29.0rc1", [c])
        (new,) = oracle("hybrid_kv_oracle.py", "0.30.0rc1", [c])
        self.assertEqual((old["block_size"], old["attn_page_size_bytes"]), (4096, 8 * 1024 * 1024 + 73728))
        self.assertEqual((new["block_size"], new["attn_page_size_bytes"]), (2176, 2176 * 2048))
        self.assertEqual(old["groups"], [["FullAttentionSpec", 15]] + [["MambaSpec", 15]] * 3)
        self.assertEqual(old["num_blocks"], 20 * GiB // (15 * old["attn_page_size_bytes"]))
        self.assertEqual(new["num_blocks"], 20 * GiB // (15 * new["attn_page_size_bytes"]))


class Formula(unittest.TestCase):
    """`formula` is every release's block count, page and memory check."""

    def test_formula_matches_every_release(self):
        cases = brief_cases() + random_cases(400, seed=1) + brief_cases(prefix=True) + random_prefix_cases(300, seed=2)
        for release in facts_testlib.ASCEND:
            with self.subTest(release=release):
                self.assertIn(release, FAMILY, "a new release: classify it in FAMILY")
                got = oracle("hybrid_kv_oracle.py", release, cases)
                for c, r in zip(cases, got):
                    want = formula(c, release)
                    at = where(release, c, r) + f" want {json.dumps(want)}"
                    self.assertEqual("refused" in r, "refused" in want, at)
                    for k, v in want.items():
                        if k == "refused" or (k not in r and "refused" in r):
                            continue
                        self.assertEqual(r[k], v, f"{k}: {at}")


class Cli(unittest.TestCase):
    """The command line the oracles share (`kv_oracle.cli`): the corpus
    directories as arguments, cases on stdin, results on stdout; a wrong
    argument count exits 2 with the usage, a path that is no directory 1
    with what was expected."""

    def run_cli(self, *args: str, stdin: str = "[]") -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, str(HERE / "hybrid_kv_oracle.py"), *args],
            input=stdin, capture_output=True, text=True, check=False,
        )

    def test_wrong_argument_count_prints_the_usage(self) -> None:
        p = self.run_cli("only-one")
        self.assertEqual(p.returncode, 2)
        self.assertIn("hybrid_kv_oracle.py VLLM_ASCEND_SRC VLLM_SRC", p.stderr)
        self.assertEqual(p.stdout, "")

    def test_a_missing_corpus_says_so(self) -> None:
        p = self.run_cli(str(HERE / "no-such-sdist"), str(HERE))
        self.assertEqual(p.returncode, 1)
        self.assertIn("no-such-sdist is not a directory: expected an unpacked sdist", p.stderr)
        self.assertNotIn("Traceback", p.stderr)

    def test_no_cases_give_an_empty_list(self) -> None:
        p = self.run_cli(str(facts_testlib.src("0.23.0")), str(facts_testlib.src(vllm_of("0.23.0"), "vllm")))
        self.assertEqual((p.returncode, p.stdout), (0, "[]"), p.stderr)


if __name__ == "__main__":
    unittest.main()
