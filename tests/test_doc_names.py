"""The architecture page and README's layout section name only what exists.

docs/architecture.md and README's «Project layout» walk a reader through the code by its file paths
and names (`service/search.py` `deepxiv_search`, `HybridBackend._rank`, `Store.copy_to`); a rename
that forgets them leaves a guide to code that is not there. This test reads every code span
(`` `...` ``) of both, and every file and folder the layout trees list, and resolves them against
the tree, reading the code with `ast` (nothing imported):

- a path (``indexer/engine/hybrid.py``, ``engine/sparse.py``, ``encoders/``, ``routes_*.py``) exists,
  from the root, from a part, or (a bare file name) anywhere in the repository;
- a dotted name exists: ``Class.member`` (a method, property or attribute of a class of that name),
  ``module.name`` (a module named by its file stem or dotted path, and a name defined in it), or a
  module (``openxiv.indexer.building.job``);
- a name written as code (``run_search``, ``CorpusRead``: with an underscore or a capital) is defined
  somewhere in the product: a function, class, constant, class member or ``self.`` attribute;
- in a layout tree (the fenced block), each ``*.py`` file and ``folder/`` an entry lists exists
  under the folder the entry describes.

Quoted history (lines starting ``>``) is not checked: it names code that is gone on purpose. The
checker is shown to fail on planted wrong names at the end.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeGuard

import pytest

ROOT = Path(__file__).resolve().parents[1]
PARTS = ("corpus", "indexer", "service", "evaluator")
SPAN = re.compile(r"`([^`\n]+)`")
NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
FILE = re.compile(r"^[\w*.-]*\w\.(?:py|md|toml|txt|html|css|json|sh|yml)$")
TREE_ENTRY = re.compile(r"^( *)([\w.-]+/) {2,}")  # a folder, then the column of its description
TREE_FILE = re.compile(r"(?<![\w/.])([\w*]+\.py)\b")
TREE_DIR = re.compile(r"(?<![\w/.`])(\w+/)(?=[\s,;)(]|$)")
SKIPPED_DIRS = {".git", ".venv", "build", "node_modules", "__pycache__", "data"}


@dataclass
class Code:
    """What the product defines, read with `ast`: module names, their top-level names, class members."""

    root: Path
    modules: dict[str, set[str]] = field(default_factory=dict)
    """Dotted module (``openxiv.indexer.engine.hybrid``) -> the names defined at its top level."""
    classes: dict[str, set[str]] = field(default_factory=dict)
    """Class name -> its members (defs, class-level and ``self.`` attributes), over all classes of that name."""
    strings: set[str] = field(default_factory=set)
    """The identifier-shaped string constants (stage names, MCP tool names, settings)."""

    @classmethod
    def read(cls, root: Path) -> Code:
        code = cls(root)
        for part in PARTS:
            for path in sorted((root / part).rglob("*.py")):
                rel = path.relative_to(root).with_suffix("").parts
                name = ".".join(("openxiv", *(rel[:-1] if rel[-1] == "__init__" else rel)))
                tree = ast.parse(path.read_text(encoding="utf-8"))
                code.modules[name] = code._names(tree)
                code.strings |= {
                    n.value
                    for n in ast.walk(tree)
                    if isinstance(n, ast.Constant) and isinstance(n.value, str) and NAME.match(n.value)
                }
        return code

    def _names(self, tree: ast.Module) -> set[str]:
        names: set[str] = set()
        for node in tree.body:
            names |= _defined(node)
            if isinstance(node, ast.ClassDef):
                members = self.classes.setdefault(node.name, set())
                for item in ast.walk(node):
                    members |= _defined(item) if item is not node else set()
                    if _assigned_attribute(item):
                        members.add(item.attr)
        return names

    def everything(self) -> set[str]:
        out = set().union(*self.modules.values(), *self.classes.values(), self.classes)
        return out | {m.rsplit(".", 1)[-1] for m in self.modules}

    def module(self, dotted: str) -> str | None:
        """The module ``dotted`` names: a full path, a suffix of one (``engine.sparse``), a file stem."""
        found = [m for m in self.modules if m == dotted or m.endswith("." + dotted)]
        return found[0] if len(found) >= 1 else None

    def resolves(self, dotted: str) -> bool:
        if self.module(dotted) is not None:
            return True
        head, _, last = dotted.rpartition(".")
        if not head:
            return dotted in self.everything() or dotted in self.strings
        if head in self.classes and last in self.classes[head]:
            return True
        module = self.module(head)
        return module is not None and (last in self.modules[module] or f"{module}.{last}" in self.modules)


def _assigned_attribute(node: ast.AST) -> TypeGuard[ast.Attribute]:
    """``self.x = ...`` or ``cls.x = ...``."""
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in ("self", "cls")
        and isinstance(node.ctx, ast.Store)
    )


def _defined(node: ast.AST) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return {node.target.id}
    return set()


def path_exists(root: Path, text: str) -> bool:
    """``text`` (a path, possibly with ``*``) exists from the root, from a part, or anywhere (a bare name)."""
    text = text.rstrip("/")
    bases = [root, *(root / p for p in PARTS)]
    if any(list(b.glob(text)) for b in bases):
        return True
    if "/" in text:
        return False
    return any(p for p in root.rglob(text) if not SKIPPED_DIRS & set(p.relative_to(root).parts))


def looks_like_code(span: str) -> bool:
    """A name written as code (an underscore, a dot or a capital inside), not a placeholder such as
    ``openxiv.X.Y`` (a one-letter capital part)."""
    if not NAME.match(span) or any(len(p) == 1 and p.isupper() for p in span.split(".")):
        return False
    return "." in span or "_" in span or any(c.isupper() for c in span[1:])


def span_problems(text: str, code: Code) -> list[str]:
    """Every code span of ``text`` (outside fenced blocks and quoted history) that names nothing."""
    problems = []
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    for line in prose.splitlines():
        if line.lstrip().startswith(">"):
            continue
        for span in SPAN.findall(line):
            span = span.removesuffix("()")
            if "/" in span or FILE.match(span):  # a URL path (``/search``) or ``../shared`` is no file here
                placeholder = any(len(p) == 1 and p.isupper() for p in re.split(r"[/.]", span))
                if (
                    re.fullmatch(r"\w[\w*./-]*", span)
                    and not placeholder
                    and not path_exists(code.root, span)
                ):
                    problems.append(f"no such path: {span}")
            elif looks_like_code(span) and not code.resolves(span):
                problems.append(f"no such name: {span}")
    return problems


def tree_problems(text: str, root: Path) -> list[str]:
    """Every ``*.py`` file and ``folder/`` a layout tree (fenced block) lists that its folder lacks."""
    problems = []
    for block in re.findall(r"^```\n(.*?)^```", text, flags=re.S | re.M):
        stack: list[tuple[int, Path]] = []
        for line in block.splitlines():
            entry = TREE_ENTRY.match(line)
            indent = len(line) - len(line.lstrip(" "))
            # an entry, a continuation (deeper than its entry) or files at an entry's level
            stack = [(i, p) for i, p in stack if i < indent]
            if entry:
                folder = (stack[-1][1] if stack else root) / entry.group(2)
                if not folder.is_dir():
                    problems.append(f"no such folder: {folder.relative_to(root)}/")
                    continue
                stack.append((indent, folder))
                line = line[entry.end() :]
            if not stack:
                continue
            folder = stack[-1][1]
            for name in TREE_FILE.findall(line):
                if not list(folder.rglob(name)):
                    problems.append(f"no such file under {folder.relative_to(root)}/: {name}")
            for name in TREE_DIR.findall(SPAN.sub("", line)):
                if not [p for p in folder.rglob(name.rstrip("/")) if p.is_dir()]:
                    problems.append(f"no such folder under {folder.relative_to(root)}/: {name}")
    return problems


def readme_layout(readme: str) -> str:
    start = readme.index("## Project layout")
    return readme[start : readme.index("\n## ", start + 1)]


def documents(root: Path) -> dict[str, str]:
    return {
        "docs/architecture.md": (root / "docs" / "architecture.md").read_text(encoding="utf-8"),
        "README.md «Project layout»": readme_layout((root / "README.md").read_text(encoding="utf-8")),
    }


# --- the repository -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def code() -> Code:
    return Code.read(ROOT)


@pytest.mark.parametrize("name", list(documents(ROOT)))
def test_every_path_and_name_the_guide_mentions_exists(name: str, code: Code) -> None:
    text = documents(ROOT)[name]
    assert span_problems(text, code) + tree_problems(text, ROOT) == []


def test_the_readme_lists_the_search_backend_protocol_as_it_is() -> None:
    """README names each `SearchBackend` method with its parameters, and how many there are."""
    tree = ast.parse((ROOT / "indexer" / "backend.py").read_text(encoding="utf-8"))
    (protocol,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "SearchBackend"]
    methods = {
        f.name: [a.arg for a in (*f.args.args[1:], *f.args.kwonlyargs)]
        for f in protocol.body
        if isinstance(f, ast.FunctionDef)
    }
    layout = readme_layout((ROOT / "README.md").read_text(encoding="utf-8"))
    listed = dict(re.findall(r"`(\w+)\(([^)]*)\)", layout[layout.index("`SearchBackend` protocol") :]))
    assert {
        m: [p.strip() for p in args.split(",") if p.strip() not in ("", "*")] for m, args in listed.items()
    } == methods
    words = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
    assert f"the same {words[len(methods)]} methods" in " ".join(layout.split())


# --- the checker fails on planted wrong names -----------------------------------------------------------


def _planted(tmp_path: Path) -> Code:
    for part in PARTS:
        (tmp_path / part).mkdir()
    (tmp_path / "indexer" / "engine").mkdir()
    (tmp_path / "indexer" / "engine" / "hybrid.py").write_text(
        "class HybridBackend:\n    def __init__(self):\n        self.meta = 1\n    def _rank(self):\n        pass\n"
        "def page_hits():\n    pass\n"
    )
    return Code.read(tmp_path)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("the stages of `HybridBackend._search`", "no such name: HybridBackend._search"),
        ("`hybrid.page_hit` builds the page", "no such name: hybrid.page_hit"),
        ("then `run_serach`", "no such name: run_serach"),
        ("see `indexer/engine/hybird.py`", "no such path: indexer/engine/hybird.py"),
        ("see `engine/prf.py`", "no such path: engine/prf.py"),
        ("see `build/embcache.py`", "no such path: build/embcache.py"),
    ],
)
def test_a_wrong_name_or_path_fails(tmp_path: Path, text: str, problem: str) -> None:
    code = _planted(tmp_path)
    good = "`HybridBackend._rank`, `HybridBackend.meta`, `hybrid.page_hits`, `engine/hybrid.py`, `page_hits()`, `X.Y`"
    assert span_problems(good, code) == []
    assert span_problems(f"{good}\n{text}\n> history: `HybridBackend._gone`\n", code) == [problem]


def test_a_wrong_file_or_folder_in_a_layout_tree_fails(tmp_path: Path) -> None:
    _planted(tmp_path)
    tree = "```\nindexer/     the index\n  engine/    answering\n             (hybrid.py)\n  hybrid.py  at the index's level\n```\n"
    assert tree_problems(tree, tmp_path) == []
    wrong = "```\nindexer/     the index\n  engine/    answering (hybrid.py, sparse.py), tables/\n  build/     gone\n```\n"
    assert tree_problems(wrong, tmp_path) == [
        "no such file under indexer/engine/: sparse.py",
        "no such folder under indexer/engine/: tables/",
        "no such folder: indexer/build/",
    ]
