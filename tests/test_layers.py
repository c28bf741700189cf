"""The layer rule and "no import cycle", checked by reading the code (an `ast` walk, nothing imported).

The rule (README, docs/architecture.md):

- ``corpus`` imports nothing of openxiv above it;
- ``indexer`` imports only ``corpus`` (and itself);
- ``service`` imports ``indexer`` and ``corpus``; ``evaluator`` only from its root CLI
  (``service/cli.py`` registers the ``eval``, ``agent`` and ``demo`` commands lazily);
- ``evaluator`` imports only ``corpus``;
- no import cycle between modules anywhere.

What counts as an import: every ``import`` and ``from ... import`` statement anywhere in a file, at
the top, inside a function (a lazy import is still a dependency) or under ``if TYPE_CHECKING:`` (a
reader and mypy follow it), relative ones resolved; and a ``"openxiv.x.y:attr"`` string, the lazy
command registry's spelling. ``from openxiv.a import b`` is an import of the module ``openxiv.a.b``
when that file exists, else of ``openxiv.a``. Importing ``openxiv.a.b`` also runs the package
``openxiv.a``'s ``__init__.py``; that is not counted as an edge (the ``__init__`` files hold no
imports of their children here), so a package importing its own child is not a cycle by itself.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PARTS = ("corpus", "indexer", "service", "evaluator")
ALLOWED: dict[str, frozenset[str]] = {
    "corpus": frozenset({"corpus"}),
    "indexer": frozenset({"corpus", "indexer"}),
    "service": frozenset({"corpus", "indexer", "service"}),
    "evaluator": frozenset({"corpus", "evaluator"}),
}
"""The parts each part may import (itself included)."""
EXCEPTIONS = {("openxiv.service.cli", "evaluator")}
"""(module, part) pairs allowed beyond `ALLOWED`: the root CLI registers the evaluator's commands."""
KNOWN: frozenset[str] = frozenset()
"""Violations that a move in flight removes, each the start of a line `check` writes; this allow-list
shrinks to empty once those moves are merged."""

_ENTRY = re.compile(r"^(openxiv(?:\.\w+)+):\w+$")


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int


def modules(root: Path, parts: Iterable[str] = PARTS) -> dict[str, Path]:
    """``openxiv.<part>.<...>`` -> file, for every ``.py`` file under the parts of ``root``."""
    found: dict[str, Path] = {}
    for part in parts:
        for path in sorted((root / part).rglob("*.py")):
            rel = path.relative_to(root).with_suffix("").parts
            name = ".".join(("openxiv", *(rel[:-1] if rel[-1] == "__init__" else rel)))
            found[name] = path
    return found


def _absolute(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute module of ``from <level dots><name> import ...`` written in ``module``."""
    if level == 0:
        return name or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def imports(module: str, path: Path, known: dict[str, Path]) -> Iterator[Import]:
    """Every openxiv module ``module`` (the file ``path``) imports; see the module docstring."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, is_package, node.level, node.module)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = _ENTRY.match(node.value)
            targets = [match.group(1)] if match else []
        for target in targets:
            if target.startswith("openxiv."):
                while target not in known and target.count(".") > 1:
                    target = target.rsplit(".", 1)[0]  # openxiv.a.b.Name -> openxiv.a.b
                yield Import(module, target, getattr(node, "lineno", 0))


def graph(root: Path, parts: Iterable[str] = PARTS) -> dict[str, list[Import]]:
    known = modules(root, parts)
    return {name: list(imports(name, path, known)) for name, path in known.items()}


def _part(module: str) -> str:
    return module.split(".")[1]


def layer_violations(edges: dict[str, list[Import]]) -> list[str]:
    lines: dict[tuple[str, str], list[int]] = {}
    for source, found in edges.items():
        for imp in found:
            part, target_part = _part(source), _part(imp.target)
            if target_part not in ALLOWED.get(part, ()) and (source, target_part) not in EXCEPTIONS:
                lines.setdefault((source, imp.target), []).append(imp.line)
    return [
        f"{source} imports {target} (line{'s' if len(at) > 1 else ''} {', '.join(map(str, sorted(set(at))))}): "
        f"{_part(source)} may not import {_part(target)}"
        for (source, target), at in sorted(lines.items())
    ]


def cycles(edges: dict[str, list[Import]]) -> list[list[str]]:
    """The strongly connected components with more than one module (or a module importing itself),
    each sorted; Tarjan's algorithm, iterative."""
    succ = {m: sorted({i.target for i in found if i.target in edges}) for m, found in edges.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for start in sorted(succ):
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(succ[node]):
                work.append((node, i + 1))
                nxt = succ[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    comp.append(m)
                    if m == node:
                        break
                if len(comp) > 1 or node in succ[node]:
                    out.append(sorted(comp))
    return sorted(out)


def check(root: Path, parts: Iterable[str] = PARTS) -> list[str]:
    """Every violation of the rule under ``root``, one line each (empty: the code obeys it)."""
    edges = graph(root, parts)
    found = layer_violations(edges)
    found += ["import cycle: " + " <-> ".join(comp) for comp in cycles(edges)]
    return found


# --- the repository -----------------------------------------------------------------------------------


def test_the_parts_obey_the_layer_rule_and_have_no_import_cycle() -> None:
    found = check(ROOT)
    assert [v for v in found if not any(v.startswith(k) for k in KNOWN)] == [], "\n".join(found)
    assert [k for k in KNOWN if not any(v.startswith(k) for v in found)] == [], "fixed: remove from KNOWN"


def test_the_walk_sees_the_whole_tree() -> None:
    known = modules(ROOT)
    assert {"openxiv.corpus.settings.model", "openxiv.service.cli", "openxiv.evaluator.cli"} <= set(known)
    edges = graph(ROOT)
    lazy = {i.target for i in edges["openxiv.service.cli"]}
    assert "openxiv.evaluator.cli" in lazy  # the string registry counts as an import


# --- the checker fails on planted violations ----------------------------------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for part in PARTS:
        (tmp_path / part).mkdir()
        (tmp_path / part / "__init__.py").write_text("")
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_a_clean_tree_passes(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "corpus/a.py": "import json\n",
            "indexer/b.py": "from openxiv.corpus import a\n",
            "service/c.py": "from openxiv.indexer.b import thing\nfrom . import d\n",
            "service/d.py": "",
            "service/cli.py": 'COMMANDS = {"eval": "openxiv.evaluator.e:group"}\n',
            "evaluator/e.py": "from openxiv.corpus.a import x\n",
        },
    )
    assert check(root) == []


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"corpus/a.py": "from openxiv.indexer.b import thing\n", "indexer/b.py": ""},
            "openxiv.corpus.a imports openxiv.indexer.b (line 1): corpus may not import indexer",
        ),
        (
            {"corpus/a.py": "def f():\n    from openxiv.service import c\n", "service/c.py": ""},
            "openxiv.corpus.a imports openxiv.service.c (line 2): corpus may not import service",
        ),
        (
            {
                "indexer/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import openxiv.service.c\n",
                "service/c.py": "",
            },
            "openxiv.indexer.b imports openxiv.service.c (line 3): indexer may not import service",
        ),
        (
            {"service/routes.py": "from openxiv.evaluator.e import score\n", "evaluator/e.py": ""},
            "openxiv.service.routes imports openxiv.evaluator.e (line 1): service may not import evaluator",
        ),
        (
            {"evaluator/e.py": 'LAZY = "openxiv.indexer.b:build"\n', "indexer/b.py": ""},
            "openxiv.evaluator.e imports openxiv.indexer.b (line 1): evaluator may not import indexer",
        ),
        (
            {"indexer/sub/x.py": "from ...service import c\n", "service/c.py": ""},
            "openxiv.indexer.sub.x imports openxiv.service.c (line 1): indexer may not import service",
        ),
    ],
)
def test_an_upward_import_fails(tmp_path: Path, files: dict[str, str], expected: str) -> None:
    assert check(_tree(tmp_path, files)) == [expected]


def test_a_cycle_fails_even_through_a_function_level_import(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "evaluator/io.py": "from openxiv.evaluator.matching import looks_like_id\n",
            "evaluator/matching.py": "def f():\n    from openxiv.evaluator import io\n",
            "corpus/a.py": "from . import b\n",
            "corpus/b.py": "from openxiv.corpus.c import x\n",
            "corpus/c.py": "import openxiv.corpus.a\n",
            "corpus/self.py": "from openxiv.corpus import self\n",
        },
    )
    assert check(root) == [
        "import cycle: openxiv.corpus.a <-> openxiv.corpus.b <-> openxiv.corpus.c",
        "import cycle: openxiv.corpus.self",
        "import cycle: openxiv.evaluator.io <-> openxiv.evaluator.matching",
    ]
