#!/usr/bin/env python3
"""Ground truth for the vllm-ascend fact tables, on the cached corpus.

    python3 -m unittest discover -s scripts/upstream -p 'test_facts.py'

Each test reads the unpacked sdists through `corpus.py` (offline with a filled
cache; a missing package fails naming it). Two kinds of checks: properties that
break when an extractor breaks (every release has connectors, flags, a FROM
line, ...), and facts read by hand in the source, cited `path:line @release`.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import tempfile
import unittest
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpus  # noqa: E402
import facts  # noqa: E402
import facts_ascend  # noqa: E402

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
