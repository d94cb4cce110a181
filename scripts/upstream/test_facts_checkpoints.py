"""Tests of facts_checkpoints.py: the length derivation against vLLM's rule,
read by hand, and the generated table against copies read by hand."""

from __future__ import annotations

import json
import unittest

import corpus
import facts_checkpoints as fc
from facts_testlib import LOCK, src

KEYS = ["max_position_embeddings", "n_positions", "max_seq_len", "seq_length"]
OLD = ["su", "longrope", "llama3"]
NEW = ["su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling"]


def _pinned(name: str) -> list[str]:
    return [p["version"] for p in LOCK["packages"] if p["name"] == name]


class Derivation(unittest.TestCase):
    """vllm/config/model.py `_get_and_verify_max_len`, read by hand: the
    smallest key present, times the RoPE factor except for su/longrope/llama3;
    YaRN: up to vLLM 0.29 `original_max_position_embeddings` x factor, from 0.30
    `max_position_embeddings` unchanged."""

    def test_plain_and_scaled(self):
        self.assertEqual(fc.derived_len({"max_position_embeddings": 40960}, KEYS, OLD, True), 40960)
        self.assertEqual(fc.derived_len({"max_position_embeddings": 9000, "seq_length": 8192}, KEYS, OLD, True), 8192)
        self.assertIsNone(fc.derived_len({"hidden_size": 1}, KEYS, OLD, True))
        linear = {"max_position_embeddings": 4096, "rope_scaling": {"type": "linear", "factor": 4.0}}
        self.assertEqual(fc.derived_len(linear, KEYS, OLD, True), 16384)
        self.assertEqual(fc.derived_len(linear, KEYS, NEW, False), 16384)
        llama3 = {"max_position_embeddings": 131072, "rope_scaling": {"rope_type": "llama3", "factor": 8.0}}
        self.assertEqual(fc.derived_len(llama3, KEYS, OLD, True), 131072)
        default = {"max_position_embeddings": 262144, "rope_parameters": {"rope_type": "default", "rope_theta": 1e7}}
        self.assertEqual(fc.derived_len(default, KEYS, OLD, True), 262144)
        # deepseek_yarn is scaled by its factor before vLLM 0.30, not after.
        ds = {"max_position_embeddings": 4096, "rope_scaling": {"type": "deepseek_yarn", "factor": 4.0}}
        self.assertEqual(fc.derived_len(ds, KEYS, OLD, True), 16384)
        self.assertEqual(fc.derived_len(ds, KEYS, NEW, False), 4096)

    def test_yarn_by_vllm(self):
        # A YaRN config whose scaled length is not its max_position_embeddings:
        # the two rules differ, and the table then gives the length per vLLM.
        yarn = {
            "max_position_embeddings": 163840,
            "rope_scaling": {"type": "yarn", "factor": 16, "original_max_position_embeddings": 4096},
        }
        self.assertEqual(fc.derived_len(yarn, KEYS, OLD, True), 65536)
        self.assertEqual(fc.derived_len(yarn, KEYS, NEW, False), 163840)

    def test_each_pinned_vllm_rule_is_read(self):
        # vLLM 0.29.0 still scales YaRN's original length; 0.30.0 does not.
        want = {"0.29.0": True, "0.30.0": False, "0.18.0": True}
        for version, uses_original in want.items():
            if version not in _pinned("vllm"):
                continue
            with self.subTest(version=version):
                root = src(version, "vllm")
                self.assertEqual(fc._yarn_uses_original(root), uses_original)
                self.assertEqual(fc._rope_rule(root)[0], NEW if version == "0.30.0" else OLD)
                self.assertEqual(fc._possible_keys(root)[0], "max_position_embeddings")
                self.assertIn("seq_length", fc._possible_keys(root))


class Copies(unittest.TestCase):
    """The generated table against copies read by hand (the wheel's
    aiconfigurator_core/model_configs/*.json)."""

    @classmethod
    def setUpClass(cls):
        (version,) = _pinned("aiconfigurator-core")
        cls.root = src(version, "aiconfigurator-core")
        cls.table = fc.checkpoint_facts(cls.root, version)["configs"]
        committed = corpus.ROOT / "upstream" / "facts" / "aiconfigurator-core" / f"{version}.json"
        cls.committed = json.loads(committed.read_text(encoding="utf-8"))["configs"]

    def test_kimi_k2_instruct(self):
        # moonshotai--Kimi-K2-Instruct_config.json: model_type kimi_k2,
        # max_position_embeddings 131072, YaRN factor 32 over 4096, 384
        # routed experts: both YaRN rules give 131072.
        e = self.table["moonshotai/Kimi-K2-Instruct"]
        self.assertEqual((e["model_type"], e["text_model_type"]), ("kimi_k2", "kimi_k2"))
        self.assertEqual(e["derived_max_model_len"], 131072)
        self.assertEqual(e["rope"], {"type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096})
        self.assertEqual(e["n_routed_experts"], 384)

    def test_qwen3_5_text_config(self):
        # Qwen--Qwen3.5-397B-A17B_config.json nests its decoder in
        # text_config (model_type qwen3_5_moe_text): 60 layers, 512 experts,
        # GDN 64 value heads of 128, 262144 positions, default RoPE.
        e = self.table["Qwen/Qwen3.5-397B-A17B"]
        self.assertEqual(e["architectures"], ["Qwen3_5MoeForConditionalGeneration"])
        self.assertEqual((e["model_type"], e["text_model_type"]), ("qwen3_5_moe", "qwen3_5_moe_text"))
        self.assertEqual((e["num_hidden_layers"], e["num_experts"]), (60, 512))
        self.assertEqual((e["linear_num_value_heads"], e["linear_value_head_dim"]), (64, 128))
        self.assertEqual(e["layer_types"], {"full_attention": 15, "linear_attention": 45})
        self.assertEqual(e["derived_max_model_len"], 262144)

    def test_v4_pro_compress_ratios(self):
        # deepseek-ai--DeepSeek-V4-Pro_config.json: 62 ratios for 61 layers
        # and the MTP layer, the last 0.
        e = self.table["deepseek-ai/DeepSeek-V4-Pro"]
        r = e["compress_ratios"]
        self.assertEqual((len(r), r[-1], r.count(4), r.count(128)), (62, 0, 30, 31))
        self.assertIsNone(e["dspark_block_size"])

    def test_quant_configs_are_not_models(self):
        self.assertFalse(any(k.endswith("_hf_quant") for k in self.table))
        self.assertIn("nvidia/DeepSeek-V3.1-NVFP4", self.table)

    def test_committed_table_is_this(self):
        self.assertEqual(self.table, self.committed)


if __name__ == "__main__":
    unittest.main()
