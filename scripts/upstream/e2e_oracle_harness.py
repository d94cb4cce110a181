"""The harness of the e2e oracle (`e2e_oracle.py _harness`), run in one
interpreter per release with the release root as working directory: for each
config and node it sets the pod's environment, calls the release's own loader
and launcher objects, and records what they start (`run_config`,
`harness_main`)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from e2e_oracle_standins import LEADER_DNS, S, _install_import_hook, _install_stand_ins, _refuse, node_ip


def _import(name: str):
    import importlib

    return importlib.import_module(name)


def _module_names(rel: str) -> dict:
    """The test modules of the runner that serves config `rel` (see the
    docstring); each imports the loader and launcher modules it calls."""
    if rel.startswith("tests/e2e/cases/"):
        base = "tests.e2e.common.multi_node"
        return {
            "dispatch": f"{base}.dp_mode",
            "external": {"test": f"{base}.external_dp.test_external_dp"},
            "internal": {"test": f"{base}.internal_dp.test_multi_node"},
            "entry": f"{base}.test_multi_node",
        }
    base = "tests.e2e.nightly.multi_node"
    if rel.startswith("tests/e2e/nightly/multi_node/config/"):
        return {"legacy": {"test": f"{base}.scripts.test_multi_node"}}
    if "external_dp/config" in rel:  # run.sh:14-20 (0.23.0): `*"external_dp/config"*` picks the external-DP test
        return {"external": {"test": f"{base}.external_dp.scripts.test_external_dp"}}
    return {"internal": {"test": f"{base}.internal_dp.scripts.test_multi_node"}}


def _pod_env(rel: str, k: int) -> dict:
    # What the LWS template (`lws.yaml.jinja2`) and the LWS controller give
    # every pod that the runner reads.
    return {
        "CONFIG_BASE_PATH": str(Path(rel).parent.as_posix()),
        "CONFIG_YAML_PATH": Path(rel).name,
        "LWS_LEADER_ADDRESS": LEADER_DNS,
        "LWS_WORKER_INDEX": str(k),
    }


def _set_environ(env: dict):
    os.environ.clear()
    os.environ.update(env)


def _kv_transfer_config(argv: list[str]):
    for i, a in enumerate(argv):
        val = None
        for flag in ("--kv-transfer-config", "--kv_transfer_config"):
            if a == flag and i + 1 < len(argv):
                val = argv[i + 1]
            elif a.startswith(flag + "="):
                val = a[len(flag) + 1:]
        if val is not None:
            try:
                return json.loads(val)
            except json.JSONDecodeError as e:
                return {"error": f"`--kv-transfer-config` is not JSON ({e}): {val}"}
    return None


def _own_env(env, base: dict) -> dict:
    """What the runner sets for a process: its env minus what the pod had."""
    if env is None:
        return {}
    return {k: v for k, v in env.items() if not (k in base and base[k] == v)}


def _launch_record(launch: dict, base: dict, with_kv: bool) -> dict:
    for x in launch["argv"]:
        if not isinstance(x, str):
            _refuse(f"the runner put a non-string argument {x!r} on a command line")
    env = _own_env(launch["env"], base)
    for key, v in env.items():
        if not isinstance(v, str):
            _refuse(f"the runner passed a non-string env value {key}={v!r}")
    rec = {"argv": list(launch["argv"]), "env": env}
    if launch["cwd"] is not None:
        rec["cwd"] = launch["cwd"]
    if with_kv:
        rec["kv_transfer_config"] = _kv_transfer_config(rec["argv"])
    return rec


def _external_node(mods: dict, k: int, log_root: Path, out: dict):
    """One node of an external-DP config, as `test_external_dp()` starts it
    (0.23.0 `tests/e2e/nightly/multi_node/external_dp/scripts/test_external_dp.py:102-125`;
    from 0.27 with the KV-pool manager first and its env passed to the
    ranks, `test_external_dp.py` `kv_pool_manager = create_kv_pool_manager(...)`)."""
    test = _import(mods["test"])
    S.run_phase = True
    config = test.ExternalDPConfigLoader.from_yaml()
    ranks = test.RankResolver(config).resolve()
    current = test.resolve_current_node_index(config)
    if current != k:
        _refuse(f"the runner resolved node index {current} for pod {k}")
    extra = {}
    if hasattr(test, "create_kv_pool_manager"):
        S.phase = "service"
        pool = test.create_kv_pool_manager(config=config, current_node_index=current, log_root=log_root)
        pool.__enter__()
        extra = {"extra_envs": pool.server_envs}
    S.phase = "rank"
    test.ExternalDPServerManager(config=config, ranks=ranks, current_node_index=current, log_root=log_root,
                                 **extra).start_current_node()
    S.phase = "proxy"
    test.ExternalDPProxyLauncher(config=config, ranks=ranks, current_node_index=current, log_root=log_root).start()
    S.run_phase = False
    local = [r for r in ranks if r.node_index == k]
    roles = sorted({r.role for r in local})
    out["model"] = config.model
    out["cluster_ips"] = list(config.cluster_ips)
    out["routing"] = {"type": config.routing.type, "groups": config.routing.groups,
                      "proxy_node_index": config.routing.proxy_node_index}
    out["special_dependencies"] = dict(config.special_dependencies)
    out["default_log_root"] = str(test.DEFAULT_LOG_ROOT)
    return {"role": roles[0] if len(roles) == 1 else roles, "rank_info": [
        {"dp_rank": r.dp_rank, "local_rank": r.local_rank, "port": r.port, "visible_devices": r.visible_devices,
         "host": r.host} for r in local]}


def _internal_node(mods: dict, k: int, out: dict):
    """One node of an internal-DP config, as `test_multi_node()` starts it
    (0.23.0 `tests/e2e/nightly/multi_node/internal_dp/scripts/test_multi_node.py:162-194`;
    0.18.0 `tests/e2e/nightly/multi_node/scripts/test_multi_node.py:11-32`, the same calls)."""
    test = _import(mods["test"])
    S.run_phase = True
    config = test.MultiNodeConfigLoader.from_yaml()
    if config.cur_index != k:
        _refuse(f"the runner resolved node index {config.cur_index} for pod {k}")
    S.phase = "proxy"
    proxy = test.ProxyLauncher(nodes=config.nodes, disagg_cfg=config.disagg_cfg, envs=config.envs,
                               proxy_port=config.proxy_port, cur_index=config.cur_index).__enter__()
    S.phase = "rank"
    test.RemoteOpenAIServer(model=config.model, vllm_serve_args=config.server_cmd, server_port=config.server_port,
                            server_host=config.master_ip, env_dict=config.envs, auto_port=False,
                            proxy_port=proxy.proxy_port, disaggregated_prefill=config.disagg_cfg,
                            nodes_info=config.nodes, max_wait_seconds=2800)
    S.run_phase = False
    d = config.disagg_cfg
    out["model"] = config.model
    out["cluster_ips"] = [n.ip for n in config.nodes]
    out["disaggregated_prefill"] = None if d is None else {
        "prefiller_host_index": list(d.prefiller_indices), "decoder_host_index": list(d.decoder_indices)}
    out["special_dependencies"] = dict(getattr(config, "special_dependencies", {}) or {})
    node = config.nodes[k]
    role = None if d is None else ("prefiller" if d.is_prefiller(k) else "decoder" if d.is_decoder(k) else None)
    return {"role": role, "headless": node.headless, "server_port": str(config.server_port),
            "proxy_port": config.proxy_port}


def _benchmarks(raw) -> list:
    """The config's `benchmarks:` cases as the runner hands them to AISBench
    (each with its `case_name`), values as written."""
    if not isinstance(raw, dict) or not isinstance(raw.get("benchmarks"), dict):
        return []
    out = []
    for name, case in raw["benchmarks"].items():
        c = dict(case) if isinstance(case, dict) else {"value": case}
        c["case_name"] = name
        out.append(c)
    return out


def _swap(obj, old: str, new: str):
    if isinstance(obj, str):
        return obj.replace(old, new)
    if isinstance(obj, list):
        return [_swap(x, old, new) for x in obj]
    if isinstance(obj, dict):
        return {_swap(k, old, new): _swap(v, old, new) for k, v in obj.items()}
    return obj


def _jsonable(obj):
    return json.loads(json.dumps(obj, sort_keys=True, default=str))


def run_config(root: Path, version: str, rel: str) -> dict:
    import logging

    import yaml

    res: dict = {"release": version, "config": rel}
    try:
        raw = yaml.safe_load((root / rel).read_text(encoding="utf-8"))
    except Exception as e:
        raw = None
        res["error"] = f"the YAML does not load: {type(e).__name__}: {e}"
        return res
    res["benchmarks"] = _jsonable(_benchmarks(raw))
    num_nodes = raw.get("num_nodes") if isinstance(raw, dict) else None
    if not isinstance(num_nodes, int) or num_nodes < 1:
        res["error"] = f"`num_nodes` is {num_nodes!r}, expected a positive integer"
        return res
    mods = _module_names(rel)
    S.ips = [node_ip(k) for k in range(num_nodes)]
    warnings: list[str] = []

    class Catch(logging.Handler):
        def emit(self, record):
            if record.levelno >= logging.WARNING:
                warnings.append(f"{record.levelname}: {record.getMessage()}")

    catch = Catch()
    logging.getLogger().addHandler(catch)
    nodes = []
    proxy = None
    files: dict = {}
    node_k = 0
    try:
        for k in range(num_nodes):
            node_k = k
            S.node, S.launches, S.phase = k, [], "setup"
            base = _pod_env(rel, k)
            _set_environ(base)
            log_tmp = tempfile.mkdtemp(prefix="e2e-oracle-logs-")
            try:
                if "dispatch" in mods:
                    _import(mods["entry"])
                    S.run_phase = True
                    mode = _import(mods["dispatch"]).resolve_dp_load_balancing()
                    S.run_phase = False
                    kind = mods[mode]
                    res["dp_load_balancing"] = mode
                elif "legacy" in mods:
                    mode, kind = "internal", mods["legacy"]
                else:
                    mode = "external" if "external" in mods else "internal"
                    kind = mods[mode]
                res["runner"] = kind["test"].replace(".", "/") + ".py"
                res["format"] = ("external_dp" if mode == "external" else
                                 "internal_dp_legacy" if "legacy" in mods else "internal_dp")
                if mode == "external":
                    info = _external_node(kind, k, Path(log_tmp), res)
                else:
                    info = _internal_node(kind, k, res)
                swap_to = res.get("default_log_root")
                node = {"node_index": k, "ip": node_ip(k), "pod_env": base, "ranks": [], "services": [], **info}
                for launch in S.launches:
                    if launch["phase"] == "proxy":
                        if proxy is not None:
                            _refuse("the runner started a second proxy")
                        proxy = {"node_index": k, **_launch_record(launch, base, with_kv=False)}
                    elif launch["phase"] == "rank":
                        node["ranks"].append(_launch_record(launch, base, with_kv=True))
                    else:
                        node["services"].append(_launch_record(launch, base, with_kv=False))
                if "rank_info" in node:
                    if len(node["rank_info"]) != len(node["ranks"]):
                        _refuse(f"the runner started {len(node['ranks'])} ranks for {len(node['rank_info'])} "
                                "resolved ranks")
                    for r, ri in zip(node["ranks"], node.pop("rank_info")):
                        r.update(ri)
                if swap_to:
                    for p in sorted(Path(log_tmp).rglob("*")):
                        if p.is_file() and "runtime" in p.relative_to(log_tmp).parts:
                            files[str(Path(swap_to) / p.relative_to(log_tmp))] = p.read_text(encoding="utf-8")
                    node = _swap(node, log_tmp, swap_to)
                    if proxy is not None:
                        proxy = _swap(proxy, log_tmp, swap_to)
                    files = _swap(files, log_tmp, swap_to)
                nodes.append(node)
            finally:
                S.run_phase = False
                import shutil

                shutil.rmtree(log_tmp, ignore_errors=True)
        res.pop("default_log_root", None)
        res["nodes"] = nodes
        res["proxy"] = proxy
        res["files"] = files
        res["runner_warnings"] = sorted(set(warnings))
    except (Exception, SystemExit) as e:  # the runner's own refusal or a stand-in's
        for key in ("nodes", "proxy", "files", "runner_warnings", "default_log_root", "model", "cluster_ips",
                    "routing", "special_dependencies", "disaggregated_prefill"):
            res.pop(key, None)
        res["error"] = f"node {node_k}: {type(e).__name__}: {e}"
    finally:
        logging.getLogger().removeHandler(catch)
    return _jsonable(res)


def harness_main(argv: list[str]) -> int:
    version, root, out, *paths = argv
    root_p = Path(root)
    sys.dont_write_bytecode = True
    sys.path.insert(0, str(root_p))
    import logging

    import regex  # noqa: F401  (real, imported before the stand-ins)
    import yaml  # noqa: F401

    logging.getLogger().setLevel(logging.INFO)
    _install_import_hook()
    _install_stand_ins()
    results = [run_config(root_p, version, rel) for rel in paths]
    stubbed = sorted({m.split(".")[0] for m in S.stubbed})
    Path(out).write_text(json.dumps({"results": results, "stubbed_packages": stubbed}), encoding="utf-8")
    return 0
