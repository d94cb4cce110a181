#!/usr/bin/env python3
"""The `vllm serve` flags of one vLLM release, read statically from its sdist.

    facts_vllm.py VERSION        print the facts of vllm==VERSION (from the corpus)
    facts_vllm.py --write        write `upstream/facts/vllm/<version>.json` for every vllm pinned
                                 in `upstream/corpus.lock.json`

`vllm_facts(src, version)` returns the object of the agreed schema
(`upstream/facts/vllm/<version>.json`: package, version, serve_flags). Nothing
of vLLM is imported (it needs torch): the parser `vllm serve` builds is
reconstructed by a small abstract interpreter over vLLM's own source, starting
where vLLM starts:

- `vllm/entrypoints/cli/serve.py`: `ServeSubcommand.subparser_init` (the
  subcommand named "serve") creates the parser and calls `make_arg_parser`
  (`vllm/entrypoints/openai/cli_args.py`, from 0.29 `vllm/entrypoints/launchers/
  cli_args.py`), which adds `--headless`, `--api-server-count`, `--config`...,
  then `FrontendArgs.add_cli_args` (every dataclass field becomes a flag) and
  `AsyncEngineArgs.add_cli_args` (`vllm/engine/arg_utils.py`, which calls
  `EngineArgs.add_cli_args`).
- `group.add_argument("--flag", **xxx_kwargs["field"])`: the kwargs come from
  `get_kwargs(ConfigClass)`. Their `action`/`nargs`/`type` are computed by
  running the release's own `_compute_kwargs` rule chain (the if/elif chain on
  the field's type hints in `vllm/engine/arg_utils.py`) on the field's
  annotation, itself evaluated statically (type aliases, imports,
  `if TYPE_CHECKING: ... else: ...` resolved as at run time).
- The kind of a flag follows argparse: store_true/store_false/
  BooleanOptionalAction are switches (the latter negatable), nargs `+`/`*` is
  `many`, one value whose `type` parses JSON (json.loads, a config dataclass,
  `union_dict_and_str`) is `json`, anything else one value.

Whatever the interpreter cannot follow (an unknown statement in a function that
builds the parser, an option string or kind-deciding kwarg it cannot evaluate,
an annotation it cannot resolve, a helper of `_compute_kwargs` whose code
changed) raises `FactsError` naming the file and line. Nothing is guessed.

The code, by concern: facts_vllm_source.py (modules and name resolution),
facts_vllm_types.py (type hints), facts_vllm_eval.py and facts_vllm_calls.py
(the interpreter), facts_vllm_kwargs.py (`_compute_kwargs`),
facts_vllm_config.py (context parallel, the V2 model runner) and
facts_vllm_speculative.py (speculative methods, drafting slots); this file
holds `Interp`, `vllm_facts` and the command line.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from pathlib import Path

from facts_vllm_calls import Caller
from facts_vllm_config import (  # noqa: F401
    _parents,
    context_parallel,
    default_capture_grid,
    mamba_align,
    sequence_parallel_moe,
    spec_decode_rounding,
    spec_decode_sp_alignment,
    v2_model_runner,
    v2_speculative_methods,
)
from facts_vllm_checkpoint import checkpoint_reads
from facts_vllm_kv_check import kv_memory_check, mamba_blocks_check
from facts_vllm_eval import Group, Parser, Subparsers
from facts_vllm_kwargs import KwargsRules
from facts_vllm_source import ClassObj, FactsError, FuncObj, Resolver, Source, Unknown, describe
from facts_vllm_speculative import (  # noqa: F401
    async_speculative_methods,
    aux_hidden_states,
    draft_free_methods,
    drafting_slots,
    speculative_methods,
)
from facts_vllm_types import Types

HERE = Path(__file__).resolve().parent


class Interp(Caller):
    def __init__(self, src: Source):
        self.src = src
        self.res = Resolver(src)
        self.types = Types(self.res)
        self.arg_utils = src.require("vllm.engine.arg_utils", "it defines `get_kwargs`")
        self.rules = KwargsRules(self, self.arg_utils)
        self.depth = 0

    # -- entry ---------------------------------------------------------------
    def serve_parser(self) -> Parser:
        serve = self.src.require("vllm.entrypoints.cli.serve", "it defines `vllm serve`")
        sub = None
        for st in serve.tree.body:
            if isinstance(st, ast.ClassDef):
                for b in st.body:
                    if (
                        isinstance(b, ast.Assign)
                        and any(isinstance(t, ast.Name) and t.id == "name" for t in b.targets)
                        and isinstance(b.value, ast.Constant)
                        and b.value.value == "serve"
                    ):
                        sub = st
        if sub is None:
            raise FactsError(f"no subcommand class with `name = \"serve\"` in `{serve.rel}`")
        init = next((b for b in sub.body if isinstance(b, ast.FunctionDef) and b.name == "subparser_init"), None)
        if init is None:
            raise FactsError(f"`{sub.name}` in `{serve.rel}` has no `subparser_init`")
        owner = ClassObj(serve, sub)
        fn = FuncObj(serve, init, owner)
        result = self.call_func(fn, [Unknown("self"), Subparsers()], {}, recv=None, owner=owner, node=init)
        parser = result.parser if isinstance(result, Group) else result
        if not isinstance(parser, Parser):
            raise FactsError(f"`{sub.name}.subparser_init` in `{serve.rel}` returned {describe(result)}, not the parser")
        return parser


# ---------------------------------------------------------------------------


def vllm_facts(src: Path, version: str, *, overrides: dict[str, str] | None = None) -> dict:
    """The `upstream/facts/vllm/<version>.json` object for the vLLM sdist unpacked at `src`.

    `overrides` (path inside the sdist -> text) replaces files as read; the
    self-check uses it to mutate upstream's code and watch the result change."""
    src = Path(src)
    if not (src / "vllm" / "engine" / "arg_utils.py").is_file():
        raise FactsError(f"`{src}` is not an unpacked vLLM sdist (no `vllm/engine/arg_utils.py`)")
    interp = Interp(Source(src, overrides))
    parser = interp.serve_parser()
    flags = sorted(parser.options, key=lambda o: o["name"])
    names = [o["name"] for o in flags]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise FactsError(f"flags defined twice in vllm {version}: {dup}")
    methods = speculative_methods(Source(src, overrides))
    return {
        "package": "vllm",
        "version": version,
        "serve_flags": flags,
        "speculative_methods": methods,
        "v2_model_runner": v2_model_runner(Source(src, overrides)),
        "v2_speculative_methods": v2_speculative_methods(Source(src, overrides), [m["name"] for m in methods]),
        "async_speculative_methods": async_speculative_methods(Source(src, overrides)),
        "context_parallel": context_parallel(Source(src, overrides)),
        "drafting_slots": drafting_slots(Source(src, overrides)),
        "spec_decode_sp_alignment": spec_decode_sp_alignment(Source(src, overrides)),
        "spec_decode_rounding": spec_decode_rounding(Source(src, overrides)),
        "default_capture_grid": default_capture_grid(Source(src, overrides)),
        "aux_hidden_states": aux_hidden_states(Source(src, overrides)),
        "sequence_parallel_moe": sequence_parallel_moe(Source(src, overrides)),
        "mamba_align": mamba_align(Source(src, overrides)),
        "checkpoint_reads": checkpoint_reads(src),
        "kv_memory_check": kv_memory_check(src),
        "mamba_blocks_check": mamba_blocks_check(src),
    }


def dumps(obj: dict) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def corpus_path(version: str) -> Path:
    out = subprocess.run(
        [sys.executable, str(HERE / "corpus.py"), "path", f"vllm=={version}"],
        capture_output=True, text=True,
    )
    if out.returncode != 0:
        raise FactsError(f"the corpus has no vllm=={version}: {out.stderr.strip()}")
    return Path(out.stdout.strip())


ROOT = HERE.parents[1]
FACTS_DIR = ROOT / "upstream" / "facts" / "vllm"


def pinned_versions() -> list[str]:
    lock = json.loads((ROOT / "upstream" / "corpus.lock.json").read_text(encoding="utf-8"))
    return [p["version"] for p in lock["packages"] if p["name"] == "vllm"]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="the `vllm serve` flag facts of vLLM releases")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("version", nargs="?", help="print the facts of this vllm version")
    g.add_argument("--write", action="store_true", help="write the facts of every pinned vllm version")
    ns = ap.parse_args(argv)
    try:
        if ns.write:
            FACTS_DIR.mkdir(parents=True, exist_ok=True)
            for v in pinned_versions():
                facts = vllm_facts(corpus_path(v), v)
                (FACTS_DIR / f"{v}.json").write_text(dumps(facts), encoding="utf-8")
                print(f"{FACTS_DIR.relative_to(ROOT)}/{v}.json: {len(facts['serve_flags'])} flags")
        else:
            sys.stdout.write(dumps(vllm_facts(corpus_path(ns.version), ns.version)))
    except FactsError as e:
        print(f"facts_vllm.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
