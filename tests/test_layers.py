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

BUILD = "openxiv.indexer.building"
BUILD_COMMANDS = frozenset({"openxiv.indexer.cli", "openxiv.indexer.embed_cli"})
"""The modules beside the build that may import it: the ``openxiv index`` / ``embed`` commands."""
FRONTS = ("openxiv.service.http", "openxiv.service.mcp", "openxiv.service.terminal")
ENGINE = "openxiv.indexer.engine"

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


def _lines(at: list[int]) -> str:
    lines = sorted(set(at))
    return f"line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}"


def layer_violations(edges: dict[str, list[Import]]) -> list[str]:
    lines: dict[tuple[str, str], list[int]] = {}
    for source, found in edges.items():
        for imp in found:
            part, target_part = _part(source), _part(imp.target)
            if target_part not in ALLOWED.get(part, ()) and (source, target_part) not in EXCEPTIONS:
                lines.setdefault((source, imp.target), []).append(imp.line)
    return [
        f"{source} imports {target} ({_lines(at)}): {_part(source)} may not import {_part(target)}"
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


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _front(module: str) -> str | None:
    return next((f for f in FRONTS if _under(module, f)), None)


def _inner_rule(source: str, target: str) -> str | None:
    """Which rule below the parts ``source`` importing ``target`` breaks, or ``None``."""
    if _under(target, BUILD) and not _under(source, BUILD) and source not in BUILD_COMMANDS:
        return "serving never imports the build (read stored tables through openxiv.indexer.tables)"
    front, target_front = _front(source), _front(target)
    if front is not None and target_front is not None and front != target_front:
        return "a front never imports another front (shared guards: openxiv.service.guards)"
    if front is not None and _under(target, ENGINE):
        return "presentation never imports engine internals (openxiv.indexer.engine)"
    return None


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_module(target: str, source: str) -> bool:
    """``target`` is a private module (``pkg._name``) and ``source`` is outside ``pkg``."""
    parent, _, leaf = target.rpartition(".")
    return _private(leaf) and not _under(source, parent)


def private_names(module: str, path: Path, known: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """``("openxiv.x.y._name", line)`` for every private name of another module ``module`` uses: a
    ``from ... import _name`` of a name (not a module of the same package), or ``alias._name`` where
    ``alias`` is an imported openxiv module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _absolute(module, is_package, node.level, node.module)
            for a in node.names:
                full = f"{base}.{a.name}"
                if full in known:
                    aliases[a.asname or a.name] = full
                elif base.startswith("openxiv.") and base != module and _private(a.name):
                    yield full, node.lineno
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.asname and a.name in known:
                    aliases[a.asname] = a.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and aliases[node.value.id] != module
            and _private(node.attr)
        ):
            yield f"{aliases[node.value.id]}.{node.attr}", node.lineno


def rule_violations(root: Path, edges: dict[str, list[Import]], parts: Iterable[str] = PARTS) -> list[str]:
    """The violations of the rules below the parts (module docstring), one line each."""
    lines: dict[tuple[str, str, str], list[int]] = {}
    for source, found in edges.items():
        for imp in found:
            rule = _inner_rule(source, imp.target)
            if rule is None and _private_module(imp.target, source):
                rule = "a private module is imported only inside its package"
            if rule is not None:
                lines.setdefault((source, imp.target, rule), []).append(imp.line)
    known = modules(root, parts)
    for source, path in known.items():
        for name, line in private_names(source, path, known):
            lines.setdefault((source, name, "no module imports another module's private names"), []).append(
                line
            )
    return [
        f"{source} imports {target} ({_lines(at)}): {rule}"
        for (source, target, rule), at in sorted(lines.items())
    ]


def check(root: Path, parts: Iterable[str] = PARTS) -> list[str]:
    """Every violation of the rules under ``root``, one line each (empty: the code obeys them)."""
    edges = graph(root, parts)
    found = layer_violations(edges)
    found += rule_violations(root, edges, parts)
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


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"service/search.py": "from openxiv.indexer.building.sentences import SentenceTable\n"},
            "openxiv.service.search imports openxiv.indexer.building.sentences (line 1): "
            "serving never imports the build (read stored tables through openxiv.indexer.tables)",
        ),
        (
            {"indexer/snapshot.py": "def f():\n    from openxiv.indexer.building import tldrs\n"},
            "openxiv.indexer.snapshot imports openxiv.indexer.building.tldrs (line 2): "
            "serving never imports the build (read stored tables through openxiv.indexer.tables)",
        ),
        (
            {"service/mcp/transport.py": "from openxiv.service.http.guard import RequestGuardMiddleware\n"},
            "openxiv.service.mcp.transport imports openxiv.service.http.guard (line 1): "
            "a front never imports another front (shared guards: openxiv.service.guards)",
        ),
        (
            {"service/http/ui_render.py": "from openxiv.indexer.engine.sparse import analyze\n"},
            "openxiv.service.http.ui_render imports openxiv.indexer.engine.sparse (line 1): "
            "presentation never imports engine internals (openxiv.indexer.engine)",
        ),
        (
            {"indexer/building/terms.py": "from openxiv.indexer.engine.sparse import _TOKEN, analyze\n"},
            "openxiv.indexer.building.terms imports openxiv.indexer.engine.sparse._TOKEN (line 1): "
            "no module imports another module's private names",
        ),
        (
            {
                "indexer/building/s.py": "from openxiv.indexer.engine import sparse\nX = sparse._TOKEN.pattern\n"
            },
            "openxiv.indexer.building.s imports openxiv.indexer.engine.sparse._TOKEN (line 2): "
            "no module imports another module's private names",
        ),
        (
            {"corpus/parallel.py": "from openxiv.corpus.readers._jsonl import Span\n"},
            "openxiv.corpus.parallel imports openxiv.corpus.readers._jsonl (line 1): "
            "a private module is imported only inside its package",
        ),
    ],
)
def test_a_rule_below_the_parts_fails(tmp_path: Path, files: dict[str, str], expected: str) -> None:
    planted = {
        "indexer/building/__init__.py": "",
        "indexer/building/sentences.py": "",
        "indexer/building/tldrs.py": "",
        "indexer/engine/__init__.py": "",
        "indexer/engine/sparse.py": "_TOKEN = None\n",
        "service/http/__init__.py": "",
        "service/http/guard.py": "",
        "service/mcp/__init__.py": "",
        "corpus/readers/__init__.py": "",
        "corpus/readers/_jsonl.py": "",
    }
    assert check(_tree(tmp_path, {**planted, **files})) == [expected]


def test_what_the_rules_below_the_parts_allow(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "indexer/building/__init__.py": "",
            "indexer/building/job.py": "from openxiv.indexer.tables.tldrs import rules\nfrom . import _helper\n",
            "indexer/building/_helper.py": "",
            "indexer/cli.py": "from openxiv.indexer.building.job import build\n",
            "indexer/tables/__init__.py": "",
            "indexer/tables/tldrs.py": "def _own():\n    pass\n_own()\n",
            "service/guards/__init__.py": "",
            "service/guards/body.py": "",
            "service/http/__init__.py": "",
            "service/http/app.py": "from openxiv.service.guards.body import Guard\nfrom openxiv.service.http import ui\n",
            "service/http/ui.py": "from openxiv.indexer.analyzer import analyze\n",
            "indexer/analyzer.py": "",
            "service/mcp/__init__.py": "",
            "service/mcp/transport.py": "from openxiv.service.guards.body import Guard\n",
        },
    )
    assert check(root) == []
