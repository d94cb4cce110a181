#!/usr/bin/env python3
"""Every start-up refusal of vLLM and vllm-ascend, and what pd-dsl does about it.

    startup_checks.py check     the inventory (from the corpus) and the verdicts
                                (`upstream/startup-verdicts.json`) agree, and the
                                generated `upstream/startup-checks.md` is fresh (CI)
    startup_checks.py write     rewrite `upstream/startup-checks.md` from them
    startup_checks.py missing   print the inventory entries without a verdict, as
                                JSON (what to classify after adding a release)

The inventory is generated: every `raise` and `assert` of the modules where the engine
validates its configuration at start-up (vLLM's `vllm/config/*.py` and
`vllm/engine/arg_utils.py`, vllm-ascend's `ascend_config.py`, `platform.py` and
the platform patches `patch/platform/*.py`) at every release of the corpus,
found by walking the source's
syntax tree. A check's id hashes its module path, its qualified function, the
source of its message and its innermost enclosing condition (not its line), so
one check keeps its id across releases while it keeps its meaning.

The verdicts are pd-dsl's judgement, one per id: `rule` (a pd-dsl rule refuses
every layout that would hit it, before start), `derived` (it reads only values
pd-dsl derives, which never violate it), `passthrough` (reachable only through
a `flags` entry or an `additional_config` key pd-dsl passes as written; upstream
judges it at start), `unreachable` (no layout can make it fire: another
platform, a model or feature outside the tables, code after start-up), or
`open` (a layout's typed fields reach it and no rule catches it yet: the to-do
list). Nothing of upstream's prose is kept: `why` is ours.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpus  # noqa: E402

ROOT = corpus.ROOT
VERDICTS = ROOT / "upstream" / "startup-verdicts.json"
DOC = ROOT / "upstream" / "startup-checks.md"
RULES = ROOT / "pd-dsl-core" / "src" / "rules"  # each concern module declares its rules
KINDS = ("rule", "preflight", "derived", "passthrough", "unreachable", "open")


def modules(package: str, tree: Path) -> list[str]:
    """The start-up validation modules of one release tree."""
    if package == "vllm-ascend":
        names = ["vllm_ascend/ascend_config.py", "vllm_ascend/platform.py"]
        # The platform patches: imported when the platform initialises
        # (vllm_ascend/patch/platform/__init__.py), they replace vLLM's
        # config checks, KV-cache sizing and scheduler pieces in every
        # process, so their refusals are the platform's too.
        names += sorted(str(p.relative_to(tree)) for p in (tree / "vllm_ascend" / "patch" / "platform").glob("*.py"))
    else:
        names = sorted(str(p.relative_to(tree)) for p in (tree / "vllm" / "config").glob("*.py"))
        names += ["vllm/config.py", "vllm/engine/arg_utils.py"]
    return [n for n in names if (tree / n).is_file()]


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s)


def raises(text: str) -> list[dict]:
    """Every `raise X(...)` and `assert` with its qualified function,
    enclosing conditions (outermost first; `not (...)` in an `else`) and
    message source (an assert's: `assert <test>[, <message>]`)."""
    out: list[dict] = []

    def stmt(s: ast.stmt, stack: list[str], ifs: list[str]) -> None:
        if isinstance(s, ast.Assert):
            # An assert refuses as a raise does (AssertionError at start);
            # its "message" is the asserted test, and its text when it has one.
            msg = f"assert {ast.unparse(s.test)}" + (f", {ast.unparse(s.msg)}" if s.msg is not None else "")
            out.append({"function": ".".join(stack), "conditions": ifs, "message": msg, "line": s.lineno})
            return
        if isinstance(s, ast.Raise):
            if s.exc is None:
                return
            e = s.exc
            msg = ast.unparse(e.args[0]) if isinstance(e, ast.Call) and e.args else ""
            out.append({"function": ".".join(stack), "conditions": ifs, "message": msg, "line": s.lineno})
            return
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for b in s.body:
                stmt(b, stack + [s.name], [])
            return
        if isinstance(s, ast.If):
            test = ast.unparse(s.test)
            for b in s.body:
                stmt(b, stack, ifs + [test])
            for b in s.orelse:
                stmt(b, stack, ifs + [f"not ({test})"])
            return
        for field in ("body", "orelse", "finalbody"):
            for b in getattr(s, field, None) or []:
                if isinstance(b, ast.stmt):
                    stmt(b, stack, ifs)
        for h in getattr(s, "handlers", None) or []:
            kind = ast.unparse(h.type) if h.type else ""
            for b in h.body:
                stmt(b, stack, ifs + [f"except {kind}"])
        for c in getattr(s, "cases", None) or []:
            for b in c.body:
                stmt(b, stack, ifs + [f"case {ast.unparse(c.pattern)}"])

    for s in ast.parse(text).body:
        stmt(s, [], [])
    return out


def check_id(path: str, r: dict) -> str:
    key = "|".join([path, r["function"], _norm(r["message"]), _norm(" && ".join(r["conditions"][-1:]))])
    return hashlib.sha1(key.encode()).hexdigest()[:10]


def inventory() -> dict[str, dict]:
    """id → {package, path, function, releases, line (in the first release)}."""
    lock = corpus.load_lock()
    out: dict[str, dict] = {}
    pkgs = sorted(
        (p for p in lock["packages"] if p["name"] in ("vllm", "vllm-ascend")),
        key=lambda p: (p["name"], corpus.version_key(p["version"])),
    )
    for p in pkgs:
        tree = corpus.unpacked(p)
        for rel in modules(p["name"], tree):
            for r in raises((tree / rel).read_text()):
                i = check_id(rel, r)
                e = out.setdefault(
                    i,
                    {"package": p["name"], "path": rel, "function": r["function"], "line": r["line"], "releases": []},
                )
                if p["version"] not in e["releases"]:
                    e["releases"].append(p["version"])
    return out


def rule_names() -> set[str]:
    text = "\n".join(p.read_text() for p in sorted(RULES.glob("*.rs")))
    return set(re.findall(r'^\s*\w+ = "([a-z0-9_]+)", (?:Hard|Convention),', text, re.M))


def load_verdicts() -> dict[str, dict]:
    return json.loads(VERDICTS.read_text())["checks"]


def problems(inv: dict[str, dict], verdicts: dict[str, dict]) -> list[str]:
    rules = rule_names()
    out = []
    for i, e in sorted(inv.items()):
        if i not in verdicts:
            out.append(f"{i} ({e['package']} {e['path']} `{e['function']}`, {e['releases'][0]} L{e['line']}): no verdict")
    for i, v in sorted(verdicts.items()):
        if i not in inv:
            out.append(f"{i}: a verdict for a check no release of the corpus has (stale)")
        if v.get("verdict") not in KINDS:
            out.append(f"{i}: verdict {v.get('verdict')!r}, expected one of {', '.join(KINDS)}")
        if v.get("verdict") in ("rule", "preflight") and v.get("rule") not in rules:
            out.append(f"{i}: names rule {v.get('rule')!r}, which no module of pd-dsl-core/src/rules/ declares")
        if not str(v.get("why", "")).strip():
            out.append(f"{i}: no `why`")
    return out


def releases_text(rs: list[str], every: list[str]) -> str:
    if rs == every:
        return "every release"
    if len(rs) == 1:
        return rs[0]
    idx = [every.index(r) for r in rs]
    if idx == list(range(idx[0], idx[-1] + 1)):
        return f"{rs[0]} to {rs[-1]}"
    return ", ".join(rs)


def render(inv: dict[str, dict], verdicts: dict[str, dict]) -> str:
    lock = corpus.load_lock()
    every = {
        n: [p["version"] for p in sorted(lock["packages"], key=lambda p: corpus.version_key(p["version"])) if p["name"] == n]
        for n in ("vllm", "vllm-ascend")
    }
    counts = {k: 0 for k in KINDS}
    for i in inv:
        counts[verdicts[i]["verdict"]] += 1
    lines = [
        "# Start-up refusals of vLLM and vllm-ascend, and what pd-dsl does about each",
        "",
        "Generated by `scripts/upstream/startup_checks.py write` from the corpus (every `raise` and `assert` of",
        "vLLM's `vllm/config/*.py` and `vllm/engine/arg_utils.py`, vllm-ascend's `ascend_config.py`, `platform.py`",
        "and platform patches `patch/platform/*.py`, at every release pinned in `corpus.lock.json`) and the verdicts of",
        "`startup-verdicts.json`. Do not edit.",
        "",
        "| verdict | checks | meaning |",
        "|---|---|---|",
        f"| rule | {counts['rule']} | a pd-dsl rule refuses every layout that would hit it, at compile time |",
        f"| preflight | {counts['preflight']} | a pd-dsl rule refuses it at compile time where the model table sources what it reads; for builds with no source, the generated preflight judges the same condition on each node's `config.json` before the model loads |",
        f"| derived | {counts['derived']} | it reads only values pd-dsl derives, and they never violate it |",
        f"| passthrough | {counts['passthrough']} | reachable only through a `flags` entry or an `additional_config` key pd-dsl passes as written; upstream judges it at start |",
        f"| unreachable | {counts['unreachable']} | no layout can make it fire (another platform, a model or feature outside the tables, code after start-up) |",
        f"| open | {counts['open']} | a layout's typed fields reach it and no rule catches it yet |",
        f"| all | {len(inv)} | |",
        "",
    ]
    order = {k: n for n, k in enumerate(("open", "rule", "preflight", "derived", "passthrough", "unreachable"))}
    rows = sorted(inv.items(), key=lambda kv: (order[verdicts[kv[0]]["verdict"]], kv[1]["package"], kv[1]["path"], kv[1]["function"], kv[0]))
    current = None
    for i, e in rows:
        v = verdicts[i]
        if v["verdict"] != current:
            current = v["verdict"]
            lines += ["", f"## {current}", "", "| id | where | releases | why |", "|---|---|---|---|"]
        what = f"{v['rule']}: " if v["verdict"] in ("rule", "preflight") else ""
        why = (what + v["why"]).replace("|", "\\|").replace("\n", " ")
        where = f"{e['package']} `{e['path']}` `{e['function'] or '<module>'}`"
        lines.append(f"| `{i}` | {where} | {releases_text(e['releases'], every[e['package']])} | {why} |")
    return "\n".join(lines) + "\n"


README = ROOT / "README.md"
BEGIN = "<!-- startup-checks:begin (generated: scripts/upstream/startup_checks.py write) -->\n"
END = "<!-- startup-checks:end -->\n"
MEANING = {
    "rule": "a pd-dsl rule refuses it at the token, at compile time (the table of `pd-dsl-macros/doc/layout.md`)",
    "preflight": "it reads the checkpoint's `config.json` (derived context length, text `model_type`, routed experts): a pd-dsl rule refuses it at compile time wherever a pinned copy of the build's config or the model table gives the fact, and the generated preflight's `model_config` check judges the same condition on each node's own `config.json`, as the image's vLLM reads it (generated `checkpoint_reads`), before the model loads: for the builds no source covers (GLM-4.7, DeepSeek-V4.1) and for weights that are not the layout's",
    "derived": "it reads only what pd-dsl derives (ranks, addresses, connector JSON), which never violates it",
    "passthrough": "reachable only through a `flags` entry or an `additional_config` key pd-dsl passes as written (profiler, pooler, LoRA, structured outputs, sub-keys of vllm-ascend's optional features): the image judges what such a value means at start; what argparse refuses of a flag (its spelling, its value's shape, `type=` and `choices`, and a config-class option's JSON keys, which pydantic validates as its `type=`) is refused at compile time by `serve_flag_accepted` and by the rehearsal's stand-in `vllm`, from that vLLM's own argument table, both held to the parser vLLM builds from its source (`tests/tests/serve_flags_oracle.rs`)",
    "unreachable": "no layout can make it fire: another platform (CUDA, ROCm, flashinfer), a model outside the table (Qwen3-Omni, Nemotron-H), code that runs after start-up or from other entry points, or upstream's own invariants",
    "open": "a layout's typed fields reach it and no rule catches it yet; each carries a proposed rule (name, severity, condition, releases) in the verdicts file",
}


def readme_table(inv: dict[str, dict], verdicts: dict[str, dict]) -> str:
    counts = {k: sum(1 for i in inv if verdicts[i]["verdict"] == k) for k in KINDS}
    rows = ["| verdict | checks | what it means for a layout |", "|---|---|---|"]
    rows += [f"| {k} | {counts[k]} | {MEANING[k]} |" for k in KINDS]
    rows.append(f"| all | {len(inv)} | |")
    return "\n".join(rows) + "\n"


def readme_with(text: str, table: str) -> str | None:
    """README text with the generated table between the markers, or None
    when the markers are missing."""
    if BEGIN not in text or END not in text:
        return None
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + BEGIN + table + END + tail


def main(argv: list[str]) -> int:
    cmd = argv[1] if len(argv) > 1 else "check"
    inv = inventory()
    if cmd == "missing":
        v = load_verdicts() if VERDICTS.exists() else {}
        json.dump({i: e for i, e in sorted(inv.items()) if i not in v}, sys.stdout, indent=1)
        print()
        return 0
    verdicts = load_verdicts()
    bad = problems(inv, verdicts)
    if bad:
        print(f"startup_checks.py: {len(bad)} problem(s) with {VERDICTS.relative_to(ROOT)}:", file=sys.stderr)
        for b in bad[:60]:
            print(f"  {b}", file=sys.stderr)
        if len(bad) > 60:
            print(f"  ... and {len(bad) - 60} more (`startup_checks.py missing` lists them)", file=sys.stderr)
        return 1
    text = render(inv, verdicts)
    readme = README.read_text()
    fresh = readme_with(readme, readme_table(inv, verdicts))
    if fresh is None:
        print(f"startup_checks.py: README.md has no `{BEGIN.strip()}` ... `{END.strip()}` block", file=sys.stderr)
        return 1
    if cmd == "write":
        DOC.write_text(text)
        README.write_text(fresh)
        return 0
    if cmd == "check":
        stale = [p.relative_to(ROOT) for p, ok in ((DOC, DOC.exists() and DOC.read_text() == text), (README, readme == fresh)) if not ok]
        if stale:
            print(f"startup_checks.py: {', '.join(map(str, stale))} stale; run `scripts/upstream/startup_checks.py write`", file=sys.stderr)
            return 1
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
