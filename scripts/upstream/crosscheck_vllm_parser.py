#!/usr/bin/env python3
"""Cross-check the static vLLM flag facts against vLLM's own parser.

    crosscheck_vllm_parser.py [VERSION ...]     (default: every pinned vllm)
    crosscheck_vllm_parser.py argv VERSION CASES.json


For each version this builds the parser `vllm serve` really builds, by running
the sdist's `ServeSubcommand.subparser_init` (vllm/entrypoints/cli/serve.py)
with the modules that are not installed replaced by mocks, the way vLLM's own
docs hook does (docs/mkdocs/hooks/generate_argparse.py in the sdist: mock
torch and the compiled ops, auto-mock every missing import, patch
`DeviceConfig.__post_init__`), then compares every option (long name, other
spellings, switch or not, `--no-` form, nargs, JSON `type`) with
`facts_vllm.vllm_facts`. Exit status 1 on any difference.

`argv` parses each case of CASES.json (a list of word lists) as `vllm serve
MODEL WORDS...` with that parser and prints, per case, `null` when vLLM takes
it or what it says when it refuses (argparse's message, or the exception its
own pre-parsing raises): the oracle of the `serve_flag_accepted` rule
(tests/tests/serve_flags_oracle.rs).

Needs what vLLM's docs build installs: pydantic, msgspec, packaging, regex,
pyyaml, requests (a venv with `--system-site-packages` and `pip install
msgspec packaging requests` is enough). It runs upstream code; the generator
itself never does.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import facts_vllm as fv  # noqa: E402

# Runs in a fresh interpreter per version: argv = [sdist root, output path].
CHILD = r'''
import argparse, importlib, importlib.util, json, sys, typing
from importlib.machinery import ModuleSpec
from unittest.mock import MagicMock, patch

root, out_path = sys.argv[1], sys.argv[2]
cases_path = sys.argv[3] if len(sys.argv) > 3 else None
sys.path.insert(0, root)
sys.argv = ["vllm", "serve"]
try:
    from pydantic_core import core_schema
    import msgspec, packaging, regex, yaml  # noqa: F401  (what vLLM's docs build installs)
except ImportError as e:
    sys.exit(f"crosscheck needs `{e.name}` installed (vLLM's docs build dependencies)")


class PydanticMagicMock(MagicMock):
    def __init__(self, *args, **kwargs):
        name = kwargs.get("name")
        super().__init__(*args, **kwargs)
        self.__spec__ = ModuleSpec(name, None)

    def __get_pydantic_core_schema__(self, source_type, handler):
        return core_schema.any_schema()


class Registry:
    @staticmethod
    def register(name):
        return lambda cls: cls


def outputs(fn):
    rt = typing.get_type_hints(fn)["return"]
    name = lambda a: getattr(a, "__name__", str(a))
    if typing.get_origin(rt) is tuple:
        return ", ".join(name(a) for a in typing.get_args(rt))
    return name(rt)


if not importlib.util.find_spec("torch"):
    # `torch.dtype` must be a class: a mock passes `dataclasses.is_dataclass`,
    # which would turn `torch.dtype | Literal[...]` options (`--lora-dtype`)
    # into JSON options that take any word.
    torch_mock = PydanticMagicMock(name="torch")
    torch_mock.dtype = type("dtype", (), {})
    sys.modules["torch"] = torch_mock
    sys.modules.update({
        "vllm._C": MagicMock(),
        "vllm._C_stable_libtorch": MagicMock(),
        "vllm.model_executor.custom_op": MagicMock(CustomOp=Registry, PluggableLayer=Registry),
        "vllm.utils.torch_utils": MagicMock(direct_register_custom_op=lambda *a, **k: None),
        "torch.nn": MagicMock(Parameter=object),
        "torch.library": MagicMock(infer_schema=lambda fn, **k: f"(Tensor x) -> {outputs(fn)}"),
    })
import importlib.metadata
importlib.metadata.version = lambda name: "99.0.0"


def mocked(thunk):
    for _ in range(300):
        try:
            return thunk()
        except ModuleNotFoundError as e:
            sys.modules[e.name] = PydanticMagicMock(name=e.name)
    raise ImportError("too many missing modules")


serve = mocked(lambda: importlib.import_module("vllm.entrypoints.cli.serve"))
FAP = mocked(lambda: importlib.import_module("vllm.utils.argparse_utils")).FlexibleArgumentParser


def build():
    subs = FAP(prog="vllm").add_subparsers()
    with patch("vllm.config.DeviceConfig.__post_init__"):
        return serve.ServeSubcommand().subparser_init(subs)


parser = mocked(build)

# argparse reports a refusal through `error`, which prints and exits: keep
# the message (the parser's own words) for the argv mode.
ERRORS = []


def _error(self, message):
    ERRORS.append(message)
    raise SystemExit(2)


argparse.ArgumentParser.error = _error


def is_json(t, depth=0):
    if t is None or depth > 6:
        return False
    if getattr(t, "__name__", "") in ("loads", "parse_dataclass", "union_dict_and_str"):
        return True
    for cell in getattr(t, "__closure__", None) or ():
        try:
            v = cell.cell_contents
        except ValueError:
            continue
        if callable(v) and is_json(v, depth + 1):
            return True
    return False


if cases_path:
    # argv mode: parse each case's words as `vllm serve MODEL WORDS...`
    # with the `serve` parser vLLM builds, and record what it says.
    cases = json.load(open(cases_path))
    verdicts = []
    for words in cases:
        try:
            parser.parse_args(["/model", *words])
            verdicts.append(None)
        except SystemExit:
            verdicts.append(ERRORS[-1] if ERRORS else "exit")
        except Exception as e:  # a type= converter raising past argparse
            verdicts.append(f"{type(e).__name__}: {e}")
        ERRORS.clear()
    with open(out_path, "w") as f:
        json.dump(verdicts, f)
    sys.exit(0)

out = []
for a in parser._actions:
    if not a.option_strings or isinstance(a, argparse._HelpAction):
        continue
    out.append({"options": a.option_strings, "action": type(a).__name__,
                "nargs": a.nargs, "json": is_json(a.type)})
with open(out_path, "w") as f:
    json.dump(out, f)
'''

SWITCH_ACTIONS = {"_StoreTrueAction", "_StoreFalseAction", "_StoreConstAction", "_CountAction"}


def runtime_view(action: dict) -> tuple[str, dict]:
    opts = action["options"]
    neg = action["action"] == "BooleanOptionalAction"
    longs = [o for o in opts if o.startswith("--")]
    name = longs[0][2:]
    if neg or action["action"] in SWITCH_ACTIONS:
        kind = "switch"
    elif action["nargs"] in ("+", "*"):
        kind = "many"
    elif action["nargs"] not in (None, "?"):
        kind = f"nargs={action['nargs']}"
    else:
        kind = "json" if action["json"] else "value"
    aliases = sorted(o for o in opts if o != longs[0] and not (neg and o == f"--no-{name}"))
    view = {"kind": kind, "aliases": aliases, "negatable": neg}
    if action["nargs"] == "?":
        view["value_optional"] = True
    return name, view


def check(version: str) -> list[str]:
    src = fv.corpus_path(version)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "parser.json"
        r = subprocess.run([sys.executable, "-c", CHILD, str(src), str(out)], capture_output=True, text=True)
        if r.returncode != 0 or not out.is_file():
            tail = (r.stderr.strip().splitlines() or ["(no output)"])[-1]
            return [f"vllm {version}: vLLM's parser could not be built: {tail}"]
        runtime = dict(runtime_view(a) for a in json.loads(out.read_text()))
    static = {f["name"]: {k: f[k] for k in ("kind", "aliases", "negatable", "value_optional") if k in f}
              for f in fv.vllm_facts(src, version)["serve_flags"]}
    diffs = []
    for name in sorted(set(runtime) | set(static)):
        s, d = static.get(name), runtime.get(name)
        if s != d:
            diffs.append(f"vllm {version}: --{name}: static {s}, vLLM's parser {d}")
    print(f"vllm {version}: {len(static)} static, {len(runtime)} in vLLM's parser, {len(diffs)} differences")
    return diffs


def parse_cases(version: str, cases: Path) -> list:
    src = fv.corpus_path(version)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "verdicts.json"
        r = subprocess.run([sys.executable, "-c", CHILD, str(src), str(out), str(cases)],
                           capture_output=True, text=True)
        if r.returncode != 0 or not out.is_file():
            tail = (r.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise SystemExit(f"vllm {version}: vLLM's parser could not be built: {tail}")
        return json.loads(out.read_text())


def main(argv: list[str]) -> int:
    if argv[:1] == ["argv"]:
        if len(argv) != 3:
            raise SystemExit("usage: crosscheck_vllm_parser.py argv VERSION CASES.json")
        json.dump(parse_cases(argv[1], Path(argv[2])), sys.stdout)
        return 0
    versions = argv or fv.pinned_versions()
    diffs: list[str] = []
    for v in versions:
        diffs += check(v)
    for d in diffs:
        print(d, file=sys.stderr)
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
