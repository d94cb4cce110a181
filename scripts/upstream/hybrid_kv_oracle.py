#!/usr/bin/env python3
"""vllm-ascend's KV-cache block count for a hybrid Gated-DeltaNet model
(Qwen3.5: full-attention layers + GDN "linear_attention" layers), run from the
released source distributions.

    hybrid_kv_oracle.py VLLM_ASCEND_SRC VLLM_SRC < cases.json > results.json

Extends hybrid_block_oracle.py (whose loading, stand-ins and engine config it
reuses) from the block size to the whole KV-cache plan of one worker. In the
order the engine runs them, these run exactly as released, loaded from the
unpacked sdists (whole files where they load, otherwise the named definitions
taken out of the file by its syntax tree, with the file's own imports):

1. vLLM's `CacheConfig._apply_block_size_default` (vllm/config/cache.py): an
   unset block becomes `CacheConfig.DEFAULT_BLOCK_SIZE` (16), a typed one is
   marked user-specified.
2. vllm-ascend's `verify_and_update_config`
   (vllm_ascend/patch/platform/patch_mamba_config.py) with vLLM's Qwen3.5
   state shapes and dtypes, exactly as hybrid_block_oracle.py runs it, except
   that the `MambaModelConfig.verify_and_update_config` it calls first is
   vLLM's (vllm/model_executor/models/config.py), run as released instead of
   hybrid_block_oracle.py's no-op: it decides the Mamba cache mode ("none"
   without prefix caching; with it "all" for a model that supports Mamba
   prefix caching, else "align", which asserts chunked prefill) and, where
   unset, the Mamba block. `ModelConfig.supports_mamba_prefix_caching` is the
   registry's `getattr(model_cls, "supports_mamba_prefix_caching", False)`,
   read off the class hierarchy of Qwen3_5MoeForConditionalGeneration in the
   sdist (`_class_mro`, C3 over the class definitions followed through the
   files' imports): False in every release here, Qwen3.5 not deriving from
   `SupportsMambaPrefixCaching`. The patch then sets the Mamba block to the
   attention block in align mode with prefix caching, else max_model_len
   (from 0.30 vLLM's `_align_hybrid_block_size`, step 3, sets it again to
   the block it sizes, in align mode).
3. The platform's `update_block_size_for_backend`: vllm-ascend's
   `NPUPlatform.update_block_size_for_backend` (and, from 0.30, its
   `_align_hybrid_block_size`) from vllm_ascend/platform.py, over vLLM's
   `Platform.update_block_size_for_backend` / `_align_hybrid_block_size` /
   `_get_indexer_block_alignment` (vllm/platforms/interface.py), with the
   Ascend attention backend's `get_name` / `get_supported_kernel_block_sizes`
   (vllm_ascend/attention/attention_v1.py, with vllm_ascend/utils.py's
   `is_minimax_m3_fp8_kv_cache`) on vLLM's `AttentionBackend`
   (`get_preferred_block_size`, `supports_block_size`, `customize_spec`,
   `supported_kv_cache_layouts`, `is_ssm`; vllm/v1/attention/backend.py, with
   `MultipleOf` and `AttentionType`). Up to 0.29 the Ascend override never
   calls vLLM's; from 0.30 it does, and vLLM's `_align_hybrid_block_size`
   sizes the hybrid block and pads the Mamba page.
4. The per-layer specs as vllm-ascend's model runner asks for them: vLLM's
   `Attention.get_kv_cache_spec`
   (vllm/model_executor/layers/attention/attention.py) for every
   full-attention layer, then `MambaBase.get_kv_cache_spec`
   (vllm/model_executor/layers/mamba/abstract.py) for every GDN layer, with
   the GDN layer's `mamba_type` property (vllm/model_executor/layers/mamba/
   gdn/base.py, gdn_linear_attn.py or models/qwen3_next.py) and, where they
   exist, `VllmConfig.num_speculative_tokens` (vllm/config/vllm.py). The spec
   classes are vllm/v1/kv_cache_interface.py, loaded whole (with
   vllm/v1/kv_cache_spec_registry.py, vllm/v1/kv_cache_layout.py,
   vllm/v1/attention/backends/registry.py), after vllm-ascend's
   vllm_ascend/patch/platform/patch_kv_cache_interface.py where the release's
   platform imports it (up to 0.22.1rc1; it replaces the MLA spec classes
   only).
5. Where the release has them (0.29 on), the engine core's layout choice:
   vLLM's `get_supported_kv_cache_layouts` / `resolve_kv_cache_layout`
   (vllm/v1/attention/backends/utils.py, with
   vllm/distributed/kv_transfer/kv_connector/utils.py's
   `get_kv_connector_cache_layout`) and `CacheConfig.
   get_resolved_kv_cache_layout`.
6. vLLM's vllm/v1/core/kv_cache_utils.py, loaded whole, with vllm-ascend's
   vllm_ascend/patch/platform/patch_kv_cache_utils.py run on top where the
   release's platform imports it (0.20.2rc1 on): `get_kv_cache_configs(
   vllm_config, [specs], [available_memory])`, i.e. the spec registration
   (`register_all_kvcache_specs` of vllm/v1/core/single_type_kv_cache_manager
   .py; the managers are stand-ins), the grouping, the page unification or
   packing, `_check_enough_kv_cache_memory` and the block count as released.
   What the patch imports from vllm-ascend and calls for any model is loaded
   from the sdist: `is_glm5_next_cache_spec`, `_get_glm5_next_cache_layout`,
   `is_deepseek_v41_cache`, `uses_turboquant_groups`,
   `TURBOQUANT_CACHE_DTYPE`, `is_prefix_cacheable`; `vllm_version_is` is a
   stand-in comparing with the paired vLLM's PKG-INFO version (what
   vllm_ascend/utils.py compares `vllm.__version__` with).
7. After the plan, the engine core's `VllmConfig.validate_block_size`
   (vllm/config/vllm.py), run as released on the cache's block set to the
   smallest group block as vllm/v1/engine/core.py does (restated): in Mamba
   align mode vLLM up to 0.26 asserts `block_size <= max_num_batched_tokens`
   (and 0.22-0.24 that the V2 model runner is off); without prefix caching
   it checks nothing here (DCP 1).

Restated, not run: the model runner's padding of every attention spec up to
the Mamba page (vllm_ascend/worker/model_runner_v1.py
`NPUModelRunner.get_kv_cache_spec`, the same statements in every release, at
the line `RUNNER_PADDING` gives; the runner imports torch throughout). The
oracle checks at load time that the release's runner still has them there.

Stand-ins: torch (kv_oracle.py's dtype sizes); every vLLM / vllm-ascend name
the code above imports but never needs (kv_oracle.py's `_Stub`s, which here
fail when called, tested for truth, compared or iterated); the engine config
(`config`: every attribute read is set there, reading any other fails, also
through getattr with a default); each layer object (the attributes its
`get_kv_cache_spec` reads, as vLLM's layer constructors set them:
`num_kv_heads = max(1, num_key_value_heads // TP)`, `head_size = head_dim`,
the model dtype; the GDN state shapes and dtypes from the model class's
`get_mamba_state_shape_from_config` / `get_mamba_state_dtype_from_config`,
which pass the layer's own arguments to the same `MambaStateShapeCalculator`
/ `MambaStateDtypeCalculator` as vllm-ascend's
`AscendGatedDeltaNetAttention.get_state_shape` and vLLM's GDN layer); the
model's attention layers (`_find_non_ssm_backend` returns the Ascend
attention backend; the GDN layers' backend declares no KV-cache layout, as
neither vllm-ascend's nor vLLM's GDN backend does); `set_current_vllm_config`
/ `get_current_vllm_config_or_none`.
Not run, because it leaves a hybrid model's plan alone: vllm-ascend's
`refresh_block_size` (vllm_ascend/utils.py; returns early for hybrid
models). Not applied, because they act on the scheduler, not on the plan:
patch_kv_cache_coordinator.py, patch_mamba_manager.py. Settings: one
worker, TP as given, no KV connector, prefix caching as the case says (no
--mamba-cache-mode, so the mode starts "none"; no --mamba-block-size),
chunked prefill on, no long-prefill threshold, chunked MM input on, hybrid
KV cache manager on, no num_gpu_blocks_override, DCP = PCP = 1, KV cache
dtype "auto" (the model's bfloat16), not a 310P, VLLM_KV_CACHE_LAYOUT and
VLLM_USE_V2_MODEL_RUNNER unset.

Each case: hybrid_block_oracle.py's ({"tp", "num_spec", "block_size" (null:
unset), "config"}) plus "full_layers" (attention layers with a KV cache, the
MTP draft's included), "mamba_layers" (GDN layers), "available_memory" (bytes
for the worker's KV cache), "max_model_len", "kv_dtype" ("bfloat16"), and
optionally "draft_layers" (how many of the full layers are the MTP draft's,
named as the draft's; default 0), "prefix_caching" (--enable-prefix-caching;
default false) and "max_num_batched_tokens" (the scheduler's batch budget;
default 8192, read only by step 7).
Each result: {"block_size" (the cache config's, after steps 1-3),
"mamba_block_size", "mamba_page_size_padded", "mamba_cache_mode",
"num_speculative_blocks" (the MambaSpec's), "mamba_raw_page_size_bytes" (the
Mamba page before padding), "kv_cache_layout" (0.29 on), "attn_block_size"
and "attn_page_size_bytes" (an attention layer's spec as grouped, padded),
"mamba_page_size_bytes" (a GDN layer's, padded), "mamba_spec_block_size"
(its block), "mamba_max_memory_usage_bytes" (its
`MambaSpec.max_memory_usage_bytes`), "mamba_max_num_blocks_per_req" (vLLM
0.26 on: its block-table row for max_model_len), "groups" ([spec class,
layers] per KV cache group), "group_size" (layers of the largest group),
"num_blocks", "max_memory_usage_bytes" (what `_check_enough_kv_cache_memory`
found one max_model_len request needs), "check_available_bytes" (what it
compared that with), "enough": true}; or {"refused": message} where upstream
raises: the patch's or vLLM's AssertionError, also step 7's (with no other
field), or the memory check's ValueError ("To serve at least one request
...", "No available memory ...", with the fields decided before and
"enough": false).
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import importlib
import importlib.abc
import importlib.machinery
import json
import re
import sys
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hybrid_block_oracle  # noqa: E402
import kv_oracle  # noqa: E402

OracleError = kv_oracle.OracleError
_Stub = kv_oracle._Stub

# vLLM modules loaded whole from the sdist when the release has them.
WHOLE = (
    "vllm.utils.mem_constants",
    "vllm.v1.kv_cache_layout",
    "vllm.v1.attention.backends.registry",
    "vllm.v1.kv_cache_spec_registry",
    "vllm.v1.kv_cache_interface",
    "vllm.v1.hisparse.layout",
    "vllm.v1.core.kv_cache_utils",
)

# The model runner's padding step (restated in `pad_attention_specs`): where
# each release has it, in vllm_ascend/worker/model_runner_v1.py
# (`NPUModelRunner.get_kv_cache_spec`), the line of `if len(mamba_layers) > 0:`.
RUNNER_PADDING = {
    "0.18.0": 3300,
    "0.19.1rc1": 3715,
    "0.20.2rc1": 4326,
    "0.21.0rc1": 4714,
    "0.22.1rc1": 4754,
    "0.23.0": 5025,
    "0.23.0rc1": 4968,
    "0.24.0rc1": 5026,
    "0.25.1rc1": 4611,
    "0.26.0rc1": 4930,
    "0.27.1rc1": 5348,
    "0.28.0rc1": 5929,
    "0.29.0rc1": 6076,
    "0.30.0rc1": 6334,
    "0.30.0rc2": 6334,
}

# The statements of that step, whitespace and trailing comments dropped, as
# every release above has them.
_RUNNER_PADDING_TEXT = [
    "if len(mamba_layers) > 0:",
    "mamba_page_size_padded = 0",
    "for layer_name, mamba_module in mamba_layers.items():",
    "if spec := mamba_module.get_kv_cache_spec(self.vllm_config):",
    "kv_cache_spec[layer_name] = spec",
    "mamba_page_size_padded = spec.page_size_bytes",
    "for layer_name in attn_layer_names:",
    "if kv_cache_spec[layer_name].page_size_bytes < mamba_page_size_padded:",
    'object.__setattr__(kv_cache_spec[layer_name], "page_size_padded", mamba_page_size_padded)',
]


# --------------------------------------------------------------------------
# Loading pieces of the sdists.


class _WholeFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Loads the modules of WHOLE from the vLLM sdist, whole."""

    def __init__(self, src: Path) -> None:
        self.src = src

    def _path(self, fullname: str) -> Path | None:
        if fullname not in WHOLE:
            return None
        p = self.src / (fullname.replace(".", "/") + ".py")
        return p if p.is_file() else None

    def find_spec(self, fullname, path, target=None):
        p = self._path(fullname)
        if p is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, origin=str(p))

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        p = Path(module.__spec__.origin)
        module.__file__ = str(p)
        exec(compile(p.read_text(), str(p), "exec"), module.__dict__)


def _import(name: str):
    """The module, real or stand-in; a third-party one that is not installed
    (torch_npu, numpy, ...) or a submodule of the torch stand-in is a
    stand-in."""
    if name.split(".")[0] in ("vllm", "vllm_ascend"):
        # hybrid_block_oracle.py's stand-in modules (vllm.distributed, ...)
        # are not packages; their submodules are stand-ins too.
        parts = name.split(".")
        for i in range(1, len(parts)):
            parent = sys.modules.get(".".join(parts[:i]))
            if parent is not None and not hasattr(parent, "__path__"):
                parent.__path__ = []
        return importlib.import_module(name)
    if name.split(".")[0] == "torch" and name != "torch":
        return _Stub(name)
    try:
        return importlib.import_module(name)
    except ImportError:
        return _Stub(name)


def _resolve(modname: str, level: int, package: str) -> str:
    if level == 0:
        return modname
    parts = package.split(".")
    base = ".".join(parts[: len(parts) - level + 1])
    return f"{base}.{modname}" if modname else base


def _bind_imports(tree: ast.Module, package: str, ns: dict) -> None:
    """Binds the names a file imports at its top level as this stand-in world
    resolves them: loaded modules are real, the rest stand-ins."""
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    ns[a.asname] = _import(a.name)
                else:
                    _import(a.name)
                    ns[a.name.split(".")[0]] = _import(a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node.module or "", node.level, package)
            mod = _import(base)
            for a in node.names:
                if a.name == "*":
                    continue
                if isinstance(mod, types.ModuleType) and a.name in mod.__dict__:
                    val = mod.__dict__[a.name]
                elif isinstance(mod, types.ModuleType) and (m := sys.modules.get(f"{base}.{a.name}")):
                    val = m
                else:
                    val = getattr(mod, a.name, None)
                    if val is None:
                        val = _Stub(f"{base}.{a.name}")
                ns[a.asname or a.name] = val


def _top_names(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


class Source:
    """One file of an sdist: its imports bound, then only the definitions
    asked for executed; the file's other top-level names that those use are
    stand-ins."""

    def __init__(self, root: Path, rel: str, modname: str) -> None:
        self.path = root / rel
        if not self.path.is_file():
            raise OracleError(f"{self.path} is missing")
        self.tree = ast.parse(self.path.read_text(), str(self.path))
        package = modname if rel.endswith("__init__.py") else modname.rpartition(".")[0]
        self.ns: dict = {"__name__": modname, "__file__": str(self.path)}
        _bind_imports(self.tree, package, self.ns)
        for node in self.tree.body:
            for name in _top_names(node):
                stand_in = hybrid_block_oracle._Logger() if name == "logger" else _Stub(f"{modname}.{name}")
                self.ns.setdefault(name, stand_in)

    def defines(self, name: str, cls: str | None = None) -> bool:
        body = self._class(cls).body if cls else self.tree.body
        return any(name in _top_names(n) for n in body)

    def _class(self, cls: str) -> ast.ClassDef:
        for n in self.tree.body:
            if isinstance(n, ast.ClassDef) and n.name == cls:
                return n
        raise OracleError(f"{self.path} defines no class {cls}")

    def run(self, names: list[str]):
        """Executes the top-level definitions `names` (decorators kept)."""
        picked = [n for n in self.tree.body if set(_top_names(n)) & set(names)]
        got = {x for n in picked for x in _top_names(n)}
        if not set(names) <= got:
            raise OracleError(f"{self.path} no longer defines {sorted(set(names) - got)}")
        exec(compile(ast.Module(body=picked, type_ignores=[]), str(self.path), "exec"), self.ns)
        # Other files import them from the (stand-in) module.
        mod = _module(self.ns["__name__"])
        for n in names:
            setattr(mod, n, self.ns[n])
        return [self.ns[n] for n in names]

    def cls(self, cls: str, members: list[str], bases: tuple = (), optional: tuple = ()):
        """Class `cls` with only `members` (methods keep their classmethod /
        staticmethod / property decorators) on `bases`."""
        node = self._class(cls)
        keep = []
        for n in node.body:
            names = _top_names(n)
            if not set(names) & (set(members) | set(optional)):
                continue
            if isinstance(n, ast.FunctionDef):
                n.decorator_list = [
                    d
                    for d in n.decorator_list
                    if isinstance(d, ast.Name) and d.id in ("classmethod", "staticmethod", "property")
                ]
            keep.append(n)
        got = {x for n in keep for x in _top_names(n)}
        if not set(members) <= got:
            raise OracleError(f"{self.path} class {cls} no longer defines {sorted(set(members) - got)}")
        base_names = []
        for i, b in enumerate(bases):
            self.ns[f"__oracle_base{i}"] = b
            base_names.append(ast.Name(id=f"__oracle_base{i}", ctx=ast.Load()))
        new = ast.ClassDef(name=cls, bases=base_names, keywords=[], body=keep or [ast.Pass()], decorator_list=[])
        mod = ast.fix_missing_locations(ast.Module(body=[new], type_ignores=[]))
        exec(compile(mod, str(self.path), "exec"), self.ns)
        return self.ns[cls]


def _module(name: str) -> types.ModuleType:
    """The (stand-in) module `name`, imported so its parents know it."""
    mod = importlib.import_module(name)
    if not isinstance(mod, types.ModuleType):
        raise OracleError(f"{name} is not a module")
    return mod


# --------------------------------------------------------------------------
# The engine config stand-in.


class _Strict:
    """A config object holding only what was set; reading anything else
    fails, also through getattr(x, name, default) and hasattr."""

    def __init__(self, where: str, **attrs) -> None:
        object.__setattr__(self, "_where", where)
        self.__dict__.update(attrs)

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise OracleError(f"upstream read {self._where}.{attr}, which the stand-in config does not set")


_current_config: list = [None]


@contextlib.contextmanager
def _set_current_vllm_config(vllm_config, *args, **kwargs):
    """Stand-in for vllm.config.vllm.set_current_vllm_config."""
    _current_config.append(vllm_config)
    try:
        yield
    finally:
        _current_config.pop()


def _get_current_vllm_config_or_none():
    return _current_config[-1]


def _sdist_version(root: Path) -> str:
    for line in (root / "PKG-INFO").read_text().splitlines():
        if line.startswith("Version:"):
            return line.split(":", 1)[1].strip().split("+")[0]
    raise OracleError(f"{root}/PKG-INFO has no Version")


def _platform_patches(ascend: Path) -> set[str]:
    """The patches vllm_ascend/patch/platform/__init__.py imports
    unconditionally, plus patch_mamba_config (imported unless on 310P)."""
    p = ascend / "vllm_ascend/patch/platform/__init__.py"
    out = set()
    for node in ast.parse(p.read_text()).body:
        if isinstance(node, ast.Import):
            out.update(a.name.rsplit(".", 1)[1] for a in node.names if a.name.startswith("vllm_ascend.patch.platform."))
    return out


def _check_runner_padding(ascend: Path, release: str | None) -> None:
    """The release's model runner still pads the attention specs as
    `pad_attention_specs` restates."""
    path = ascend / "vllm_ascend/worker/model_runner_v1.py"
    lines = path.read_text().splitlines()
    norm = [re.sub(r"\s+#.*$", "", ln).strip() for ln in lines]
    for i, ln in enumerate(norm):
        if ln == _RUNNER_PADDING_TEXT[0]:
            block = [x for x in norm[i : i + 12] if x][: len(_RUNNER_PADDING_TEXT)]
            if block == _RUNNER_PADDING_TEXT:
                if release in RUNNER_PADDING and RUNNER_PADDING[release] != i + 1:
                    raise OracleError(f"{path}: the padding step moved to line {i + 1}")
                return
    raise OracleError(f"{path} no longer pads the attention specs as the oracle restates")


def pad_attention_specs(kv_cache_spec: dict, attn_layer_names: list, mamba_layers: dict, vllm_config) -> None:
    """Restated from vllm_ascend/worker/model_runner_v1.py
    `NPUModelRunner.get_kv_cache_spec` (the line of RUNNER_PADDING for the
    release): the Mamba specs are built after every attention spec, and each
    attention spec whose page is smaller than the (last) Mamba page is padded
    up to it. `mamba_layers` maps a layer name to its `get_kv_cache_spec`."""
    if len(mamba_layers) > 0:
        mamba_page_size_padded = 0
        for layer_name, get_spec in mamba_layers.items():
            if spec := get_spec(vllm_config):
                kv_cache_spec[layer_name] = spec
                mamba_page_size_padded = spec.page_size_bytes
        for layer_name in attn_layer_names:
            if kv_cache_spec[layer_name].page_size_bytes < mamba_page_size_padded:
                object.__setattr__(kv_cache_spec[layer_name], "page_size_padded", mamba_page_size_padded)


# --------------------------------------------------------------------------


def _ascend_helpers(ascend: Path, vllm_version: str) -> None:
    """What vllm_ascend/patch/platform/patch_kv_cache_utils.py imports from
    vllm-ascend and calls on a hybrid model's path, loaded from the sdist
    onto the stand-in modules; `vllm_version_is` compares with the paired
    vLLM's version (vllm_ascend/utils.py compares with vllm.__version__)."""
    _module("vllm_ascend.utils").vllm_version_is = lambda target: target == vllm_version
    wanted = {
        "vllm_ascend/quantization/methods/kv_cache/turboquant/__init__.py": ["TURBOQUANT_CACHE_DTYPE"],
        "vllm_ascend/models/glm5next/kv_cache.py": ["is_glm5_next_cache_spec"],
        "vllm_ascend/models/glm5next/cache_config.py": ["_get_glm5_next_cache_layout"],
        "vllm_ascend/models/deepseek_v41/cache_config.py": ["is_deepseek_v41_cache"],
        "vllm_ascend/quantization/methods/kv_cache/turboquant/cache.py": ["uses_turboquant_groups"],
        "vllm_ascend/core/kv_cache_interface.py": ["is_prefix_cacheable"],
    }
    for rel, names in wanted.items():
        if not (ascend / rel).is_file():
            continue
        modname = rel[:-3].replace("/", ".").removesuffix(".__init__")
        src = Source(ascend, rel, modname)
        src.run([n for n in names if src.defines(n)])


def _strict_stubs() -> None:
    """kv_oracle.py's stand-ins fail when called; in this process they also
    fail when the code takes their truth value, compares or iterates them, so
    none of them decides a branch silently."""

    def fail(what: str):
        def raise_(self, *args):
            raise OracleError(f"the KV plan {what} the stand-in `{self._name}`")

        return raise_

    _Stub.__bool__ = fail("took the truth value of")
    _Stub.__eq__ = fail("compared")
    _Stub.__hash__ = object.__hash__
    _Stub.__iter__ = fail("iterated")


def load(ascend: Path, vllm: Path) -> dict:
    _strict_stubs()
    release = None
    m = re.search(r"vllm-ascend-(.+)$", ascend.resolve().name)
    if m:
        release = m.group(1)
    _check_runner_padding(ascend, release)
    base = hybrid_block_oracle.load(ascend, vllm)
    torch = base["torch"]
    verify = base["verify"]
    registry = verify.__globals__["ModelRegistry"]
    model_cls, _ = registry.resolve_model_cls("Qwen3_5MoeForConditionalGeneration")
    vllm_version = _sdist_version(vllm)

    sys.meta_path.insert(0, _WholeFinder(vllm))
    # `import vllm.envs as envs` takes the attribute of the `vllm` stand-in,
    # a stub on which any comparison is silently False: give every module
    # hybrid_block_oracle.py loaded, and every later one, its vllm.envs.
    _module("vllm").envs = sys.modules["vllm.envs"]
    mu = sys.modules["vllm.model_executor.layers.mamba.mamba_utils"]
    if isinstance(mu.__dict__.get("envs"), _Stub):
        mu.envs = sys.modules["vllm.envs"]
    # Read by vLLM's resolve_kv_cache_layout: unset.
    sys.modules["vllm.envs"].VLLM_KV_CACHE_LAYOUT = None
    # Read by VllmConfig.validate_block_size in Mamba align mode (vLLM
    # 0.22-0.24): unset, the V1 model runner.
    sys.modules["vllm.envs"].VLLM_USE_V2_MODEL_RUNNER = None
    _module("vllm.model_executor.models").ModelRegistry = registry
    for name in ("vllm.config", "vllm.config.vllm"):
        mod = _module(name)
        mod.set_current_vllm_config = _set_current_vllm_config
        mod.get_current_vllm_config_or_none = _get_current_vllm_config_or_none

    mem = Source(vllm, "vllm/utils/mem_utils.py", "vllm.utils.mem_utils")
    mem.run(["format_gib"])

    # vllm/config/cache.py: the CacheConfig members the plan reads.
    cache_src = Source(vllm, "vllm/config/cache.py", "vllm.config.cache")
    if cache_src.defines("_layout_from_name"):
        cache_src.run(["_LAYOUT_COMPAT_ALIASES", "_layout_from_name"])
    CacheConfig = cache_src.cls(
        "CacheConfig", ["DEFAULT_BLOCK_SIZE"], optional=("_apply_block_size_default", "get_resolved_kv_cache_layout")
    )
    _module("vllm.config.cache").CacheConfig = CacheConfig

    # vllm/config/vllm.py and speculative.py: the properties and methods the
    # plan calls on the engine config.
    vcfg_src = Source(vllm, "vllm/config/vllm.py", "vllm.config.vllm")
    VllmConfig = vcfg_src.cls("VllmConfig", [], optional=("num_speculative_tokens", "validate_block_size"))
    spec_src = Source(vllm, "vllm/config/speculative.py", "vllm.config.speculative")
    SpeculativeConfig = spec_src.cls(
        "SpeculativeConfig", [], optional=("use_multi_module_mtp", "use_eagle", "use_eagle_block_drop")
    )

    iface = importlib.import_module("vllm.v1.kv_cache_interface")
    patches = _platform_patches(ascend)
    if "patch_kv_cache_interface" in patches:
        importlib.import_module("vllm_ascend.patch.platform")
        _exec_ascend(ascend, "vllm_ascend/patch/platform/patch_kv_cache_interface.py")

    # vllm/v1/core/single_type_kv_cache_manager.py: the spec registration
    # (the managers themselves are stand-ins).
    stm = Source(vllm, "vllm/v1/core/single_type_kv_cache_manager.py", "vllm.v1.core.single_type_kv_cache_manager")
    if stm.defines("register_all_kvcache_specs"):
        stm.run(["register_all_kvcache_specs"])

    utils = importlib.import_module("vllm.v1.core.kv_cache_utils")
    if "patch_kv_cache_utils" in patches:
        _ascend_helpers(ascend, vllm_version)
        _exec_ascend(ascend, "vllm_ascend/patch/platform/patch_kv_cache_utils.py")

    # The attention backends.
    backend_src = Source(vllm, "vllm/v1/attention/backend.py", "vllm.v1.attention.backend")
    backend_mod = _module("vllm.v1.attention.backend")
    backend_src.run([n for n in ("AttentionType", "MultipleOf") if backend_src.defines(n)])
    AttentionBackend = backend_src.cls(
        "AttentionBackend",
        [],
        optional=(
            "get_supported_kernel_block_sizes",
            "get_preferred_block_size",
            "supports_block_size",
            "customize_spec",
            "supported_kv_cache_layouts",
            "is_ssm",
            "is_mla",
        ),
    )
    ascend_utils = Source(ascend, "vllm_ascend/utils.py", "vllm_ascend.utils")
    ascend_utils.run(
        [n for n in ("MINIMAX_M3_FP8_KV_CACHE_BLOCK_SIZE", "is_minimax_m3_fp8_kv_cache") if ascend_utils.defines(n)]
    )
    attn_v1 = Source(ascend, "vllm_ascend/attention/attention_v1.py", "vllm_ascend.attention.attention_v1")
    AscendAttentionBackend = attn_v1.cls(
        "AscendAttentionBackend", ["get_name", "get_supported_kernel_block_sizes"], bases=(AttentionBackend,)
    )

    class GDNBackend(AttentionBackend):
        """Stand-in for the GDN layers' backend (vllm-ascend's
        AscendGDNFusedAttentionBackend): it declares no KV-cache layout."""

        @classmethod
        def is_ssm(cls) -> bool:
            return True

    # The platform: vLLM's Platform methods, the model's layers (stand-in),
    # vllm-ascend's NPUPlatform methods.
    plat_src = Source(vllm, "vllm/platforms/interface.py", "vllm.platforms.interface")
    VllmPlatform = plat_src.cls(
        "Platform",
        [],
        optional=(
            "update_block_size_for_backend",
            "_align_hybrid_block_size",
            "_get_indexer_block_alignment",
            "_align_heterogeneous_kv_block_size",
        ),
    )

    class ModelPlatform(VllmPlatform):
        @classmethod
        def _find_non_ssm_backend(cls, vllm_config):
            """Stand-in: the first non-SSM attention layer of Qwen3.5 runs the
            Ascend attention backend."""
            return AscendAttentionBackend

    npu_src = Source(ascend, "vllm_ascend/platform.py", "vllm_ascend.platform")
    NPUPlatform = npu_src.cls(
        "NPUPlatform", ["update_block_size_for_backend"], bases=(ModelPlatform,), optional=("_align_hybrid_block_size",)
    )

    # The layers' spec builders.
    rel = "vllm/model_executor/layers/attention/attention.py"
    Attention = Source(vllm, rel, rel[:-3].replace("/", ".")).cls("Attention", ["get_kv_cache_spec"])
    rel = "vllm/model_executor/layers/mamba/abstract.py"
    MambaBase = Source(vllm, rel, rel[:-3].replace("/", ".")).cls("MambaBase", ["get_kv_cache_spec"])

    # vLLM's MambaModelConfig.verify_and_update_config, which the patch calls
    # first: run as released (it decides the Mamba cache mode), in place of
    # hybrid_block_oracle.py's no-op.
    rel = "vllm/model_executor/models/config.py"
    mcfg = Source(vllm, rel, rel[:-3].replace("/", "."))
    verify.__globals__["MambaModelConfig"] = mcfg.cls("MambaModelConfig", ["verify_and_update_config"])

    layout = None
    bu_path = vllm / "vllm/v1/attention/backends/utils.py"
    kc_rel = "vllm/distributed/kv_transfer/kv_connector/utils.py"
    if (vllm / kc_rel).is_file():
        kc = Source(vllm, kc_rel, kc_rel[:-3].replace("/", "."))
        if kc.defines("get_kv_connector_cache_layout"):
            kc.run(["get_kv_connector_cache_layout"])
    if bu_path.is_file():
        bu = Source(vllm, "vllm/v1/attention/backends/utils.py", "vllm.v1.attention.backends.utils")
        names = [
            "_DEFAULT_LAYOUT_PREFERENCE",
            "_layout_names",
            "get_supported_kv_cache_layouts",
            "resolve_kv_cache_layout",
        ]
        if all(bu.defines(n) for n in names):
            bu.run(names)
            layout = bu.ns

    return {
        "torch": torch,
        "iface": iface,
        "utils": utils,
        "verify": verify,
        "model_cls": model_cls,
        "CacheConfig": CacheConfig,
        "VllmConfig": VllmConfig,
        "SpeculativeConfig": SpeculativeConfig,
        "platform": NPUPlatform,
        "attention_backend": AscendAttentionBackend,
        "gdn_backend": GDNBackend,
        "Attention": Attention,
        "MambaBase": MambaBase,
        "attention_type": backend_mod.AttentionType,
        "mamba_type": _gdn_mamba_type(vllm),
        "supports_mamba_prefix_caching": supports_mamba_prefix_caching(vllm, QWEN35_MODULE, QWEN35_ARCH),
        "layout": layout,
        "vllm_version": vllm_version,
    }


def _exec_ascend(ascend: Path, rel: str) -> types.ModuleType:
    """Runs a vllm-ascend patch file whole, as the platform imports it."""
    name = rel[:-3].replace("/", ".")
    path = ascend / rel
    mod = types.ModuleType(name)
    mod.__file__ = str(path)
    sys.modules[name] = mod
    exec(compile(path.read_text(), str(path), "exec"), mod.__dict__)
    return mod


QWEN35_MODULE = "vllm.model_executor.models.qwen3_5"
QWEN35_ARCH = "Qwen3_5MoeForConditionalGeneration"


def _class_mro(vllm: Path, module: str, cls: str) -> list[tuple[str, ast.ClassDef]]:
    """The method resolution order of class `cls` of vLLM module `module`
    (C3, as Python computes it), over the class definitions in the sdist,
    each base followed through its file's imports by the syntax tree. Bases
    outside vLLM (torch's nn.Module, typing's Protocol and Generic) are left
    out: they define nothing of vLLM's."""
    trees: dict = {}

    def tree(mod: str):
        if mod not in trees:
            base = vllm / mod.replace(".", "/")
            for p in (base.with_suffix(".py"), base / "__init__.py"):
                if p.is_file():
                    trees[mod] = (ast.parse(p.read_text(), str(p)), p.name == "__init__.py")
                    break
            else:
                raise OracleError(f"{vllm}: no module {mod}")
        return trees[mod]

    def resolve(mod: str, name: str):
        t, is_pkg = tree(mod)
        for n in t.body:
            if isinstance(n, ast.ClassDef) and n.name == name:
                return mod, n
        for n in t.body:
            if isinstance(n, ast.ImportFrom):
                for a in n.names:
                    if (a.asname or a.name) == name:
                        src = _resolve(n.module or "", n.level, mod if is_pkg else mod.rpartition(".")[0])
                        return resolve(src, a.name) if src.split(".")[0] == "vllm" else None
        raise OracleError(f"{mod} neither defines nor imports a class {name}")

    memo: dict = {}

    def mro(mod: str, node: ast.ClassDef) -> list:
        key = (mod, node.name)
        if key in memo:
            return memo[key]
        bases = []
        for b in node.bases:
            if isinstance(b, ast.Subscript):  # Generic[...], Protocol[...]
                b = b.value
            if isinstance(b, ast.Name):
                if (r := resolve(mod, b.id)) is not None:
                    bases.append(r)
                continue
            root = b
            while isinstance(root, ast.Attribute):
                root = root.value
            if not (isinstance(root, ast.Name) and root.id in ("nn", "torch")):
                raise OracleError(f"{mod}.{node.name}: base {ast.unparse(b)} not followed")
        seqs = [[(m, n.name) for m, n in mro(*r)] for r in bases] + [[(m, n.name) for m, n in bases]]
        out = [key]
        while any(seqs):
            for seq in seqs:
                if seq and not any(seq[0] in other[1:] for other in seqs):
                    head = seq[0]
                    break
            else:
                raise OracleError(f"{mod}.{node.name}: no consistent MRO")
            out.append(head)
            seqs = [sq[1:] if sq and sq[0] == head else sq for sq in seqs]
        nodes = {(m, n.name): (m, n) for r in bases for m, n in mro(*r)}
        nodes[key] = (mod, node)
        memo[key] = [nodes[k] for k in out]
        return memo[key]

    start = resolve(module, cls)
    if start is None:
        raise OracleError(f"{module}.{cls} is not a vLLM class")
    return mro(*start)


def _class_attr(vllm: Path, module: str, cls: str, attr: str, default):
    """`getattr(cls, attr, default)` for a class attribute that a class body
    of the MRO assigns a literal."""
    for _, node in _class_mro(vllm, module, cls):
        for st in node.body:
            targets = st.targets if isinstance(st, ast.Assign) else [st.target] if isinstance(st, ast.AnnAssign) else []
            value = getattr(st, "value", None)
            if value is not None and any(isinstance(t, ast.Name) and t.id == attr for t in targets):
                return ast.literal_eval(value)
    return default


def supports_mamba_prefix_caching(vllm: Path, module: str, cls: str) -> bool:
    """`ModelConfig.supports_mamba_prefix_caching` for the architecture: the
    model registry's `supports_mamba_prefix_caching(model_cls)`
    (vllm/model_executor/models/interfaces.py), `getattr(model_cls,
    "supports_mamba_prefix_caching", False)`, which a class has from
    `SupportsMambaPrefixCaching` or its own body. Read off the class
    hierarchy in the sdist (importing the model classes needs torch)."""
    return _class_attr(vllm, module, cls, "supports_mamba_prefix_caching", False)


def _gdn_mamba_type(vllm: Path):
    """The `mamba_type` property of vLLM's GDN layer, run as released."""
    for rel in (
        "vllm/model_executor/layers/mamba/gdn/base.py",
        "vllm/model_executor/layers/mamba/gdn_linear_attn.py",
        "vllm/model_executor/models/qwen3_next.py",
    ):
        if not (vllm / rel).is_file():
            continue
        src = Source(vllm, rel, rel[:-3].replace("/", "."))
        for node in src.tree.body:
            if isinstance(node, ast.ClassDef) and src.defines("mamba_type", node.name):
                cls = src.cls(node.name, ["mamba_type"])
                return cls.mamba_type.fget(None)
    raise OracleError(f"{vllm}: no GDN layer with a mamba_type")


# --------------------------------------------------------------------------
# One case.


def layer_names(case: dict) -> tuple[list[str], list[str]]:
    """The attention and GDN layer names: the target model's
    (Qwen3_5MoeForConditionalGeneration: language_model.model.layers.N) in
    the model's order, then the MTP draft's (mtp.layers.N, loaded without a
    prefix by the proposer)."""
    draft = case.get("draft_layers", 0)
    full = case["full_layers"] - draft
    mamba = case["mamba_layers"]
    total = full + mamba
    full_idx: list[int] = []
    if full and mamba % full == 0:
        # Qwen3.5: every (mamba/full + 1)-th layer is full attention.
        interval = mamba // full + 1
        full_idx = [i for i in range(total) if (i + 1) % interval == 0]
    else:
        full_idx = list(range(full))
    full_set = set(full_idx)
    attn = [f"language_model.model.layers.{i}.self_attn.attn" for i in sorted(full_set)]
    attn += [f"mtp.layers.{j}.self_attn.attn" for j in range(draft)]
    gdn = [f"language_model.model.layers.{i}.linear_attn" for i in range(total) if i not in full_set]
    return attn, gdn


def config(case: dict, m: dict):
    """The engine config at the point the plan is made: hybrid_block_oracle's
    (what the patch reads) plus what the platform, the layers and
    kv_cache_utils read, each a stand-in object that fails on anything else.
    The classes carry the released `CacheConfig`, `VllmConfig` and
    `SpeculativeConfig` members the code calls."""
    torch = m["torch"]
    if case.get("kv_dtype", "bfloat16") != "bfloat16":
        raise OracleError("only the model's bfloat16 KV cache (cache dtype auto) is supported")
    base = hybrid_block_oracle.config(case, torch)
    model = _Strict(
        "model_config",
        **{
            **vars(base.model_config),
            "max_model_len": case["max_model_len"],
            # A set max_model_len (-1 would ask kv_cache_utils to auto-fit it).
            "original_max_model_len": case["max_model_len"],
            # ModelConfig.is_hybrid for Qwen3.5 (IsHybrid).
            "is_hybrid": True,
            # ModelConfig.supports_mamba_prefix_caching (the model registry's).
            "supports_mamba_prefix_caching": m["supports_mamba_prefix_caching"],
        },
    )
    cache = type("CacheConfig", (m["CacheConfig"], _Strict), {})(
        "cache_config",
        **{
            **vars(base.cache_config),
            # --enable-prefix-caching; the Mamba cache mode stays "none" (the
            # CacheConfig default, no --mamba-cache-mode) for
            # MambaModelConfig to decide.
            "enable_prefix_caching": bool(case.get("prefix_caching", False)),
        },
        # Fields CacheConfig derives; _apply_block_size_default sets them.
        _block_size_resolved=False,
        user_specified_block_size=False,
        user_specified_mamba_block_size=False,
        # CacheConfig defaults: no block override, no per-layer KV dtype, no
        # KDA RecoverSSM, no retention interval; the layout is resolved below
        # as the engine core does.
        num_gpu_blocks_override=None,
        kv_cache_dtype_skip_layers=[],
        use_kda_recoverssm=False,
        prefix_cache_retention_interval=0,
        kv_cache_layout=None,
    )
    spec = None
    if case["num_spec"]:
        # MTP with the checkpoint's draft layers (Qwen3.5 ships one).
        draft_hf = types.SimpleNamespace(num_nextn_predict_layers=max(1, case.get("draft_layers", 0)))
        spec = type("SpeculativeConfig", (m["SpeculativeConfig"], _Strict), {})(
            "speculative_config",
            num_speculative_tokens=case["num_spec"],
            method="mtp",
            disable_eagle_block_drop=False,
            draft_model_config=_Strict("draft_model_config", hf_config=draft_hf),
        )
    return type("VllmConfig", (m["VllmConfig"], _Strict), {})(
        "vllm_config",
        model_config=model,
        cache_config=cache,
        parallel_config=_Strict(
            "parallel_config",
            tensor_parallel_size=case["tp"],
            decode_context_parallel_size=1,
            prefill_context_parallel_size=1,
        ),
        speculative_config=spec,
        scheduler_config=_Strict(
            "scheduler_config",
            disable_hybrid_kv_cache_manager=False,
            # SchedulerConfig as the engine builds it for a generative model:
            # chunked prefill on, the batch budget as given, no long-prefill
            # threshold (max_num_partial_prefills 1), chunked MM input on.
            enable_chunked_prefill=True,
            max_num_batched_tokens=case.get("max_num_batched_tokens", 8192),
            long_prefill_token_threshold=0,
            disable_chunked_mm_input=False,
        ),
        kv_transfer_config=None,
        attention_config=_Strict("attention_config", hisparse_config=None),
        # Read by VllmConfig.num_speculative_tokens (0.30) without a
        # speculative config.
        diffusion_config=None,
    )


class _Recorder:
    """Wraps kv_cache_utils._check_enough_kv_cache_memory to record what it
    compares; it still decides."""

    def __init__(self, orig) -> None:
        self.orig = orig
        self.seen: list[dict] = []

    def __call__(self, available_memory, get_needed_memory, *args, **kwargs):
        seen = {"check_available_bytes": available_memory}
        self.seen.append(seen)

        def needed():
            seen["max_memory_usage_bytes"] = get_needed_memory()
            return seen["max_memory_usage_bytes"]

        return self.orig(available_memory, needed, *args, **kwargs)


def _spec_of(groups, name: str):
    for g in groups:
        if name in g.layer_names:
            spec = g.kv_cache_spec
            inner = getattr(spec, "kv_cache_specs", None)
            return inner[name] if isinstance(inner, dict) else spec
    raise OracleError(f"layer {name} is in no KV cache group")


def run(case: dict, m: dict) -> dict:
    cfg = config(case, m)
    cache = cfg.cache_config
    out: dict = {}
    try:
        # 1. CacheConfig's own default (vllm/config/cache.py).
        if hasattr(type(cache), "_apply_block_size_default"):
            cache._apply_block_size_default()
        # 2. The platform patch (vllm-ascend patch_mamba_config.py).
        m["verify"](None, cfg)
        # 3. The platform's block sizing for the backend.
        m["platform"].update_block_size_for_backend(cfg)
    except AssertionError as e:
        return {"refused": str(e) or "AssertionError"}
    out.update(
        block_size=cache.block_size,
        mamba_block_size=cache.mamba_block_size,
        mamba_page_size_padded=cache.mamba_page_size_padded,
        mamba_cache_mode=cache.mamba_cache_mode,
    )

    # 4. The per-layer specs, as the model runner builds them.
    torch = m["torch"]
    c = case["config"]
    attn_names, gdn_names = layer_names(case)
    attn_self = _Strict(
        "Attention layer",
        attn_type=m["attention_type"].DECODER,
        sliding_window=None,
        kv_cache_dtype=cache.cache_dtype,
        num_kv_heads=max(1, c["num_key_value_heads"] // case["tp"]),
        head_size=c["head_dim"],
        head_size_v=c["head_dim"],
        kv_cache_torch_dtype=getattr(torch, case.get("kv_dtype", "bfloat16")),
        attn_backend=m["attention_backend"],
    )
    model_cls = m["model_cls"]
    gdn_self = _Strict(
        "GDN layer",
        get_state_shape=lambda: model_cls.get_mamba_state_shape_from_config(cfg),
        get_state_dtype=lambda: model_cls.get_mamba_state_dtype_from_config(cfg),
        mamba_type=m["mamba_type"],
        # MambaBase.is_kv_cache_tp_replicated (0.30), which GDN keeps.
        is_kv_cache_tp_replicated=False,
    )
    specs: dict = {}
    for name in attn_names:
        if spec := m["Attention"].get_kv_cache_spec(attn_self, cfg):
            specs[name] = spec
    mamba_layers = {name: (lambda vc: m["MambaBase"].get_kv_cache_spec(gdn_self, vc)) for name in gdn_names}
    try:
        pad_attention_specs(specs, attn_names, mamba_layers, cfg)
    except AssertionError as e:
        return {**out, "refused": str(e) or "AssertionError"}
    first_mamba = specs[gdn_names[0]] if gdn_names else None
    if first_mamba is not None:
        out["num_speculative_blocks"] = first_mamba.num_speculative_blocks
        out["mamba_raw_page_size_bytes"] = dataclasses.replace(first_mamba, page_size_padded=None).page_size_bytes

    # The engine core resolves the KV cache layout before planning (0.30).
    if m["layout"] is not None and hasattr(type(cache), "get_resolved_kv_cache_layout"):
        lay = m["layout"]
        supported = [x.name for x in lay["get_supported_kv_cache_layouts"]([m["attention_backend"], m["gdn_backend"]])]
        lay["resolve_kv_cache_layout"](cfg, [supported], list(specs.values()))
        out["kv_cache_layout"] = cache.kv_cache_layout

    # 5. The plan.
    utils = m["utils"]
    recorder = _Recorder(utils._check_enough_kv_cache_memory)
    utils._check_enough_kv_cache_memory = recorder
    try:
        configs = utils.get_kv_cache_configs(cfg, [specs], [case["available_memory"]])
    except ValueError as e:
        if recorder.seen:
            out.update(recorder.seen[-1], enough=False)
        return {**out, "refused": str(e)}
    except AssertionError as e:
        return {**out, "refused": str(e) or "AssertionError"}
    finally:
        utils._check_enough_kv_cache_memory = recorder.orig
    (kv,) = configs
    groups = kv.kv_cache_groups
    attn_spec = _spec_of(groups, attn_names[0]) if attn_names else None
    mamba_spec = _spec_of(groups, gdn_names[0]) if gdn_names else None
    if recorder.seen:
        out.update(recorder.seen[-1])
    out.update(
        attn_block_size=attn_spec.block_size if attn_spec else None,
        attn_page_size_bytes=attn_spec.page_size_bytes if attn_spec else None,
        mamba_page_size_bytes=mamba_spec.page_size_bytes if mamba_spec else None,
        mamba_spec_block_size=mamba_spec.block_size if mamba_spec else None,
        mamba_max_memory_usage_bytes=mamba_spec.max_memory_usage_bytes(cfg) if mamba_spec else None,
        groups=[[type(g.kv_cache_spec).__name__, len(g.layer_names)] for g in groups],
        group_size=max((len(g.layer_names) for g in groups), default=0),
        num_blocks=kv.num_blocks,
        enough=True,
    )
    if mamba_spec is not None and hasattr(mamba_spec, "max_num_blocks_per_req"):
        # The block-table row of a GDN group (vLLM 0.26 on), as the model
        # runner sizes it for max_model_len; not part of the memory check.
        out["mamba_max_num_blocks_per_req"] = mamba_spec.max_num_blocks_per_req(cfg, case["max_model_len"])

    # 6. The engine core, after planning (vllm/v1/engine/core.py
    # `EngineCore._initialize_kv_caches`, restated): the cache's block becomes
    # the smallest group block (from vLLM 0.30 of the prefix-cacheable
    # groups, which both spec types here are), then
    # `VllmConfig.validate_block_size` runs as released (in Mamba align mode,
    # up to vLLM 0.26: block_size <= max_num_batched_tokens). Without prefix
    # caching the Mamba group's block is max_model_len, so the smallest
    # block may be that; nothing checks it then.
    blocks = [g.kv_cache_spec.block_size for g in groups]
    cacheable = [g.kv_cache_spec.block_size for g in groups if getattr(g.kv_cache_spec, "prefix_cacheable", True)]
    cache.block_size = min(cacheable or blocks)
    if hasattr(type(cfg), "validate_block_size"):
        try:
            cfg.validate_block_size()
        except AssertionError as e:
            return {"refused": str(e) or "AssertionError"}
    return out


def main(argv: list[str]) -> int:
    return kv_oracle.cli(argv, __doc__, load, run)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
