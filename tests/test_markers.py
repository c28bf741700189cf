"""The slow kinds of test are declared markers, and `-m "not slow"` leaves out every one of them."""

from __future__ import annotations

import ast
import importlib.util
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _root_conftest() -> object:
    """tests/conftest.py by path: the name ``conftest`` may be another folder's conftest already."""
    spec = importlib.util.spec_from_file_location(
        "openxiv_tests_root_conftest", ROOT / "tests" / "conftest.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_ROOT = _root_conftest()
SLOW_KINDS: dict[str, str] = _ROOT.SLOW_KINDS  # type: ignore[attr-defined]
KIND_OF_FIXTURE: dict[str, str] = _ROOT.KIND_OF_FIXTURE  # type: ignore[attr-defined]
KIND_OF_TEST: dict[str, str] = _ROOT.KIND_OF_TEST  # type: ignore[attr-defined]


def test_every_slow_kind_is_a_declared_marker() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    declared = {m.split(":")[0] for m in config["tool"]["pytest"]["ini_options"]["markers"]}
    assert {*SLOW_KINDS, "slow"} <= declared
    assert set(KIND_OF_FIXTURE.values()) | set(KIND_OF_TEST.values()) <= set(SLOW_KINDS)


def test_the_tests_named_by_file_exist() -> None:
    files = {p.name for p in (ROOT / "tests").rglob("test_*.py")}
    assert {key.split("::")[0] for key in KIND_OF_TEST} <= files


def _functions(path: Path) -> dict[str, ast.FunctionDef]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def test_each_extended_milvus_run_names_its_default_sibling() -> None:
    """A Milvus run moved out of the default suite is a test of a contract module whose docstring
    says it is extended and names the default-suite test that covers the same behaviour."""
    extended: set[str] = _ROOT.MILVUS_EXTENDED  # type: ignore[attr-defined]
    contract: set[str] = _ROOT.MILVUS_CONTRACT  # type: ignore[attr-defined]
    modules = {p.stem: p for p in (ROOT / "tests").rglob("test_*.py")}
    for key in sorted(extended):
        module, name = key.split("::")
        assert module in contract, key
        doc = ast.get_docstring(_functions(modules[module])[name]) or ""
        assert "extended" in doc and "default suite" in doc and "test_" in doc, key
