#!/usr/bin/env python3
"""vLLM's own KV-cache arithmetic, run from a released vLLM source distribution.

    kv_oracle.py VLLM_SRC < cases.json > results.json

Loads `vllm/v1/kv_cache_interface.py` (the `FullAttentionSpec` and
`MLAAttentionSpec` page sizes and `max_memory_usage_bytes`) and the block
arithmetic of `vllm/v1/core/kv_cache_utils.py` (`get_num_blocks`,
`may_override_num_blocks`) from the sdist unpacked at VLLM_SRC, exactly as
released. torch is replaced by a stand-in that only knows dtype sizes, and the
vLLM modules those files import are stand-ins too: nothing else of them is
used by the code run here, and a stand-in that is called for anything the
arithmetic needs fails loudly.

Each case: {"spec": "full" | "mla", "block_size", "num_kv_heads",
"head_size", "dtype", "num_layers", "available_memory", "max_model_len"}.
Each result: {"page_size_bytes", "max_memory_usage_bytes", "num_blocks",
"num_tokens"}, per layer; `num_tokens = num_blocks x block_size`, what
vLLM logs as "GPU KV cache size" for one uniform group.
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.machinery
import json
import sys
import types
from pathlib import Path

DTYPE_SIZES = {"bfloat16": 2, "float16": 2, "float32": 4, "int8": 1, "uint8": 1, "float8_e4m3fn": 1}


class OracleError(Exception):
    pass


class _Dtype:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


def _torch() -> types.ModuleType:
    torch = types.ModuleType("torch")
    torch.dtype = _Dtype
    for name in DTYPE_SIZES:
        setattr(torch, name, _Dtype(name))
    torch.float = torch.float32
    torch.half = torch.float16
    return torch


def get_dtype_size(dtype: _Dtype) -> int:
    if not isinstance(dtype, _Dtype) or dtype.name not in DTYPE_SIZES:
        raise OracleError(f"unknown dtype {dtype!r}")
    return DTYPE_SIZES[dtype.name]


class _Stub:
    """Any name a loaded file imports but the arithmetic never calls.
    Used as a decorator it returns what it decorates; called otherwise, or
    iterated, it fails."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> "_Stub":
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Stub(f"{self._name}.{attr}")

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and isinstance(args[0], (type, types.FunctionType)):
            return args[0]
        if self._name.endswith("init_logger"):
            return _Stub("logger")
        if self._name.startswith("logger."):
            return None
        # `@Registry.register(...)` style decorator factories.
        if self._name.split(".")[-1].startswith("register"):
            return lambda obj: obj
        raise OracleError(f"the KV arithmetic called the stand-in `{self._name}`")

    def __mro_entries__(self, bases):
        raise OracleError(f"a class derives from the stand-in `{self._name}`")


class _StubModule(types.ModuleType):
    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Stub(f"{self.__name__}.{attr}")


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname == "vllm" or fullname.startswith("vllm."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        mod = _StubModule(spec.name)
        mod.__path__ = []
        return mod

    def exec_module(self, module):
        pass


def stand_ins(src: Path) -> None:
    """The torch stand-in, the stub finder for `vllm.*`, vLLM's own
    `vllm/utils/math_utils.py`, and `vllm.utils.torch_utils` with
    `get_dtype_size` (hybrid_block_oracle.py shares these)."""
    sys.modules["torch"] = _torch()
    sys.meta_path.insert(0, _StubFinder())
    math_utils = types.ModuleType("vllm.utils.math_utils")
    exec(compile((src / "vllm/utils/math_utils.py").read_text(), "vllm/utils/math_utils.py", "exec"), math_utils.__dict__)
    sys.modules["vllm.utils.math_utils"] = math_utils
    torch_utils = _StubModule("vllm.utils.torch_utils")
    torch_utils.get_dtype_size = get_dtype_size
    sys.modules["vllm.utils.torch_utils"] = torch_utils


def load(src: Path) -> dict:
    stand_ins(src)
    path = src / "vllm/v1/kv_cache_interface.py"
    if not path.is_file():
        raise OracleError(f"{path} is missing: not a vLLM source tree")
    iface = types.ModuleType("vllm.v1.kv_cache_interface")
    sys.modules[iface.__name__] = iface
    exec(compile(path.read_text(), "vllm/v1/kv_cache_interface.py", "exec"), iface.__dict__)
    # The two block functions of kv_cache_utils.py, as released, without the
    # rest of that module.
    utils_path = src / "vllm/v1/core/kv_cache_utils.py"
    tree = ast.parse(utils_path.read_text())
    wanted = {"get_num_blocks", "may_override_num_blocks"}
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in wanted]
    if {d.name for d in defs} != wanted:
        raise OracleError(f"{utils_path} no longer defines {sorted(wanted)}")
    utils = {"VllmConfig": object, "int": int, "max": max}
    exec(compile(ast.Module(body=defs, type_ignores=[]), "vllm/v1/core/kv_cache_utils.py", "exec"), utils)
    return {"iface": iface, "utils": utils, "torch": sys.modules["torch"]}


def config(max_model_len: int) -> types.SimpleNamespace:
    return types.SimpleNamespace(
        model_config=types.SimpleNamespace(max_model_len=max_model_len),
        parallel_config=types.SimpleNamespace(decode_context_parallel_size=1, prefill_context_parallel_size=1),
        cache_config=types.SimpleNamespace(num_gpu_blocks_override=None),
    )


def run(case: dict, mods: dict) -> dict:
    iface, utils, torch = mods["iface"], mods["utils"], mods["torch"]
    cls = {"full": iface.FullAttentionSpec, "mla": iface.MLAAttentionSpec}[case["spec"]]
    spec = cls(
        block_size=case["block_size"],
        num_kv_heads=case["num_kv_heads"],
        head_size=case["head_size"],
        dtype=getattr(torch, case["dtype"]),
    )
    cfg = config(case["max_model_len"])
    page = spec.page_size_bytes
    blocks = utils["get_num_blocks"](cfg, case["num_layers"], case["available_memory"], page)
    return {
        "page_size_bytes": page,
        "max_memory_usage_bytes": spec.max_memory_usage_bytes(cfg),
        "num_blocks": blocks,
        "num_tokens": blocks * case["block_size"],
    }


def cli(argv: list[str], doc: str | None, load, run) -> int:
    """The command line every oracle here shares: `load` takes the corpus
    directories named on it (as many as it has parameters), the cases come
    as a JSON list on stdin and their results go as one on stdout; a corpus
    the oracle cannot read exits 1 with why, a wrong argument count 2."""
    name = Path(argv[0]).name
    if len(argv) != 1 + load.__code__.co_argcount:
        print(doc, file=sys.stderr)
        return 2
    for a in argv[1:]:
        if not Path(a).is_dir():
            print(f"{name}: {a} is not a directory: expected an unpacked sdist (corpus.py path)", file=sys.stderr)
            return 1
    try:
        mods = load(*(Path(a) for a in argv[1:]))
        cases = json.load(sys.stdin)
        json.dump([run(c, mods) for c in cases], sys.stdout)
    except OracleError as e:
        print(f"{name}: {e}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str]) -> int:
    return cli(argv, __doc__, load, run)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
