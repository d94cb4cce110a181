#!/usr/bin/env python3
"""The generated upstream fact tables (`upstream/facts/`), read from the corpus.

    facts.py write              regenerate every table from the pinned sdists
    facts.py check | --check    regenerate in memory; exit 1 naming every stale,
                                missing or extra file and its first differing lines
    facts.py diff OLD NEW       what changed between two vllm-ascend releases

Every table comes from a package pinned in `upstream/corpus.lock.json`, unpacked
by `corpus.py` (offline when the cache is filled). vllm-ascend tables are
written by `facts_ascend.py`, vLLM tables by `facts_vllm.py` (its
`vllm_facts(src, version)`), the checkpoint-config table by
`facts_checkpoints.py`; the layout is `upstream/README.md`'s.
"""

from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpus  # noqa: E402
from facts_ascend import FactsError, ascend_facts  # noqa: E402

ROOT = corpus.ROOT
FACTS = ROOT / "upstream" / "facts"


def _vllm_generator():
    """`facts_vllm.vllm_facts`, or None while that generator is not in the tree."""
    try:
        from facts_vllm import vllm_facts
    except ModuleNotFoundError as e:
        if e.name != "facts_vllm":
            raise
        return None
    return vllm_facts


def _checkpoint_generator():
    from facts_checkpoints import checkpoint_facts

    return checkpoint_facts


GENERATORS = {
    "vllm-ascend": lambda: ascend_facts,
    "vllm": _vllm_generator,
    "aiconfigurator-core": _checkpoint_generator,
}


def render(table: dict) -> str:
    return json.dumps(table, indent=2, ensure_ascii=False) + "\n"


def source_of(p: dict) -> Path:
    try:
        return corpus.unpacked(p)
    except corpus.CorpusError as e:
        raise FactsError(
            f"the corpus has no `{p['name']}=={p['version']}` ({e}); run "
            f"`scripts/upstream/corpus.py fetch {p['name']}=={p['version']}` (network) or set PD_UPSTREAM_CACHE"
        ) from e


def generate(names: tuple[str, ...] = ("vllm-ascend", "vllm", "aiconfigurator-core")) -> tuple[dict[str, str], list[str]]:
    """Relative path -> rendered table for every pinned package; plus the
    package kinds no generator exists for yet."""
    lock = corpus.load_lock()
    out: dict[str, str] = {}
    missing: list[str] = []
    for name in names:
        gen = GENERATORS[name]()
        if gen is None:
            missing.append(name)
            continue
        for p in lock["packages"]:
            if p["name"] != name:
                continue
            table = gen(source_of(p), p["version"])
            out[f"{name}/{p['version']}.json"] = render(table)
    return out, missing


def committed(kinds: list[str]) -> dict[str, str]:
    out = {}
    for kind in kinds:
        d = FACTS / kind
        if d.is_dir():
            for f in sorted(d.glob("*.json")):
                out[f"{kind}/{f.name}"] = f.read_text(encoding="utf-8")
    return out


def cmd_write() -> int:
    tables, missing = generate()
    kinds = sorted({k.split("/")[0] for k in tables})
    for rel in committed(kinds):
        if rel not in tables:
            (FACTS / rel).unlink()
            print(f"facts.py: removed {rel} (no pinned package)")
    for rel, text in tables.items():
        path = FACTS / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"facts.py: wrote {rel}")
    for name in missing:
        print(f"facts.py: no generator for `{name}` tables yet (scripts/upstream/facts_{name.replace('-', '_')}.py); left as they are")
    print(f"facts.py: {len(tables)} tables up to date in {FACTS.relative_to(ROOT)}")
    return 0


def cmd_check() -> int:
    tables, missing = generate()
    kinds = sorted({k.split("/")[0] for k in tables})
    have = committed(kinds)
    bad = []
    for rel in sorted(set(tables) | set(have)):
        want, got = tables.get(rel), have.get(rel)
        if want == got:
            continue
        if got is None:
            bad.append(f"upstream/facts/{rel}: missing (the corpus pins it)")
            continue
        if want is None:
            bad.append(f"upstream/facts/{rel}: no pinned package generates it")
            continue
        diff = list(
            difflib.unified_diff(
                got.splitlines(), want.splitlines(), f"committed/{rel}", f"corpus/{rel}", n=1, lineterm=""
            )
        )
        bad.append(f"upstream/facts/{rel}: stale\n" + "\n".join("    " + line for line in diff[:14]))
    for name in missing:
        print(f"facts.py: no generator for `{name}` tables yet; not checked", file=sys.stderr)
    if bad:
        print(
            "facts.py: the committed fact tables differ from the corpus; "
            "regenerate them with `python3 scripts/upstream/facts.py write` and review the diff:",
            file=sys.stderr,
        )
        for b in bad:
            print("  " + b, file=sys.stderr)
        return 1
    print(f"facts.py: {len(tables)} tables match the corpus")
    return 0


# ---------------------------------------------------------------------------------------
# diff
# ---------------------------------------------------------------------------------------


def _ascend(version: str) -> dict:
    lock = corpus.load_lock()
    try:
        p = corpus.entry(lock, "vllm-ascend", version)
    except corpus.CorpusError as e:
        raise FactsError(str(e)) from e
    return ascend_facts(source_of(p), version)


def _vllm(version: str) -> dict | None:
    gen = _vllm_generator()
    lock = corpus.load_lock()
    if gen is not None:
        try:
            p = corpus.entry(lock, "vllm", version)
        except corpus.CorpusError:
            p = None
        if p is not None:
            return gen(source_of(p), version)
    f = FACTS / "vllm" / f"{version}.json"
    if f.exists():
        return json.loads(f.read_text(encoding="utf-8"))
    return None


def _set_diff(title: str, old, new, out: list[str]):
    old, new = set(old), set(new)
    added, removed = sorted(new - old), sorted(old - new)
    if added or removed:
        out.append(f"{title}:")
        for x in added:
            out.append(f"  + {x}")
        for x in removed:
            out.append(f"  - {x}")


def _choices_summary(c: dict | None) -> str:
    if c is None:
        return "none"
    if "unread" in c:
        return "unread"
    return f"{len(c['values'])} values"


def _scalar(title: str, old, new, out: list[str]):
    if old != new:
        out.append(f"{title}: {json.dumps(old)} -> {json.dumps(new)}")


def diff_tables(a: dict, b: dict, va_flags: dict | None, vb_flags: dict | None) -> list[str]:
    out: list[str] = [f"vllm-ascend {a['version']} -> {b['version']}"]
    _scalar("vllm version", a["vllm"]["version"], b["vllm"]["version"], out)
    _scalar("version module", a["version_module"], b["version_module"], out)

    if va_flags is None or vb_flags is None:
        missing = [v for v, t in ((a["vllm"]["version"], va_flags), (b["vllm"]["version"], vb_flags)) if t is None]
        out.append(f"serve flags: no vllm table for {', '.join(missing)} (facts_vllm.py missing or vLLM not pinned)")
    else:
        fa = {f["name"]: f for f in va_flags["serve_flags"]}
        fb = {f["name"]: f for f in vb_flags["serve_flags"]}
        _set_diff(f"serve flags (vllm {va_flags['version']} -> {vb_flags['version']})", fa, fb, out)
        changed = [
            f"  ~ {n}: {json.dumps({k: fa[n][k] for k in ('kind', 'aliases', 'negatable')})} -> "
            f"{json.dumps({k: fb[n][k] for k in ('kind', 'aliases', 'negatable')})}"
            for n in sorted(set(fa) & set(fb))
            if any(fa[n][k] != fb[n][k] for k in ("kind", "aliases", "negatable"))
        ]
        if changed:
            out.append("serve flags changed:")
            out += changed
        choices: list[str] = []
        for n in sorted(set(fa) & set(fb)):
            ca, cb = fa[n].get("choices"), fb[n].get("choices")
            va = {json.dumps(v) for v in (ca or {}).get("values", [])}
            vb = {json.dumps(v) for v in (cb or {}).get("values", [])}
            # two unread lists differ only in where they were found
            if _choices_summary(ca) == _choices_summary(cb) and va == vb:
                continue
            choices.append(f"  ~ {n}: {_choices_summary(ca)} -> {_choices_summary(cb)}")
            choices += [f"    + {x}" for x in sorted(vb - va)] + [f"    - {x}" for x in sorted(va - vb)]
        if choices:
            out.append(f"serve flag choices (vllm {va_flags['version']} -> {vb_flags['version']}):")
            out += choices
        _set_diff(
            f"speculative methods (vllm {va_flags['version']} -> {vb_flags['version']})",
            [m["name"] for m in va_flags.get("speculative_methods", [])],
            [m["name"] for m in vb_flags.get("speculative_methods", [])],
            out,
        )

    ka = {k["key"]: k for k in a["additional_config"]}
    kb = {k["key"]: k for k in b["additional_config"]}
    _set_diff("additional_config keys", ka, kb, out)
    for k in sorted(set(ka) & set(kb)):
        sa, sb = ka[k]["sub_keys"] or [], kb[k]["sub_keys"] or []
        lines: list[str] = []
        _set_diff(f"additional_config.{k} sub-keys", sa, sb, lines)
        out += lines
        _scalar(f"additional_config.{k} strict", ka[k]["strict"], kb[k]["strict"], out)

    _set_diff("env reads", [e["name"] for e in a["env"]], [e["name"] for e in b["env"]], out)
    _set_diff("kv connectors", [c["name"] for c in a["kv_connectors"]], [c["name"] for c in b["kv_connectors"]], out)
    _set_diff(
        "serve flag choices widened by the platform",
        [w["flag"] for w in a.get("parser_choices_widened", [])],
        [w["flag"] for w in b.get("parser_choices_widened", [])],
        out,
    )

    for key in sorted(set(a["images"]) | set(b["images"])):
        ia, ib = a["images"].get(key), b["images"].get(key)
        if ia is None or ib is None:
            if ia != ib:
                out.append(f"image {key}: {'added' if ia is None else 'removed'} ({(ib or ia)['dockerfile']})")
            continue
        _scalar(f"image {key} FROM", ia["from"], ib["from"], out)
        _set_diff(f"image {key} apt packages", ia["apt_packages"], ib["apt_packages"], out)
        for t in ia["tools"]:
            if ia["tools"][t] != ib["tools"].get(t):
                out.append(f"image {key} tool {t}: {json.dumps(ia['tools'][t])} -> {json.dumps(ib['tools'].get(t))}")
        _set_diff(
            f"image {key} ENV",
            [f"{k}={v}" for k, v in ia["env"].items()],
            [f"{k}={v}" for k, v in ib["env"].items()],
            out,
        )
        _set_diff(f"image {key} ~/.bashrc lines", ia["bashrc"], ib["bashrc"], out)
        _set_diff(f"image {key} set_env scripts", ia["set_env_scripts"], ib["set_env_scripts"], out)
        _scalar(f"image {key} WORKDIR", ia["workdir"], ib["workdir"], out)
        _scalar(f"image {key} CMD", ia["cmd"], ib["cmd"], out)
        _scalar(f"image {key} mooncake", ia.get("mooncake"), ib.get("mooncake"), out)
    sa, sb = a.get("image_suffixes", {}), b.get("image_suffixes", {})
    for key in sorted((set(sa) | set(sb)) - {"source"}):
        _scalar(f"image {key} tag suffix", sa.get(key), sb.get(key), out)

    for name in sorted(set(a["scripts"]) | set(b["scripts"])):
        sa, sb = a["scripts"].get(name), b["scripts"].get(name)
        if sa is None or sb is None:
            if sa != sb:
                out.append(f"script {name}: {'added' if sa is None else 'removed'}")
            continue
        fa = {f["name"]: f for f in sa["flags"]}
        fb = {f["name"]: f for f in sb["flags"]}
        _set_diff(f"script {name} flags", fa, fb, out)
        for n in sorted(set(fa) & set(fb)):
            if fa[n] != fb[n]:
                out.append(f"script {name} {n}: {json.dumps(fa[n])} -> {json.dumps(fb[n])}")

    ea, eb = a["e2e"], b["e2e"]
    _set_diff("e2e config dirs", ea["config_dirs"], eb["config_dirs"], out)
    _scalar("e2e multi-node configs", ea["configs"], eb["configs"], out)
    _set_diff("e2e config root keys", ea["root_keys"], eb["root_keys"], out)
    _set_diff("e2e runner files", ea["runner"], eb["runner"], out)

    # The start-up checks and the other facts: every top-level fact not
    # shown above, compared without its `source` lines, which move every
    # release.
    for key in sorted((set(a) | set(b)) - DIFFED_ABOVE):
        _scalar(f"start-up fact {key}", _sourceless(a.get(key)), _sourceless(b.get(key)), out)
    if len(out) == 1:
        out.append("no change")
    return out


# The top-level facts `diff_tables` shows in their own sections.
DIFFED_ABOVE = {
    "package", "version", "vllm", "version_module", "additional_config", "env",
    "kv_connectors", "images", "image_suffixes", "scripts", "e2e",
}


def _sourceless(v):
    """`v` without its `source` and `*_source` entries (`path:line`)."""
    if isinstance(v, dict):
        return {k: _sourceless(x) for k, x in v.items() if k != "source" and not k.endswith("_source")}
    if isinstance(v, list):
        return [_sourceless(x) for x in v]
    return v


def cmd_diff(old: str, new: str) -> int:
    a, b = _ascend(old), _ascend(new)
    lines = diff_tables(a, b, _vllm(a["vllm"]["version"]), _vllm(b["vllm"]["version"]))
    print("\n".join(lines))
    return 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    try:
        if cmd == "write" and not rest:
            return cmd_write()
        if cmd in ("check", "--check") and not rest:
            return cmd_check()
        if cmd == "diff" and len(rest) == 2:
            return cmd_diff(*rest)
    except FactsError as e:
        print(f"facts.py: {e}", file=sys.stderr)
        return 1
    print(
        f"facts.py: unknown command `{' '.join(argv)}`; expected `write`, `check` (or `--check`) or `diff OLD NEW`",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
