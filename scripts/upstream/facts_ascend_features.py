"""The start-up checks of vllm-ascend's features, for `facts_ascend.py`: KV
layer parallelism (`kvpp`), EPLB per model runner, the models that need the
V2 model runner, and Engram's tensor-parallel sizes."""

from __future__ import annotations

import ast
import re

from facts_ascend_package import FactsError, Package
from facts_sp_moe import property_terms


def _functions(pkg: Package, suffix: str, name: str):
    """Every function `name` of the package's modules whose path ends with
    `suffix`, with that path."""
    for rel, mod in pkg.modules.items():
        if rel.endswith(suffix):
            for fn in ast.walk(mod.tree):
                if isinstance(fn, ast.FunctionDef) and fn.name == name:
                    yield rel, fn


def kvpp(pkg: Package) -> dict | None:
    """What `KVPPConfig.validate` refuses when `additional_config.enable_kvpp`
    turns KV layer parallelism on (size TP x PCP above 1,
    `KVPPConfig.from_vllm_config`): the PD connector it needs (the string the
    raising `kv_connector !=` compares with, besides `AscendStoreConnector`),
    whether a `kv_consumer` is refused, the graph modes it runs under (eager,
    plus `piecewise` where it compares `cudagraph_mode` with
    `CUDAGraphMode.PIECEWISE`), whether it needs MLA (`use_mla`), whether DCP
    is refused, and the speculative methods it allows. None before it."""
    for rel, mod in pkg.modules.items():
        if "class KVPPConfig" not in mod.text:
            continue
        cls = next((n for n in mod.tree.body if isinstance(n, ast.ClassDef) and n.name == "KVPPConfig"), None)
        fn = cls and next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "validate"), None)
        if fn is None:
            raise FactsError(f"`{rel}`: `KVPPConfig` has no `validate`")
        out: dict = {"connector": None, "decode_refused": False, "graphs": ["eager"], "mla_only": False,
                     "dcp_refused": False, "methods": None, "source": f"{rel}:{fn.lineno}"}
        for node in ast.walk(fn):
            if not isinstance(node, ast.If):
                continue
            test = ast.unparse(node.test)
            raises = any(isinstance(x, ast.Raise) for b in node.body for x in ast.walk(b))
            if "kv_connector !=" in test and raises:
                names = [x for x in _strs(node.test) if x != "AscendStoreConnector"]
                if names:
                    out["connector"] = names[0]
            if "kv_role ==" in test and "kv_consumer" in _strs(node.test) and raises:
                out["decode_refused"] = True
            if "CUDAGraphMode.PIECEWISE" in test and raises:
                out["graphs"].append("piecewise")
            if "use_mla" in test and raises:
                out["mla_only"] = True
            if "decode_context_parallel_size" in test and raises:
                out["dcp_refused"] = True
            allowed = [
                c
                for c in ast.walk(node.test)
                if isinstance(c, ast.Compare)
                and ast.unparse(c.left).endswith(".method")
                and isinstance(c.ops[0], (ast.NotIn, ast.NotEq))
            ]
            if allowed and raises:
                out["methods"] = sorted({x for c in allowed for x in _strs(c)})
        if out["connector"] is None or out["methods"] is None:
            raise FactsError(f"`{rel}`: `KVPPConfig.validate` no longer reads as expected: {out}")
        return out
    return None


def _strs(node: ast.AST) -> list[str]:
    return [c.value for c in ast.walk(node) if isinstance(c, ast.Constant) and isinstance(c.value, str)]


def eplb_runner(pkg: Package) -> dict | None:
    """What `_validate_eplb_config` (vllm_ascend/platform.py) allows per model
    runner: on the V2 runner the `eplb_config` fields it accepts
    (`v2_fields`, the set subtracted from the config's keys) and the env
    switches it refuses (`v2_refused_env`, read with `os.getenv` in a raising
    `if`); on the V1 runner the fields it refuses (`v1_refused_fields`, the
    `elif` tests `"x" in eplb_config` or `{...} & eplb_config.keys()`). None
    before the function tells the runners apart."""
    for rel, mod in pkg.modules.items():
        if not rel.endswith("platform.py"):
            continue
        for fn in ast.walk(mod.tree):
            if not (isinstance(fn, ast.FunctionDef) and fn.name == "_validate_eplb_config"):
                continue
            for node in ast.walk(fn):
                if not (isinstance(node, ast.If) and "use_v2_model_runner" in ast.unparse(node.test)):
                    continue
                v2_fields: list[str] = []
                env: list[str] = []
                body = ast.Module(body=node.body, type_ignores=[])
                sets = {
                    t.id: x.value
                    for x in ast.walk(body)
                    if isinstance(x, ast.Assign) and isinstance(x.value, ast.Set)
                    for t in x.targets
                    if isinstance(t, ast.Name)
                }
                for x in ast.walk(body):
                    if isinstance(x, ast.BinOp) and isinstance(x.op, ast.Sub):
                        right = sets.get(x.right.id) if isinstance(x.right, ast.Name) else x.right
                        if isinstance(right, ast.Set):
                            v2_fields = sorted(_strs(right))
                    if isinstance(x, ast.If) and any(isinstance(r, ast.Raise) for b in x.body for r in ast.walk(b)):
                        for c in ast.walk(x.test):
                            if (
                                isinstance(c, ast.Call)
                                and ast.unparse(c.func).endswith("getenv")
                                and c.args
                                and isinstance(c.args[0], ast.Constant)
                            ):
                                env.append(c.args[0].value)
                needs_flag = _v2_fields_needing_flag(body, rel)
                v1: list[str] = []
                rest = node.orelse
                while len(rest) == 1 and isinstance(rest[0], ast.If):
                    e = rest[0]
                    if "eplb_config" in ast.unparse(e.test) and any(
                        isinstance(r, ast.Raise) for b in e.body for r in ast.walk(b)
                    ):
                        v1 += _strs(e.test)
                    rest = e.orelse
                return {
                    "v2_fields": v2_fields,
                    "v2_refused_env": sorted(set(env)),
                    "v1_refused_fields": sorted(set(v1)),
                    "v2_fields_need_flag": needs_flag,
                    "source": f"{rel}:{node.lineno}",
                }
    return None


def _v2_fields_needing_flag(body: ast.Module, rel: str) -> list[dict]:
    """The V2 runner's `eplb_config` fields that need a vLLM flag when set
    off their default: a name assigned `eplb_config.get("F", D)` and a raising
    `if` testing `name != D and not vllm_config.parallel_config.ATTR`; the
    flag is vLLM's option for that `ParallelConfig` field (`--` + ATTR with
    dashes, as `EngineArgs.add_cli_args` names it)."""
    gets: dict[str, tuple[str, object]] = {}
    for x in ast.walk(body):
        if (
            isinstance(x, ast.Assign)
            and len(x.targets) == 1
            and isinstance(x.targets[0], ast.Name)
            and isinstance(x.value, ast.Call)
            and isinstance(x.value.func, ast.Attribute)
            and x.value.func.attr == "get"
            and ast.unparse(x.value.func.value) == "eplb_config"
            and len(x.value.args) == 2
            and all(isinstance(a, ast.Constant) for a in x.value.args)
        ):
            gets[x.targets[0].id] = (x.value.args[0].value, x.value.args[1].value)
    out: list[dict] = []
    for x in ast.walk(body):
        if not (
            isinstance(x, ast.If)
            and any(isinstance(r, ast.Raise) for b in x.body for r in ast.walk(b))
            and isinstance(x.test, ast.BoolOp)
            and isinstance(x.test.op, ast.And)
        ):
            continue
        field = None
        attr = None
        for v in x.test.values:
            if (
                isinstance(v, ast.Compare)
                and isinstance(v.left, ast.Name)
                and v.left.id in gets
                and len(v.ops) == 1
                and isinstance(v.ops[0], ast.NotEq)
                and isinstance(v.comparators[0], ast.Constant)
                and v.comparators[0].value == gets[v.left.id][1]
            ):
                field = gets[v.left.id]
            if (
                isinstance(v, ast.UnaryOp)
                and isinstance(v.op, ast.Not)
                and isinstance(v.operand, ast.Attribute)
                and ast.unparse(v.operand.value).endswith("parallel_config")
            ):
                attr = v.operand.attr
        if field and attr:
            out.append(
                {
                    "field": field[0],
                    "default": field[1],
                    "flag": "--" + attr.replace("_", "-"),
                    "source": f"{rel}:{x.lineno}",
                }
            )
    return out


def _device_capabilities(pkg: Package) -> dict[str, str]:
    """Each `AscendDeviceType.X: HardwareProfile(...)` entry of
    vllm_ascend/device/hardware_profile.py: X -> the unparsed `capabilities=`
    expression, module-level names in it expanded one level (`_A3_CAPABILITIES
    | {...}`). Empty before hardware profiles exist."""
    out: dict[str, str] = {}
    for rel, mod in pkg.modules.items():
        if not rel.endswith("device/hardware_profile.py"):
            continue
        names = {
            t.id: ast.unparse(n.value)
            for n in mod.tree.body
            if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
            if isinstance(t, ast.Name)
        }
        for d in ast.walk(mod.tree):
            if not isinstance(d, ast.Dict):
                continue
            for k, v in zip(d.keys, d.values):
                if not (k is not None and ast.unparse(k).startswith("AscendDeviceType.") and isinstance(v, ast.Call)):
                    continue
                caps = next((kw.value for kw in v.keywords if kw.arg == "capabilities"), None)
                if caps is None:
                    continue
                text = ast.unparse(caps)
                for n in ast.walk(caps):
                    if isinstance(n, ast.Name) and n.id in names:
                        text += " " + names[n.id]
                out[ast.unparse(k).split(".", 1)[1].lstrip("_")] = text
    return out


def v2_runner_required(pkg: Package) -> list[dict]:
    """The models the platform refuses on the V1 model runner: each raising
    `if` of `_validate_model_runner_config` (vllm_ascend/platform.py) that
    tests `model_config.architecture in (...)`, a hardware capability
    (`supports(HardwareCapability.X)`) and `not ....use_v2_model_runner`:
    the architectures, the capability and the device types whose profile
    has it (`A2`, `A3`, `A5`, ...). Empty before the check exists."""
    caps = None
    out = []
    for rel, mod in pkg.modules.items():
        if not rel.endswith("platform.py"):
            continue
        for fn in ast.walk(mod.tree):
            if not (isinstance(fn, ast.FunctionDef) and fn.name == "_validate_model_runner_config"):
                continue
            for node in ast.walk(fn):
                if not (isinstance(node, ast.If) and any(isinstance(r, ast.Raise) for b in node.body for r in ast.walk(b))):
                    continue
                test = ast.unparse(node.test)
                if "use_v2_model_runner" not in test:
                    continue
                archs: list[str] = []
                cap = None
                for c in ast.walk(node.test):
                    if (
                        isinstance(c, ast.Compare)
                        and ast.unparse(c.left).endswith("architecture")
                        and isinstance(c.ops[0], ast.In)
                    ):
                        archs += _strs(c.comparators[0])
                    if isinstance(c, ast.Attribute) and ast.unparse(c).startswith("HardwareCapability."):
                        cap = c.attr
                if not archs or cap is None:
                    continue
                if caps is None:
                    caps = _device_capabilities(pkg)
                devices = sorted(d for d, text in caps.items() if f"HardwareCapability.{cap}" in text)
                out.append(
                    {"architectures": sorted(archs), "capability": cap, "devices": devices, "source": f"{rel}:{node.lineno}"}
                )
    return out


def engram_tp(pkg: Package) -> dict | None:
    """The tensor-parallel sizes `_validate_engram_config`
    (vllm_ascend/platform.py) allows a model with Engram tables, and that
    model's architecture (the `architecture != "..."` test). None before
    Ascend Engram."""
    for rel, mod in pkg.modules.items():
        if not rel.endswith("platform.py"):
            continue
        for fn in ast.walk(mod.tree):
            if not (isinstance(fn, ast.FunctionDef) and fn.name == "_validate_engram_config"):
                continue
            arch = None
            for c in ast.walk(fn):
                if (
                    isinstance(c, ast.Compare)
                    and ast.unparse(c.left).endswith("architecture")
                    and isinstance(c.ops[0], ast.NotEq)
                    and isinstance(c.comparators[0], ast.Constant)
                ):
                    arch = c.comparators[0].value
            for node in ast.walk(fn):
                if not (isinstance(node, ast.If) and any(isinstance(r, ast.Raise) for b in node.body for r in ast.walk(b))):
                    continue
                for c in ast.walk(node.test):
                    if (
                        isinstance(c, ast.Compare)
                        and ast.unparse(c.left).endswith("tensor_parallel_size")
                        and isinstance(c.ops[0], ast.NotIn)
                        and isinstance(c.comparators[0], (ast.Tuple, ast.List, ast.Set))
                    ):
                        sizes = [e.value for e in c.comparators[0].elts if isinstance(e, ast.Constant)]
                        if arch:
                            return {"architecture": arch, "tp_sizes": sizes, "source": f"{rel}:{node.lineno}"}
    return None


def sp_graph_alignment(pkg: Package) -> dict | None:
    """Whether the V1 model runner hands vLLM the TP size when it resolves
    the capture sizes (`NPUModelRunner._check_and_update_cudagraph_mode`,
    vllm_ascend/worker/model_runner_v1.py), so that vLLM's refusal of a
    decode step and TP neither a multiple of the other under sequence
    parallelism (`adjust_cudagraph_sizes_for_spec_decode`) can fire:
    `passes_tp` is `never` when the runner itself calls
    `adjust_cudagraph_sizes_for_spec_decode(<lcm>, 1)` (it pre-aligns to
    lcm(step, TP) and hands vLLM TP 1), `unless_sizes_aligned` when an `if`
    testing `all(size % graph_alignment == 0 ...)` sets
    `resolver_tensor_parallel_size = 1` (typed capture sizes all multiples
    of lcm(step, TP) skip vLLM's TP step), else `always` (vLLM's runner, or
    its resolver, gets the TP size). `source`: `path:line` of that call,
    that `if`, or the function. `None` without the function."""
    for rel, mod in pkg.modules.items():
        if not rel.endswith("worker/model_runner_v1.py"):
            continue
        for fn in ast.walk(mod.tree):
            if not (isinstance(fn, ast.FunctionDef) and fn.name == "_check_and_update_cudagraph_mode"):
                continue
            for c in ast.walk(fn):
                if (
                    isinstance(c, ast.Call)
                    and isinstance(c.func, ast.Attribute)
                    and c.func.attr == "adjust_cudagraph_sizes_for_spec_decode"
                    and len(c.args) == 2
                    and isinstance(c.args[1], ast.Constant)
                    and c.args[1].value == 1
                ):
                    return {"passes_tp": "never", "source": f"{rel}:{c.lineno}"}
            for x in ast.walk(fn):
                if (
                    isinstance(x, ast.If)
                    and re.search(r"\ball\(.*% graph_alignment == 0", ast.unparse(x.test))
                    and any(
                        isinstance(s, ast.Assign)
                        and [ast.unparse(t) for t in s.targets] == ["resolver_tensor_parallel_size"]
                        and isinstance(s.value, ast.Constant)
                        and s.value.value == 1
                        for s in x.body
                    )
                ):
                    return {"passes_tp": "unless_sizes_aligned", "source": f"{rel}:{x.lineno}"}
            return {"passes_tp": "always", "source": f"{rel}:{fn.lineno}"}
    return None


def enable_sp(pkg: Package) -> dict | None:
    """What vllm-ascend's `enable_sp()` (vllm_ascend/utils.py), the sequence
    parallelism the model runner hands vLLM's graph sizing
    (`update_pass_config`), reads: `additional_config.enable_flashcomm1`
    (a test `"enable_flashcomm1" in additional_config`), `env.<NAME>`
    (`envs_ascend.NAME` or `os.getenv("NAME", ...)`), `shared_expert_dp`
    (an `if` on the `enable_shared_expert_dp` argument that sets it on),
    `parallel_config.use_sequence_parallel_moe` (vLLM's own property).
    `source`: `path:line` of the function. `None` without it."""
    for rel, mod in pkg.modules.items():
        if not rel.endswith("vllm_ascend/utils.py"):
            continue
        for fn in mod.tree.body:
            if not (isinstance(fn, ast.FunctionDef) and fn.name == "enable_sp"):
                continue
            reads: set[str] = set()
            for x in ast.walk(fn):
                if (
                    isinstance(x, ast.Compare)
                    and isinstance(x.left, ast.Constant)
                    and x.left.value == "enable_flashcomm1"
                    and isinstance(x.ops[0], ast.In)
                ):
                    reads.add("additional_config.enable_flashcomm1")
                if isinstance(x, ast.Attribute) and ast.unparse(x.value) == "envs_ascend":
                    reads.add(f"env.{x.attr}")
                if (
                    isinstance(x, ast.Call)
                    and ast.unparse(x.func) == "os.getenv"
                    and x.args
                    and isinstance(x.args[0], ast.Constant)
                ):
                    reads.add(f"env.{x.args[0].value}")
                if isinstance(x, ast.Attribute) and x.attr == "use_sequence_parallel_moe":
                    reads.add("parallel_config.use_sequence_parallel_moe")
                if (
                    isinstance(x, ast.If)
                    and "enable_shared_expert_dp" in {n.id for n in ast.walk(x.test) if isinstance(n, ast.Name)}
                    and any(
                        isinstance(s, ast.Assign) and isinstance(s.value, ast.Constant) and s.value.value is True
                        for s in x.body
                    )
                ):
                    reads.add("shared_expert_dp")
            return {"reads": sorted(reads), "source": f"{rel}:{fn.lineno}"}
    return None


def tp_aligned_capture_sizes(pkg: Package) -> dict | None:
    """vllm-ascend's refusal of capture sizes none of which is a multiple of
    TP (`_setup_compile_backend`, vllm_ascend/platform.py): under an `if`
    testing `tensor_parallel_size > 1` and `requires_tp_aligned_capture_sizes`
    (with `cudagraph_mode != CUDAGraphMode.NONE` and not `enforce_eager`),
    an `if not <sizes>:` raises. `requires`: the terms the requirement is an
    `or` of (`enable_sp` for the call `enable_sp(...)`, the function's
    keyword arguments `enable_shared_expert_dp`, `enable_dsa_cp`, which
    the platform passes from `AscendConfig`), sorted. `source`: `path:line`
    of the raising `if`. Up to v0.26.0rc1 `check_and_update_config` asserts
    the sizes kept instead, under `enable_sp(vllm_config)` alone:
    `requires` is `["enable_sp"]` and `source` the `assert`. `None` without
    either."""
    for rel, mod in pkg.modules.items():
        if not rel.endswith("vllm_ascend/platform.py"):
            continue
        # Up to v0.26.0rc1: `check_and_update_config` asserts the filtered
        # sizes under `tensor_parallel_size > 1 and not enforce_eager and
        # enable_sp(vllm_config)` (with `cudagraph_mode != CUDAGraphMode.NONE`
        # from v0.21.0rc1).
        for _, fn in _functions(pkg, rel, "check_and_update_config"):
            for x in ast.walk(fn):
                test = ast.unparse(x.test) if isinstance(x, ast.If) else ""
                if not ("tensor_parallel_size > 1" in test and "enforce_eager" in test and "enable_sp(" in test):
                    continue
                for a in x.body:
                    if isinstance(a, ast.Assert) and isinstance(a.test, ast.Name):
                        return {"requires": ["enable_sp"], "source": f"{rel}:{a.lineno}"}
        for fn in ast.walk(mod.tree):
            if not (isinstance(fn, ast.FunctionDef) and fn.name == "_setup_compile_backend"):
                continue
            requires: list[str] | None = None
            for x in ast.walk(fn):
                if (
                    isinstance(x, ast.Assign)
                    and [ast.unparse(t) for t in x.targets] == ["requires_tp_aligned_capture_sizes"]
                    and isinstance(x.value, ast.BoolOp)
                    and isinstance(x.value.op, ast.Or)
                ):
                    requires = sorted(
                        v.func.id if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) else ast.unparse(v)
                        for v in x.value.values
                    )
            if requires is None:
                return None
            for x in ast.walk(fn):
                test = ast.unparse(x.test) if isinstance(x, ast.If) else ""
                if not (
                    "tensor_parallel_size > 1" in test
                    and "requires_tp_aligned_capture_sizes" in test
                    and "cudagraph_mode != CUDAGraphMode.NONE" in test
                    and "enforce_eager" in test
                ):
                    continue
                for r in x.body:
                    if (
                        isinstance(r, ast.If)
                        and isinstance(r.test, ast.UnaryOp)
                        and isinstance(r.test.op, ast.Not)
                        and any(isinstance(e, ast.Raise) for b in r.body for e in ast.walk(b))
                    ):
                        return {"requires": requires, "source": f"{rel}:{r.lineno}"}
    return None


def sp_asserts(pkg: Package) -> dict | None:
    """What `check_and_update_config` (vllm_ascend/platform.py) asserts of
    an engine with `enable_sp()` on, up to v0.26.0rc1: under `if
    enable_sp(vllm_config):`, `tp_above_1` (`path:line` of `assert
    ...tensor_parallel_size > 1`) and `expert_parallel` (of `assert not
    is_moe_model(vllm_config) or ...enable_expert_parallel`). `None` without
    that `if`; a field `None` without its assert."""
    for rel, fn in _functions(pkg, "vllm_ascend/platform.py", "check_and_update_config"):
        for x in ast.walk(fn):
            if not (isinstance(x, ast.If) and re.fullmatch(r"enable_sp\(\w+\)", ast.unparse(x.test))):
                continue
            out: dict = {"tp_above_1": None, "expert_parallel": None}
            for a in x.body:
                if not isinstance(a, ast.Assert):
                    continue
                test = ast.unparse(a.test)
                if re.fullmatch(r"[\w.]*tensor_parallel_size > 1", test):
                    out["tp_above_1"] = f"{rel}:{a.lineno}"
                elif re.fullmatch(r"not is_moe_model\(\w+\) or [\w.]*enable_expert_parallel", test):
                    out["expert_parallel"] = f"{rel}:{a.lineno}"
            if any(out.values()):
                return out
    return None


def default_capture_cap(pkg: Package) -> dict | None:
    """The platform's default `max_cudagraph_capture_size` when a layout
    types neither it nor capture sizes (`apply_config_platform_defaults`,
    vllm_ascend/platform.py, which vLLM's `VllmConfig.__post_init__` runs
    before it sizes the graphs): the helper (a method of the platform class
    or a module function) that returns `min(max_num_seqs *
    decode_query_len[ * per_seq], ceiling)`, with `decode_query_len` one
    plus the speculative tokens. `per_seq` is the product's factor after
    `decode_query_len` (1 when there is none; vLLM's own is 2), `ceiling`
    the constant. `unions_cap`: `_setup_compile_backend` adds the cap,
    bounded by `max_num_batched_tokens`, to the sizes before vLLM sizes them
    again (`set(...) | {reduced_cg_cap}`, from v0.30.0rc1). `source`:
    `path:line` of the `return`. `None` without such a helper, or when
    `apply_config_platform_defaults` does not call it."""
    for rel, mod in pkg.modules.items():
        if not rel.endswith("vllm_ascend/platform.py"):
            continue
        helper = None
        for fn in ast.walk(mod.tree):
            if not isinstance(fn, ast.FunctionDef):
                continue
            for r in ast.walk(fn):
                if not (
                    isinstance(r, ast.Return)
                    and isinstance(r.value, ast.Call)
                    and ast.unparse(r.value.func) == "min"
                    and len(r.value.args) == 2
                ):
                    continue
                product, ceiling = r.value.args
                factors = []
                while isinstance(product, ast.BinOp) and isinstance(product.op, ast.Mult):
                    factors.insert(0, product.right)
                    product = product.left
                factors.insert(0, product)
                names = [ast.unparse(f) for f in factors]
                if names[:2] != ["max_num_seqs", "decode_query_len"]:
                    continue
                rest = factors[2:]
                if not all(isinstance(f, ast.Constant) and isinstance(f.value, int) for f in rest) or not (
                    isinstance(ceiling, ast.Constant) and isinstance(ceiling.value, int)
                ):
                    raise FactsError(f"`{rel}`:{r.lineno}: the default capture cap `{ast.unparse(r.value)}` is not constants after `max_num_seqs * decode_query_len`")
                per_seq = 1
                for f in rest:
                    per_seq *= f.value
                helper = (fn.name, {"per_seq": per_seq, "ceiling": ceiling.value, "source": f"{rel}:{r.lineno}"})
        if helper is None:
            return None
        name, fact = helper
        called = any(
            isinstance(fn, ast.FunctionDef)
            and fn.name == "apply_config_platform_defaults"
            and any(isinstance(c, ast.Call) and ast.unparse(c.func).split(".")[-1] == name for c in ast.walk(fn))
            for fn in ast.walk(mod.tree)
        )
        if not called:
            return None
        unions = any(
            isinstance(fn, ast.FunctionDef)
            and fn.name == "_setup_compile_backend"
            and any(
                isinstance(a, ast.Assign)
                and [ast.unparse(t) for t in a.targets] == ["compilation_config.cudagraph_capture_sizes"]
                and re.search(r"\| \{\w+\}", ast.unparse(a.value))
                for a in ast.walk(fn)
            )
            for fn in ast.walk(mod.tree)
        )
        return {**fact, "unions_cap": unions}
    return None


def aux_hidden_states_exemption(pkg: Package) -> dict | None:
    """vllm-ascend's patch of vLLM's aux-hidden-states gate
    (`SpeculativeConfig._verify_args`): a wrapper that catches vLLM's
    ValueError and lets the start go on when the method is one of `methods`
    (`method not in (...)` re-raises) and the target's text `model_type`,
    lowercased, contains `model_type_contains` (`"..." not in
    str(model_type).lower()` re-raises). The wrapper is a function defined
    in a function that assigns it to `SpeculativeConfig._verify_args`, that
    function called at module level of a `patch/` module. `source`:
    `path:line` of the model-type test. None without such a patch."""
    for rel, mod in pkg.modules.items():
        if "/patch/" not in rel or "_verify_args" not in mod.text:
            continue
        called = {
            ast.unparse(n.value.func)
            for n in mod.tree.body
            if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)
        }
        for outer in mod.tree.body:
            if not (isinstance(outer, ast.FunctionDef) and outer.name in called):
                continue
            assigns = any(
                isinstance(a, ast.Assign)
                and [ast.unparse(t) for t in a.targets] == ["SpeculativeConfig._verify_args"]
                for a in ast.walk(outer)
            )
            if not assigns:
                continue
            for inner in ast.walk(outer):
                if not isinstance(inner, ast.FunctionDef) or inner is outer:
                    continue
                methods, contains, at = None, None, None
                for c in ast.walk(inner):
                    if not (isinstance(c, ast.Compare) and len(c.ops) == 1 and isinstance(c.ops[0], ast.NotIn)):
                        continue
                    right = c.comparators[0]
                    if ast.unparse(c.left) == "method" and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
                        methods = [e.value for e in right.elts if isinstance(e, ast.Constant)]
                    elif (
                        isinstance(c.left, ast.Constant)
                        and isinstance(c.left.value, str)
                        and ast.unparse(right) == "str(model_type).lower()"
                    ):
                        contains, at = c.left.value, c.lineno
                if methods and contains:
                    return {"methods": methods, "model_type_contains": contains, "source": f"{rel}:{at}"}
    return None


def mc2_hierarchy_experts(pkg: Package) -> dict | None:
    """The expert limit of hierarchy MC2 (`AscendConfig._validate_mc2_comm_alg`,
    vllm_ascend/ascend_config.py): with `mc2_comm_alg` equal to `alg`
    (`if self.mc2_comm_alg != "...": return`), the model's experts plus, when
    `eplb_config.<redundant_when>` is on, `eplb_config.num_redundant_experts`
    (`num_redundant_experts = self.eplb_config.num_redundant_experts if
    self.eplb_config.<x> else 0`) above `max_experts` (`if num_experts > N:
    raise`) are refused. `aliases`: the boolean keys that set `mc2_comm_alg`
    to `alg` (`if self.<key>: self.mc2_comm_alg = "..."`). `source`:
    `path:line` of the raising `if`. None before the check."""
    for rel, mod in pkg.modules.items():
        if not rel.endswith("vllm_ascend/ascend_config.py"):
            continue
        fn = next(
            (n for n in ast.walk(mod.tree) if isinstance(n, ast.FunctionDef) and n.name == "_validate_mc2_comm_alg"),
            None,
        )
        if fn is None:
            return None
        alg = limit = at = redundant_when = None
        for n in ast.walk(fn):
            if (
                isinstance(n, ast.If)
                and isinstance(n.test, ast.Compare)
                and ast.unparse(n.test.left) == "self.mc2_comm_alg"
                and isinstance(n.test.ops[0], ast.NotEq)
                and isinstance(n.test.comparators[0], ast.Constant)
                and any(isinstance(b, ast.Return) for b in n.body)
            ):
                alg = n.test.comparators[0].value
            if (
                isinstance(n, ast.If)
                and isinstance(n.test, ast.Compare)
                and ast.unparse(n.test.left) == "num_experts"
                and isinstance(n.test.ops[0], ast.Gt)
                and isinstance(n.test.comparators[0], ast.Constant)
                and any(isinstance(r, ast.Raise) for b in n.body for r in ast.walk(b))
            ):
                limit, at = n.test.comparators[0].value, n.lineno
            if (
                isinstance(n, ast.Assign)
                and [ast.unparse(t) for t in n.targets] == ["num_redundant_experts"]
                and isinstance(n.value, ast.IfExp)
                and ast.unparse(n.value.body) == "self.eplb_config.num_redundant_experts"
                and ast.unparse(n.value.test).startswith("self.eplb_config.")
                and isinstance(n.value.orelse, ast.Constant)
                and n.value.orelse.value == 0
            ):
                redundant_when = ast.unparse(n.value.test).removeprefix("self.eplb_config.")
        if alg is None or limit is None:
            return None
        if redundant_when is None:
            raise FactsError(f"`{rel}`:{at}: the expert limit counts no `eplb_config.num_redundant_experts` the extractor reads")
        aliases = []
        for n in ast.walk(mod.tree):
            if (
                isinstance(n, ast.If)
                and isinstance(n.test, ast.Attribute)
                and ast.unparse(n.test.value) == "self"
                and any(
                    isinstance(b, ast.Assign)
                    and [ast.unparse(t) for t in b.targets] == ["self.mc2_comm_alg"]
                    and isinstance(b.value, ast.Constant)
                    and b.value.value == alg
                    for b in n.body
                )
            ):
                aliases.append(n.test.attr)
        return {
            "alg": alg,
            "aliases": sorted(set(aliases)),
            "max_experts": limit,
            "redundant_when": redundant_when,
            "source": f"{rel}:{at}",
        }
    return None


def sp_moe(pkg: Package) -> dict | None:
    """How vllm-ascend decides sequence-parallel MoE where `enable_sp()`
    returns vLLM's `parallel_config.use_sequence_parallel_moe` (from
    v0.27.1rc1). `property`: the platform patch that redefines the property
    (`ParallelConfig.use_sequence_parallel_moe = <fn>` in a module the
    package imports), its `backends` and `requires` (facts_sp_moe.py) and
    `source`; `None` where vLLM's own stands. `switch`: `AscendConfig`'s
    steering, an `if` that sets `parallel_config.all2all_backend` to
    `off_backend` unless one of `any_of` holds (`additional_config.<key>`,
    read with `.get("<key>", ...)` or as the field `self.<key>`; `env.<NAME>`,
    `os.getenv(NAME, ...).strip().lower() in env_true`) together with every
    term of `all_of` (the property's own spelling); `source`: `path:line`
    of that `if`. `None` where nothing steers the backend."""
    prop = None
    for rel, mod in pkg.modules.items():
        if "use_sequence_parallel_moe =" not in mod.text:
            continue
        for n in mod.tree.body:
            if not (isinstance(n, ast.Assign) and [ast.unparse(t) for t in n.targets] == ["ParallelConfig.use_sequence_parallel_moe"]):
                continue
            # `= <fn>` (a function decorated `@property`) or `= property(<fn>)`.
            v = n.value
            if isinstance(v, ast.Call) and ast.unparse(v.func) == "property" and len(v.args) == 1:
                v = v.args[0]
            fn = isinstance(v, ast.Name) and next((d for d in mod.tree.body if isinstance(d, ast.FunctionDef) and d.name == v.id), None)
            if not fn:
                raise FactsError(f"`{rel}`:{n.lineno}: the property is `{ast.unparse(n.value)}`, not a function of the module")
            dotted = rel[:-3].replace("/", ".")
            if not any(f"import {dotted}" in m.text or f"from {dotted.rsplit('.', 1)[0]} import {dotted.rsplit('.', 1)[1]}" in m.text for m in pkg.modules.values()):
                continue
            try:
                prop = {**property_terms(fn), "source": f"{rel}:{fn.lineno}"}
            except ValueError as e:
                raise FactsError(f"`{rel}`: {e}") from e
    switch = None
    for rel, mod in pkg.modules.items():
        if not rel.endswith("vllm_ascend/ascend_config.py"):
            continue
        for fn in ast.walk(mod.tree):
            if not isinstance(fn, ast.FunctionDef):
                continue
            for node in ast.walk(fn):
                off = [
                    s.value.value
                    for s in (node.body if isinstance(node, ast.If) else [])
                    if isinstance(s, ast.Assign)
                    and len(s.targets) == 1
                    and ast.unparse(s.targets[0]).endswith("parallel_config.all2all_backend")
                    and isinstance(s.value, ast.Constant)
                ]
                if not off:
                    continue
                defs = {
                    s.targets[0].id: s.value
                    for s in ast.walk(fn)
                    if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                }
                switch = {**_sp_switch(node.test, defs, f"{rel}:{node.lineno}"), "off_backend": off[-1], "source": f"{rel}:{node.lineno}"}
    if prop is None and switch is None:
        return None
    return {"property": prop, "switch": switch}


def _sp_switch(test: ast.expr, defs: dict[str, ast.expr], at: str) -> dict:
    """`any_of`, `all_of` and `env_true` of the `if` that turns SP MoE off
    (`not X`, or `not X and <...>.use_sequence_parallel_moe`): X expanded
    through the function's assignments."""
    terms = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    negated = [t.operand for t in terms if isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not)]
    rest = [t for t in terms if not (isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not))]
    if len(negated) != 1 or any(not ast.unparse(t).endswith(".use_sequence_parallel_moe") for t in rest):
        raise FactsError(f"`{at}`: the backend switch tests `{ast.unparse(test)}`, not `not X [and ...use_sequence_parallel_moe]`")
    out: dict = {"any_of": [], "all_of": [], "env_true": []}

    def name(x: ast.expr, seen: frozenset) -> tuple[ast.expr, frozenset]:
        while isinstance(x, ast.Name) and x.id in defs and x.id not in seen:
            seen = seen | {x.id}
            x = defs[x.id]
        return x, seen

    def leaf(x: ast.expr, seen: frozenset) -> None:
        x, seen = name(x, seen)
        if isinstance(x, ast.BoolOp) and isinstance(x.op, ast.Or):
            for v in x.values:
                leaf(v, seen)
            return
        if isinstance(x, ast.Attribute) and ast.unparse(x.value) == "self":
            out["any_of"].append(f"additional_config.{x.attr}")
            return
        if isinstance(x, ast.Call) and ast.unparse(x.func) == "validate_additional_config_bool" and x.args:
            g = x.args[0]
            if (
                isinstance(g, ast.Call)
                and isinstance(g.func, ast.Attribute)
                and g.func.attr == "get"
                and "additional_config" in ast.unparse(g.func.value)
                and g.args
                and isinstance(g.args[0], ast.Constant)
            ):
                out["any_of"].append(f"additional_config.{g.args[0].value}")
                return
        if (
            isinstance(x, ast.Compare)
            and len(x.ops) == 1
            and isinstance(x.ops[0], ast.In)
            and isinstance(x.comparators[0], ast.Tuple)
            and re.fullmatch(r"os\.getenv\('([A-Z0-9_]+)', '[^']*'\)\.strip\(\)\.lower\(\)", ast.unparse(x.left))
        ):
            env = re.fullmatch(r"os\.getenv\('([A-Z0-9_]+)'.*", ast.unparse(x.left)).group(1)
            out["any_of"].append(f"env.{env}")
            out["env_true"] = sorted({*out["env_true"], *(e.value for e in x.comparators[0].elts)})
            return
        raise FactsError(f"`{at}`: the SP MoE switch reads `{ast.unparse(x)}`, which the extractor does not read")

    want, seen = name(negated[0], frozenset())
    parts = want.values if isinstance(want, ast.BoolOp) and isinstance(want.op, ast.And) else [want]
    for p in parts:
        text = ast.unparse(p)
        m = re.fullmatch(r"\w+\.parallel_config\.(\w+)(?: > (\d+))?", text)
        if m:
            out["all_of"].append(m.group(1) if m.group(2) is None else f"{m.group(1)} > {m.group(2)}")
        else:
            leaf(p, seen)
    out["any_of"] = sorted(set(out["any_of"]))
    out["all_of"] = sorted(out["all_of"])
    return out


def dsa_cp_needs_sp(pkg: Package) -> dict | None:
    """vllm-ascend's refusal of DSA context parallelism without sequence
    parallelism: in `enable_dsa_cp()` (vllm_ascend/utils.py) an `if` that
    tests `not enable_sp()` together with the key's value and raises.
    `source`: `path:line` of that `if`. `None` where no such `if` is (DSA CP
    follows SP alone, or `AscendConfig` decides it)."""
    for rel, mod in pkg.modules.items():
        if not rel.endswith("vllm_ascend/utils.py"):
            continue
        for fn in mod.tree.body:
            if not (isinstance(fn, ast.FunctionDef) and fn.name == "enable_dsa_cp"):
                continue
            for node in ast.walk(fn):
                if not (isinstance(node, ast.If) and isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And)):
                    continue
                negates_sp = any(
                    isinstance(t, ast.UnaryOp)
                    and isinstance(t.op, ast.Not)
                    and isinstance(t.operand, ast.Call)
                    and ast.unparse(t.operand.func) == "enable_sp"
                    for t in node.test.values
                )
                raises = any(isinstance(x, ast.Raise) for b in node.body for x in ast.walk(b))
                if negates_sp and raises:
                    return {"source": f"{rel}:{node.lineno}"}
    return None


def recompute_on_prefill(pkg: Package) -> dict | None:
    """What the platform does with `recompute_scheduler_enable` on a
    PD prefill engine (vllm_ascend/platform.py): under an `if` testing the
    switch, a nested `if` comparing `kv_role == "kv_producer"` that does not
    raise means the switch is `ignored` there (turned off with a warning);
    without it the scheduler `runs` on prefill too. `source`: `path:line` of
    that nested `if`, else of the outer one. `None` without the check."""
    for rel, mod in pkg.modules.items():
        if not rel.endswith("vllm_ascend/platform.py"):
            continue
        for node in ast.walk(mod.tree):
            if not (isinstance(node, ast.If) and ast.unparse(node.test).endswith(".recompute_scheduler_enable")):
                continue
            for inner in ast.walk(node):
                if (
                    inner is not node
                    and isinstance(inner, ast.If)
                    and isinstance(inner.test, ast.Compare)
                    and isinstance(inner.test.ops[0], ast.Eq)
                    and any(isinstance(c, ast.Constant) and c.value == "kv_producer" for c in inner.test.comparators)
                    and not any(isinstance(x, ast.Raise) for b in inner.body for x in ast.walk(b))
                ):
                    return {"prefill": "ignored", "source": f"{rel}:{inner.lineno}"}
            return {"prefill": "runs", "source": f"{rel}:{node.lineno}"}
    return None


def v1_hybrid_kv(pkg: Package) -> dict | None:
    """Whether `MooncakeConnectorV1` moves hybrid KV (DeepSeek-V4's
    compressed and sliding-window caches): an assignment `self.use_hybrid =`
    in vllm_ascend/distributed/kv_transfer/kv_p2p/mooncake_connector.py.
    `source`: `path:line` of the first. `None` without it."""
    for rel, mod in pkg.modules.items():
        if not rel.endswith("vllm_ascend/distributed/kv_transfer/kv_p2p/mooncake_connector.py"):
            continue
        lines = [
            n.lineno
            for n in ast.walk(mod.tree)
            if isinstance(n, ast.Assign) and [ast.unparse(t) for t in n.targets] == ["self.use_hybrid"]
        ]
        if lines:
            return {"source": f"{rel}:{min(lines)}"}
    return None


def _module_str(pkg: Package, name: str) -> str | None:
    """The value of a module-level `name = "..."` of the package, where
    exactly one module defines it."""
    found = {
        n.value.value
        for mod in pkg.modules.values()
        for n in mod.tree.body
        if isinstance(n, ast.Assign)
        and [ast.unparse(t) for t in n.targets] == [name]
        and isinstance(n.value, ast.Constant)
        and isinstance(n.value.value, str)
    }
    return found.pop() if len(found) == 1 else None


def _patched_field(pkg: Package, field: str) -> dict | None:
    """The `typing.Literal[...]` a platform patch (vllm_ascend/patch/platform/)
    sets as vLLM's `CacheConfig` field `field`'s type
    (`CacheConfig.__dataclass_fields__["field"].type = NAME`, NAME a
    module-level Literal of the same module): its `values` and the `source`
    (`path:line`) of NAME's definition."""
    target = f"CacheConfig.__dataclass_fields__[{field!r}].type"
    for rel, mod in pkg.modules.items():
        if "/patch/platform/" not in rel:
            continue
        for n in ast.walk(mod.tree):
            if not (
                isinstance(n, ast.Assign)
                and [ast.unparse(t) for t in n.targets] == [target]
                and isinstance(n.value, ast.Name)
            ):
                continue
            for d in mod.tree.body:
                if (
                    isinstance(d, ast.Assign)
                    and [ast.unparse(t) for t in d.targets] == [n.value.id]
                    and isinstance(d.value, ast.Subscript)
                    and ast.unparse(d.value.value) in ("typing.Literal", "Literal")
                ):
                    elts = d.value.slice.elts if isinstance(d.value.slice, ast.Tuple) else [d.value.slice]
                    if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elts):
                        return {"values": [e.value for e in elts], "source": f"{rel}:{d.lineno}"}
    return None


def _widened_values(pkg: Package, fn: ast.FunctionDef, lookup: ast.Call) -> dict:
    """What the hook appends to the choices of the action `lookup` finds:
    `added`, the values (`None` where one cannot be read: the flag is then
    not judged), and `field`, where the values are those of a `CacheConfig`
    field's Literal a platform patch widens (`for x in
    get_args(CacheConfig.__dataclass_fields__["f"].type):
    action.choices.append(x)`): pydantic then accepts only those, narrower
    than argparse's union with vLLM's own list (`_patched_field`)."""
    parents = {id(c): p for p in ast.walk(fn) for c in ast.iter_child_nodes(p)}
    up = parents.get(id(lookup))
    if not (isinstance(up, ast.Assign) and len(up.targets) == 1 and isinstance(up.targets[0], ast.Name)):
        return {"added": None, "field": None}
    var = up.targets[0].id
    added: list[str] = []
    field = None
    for n in ast.walk(fn):
        if not (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr == "append"
            and ast.unparse(n.func.value) == f"{var}.choices"
            and len(n.args) == 1
        ):
            continue
        arg = n.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            added.append(arg.value)
            continue
        if not isinstance(arg, ast.Name):
            return {"added": None, "field": None}
        loop = parents.get(id(n))
        while loop is not None and not isinstance(loop, ast.For):
            loop = parents.get(id(loop))
        m = None
        if isinstance(loop, ast.For) and ast.unparse(loop.target) == arg.id:
            m = re.fullmatch(r"get_args\(CacheConfig\.__dataclass_fields__\[(['\"])(\w+)\1\]\.type\)", ast.unparse(loop.iter))
        if m is not None:
            field = _patched_field(pkg, m.group(2))
            if field is None:
                return {"added": None, "field": None}
            added += field["values"]
        elif (value := _module_str(pkg, arg.id)) is not None:
            added.append(value)
        else:
            return {"added": None, "field": None}
    return {"added": added or None, "field": field}


def parser_choices_widened(pkg: Package) -> list[dict]:
    """The `vllm serve` flags whose argparse `choices` vllm-ascend's platform
    hook widens (`NPUPlatform.pre_register_and_update` in
    vllm_ascend/platform.py, handed vLLM's parser): each
    `parser._option_string_actions.get("--flag")` it looks up. Their choices
    are the image's, not vLLM's alone, so a value is not judged against
    vLLM's list there. Any other use of the parser in the hook (a call, an
    attribute besides that lookup) fails the generation: it may change what
    the parser accepts."""
    out: list[dict] = []
    for rel, mod in pkg.modules.items():
        if not rel.endswith("vllm_ascend/platform.py"):
            continue
        for cls in mod.tree.body:
            if not isinstance(cls, ast.ClassDef):
                continue
            for fn in cls.body:
                if not (isinstance(fn, ast.FunctionDef) and fn.name == "pre_register_and_update"):
                    continue
                params = [a.arg for a in fn.args.args]
                if "parser" not in params:
                    raise FactsError(f"`{cls.name}.pre_register_and_update` at {rel}:{fn.lineno} takes no `parser`")
                looked_up: set[int] = set()
                for node in ast.walk(fn):
                    if (
                        isinstance(node, ast.Call)
                        and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "get"
                        and ast.unparse(node.func.value) == "parser._option_string_actions"
                        and len(node.args) == 1
                        and isinstance(node.args[0], ast.Constant)
                        and isinstance(node.args[0].value, str)
                        and node.args[0].value.startswith("--")
                    ):
                        out.append({"flag": node.args[0].value[2:], "source": f"{rel}:{node.lineno}", **_widened_values(pkg, fn, node)})
                        looked_up.add(id(node.func.value))
                parents = {id(c): p for p in ast.walk(fn) for c in ast.iter_child_nodes(p)}
                for node in ast.walk(fn):
                    if not (isinstance(node, ast.Name) and node.id == "parser"):
                        continue
                    up = parents.get(id(node))
                    if id(up) in looked_up:
                        continue
                    if isinstance(up, ast.Compare) and ast.unparse(up) in ("parser is not None", "parser is None"):
                        continue
                    if isinstance(up, ast.arguments):
                        continue
                    raise FactsError(
                        f"`{ast.unparse(up) if up is not None else 'parser'}` at {rel}:{node.lineno} in "
                        "`pre_register_and_update`: the hook uses vLLM's parser in a way this reader does not know"
                    )
    return sorted(out, key=lambda d: d["flag"])


# The statements of vllm-ascend's patched `HybridAttentionMambaModelConfig.
# verify_and_update_config` (vllm_ascend/patch/platform/patch_mamba_config.py)
# that size a hybrid model's attention block, as `ast.unparse` writes them.
_HYBRID_BLOCK = {
    "ssm": "ssm_block_page_size, conv_block_page_size = (max(mamba_sizes), min(mamba_sizes))",
    "k_page": "attn_single_token_k_page_size = attn_head_size * attn_num_kv_heads * get_dtype_size(kv_cache_dtype)",
    "block": "attn_block_size = kernel_block_size * cdiv(ssm_block_page_size, kernel_block_size * attn_single_token_k_page_size)",
    "raise": "cache_config.block_size is None or cache_config.block_size < attn_block_size",
}


def hybrid_attn_block(pkg: Package) -> dict | None:
    """How vllm-ascend sizes the attention block of a hybrid (attention +
    Mamba/GDN) model with GQA attention and no sparse index kpool (Qwen3.5),
    when it does so by the one formula pd-dsl computes: `attn_block_size =
    kernel_block_size * cdiv(ssm page, kernel_block_size * per-token K page)`
    with the ssm page the largest Mamba state, the K page `head_size x KV
    heads x dtype size`, and the block raised to it when unset or smaller.
    `kernel_block_size` and the `path:line` of the block's assignment; None
    where any of those statements differs or the block is also assigned
    otherwise on that path. v0.28.0rc1 and v0.29.0rc1 assign it a second
    time only in the branch `if index_kpool is not None:` (sparse
    index-kpool models), the formula in its `else`; v0.30.0rc1 on no longer
    sizes it for other models. pd-dsl-core's tests/hybrid_block_oracle.rs
    holds the result to the patch itself, run from each sdist."""
    for rel, mod in pkg.modules.items():
        if not rel.endswith("patch/platform/patch_mamba_config.py"):
            continue
        for fn in ast.walk(mod.tree):
            if not (isinstance(fn, ast.FunctionDef) and fn.name == "verify_and_update_config"):
                continue
            kernel = None
            line = None
            seen = set()
            # Each `attn_block_size = ...` with the `if index_kpool is not
            # None` branches it sits in ("body" or "orelse").
            blocks: list[tuple[ast.Assign, dict]] = []

            def walk(node: ast.AST, kpool: dict) -> None:
                nonlocal kernel, line
                if isinstance(node, ast.Assign):
                    text = ast.unparse(node)
                    if text.startswith("attn_block_size = "):
                        blocks.append((node, kpool))
                    if (
                        text.startswith("kernel_block_size = ")
                        and isinstance(node.value, ast.Constant)
                        and isinstance(node.value.value, int)
                    ):
                        kernel = node.value.value
                    for key, want in _HYBRID_BLOCK.items():
                        if text == want:
                            seen.add(key)
                            if key == "block":
                                line = node.lineno
                if isinstance(node, ast.If):
                    if ast.unparse(node.test) == _HYBRID_BLOCK["raise"]:
                        seen.add("raise")
                    if ast.unparse(node.test) == "index_kpool is not None":
                        for b in node.body:
                            walk(b, {**kpool, id(node): "body"})
                        for b in node.orelse:
                            walk(b, {**kpool, id(node): "orelse"})
                        walk(node.test, kpool)
                        return
                for child in ast.iter_child_nodes(node):
                    walk(child, kpool)

            for stmt in fn.body:
                walk(stmt, {})
            formula = [k for n, k in blocks if n.lineno == line]
            # Any other assignment sits in a kpool branch whose `else` holds
            # the formula: a GDN model without a kpool never reaches it.
            others_on_kpool_path = all(
                any(k.get(i) == "body" and f == "orelse" for i, f in formula[0].items())
                for n, k in blocks
                if n.lineno != line
            ) if formula else False
            if kernel is not None and line is not None and seen == set(_HYBRID_BLOCK) and others_on_kpool_path:
                return {"kernel_block_size": kernel, "source": f"{rel}:{line}"}
    return None


def hybrid_block_vllm(pkg: Package) -> dict | None:
    """Where vLLM, not vllm-ascend, sizes a hybrid (attention + Mamba/GDN)
    model's attention block: `NPUPlatform.update_block_size_for_backend`
    (vllm_ascend/platform.py) first calls vLLM's
    `super().update_block_size_for_backend(vllm_config)`, whose
    `_align_hybrid_block_size` (vllm/platforms/interface.py) takes the
    smallest of the attention backend's kernel block sizes (the last `return`
    of `get_supported_kernel_block_sizes` in
    vllm_ascend/attention/attention_v1.py, a list of ints) as its alignment.
    `kernel_block_size` and the `path:line` of that call; None where the
    platform does not call vLLM's (up to v0.29.0rc1, where
    `hybrid_attn_block` holds vllm-ascend's own sizing). pd-dsl-core's
    tests/hybrid_kv_oracle.rs holds the block pd-dsl computes from it to
    the released code."""
    call = None
    for rel, mod in pkg.modules.items():
        if rel != "vllm_ascend/platform.py":
            continue
        for cls in ast.walk(mod.tree):
            if not (isinstance(cls, ast.ClassDef) and cls.name == "NPUPlatform"):
                continue
            for fn in cls.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == "update_block_size_for_backend":
                    for stmt in fn.body:
                        if ast.unparse(stmt) == "super().update_block_size_for_backend(vllm_config)":
                            call = f"{rel}:{stmt.lineno}"
    if call is None:
        return None
    kernels = None
    for rel, mod in pkg.modules.items():
        if rel != "vllm_ascend/attention/attention_v1.py":
            continue
        for fn in ast.walk(mod.tree):
            if isinstance(fn, ast.FunctionDef) and fn.name == "get_supported_kernel_block_sizes":
                last = fn.body[-1]
                if isinstance(last, ast.Return) and isinstance(last.value, ast.List):
                    values = [e.value for e in last.value.elts if isinstance(e, ast.Constant)]
                    if values and len(values) == len(last.value.elts) and all(isinstance(v, int) for v in values):
                        kernels = values
    if kernels is None:
        return None
    return {"kernel_block_size": min(kernels), "source": call}


def modelslim_description(pkg: Package) -> dict | None:
    """The file `--quantization <method>` (ModelSlim weights) needs in the
    model directory: `ModelSlimConfig.maybe_update_config`
    (vllm_ascend/quantization/[configs/]modelslim_config.py) looks up
    `MODELSLIM_CONFIG_FILENAME` with `get_model_file` and raises ValueError
    when it is not there. `method`: what `get_name` returns
    (`ASCEND_QUANTIZATION_METHOD` of vllm_ascend/utils.py); `file`: the
    file name; `source`: `path:line` of that `raise`. None where any of
    these is not read so."""
    method = None
    for rel, mod in pkg.modules.items():
        if rel.endswith("vllm_ascend/utils.py"):
            for n in mod.tree.body:
                if (
                    isinstance(n, ast.Assign)
                    and [ast.unparse(t) for t in n.targets] == ["ASCEND_QUANTIZATION_METHOD"]
                    and isinstance(n.value, ast.Constant)
                ):
                    method = n.value.value
    for rel, mod in pkg.modules.items():
        # The package's own config (the 310P one is another device's).
        if rel not in ("vllm_ascend/quantization/modelslim_config.py", "vllm_ascend/quantization/configs/modelslim_config.py"):
            continue
        name = None
        for n in mod.tree.body:
            if (
                isinstance(n, ast.Assign)
                and [ast.unparse(t) for t in n.targets] == ["MODELSLIM_CONFIG_FILENAME"]
                and isinstance(n.value, ast.Constant)
                and isinstance(n.value.value, str)
            ):
                name = n.value.value
        fn = next(
            (n for n in ast.walk(mod.tree) if isinstance(n, ast.FunctionDef) and n.name == "maybe_update_config"),
            None,
        )
        if name is None or fn is None or method is None:
            return None
        looks_up = any(
            isinstance(c, ast.Call)
            and ast.unparse(c.func) == "get_model_file"
            and any(ast.unparse(a) == "MODELSLIM_CONFIG_FILENAME" for a in c.args)
            for c in ast.walk(fn)
        )
        # The raise after the lookup: the last top-level statement of the
        # function body raising ValueError.
        last = fn.body[-1]
        raises = (
            isinstance(last, ast.Raise)
            and isinstance(last.exc, ast.Call)
            and ast.unparse(last.exc.func) == "ValueError"
            # Reached: no unconditional return before it.
            and not any(isinstance(st, ast.Return) for st in fn.body[:-1])
        )
        if looks_up and raises:
            return {"method": method, "file": name, "source": f"{rel}:{last.lineno}"}
        return None
    return None


def kv_store_align(pkg: Package) -> dict | None:
    """vllm-ascend's patch of vLLM's `HybridAttentionMambaModelConfig.
    verify_and_update_config` (vllm_ascend/patch/platform/patch_mamba_config.py)
    puts a hybrid model's Mamba cache in 'align' mode when the engine runs a
    KV store: `_using_kv_store` (the KV connector `connector`, or a
    MultiConnector child of it) and not `--disable-hybrid-kv-cache-manager`
    (`using_kv_store_with_hybrid = not ...disable_hybrid_kv_cache_manager and
    _using_kv_store(...)`), then `if using_kv_store_with_hybrid [and not
    is_extract_hidden_states]: if cache_config.mamba_cache_mode == "none":
    cache_config.mamba_cache_mode = "align"`. `exempt_methods`: the
    speculative methods that skip it (`getattr(spec_config, "method", None)
    == "..."` in the `is_extract_hidden_states` test). `source`: `path:line`
    of the assignment. None without it."""
    for rel, mod in pkg.modules.items():
        if not rel.endswith("patch/platform/patch_mamba_config.py"):
            continue
        connector = None
        for fn in mod.tree.body:
            if isinstance(fn, ast.FunctionDef) and fn.name == "_using_kv_store":
                for c in ast.walk(fn):
                    if (
                        isinstance(c, ast.Compare)
                        and ast.unparse(c.left) == "vllm_config.kv_transfer_config.kv_connector"
                        and isinstance(c.comparators[0], ast.Constant)
                        and c.comparators[0].value != "MultiConnector"
                    ):
                        connector = c.comparators[0].value
        fn = next(
            (n for n in ast.walk(mod.tree) if isinstance(n, ast.FunctionDef) and n.name == "verify_and_update_config"),
            None,
        )
        if connector is None or fn is None:
            return None
        text = ast.unparse(fn)
        if "using_kv_store_with_hybrid = not vllm_config.scheduler_config.disable_hybrid_kv_cache_manager and _using_kv_store(vllm_config)" not in text:
            return None
        exempt: list[str] = []
        for a in ast.walk(fn):
            if isinstance(a, ast.Assign) and [ast.unparse(t) for t in a.targets] == ["is_extract_hidden_states"]:
                for c in ast.walk(a.value):
                    if (
                        isinstance(c, ast.Compare)
                        and ast.unparse(c.left) == "getattr(spec_config, 'method', None)"
                        and isinstance(c.ops[0], ast.Eq)
                        and isinstance(c.comparators[0], ast.Constant)
                    ):
                        exempt.append(c.comparators[0].value)
        for node in ast.walk(fn):
            if not isinstance(node, ast.If):
                continue
            test = ast.unparse(node.test)
            want = "using_kv_store_with_hybrid and (not is_extract_hidden_states)" if exempt else "using_kv_store_with_hybrid"
            if test != want:
                continue
            for inner in node.body:
                if (
                    isinstance(inner, ast.If)
                    and ast.unparse(inner.test) == "cache_config.mamba_cache_mode == 'none'"
                    and len(inner.body) == 1
                    and ast.unparse(inner.body[0]) == "cache_config.mamba_cache_mode = 'align'"
                ):
                    return {"connector": connector, "exempt_methods": exempt, "source": f"{rel}:{inner.body[0].lineno}"}
        return None
    return None
