"""The parsed source of one vllm-ascend sdist for `facts_ascend.py`: `Package`
(every module of `vllm_ascend/`) and its `Module`s, the helpers reading them
(`_parse`, `_rel`, `_str_const`), and `FactsError`."""

from __future__ import annotations

import ast
from pathlib import Path


PKG = "vllm_ascend"


class FactsError(Exception):
    pass


def _rel(src: Path, p: Path) -> str:
    return p.relative_to(src).as_posix()


def _parse(path: Path) -> ast.Module:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as e:
        raise FactsError(f"`{path}` is not valid Python ({e}); expected a parsable source file") from e


def _str_const(node) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


# --------------------------------------------------------------------------------------
# Package modules
# --------------------------------------------------------------------------------------


class Module:
    """One source file; parsed on first use (most files read none of the facts)."""

    def __init__(self, pkg: "Package", rel: str, path: Path):
        self.pkg = pkg
        self.rel = rel
        self.path = path
        self.text = path.read_text(encoding="utf-8")
        self._tree: ast.Module | None = None
        self.defs: dict[str, ast.AST] = {}
        self.imports: dict[str, tuple[str, str]] = {}

    @property
    def tree(self) -> ast.Module:
        if self._tree is None:
            self._tree = tree = _parse(self.path)
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    self.defs[node.name] = node
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    for a in node.names:
                        self.imports[a.asname or a.name] = (node.module, a.name)
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    self.pkg.owner[id(node)] = self
                if isinstance(node, ast.ClassDef):
                    for item in node.body:
                        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            self.pkg.parent_class[id(item)] = node
        return self._tree


class Package:
    """Every module of `vllm_ascend/` in path order."""

    def __init__(self, src: Path):
        self.src = src
        root = src / PKG
        if not root.is_dir():
            raise FactsError(f"`{src}` has no `{PKG}/` directory; expected an unpacked vllm-ascend sdist")
        self.modules: dict[str, Module] = {}
        self.by_name: dict[str, Module] = {}
        self.owner: dict[int, Module] = {}
        self.parent_class: dict[int, ast.ClassDef] = {}
        for p in sorted(root.rglob("*.py")):
            rel = _rel(src, p)
            m = Module(self, rel, p)
            self.modules[rel] = m
            dotted = rel[:-3].replace("/", ".")
            if dotted.endswith(".__init__"):
                dotted = dotted[: -len(".__init__")]
            self.by_name[dotted] = m

    def lookup(self, mod: Module, name: str):
        mod.tree  # noqa: B018 (parses the module, filling defs and imports)
        if name in mod.defs:
            return mod.defs[name]
        if name in mod.imports:
            target_mod, target_name = mod.imports[name]
            tm = self.by_name.get(target_mod)
            if tm is not None and tm.tree is not None and target_name in tm.defs:
                return tm.defs[target_name]
        return None
