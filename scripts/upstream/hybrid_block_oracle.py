#!/usr/bin/env python3
"""vllm-ascend's attention block for a hybrid Gated-DeltaNet model, run from
the released source distributions.

    hybrid_block_oracle.py VLLM_ASCEND_SRC VLLM_SRC < cases.json > results.json

Runs, exactly as released:
- vllm-ascend's `verify_and_update_config`
  (`vllm_ascend/patch/platform/patch_mamba_config.py`), the patch that sizes
  a hybrid model's attention block and pads its Mamba page;
- the Qwen3.5 model class's `get_mamba_state_shape_from_config` and
  `get_mamba_state_dtype_from_config` (vLLM
  `vllm/model_executor/models/qwen3_5.py`, taken out of the class by its
  syntax tree), which it asks for the state shapes and dtypes;
- vLLM's `vllm/model_executor/layers/mamba/mamba_utils.py`, which computes
  them;
- vLLM's `cdiv`, `divide`, `STR_DTYPE_TO_TORCH_DTYPE` and
  `get_kv_cache_torch_dtype`.

torch is the dtype-size stand-in of kv_oracle.py; the other vLLM and
vllm-ascend names those files import are stand-ins that fail when called. The
engine config handed to the patch holds what vLLM would at that point:
- `ModelConfig.get_num_kv_heads`: `max(1, num_key_value_heads // TP)`
  (vllm/config/model.py);
- the cache's `mamba_ssm_cache_dtype` set from the checkpoint's
  `mamba_ssm_dtype`, as vLLM's Qwen3.5 config hook does before the platform
  patch runs;
- `MambaModelConfig.verify_and_update_config` (the patch calls it first) a
  no-op: it sets the Mamba cache mode and graph defaults, not the block;
- no KV connector, prefix caching off, the block size unset unless the case
  sets it.

Each case: {"tp", "num_spec", "block_size" (null: unset), "config": the text
config's `linear_num_key_heads`, `linear_num_value_heads`,
`linear_key_head_dim`, `linear_value_head_dim`, `linear_conv_kernel_dim`,
`num_key_value_heads`, `head_dim`, `mamba_ssm_dtype`}.
Each result: {"block_size", "mamba_page_size_padded"}, or {"refused": the
AssertionError's message} where the patch asserts.
"""

from __future__ import annotations

import ast
import importlib.machinery
import json
import sys
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import kv_oracle  # noqa: E402
from kv_oracle import OracleError  # noqa: E402


class _Logger:
    def __getattr__(self, name):
        return lambda *a, **k: None


class _Envs(types.ModuleType):
    """vllm.envs: the one variable the Mamba shapes read, unset."""

    VLLM_SSM_CONV_STATE_LAYOUT = None

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise OracleError(f"the hybrid block code read vllm.envs.{attr}")


class _AscendStubFinder(kv_oracle._StubFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname == "vllm_ascend" or fullname.startswith("vllm_ascend."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None


def _extract(path: Path, names: set[str], ns: dict, cls: str | None = None) -> None:
    """Executes the top-level definitions and assignments of `names` in
    `path` (inside class `cls` when given, without their decorators) into
    `ns`."""
    tree = ast.parse(path.read_text())
    body = tree.body
    if cls is not None:
        found = [n for n in body if isinstance(n, ast.ClassDef) and n.name == cls]
        if not found:
            raise OracleError(f"{path} defines no class {cls}")
        body = found[0].body
    picked = []
    for n in body:
        if isinstance(n, ast.FunctionDef) and n.name in names:
            n.decorator_list = []
            picked.append(n)
        elif isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id in names for t in n.targets):
            picked.append(n)
    got = {n.name if isinstance(n, ast.FunctionDef) else n.targets[0].id for n in picked}
    if got != names:
        raise OracleError(f"{path} no longer defines {sorted(names - got)}")
    exec(compile(ast.Module(body=picked, type_ignores=[]), str(path), "exec"), ns)


def _module(name: str, attrs: dict) -> types.ModuleType:
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m


def _qwen3_5_class(path: Path) -> str:
    """The class of vLLM's qwen3_5.py that defines the state-shape method."""
    for n in ast.parse(path.read_text()).body:
        if isinstance(n, ast.ClassDef) and any(
            isinstance(b, ast.FunctionDef) and b.name == "get_mamba_state_shape_from_config" for b in n.body
        ):
            return n.name
    raise OracleError(f"{path} has no class with get_mamba_state_shape_from_config")


def load(ascend: Path, vllm: Path):
    kv_oracle.stand_ins(vllm)
    torch = sys.modules["torch"]
    # vllm-ascend's own imports (inside the patch's functions) are stand-ins too.
    sys.meta_path.insert(0, _AscendStubFinder())
    # Dtypes newer vLLMs name in STR_DTYPE_TO_TORCH_DTYPE; sizing one the
    # stand-in does not know fails in get_dtype_size.
    torch.__dict__["__getattr__"] = lambda name: kv_oracle._Dtype(name)
    tu = sys.modules["vllm.utils.torch_utils"]
    ns: dict = {"torch": torch, "Any": object}
    _extract(vllm / "vllm/utils/torch_utils.py", {"STR_DTYPE_TO_TORCH_DTYPE", "get_kv_cache_torch_dtype"}, ns)
    tu.STR_DTYPE_TO_TORCH_DTYPE = ns["STR_DTYPE_TO_TORCH_DTYPE"]
    tu.get_kv_cache_torch_dtype = ns["get_kv_cache_torch_dtype"]
    dist: dict = {}
    _extract(vllm / "vllm/distributed/utils.py", {"ensure_divisibility", "divide"}, dist)
    _module("vllm.distributed", {"divide": dist["divide"]})
    envs = _Envs("vllm.envs")
    sys.modules["vllm.envs"] = envs
    _module("vllm.logger", {"logger": _Logger(), "init_logger": lambda name: _Logger()})
    path = vllm / "vllm/model_executor/layers/mamba/mamba_utils.py"
    mu = types.ModuleType("vllm.model_executor.layers.mamba.mamba_utils")
    sys.modules[mu.__name__] = mu
    exec(compile(path.read_text(), str(path), "exec"), mu.__dict__)
    qpath = vllm / "vllm/model_executor/models/qwen3_5.py"
    qns: dict = {
        "MambaStateShapeCalculator": mu.MambaStateShapeCalculator,
        "MambaStateDtypeCalculator": mu.MambaStateDtypeCalculator,
        "torch": torch,
        "VllmConfig": object,
    }
    _extract(
        qpath,
        {"get_mamba_state_shape_from_config", "get_mamba_state_dtype_from_config"},
        qns,
        cls=_qwen3_5_class(qpath),
    )

    class Qwen3_5:
        get_mamba_state_shape_from_config = classmethod(qns["get_mamba_state_shape_from_config"])
        get_mamba_state_dtype_from_config = classmethod(qns["get_mamba_state_dtype_from_config"])

    ppath = ascend / "vllm_ascend/patch/platform/patch_mamba_config.py"
    patch = types.ModuleType("vllm_ascend.patch.platform.patch_mamba_config")
    exec(compile(ppath.read_text(), str(ppath), "exec"), patch.__dict__)

    class MambaModelConfig:
        @classmethod
        def verify_and_update_config(cls, vllm_config):
            return None

    class ModelRegistry:
        @staticmethod
        def resolve_model_cls(architecture, model_config=None):
            return Qwen3_5, architecture

    patch.MambaModelConfig = MambaModelConfig
    patch.ModelRegistry = ModelRegistry
    patch.logger = _Logger()
    fn = patch.__dict__.get("verify_and_update_config")
    if not isinstance(fn, classmethod):
        raise OracleError(f"{ppath} defines no classmethod verify_and_update_config")
    return {"torch": torch, "verify": fn.__func__}


def config(case: dict, torch) -> types.SimpleNamespace:
    c = case["config"]
    text = types.SimpleNamespace(**c)
    tp = case["tp"]
    model = types.SimpleNamespace(
        dtype=torch.bfloat16,
        hf_text_config=text,
        hf_config=text,
        use_mla=False,
        architecture="Qwen3_5MoeForConditionalGeneration",
        max_model_len=32768,
        get_num_kv_heads=lambda parallel: max(1, c["num_key_value_heads"] // parallel.tensor_parallel_size),
        get_head_size=lambda: c["head_dim"],
    )
    cache = types.SimpleNamespace(
        block_size=case["block_size"],
        cache_dtype="auto",
        mamba_page_size_padded=None,
        mamba_cache_mode="none",
        enable_prefix_caching=False,
        mamba_cache_dtype="auto",
        mamba_ssm_cache_dtype=c.get("mamba_ssm_dtype") or "auto",
        mamba_block_size=None,
    )
    spec = types.SimpleNamespace(num_speculative_tokens=case["num_spec"], method="mtp") if case["num_spec"] else None
    return types.SimpleNamespace(
        model_config=model,
        cache_config=cache,
        parallel_config=types.SimpleNamespace(tensor_parallel_size=tp),
        speculative_config=spec,
        scheduler_config=types.SimpleNamespace(disable_hybrid_kv_cache_manager=False),
        kv_transfer_config=None,
    )


def run(case: dict, mods: dict) -> dict:
    cfg = config(case, mods["torch"])
    try:
        mods["verify"](None, cfg)
    except AssertionError as e:
        return {"refused": str(e)}
    return {"block_size": cfg.cache_config.block_size, "mamba_page_size_padded": cfg.cache_config.mamba_page_size_padded}


def main(argv: list[str]) -> int:
    return kv_oracle.cli(argv, __doc__, load, run)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
