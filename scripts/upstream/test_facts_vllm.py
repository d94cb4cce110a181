"""Self-check of `facts_vllm.py` on the cached upstream corpus.

    python3 -m unittest scripts/upstream/test_facts_vllm.py

Every test reads the real vLLM sdists through `corpus.py`; a missing one fails
with the package to fetch. The facts asserted by name were read by hand in the
vLLM 0.22.1 sdist (file:line cited); the rest are properties of any correct
extraction, and mutations of upstream's code that must change the result.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import subprocess
import sys
import unittest
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import facts_vllm as fv  # noqa: E402
import facts_vllm_kv_check as kvc  # noqa: E402

KINDS = {"switch", "value", "many", "json"}


@lru_cache(maxsize=None)
def corpus(name: str, version: str) -> Path:
    out = subprocess.run(
        [sys.executable, str(HERE / "corpus.py"), "path", f"{name}=={version}"],
        capture_output=True, text=True,
    )
    if out.returncode != 0 or not out.stdout.strip():
        raise AssertionError(
            f"the upstream corpus has no `{name}=={version}` ({out.stderr.strip()}); "
            f"run `python3 scripts/upstream/corpus.py fetch {name}=={version}` (needs pip's index) "
            "or point `PD_UPSTREAM_CACHE` at a filled cache"
        )
    return Path(out.stdout.strip())


@lru_cache(maxsize=None)
def facts(version: str) -> dict:
    return fv.vllm_facts(corpus("vllm", version), version)


def flags(version: str) -> dict[str, dict]:
    return {f["name"]: f for f in facts(version)["serve_flags"]}


def version_key(v: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


PINNED = fv.pinned_versions()


class WellFormed(unittest.TestCase):
    def test_the_lock_pins_vllm(self):
        self.assertGreaterEqual(len(PINNED), 1, "upstream/corpus.lock.json pins no vllm")

    def test_every_pinned_version_reads_and_follows_the_schema(self):
        for v in PINNED:
            with self.subTest(vllm=v):
                f = facts(v)
                self.assertEqual(
                    list(f),
                    [
                        "package",
                        "version",
                        "serve_flags",
                        "speculative_methods",
                        "v2_model_runner",
                        "v2_speculative_methods",
                        "async_speculative_methods",
                        "context_parallel",
                        "drafting_slots",
                        "spec_decode_sp_alignment",
                        "spec_decode_rounding",
                        "default_capture_grid",
                        "aux_hidden_states",
                        "sequence_parallel_moe",
                        "mamba_align",
                        "checkpoint_reads",
                        "kv_memory_check",
                        "mamba_blocks_check",
                    ],
                )
                reads = f["checkpoint_reads"]
                self.assertEqual(
                    list(reads),
                    ["max_len_keys", "unscaled_rope_types", "yarn_from_original", "expert_keys", "max_len_source", "experts_source"],
                )
                # Every path:line the preflight cites is a line of that sdist.
                for where in reads["max_len_source"].split(", ") + [reads["experts_source"]]:
                    path, line = where.split(" ")[0].rsplit(":", 1)
                    self.assertTrue((corpus("vllm", v) / path).is_file(), where)
                    self.assertGreater(int(line), 0)
                self.assertNotIn("`", json.dumps(reads), "a shell word of the preflight carries it")
                align = f["mamba_align"]
                self.assertEqual(list(align), ["prefix_caching", "hybrid", "classes", "block_within_batch", "v2_runner", "source"])
                for k in ("prefix_caching", "block_within_batch", "v2_runner", "source"):
                    if align[k] is not None:
                        path, line = align[k].rsplit(":", 1)
                        self.assertTrue((corpus("vllm", v) / path).is_file(), align)
                        self.assertGreater(int(line), 0)
                slots = f["drafting_slots"]
                self.assertEqual(list(slots), ["per_seq", "slots", "source"])
                for x in slots["slots"]:
                    self.assertEqual(list(x), ["method", "per_token", "constant"], x)
                    self.assertIn(x["method"], [m["name"] for m in f["speculative_methods"]], x)
                if slots["source"] is not None:
                    path, line = slots["source"].rsplit(":", 1)
                    self.assertTrue((corpus("vllm", v) / path).is_file(), slots)
                    self.assertGreater(int(line), 0)
                runner = f["v2_model_runner"]
                if runner is not None:
                    self.assertEqual(
                        list(runner), ["unsupported", "default_architectures", "source", "refusal", "refusal_source"]
                    )
                    self.assertEqual(runner["unsupported"], sorted(set(runner["unsupported"])))
                    self.assertTrue((corpus("vllm", v) / runner["source"]).is_file())
                spec = f["v2_speculative_methods"]
                self.assertEqual(spec is None, runner is None, v)
                if spec is not None:
                    self.assertEqual(list(spec), ["refused", "features", "source"])
                    self.assertEqual(spec["refused"], sorted(set(spec["refused"])))
                    self.assertEqual(list(spec["features"]), spec["refused"])
                    self.assertLessEqual(set(spec["refused"]), {m["name"] for m in f["speculative_methods"]})
                    path, line = spec["source"].rsplit(":", 1)
                    self.assertTrue((corpus("vllm", v) / path).is_file(), spec)
                self.assertEqual((f["package"], f["version"]), ("vllm", v))
                by_name = {x["name"]: x for x in f["serve_flags"]}
                # `union_dict_and_str` keeps a word that is not `{...}` as text
                # (vllm/engine/arg_utils.py); `--hf-token` may be given bare.
                self.assertEqual(by_name["hf-overrides"].get("text_unless"), r"(?s)^\s*{.*}\s*$")
                self.assertNotIn("text_unless", by_name["compilation-config"])
                self.assertIs(by_name["hf-token"].get("value_optional"), True)
                names = [x["name"] for x in f["serve_flags"]]
                self.assertEqual(names, sorted(names), "serve_flags not sorted by name")
                self.assertEqual(len(names), len(set(names)), "a flag listed twice")
                spellings: set[str] = set()
                src = corpus("vllm", v)
                for x in f["serve_flags"]:
                    valued = x["kind"] in ("value", "many")
                    keys = ["name", "kind", "aliases", "negatable", "source"]
                    keys += ["text_unless"] if "text_unless" in x else []
                    keys += ["keys"] if "keys" in x else []
                    keys += ["value_optional"] if "value_optional" in x else []
                    keys += ["type"] if valued else []
                    self.assertEqual(list(x), keys + (["choices"] if "choices" in x else []), x)
                    if "value_optional" in x:
                        self.assertIs(x["value_optional"], True, x)
                        self.assertEqual(x["kind"], "value", x)
                    if "text_unless" in x:
                        self.assertEqual(x["kind"], "json", x)
                        re.compile(x["text_unless"])
                    if "keys" in x:
                        self.assertEqual(x["kind"], "json", x)
                        self.assertEqual(list(x["keys"]), ["class", "fields", "source"], x)
                        self.assertEqual(x["keys"]["fields"], sorted(set(x["keys"]["fields"])), x)
                        path, line = x["keys"]["source"].rsplit(":", 1)
                        self.assertIn(f"class {x['keys']['class']}", (src / path).read_text().splitlines()[int(line) - 1], x)
                    if valued:
                        t = x["type"]
                        self.assertIn(list(t), (["unread"], ["convert", "optional"]), x)
                        if "convert" in t:
                            self.assertIn(t["convert"], ("str", "int", "float", "lower_underscore"), x)
                    if "choices" in x:
                        c = x["choices"]
                        self.assertTrue(valued, f"choices on a {x['kind']}: {x}")
                        self.assertIn(list(c), (["unread"], ["values"]), x)
                        if "values" in c and "convert" in x["type"]:
                            want = int if x["type"]["convert"] == "int" else str
                            self.assertTrue(c["values"] and all(type(v) is want for v in c["values"]), x)
                    self.assertRegex(x["name"], r"^[a-z0-9][a-z0-9-]*$", "a long name as written after `--`")
                    self.assertIn(x["kind"], KINDS, x)
                    if x["negatable"]:
                        self.assertEqual(x["kind"], "switch", f"only a switch has a `--no-` form: {x}")
                    self.assertEqual(x["aliases"], sorted(x["aliases"]), x)
                    for a in x["aliases"]:
                        self.assertTrue(a.startswith("-"), x)
                    for s in ["--" + x["name"], *x["aliases"]]:
                        self.assertNotIn(s, spellings, f"`{s}` names two options at vllm {v}")
                        spellings.add(s)
                    self.assertTrue((src / x["source"]).is_file(), f"source `{x['source']}` not in the sdist")

    def test_every_kind_is_seen(self):
        # a broken type reading collapses kinds (e.g. every switch read as a
        # value); a real release has many of each
        for v in PINNED:
            with self.subTest(vllm=v):
                fl = facts(v)["serve_flags"]
                count = {k: sum(1 for x in fl if x["kind"] == k) for k in KINDS}
                self.assertGreater(len(fl), 200, "vLLM's serve takes more than 200 options")
                self.assertGreater(sum(1 for x in fl if x["negatable"]), 40, count)
                self.assertGreater(sum(1 for x in fl if x["kind"] == "switch" and not x["negatable"]), 2, count)
                self.assertGreater(count["json"], 10, count)
                self.assertGreater(count["many"], 5, count)
                self.assertGreater(count["value"], 80, count)

    def test_committed_facts_are_fresh(self):
        committed = sorted(p.stem for p in fv.FACTS_DIR.glob("*.json"))
        self.assertEqual(committed, sorted(PINNED),
                         "upstream/facts/vllm/ holds one file per vllm the lock pins")
        for v in PINNED:
            with self.subTest(vllm=v):
                text = (fv.FACTS_DIR / f"{v}.json").read_text(encoding="utf-8")
                self.assertEqual(text, fv.dumps(facts(v)),
                                 f"upstream/facts/vllm/{v}.json is stale: run `python3 scripts/upstream/facts_vllm.py --write`")

    def test_reading_is_deterministic(self):
        v = PINNED[-1]
        self.assertEqual(fv.dumps(fv.vllm_facts(corpus("vllm", v), v)), fv.dumps(facts(v)))


# Read by hand in the vLLM 0.22.1 sdist.
# (kind, negatable, aliases)
HAND_READ_0_22_1 = {
    # vllm/engine/arg_utils.py:970 `("--tensor-parallel-size", "-tp", **parallel_kwargs[...])`,
    # ParallelConfig.tensor_parallel_size is an int
    "tensor-parallel-size": ("value", False, ["-tp"]),
    # arg_utils.py:811; vllm/config/model.py:227 `enforce_eager: bool = False`
    # -> argparse.BooleanOptionalAction (`_compute_kwargs`, contains_type(bool))
    "enforce-eager": ("switch", True, []),
    # arg_utils.py:1129; vllm/config/cache.py:91 `enable_prefix_caching: bool = True`
    "enable-prefix-caching": ("switch", True, []),
    # arg_utils.py:835; model.py:287 `hf_token: bool | str | None` ->
    # nargs="?" const=True (arg_utils.py:342): a value or nothing; read as `value`
    "hf-token": ("value", False, []),
    # arg_utils.py:832; model.py:272 `str | list[str] | None` -> nargs="+"
    "served-model-name": ("many", False, []),
    # arg_utils.py:890; vllm/config/load.py:107 `str | dict[str, str]` -> union_dict_and_str (arg_utils.py:162)
    "pt-load-map-location": ("json", False, []),
    # arg_utils.py:1326; vllm/config/observability.py:39 `list[DetailedTraceModules] | None`
    "collect-detailed-traces": ("many", False, []),
    # arg_utils.py:1460, type set to optional_type(json.loads) just above
    "speculative-config": ("json", False, ["-sc"]),
    # arg_utils.py:1469; vllm/config/vllm.py:336 `KVTransferConfig | None`, a `@config` dataclass
    "kv-transfer-config": ("json", False, []),
    # arg_utils.py:1476; vllm.py:325 `compilation_config: CompilationConfig`
    "compilation-config": ("json", False, ["-cc"]),
    # arg_utils.py:1484; vllm.py:347 `dict | SupportsHash` -> union_dict_and_str
    "additional-config": ("json", False, []),
    # arg_utils.py:1489; vllm.py:334 `profiler_config: ProfilerConfig`
    "profiler-config": ("json", False, []),
    # arg_utils.py:1500 `action="store_true"`: no `--no-` form
    "disable-log-stats": ("switch", False, []),
    # arg_utils.py:998 `("--data-parallel-rank", "-dpn", type=int)`
    "data-parallel-rank": ("value", False, ["-dpn"]),
    # vllm/entrypoints/openai/cli_args.py:354 `"--headless", action="store_true"`
    "headless": ("switch", False, []),
    # cli_args.py:361 `"--api-server-count", "-asc", type=int`
    "api-server-count": ("value", False, ["-asc"]),
    # cli_args.py:326-330: action "append", nargs deleted: one value per use
    "middleware": ("value", False, []),
    # cli_args.py:318,321: type json.loads, nargs deleted
    "allowed-origins": ("json", False, []),
    # cli_args.py:78 `list[LoRAModulePath] | None` -> nargs="+", :188 LoRAParserAction
    "lora-modules": ("many", False, []),
    # cli_args.py:369 `"--config"` with no type: one value
    "config": ("value", False, []),
}

# gone by 0.22.1: none of these is added by serve.py, cli_args.py or arg_utils.py
ABSENT_0_22_1 = ["disable-log-requests", "swap-space", "task", "rope-scaling", "guided-decoding-backend"]


class HandRead(unittest.TestCase):
    def test_flags_read_by_hand_at_0_22_1(self):
        fl = flags("0.22.1")
        for name, (kind, neg, aliases) in HAND_READ_0_22_1.items():
            with self.subTest(flag=name):
                self.assertIn(name, fl, f"--{name} missing at vllm 0.22.1")
                got = fl[name]
                self.assertEqual((got["kind"], got["negatable"], got["aliases"]), (kind, neg, aliases))
        for name in ABSENT_0_22_1:
            self.assertNotIn(name, fl, f"--{name} is not defined by vllm 0.22.1")

    def test_choices_read_by_hand_at_0_22_1(self):
        fl = flags("0.22.1")
        # vllm/config/parallel.py:40-51 `All2AllBackend = Literal[...]`, sorted by `literal_to_kwargs`
        # (arg_utils.py); `type` the options' own (str)
        self.assertEqual(
            fl["all2all-backend"]["choices"],
            {
                "values": sorted(["naive", "pplx", "deepep_high_throughput", "deepep_low_latency", "mori", "nixl_ep",
                                  "allgather_reducescatter", "flashinfer_all2allv", "flashinfer_nvlink_two_sided",
                                  "flashinfer_nvlink_one_sided"]),
            },
        )
        self.assertEqual(fl["all2all-backend"]["type"], {"convert": "str", "optional": False})
        # vllm/config/lora.py:26 `MaxLoRARanks = Literal[1, 8, ..., 512]`: int choices, `type=int`
        self.assertEqual(fl["max-lora-rank"]["choices"]["values"], [1, 8, 16, 32, 64, 128, 256, 320, 512])
        self.assertEqual(fl["max-lora-rank"]["type"]["convert"], "int")
        # arg_utils.py:1443 `moe_backend_kwargs["type"] = lambda s: s.lower().replace("-", "_")`
        self.assertEqual(fl["moe-backend"]["type"]["convert"], "lower_underscore")
        # an `int` and a `float` field: config/scheduler.py `max_num_partial_prefills: int`,
        # config/offload.py:23 `cpu_offload_gb: float`
        self.assertEqual(fl["max-num-partial-prefills"]["type"], {"convert": "int", "optional": False})
        self.assertEqual(fl["cpu-offload-gb"]["type"]["convert"], "float")
        # `human_readable_int` (arg_utils.py, "1k" -> 1000): not known, not judged
        self.assertIn("human_readable_int", fl["max-num-batched-tokens"]["type"]["unread"])
        self.assertNotIn("type", fl["enforce-eager"])
        # arg_utils.py:1322 `["choices"] += [",".join(p) for p in permutations(...)]`: not readable
        self.assertIn("unread", fl["collect-detailed-traces"]["choices"])
        self.assertIn("arg_utils.py:1322", fl["collect-detailed-traces"]["choices"]["unread"])
        # `--tokenizer-mode` is `Literal[...] | str`: a metavar, no choices
        self.assertNotIn("choices", fl["tokenizer-mode"])
        self.assertNotIn("choices", fl["max-model-len"])

    def test_qwen3_5_moe_has_no_inner_state_where_v2_refuses_hybrid(self):
        # The V2 runner's "hybrid/mamba models" refusal reads `model_config.has_inner_state`, the
        # model class's `HasInnerState` (vllm/config/vllm.py `_validate_v2_model_runner` @0.20.2,
        # `_get_v2_model_runner_unsupported_features` @0.22.1). There the registry's only Qwen3.5
        # MoE architecture besides the MTP drafter is `Qwen3_5MoeForConditionalGeneration`
        # (registry.py), whose bases are `IsHybrid` but not `HasInnerState`: that protocol is on
        # `Qwen3_5ForCausalLMBase` (models/qwen3_5.py), which no registered architecture uses. So the
        # table's Qwen3.5 builds never meet that refusal (verdict afd4f402d8).
        for v in ("0.20.2", "0.22.1"):
            models = corpus("vllm", v) / "vllm/model_executor/models"
            bases: dict[str, set[str]] = {}
            flagged: set[str] = set()
            for f in models.glob("*.py"):
                for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
                    if isinstance(node, ast.ClassDef):
                        names = {b.id if isinstance(b, ast.Name) else ast.unparse(b) for b in node.bases}
                        bases.setdefault(node.name, set()).update(names)
                        for st in node.body:
                            tgt = st.target if isinstance(st, ast.AnnAssign) else (st.targets[0] if isinstance(st, ast.Assign) else None)
                            if isinstance(tgt, ast.Name) and tgt.id == "has_inner_state":
                                flagged.add(node.name)

            def inner_state(cls: str, seen: frozenset = frozenset()) -> bool:
                if cls == "HasInnerState" or cls in flagged:
                    return True
                return any(inner_state(b, seen | {cls}) for b in bases.get(cls, ()) if b not in seen)

            registry = (models / "registry.py").read_text(encoding="utf-8")
            archs = set(re.findall(r'"(Qwen3_5Moe\w+)": \(', registry))
            self.assertEqual(archs, {"Qwen3_5MoeForConditionalGeneration", "Qwen3_5MoeMTP"}, v)
            self.assertFalse(inner_state("Qwen3_5MoeForConditionalGeneration"), v)
            self.assertTrue(inner_state("Qwen3_5ForCausalLMBase"), v)
            self.assertIn("IsHybrid", bases["Qwen3_5ForConditionalGeneration"], v)

    def test_profiler_config_from_0_21_on(self):
        for v in PINNED:
            if version_key(v) >= (0, 21, 0):
                with self.subTest(vllm=v):
                    self.assertEqual(flags(v).get("profiler-config", {}).get("kind"), "json")

    def test_speculative_methods(self):
        # vllm/config/speculative.py `SpeculativeMethod = Literal["ngram", "medusa", "mlp_speculator",
        # "draft_model", "suffix", EagleModelTypes, NgramGPUTypes]` @0.18.0; `"custom_class"` in it @0.30.0,
        # and `DSparkModelTypes` (`"dspark"`)
        m18 = [m["name"] for m in facts("0.18.0")["speculative_methods"]]
        m30 = [m["name"] for m in facts("0.30.0")["speculative_methods"]]
        for name in ("ngram", "medusa", "mlp_speculator", "draft_model", "suffix", "eagle", "eagle3", "mtp",
                     "deepseek_mtp", "ngram_gpu", "extract_hidden_states"):
            self.assertIn(name, m18)
            self.assertIn(name, m30)
        self.assertNotIn("custom_class", m18)
        self.assertIn("custom_class", m30)
        self.assertIn("dspark", m30)
        for v in PINNED:
            with self.subTest(vllm=v):
                ms = facts(v)["speculative_methods"]
                names = [m["name"] for m in ms]
                self.assertEqual(names, sorted(set(names)))
                self.assertTrue(all(m["source"] == "vllm/config/speculative.py" for m in ms))
                # the Literal's strings are each in the module's text
                text = (corpus("vllm", v) / "vllm/config/speculative.py").read_text(encoding="utf-8")
                for n in names:
                    self.assertIn(f'"{n}"', text)

    def test_which_methods_need_a_draft_model(self):
        # vllm/config/speculative.py `SpeculativeConfig.__post_init__`: with no `model`, `mtp` and
        # `dspark` take the target's, `ngram`/`ngram_gpu`/`suffix`/`extract_hidden_states` their
        # own; `custom_class` raises ("requires 'model' to contain the custom proposer module
        # path"), every other method reaches the final else ("without speculative model"); MTP
        # model types are rewritten to `mtp` first.
        for v in PINNED:
            with self.subTest(vllm=v):
                need = {m["name"] for m in facts(v)["speculative_methods"] if m["needs_model"]}
                for m in ("eagle", "eagle3", "medusa", "mlp_speculator", "draft_model"):
                    self.assertIn(m, need)
                for m in ("mtp", "deepseek_mtp", "ngram", "suffix", "extract_hidden_states"):
                    self.assertNotIn(m, need)
        need30 = {m["name"] for m in facts("0.30.0")["speculative_methods"] if m["needs_model"]}
        self.assertIn("custom_class", need30)
        self.assertNotIn("dspark", need30)
        v = PINNED[-1]
        # A method given its own branch that needs no model leaves the set.
        ov = mutate(v, "vllm/config/speculative.py", '            elif self.method == "suffix":',
                    '            elif self.method == "medusa":\n                self.model = "medusa"\n            elif self.method == "suffix":')
        got = {m["name"] for m in fv.speculative_methods(fv.Source(corpus("vllm", v), ov)) if m["needs_model"]}
        self.assertNotIn("medusa", got)
        ov = mutate(v, "vllm/config/speculative.py", "get_args(MTPModelTypes)", "get_args(OtherTypes)")
        with self.assertRaisesRegex(fv.FactsError, "no longer rewrites MTP model types"):
            fv.speculative_methods(fv.Source(corpus("vllm", v), ov))

    def test_v2_model_runner_refusals(self):
        # vllm/config/vllm.py `_get_v2_model_runner_unsupported_features` appends "prefill context
        # parallelism" when prefill_context_parallel_size > 1 @0.22.1 .. @0.28.0, no longer @0.29.0;
        # vLLM 0.20.2 appends it in `_validate_v2_model_runner` itself (L1804-1805), which raises
        # "VLLM_USE_V2_MODEL_RUNNER does not yet support: ..." (L1834); no V2 runner gate @0.18.0
        # and @0.19.1.
        self.assertIsNone(facts("0.18.0")["v2_model_runner"])
        self.assertIsNone(facts("0.19.1")["v2_model_runner"])
        self.assertIn("prefill context parallelism", facts("0.20.2")["v2_model_runner"]["unsupported"])
        for v in PINNED:
            got = facts(v)["v2_model_runner"]
            if got is None:
                continue
            with self.subTest(vllm=v):
                refuses = "prefill context parallelism" in got["unsupported"]
                self.assertEqual(refuses, version_key(v) < version_key("0.29.0"))
                # sequence parallelism joins the list at 0.22.1 (L1992-1996)
                self.assertEqual("sequence parallelism" in got["unsupported"], version_key(v) >= version_key("0.22.1"))
        self.assertIn("DeepseekV2ForCausalLM", facts("0.25.1")["v2_model_runner"]["default_architectures"])
        # The words of the refusal, read by hand: `_validate_v2_model_runner` raises
        # "VLLM_USE_V2_MODEL_RUNNER does not yet support: " + ", ".join(unsupported) @0.20.2 L1835
        # and @0.22.1 L2064; f"Model Runner V2 does not yet support: {...}" @0.23.0 L2069,
        # @0.30.0 L3086.
        for v, words, line in [
            ("0.20.2", "VLLM_USE_V2_MODEL_RUNNER does not yet support:", 1835),
            ("0.22.1", "VLLM_USE_V2_MODEL_RUNNER does not yet support:", 2064),
            ("0.23.0", "Model Runner V2 does not yet support:", 2069),
            ("0.30.0", "Model Runner V2 does not yet support:", 3086),
        ]:
            with self.subTest(vllm=v):
                got = facts(v)["v2_model_runner"]
                self.assertEqual((got["refusal"], got["refusal_source"]), (words, f"vllm/config/vllm.py:{line}"))
        # Other words are read, not assumed; a refusal that no longer joins the list is an error.
        ov = mutate("0.23.0", "vllm/config/vllm.py", 'f"Model Runner V2 does not yet support: {',
                    'f"The V2 runner cannot run: {')
        self.assertEqual(fv.v2_model_runner(fv.Source(corpus("vllm", "0.23.0"), ov))["refusal"],
                         "The V2 runner cannot run:")
        ov = mutate("0.23.0", "vllm/config/vllm.py", 'f"Model Runner V2 does not yet support: {\', \'.join(unsupported)}"',
                    '"Model Runner V2 does not yet support these features"')
        with self.assertRaisesRegex(fv.FactsError, "raises no ValueError joining"):
            fv.v2_model_runner(fv.Source(corpus("vllm", "0.23.0"), ov))
        v = PINNED[-1]
        ov = mutate(v, "vllm/config/vllm.py", 'unsupported.append("sequence parallelism")',
                    'unsupported.append("sequence parallelism")\n            unsupported.append("lookahead")')
        self.assertIn("lookahead", fv.v2_model_runner(fv.Source(corpus("vllm", v), ov))["unsupported"])

    def test_v2_runner_speculative_methods(self):
        # vllm/config/vllm.py, read by hand: @0.20.2 `_validate_v2_model_runner` L1807-1811 appends
        # "speculative method '<m>'" when `self.speculative_config.method not in ("eagle", "eagle3",
        # "mtp")`; `_get_v2_model_runner_unsupported_features` @0.22.1 L2000-2003 (@0.23.0 L2009)
        # appends for `in ("ngram", "ngram_gpu")`, `elif ... not in ("eagle", "eagle3", "mtp")`;
        # @0.24.0 L2029-2031 adds "dflash" to the allowed tuple, @0.25.1 L2070-2079 "dspark",
        # @0.29.0 L2564-2574 "extract_hidden_states"; @0.30.0 L2839-2850 lists the refused ones
        # instead: ngram, ngram_gpu, draft_model, suffix, medusa, mlp_speculator, custom_class.
        allowed = {
            "0.20.2": ({"eagle", "eagle3", "mtp"}, 1807),
            "0.22.1": ({"eagle", "eagle3", "mtp"}, 2000),
            "0.23.0": ({"eagle", "eagle3", "mtp"}, 2009),
            "0.24.0": ({"eagle", "eagle3", "mtp", "dflash"}, 2029),
            "0.25.1": ({"eagle", "eagle3", "mtp", "dflash", "dspark"}, 2070),
            "0.28.0": ({"eagle", "eagle3", "mtp", "dflash", "dspark"}, 2398),
            "0.29.0": ({"eagle", "eagle3", "mtp", "dflash", "dspark", "extract_hidden_states"}, 2564),
        }
        self.assertIsNone(facts("0.18.0")["v2_speculative_methods"])
        self.assertIsNone(facts("0.19.1")["v2_speculative_methods"])
        for v, (ok, line) in allowed.items():
            with self.subTest(vllm=v):
                f = facts(v)
                names = {m["name"] for m in f["speculative_methods"] if not m["name"].endswith("_mtp")}
                got = f["v2_speculative_methods"]
                self.assertEqual(set(got["refused"]), names - ok)
                self.assertEqual(got["source"], f"vllm/config/vllm.py:{line}")
                # an MTP model type is rewritten to `mtp` before the runner sees it
                self.assertNotIn("deepseek_mtp", got["refused"])
        got = facts("0.30.0")["v2_speculative_methods"]
        refused = ["custom_class", "draft_model", "medusa", "mlp_speculator", "ngram", "ngram_gpu", "suffix"]
        self.assertEqual(
            got,
            {
                "refused": refused,
                # @0.30.0 L2850: unsupported.append(f"speculative method '{speculative_config.method}'")
                "features": {m: f"speculative method '{m}'" for m in refused},
                "source": "vllm/config/vllm.py:2839",
            },
        )
        # @0.22.1 L2001: unsupported.append("ngram/ngram_gpu speculative decoding") for both.
        features = facts("0.22.1")["v2_speculative_methods"]["features"]
        self.assertEqual(features["ngram"], "ngram/ngram_gpu speculative decoding")
        self.assertEqual(features["ngram_gpu"], "ngram/ngram_gpu speculative decoding")
        self.assertEqual(features["suffix"], "speculative method 'suffix'")

    def test_v2_runner_speculative_methods_are_read_not_matched(self):
        def read(v, ov):
            src = fv.Source(corpus("vllm", v), ov)
            return fv.v2_speculative_methods(src, [m["name"] for m in fv.speculative_methods(src)])

        # A method added to 0.30.0's refused tuple is refused.
        ov = mutate("0.30.0", "vllm/config/vllm.py", '                "custom_class",\n            ):',
                    '                "custom_class",\n                "dflash",\n            ):')
        self.assertIn("dflash", read("0.30.0", ov)["refused"])
        # A method added to 0.22.1's allowed tuple is no longer refused; ngram still is (first branch).
        ov = mutate("0.22.1", "vllm/config/vllm.py", 'elif speculative_config.method not in ("eagle", "eagle3", "mtp"):',
                    'elif speculative_config.method not in ("eagle", "eagle3", "mtp", "suffix", "ngram"):')
        got = read("0.22.1", ov)["refused"]
        self.assertNotIn("suffix", got)
        self.assertIn("ngram", got)
        # A branch that no longer appends refuses nothing.
        ov = mutate("0.22.1", "vllm/config/vllm.py",
                    "                unsupported.append(f\"speculative method '{speculative_config.method}'\")",
                    "                pass")
        self.assertEqual(read("0.22.1", ov)["refused"], ["ngram", "ngram_gpu"])
        # The appended words are read: another f-string value is an error.
        ov = mutate("0.22.1", "vllm/config/vllm.py",
                    "                unsupported.append(f\"speculative method '{speculative_config.method}'\")",
                    "                unsupported.append(f\"speculative method '{speculative_config.model}'\")")
        with self.assertRaisesRegex(fv.FactsError, "reads `{speculative_config.model}`"):
            read("0.22.1", ov)
        # A test that also reads another setting refuses nothing for sure.
        ov = mutate("0.20.2", "vllm/config/vllm.py",
                    '            and self.speculative_config.method not in ("eagle", "eagle3", "mtp")\n',
                    '            and self.speculative_config.method not in ("eagle", "eagle3", "mtp")\n'
                    "            and self.parallel_config.enable_dbo\n")
        self.assertIsNone(read("0.20.2", ov))

    def test_spec_decode_sp_alignment(self):
        # vllm/config/compilation.py `adjust_cudagraph_sizes_for_spec_decode`, read by hand: under
        # `if tensor_parallel_size > 1 and self.pass_config.enable_sp:` the step is
        # `max(uniform_decode_query_len, tensor_parallel_size)` and `if multiple_of %
        # uniform_decode_query_len != 0 or multiple_of % tensor_parallel_size != 0:` raises "Can't
        # determine cudagraph shapes ..." (@0.18.0 L1157, @0.28.0 L1525, @0.30.0 L1553). The V1 runner
        # calls it from vllm/v1/worker/gpu_model_runner.py @0.18.0 L6090 under `decode_mode() ==
        # CUDAGraphMode.FULL and cudagraph_mode.separate_routine() and uniform_decode_query_len > 1`,
        # from `resolve_cudagraph_mode_and_sizes` (compilation.py @0.20.2 L1415) without
        # `separate_routine()`.
        lines = {"0.18.0": (1157, "vllm/v1/worker/gpu_model_runner.py:6090", True),
                 "0.20.2": (1453, "vllm/config/compilation.py:1415", False),
                 "0.28.0": (1525, "vllm/config/compilation.py:1487", False),
                 "0.30.0": (1553, "vllm/config/compilation.py:1515", False)}
        for v, (line, call, separate) in lines.items():
            with self.subTest(vllm=v):
                self.assertEqual(
                    facts(v)["spec_decode_sp_alignment"],
                    {"source": f"vllm/config/compilation.py:{line}", "call": call, "needs_separate_routine": separate},
                )
        for v in PINNED:
            self.assertEqual(facts(v)["spec_decode_sp_alignment"]["needs_separate_routine"], version_key(v) < version_key("0.20.2"), v)

    def test_spec_decode_sp_alignment_is_read_not_matched(self):
        def read(v, ov):
            return fv.spec_decode_sp_alignment(fv.Source(corpus("vllm", v), ov))

        # The step taken as the lcm instead of the max: no such refusal.
        ov = mutate("0.28.0", "vllm/config/compilation.py",
                    "multiple_of = max(uniform_decode_query_len, tensor_parallel_size)",
                    "multiple_of = math.lcm(uniform_decode_query_len, tensor_parallel_size)")
        self.assertIsNone(read("0.28.0", ov))
        # The SP test dropped from the guard: no such refusal.
        ov = mutate("0.28.0", "vllm/config/compilation.py",
                    "if tensor_parallel_size > 1 and self.pass_config.enable_sp:",
                    "if tensor_parallel_size > 1:")
        self.assertIsNone(read("0.28.0", ov))
        # The call guarded by a separate decode routine again: FULL no longer reaches it.
        ov = mutate("0.28.0", "vllm/config/compilation.py",
                    "            and cudagraph_mode.decode_mode() == CUDAGraphMode.FULL\n            and uniform",
                    "            and cudagraph_mode.decode_mode() == CUDAGraphMode.FULL\n"
                    "            and cudagraph_mode.separate_routine()\n            and uniform")
        self.assertTrue(read("0.28.0", ov)["needs_separate_routine"])

    def test_spec_decode_rounding(self):
        # vllm/config/compilation.py `adjust_cudagraph_sizes_for_spec_decode`, read by hand: the sizes
        # rounded up to `multiple_of` that fit under `self.max_cudagraph_capture_size`; `if
        # len(rounded_sizes) == 0 and multiple_of <= self.max_cudagraph_capture_size: rounded_sizes =
        # [multiple_of]`, then `if len(rounded_sizes) == 0:` raises "No valid cudagraph sizes after
        # rounding ..." (@0.18.0 L1186, @0.28.0 L1554, @0.30.0 L1582); the call as for the SP refusal.
        for v, (line, call) in {
            "0.18.0": (1186, "vllm/v1/worker/gpu_model_runner.py:6090"),
            "0.28.0": (1554, "vllm/config/compilation.py:1487"),
            "0.30.0": (1582, "vllm/config/compilation.py:1515"),
        }.items():
            got = facts(v)["spec_decode_rounding"]
            self.assertEqual((got["source"], got["call"]), (f"vllm/config/compilation.py:{line}", call), v)
        for v in PINNED:
            got = facts(v)["spec_decode_rounding"]
            self.assertEqual(got["needs_separate_routine"], version_key(v) < version_key("0.20.2"), v)
        # Read, not matched: without the fallback to [multiple_of], or without the raise, no refusal.
        ov = mutate("0.28.0", "vllm/config/compilation.py", "            rounded_sizes = [multiple_of]\n", "            pass\n")
        self.assertIsNone(fv.spec_decode_rounding(fv.Source(corpus("vllm", "0.28.0"), ov)))
        ov = mutate("0.28.0", "vllm/config/compilation.py",
                    '            raise ValueError(\n                f"No valid cudagraph sizes',
                    '            logger.warning(\n                f"No valid cudagraph sizes')
        self.assertIsNone(fv.spec_decode_rounding(fv.Source(corpus("vllm", "0.28.0"), ov)))

    def test_default_capture_grid(self):
        # vllm/config/vllm.py `VllmConfig._set_cudagraph_sizes`, read by hand: the default sizes
        # `[i for i in [1, 2, 4] if i <= max_cudagraph_capture_size]`, every 8 below 256, every 16
        # from 256; `max_num_tokens` appended `if max_num_tokens <= max_cudagraph_capture_size and
        # max_num_tokens not in cudagraph_capture_sizes` from 0.20.2 (absent @0.18.0, @0.19.1); typed
        # sizes kept `if i <= max_num_tokens`; `assert max_cudagraph_capture_size >= 1` @0.18.0 L1349,
        # @0.19.1 L1405, @0.26.0 L1800, @0.30.0 L2306; the function @0.18.0 L1287, @0.30.0 L2151.
        want = {"0.18.0": (False, 1349, 1287), "0.19.1": (False, 1405, None), "0.26.0": (True, 1800, None), "0.30.0": (True, 2306, 2151)}
        for v, (appends, line, fn) in want.items():
            got = facts(v)["default_capture_grid"]
            self.assertEqual(got["appends_max_num_tokens"], appends, v)
            self.assertEqual(got["positive_largest"], f"vllm/config/vllm.py:{line}", v)
            if fn is not None:
                self.assertEqual(got["source"], f"vllm/config/vllm.py:{fn}", v)
        # Read, not matched: another grid step fails the facts; without the append, none.
        ov = mutate("0.30.0", "vllm/config/vllm.py", "range(256, max_cudagraph_capture_size + 1, 16)", "range(256, max_cudagraph_capture_size + 1, 32)")
        with self.assertRaises(fv.FactsError):
            fv.default_capture_grid(fv.Source(corpus("vllm", "0.30.0"), ov))
        ov = mutate("0.30.0", "vllm/config/vllm.py", "cudagraph_capture_sizes.append(max_num_tokens)", "pass")
        self.assertFalse(fv.default_capture_grid(fv.Source(corpus("vllm", "0.30.0"), ov))["appends_max_num_tokens"])

    def test_async_scheduling_methods(self):
        # vllm/config/vllm.py `VllmConfig.__post_init__`: with async scheduling on, a method outside
        # get_args(EagleModelTypes), get_args(NgramGPUTypes), "draft_model" raises "Currently, async
        # scheduling is only supported with EAGLE/MTP/..." (@0.18.0 L697); "dspark" joins @0.25.1 (L972);
        # dflash is in EagleModelTypes (DFlashModelTypes) from 0.20.2. ngram never is.
        for v in PINNED:
            with self.subTest(vllm=v):
                got = facts(v)["async_speculative_methods"]
                m = set(got["methods"])
                self.assertTrue({"eagle", "eagle3", "mtp", "deepseek_mtp", "draft_model", "ngram_gpu"} <= m, got)
                self.assertNotIn("ngram", m)
                self.assertEqual("dspark" in m, version_key(v) >= version_key("0.25.1"))
                self.assertEqual("dflash" in m, version_key(v) >= version_key("0.20.2"))
                self.assertTrue(got["source"].startswith("vllm/config/vllm.py:"))
        v = PINNED[-1]
        old = '                    and self.speculative_config.method != "dspark"\n                ):\n                    raise'
        ov = mutate(v, "vllm/config/vllm.py", old,
                    old.replace("                ):", '                    and self.speculative_config.method != "ngram"\n                ):'))
        self.assertIn("ngram", fv.async_speculative_methods(fv.Source(corpus("vllm", v), ov))["methods"])

    def test_context_parallel_refusals(self):
        # vllm/config/parallel.py `ParallelConfig._validate_parallel_config`: `tp_size % dcp_size != 0`
        # raises at every release (L416 @0.18.0); from 0.26.0 it sits under `if pcp == 1:` (L512),
        # whose `elif dcp not in (1, pcp, tp * pcp)` raises (L514), and `if pcp > 1 and
        # self.data_parallel_size > 1: raise ValueError("PCP does not support data parallelism yet.")`
        # (L508 @0.26.0, L527 @0.28.0, L548 @0.29.0) is gone at 0.30.0.
        for v in PINNED:
            with self.subTest(vllm=v):
                got = facts(v)["context_parallel"]
                new = version_key(v) >= version_key("0.26.0")
                self.assertTrue(got["tp_divisible_by_dcp"].startswith("vllm/config/parallel.py:"), got)
                self.assertEqual(got["only_without_pcp"], new)
                self.assertEqual(got["dcp_sizes_with_pcp"] is not None, new)
                self.assertEqual(got["pcp_with_dp"] is not None, new and version_key(v) < version_key("0.30.0"))
        self.assertEqual(facts("0.18.0")["context_parallel"]["tp_divisible_by_dcp"], "vllm/config/parallel.py:416")
        self.assertEqual(facts("0.28.0")["context_parallel"]["pcp_with_dp"], "vllm/config/parallel.py:527")
        self.assertEqual(facts("0.26.0")["context_parallel"]["dcp_sizes_with_pcp"], "vllm/config/parallel.py:514")
        # Taken out, the refusal is no longer read.
        ov = mutate("0.28.0", "vllm/config/parallel.py", "        if pcp > 1 and self.data_parallel_size > 1:\n",
                    "        if pcp > 1 and self.data_parallel_size > 1 and False:\n")
        self.assertIsNone(fv.context_parallel(fv.Source(corpus("vllm", "0.28.0"), ov))["pcp_with_dp"])

    def test_drafting_slots(self):
        # vllm/config/speculative.py `max_num_new_slots_for_drafting`, read by hand: K-1 per request
        # for parallel drafting (`if self.method == "dflash": self.parallel_drafting = True` L645
        # @0.20.2; `in ("dflash", "dspark")` L910 @0.25.1), +1 for `draft_model`; from 0.28.0 its
        # table gives DFlash K, DSpark K-1, draft model 1 per request (L1421-1459 @0.28.0).
        # vllm/config/vllm.py `_set_max_num_scheduled_tokens` multiplies by max_num_seqs before
        # 0.28.0 and raises on `max_num_scheduled_tokens <= 0` (L1391 @0.20.2); from 0.28.0 it
        # raises on `max_num_batched_tokens <= scheduled_token_delta` (L1871 @0.28.0). 0.18.0 and
        # 0.19.1 compare only a typed max_num_scheduled_tokens (L1276 @0.18.0).
        by = {v: facts(v)["drafting_slots"] for v in PINNED}
        self.assertEqual(by["0.18.0"], {"per_seq": True, "slots": [{"method": "draft_model", "per_token": 0, "constant": 1}], "source": None})
        self.assertEqual(by["0.20.2"]["source"], "vllm/config/vllm.py:1392")
        self.assertEqual(by["0.28.0"]["source"], "vllm/config/vllm.py:1871")
        for v, got in by.items():
            with self.subTest(vllm=v):
                table = {s["method"]: (s["per_token"], s["constant"]) for s in got["slots"]}
                self.assertEqual(got["per_seq"], version_key(v) < version_key("0.28.0"))
                self.assertEqual(table.get("draft_model"), (0, 1))
                dflash = None if version_key(v) < version_key("0.20.2") else (1, -1) if version_key(v) < version_key("0.28.0") else (1, 0)
                self.assertEqual(table.get("dflash"), dflash)
                self.assertEqual(table.get("dspark"), (1, -1) if version_key(v) >= version_key("0.25.1") else None)
                self.assertEqual(set(table) - {"draft_model", "dflash", "dspark"}, set())
        # Parallel drafting for ngram too: the extractor reads the method test, not a list.
        ov = mutate("0.25.1", "vllm/config/speculative.py", '                if self.method in ("dflash", "dspark"):\n',
                    '                if self.method in ("dflash", "dspark", "ngram"):\n')
        got = fv.drafting_slots(fv.Source(corpus("vllm", "0.25.1"), ov))
        self.assertIn({"method": "ngram", "per_token": 1, "constant": -1}, got["slots"])
        # The reserve no longer multiplied by max_num_seqs.
        ov = mutate("0.25.1", "vllm/config/vllm.py", "                * self.scheduler_config.max_num_seqs\n            )\n            max_num_batched_tokens",
                    "            )\n            max_num_batched_tokens")
        self.assertFalse(fv.drafting_slots(fv.Source(corpus("vllm", "0.25.1"), ov))["per_seq"])

    def test_aux_hidden_states_gate(self):
        # vllm/config/speculative.py `SpeculativeConfig._verify_args`, read by hand: the local list
        # `aux_hidden_states_supported` (L780 @0.18.0, without "minimax_m2"/"gemma4"; L795 @0.19.1;
        # L905 @0.20.2) and `if self.method in ("eagle3", "extract_hidden_states") and
        # self.target_model_config and not any(supported_model in ...hf_text_config.model_type ...)`
        # raising "... is only supported for ... models" (L794 @0.18.0, L811 @0.19.1; "dflash" added
        # L921 @0.20.2). No such gate @0.22.1 (the model class's EAGLE3 interface is checked at load).
        by = {v: facts(v)["aux_hidden_states"] for v in PINNED}
        self.assertEqual(by["0.18.0"]["source"], "vllm/config/speculative.py:794")
        self.assertEqual(by["0.19.1"]["source"], "vllm/config/speculative.py:811")
        self.assertEqual(by["0.20.2"]["source"], "vllm/config/speculative.py:921")
        self.assertEqual(by["0.18.0"]["methods"], ["eagle3", "extract_hidden_states"])
        self.assertEqual(by["0.20.2"]["methods"], ["eagle3", "extract_hidden_states", "dflash"])
        self.assertNotIn("minimax_m2", by["0.18.0"]["model_types"])
        self.assertEqual(by["0.19.1"]["model_types"][-2:], ["minimax_m2", "gemma4"])
        self.assertIn("deepseek_v3", by["0.19.1"]["model_types"])
        for v, got in by.items():
            with self.subTest(vllm=v):
                self.assertEqual(got is None, version_key(v) >= version_key("0.22.1"), got)
        # Read, not matched: a method added to the test and a model type added to the list are
        # read; the gate turned into `any(...)` (raising on a match) stops the reading.
        ov = mutate("0.19.1", "vllm/config/speculative.py", '            self.method in ("eagle3", "extract_hidden_states")\n',
                    '            self.method in ("eagle3", "extract_hidden_states", "ngram")\n')
        self.assertIn("ngram", fv.aux_hidden_states(fv.Source(corpus("vllm", "0.19.1"), ov))["methods"])
        ov = mutate("0.19.1", "vllm/config/speculative.py", '            "gemma4",\n', '            "gemma4",\n            "glm_moe_dsa",\n')
        self.assertIn("glm_moe_dsa", fv.aux_hidden_states(fv.Source(corpus("vllm", "0.19.1"), ov))["model_types"])
        ov = mutate("0.19.1", "vllm/config/speculative.py", "            and not any(\n                supported_model in",
                    "            and any(\n                supported_model in")
        with self.assertRaises(fv.FactsError):
            fv.aux_hidden_states(fv.Source(corpus("vllm", "0.19.1"), ov))

    def test_sequence_parallel_moe(self):
        # vllm/config/parallel.py, read by hand: `ParallelConfig.use_sequence_parallel_moe` returns
        # `self.all2all_backend in (...) and self.enable_expert_parallel and self.tensor_parallel_size > 1
        # and self.data_parallel_size > 1` (L586 @0.18.0, L673 @0.27.1, L715 @0.30.0); the field
        # `all2all_backend: All2AllBackend = "allgather_reducescatter"` (L188 @0.27.1); `__post_init__`
        # swaps "pplx"/"naive" for "allgather_reducescatter" (L467-473 @0.27.1; not @0.18.0, where
        # "naive" is still an SP backend).
        by = {v: facts(v)["sequence_parallel_moe"] for v in PINNED}
        self.assertEqual(by["0.27.1"]["source"], "vllm/config/parallel.py:673")
        self.assertEqual(by["0.30.0"]["source"], "vllm/config/parallel.py:715")
        self.assertIn("naive", by["0.18.0"]["backends"])
        self.assertEqual(by["0.18.0"]["replaced"], {})
        self.assertEqual(by["0.27.1"]["replaced"], {"naive": "allgather_reducescatter", "pplx": "allgather_reducescatter"})
        self.assertIn("flashinfer_nvlink_one_sided", by["0.30.0"]["backends"])
        self.assertNotIn("flashinfer_all2allv", by["0.30.0"]["backends"])
        for v, got in by.items():
            with self.subTest(vllm=v):
                self.assertEqual(got["default"], "allgather_reducescatter")
                self.assertIn(got["default"], got["backends"])
                self.assertEqual(got["requires"], ["data_parallel_size > 1", "enable_expert_parallel", "tensor_parallel_size > 1"])
        # Read, not matched: a dropped term, a new backend and a new field default are read; a term
        # the reader does not know stops it.
        f = "vllm/config/parallel.py"
        ov = mutate("0.27.1", f, "            and self.data_parallel_size > 1\n        )\n\n    @property\n    def use_all2all",
                    "        )\n\n    @property\n    def use_all2all")
        self.assertEqual(fv.sequence_parallel_moe(fv.Source(corpus("vllm", "0.27.1"), ov))["requires"],
                         ["enable_expert_parallel", "tensor_parallel_size > 1"])
        ov = mutate("0.27.1", f, '                "mori_low_latency",\n                "nixl_ep",\n            )\n            and self.enable',
                    '                "mori_low_latency",\n                "nixl_ep",\n                "hccl",\n            )\n            and self.enable')
        self.assertIn("hccl", fv.sequence_parallel_moe(fv.Source(corpus("vllm", "0.27.1"), ov))["backends"])
        ov = mutate("0.27.1", f, 'all2all_backend: All2AllBackend = "allgather_reducescatter"', 'all2all_backend: All2AllBackend = "nixl_ep"')
        self.assertEqual(fv.sequence_parallel_moe(fv.Source(corpus("vllm", "0.27.1"), ov))["default"], "nixl_ep")
        ov = mutate("0.27.1", f, "            and self.data_parallel_size > 1\n        )\n\n    @property\n    def use_all2all",
                    "            and self.data_parallel_size > self.pipeline_parallel_size\n        )\n\n    @property\n    def use_all2all")
        with self.assertRaisesRegex(fv.FactsError, "does not read"):
            fv.sequence_parallel_moe(fv.Source(corpus("vllm", "0.27.1"), ov))

    def test_mamba_align(self):
        # Read by hand: vllm/model_executor/models/config.py `MambaModelConfig.verify_and_update_config`
        # `if cache_config.enable_prefix_caching:` (L367 @0.18.0, L350 @0.22.1 and @0.23.0, L417 @0.24.0)
        # sets `mamba_cache_mode = "all" if model_config.supports_mamba_prefix_caching else "align"`;
        # vllm/config/vllm.py `validate_block_size`: `if self.cache_config.mamba_cache_mode == "align":`
        # (L2101 @0.22.1) with `assert block_size <= self.scheduler_config.max_num_batched_tokens`
        # (L1664 @0.18.0, L2102 @0.22.1, L2266 @0.26.0; gone @0.27.1) and `assert not
        # envs.VLLM_USE_V2_MODEL_RUNNER` (L2116 @0.22.1, L2126 @0.23.0, L2156 @0.24.0 only). The
        # Qwen3.5 classes (qwen3_5.py: `Qwen3_5ForConditionalGeneration(Qwen3VLForConditionalGeneration,
        # IsHybrid)`) do not support Mamba prefix caching; Zamba2ForCausalLM names it (zamba2.py L836).
        by = {v: facts(v)["mamba_align"] for v in PINNED}
        self.assertEqual(by["0.22.1"]["source"], "vllm/config/vllm.py:2101")
        self.assertEqual(by["0.22.1"]["prefix_caching"], "vllm/model_executor/models/config.py:350")
        self.assertEqual(by["0.18.0"]["prefix_caching"], "vllm/model_executor/models/config.py:367")
        self.assertEqual(by["0.24.0"]["prefix_caching"], "vllm/model_executor/models/config.py:417")
        self.assertEqual(by["0.18.0"]["block_within_batch"], "vllm/config/vllm.py:1664")
        self.assertEqual(by["0.22.1"]["block_within_batch"], "vllm/config/vllm.py:2102")
        self.assertEqual(by["0.26.0"]["block_within_batch"], "vllm/config/vllm.py:2266")
        self.assertIsNone(by["0.27.1"]["block_within_batch"])
        v2 = {v: got["v2_runner"] for v, got in by.items() if got["v2_runner"]}
        self.assertEqual(v2, {"0.22.1": "vllm/config/vllm.py:2116", "0.23.0": "vllm/config/vllm.py:2126",
                              "0.24.0": "vllm/config/vllm.py:2156"})
        for v, got in by.items():
            with self.subTest(vllm=v):
                self.assertIn("Zamba2ForCausalLM", got["classes"])
                self.assertNotIn("Qwen3_5MoeForConditionalGeneration", got["classes"])
                # qwen3_5.py: `Qwen3_5ForConditionalGeneration(..., IsHybrid)`, its MoE subclass
                self.assertIn("Qwen3_5MoeForConditionalGeneration", got["hybrid"])
                self.assertNotIn("DeepseekV3ForCausalLM", got["hybrid"])
        # Read, not matched: Qwen3.5 given the interface is read with its subclasses; the V2 assert
        # dropped is read as gone; the prefix-caching switch without "align" leaves no fact.
        q = "vllm/model_executor/models/qwen3_5.py"
        ov = mutate("0.22.1", q, "class Qwen3_5ForConditionalGeneration(Qwen3VLForConditionalGeneration, IsHybrid):",
                    "class Qwen3_5ForConditionalGeneration(Qwen3VLForConditionalGeneration, IsHybrid, SupportsMambaPrefixCaching):")
        got = fv.mamba_align(fv.Source(corpus("vllm", "0.22.1"), ov))["classes"]
        self.assertIn("Qwen3_5MoeForConditionalGeneration", got)
        self.assertIn("Qwen3_5ForConditionalGeneration", got)
        ov = mutate("0.22.1", q, "class Qwen3_5ForConditionalGeneration(Qwen3VLForConditionalGeneration, IsHybrid):",
                    "class Qwen3_5ForConditionalGeneration(Qwen3VLForConditionalGeneration):")
        self.assertNotIn("Qwen3_5MoeForConditionalGeneration", fv.mamba_align(fv.Source(corpus("vllm", "0.22.1"), ov))["hybrid"])
        ov = mutate("0.22.1", "vllm/config/vllm.py", "            assert not envs.VLLM_USE_V2_MODEL_RUNNER, (", "            assert True, (")
        self.assertIsNone(fv.mamba_align(fv.Source(corpus("vllm", "0.22.1"), ov))["v2_runner"])
        ov = mutate("0.22.1", "vllm/model_executor/models/config.py", '"all" if model_config.supports_mamba_prefix_caching else "align"', '"all"')
        ov2 = {k: v.replace('cache_config.mamba_cache_mode = "align"', 'cache_config.mamba_cache_mode = "all"') for k, v in ov.items()}
        self.assertIsNone(fv.mamba_align(fv.Source(corpus("vllm", "0.22.1"), ov2)))

    def test_dataclass_option_keys(self):
        # Read by hand: vllm/config/attention.py @0.18.0 L12-13 `@config` `class AttentionConfig` with the
        # fields backend, flash_attn_version, use_prefill_decode_attention, flash_attn_max_num_splits_for_cuda_graph,
        # use_cudnn_prefill, use_trtllm_ragged_deepseek_prefill, use_trtllm_attention,
        # disable_flashinfer_prefill, disable_flashinfer_q_quantization, use_prefill_query_quantization;
        # vllm/config/utils.py `config` merges `ConfigDict(extra="forbid")`; `_compute_kwargs` gives a
        # dataclass field `type=parse_dataclass` (`TypeAdapter(cls).validate_json`), wrapped in
        # `optional_type` for `KVEventsConfig | None` (vllm/config/kv_events.py L12-13); `--hf-overrides` is a
        # dict (no keys).
        by = {x["name"]: x for x in facts("0.18.0")["serve_flags"]}
        self.assertEqual(by["attention-config"]["keys"]["fields"], sorted([
            "backend", "flash_attn_version", "use_prefill_decode_attention", "flash_attn_max_num_splits_for_cuda_graph",
            "use_cudnn_prefill", "use_trtllm_ragged_deepseek_prefill", "use_trtllm_attention",
            "disable_flashinfer_prefill", "disable_flashinfer_q_quantization", "use_prefill_query_quantization"]))
        self.assertEqual(by["attention-config"]["keys"]["source"], "vllm/config/attention.py:13")
        self.assertEqual(by["kv-events-config"]["keys"]["class"], "KVEventsConfig")
        self.assertNotIn("keys", by["hf-overrides"])
        # Read, not matched: a field added is read; a class allowing extra keys has none.
        f = "vllm/config/attention.py"
        ov = mutate("0.18.0", f, "    backend: AttentionBackendEnum | None = None\n",
                    "    backend: AttentionBackendEnum | None = None\n    pd_dsl_new: int = 0\n")
        got = {x["name"]: x for x in fv.vllm_facts(corpus("vllm", "0.18.0"), "0.18.0", overrides=ov)["serve_flags"]}
        self.assertIn("pd_dsl_new", got["attention-config"]["keys"]["fields"])
        ov = mutate("0.18.0", f, "@config\nclass AttentionConfig:", "@config(config=ConfigDict(extra=\"allow\"))\nclass AttentionConfig:")
        got = {x["name"]: x for x in fv.vllm_facts(corpus("vllm", "0.18.0"), "0.18.0", overrides=ov)["serve_flags"]}
        self.assertNotIn("keys", got["attention-config"])
        # A ConfigDict without `extra` keeps `@config`'s "forbid" (utils.py merges it); an `InitVar` is an
        # init argument; a raw-input validator that may change the input leaves the keys unjudged, one
        # that only reads it (pooler.py `reject_removed_parameters` @0.30.0) does not.
        def keys_with(old, new, v="0.18.0", name="attention-config"):
            o = mutate(v, f if v == "0.18.0" else "vllm/config/pooler.py", old, new)
            return {x["name"]: x for x in fv.vllm_facts(corpus("vllm", v), v, overrides=o)["serve_flags"]}[name].get("keys")
        self.assertIsNotNone(keys_with("@config\nclass AttentionConfig:",
                                       "@config(config=ConfigDict(arbitrary_types_allowed=True))\nclass AttentionConfig:"))
        got = keys_with("    backend: AttentionBackendEnum | None = None\n",
                        "    backend: AttentionBackendEnum | None = None\n    pd_dsl_iv: InitVar[int] = 0\n")
        self.assertIn("pd_dsl_iv", got["fields"])
        self.assertEqual(facts("0.30.0")["serve_flags"][[x["name"] for x in facts("0.30.0")["serve_flags"]].index("pooler-config")]["keys"]["class"], "PoolerConfig")
        self.assertIsNone(keys_with("        return data\n\n", "        values.pop(\"task\", None)\n        return data\n\n",
                                    v="0.30.0", name="pooler-config"))

    def test_a_changed_method_literal_is_read(self):
        v = PINNED[-1]
        ov = mutate(v, "vllm/config/speculative.py", '    "mlp_speculator",\n', '    "mlp_speculator",\n    "lookahead",\n')
        got = [m["name"] for m in fv.speculative_methods(fv.Source(corpus("vllm", v), ov))]
        self.assertIn("lookahead", got)
        ov = mutate(v, "vllm/config/speculative.py", '    "mlp_speculator",\n', '    "mlp_speculator",\n    UnknownAlias,\n')
        with self.assertRaisesRegex(fv.FactsError, "names `UnknownAlias`"):
            fv.speculative_methods(fv.Source(corpus("vllm", v), ov))

    def test_frontend_file_moved_by_0_30(self):
        # the frontend flags come from vllm/entrypoints/launchers/cli_args.py at 0.30.0
        self.assertEqual(flags("0.30.0")["port"]["source"], "vllm/entrypoints/launchers/cli_args.py")
        self.assertEqual(flags("0.22.1")["port"]["source"], "vllm/entrypoints/openai/cli_args.py")


# -- the catalog's `vllm serve` command lines --------------------------------

def serve_words(script: Path) -> list[list[str]]:
    """The argument words of the script's `vllm serve` command and of its
    `DP_ARGS=(...)` arrays (spliced into that command)."""
    text = script.read_text(encoding="utf-8")
    joined = re.sub(r"\\\n", " ", text)
    seqs = []
    for line in joined.splitlines():
        s = line.strip()
        # `SERVE=(vllm serve ...)`: the command kept as an array (run under
        # PD_DRY_RUN it is printed, else exec'd); read the array's words.
        m = re.match(r"^[A-Z_]+=\((vllm serve .*)\)$", s)
        if m:
            s = m.group(1)
        if "vllm serve" in s and not s.startswith("#"):
            # `SERVE=(vllm serve ...)`: the command as an array
            arr = re.match(r"^\w+=\((.*)\)$", s)
            words = shlex.split((arr.group(1) if arr else s).split("vllm serve", 1)[1])
            seqs.append([w for w in words[1:] if w != "${DP_ARGS[@]}"])  # [0] is the model
        m = re.match(r"^DP_ARGS=\((.*)\)$", s)
        if m:
            seqs.append([w for w in shlex.split(m.group(1)) if w != "${DP_ARGS[@]}"])
    if not seqs:
        raise AssertionError(f"no `vllm serve` command in {script}")
    return seqs


def layout_vllm_versions(meta: Path) -> dict[str, str]:
    """vLLM version(s) of a layout's image: the one its vllm-ascend release's
    Dockerfiles build (`ARG VLLM_TAG=`), and the one meta.yaml states."""
    text = meta.read_text(encoding="utf-8")
    block = re.search(r"^image:\n((?:  .*\n)+)", text, re.M)
    if not block:
        raise AssertionError(f"{meta}: no `image:` block")
    tag = re.search(r"^  tag: \"?v([^\"\s]+)", block.group(1), re.M)
    stated = re.search(r"^  vllm: \"?([^\"\s]+)", block.group(1), re.M)
    if not tag:
        raise AssertionError(f"{meta}: no `image.tag`")
    tree = corpus("vllm-ascend", tag.group(1))
    tags = set()
    for df in sorted(tree.glob("Dockerfile*")):
        tags |= set(re.findall(r"^ARG VLLM_TAG=v(\S+)", df.read_text(encoding="utf-8"), re.M))
    if len(tags) != 1:
        raise AssertionError(f"vllm-ascend {tag.group(1)}: its Dockerfiles pin vLLM {sorted(tags)}, expected one")
    out = {"Dockerfile": tags.pop()}
    if stated:
        out["meta.yaml"] = stated.group(1)
    return out


class Catalog(unittest.TestCase):
    def test_every_flag_the_catalog_passes_exists_at_the_layouts_vllm(self):
        scripts = sorted(ROOT.glob("catalog/*/*/run_dp_template*.sh")) + sorted(ROOT.glob("catalog/*/*/run_mixed.sh"))
        self.assertGreater(len(scripts), 10, "the committed catalog has no serve scripts")
        checked = 0
        for script in scripts:
            versions = layout_vllm_versions(script.parent / "meta.yaml")
            for origin, v in versions.items():
                if v not in PINNED:
                    self.fail(f"{script.parent.name}: vLLM {v} ({origin}) is not pinned in upstream/corpus.lock.json")
                fl = flags(v)
                by_spelling = {"--" + n: f for n, f in fl.items()}
                for f in fl.values():
                    for a in f["aliases"]:
                        by_spelling[a] = f
                for words in serve_words(script):
                    for i, w in enumerate(words):
                        if not w.startswith("-"):
                            continue
                        flag = w.split("=", 1)[0]
                        rel = script.relative_to(ROOT)
                        with self.subTest(script=str(rel), flag=flag, vllm=f"{v} ({origin})"):
                            if "." in flag:
                                # `--json-option.key value`: FlexibleArgumentParser merges the
                                # dotted key into the JSON option (vllm/utils/argparse_utils.py
                                # `FlexibleArgumentParser.parse_args`, `create_nested_dict`); the
                                # option must take JSON.
                                base = by_spelling.get(flag.split(".", 1)[0].rstrip("+"))
                                self.assertIsNotNone(base, f"{rel}: `{flag}` names no `vllm serve` option at vllm {v}")
                                self.assertEqual(base["kind"], "json", f"{rel}: `{flag}` dots into a non-JSON option")
                                checked += 1
                                continue
                            f = by_spelling.get(flag)
                            if f is None and flag.startswith("--no-"):
                                base = fl.get(flag[5:])
                                self.assertTrue(base and base["negatable"],
                                                f"{rel}: `{flag}` but `--{flag[5:]}` has no `--no-` form at vllm {v}")
                                checked += 1
                                continue
                            self.assertIsNotNone(f, f"{rel}: `{flag}` is not a `vllm serve` option at vllm {v} ({origin})")
                            nxt = words[i + 1] if i + 1 < len(words) else None
                            takes_value = "=" in w or (nxt is not None and not nxt.startswith("--"))
                            if f["kind"] == "switch":
                                self.assertNotIn("=", w, f"{rel}: switch `{flag}` given a value")
                                self.assertFalse(nxt is not None and not nxt.startswith("-"),
                                                 f"{rel}: switch `{flag}` followed by `{nxt}`")
                            else:
                                self.assertTrue(takes_value, f"{rel}: `{flag}` ({f['kind']}) without a value")
                            if f["kind"] == "json" and nxt and nxt.startswith("{"):
                                json.loads(nxt)
                            checked += 1
        self.assertGreater(checked, 200)


# -- mutations of upstream's code must change the result ---------------------

def mutate(version: str, rel: str, old: str, new: str) -> dict[str, str]:
    path = corpus("vllm", version) / rel
    text = path.read_text(encoding="utf-8")
    if text.count(old) != 1:
        raise AssertionError(f"the mutation expects `{old}` once in vllm {version}'s `{rel}`")
    return {rel: text.replace(old, new)}


class Mutations(unittest.TestCase):
    V = "0.22.1"
    CLI = "vllm/entrypoints/openai/cli_args.py"

    def run_mutated(self, overrides: dict[str, str]) -> dict[str, dict]:
        out = fv.vllm_facts(corpus("vllm", self.V), self.V, overrides=overrides)
        return {f["name"]: f for f in out["serve_flags"]}

    def test_the_field_type_decides_the_kind(self):
        fl = self.run_mutated(mutate(self.V, "vllm/config/model.py",
                                     "    enforce_eager: bool = False\n", "    enforce_eager: int = 0\n"))
        self.assertEqual((fl["enforce-eager"]["kind"], fl["enforce-eager"]["negatable"]), ("value", False))

    def test_a_kwargs_override_decides_the_kind(self):
        fl = self.run_mutated(mutate(self.V, self.CLI,
                                     'frontend_kwargs["allowed_origins"]["type"] = json.loads',
                                     'frontend_kwargs["allowed_origins"]["type"] = str'))
        self.assertEqual(fl["allowed-origins"]["kind"], "value")

    def test_a_removed_add_argument_removes_the_flag(self):
        fl = self.run_mutated(mutate(self.V, self.CLI, '"--headless",', '"--headless-mode",'))
        self.assertNotIn("headless", fl)
        self.assertEqual(fl["headless-mode"]["kind"], "switch")

    def test_a_second_long_name_is_an_alias_and_deprecated_flags_stay(self):
        ov = mutate(self.V, self.CLI, '"--api-server-count",\n        "-asc",',
                    '"--api-server-count",\n        "--api-servers",\n        "-asc",')
        text = ov[self.CLI].replace('"--headless",\n        action="store_true",',
                                    '"--headless",\n        deprecated=True,\n        action="store_true",')
        self.assertNotEqual(text, ov[self.CLI], "the mutation expects `--headless` with `action=` on the next line")
        fl = self.run_mutated({self.CLI: text})
        self.assertEqual(fl["api-server-count"]["aliases"], ["--api-servers", "-asc"])
        self.assertNotIn("api-servers", fl)
        self.assertEqual(fl["headless"]["kind"], "switch")

    def test_a_literal_decides_the_choices(self):
        fl = self.run_mutated(mutate(self.V, "vllm/config/parallel.py",
                                     '    "naive",\n    "pplx",\n', '    "naive",\n    "hccl",\n    "pplx",\n'))
        self.assertIn("hccl", fl["all2all-backend"]["choices"]["values"])

    def test_a_growing_choice_list_is_followed_or_marked_unread(self):
        ov = mutate(self.V, "vllm/engine/arg_utils.py",
                    '        moe_backend_kwargs["type"] = lambda s: s.lower().replace("-", "_")\n',
                    '        moe_backend_kwargs["type"] = lambda s: s.lower().replace("-", "_")\n'
                    '        moe_backend_kwargs["choices"] += ["npu"]\n')
        fl = self.run_mutated(ov)
        self.assertIn("npu", fl["moe-backend"]["choices"]["values"])
        ov = mutate(self.V, "vllm/engine/arg_utils.py",
                    '        moe_backend_kwargs["type"] = lambda s: s.lower().replace("-", "_")\n',
                    '        moe_backend_kwargs["type"] = lambda s: s.upper()\n')
        fl = self.run_mutated(ov)
        self.assertIn("how it converts a word is not known", fl["moe-backend"]["type"]["unread"])

    def test_an_unreadable_option_name_fails_naming_file_and_line(self):
        ov = mutate(self.V, self.CLI, "    parser = FrontendArgs.add_cli_args(parser)\n",
                    '    parser.add_argument("--" + ToolParserManager.list_registered()[0])\n'
                    "    parser = FrontendArgs.add_cli_args(parser)\n")
        with self.assertRaisesRegex(fv.FactsError, r"`vllm/entrypoints/openai/cli_args\.py:\d+`.*cannot be read statically"):
            self.run_mutated(ov)

    def test_an_undecidable_condition_fails_naming_file_and_line(self):
        ov = mutate(self.V, self.CLI, "    parser = FrontendArgs.add_cli_args(parser)\n",
                    "    if ToolParserManager.list_registered():\n"
                    '        parser.add_argument("--extra")\n'
                    "    parser = FrontendArgs.add_cli_args(parser)\n")
        with self.assertRaisesRegex(fv.FactsError, r"at `vllm/entrypoints/openai/cli_args\.py:\d+` cannot be decided statically"):
            self.run_mutated(ov)

    def test_a_changed_type_helper_stops_the_reading(self):
        ov = mutate(self.V, "vllm/engine/arg_utils.py",
                    "return any(is_type(type_hint, type) for type_hint in type_hints)",
                    "return all(is_type(type_hint, type) for type_hint in type_hints)")
        with self.assertRaisesRegex(fv.FactsError, r"`contains_type` at `vllm/engine/arg_utils\.py:\d+` changed"):
            self.run_mutated(ov)


if __name__ == "__main__":
    unittest.main()


class KvChecks(unittest.TestCase):
    """`kv_memory_check` and `mamba_blocks_check` (facts_vllm_kv_check.py)."""

    def test_each_pinned_vllm_reads_as_its_source_says(self):
        # By hand from each sdist's vllm/v1/core/kv_cache_utils.py and
        # vllm/config/compilation.py: 0.18.0 sizes a request by the first
        # group (`any_spec = kv_cache_groups[0].kv_cache_spec`), 0.19.1 on
        # sums every group; 0.29.0 on check `avail_mem -
        # _pool_bytes_per_block(groups)`; the Mamba-blocks refusal is there
        # from 0.20.2.
        for v in PINNED:
            with self.subTest(vllm=v):
                k = kvc.kv_memory_check(corpus("vllm", v))
                key = tuple(int(x) for x in v.split(".")[:2])
                self.assertEqual(k["blocks_per_request"], "first_group" if key < (0, 19) else "every_group")
                self.assertEqual(k["reserves_pool_block"], key >= (0, 29))
                m = kvc.mamba_blocks_check(corpus("vllm", v))
                self.assertEqual(m is not None, key >= (0, 20))
                for where in k["source"].split(", ") + ([m["source"]] if m else []):
                    path, line = where.rsplit(":", 1)
                    text = (corpus("vllm", v) / path).read_text(encoding="utf-8").splitlines()
                    self.assertGreater(len(text), int(line) - 1, where)

    def mutated(self, version: str, path: str, old: str, new: str) -> Path:
        import shutil
        import tempfile

        src = corpus("vllm", version)
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        for rel in (kvc.SOURCE, kvc.COMPILATION):
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            text = (src / rel).read_text(encoding="utf-8")
            if rel == path:
                self.assertIn(old, text)
                text = text.replace(old, new)
            (tmp / rel).write_text(text, encoding="utf-8")
        return tmp

    def test_the_readers_follow_the_code(self):
        # The reserved block taken out, the refusal's condition changed, the
        # first-group sizing brought back: each fact moves with the code.
        tmp = self.mutated("0.30.0", kvc.SOURCE, "avail_mem - _pool_bytes_per_block(groups)", "avail_mem")
        self.assertFalse(kvc.kv_memory_check(tmp)["reserves_pool_block"])
        tmp = self.mutated("0.30.0", kvc.COMPILATION, "max_num_reqs > kv_cache_config.num_blocks", "max_num_reqs > 0")
        self.assertIsNone(kvc.mamba_blocks_check(tmp))
        self.assertIsNotNone(kvc.mamba_blocks_check(self.mutated("0.30.0", kvc.COMPILATION, "", "")))
        tmp = self.mutated(
            "0.19.1",
            kvc.SOURCE,
            "blocks_needed = sum(\n        cdiv(group.kv_cache_spec.max_memory_usage_bytes(vllm_config), page_size)\n"
            "        for group in kv_cache_groups\n    )",
            "any_spec = kv_cache_groups[0].kv_cache_spec\n"
            "    blocks_needed = cdiv(any_spec.max_memory_usage_bytes(vllm_config), page_size)",
        )
        self.assertEqual(kvc.kv_memory_check(tmp)["blocks_per_request"], "first_group")
