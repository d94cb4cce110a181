"""Tests of facts_checkpoints.py: the length derivation against vLLM's rule,
read by hand, and the generated table against copies read by hand."""

from __future__ import annotations

import json
import tempfile
import unittest
from pathlib import Path

import corpus
import facts_checkpoints as fc
import facts_vllm_checkpoint as fvc
from facts_checkpoints import checkpoint_config as cc
from facts_testlib import LOCK, src

KEYS = ["max_position_embeddings", "n_positions", "max_seq_len", "seq_length"]
OLD = ["su", "longrope", "llama3"]
NEW = ["su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling"]
EXPERTS = ["num_experts", "moe_num_experts", "n_routed_experts", "num_local_experts"]


def _reads(unscaled: list[str], yarn_original: bool) -> dict:
    return {"max_len_keys": KEYS, "unscaled_rope_types": unscaled, "yarn_from_original": yarn_original, "expert_keys": EXPERTS}


def derived_len(text: dict, keys: list[str], unscaled: list[str], yarn_original: bool):
    assert keys is KEYS
    return cc.derived_len(text, _reads(unscaled, yarn_original))


def _pinned(name: str) -> list[str]:
    return [p["version"] for p in LOCK["packages"] if p["name"] == name]


class Derivation(unittest.TestCase):
    """vllm/config/model.py `_get_and_verify_max_len`, read by hand: the
    smallest key present, times the RoPE factor except for su/longrope/llama3;
    YaRN: up to vLLM 0.29 `original_max_position_embeddings` x factor, from 0.30
    `max_position_embeddings` unchanged."""

    def test_plain_and_scaled(self):
        self.assertEqual(derived_len({"max_position_embeddings": 40960}, KEYS, OLD, True), 40960)
        self.assertEqual(derived_len({"max_position_embeddings": 9000, "seq_length": 8192}, KEYS, OLD, True), 8192)
        self.assertIsNone(derived_len({"hidden_size": 1}, KEYS, OLD, True))
        linear = {"max_position_embeddings": 4096, "rope_scaling": {"type": "linear", "factor": 4.0}}
        self.assertEqual(derived_len(linear, KEYS, OLD, True), 16384)
        self.assertEqual(derived_len(linear, KEYS, NEW, False), 16384)
        llama3 = {"max_position_embeddings": 131072, "rope_scaling": {"rope_type": "llama3", "factor": 8.0}}
        self.assertEqual(derived_len(llama3, KEYS, OLD, True), 131072)
        default = {"max_position_embeddings": 262144, "rope_parameters": {"rope_type": "default", "rope_theta": 1e7}}
        self.assertEqual(derived_len(default, KEYS, OLD, True), 262144)
        # deepseek_yarn is scaled by its factor before vLLM 0.30, not after.
        ds = {"max_position_embeddings": 4096, "rope_scaling": {"type": "deepseek_yarn", "factor": 4.0}}
        self.assertEqual(derived_len(ds, KEYS, OLD, True), 16384)
        self.assertEqual(derived_len(ds, KEYS, NEW, False), 4096)

    def test_yarn_by_vllm(self):
        # A YaRN config whose scaled length is not its max_position_embeddings:
        # the two rules differ, and the table then gives the length per vLLM.
        yarn = {
            "max_position_embeddings": 163840,
            "rope_scaling": {"type": "yarn", "factor": 16, "original_max_position_embeddings": 4096},
        }
        self.assertEqual(derived_len(yarn, KEYS, OLD, True), 65536)
        self.assertEqual(derived_len(yarn, KEYS, NEW, False), 163840)

    def test_each_pinned_vllm_rule_is_read(self):
        # vLLM 0.29.0 still scales YaRN's original length; 0.30.0 does not.
        want = {"0.29.0": True, "0.30.0": False, "0.18.0": True}
        for version, uses_original in want.items():
            if version not in _pinned("vllm"):
                continue
            with self.subTest(version=version):
                root = src(version, "vllm")
                reads = fvc.checkpoint_reads(root)
                self.assertEqual(reads["yarn_from_original"], uses_original)
                self.assertEqual(reads["unscaled_rope_types"], NEW if version == "0.30.0" else OLD)
                self.assertEqual(reads["max_len_keys"][0], "max_position_embeddings")
                self.assertIn("seq_length", reads["max_len_keys"])
                self.assertEqual(reads["expert_keys"], EXPERTS)

    def test_expert_count_as_get_num_experts(self):
        # vllm/transformers_utils/model_arch_config_convertor.py
        # `get_num_experts`, read by hand: the first key the config has wins
        # (getattr_iter), even a null one; a list gives its first entry.
        reads = _reads(OLD, True)
        self.assertEqual(cc.num_experts({"n_routed_experts": 256}, reads), 256)
        self.assertEqual(cc.num_experts({"num_experts": 512, "n_routed_experts": 8}, reads), 512)
        self.assertEqual(cc.num_experts({"num_local_experts": [64, 64]}, reads), 64)
        self.assertEqual(cc.num_experts({"num_experts": None, "n_routed_experts": 8}, reads), 0)
        self.assertEqual(cc.num_experts({"hidden_size": 1}, reads), 0)

    def test_a_changed_list_is_read_or_refused(self):
        root = src("0.30.0", "vllm")
        text = (root / fvc.KEYS_SOURCE).read_text(encoding="utf-8")
        self.assertIn('"n_routed_experts",  # DeepSeek', text)
        with tempfile.TemporaryDirectory() as tmp:
            mutated = Path(tmp)
            (mutated / fvc.KEYS_SOURCE).parent.mkdir(parents=True)
            (mutated / fvc.RULE_SOURCE).parent.mkdir(parents=True, exist_ok=True)
            (mutated / fvc.RULE_SOURCE).write_text((root / fvc.RULE_SOURCE).read_text(encoding="utf-8"), encoding="utf-8")
            (mutated / fvc.KEYS_SOURCE).write_text(text.replace('"n_routed_experts",  # DeepSeek', '"n_experts",'), encoding="utf-8")
            self.assertIn("n_experts", fvc.checkpoint_reads(mutated)["expert_keys"])
            (mutated / fvc.KEYS_SOURCE).write_text(text.replace("num_expert_names = [", "names = ["), encoding="utf-8")
            with self.assertRaises(fvc.CheckpointReadsError):
                fvc.checkpoint_reads(mutated)


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
