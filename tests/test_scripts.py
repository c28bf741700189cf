"""The benchmark scripts measure the product as it runs, through its public names: no script imports a
private (``_name``) product name or reaches for one, none patches product code, scripts share code
through ``scripts/harness/`` (never by importing each other), there is one percentile function, and
every script says its kind by its name. Each rule is checked on the real ``scripts/`` tree and on a
planted violation, so it can fail. (``make lint`` type-checks ``scripts/`` with mypy.)"""

from __future__ import annotations

import ast
from collections.abc import Collection
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
KINDS = ("bench_", "check_", "tool_")
UNPREFIXED = {
    "run_benchmarks.py": "`make bench`'s driver: runs the bench_ scripts",
    "train_encoder.py": "named by the shipped encoder's encoder.json (`made.script`), so its name is data",
    "train_reranker.py": "named by the shipped reranker's reranker.json (`trained.script`), so its name is data",
}
PERCENTILE_HOME = SCRIPTS / "harness" / "timing.py"


def _script_modules() -> set[str]:
    """The top-level script modules (``scripts/<name>.py``), which nothing may import."""
    return {p.stem for p in SCRIPTS.glob("*.py")}


def _product_names(tree: ast.AST) -> set[str]:
    """Names a module binds by importing from the product (``import openxiv...``, ``from openxiv...``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(
                (a.asname or a.name).split(".")[0] for a in node.names if a.name.startswith("openxiv")
            )
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("openxiv"):
            names.update(a.asname or a.name for a in node.names)
    return names


def _root(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _is_setattr(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "setattr"
        and bool(node.args)
    )


def violations(source: str, siblings: Collection[str] = ()) -> list[str]:
    """What breaks the rules in one script's ``source``; ``siblings``: the script modules it must not import."""
    tree = ast.parse(source)
    product = _product_names(tree)
    out: list[str] = []
    for node in ast.walk(tree):
        where = f"line {getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module.startswith("openxiv"):
                out += [
                    f"{where}: private import {module}.{a.name}" for a in node.names if a.name.startswith("_")
                ]
                out += [f"{where}: private module {module}" for p in module.split(".") if p.startswith("_")]
            if module.split(".")[0] in siblings:
                out.append(f"{where}: imports the script {module} (share code through harness/)")
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("openxiv") and any(p.startswith("_") for p in a.name.split(".")):
                    out.append(f"{where}: private module {a.name}")
                if a.name.split(".")[0] in siblings:
                    out.append(f"{where}: imports the script {a.name} (share code through harness/)")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                out.append(f"{where}: private attribute {ast.unparse(node)}")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for leaf in ast.walk(t):
                    if isinstance(leaf, ast.Attribute) and _root(leaf) in product:
                        out.append(f"{where}: patches product code: {ast.unparse(leaf)} = ...")
        elif _is_setattr(node) and _root(node.args[0]) in product:
            out.append(f"{where}: patches product code: {ast.unparse(node)}")
    return out


def _scripts() -> list[Path]:
    return sorted(SCRIPTS.rglob("*.py"))


def test_scripts_use_public_product_names_only_and_patch_nothing() -> None:
    siblings = _script_modules()
    found = [
        f"{p.relative_to(ROOT)}: {v}"
        for p in _scripts()
        for v in violations(p.read_text(encoding="utf-8"), siblings)
    ]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize(
    ("planted", "says"),
    [
        ("from openxiv.corpus.writer import _insert\n", "private import"),
        ("import openxiv.indexer._hidden\n", "private module"),
        ("def f(backend):\n    return backend._encode('q')\n", "private attribute"),
        ("from openxiv.corpus import writer\nwriter.insert_rows = print\n", "patches product code"),
        ("from openxiv.service import search\nsearch.to_hit.__doc__ = ''\n", "patches product code"),
        (
            "import openxiv.indexer.engine.hybrid\nopenxiv.indexer.engine.hybrid.fuse = len\n",
            "patches product code",
        ),
        ("from openxiv.indexer.engine import hybrid\nsetattr(hybrid, 'fuse', len)\n", "patches product code"),
        ("from bench_quality import evaluate\n", "imports the script"),
        ("import bench_scale\n", "imports the script"),
    ],
)
def test_each_rule_catches_a_planted_violation(planted: str, says: str) -> None:
    found = violations(planted, {"bench_quality", "bench_scale"})
    assert any(says in v for v in found), found


def test_what_the_rules_allow() -> None:
    """Own private names, a third-party patch (onnxruntime, for the float-path runs) and harness imports."""
    allowed = (
        "import onnxruntime as ort\nfrom harness.timing import percentile\n"
        "class A:\n    def f(self):\n        return self._x\n"
        "ort.InferenceSession.__init__ = print\n"
        "from openxiv.corpus.settings.model import Settings\ns = Settings.from_env()\nargs = object()\n"
    )
    assert violations(allowed, {"bench_quality"}) == []


def test_one_percentile_function() -> None:
    """Every percentile is `harness.timing.percentile` (one interpolation rule across BENCHMARKS.md)."""
    spellings = ("np.percentile(", "numpy.percentile(", "quantiles(", "def pct(", "def percentile(")
    found = [
        f"{p.relative_to(ROOT)}: {s}"
        for p in _scripts()
        if p != PERCENTILE_HOME
        for s in spellings
        if s in p.read_text(encoding="utf-8")
    ]
    assert found == [], found
    assert "def percentile(" in PERCENTILE_HOME.read_text(encoding="utf-8")


def test_every_script_says_its_kind() -> None:
    top = {p.name for p in SCRIPTS.iterdir() if p.is_file() and p.suffix in (".py", ".sh")}
    assert set(UNPREFIXED) <= top, "an allowed unprefixed script is gone: drop it from UNPREFIXED"
    unnamed = sorted(n for n in top - set(UNPREFIXED) if not n.startswith(KINDS))
    assert unnamed == [], f"name these by kind ({', '.join(KINDS)}) or move them into scripts/harness/"


def test_harness_percentile_interpolates_like_numpy() -> None:
    """The one percentile is numpy's default (linear between ranks), NaN on nothing."""
    import math
    import sys

    import numpy as np

    sys.path.insert(0, str(SCRIPTS))
    try:
        from harness.timing import percentile
    finally:
        sys.path.remove(str(SCRIPTS))
    values = [5.0, 1.0, 9.0, 3.0, 7.5, 2.0, 11.0]
    for p in (0, 10, 50, 95, 99, 100):
        assert percentile(values, p) == pytest.approx(float(np.percentile(values, p)))
    assert math.isnan(percentile([], 50))
