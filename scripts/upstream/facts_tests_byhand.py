"""The `ByHand` tests of test_facts.py: vllm-ascend facts read by hand in the
source, cited `path:line @release`. test_facts.py imports the class, so
`python3 -m unittest test_facts` and `discover -p 'test_*.py'` run it once
(this module's name does not match `test_*.py`, or discovery would run it
twice)."""

from __future__ import annotations

import ast
import json
import re
import unittest
from pathlib import Path

import corpus
import facts_ascend
from facts_testlib import ASCEND, keys, releases_from, src, table

HERE = Path(__file__).resolve().parent


class _Module:
    """One module of a fake package: its text, parsed."""

    def __init__(self, text: str):
        self.text = text
        self.tree = ast.parse(text)


class FakePackage:
    """A package of one module `rel` holding `text` (and `more`, path ->
    text), for the readers that walk `pkg.modules` (the read-not-matched
    cases)."""

    def __init__(self, rel: str, text: str, more: dict[str, str] | None = None):
        self.modules = {rel: _Module(text)} | {r: _Module(t) for r, t in (more or {}).items()}


class ByHand(unittest.TestCase):
    def test_kvpp_preconditions(self):
        # vllm_ascend/ascend_config.py `KVPPConfig.validate` @0.28.0rc1: "KVPP PD disaggregation requires
        # MooncakeConnectorV2", "must be disabled on the decode-only node", "supports eager execution only",
        # "only non-hybrid MLA models", "speculative decoding only with method='mtp'", "KVPP and DCP cannot be
        # enabled at the same time"; @0.30.0rc1 also PIECEWISE and method 'dspark'; no KVPPConfig @0.27.1rc1.
        self.assertIsNone(table("0.27.1rc1")["kvpp"])
        k28 = table("0.28.0rc1")["kvpp"]
        self.assertEqual((k28["connector"], k28["graphs"], k28["methods"]), ("MooncakeConnectorV2", ["eager"], ["mtp"]))
        self.assertTrue(k28["decode_refused"] and k28["mla_only"] and k28["dcp_refused"])
        k30 = table("0.30.0rc2")["kvpp"]
        self.assertEqual((k30["graphs"], k30["methods"]), (["eager", "piecewise"], ["dspark", "mtp"]))

    def test_sp_graph_alignment(self):
        # vllm_ascend/worker/model_runner_v1.py `_check_and_update_cudagraph_mode`, read by hand:
        # @0.26.0rc1 L4945 it calls vLLM's `resolve_cudagraph_mode_and_sizes(...,
        # tensor_parallel_size=self.parallel_config.tensor_parallel_size, ...)` (vLLM's runner via
        # `super()` @0.18.0 L3319); @0.27.1rc1 L5399-5404 (@0.28.0rc1 L5980) `if graph_alignment >
        # max(...) and capture_sizes and all(size % graph_alignment == 0 for size in capture_sizes):
        # resolver_tensor_parallel_size = 1`; @0.29.0rc1 L6129 (@0.30.0rc1/rc2 L6387)
        # `adjust_cudagraph_sizes_for_spec_decode(graph_alignment, 1)` with graph_alignment =
        # math.lcm(uniform_decode_query_len, tensor_parallel_size).
        want = {
            "0.18.0": ("always", 3313),
            "0.26.0rc1": ("always", 4945),
            "0.27.1rc1": ("unless_sizes_aligned", 5399),
            "0.28.0rc1": ("unless_sizes_aligned", 5980),
            "0.29.0rc1": ("never", 6129),
            "0.30.0rc2": ("never", 6387),
        }
        for v, (passes, line) in want.items():
            self.assertEqual(
                table(v)["sp_graph_alignment"],
                {"passes_tp": passes, "source": f"vllm_ascend/worker/model_runner_v1.py:{line}"},
                v,
            )
        # Read, not matched: the pre-alignment handing vLLM the TP size again, or the exemption
        # setting another value, falls back to `always`.
        def read(body):
            text = "class R:\n    def _check_and_update_cudagraph_mode(self):\n" + "".join(f"        {x}\n" for x in body)
            return facts_ascend.sp_graph_alignment(FakePackage("vllm_ascend/worker/model_runner_v1.py", text))["passes_tp"]

        self.assertEqual(read(["self.c.adjust_cudagraph_sizes_for_spec_decode(a, 1)"]), "never")
        self.assertEqual(read(["self.c.adjust_cudagraph_sizes_for_spec_decode(a, tp)"]), "always")
        aligned = "if all(s % graph_alignment == 0 for s in sizes):"
        self.assertEqual(read([aligned, "    resolver_tensor_parallel_size = 1"]), "unless_sizes_aligned")
        self.assertEqual(read([aligned, "    resolver_tensor_parallel_size = 2"]), "always")

    def test_enable_sp_reads(self):
        # vllm_ascend/utils.py `enable_sp`, read by hand: @0.18.0 L774-792 `envs_ascend.
        # VLLM_ASCEND_ENABLE_FLASHCOMM1 or bool(int(os.getenv("VLLM_ASCEND_ENABLE_FLASHCOMM", "0")))`,
        # then `if not _ENABLE_SP and enable_shared_expert_dp: _ENABLE_SP = True`; @0.23.0 L903-929
        # `"enable_flashcomm1" in additional_config` first, else the config/env, and the same forcing;
        # @0.26.0rc1 L861-888 no forcing ("no longer changes the FlashComm1 setting"); @0.27.1rc1 L811
        # `return bool(vllm_config.parallel_config.use_sequence_parallel_moe)`.
        flash = ["additional_config.enable_flashcomm1", "env.VLLM_ASCEND_ENABLE_FLASHCOMM1"]
        want = {
            "0.18.0": (["env.VLLM_ASCEND_ENABLE_FLASHCOMM", "env.VLLM_ASCEND_ENABLE_FLASHCOMM1", "shared_expert_dp"], 774),
            "0.23.0": (flash + ["shared_expert_dp"], 903),
            "0.26.0rc1": (flash, 861),
            "0.27.1rc1": (["parallel_config.use_sequence_parallel_moe"], 811),
        }
        for v, (reads, line) in want.items():
            self.assertEqual(table(v)["enable_sp"], {"reads": reads, "source": f"vllm_ascend/utils.py:{line}"}, v)

        def read(body):
            text = "def enable_sp(vllm_config=None, enable_shared_expert_dp=False):\n" + "".join(f"    {x}\n" for x in body)
            return facts_ascend.enable_sp(FakePackage("vllm_ascend/utils.py", text))["reads"]

        # Read, not matched: another env, the forcing setting False, a key test on another key.
        self.assertEqual(read(["return envs_ascend.VLLM_ASCEND_X"]), ["env.VLLM_ASCEND_X"])
        self.assertEqual(read(["if enable_shared_expert_dp:", "    on = False"]), [])
        self.assertEqual(read(["if enable_shared_expert_dp:", "    on = True"]), ["shared_expert_dp"])
        self.assertEqual(read(['return "enable_flashcomm2" in additional_config']), [])

    def test_tp_aligned_capture_sizes(self):
        # vllm_ascend/platform.py `_setup_compile_backend`, read by hand: @0.27.1rc1 L1179
        # `requires_tp_aligned_capture_sizes = enable_sp(vllm_config) or enable_shared_expert_dp or
        # enable_dsa_cp`, then under `tensor_parallel_size > 1 and cudagraph_mode != CUDAGraphMode.NONE
        # and not enforce_eager and requires_tp_aligned_capture_sizes`, `if not sp_aclgraph_sizes:`
        # raises AssertionError "... does not contain values that are multiples of tp_size" (L1188;
        # @0.28.0rc1 L1168, @0.30.0rc2 L1288). Before, `check_and_update_config` asserts the sizes kept
        # (`assert sp_aclgraph_sizes`) under `tensor_parallel_size > 1 and not enforce_eager and
        # enable_sp(vllm_config)` (@0.18.0 L340, @0.21.0rc1 L538 with `cudagraph_mode != NONE`,
        # @0.26.0rc1 L513).
        for v, line in {"0.18.0": 340, "0.21.0rc1": 538, "0.26.0rc1": 513}.items():
            self.assertEqual(
                table(v)["tp_aligned_capture_sizes"],
                {"requires": ["enable_sp"], "source": f"vllm_ascend/platform.py:{line}"},
                v,
            )
        for v, line in {"0.27.1rc1": 1188, "0.28.0rc1": 1168, "0.30.0rc2": 1288}.items():
            self.assertEqual(
                table(v)["tp_aligned_capture_sizes"],
                {"requires": ["enable_dsa_cp", "enable_shared_expert_dp", "enable_sp"], "source": f"vllm_ascend/platform.py:{line}"},
                v,
            )

        def read(requires, raises="raise AssertionError()"):
            text = (
                "def _setup_compile_backend(c, enable_shared_expert_dp=False):\n"
                f"    requires_tp_aligned_capture_sizes = {requires}\n"
                "    if c.tensor_parallel_size > 1 and c.cudagraph_mode != CUDAGraphMode.NONE and not c.enforce_eager"
                " and requires_tp_aligned_capture_sizes:\n"
                "        if not sizes:\n"
                f"            {raises}\n"
            )
            return facts_ascend.tp_aligned_capture_sizes(FakePackage("vllm_ascend/platform.py", text))

        # Read, not matched: the terms as written; no raise, no refusal.
        self.assertEqual(read("enable_sp(c) or enable_shared_expert_dp")["requires"], ["enable_shared_expert_dp", "enable_sp"])
        self.assertIsNone(read("enable_sp(c) or enable_shared_expert_dp", "pass"))

    def test_default_capture_cap(self):
        # vllm_ascend/platform.py, read by hand: `apply_config_platform_defaults` sets
        # `max_cudagraph_capture_size` from `_get_default_max_cudagraph_capture_size` (a classmethod
        # @0.18.0 L191, @0.23.0 L241; a module function @0.27.1rc1 L1440), from `_get_reduced_cg_cap`
        # @0.30.0rc2 (L1537), each `return min(max_num_seqs * decode_query_len, 512)`;
        # `_setup_compile_backend` @0.30.0rc2 adds it: `sorted(set(... or []) | {reduced_cg_cap})`.
        for v, (line, unions) in {"0.18.0": (191, False), "0.23.0": (241, False), "0.27.1rc1": (1440, False), "0.30.0rc2": (1537, True)}.items():
            self.assertEqual(
                table(v)["default_capture_cap"],
                {"per_seq": 1, "ceiling": 512, "source": f"vllm_ascend/platform.py:{line}", "unions_cap": unions},
                v,
            )

        def read(ret, call="cls.helper(c)"):
            text = (
                "def helper(c):\n"
                f"    return {ret}\n"
                "def apply_config_platform_defaults(cls, c):\n"
                f"    c.max_cudagraph_capture_size = {call}\n"
            )
            return facts_ascend.default_capture_cap(FakePackage("vllm_ascend/platform.py", text))

        # Read, not matched: vLLM's own `* 2`, another ceiling; not called, no fact; a name not a
        # constant fails.
        self.assertEqual(read("min(max_num_seqs * decode_query_len * 2, 256)")["per_seq"], 2)
        self.assertEqual(read("min(max_num_seqs * decode_query_len * 2, 256)")["ceiling"], 256)
        self.assertIsNone(read("min(max_num_seqs * decode_query_len, 512)", "None"))
        with self.assertRaises(facts_ascend.FactsError):
            read("min(max_num_seqs * decode_query_len * k, 512)")

    def test_sp_asserts(self):
        # vllm_ascend/platform.py `check_and_update_config`, read by hand: `if enable_sp(vllm_config):`
        # then `assert vllm_config.parallel_config.tensor_parallel_size > 1` and `assert not
        # is_moe_model(vllm_config) or vllm_config.parallel_config.enable_expert_parallel` (@0.18.0
        # L510/L514, @0.23.0 L764/L768, @0.26.0rc1 L759/L763); gone @0.27.1rc1.
        for v, (tp, ep) in {"0.18.0": (510, 514), "0.23.0": (764, 768), "0.26.0rc1": (759, 763)}.items():
            self.assertEqual(
                table(v)["sp_asserts"],
                {"tp_above_1": f"vllm_ascend/platform.py:{tp}", "expert_parallel": f"vllm_ascend/platform.py:{ep}"},
                v,
            )
        self.assertIsNone(table("0.27.1rc1")["sp_asserts"])

        def read(body):
            text = "def check_and_update_config(cls, c):\n    if enable_sp(c):\n" + "".join(f"        {x}\n" for x in body)
            return facts_ascend.sp_asserts(FakePackage("vllm_ascend/platform.py", text))

        # Read, not matched: another bound is not the TP assert; no assert, no fact.
        self.assertIsNone(read(["assert c.parallel_config.tensor_parallel_size > 2"]))
        self.assertEqual(read(["assert c.parallel_config.tensor_parallel_size > 1"])["expert_parallel"], None)
        self.assertIsNone(read(["pass"]))

    def test_aux_hidden_states_exemption(self):
        # vllm_ascend/patch/platform/patch_minimax_m2_config.py `_patch_speculative_minimax_whitelist`,
        # called at module level and imported by patch/platform/__init__.py, read by hand @0.18.0 …
        # @0.22.1rc1: `_patched_verify_args` re-raises vLLM's ValueError `if method not in ("eagle3",
        # "extract_hidden_states")` and `if "minimax" not in str(model_type).lower()` (L188), else lets
        # the start go on. No such patch @0.23.0 (vLLM 0.23.0 has no gate).
        for v in ("0.18.0", "0.19.1rc1", "0.20.2rc1", "0.22.1rc1"):
            self.assertEqual(
                table(v)["aux_hidden_states_exemption"],
                {
                    "methods": ["eagle3", "extract_hidden_states"],
                    "model_type_contains": "minimax",
                    "source": "vllm_ascend/patch/platform/patch_minimax_m2_config.py:188",
                },
                v,
            )
        self.assertIsNone(table("0.23.0")["aux_hidden_states_exemption"])

        def read(test, call="_patch()"):
            text = (
                "def _patch():\n"
                "    def _patched_verify_args(self):\n"
                "        method = self.method\n"
                '        if method not in ("eagle3",):\n'
                "            raise\n"
                f"        if {test}:\n"
                "            raise\n"
                "    SpeculativeConfig._verify_args = _patched_verify_args\n"
                f"{call}\n"
            )
            return facts_ascend.aux_hidden_states_exemption(FakePackage("vllm_ascend/patch/platform/p.py", text))

        # Read, not matched: another substring is read; a patch never called patches nothing.
        self.assertEqual(read('"glm" not in str(model_type).lower()')["model_type_contains"], "glm")
        self.assertEqual(read('"glm" not in str(model_type).lower()')["methods"], ["eagle3"])
        self.assertIsNone(read('"glm" not in str(model_type).lower()', call="pass"))

    def test_mc2_hierarchy_experts(self):
        # vllm_ascend/ascend_config.py `AscendConfig._validate_mc2_comm_alg`, read by hand @0.27.1rc1:
        # `if self.mc2_comm_alg != "hierarchy": return` (L749), `num_redundant_experts =
        # self.eplb_config.num_redundant_experts if self.eplb_config.dynamic_eplb else 0` (L756),
        # `if num_experts > 512:` raise ValueError (L758); `if self.enable_mc2_hierarchy_comm:
        # self.mc2_comm_alg = "hierarchy"` (L460). The raise at L840 @0.28.0rc1, L848 @0.29.0rc1,
        # L999 @0.30.0rc2; no such function @0.26.0rc1.
        self.assertIsNone(table("0.26.0rc1")["mc2_hierarchy_experts"])
        for v, line in {"0.27.1rc1": 758, "0.28.0rc1": 840, "0.29.0rc1": 848, "0.30.0rc2": 999}.items():
            self.assertEqual(
                table(v)["mc2_hierarchy_experts"],
                {
                    "alg": "hierarchy",
                    "aliases": ["enable_mc2_hierarchy_comm"],
                    "max_experts": 512,
                    "redundant_when": "dynamic_eplb",
                    "source": f"vllm_ascend/ascend_config.py:{line}",
                },
                v,
            )

        def read(limit="num_experts > 512", redundant="self.eplb_config.dynamic_eplb"):
            text = (
                "class AscendConfig:\n"
                "    def __init__(self):\n"
                "        if self.old_key:\n"
                '            self.mc2_comm_alg = "hierarchy"\n'
                "    def _validate_mc2_comm_alg(self, c):\n"
                '        if self.mc2_comm_alg != "hierarchy":\n'
                "            return\n"
                f"        num_redundant_experts = self.eplb_config.num_redundant_experts if {redundant} else 0\n"
                f"        if {limit}:\n"
                "            raise ValueError()\n"
            )
            return facts_ascend.mc2_hierarchy_experts(FakePackage("vllm_ascend/ascend_config.py", text))

        # Read, not matched: another limit, another switch, another alias.
        self.assertEqual(read("num_experts > 256")["max_experts"], 256)
        self.assertEqual(read(redundant="self.eplb_config.other")["redundant_when"], "other")
        self.assertEqual(read()["aliases"], ["old_key"])
        self.assertIsNone(read("num_experts < 512"))

    def test_sp_moe(self):
        # Read by hand. vllm_ascend/patch/platform/patch_parallel_config.py redefines vLLM's
        # `ParallelConfig.use_sequence_parallel_moe` without vLLM's `data_parallel_size > 1`:
        # `@property` L32 @0.27.1rc1 (imported by patch/platform/__init__.py L52); the file is absent
        # @0.28.0rc1; `def _use_sequence_parallel_moe` L12 @0.29.0rc1 (`= property(...)`, L33), L7
        # @0.30.0rc1/rc2, adding "deepep_v2" and "flashinfer_nvlink_one_sided". AscendConfig
        # (ascend_config.py) sets `all2all_backend = "flashinfer_all2allv"` under `if not want_sp_moe
        # and vc.parallel_config.use_sequence_parallel_moe:` L540 @0.27.1rc1 (want_sp_moe =
        # effective_flashcomm and enable_expert_parallel and tensor_parallel_size > 1, L535), under
        # `if not effective_flashcomm:` L617 @0.28.0rc1, L620 @0.29.0rc1, L764 @0.30.0rc1/rc2;
        # effective_flashcomm = `validate_additional_config_bool(...get("enable_flashcomm1", False))
        # or os.getenv("VLLM_ASCEND_ENABLE_FLASHCOMM1", "0").strip().lower() in ("1", "true")` or
        # `self.enable_dsa_cp`. No such code @0.26.0rc1, where `enable_sp()` reads FlashComm1 itself.
        self.assertIsNone(table("0.26.0rc1")["sp_moe"])
        props = {"0.27.1rc1": 32, "0.28.0rc1": None, "0.29.0rc1": 12, "0.30.0rc1": 7, "0.30.0rc2": 7}
        switches = {"0.27.1rc1": 540, "0.28.0rc1": 617, "0.29.0rc1": 620, "0.30.0rc1": 764, "0.30.0rc2": 764}
        for v, line in props.items():
            got = table(v)["sp_moe"]
            if line is None:
                self.assertIsNone(got["property"], v)
            else:
                self.assertEqual(got["property"]["source"], f"vllm_ascend/patch/platform/patch_parallel_config.py:{line}", v)
                self.assertEqual(got["property"]["requires"], ["enable_expert_parallel", "tensor_parallel_size > 1"], v)
                self.assertEqual("deepep_v2" in got["property"]["backends"], v != "0.27.1rc1", v)
            self.assertEqual(
                got["switch"],
                {
                    "any_of": ["additional_config.enable_dsa_cp", "additional_config.enable_flashcomm1", "env.VLLM_ASCEND_ENABLE_FLASHCOMM1"],
                    "all_of": ["enable_expert_parallel", "tensor_parallel_size > 1"] if v == "0.27.1rc1" else [],
                    "env_true": ["1", "true"],
                    "off_backend": "flashinfer_all2allv",
                    "source": f"vllm_ascend/ascend_config.py:{switches[v]}",
                },
                v,
            )

        def read(test="not effective", eff='os.getenv("E", "0").strip().lower() in ("1", "yes") or self.key_a',
                 prop="self.all2all_backend in ('x',) and self.enable_expert_parallel", imported=True):
            config = (
                "class AscendConfig:\n"
                "    def __init__(self, vc):\n"
                f"        effective = {eff}\n"
                f"        if {test}:\n"
                '            vc.parallel_config.all2all_backend = "off"\n'
            )
            patch = f"def _p(self):\n    return {prop}\nParallelConfig.use_sequence_parallel_moe = property(_p)\n"
            init = "import vllm_ascend.patch.platform.patch_x  # noqa\n" if imported else ""
            return facts_ascend.sp_moe(FakePackage("vllm_ascend/ascend_config.py", config, {
                "vllm_ascend/patch/platform/patch_x.py": patch, "vllm_ascend/patch/platform/__init__.py": init}))

        # Read, not matched: another env, its true spellings, another key, the backend, the
        # property's terms; a patch nobody imports patches nothing; an unknown term stops the reading.
        got = read()
        self.assertEqual(got["switch"]["any_of"], ["additional_config.key_a", "env.E"])
        self.assertEqual((got["switch"]["env_true"], got["switch"]["off_backend"]), (["1", "yes"], "off"))
        self.assertEqual(got["property"]["backends"], ["x"])
        self.assertEqual(got["property"]["requires"], ["enable_expert_parallel"])
        self.assertEqual(read(eff='validate_additional_config_bool(vc.additional_config.get("k2", False), "p")')["switch"]["any_of"],
                         ["additional_config.k2"])
        self.assertEqual(read("not (effective and vc.parallel_config.tensor_parallel_size > 2) and vc.parallel_config.use_sequence_parallel_moe")
                         ["switch"]["all_of"], ["tensor_parallel_size > 2"])
        self.assertIsNone(read(imported=False)["property"])
        with self.assertRaisesRegex(facts_ascend.FactsError, "does not read"):
            read(eff="self.key_a and other()")
        with self.assertRaisesRegex(facts_ascend.FactsError, "not `not X"):
            read("effective")
        with self.assertRaisesRegex(facts_ascend.FactsError, "does not read"):
            read(prop="self.all2all_backend in ('x',) and self.data_parallel_size >= 2")

    def test_image_switches(self):
        # Read by hand. vllm_ascend/utils.py `enable_dsa_cp`: `if dsa_cp_enable and not enable_sp():`
        # raise ValueError("DSA CP requires SP ...") L1405 @0.20.2rc1, L1361 @0.21.0rc1/0.22.1rc1,
        # L1531 @0.23.0rc1/0.23.0, L1458 @0.24.0rc1, L1390 @0.25.1rc1, L1402 @0.26.0rc1; @0.19.1rc1
        # `return bool(is_ds_v32 and enable_sp())` (L1278, no raise); @0.27.1rc1 it returns
        # `get_ascend_config().enable_dsa_cp` (L1337). vllm_ascend/platform.py: under `if
        # ascend_config.recompute_scheduler_enable:` an `if kv_role == "kv_producer":` that warns
        # and turns it off, L682 @0.23.0rc1, L1112 @0.30.0rc2; @0.22.1rc1 the `if` (L677) only
        # raises outside PD. mooncake_connector.py `self.use_hybrid = (` L1457 @0.22.1rc1, L2174
        # @0.30.0rc2; none @0.21.0rc1.
        dsa = {"0.19.1rc1": None, "0.20.2rc1": 1405, "0.21.0rc1": 1361, "0.23.0": 1531, "0.26.0rc1": 1402, "0.27.1rc1": None}
        for v, line in dsa.items():
            want = None if line is None else {"source": f"vllm_ascend/utils.py:{line}"}
            self.assertEqual(table(v)["dsa_cp_needs_sp"], want, v)
        self.assertEqual(table("0.22.1rc1")["recompute_on_prefill"], {"prefill": "runs", "source": "vllm_ascend/platform.py:677"})
        self.assertEqual(table("0.23.0rc1")["recompute_on_prefill"], {"prefill": "ignored", "source": "vllm_ascend/platform.py:682"})
        self.assertEqual(table("0.30.0rc2")["recompute_on_prefill"], {"prefill": "ignored", "source": "vllm_ascend/platform.py:1112"})
        hybrid = "vllm_ascend/distributed/kv_transfer/kv_p2p/mooncake_connector.py"
        self.assertIsNone(table("0.21.0rc1")["v1_hybrid_kv"])
        self.assertEqual(table("0.22.1rc1")["v1_hybrid_kv"], {"source": f"{hybrid}:1457"})
        self.assertEqual(table("0.30.0rc2")["v1_hybrid_kv"], {"source": f"{hybrid}:2174"})

        # Read, not matched: the raise under another SP test is still read; without the raise,
        # or with the producer branch raising, the fact changes.
        def dsa_read(test: str, body: str = "raise ValueError()") -> dict | None:
            text = f"def enable_dsa_cp():\n    x = 1\n    if {test}:\n        {body}\n    return x\n"
            return facts_ascend.dsa_cp_needs_sp(FakePackage("vllm_ascend/utils.py", text))

        self.assertEqual(dsa_read("key and not enable_sp(cfg)"), {"source": "vllm_ascend/utils.py:3"})
        self.assertIsNone(dsa_read("key and not enable_sp()", "x = 0"))
        self.assertIsNone(dsa_read("key and enable_sp()"))

        def recompute_read(body: str) -> dict | None:
            text = f"def f(c, kv_role):\n    if c.recompute_scheduler_enable:\n        if kv_role == 'kv_producer':\n            {body}\n"
            return facts_ascend.recompute_on_prefill(FakePackage("vllm_ascend/platform.py", text))

        self.assertEqual(recompute_read("c.x = False")["prefill"], "ignored")
        self.assertEqual(recompute_read("raise ValueError()")["prefill"], "runs")
        got = facts_ascend.v1_hybrid_kv(FakePackage(hybrid, "class C:\n    def f(self):\n        self.use_hybrid = True\n"))
        self.assertEqual(got, {"source": f"{hybrid}:3"})
        self.assertIsNone(facts_ascend.v1_hybrid_kv(FakePackage(hybrid, "class C:\n    use_hybrid = True\n")))

    def test_hybrid_attn_block(self):
        # vllm_ascend/patch/platform/patch_mamba_config.py `verify_and_update_config`, read by hand:
        # @0.18.0 L36 `kernel_block_size = 128`, L53 the ssm page the largest Mamba state, L40 the
        # K page `attn_head_size * attn_num_kv_heads * get_dtype_size(kv_cache_dtype)`, L58
        # `attn_block_size = kernel_block_size * cdiv(ssm_block_page_size, kernel_block_size *
        # attn_single_token_k_page_size)`, L66 raised to when unset or smaller; @0.21.0rc1 to
        # 0.26.0rc1 the same at L58/L70/L91/L94/L102 (an MLA branch added); @0.28.0rc1 and
        # 0.29.0rc1 a second `attn_block_size = alignment_tokens * cdiv(...)` (L118) in `if
        # index_kpool is not None:`, the formula in its `else` (L127); @0.30.0rc1 only the kpool
        # assignment is left.
        rel = "vllm_ascend/patch/platform/patch_mamba_config.py"
        self.assertEqual(table("0.18.0")["hybrid_attn_block"], {"kernel_block_size": 128, "source": f"{rel}:58"})
        for v in ("0.21.0rc1", "0.26.0rc1"):
            self.assertEqual(table(v)["hybrid_attn_block"], {"kernel_block_size": 128, "source": f"{rel}:94"}, v)
        for v in ("0.28.0rc1", "0.29.0rc1"):
            self.assertEqual(table(v)["hybrid_attn_block"], {"kernel_block_size": 128, "source": f"{rel}:127"}, v)
        self.assertIsNone(table("0.30.0rc2")["hybrid_attn_block"])
        # Mutant: the kpool branch's test turned around puts its assignment on Qwen3.5's path.
        text28 = (src("0.28.0rc1") / rel).read_text()
        self.assertIn("    if index_kpool is not None:\n", text28)
        turned = text28.replace("    if index_kpool is not None:\n", "    if index_kpool is None:\n", 1)
        self.assertIsNone(facts_ascend.hybrid_attn_block(FakePackage(rel, turned)))
        text = (src("0.26.0rc1") / rel).read_text()
        self.assertIsNotNone(facts_ascend.hybrid_attn_block(FakePackage(rel, text)))
        # Mutants: another kernel, another K page, a second block formula, no raise.
        got = facts_ascend.hybrid_attn_block(FakePackage(rel, text.replace("kernel_block_size = 128", "kernel_block_size = 64")))
        self.assertEqual(got["kernel_block_size"], 64)
        for old, new in [
            ("attn_head_size * attn_num_kv_heads * get_dtype_size", "2 * attn_head_size * attn_num_kv_heads * get_dtype_size"),
            ("cache_config.block_size < attn_block_size", "cache_config.block_size != attn_block_size"),
            ("    # override attention block size", "    if False:\n        attn_block_size = 1\n    # override attention block size"),
        ]:
            self.assertIn(old, text)
            self.assertIsNone(facts_ascend.hybrid_attn_block(FakePackage(rel, text.replace(old, new, 1))), new)

    def test_hybrid_block_vllm(self):
        # vllm_ascend/platform.py `NPUPlatform.update_block_size_for_backend`, read by hand: @0.30.0rc1
        # and rc2 L406 `super().update_block_size_for_backend(vllm_config)` first (vLLM's
        # `_align_hybrid_block_size` sizes a hybrid block), and
        # vllm_ascend/attention/attention_v1.py `get_supported_kernel_block_sizes` ends `return [128]`;
        # @0.29.0rc1 the override never calls vLLM's.
        plat, attn = "vllm_ascend/platform.py", "vllm_ascend/attention/attention_v1.py"
        for v in ("0.30.0rc1", "0.30.0rc2"):
            self.assertEqual(table(v)["hybrid_block_vllm"], {"kernel_block_size": 128, "source": f"{plat}:406"}, v)
        for v in ("0.18.0", "0.29.0rc1"):
            self.assertIsNone(table(v)["hybrid_block_vllm"], v)
        p30, a30 = (src("0.30.0rc2") / plat).read_text(), (src("0.30.0rc2") / attn).read_text()
        self.assertIsNotNone(facts_ascend.hybrid_block_vllm(FakePackage(plat, p30, {attn: a30})))
        # Mutants: the call to vLLM's dropped; another kernel list; a kernel list not of literals.
        call = "        super().update_block_size_for_backend(vllm_config)\n"
        self.assertIn(call, p30)
        self.assertIsNone(facts_ascend.hybrid_block_vllm(FakePackage(plat, p30.replace(call, "", 1), {attn: a30})))
        self.assertIn("        return [128]\n", a30)
        got = facts_ascend.hybrid_block_vllm(FakePackage(plat, p30, {attn: a30.replace("        return [128]\n", "        return [256, 64]\n")}))
        self.assertEqual(got["kernel_block_size"], 64)
        self.assertIsNone(facts_ascend.hybrid_block_vllm(FakePackage(plat, p30, {attn: a30.replace("        return [128]\n", "        return [N]\n")})))

    def test_modelslim_description(self):
        # vllm_ascend/quantization/modelslim_config.py, read by hand: @0.18.0 L48
        # `MODELSLIM_CONFIG_FILENAME = "quant_model_description.json"`, `maybe_update_config` L582
        # looks it up with `get_model_file(model_name, MODELSLIM_CONFIG_FILENAME, ...)` and ends
        # with `raise ValueError(...)` at L625 ("ModelSlim Quantization Config Not Found");
        # vllm_ascend/utils.py L48 `ASCEND_QUANTIZATION_METHOD = "ascend"`. @0.30.0rc2 the module
        # is quantization/configs/modelslim_config.py, the raise at L928. The 310P copy
        # (_310p/quantization/modelslim_config.py) is another device's and not read.
        self.assertEqual(
            table("0.18.0")["modelslim_description"],
            {"method": "ascend", "file": "quant_model_description.json", "source": "vllm_ascend/quantization/modelslim_config.py:625"},
        )
        rel = "vllm_ascend/quantization/configs/modelslim_config.py"
        self.assertEqual(table("0.30.0rc2")["modelslim_description"]["source"], f"{rel}:928")
        text = (src("0.30.0rc2") / rel).read_text()
        utils = {"vllm_ascend/utils.py": 'ASCEND_QUANTIZATION_METHOD = "ascend"\n'}
        got = facts_ascend.modelslim_description(FakePackage(rel, text, utils))
        self.assertEqual(got["file"], "quant_model_description.json")
        # Mutants: another file name is read; no lookup of it, or no raise after it, is None.
        got = facts_ascend.modelslim_description(
            FakePackage(rel, text.replace('MODELSLIM_CONFIG_FILENAME = "quant_model_description.json"', 'MODELSLIM_CONFIG_FILENAME = "quant.json"'), utils)
        )
        self.assertEqual(got["file"], "quant.json")
        self.assertIsNone(facts_ascend.modelslim_description(FakePackage(rel, text)), "no ASCEND_QUANTIZATION_METHOD")
        for old, new in [
            ("config_path = get_model_file(model_name, MODELSLIM_CONFIG_FILENAME, revision=revision)", "config_path = None"),
            ("        raise ValueError(\n            \"\\n\"", "        return None\n        raise ValueError(\n            \"\\n\""),
        ]:
            self.assertIn(old, text)
            self.assertIsNone(facts_ascend.modelslim_description(FakePackage(rel, text.replace(old, new, 1), utils)), new)

    def test_kv_store_align(self):
        # vllm_ascend/patch/platform/patch_mamba_config.py, read by hand: @0.21.0rc1 `_using_kv_store`
        # tests `kv_connector == "AscendStoreConnector"` (or a MultiConnector child of it), L42
        # `using_kv_store_with_hybrid = not ...disable_hybrid_kv_cache_manager and _using_kv_store(...)`,
        # L125 `if using_kv_store_with_hybrid:` L126-127 `if cache_config.mamba_cache_mode == "none":
        # cache_config.mamba_cache_mode = "align"`; @0.22.1rc1 L136 `and not is_extract_hidden_states`
        # (L134 `getattr(spec_config, "method", None) == "extract_hidden_states"`), L138 the
        # assignment; @0.30.0rc2 L168; none @0.20.2rc1.
        rel = "vllm_ascend/patch/platform/patch_mamba_config.py"
        self.assertIsNone(table("0.20.2rc1")["kv_store_align"])
        self.assertEqual(
            table("0.21.0rc1")["kv_store_align"],
            {"connector": "AscendStoreConnector", "exempt_methods": [], "source": f"{rel}:127"},
        )
        self.assertEqual(
            table("0.22.1rc1")["kv_store_align"],
            {"connector": "AscendStoreConnector", "exempt_methods": ["extract_hidden_states"], "source": f"{rel}:138"},
        )
        self.assertEqual(table("0.30.0rc2")["kv_store_align"]["source"], f"{rel}:168")
        text = (src("0.26.0rc1") / rel).read_text()
        self.assertIsNotNone(facts_ascend.kv_store_align(FakePackage(rel, text)))
        # Mutants: another connector is read; a mode other than 'align', a switch it does not
        # test, or no assignment under the `if`, is None.
        got = facts_ascend.kv_store_align(FakePackage(rel, text.replace('== "AscendStoreConnector"', '== "OtherStore"', 1)))
        self.assertEqual(got["connector"], "OtherStore")
        for old, new in [
            ('cache_config.mamba_cache_mode = "align"', 'cache_config.mamba_cache_mode = "all"'),
            ("not vllm_config.scheduler_config.disable_hybrid_kv_cache_manager and", "True and"),
            ('if cache_config.mamba_cache_mode == "none":', 'if cache_config.mamba_cache_mode == "other":'),
        ]:
            self.assertIn(old, text)
            self.assertIsNone(facts_ascend.kv_store_align(FakePackage(rel, text.replace(old, new, 1))), new)

    def test_env_migration(self):
        # docs/source/user_guide/configuration/additional_config.md, read by hand: "### Quick
        # Reference" then `| Environment Variable | Config Key | Type Conversion |`, ten rows at
        # @0.20.2rc1 (L19 `VLLM_ASCEND_BALANCE_SCHEDULING` → `enable_balance_scheduling` … L28
        # `VLLM_ASCEND_FUSION_OP_TRANSPOSE_KV_CACHE_BY_BLOCK`); five at @0.30.0rc2 (L20 first,
        # `MSMONITOR_USE_DAEMON`); no such doc section @0.19.1rc1.
        self.assertIsNone(table("0.19.1rc1")["env_migration"])
        rows = table("0.20.2rc1")["env_migration"]
        doc = "docs/source/user_guide/configuration/additional_config.md"
        self.assertEqual(len(rows), 10)
        self.assertEqual(rows[0], {"env": "VLLM_ASCEND_BALANCE_SCHEDULING", "key": "enable_balance_scheduling", "source": f"{doc}:19"})
        self.assertEqual(rows[-1]["source"], f"{doc}:28")
        self.assertEqual(table("0.30.0rc2")["env_migration"][0]["env"], "MSMONITOR_USE_DAEMON")

        # Read, not matched: another row is read; a heading without rows stops the reading.
        import tempfile

        def read(body: str):
            with tempfile.TemporaryDirectory() as d:
                p = Path(d) / doc
                p.parent.mkdir(parents=True)
                p.write_text(body, encoding="utf-8")
                return facts_ascend.env_migration(Path(d))

        got = read("# x\n### Quick Reference\n\n| a | b |\n|--|--|\n| `FOO_BAR` | `foo_bar` | x |\n\n### Next\n| `NOT_READ` | `no` | x |\n")
        self.assertEqual(got, [{"env": "FOO_BAR", "key": "foo_bar", "source": f"{doc}:6"}])
        self.assertIsNone(read("# x\nno table\n"))
        with self.assertRaises(facts_ascend.FactsError):
            read("### Quick Reference\n\nnothing here\n")

    def test_v41_runner_and_engram(self):
        # vllm_ascend/platform.py @0.30.0rc1: `_validate_model_runner_config` raises "DeepSeek V4.1 on
        # Ascend A5 requires Model Runner V2" for architecture in ("DeepseekV41ForCausalLM",
        # "DeepseekV41DSparkModel") on a profile with DSV41_PACKED_CACHE (device/hardware_profile.py: A5
        # only); `_validate_engram_config` raises "Ascend Engram requires TP=1/2/4/8" for
        # DeepseekV41ForCausalLM. Neither function exists @0.29.0rc1.
        self.assertEqual(table("0.29.0rc1")["v2_runner_required"], [])
        self.assertIsNone(table("0.29.0rc1")["engram_tp"])
        for v in ("0.30.0rc1", "0.30.0rc2"):
            [r] = table(v)["v2_runner_required"]
            self.assertEqual(
                (r["architectures"], r["capability"], r["devices"]),
                (["DeepseekV41DSparkModel", "DeepseekV41ForCausalLM"], "DSV41_PACKED_CACHE", ["A5"]),
            )
            e = table(v)["engram_tp"]
            self.assertEqual((e["architecture"], e["tp_sizes"]), ("DeepseekV41ForCausalLM", [1, 2, 4, 8]))

    def test_eplb_phase_needs_enable_eplb_on_the_v2_runner(self):
        # vllm_ascend/platform.py `_validate_eplb_config` @0.27.1rc1 L911-913 (@0.30.0rc2 L983-985):
        # `load_collection_phase = eplb_config.get("load_collection_phase", "all")`, then ValueError
        # "additional_config.eplb_config.load_collection_phase requires --enable-eplb." when it is
        # `!= "all" and not vllm_config.parallel_config.enable_eplb`; no V2 branch @0.26.0rc1.
        self.assertIsNone(table("0.26.0rc1")["eplb_runner"])
        lines = {"0.27.1rc1": 912, "0.28.0rc1": 892, "0.29.0rc1": 896, "0.30.0rc1": 984, "0.30.0rc2": 984}
        for v, line in lines.items():
            [n] = table(v)["eplb_runner"]["v2_fields_need_flag"]
            self.assertEqual((n["field"], n["default"], n["flag"]), ("load_collection_phase", "all", "--enable-eplb"), v)
            self.assertEqual(n["source"], f"vllm_ascend/platform.py:{line}", v)
        # The flag is vLLM's option for that ParallelConfig field, at the vLLM each release ships.
        for v in lines:
            vllm = json.loads((HERE.parent.parent / "upstream/facts/vllm" / f"{table(v)['vllm']['version']}.json").read_text())
            self.assertIn("enable-eplb", [f["name"] for f in vllm["serve_flags"]], v)
        # Read, not matched: another default or another ParallelConfig field changes the entry.
        snippet = """
phase = eplb_config.get("load_collection_phase", "all")
if phase != "{cmp}" and not vllm_config.parallel_config.{attr}:
    raise ValueError("x")
"""
        def read(cmp, attr):
            body = ast.parse(snippet.format(cmp=cmp, attr=attr))
            return facts_ascend._v2_fields_needing_flag(body, "p.py")
        self.assertEqual([e["flag"] for e in read("all", "enable_elastic_ep")], ["--enable-elastic-ep"])
        self.assertEqual(read("none", "enable_eplb"), [])

    def test_finegrained_tp_connector(self):
        # vllm_ascend/platform.py @0.30.0rc1 L1146: `offload_missing = ... not
        # kv_transfer_config.has_connector("PreemptOffloadConnector")`, then AssertionError when
        # `ftpc.oproj_tensor_parallel_size > 1 or ftpc.mlp_tensor_parallel_size > 1`; absent @0.29.0rc1.
        self.assertIsNone(table("0.29.0rc1")["finegrained_tp_connector"])
        for v in ("0.30.0rc1", "0.30.0rc2"):
            f = table(v)["finegrained_tp_connector"]
            self.assertEqual(
                (f["connector"], f["sizes"]),
                ("PreemptOffloadConnector", ["mlp_tensor_parallel_size", "oproj_tensor_parallel_size"]),
            )

    def test_init_never_defines_version(self):
        # vllm_ascend/__init__.py (every release): no `__version__`; setup.py calls
        # `get_version(write_to="vllm_ascend/_version.py")` (setup.py:447 @0.18.0, :416 @0.30.0rc2)
        for v in ASCEND:
            with self.subTest(release=v):
                self.assertNotIn("__version__", (src(v) / "vllm_ascend/__init__.py").read_text())
                vm = table(v)["version_module"]
                self.assertEqual(
                    vm,
                    {"module": "vllm_ascend._version", "attribute": "__version__", "init_defines_version": False,
                     "source": "vllm_ascend/_version.py"},
                )
                # vllm_ascend/_version.py (setuptools-scm): `__version__ = version = '<release>'`
                text = (src(v) / "vllm_ascend/_version.py").read_text()
                self.assertIn(f"__version__ = version = '{v}'", text)

    def test_vllm_tag_comes_from_the_dockerfile(self):
        # Dockerfile.a3 @0.21.0rc1: `ARG VLLM_TAG=v0.22.1`, while
        # docs/source/community/versioning_policy.md @0.21.0rc1 lists v0.21.0
        t = table("0.21.0rc1")
        self.assertEqual(t["vllm"], {"version": "0.22.1", "source": "Dockerfile.a3"})
        policy = (src("0.21.0rc1") / "docs/source/community/versioning_policy.md").read_text()
        self.assertIn("v0.21.0", policy)
        self.assertEqual(table("0.18.0")["vllm"]["version"], "0.18.0")  # Dockerfile.a3:ARG VLLM_TAG=v0.18.0
        self.assertEqual(table("0.30.0rc2")["vllm"]["version"], "0.30.0")

    def test_no_dockerfile_installs_iproute2(self):
        # every Dockerfile* of every release: no iproute2 (so no `ip`/`ss` from the image itself)
        for v in ASCEND:
            for f in sorted(src(v).glob("Dockerfile*")):
                self.assertNotIn("iproute2", f.read_text(), f"{v} {f.name}")
            for key in ("a2", "a3", "950dt"):
                img = table(v)["images"][key]
                if img is None:
                    continue
                self.assertNotIn("iproute2", img["apt_packages"])
                self.assertIsNot(img["tools"]["ip"], True, f"{v} {key}")
                self.assertIsNot(img["tools"]["ss"], True, f"{v} {key}")
                # net-tools is installed (Dockerfile.a3 @0.21.0rc1 apt-get line)
                self.assertIs(img["tools"]["ifconfig"], True, f"{v} {key}")

    def test_a3_image_at_0_21_0rc1(self):
        # Dockerfile.a3 @0.21.0rc1 (see upstream-corpus notes): FROM quay.io/ascend/cann:9.0.0-a3-ubuntu22.04-py3.12,
        # sources toolkit + ATB set_env.sh only inside RUN, appends LD_PRELOAD and LD_LIBRARY_PATH to ~/.bashrc
        img = table("0.21.0rc1")["images"]["a3"]
        self.assertEqual(img["from"], "quay.io/ascend/cann:9.0.0-a3-ubuntu22.04-py3.12")
        self.assertEqual(
            img["set_env_scripts"],
            ["/usr/local/Ascend/ascend-toolkit/set_env.sh", "/usr/local/Ascend/nnal/atb/set_env.sh"],
        )
        self.assertEqual(len(img["bashrc"]), 2)
        self.assertTrue(img["bashrc"][0].startswith("export LD_PRELOAD=/usr/lib/$(uname -m)-linux-gnu/libjemalloc.so.2"))
        self.assertEqual(img["bashrc"][1], "export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/lib")
        for p in ("git", "vim", "wget", "net-tools", "gcc", "g++", "cmake", "numactl", "libnuma-dev", "libjemalloc2", "clang-15"):
            self.assertIn(p, img["apt_packages"])
        # the CANN 9.0.0 base's final stage (cann-container-image) holds no procps
        self.assertIs(img["tools"]["ps"], False)
        self.assertIs(img["tools"]["curl"], True)
        # 9.2.0 (0.30.0rc2) has no base Dockerfile in that repository: unknown, not guessed
        self.assertIsNone(table("0.30.0rc2")["images"]["a3"]["tools"]["ps"])
        # the 950 Dockerfile appears at 0.21.0rc1 (Dockerfile.a5), not before
        self.assertIsNone(table("0.20.2rc1")["images"]["950dt"])
        self.assertEqual(table("0.21.0rc1")["images"]["950dt"]["from"], "quay.io/ascend/cann:9.0.0-950-ubuntu22.04-py3.12")
        # Dockerfile @0.26.0rc1: FROM ${CANN_QUAY_URL}:${CANN_VERSION}-910b-${BASE_OS}-py3.12 with ARG defaults
        self.assertEqual(table("0.26.0rc1")["images"]["a2"]["from"], "quay.io/ascend/cann:9.1.0-910b-ubuntu22.04-py3.12")

    def test_950dt_image_pushed_at_0_23_0_and_from_0_26_0rc1(self):
        # schedule_image_build_and_push.yaml: `dockerfile: Dockerfile.a5` / `suffix: 'a5'` @0.23.0 and
        # @0.26.0rc1; none @0.23.0rc1 or @0.25.1rc1 although both ship Dockerfile.a5; none @0.18.0
        self.assertEqual(table("0.23.0")["image_suffixes"]["950dt"], "-a5")
        self.assertEqual(table("0.26.0rc1")["image_suffixes"]["950dt"], "-a5")
        self.assertIsNone(table("0.23.0rc1")["image_suffixes"]["950dt"])
        self.assertIsNotNone(table("0.23.0rc1")["images"]["950dt"])
        self.assertIsNone(table("0.25.1rc1")["image_suffixes"]["950dt"])
        self.assertIsNone(table("0.18.0")["image_suffixes"]["950dt"])
        # Dockerfile.a3 @0.18.0 `ARG MOONCAKE_TAG=v0.3.9`, @0.19.1rc1 `v0.3.8.post1`, @0.23.0 `0.3.11.post1`
        self.assertEqual(table("0.18.0")["images"]["a3"]["mooncake"], "0.3.9")
        self.assertEqual(table("0.19.1rc1")["images"]["a3"]["mooncake"], "0.3.8.post1")
        self.assertEqual(table("0.23.0")["images"]["a3"]["mooncake"], "0.3.11.post1")

    def test_acl_op_init_mode_is_never_read(self):
        for v in ASCEND:
            names = {e["name"] for e in table(v)["env"]}
            self.assertNotIn("ACL_OP_INIT_MODE", names, v)
            self.assertNotIn("ASCEND_A3_ENABLE", names, v)
            for p in (src(v) / "vllm_ascend").rglob("*.py"):
                self.assertNotIn("ACL_OP_INIT_MODE", p.read_text(), f"{v} {p}")
        # while real reads are found: vllm_ascend/envs.py env_variables table and direct reads
        # (HCCL_RDMA_TIMEOUT: distributed/kv_transfer/utils/utils.py:59 @0.25.1rc1)
        names = {e["name"]: e["source"] for e in table("0.25.1rc1")["env"]}
        self.assertEqual(names["VLLM_ASCEND_ENABLE_MLAPO"], "vllm_ascend/envs.py")
        self.assertEqual(names["HCCL_RDMA_TIMEOUT"], "vllm_ascend/distributed/kv_transfer/utils/utils.py")

    def test_eplb_config_is_strict(self):
        # ascend_config.py:372-391 @0.18.0: EplbConfig._defaults, unknown key ->
        # ValueError("Config has no attribute ..."); @0.23.0 :836-856 adds eplb_heat_collection_stage;
        # from 0.27.1rc1 a @config dataclass (extra="forbid", vllm_ascend/config_utils.py)
        base = [
            "algorithm_execution_interval", "dynamic_eplb", "eplb_policy_type", "expert_heat_collection_interval",
            "expert_map_path", "expert_map_record_path", "num_redundant_experts",
        ]
        self.assertEqual(keys("0.18.0")["eplb_config"]["sub_keys"], base)
        self.assertEqual(keys("0.23.0")["eplb_config"]["sub_keys"], sorted(base + ["eplb_heat_collection_stage"]))
        for v in ASCEND:
            self.assertTrue(keys(v)["eplb_config"]["strict"], v)
        self.assertIn("stair_config", keys("0.30.0rc2")["eplb_config"]["sub_keys"])
        # ascend_compilation_config takes **kwargs up to 0.25.1rc1 (not strict), is a @config class later
        self.assertFalse(keys("0.25.1rc1")["ascend_compilation_config"]["strict"])
        self.assertTrue(keys("0.30.0rc2")["ascend_compilation_config"]["strict"])

    def test_pcp_refusals_per_release(self):
        # platform.py:363 @0.21.0rc1 (:351 @0.23.0, :341 @0.24.0rc1) `_validate_parallel_config`:
        # ValueError when data_parallel_size > 1 and prefill_context_parallel_size > 1; none @0.18.0 ..
        # 0.20.2rc1; platform.py:339 @0.25.1rc1 (:1643 @0.30.0rc2): ValueError when not
        # use_v2_model_runner and prefill_context_parallel_size > 1.
        # patch_use_v2_model_runner.py:38 @0.28.0rc1 removes "prefill context parallelism" from
        # vLLM's V2 refusals under vllm_version_is("0.28.0") only.
        for v in ASCEND:
            reads = [r["with"] for r in table(v)["pcp_refusals"]]
            with self.subTest(release=v):
                if corpus.version_key(v) < corpus.version_key("0.21.0rc1"):
                    self.assertEqual(reads, [])
                elif corpus.version_key(v) < corpus.version_key("0.25.1rc1"):
                    self.assertEqual(reads, [["data_parallel_size"]])
                else:
                    self.assertEqual(reads, [["use_v2_model_runner"]])
        self.assertEqual(table("0.23.0")["pcp_refusals"][0]["source"], "vllm_ascend/platform.py:351")
        allows = table("0.28.0rc1")["v2_runner_allows"]
        self.assertIn(
            {
                "name": "prefill context parallelism",
                "only_vllm": "0.28.0",
                "source": "vllm_ascend/patch/platform/patch_use_v2_model_runner.py:38",
            },
            allows,
        )
        for v in ("0.25.1rc1", "0.29.0rc1", "0.30.0rc2"):
            names = [a["name"] for a in table(v)["v2_runner_allows"]]
            self.assertNotIn("prefill context parallelism", names, v)

    def test_parallel_config_patches(self):
        # patch_parallel_config.py:116 @0.29.0rc1: under vllm_version_is("0.29.0") ParallelConfig's
        # validator becomes one "with only the platform-independent PCP+DP rejection removed";
        # patch_use_v2_model_runner.py:101 @0.29.0rc1: under vllm_version_is("0.28.0") the original
        # runs with PCP set to 1 only when the V2 runner is on, DP > 1, PCP > 1 and DCP == 1.
        # 0.28.0rc1 (shipping vLLM 0.28.0) has neither.
        got = table("0.29.0rc1")["parallel_config_patches"]
        self.assertEqual(
            [(p["only_vllm"], p["lifts_pcp_with_dp"], p["needs"], p["source"]) for p in got],
            [
                ("0.29.0", "always", [], "vllm_ascend/patch/platform/patch_parallel_config.py:116"),
                ("0.28.0", "when", ["dcp1", "v2_runner"], "vllm_ascend/patch/platform/patch_use_v2_model_runner.py:101"),
            ],
        )
        for v in ("0.26.0rc1", "0.27.1rc1", "0.28.0rc1"):
            self.assertEqual(table(v)["parallel_config_patches"], [], v)

    def test_sparse_c8_keys_per_release(self):
        # ascend_config.py:158 @0.18.0 `additional_config.get("enable_sparse_c8", ...)` (also 0.19.1rc1 ..
        # 0.22.1rc1, 0.24.0rc1, 0.25.1rc1: ascend_config.py:241 @0.25.1rc1);
        # ascend_config.py:280-281 @0.23.0 and @0.23.0rc1 read enable_sparse_sfa_c8 / enable_sparse_li_c8,
        # as does :286-287 @0.26.0rc1; from 0.27.1rc1 they are AscendConfig fields.
        split = {"0.23.0rc1", "0.23.0"} | set(releases_from("0.26.0rc1"))
        for v in ASCEND:
            k = keys(v)
            with self.subTest(release=v):
                if v in split:
                    self.assertIn("enable_sparse_sfa_c8", k)
                    self.assertIn("enable_sparse_li_c8", k)
                    self.assertNotIn("enable_sparse_c8", k)
                else:
                    self.assertIn("enable_sparse_c8", k)
                    self.assertNotIn("enable_sparse_sfa_c8", k)
                    self.assertNotIn("enable_sparse_li_c8", k)

    def test_scheduler_config_nesting(self):
        # ascend_config.py:90 @0.18.0 reads recompute_scheduler_enable at the top level;
        # ascend_config.py:857-890 @0.25.1rc1 SchedulerConfig reads additional_config["scheduler_config"]
        # (nested first, top-level key deprecated) for it and four more keys.
        for v in ASCEND:
            self.assertIn("recompute_scheduler_enable", keys(v), v)
        for v in ASCEND:
            sched = keys(v).get("scheduler_config")
            if corpus.version_key(v) < corpus.version_key("0.25.1rc1"):
                self.assertIsNone(sched, v)
            else:
                self.assertIsNotNone(sched, v)
                self.assertIn("recompute_scheduler_enable", sched["sub_keys"], v)
                self.assertIn("short_request_first_config", sched["sub_keys"], v)
        # ShortRequestFirstConfig @0.25.1rc1 (:839-842) raises on unknown keys
        self.assertTrue(keys("0.25.1rc1")["short_request_first_config"]["strict"])
        self.assertEqual(keys("0.25.1rc1")["short_request_first_config"]["sub_keys"], ["enabled", "long_max_wait_ms", "threshold"])

    def test_readers_outside_ascend_config(self):
        # utils.py:1386-1388 @0.25.1rc1 `"enable_dsa_cp" in additional_config`;
        # spec_decode/llm_base_proposer.py:316 @0.25.1rc1 reads draft_window_size
        k = keys("0.25.1rc1")
        self.assertEqual(k["enable_dsa_cp"]["source"], "vllm_ascend/utils.py")
        self.assertEqual(k["draft_window_size"]["source"], "vllm_ascend/spec_decode/llm_base_proposer.py")
        # init_ascend_config @0.30.0rc2 strips its _NON_USER_INPUT_KEYS (e.g. enable_sparse_li_c4,
        # pd_tp_ratio) before AscendConfig(**kwargs): derived fields are not keys
        k = keys("0.30.0rc2")
        for derived in ("enable_sparse_li_c4", "pd_tp_ratio", "enable_sp_by_pass", "kvpp_config"):
            self.assertNotIn(derived, k)
        self.assertIn("enable_kvpp", k)  # KVPPConfig.from_vllm_config, ascend_config.py:70-72

    def test_dsa_cp_requires_sp_only_0_20_to_0_26(self):
        # utils.py enable_dsa_cp raises "DSA CP requires SP" at 0.20.2rc1 (:1407) .. 0.26.0rc1 (:1404);
        # @0.18.0 (:1240-1247) DSA CP is `is_ds_v32 and enable_sp()` with no key; from 0.27.1rc1
        # (:1330-1337) it reads AscendConfig.enable_dsa_cp and ascend_config.py auto-enables FlashComm
        raising = {v for v in ASCEND if "DSA CP requires SP" in (src(v) / "vllm_ascend/utils.py").read_text()}
        want = {v for v in releases_from("0.20.2rc1") if corpus.version_key(v) <= corpus.version_key("0.26.0rc1")}
        self.assertEqual(raising, want)
        for v in ASCEND:
            self.assertEqual("enable_dsa_cp" in keys(v), corpus.version_key(v) >= corpus.version_key("0.20.2rc1"), v)

    def test_sfa_never_uses_the_decode_instance_mlapo_rule(self):
        # attention/utils.py enabling_mlapo (MLAPO only on a kv_consumer-only instance; @0.30.0rc2
        # :581-591 unless the hardware profile has UNRESTRICTED_MLAPO) is called by mla_v1.py
        # (:720 @0.18.0, :910 @0.30.0rc2), never by sfa_v1.py, in any release
        for v in ASCEND:
            att = src(v) / "vllm_ascend/attention"
            self.assertIn("enabling_mlapo(", (att / "mla_v1.py").read_text(), v)
            self.assertNotIn("enabling_mlapo", (att / "sfa_v1.py").read_text(), v)

    def test_parser_choices_widened(self):
        # platform.py `pre_register_and_update` appends "ascend" to `--quantization`'s choices in every
        # release (@0.18.0 :144) and, from 0.30.0rc1, the Ascend kv-cache dtypes to `--kv-cache-dtype` (:333)
        for v in ASCEND:
            flags = [w["flag"] for w in table(v)["parser_choices_widened"]]
            want = ["quantization"]
            if corpus.version_key(v) >= corpus.version_key("0.30.0rc1"):
                want = ["kv-cache-dtype", "quantization"]
            self.assertEqual(flags, want, v)
        self.assertEqual(table("0.30.0rc2")["parser_choices_widened"][0]["source"], "vllm_ascend/platform.py:333")
        # What it appends, read by hand: `ASCEND_QUANTIZATION_METHOD = "ascend"` (vllm_ascend/utils.py L48
        # @0.18.0, L56 @0.30.0rc2); at 0.30.0rc1/rc2 each value of `get_args(CacheConfig.__dataclass_fields__[
        # "cache_dtype"].type)`, which patch/platform/patch_kv_cache_dtype.py sets to `_CACHE_DTYPE_WITH_ASCEND`
        # (L53: vLLM 0.30.0's CacheDType without "nvfp4_ds_mla", plus "int8" and "mxfp8").
        for v in ASCEND:
            q = next(w for w in table(v)["parser_choices_widened"] if w["flag"] == "quantization")
            self.assertEqual((q["added"], q["field"]), (["ascend"], None), v)
        kv = table("0.30.0rc2")["parser_choices_widened"][0]
        self.assertEqual(kv["field"]["source"], "vllm_ascend/patch/platform/patch_kv_cache_dtype.py:53")
        self.assertEqual(kv["field"]["values"][-2:], ["int8", "mxfp8"])
        self.assertEqual(len(kv["field"]["values"]), 19)
        self.assertNotIn("nvfp4_ds_mla", kv["field"]["values"])
        self.assertEqual(kv["added"], kv["field"]["values"])

    def test_parser_choices_widened_is_read_not_matched(self):
        hook = (
            "class NPUPlatform:\n"
            "    @classmethod\n"
            "    def pre_register_and_update(cls, parser=None):\n"
            "        if parser is not None:\n"
            "            a = parser._option_string_actions.get('--dtype')\n"
            "{extra}"
        )
        got = facts_ascend.parser_choices_widened(FakePackage("vllm_ascend/platform.py", hook.format(extra="")))
        self.assertEqual(got, [{"flag": "dtype", "source": "vllm_ascend/platform.py:5", "added": None, "field": None}])
        # What it appends is read: a constant, a module-level string, a patched field's Literal; anything
        # else leaves it unknown (`added` None: not judged).
        def appended(extra, more=None):
            pkg = FakePackage("vllm_ascend/platform.py", hook.format(extra=extra), more)
            return facts_ascend.parser_choices_widened(pkg)[0]
        self.assertEqual(appended("            a.choices.append('x')\n")["added"], ["x"])
        self.assertEqual(
            appended("            a.choices.append(M)\n", {"vllm_ascend/utils.py": "M = 'm'\n"})["added"], ["m"])
        self.assertIsNone(appended("            a.choices.append(f())\n")["added"])
        self.assertIsNone(appended("            a.choices.append(M)\n")["added"])
        patch = ("import typing\nL = typing.Literal['auto', 'int8']\n"
                 "def p():\n    CacheConfig.__dataclass_fields__['cache_dtype'].type = L\n")
        loop = ("            for d in get_args(CacheConfig.__dataclass_fields__['cache_dtype'].type):\n"
                "                a.choices.append(d)\n")
        got = appended(loop, {"vllm_ascend/patch/platform/patch_x.py": patch})
        self.assertEqual(got["added"], ["auto", "int8"])
        self.assertEqual(got["field"], {"values": ["auto", "int8"], "source": "vllm_ascend/patch/platform/patch_x.py:2"})
        self.assertIsNone(appended(loop)["added"])
        for extra in ("            parser.add_argument('--x')\n", "            helper(parser)\n"):
            with self.subTest(extra=extra), self.assertRaisesRegex(facts_ascend.FactsError, "does not know"):
                facts_ascend.parser_choices_widened(FakePackage("vllm_ascend/platform.py", hook.format(extra=extra)))

    def test_hybrid_connector_registered_from_0_20_2rc1(self):
        # distributed/kv_transfer/__init__.py:34 @0.20.2rc1 registers "MooncakeHybridConnector"
        for v in ASCEND:
            names = [c["name"] for c in table(v)["kv_connectors"]]
            want = corpus.version_key(v) >= corpus.version_key("0.20.2rc1")
            self.assertEqual("MooncakeHybridConnector" in names, want, v)

    def test_e2e_layout_moves_in_0_30(self):
        t = table("0.30.0rc2")["e2e"]
        self.assertTrue(all(d.startswith("tests/e2e/cases/") for d in t["config_dirs"]), t["config_dirs"])
        for k in ("num_nodes", "npu_per_node", "routing"):
            self.assertIn(k, t["root_keys"])
        self.assertTrue(all(r.startswith("tests/e2e/common/multi_node/") for r in t["runner"]))
        old = table("0.25.1rc1")["e2e"]
        self.assertIn("tests/e2e/nightly/multi_node/external_dp/config", old["config_dirs"])
        self.assertIn("tests/e2e/nightly/multi_node/external_dp/scripts/external_dp_config.py", old["runner"])
        # every yaml with num_nodes > 1 under tests/e2e/cases @0.30.0rc2, counted independently
        n = sum(
            1
            for p in (src("0.30.0rc2") / "tests/e2e/cases").rglob("*.yaml")
            if (m := re.search(r"^num_nodes:\s*(\d+)", p.read_text(), re.M)) and int(m.group(1)) > 1
        )
        self.assertEqual(t["configs"], n)
