#!/usr/bin/env python3
"""Ground truth for the vllm-ascend fact tables, on the cached corpus.

    python3 -m unittest discover -s scripts/upstream -p 'test_facts.py'

Each test reads the unpacked sdists through `corpus.py` (offline with a filled
cache; a missing package fails naming it). Two kinds of checks: properties that
break when an extractor breaks (every release has connectors, flags, a FROM
line, ...), and facts read by hand in the source, cited `path:line @release`.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import facts  # noqa: E402
import facts_ascend  # noqa: E402
from facts_testlib import ASCEND, src, table  # noqa: E402
from facts_tests_byhand import ByHand  # noqa: E402,F401  (run with this module's tests)


class Corpus(unittest.TestCase):
    def test_lock_pins_the_fifteen_releases(self):
        self.assertEqual(ASCEND[0], "0.18.0")
        self.assertEqual(ASCEND[-1], "0.30.0rc2")
        self.assertEqual(len(ASCEND), 15)


class Freshness(unittest.TestCase):
    def test_committed_tables_match_the_corpus(self):
        tables = {f"vllm-ascend/{v}.json": facts.render(table(v)) for v in ASCEND}
        have = facts.committed(["vllm-ascend"])
        self.assertEqual(sorted(tables), sorted(have), "the committed vllm-ascend tables are not one per pinned release")
        for rel, text in tables.items():
            self.assertEqual(have[rel], text, f"upstream/facts/{rel} is stale; run `facts.py write`")
            json.loads(text)
            self.assertTrue(text.endswith("}\n"))

    def test_rendering_is_deterministic(self):
        v = "0.21.0rc1"
        self.assertEqual(facts.render(facts_ascend.ascend_facts(src(v), v)), facts.render(table(v)))


class Properties(unittest.TestCase):
    """Fail when an extractor silently finds nothing or loses its order."""

    def test_every_release(self):
        for v in ASCEND:
            with self.subTest(release=v):
                t = table(v)
                self.assertEqual(t["version"], v)
                self.assertRegex(t["vllm"]["version"], r"^\d+\.\d+\.\d+$")
                ac = t["additional_config"]
                self.assertGreater(len(ac), 15)
                self.assertEqual([k["key"] for k in ac], sorted(k["key"] for k in ac))
                for k in ac:
                    self.assertTrue((src(v) / k["source"]).is_file(), k)
                    if k["sub_keys"] is not None:
                        self.assertEqual(k["sub_keys"], sorted(set(k["sub_keys"])))
                env = [e["name"] for e in t["env"]]
                self.assertEqual(env, sorted(set(env)))
                self.assertGreater(len(env), 20)
                self.assertIn("MooncakeConnectorV1", [c["name"] for c in t["kv_connectors"]])
                self.assertIn("MooncakeLayerwiseConnector", [c["name"] for c in t["kv_connectors"]])
                for name, s in t["scripts"].items():
                    self.assertIsNotNone(s, name)
                    self.assertIn("--port", [f["name"] for f in s["flags"]] + ["--port"] * (name == "launch_online_dp.py"))
                    self.assertTrue(s["flags"])
                for key in ("a2", "a3"):
                    img = t["images"][key]
                    self.assertRegex(img["from"], r"/cann:[^$]+-(910b|a3)-ubuntu22\.04-py3\.1[12]$")
                    self.assertIn("numactl", img["apt_packages"])
                    self.assertIn("/usr/local/Ascend/ascend-toolkit/set_env.sh", img["set_env_scripts"])
                    self.assertEqual(img["cmd"], ["/bin/bash"])
                    self.assertEqual(list(img["tools"]), facts_ascend.TOOLS)
                e2e = t["e2e"]
                self.assertGreater(e2e["configs"], 10)
                self.assertIn("benchmarks", e2e["root_keys"])
                self.assertTrue(e2e["runner"])

    def test_mooncake_and_image_suffixes(self):
        for v in ASCEND:
            with self.subTest(release=v):
                t = table(v)
                for key, img in t["images"].items():
                    if img is None:
                        continue
                    # the Dockerfile's own `ARG MOONCAKE_TAG=` line, `v` dropped
                    text = (src(v) / img["dockerfile"]).read_text(encoding="utf-8")
                    args = re.findall(r"^ARG MOONCAKE_TAG=\"?v?([^\"\s]+)\"?$", text, re.M)
                    self.assertEqual([img["mooncake"]], args, f"{v} {img['dockerfile']}")
                    self.assertRegex(img["mooncake"], r"^\d+\.\d+\.\d+(\.post\d+)?$")
                suffixes = t["image_suffixes"]
                self.assertEqual(list(suffixes), ["source", *facts_ascend.IMAGES])
                wf = (src(v) / suffixes["source"]).read_text(encoding="utf-8")
                for key, name in facts_ascend.IMAGES.items():
                    sfx = suffixes[key]
                    if sfx is None:
                        # the workflow names that Dockerfile nowhere
                        self.assertNotRegex(wf, re.compile(rf"dockerfile:\s*[\"']?{re.escape(name)}[\"']?(,|\s|$)", re.M),
                                            f"{v} {key}")
                    else:
                        self.assertIn(sfx.removeprefix("-"), wf)
                        # a pushed image has a Dockerfile in the sdist
                        self.assertIsNotNone(t["images"][key], f"{v} {key}")
                self.assertEqual(suffixes["a2"], "")
                self.assertEqual(suffixes["a3"], "-a3")

    def test_a_changed_workflow_suffix_is_read(self):
        v = ASCEND[-1]
        wf = src(v) / facts_ascend.IMAGE_WORKFLOW
        text = wf.read_text(encoding="utf-8")
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / facts_ascend.IMAGE_WORKFLOW).parent.mkdir(parents=True)
            (Path(d) / facts_ascend.IMAGE_WORKFLOW).write_text(text.replace('suffix: "a5"', 'suffix: "950dt"'))
            self.assertEqual(facts_ascend.image_suffixes(Path(d))["950dt"], "-950dt")
            (Path(d) / facts_ascend.IMAGE_WORKFLOW).write_text(
                re.sub(r'\{[^\n]*dockerfile: "Dockerfile\.a5"[^\n]*\n', "", text))
            self.assertIsNone(facts_ascend.image_suffixes(Path(d))["950dt"])

    def test_launcher_flags_by_hand(self):
        # examples/external_online_dp/launch_online_dp.py:10-16 @0.30.0rc2: seven flags;
        # --dp-rpc-port is type=str with the int default 12345
        flags = {f["name"]: f for f in table("0.30.0rc2")["scripts"]["launch_online_dp.py"]["flags"]}
        self.assertEqual(
            sorted(flags),
            ["--dp-address", "--dp-rank-start", "--dp-rpc-port", "--dp-size", "--dp-size-local", "--tp-size", "--vllm-start-port"],
        )
        self.assertEqual(flags["--dp-rpc-port"], {"name": "--dp-rpc-port", "default": "12345", "nargs": None, "type": "str"})
        self.assertIsNone(flags["--dp-size"]["default"])

    def test_proxy_workers_flag(self):
        # load_balance_proxy_server_example.py:692-697 @0.30.0rc2 adds --workers (default 1);
        # @0.18.0 the parser (L508-532) has none; the layerwise proxy never has it
        def flags(v, name):
            return {f["name"]: f for f in table(v)["scripts"][name]["flags"]}

        self.assertEqual(flags("0.30.0rc2", "load_balance_proxy_server_example.py")["--workers"]["default"], "1")
        self.assertNotIn("--workers", flags("0.18.0", "load_balance_proxy_server_example.py"))
        for v in ASCEND:
            self.assertNotIn("--workers", flags(v, "load_balance_proxy_layerwise_server_example.py"), v)
        self.assertEqual(
            flags("0.30.0rc2", "load_balance_proxy_server_example.py")["--prefiller-ports"],
            {"name": "--prefiller-ports", "default": "[8001]", "nargs": "+", "type": "int"},
        )


class StandIn(unittest.TestCase):
    """The extractor on a small package written here, one pattern per key."""

    def test_additional_config_patterns(self):
        import tempfile

        code = {
            "vllm_ascend/ascend_config.py": """
from vllm_ascend.config_utils import config

class Strict:
    _defaults = {"a": 1, "b": 2}
    def __init__(self, user_config):
        for key, value in user_config.items():
            if key not in self._defaults:
                raise ValueError(key)

class Loose:
    def __init__(self, x=1, **kwargs):
        self.y = kwargs.get("y")

@config
class Typed:
    p: int = 0
    q: "Inner" = None

@config
class Inner:
    r: int = 0

class AscendConfig:
    def __init__(self, vllm_config):
        additional_config = vllm_config.additional_config or {}
        self.s = Strict(additional_config.get("strict_cfg", {}))
        self.l = Loose(**additional_config.get("loose_cfg", {}))
        self.t = Typed(**additional_config.get("typed_cfg", {}))
        self.v = self._value(additional_config, "via_helper")
        self.n = additional_config.get("nested", {}).get("leaf")

    @staticmethod
    def _value(additional_config, key):
        if key in additional_config:
            return additional_config[key]
        return None
""",
            "vllm_ascend/utils.py": """
import os
def reader(vllm_config):
    ac = getattr(vllm_config, "additional_config", None)
    if ac is not None and "elsewhere" in ac:
        return ac["elsewhere"]
    return os.getenv("SOME_ENV") or os.environ.get("OTHER_ENV")
""",
        }
        with tempfile.TemporaryDirectory() as d:
            for rel, text in code.items():
                (Path(d) / rel).parent.mkdir(parents=True, exist_ok=True)
                (Path(d) / rel).write_text(text)
            pkg = facts_ascend.Package(Path(d))
            got = {k["key"]: (k["sub_keys"], k["strict"], k["source"]) for k in facts_ascend.additional_config(pkg)}
            env = [e["name"] for e in facts_ascend.env_reads(pkg)]
        cfg = "vllm_ascend/ascend_config.py"
        self.assertEqual(
            got,
            {
                "elsewhere": (None, False, "vllm_ascend/utils.py"),
                "loose_cfg": (["x", "y"], False, cfg),
                "nested": (["leaf"], False, cfg),
                "strict_cfg": (["a", "b"], True, cfg),
                "typed_cfg": (["p", "q"], True, cfg),
                "via_helper": (None, False, cfg),
            },
        )
        self.assertEqual(env, ["OTHER_ENV", "SOME_ENV"])

    def test_missing_corpus_names_the_package(self):
        import os
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            old = os.environ.get("PD_UPSTREAM_CACHE")
            os.environ["PD_UPSTREAM_CACHE"] = d
            try:
                with self.assertRaises(AssertionError) as cm:
                    src("0.21.0rc1")
            finally:
                if old is None:
                    del os.environ["PD_UPSTREAM_CACHE"]
                else:
                    os.environ["PD_UPSTREAM_CACHE"] = old
        self.assertIn("vllm-ascend==0.21.0rc1", str(cm.exception))


class Diff(unittest.TestCase):
    def test_diff_names_the_changes(self):
        a, b = table("0.25.1rc1"), table("0.30.0rc2")
        out = "\n".join(facts.diff_tables(a, b, None, None))
        self.assertIn('vllm version: "0.25.1" -> "0.30.0"', out)
        self.assertIn("  + MooncakeConnectorV2", out)
        self.assertIn("  - enable_sparse_c8", out)
        self.assertIn("e2e multi-node configs:", out)
        self.assertEqual(facts.diff_tables(a, a, None, None)[1:], ["serve flags: no vllm table for 0.25.1, 0.25.1 (facts_vllm.py missing or vLLM not pinned)"])


if __name__ == "__main__":
    unittest.main()
