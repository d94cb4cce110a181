"""Tests of the e2e oracle against the cached upstream corpus.

    cd scripts/upstream && python3 -m unittest test_e2e_oracle

The oracle runs every release's runner once (module set-up). Each property
below is derived independently from the config YAML and a rule of the
runner's source, cited as `file:line` of vllm-ascend 0.23.0 (the same lines
hold in every release that has the file, unless said otherwise), so a
broken oracle (a wrong stand-in, a missed launch, an env mixed up between
nodes, a reordered proxy list) fails here. A missing corpus fails naming the
package (`corpus.py` fetches it when it can).
"""

from __future__ import annotations

import functools
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import regex
import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402
import e2e_oracle as eo  # noqa: E402

RUNS: dict = {}
ROOTS: dict = {}

# runtime.py:290-300 `build_dist_envs`, multi_node_config.py:92-102 `DistEnvBuilder.build`
DIST_ENV = {"HCCL_IF_IP", "HCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME", "LOCAL_IP", "NIC_NAME",
            "MASTER_IP"}

EXT = "tests/e2e/nightly/multi_node/external_dp/scripts"
INT = "tests/e2e/nightly/multi_node/internal_dp/scripts"


def setUpModule():
    versions = eo.releases()
    for v in versions:
        try:
            ROOTS[v] = eo.release_root(v)
        except corpus.CorpusError as e:
            raise RuntimeError(f"the upstream corpus lacks `{eo.PACKAGE}=={v}` and cannot fetch it "
                               f"(`scripts/upstream/corpus.py fetch` fills the cache): {e}") from e
    RUNS.update(eo.oracle(versions))


@functools.lru_cache(maxsize=None)
def raw_yaml(version: str, rel: str):
    # LibYAML where PyYAML has it: a parser independent of the runner's.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load((ROOTS[version] / rel).read_text(encoding="utf-8"), Loader=loader)


def results():
    for v, run in RUNS.items():
        for r in run["results"]:
            yield v, r


def ok_results(fmt: str | None = None):
    for v, r in results():
        if "error" not in r and (fmt is None or r["format"] == fmt):
            yield v, r


def flag(argv: list[str], name: str):
    return argv[argv.index(name) + 1] if name in argv else None


def proxy_list(argv: list[str], name: str) -> list[str]:
    """The values after `name` up to the next `--flag`."""
    i = argv.index(name) + 1
    out = []
    while i < len(argv) and not argv[i].startswith("--"):
        out.append(argv[i])
        i += 1
    return out


def expected_ips(raw: dict) -> list[str]:
    # scripts/utils.py:275-284: `cluster_hosts` when the config gives them,
    # else the LWS DNS names, which the stand-in resolves to 10.0.0.(k+1).
    return list(raw.get("cluster_hosts") or [eo.node_ip(k) for k in range(raw["num_nodes"])])


class Coverage(unittest.TestCase):
    def test_every_release_has_multi_node_configs_and_runs_them(self):
        for v, run in RUNS.items():
            listed = eo.discover(ROOTS[v])
            self.assertTrue(listed, f"{v}: no multi-node config found")
            self.assertEqual([r["config"] for r in run["results"]], listed, v)

    def test_no_error_comes_from_a_stand_in(self):
        # An error must be the runner's own refusal of the config; a stand-in
        # refusing means the oracle does not model what the runner needs.
        for v, r in results():
            if "error" in r:
                self.assertNotIn("StandInRefused", r["error"], f"{v} {r['config']}")
                self.assertNotIn("stubbed package", r["error"], f"{v} {r['config']}")

    def test_errors_are_exactly_the_inconsistent_configs(self):
        # internal_dp/scripts/multi_node_config.py:60-62: a prefiller or
        # decoder index at or past `num_nodes` is refused.
        for v, r in results():
            raw = raw_yaml(v, r["config"])
            d = raw.get("disaggregated_prefill") if isinstance(raw, dict) else None
            idx = (d.get("prefiller_host_index", []) + d.get("decoder_host_index", [])) if d else []
            bad = any(i >= raw["num_nodes"] for i in idx) and r.get("format", "").startswith("internal")
            if bad:
                self.assertIn("Disaggregated prefill index out of range", r.get("error", ""), f"{v} {r['config']}")
            else:
                self.assertNotIn("error", r, f"{v} {r['config']}")

    def test_formats_follow_the_release_dispatch(self):
        for v, r in results():
            rel = r["config"]
            if rel.startswith("tests/e2e/cases/"):
                # common/multi_node/dp_mode.py:46-56 (0.30): `dp_load_balancing`,
                # else `external` only for a path holding `/external_dp/`.
                mode = str(raw_yaml(v, rel).get("dp_load_balancing", "internal")).lower()
                self.assertEqual(r["format"], f"{mode}_dp", f"{v} {rel}")
            elif rel.startswith("tests/e2e/nightly/multi_node/config/"):
                self.assertEqual(r["format"], "internal_dp_legacy", f"{v} {rel}")
            else:
                # nightly/multi_node/scripts/run.sh:14-20
                want = "external_dp" if "external_dp/config" in rel else "internal_dp"
                self.assertEqual(r["format"], want, f"{v} {rel}")

    def test_benchmarks_are_the_config_cases_as_written(self):
        # external_dp_config.py:321-327 / multi_node_config.py:315-319: each
        # case as written, plus its `case_name`.
        for v, r in results():
            raw = raw_yaml(v, r["config"])
            want = [{**case, "case_name": name} for name, case in (raw.get("benchmarks") or {}).items()]
            self.assertEqual(r["benchmarks"], json.loads(json.dumps(want, default=str)), f"{v} {r['config']}")


class ExternalDP(unittest.TestCase):
    def test_ranks_ports_devices_and_dp_ranks(self):
        n = 0
        for v, r in ok_results("external_dp"):
            raw = raw_yaml(v, r["config"])
            ips = expected_ips(raw)
            total = 0
            for k, node_cfg in enumerate(raw["config"]):
                node = r["nodes"][k]
                tmpl = raw["templates"][k]
                local = int(node_cfg.get("dp_size_local", 1))  # external_dp_config.py:291
                per_rank = 1
                for key in ("tp_size", "cp_size", "sp_size", "pp_size"):  # external_dp_config.py:56-58
                    per_rank *= int(node_cfg.get(key, 1))
                where = f"{v} {r['config']} node {k}"
                self.assertEqual(len(node["ranks"]), local, where)
                total += len(node["ranks"])
                for i, rank in enumerate(node["ranks"]):
                    port = int(node_cfg["port_start"]) + i  # external_dp_config.py:423
                    devices = ",".join(str(d) for d in range(i * per_rank, (i + 1) * per_rank))  # :424-428
                    argv, env = rank["argv"], rank["env"]
                    # runtime.py:69: `vllm serve MODEL` + every template argument
                    self.assertEqual(argv[:3], ["vllm", "serve", raw["model"]], where)
                    self.assertEqual(len(argv), 3 + len(tmpl["server_cmd_template"]), where)
                    self.assertFalse([a for a in argv if "${" in a], f"{where}: unresolved placeholder")
                    self.assertEqual((rank["port"], rank["visible_devices"]), (port, devices), where)
                    self.assertEqual(rank["dp_rank"], int(node_cfg.get("dp_rank_start", 0)) + i, where)  # :422
                    # runtime.py:200 (0.27+: `**self.extra_envs`, the KV pool's paths)
                    pool = raw.get("kv_pool") or {}
                    extra = {"memcache": {"MMC_LOCAL_CONFIG_PATH"},
                             "mooncake": {"MOONCAKE_CONFIG_PATH", "MOONCAKE_MASTER"}}.get(pool.get("type"), set())
                    self.assertEqual(set(env), set(tmpl["envs"]) | DIST_ENV | extra, f"{where}: env keys")
                    for key, val in tmpl["envs"].items():
                        if val == "${PORT}":
                            self.assertEqual(env[key], str(port), where)
                        if val == "${VISIBLE_DEVICES}":
                            self.assertEqual(env[key], devices, where)
                    if "SERVER_PORT" in env:
                        self.assertEqual(flag(argv, "--port"), env["SERVER_PORT"], where)
                    # runtime.py:200 and 290-300: the dist env of this node over the template's
                    self.assertEqual(env["HCCL_IF_IP"], ips[k], where)
                    self.assertEqual(env["LOCAL_IP"], ips[k], where)
                    self.assertEqual(env["MASTER_IP"], ips[0], where)
                    self.assertEqual(env["HCCL_SOCKET_IFNAME"], eo.NIC, where)
            self.assertEqual(total, sum(int(c.get("dp_size_local", 1)) for c in raw["config"]))
            n += 1
        self.assertGreater(n, 0)

    def test_proxy_on_node_0_port_1999_lists_prefill_then_decode_ranks(self):
        n = 0
        for v, r in ok_results("external_dp"):
            raw = raw_yaml(v, r["config"])
            ips = expected_ips(raw)
            where = f"{v} {r['config']}"
            self.assertEqual(raw["routing"]["type"], "disaggregated_prefill", where)
            argv = r["proxy"]["argv"]
            self.assertEqual(r["proxy"]["node_index"], 0, where)
            # external_dp_config.py:250-254 and runtime.py:305
            self.assertEqual(argv[1], "examples/disaggregated_prefill_v1/load_balance_proxy_server_example.py")
            self.assertEqual((flag(argv, "--host"), flag(argv, "--port")), (ips[0], "1999"), where)
            for role, opt in (("prefiller", "--prefiller"), ("decoder", "--decoder")):
                # runtime.py:316-323 over the ranks in node order (external_dp_config.py:402-404)
                nodes = sorted(raw["routing"]["groups"][role])
                want = [(ips[k], str(int(raw["config"][k]["port_start"]) + i))
                        for k in nodes for i in range(int(raw["config"][k].get("dp_size_local", 1)))]
                got = list(zip(proxy_list(argv, f"{opt}-hosts"), proxy_list(argv, f"{opt}-ports")))
                self.assertEqual(got, want, f"{where} {role}")
                for k in nodes:
                    self.assertEqual(r["nodes"][k]["role"], role, where)
            self.assertLess(argv.index("--prefiller-hosts"), argv.index("--decoder-hosts"), where)
            n += 1
        self.assertGreater(n, 0)

    def test_one_config_checked_by_hand(self):
        # 0.23.0 tests/e2e/nightly/multi_node/external_dp/config/DeepSeek-V4-flash-w8a8-PD-prefix.yaml:
        # :9-10 prefiller [0], decoder [1]; :14-20 node 0 port_start 7100,
        # dp_size_local 4, tp 4, dp_address ${NODE_0_IP}; :23-29 node 1 7100,
        # 16, tp 1; :33-34 SERVER_PORT "${PORT}", ASCEND_RT_VISIBLE_DEVICES
        # "${VISIBLE_DEVICES}"; :64 `--port $SERVER_PORT`.
        (r,) = [r for r in RUNS["0.23.0"]["results"]
                if r["config"].endswith("external_dp/config/DeepSeek-V4-flash-w8a8-PD-prefix.yaml")]
        p, d = r["nodes"]
        self.assertEqual([len(p["ranks"]), len(d["ranks"])], [4, 16])
        self.assertEqual([x["env"]["SERVER_PORT"] for x in p["ranks"]], ["7100", "7101", "7102", "7103"])
        self.assertEqual([flag(x["argv"], "--port") for x in p["ranks"]], ["7100", "7101", "7102", "7103"])
        self.assertEqual(p["ranks"][3]["env"]["ASCEND_RT_VISIBLE_DEVICES"], "12,13,14,15")
        self.assertEqual(d["ranks"][15]["env"]["ASCEND_RT_VISIBLE_DEVICES"], "15")
        self.assertEqual(flag(d["ranks"][15]["argv"], "--data-parallel-rank"), "15")
        self.assertEqual(flag(d["ranks"][0]["argv"], "--data-parallel-address"), "10.0.0.2")
        self.assertEqual([x["kv_transfer_config"]["kv_role"] for x in (p["ranks"][0], d["ranks"][0])],
                         ["kv_producer", "kv_consumer"])
        argv = r["proxy"]["argv"]
        self.assertEqual(proxy_list(argv, "--prefiller-ports"), ["7100", "7101", "7102", "7103"])
        self.assertEqual(proxy_list(argv, "--decoder-hosts"), ["10.0.0.2"] * 16)

    def test_kv_pool_service_files_and_env(self):
        # runtime.py (0.27+) `ExternalDPMemcacheManager` / `ExternalDPMooncakeManager`:
        # node 0 starts the service, every node writes its config and passes
        # its path to the ranks.
        n = 0
        for v, r in ok_results("external_dp"):
            raw = raw_yaml(v, r["config"])
            pool = raw.get("kv_pool")
            if not pool:
                self.assertEqual(r["files"], {}, v)
                continue
            ip0 = expected_ips(raw)[0]
            where = f"{v} {r['config']}"
            for k, node in enumerate(r["nodes"]):
                self.assertEqual(len(node["services"]), 1 if k == 0 else 0, where)
                key = "MMC_LOCAL_CONFIG_PATH" if pool["type"] == "memcache" else "MOONCAKE_CONFIG_PATH"
                for rank in node["ranks"]:
                    path = rank["env"][key]
                    self.assertTrue(path.startswith(f"/tmp/external_dp_logs/node-{k}/runtime/"), where)
                    text = r["files"][path]
                    if pool["type"] == "memcache":
                        self.assertIn(f"ock.mmc.meta_service_url = tcp://{ip0}:{pool['meta_service_port']}", text)
                    else:
                        self.assertEqual(json.loads(text)["master_server_address"], f"{ip0}:{pool['master_port']}")
            n += 1
        self.assertGreater(n, 0, "no external-DP config with a kv_pool ran")


def node_envs(raw: dict, k: int, legacy: bool) -> dict:
    """The config env of node `k` as the runner stringifies it
    (internal_dp/scripts/multi_node_config.py:87 and 104; 0.18/0.19 put the
    node's `envs` over `env_common`, scripts/multi_node_config.py:93)."""
    if legacy:
        envs = {**(raw.get("env_common") or {}), **(raw["deployment"][k].get("envs") or {})}
    else:
        envs = dict(raw["deployment"][k]["envs"])
    return {key: str(val) for key, val in envs.items()}


class InternalDP(unittest.TestCase):

    def test_one_process_per_node_with_its_env_and_expanded_command(self):
        n = 0
        for v, r in ok_results():
            if not r["format"].startswith("internal"):
                continue
            raw = raw_yaml(v, r["config"])
            ips = expected_ips(raw)
            d = raw.get("disaggregated_prefill")
            for k, node in enumerate(r["nodes"]):
                where = f"{v} {r['config']} node {k}"
                (rank,) = node["ranks"]
                envs = node_envs(raw, k, r["format"] == "internal_dp_legacy")
                if d:  # multi_node_config.py:70-73
                    master = ips[0] if k in d.get("prefiller_host_index", []) else ips[d["decoder_host_index"][0]]
                else:
                    master = ips[0]
                want = {"VLLM_WORKER_MULTIPROC_METHOD": "spawn", **envs,  # conftest.py:258-260
                        "HCCL_IF_IP": ips[k], "HCCL_SOCKET_IFNAME": eo.NIC, "GLOO_SOCKET_IFNAME": eo.NIC,
                        "TP_SOCKET_IFNAME": eo.NIC, "LOCAL_IP": ips[k], "NIC_NAME": eo.NIC, "MASTER_IP": master}
                self.assertEqual(rank["env"], want, where)
                # multi_node_config.py:204 and 209-216, then conftest.py:285-286
                cmd = raw["deployment"][k].get("server_cmd", "")
                expanded = regex.sub(r"\$(\w+)|\$\{(\w+)\}",
                                     lambda m: want.get(m.group(1) or m.group(2), m.group(0)), cmd)
                self.assertEqual(rank["argv"], shlex.split(expanded), where)
                self.assertEqual(node["headless"], "--headless" in cmd, where)
            n += 1
        self.assertGreater(n, 0)

    def test_pd_proxy_on_node_0_lists_prefill_then_decode_nodes(self):
        n = 0
        for v, r in ok_results():
            if not r["format"].startswith("internal"):
                continue
            raw = raw_yaml(v, r["config"])
            d = raw.get("disaggregated_prefill")
            where = f"{v} {r['config']}"
            if not d:
                self.assertIsNone(r["proxy"], where)
                continue
            ips = expected_ips(raw)
            argv = r["proxy"]["argv"]
            self.assertEqual(r["proxy"]["node_index"], 0, where)
            # multi_node_config.py:196 `get_available_port()`, scripts/utils.py:287-295:
            # the first port from 6000 that binds (the stand-in binds any).
            self.assertEqual((flag(argv, "--host"), flag(argv, "--port")), (ips[0], "6000"), where)
            # multi_node_config.py:119: node 0's SERVER_PORT, else DEFAULT_SERVER_PORT (:22)
            node0_port = node_envs(raw, 0, r["format"] == "internal_dp_legacy").get("SERVER_PORT", "8080")
            self.assertEqual(r["nodes"][0]["server_port"], node0_port, where)
            for key, opt in (("prefiller_host_index", "--prefiller"), ("decoder_host_index", "--decoder")):
                # multi_node_config.py:134-152: non-headless nodes of the role, in
                # the config's order, each at node 0's SERVER_PORT
                nodes = [k for k in d.get(key, []) if "--headless" not in raw["deployment"][k].get("server_cmd", "")]
                self.assertEqual(proxy_list(argv, f"{opt}-hosts"), [ips[k] for k in nodes], where)
                self.assertEqual(proxy_list(argv, f"{opt}-ports"), [node0_port] * len(nodes), where)
            n += 1
        self.assertGreater(n, 0)


class Oracle(unittest.TestCase):
    def test_rerun_is_byte_identical(self):
        for v in ("0.18.0", "0.30.0rc2"):
            again = eo.run_release(v, eo.discover(ROOTS[v]))
            self.assertEqual(eo.dumps(again), eo.dumps(RUNS[v]), v)

    def test_placeholders_refuse_use_while_the_runner_runs(self):
        p = eo._Placeholder("torch.npu")
        self.assertIsInstance(p.device_count, eo._Placeholder)
        eo.S.run_phase = True
        try:
            with self.assertRaisesRegex(eo.StandInRefused, "torch.npu.device_count"):
                p.device_count  # noqa: B018
            with self.assertRaises(eo.StandInRefused):
                str(p)
        finally:
            eo.S.run_phase = False

    def test_a_runner_that_needs_hardware_is_an_error_not_a_guess(self):
        # A copy of the 0.23.0 runner whose dist-env builder asks torch for the
        # NPU count, and one that resolves a host outside the cluster: both
        # must come out as errors naming what the stand-in refused.
        root0 = ROOTS["0.23.0"]
        rel = "tests/e2e/nightly/multi_node/external_dp/config/DeepSeek-V4-flash-w8a8-PD-prefix.yaml"
        for patch, expect in (
            ("    import torch\n    torch.npu.device_count()\n", "torch.npu"),
            ("    import socket\n    socket.gethostbyname('example.com')\n", "example.com"),
            ("    import time\n    time.sleep(1)\n", "waited"),
        ):
            with tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp) / "tree"
                for part in ("tests", "tools", "examples"):
                    shutil.copytree(root0 / part, root / part)
                runtime = root / EXT / "runtime.py"
                src = runtime.read_text()
                anchor = "def build_dist_envs(cur_ip: str, master_ip: str) -> dict[str, str]:\n"
                self.assertIn(anchor, src)
                runtime.write_text(src.replace(anchor, anchor + patch))
                out = Path(tmp) / "out.json"
                subprocess.run([sys.executable, str(HERE / "e2e_oracle.py"), "_harness", "0.23.0", str(root),
                                str(out), rel], cwd=root, check=True, capture_output=True,
                               env={"PYTHONDONTWRITEBYTECODE": "1"})
                (res,) = json.loads(out.read_text())["results"]
                self.assertIn("StandInRefused", res.get("error", ""), patch)
                self.assertIn(expect, res["error"], patch)
                self.assertNotIn("nodes", res)


if __name__ == "__main__":
    unittest.main()
