"""The slow kinds of test are declared markers, and `-m "not slow"` leaves out every one of them."""

from __future__ import annotations

import tomllib
from pathlib import Path

from conftest import KIND_OF_FIXTURE, KIND_OF_TEST, SLOW_KINDS

ROOT = Path(__file__).resolve().parents[1]


def test_every_slow_kind_is_a_declared_marker() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    declared = {m.split(":")[0] for m in config["tool"]["pytest"]["ini_options"]["markers"]}
    assert {*SLOW_KINDS, "slow"} <= declared
    assert set(KIND_OF_FIXTURE.values()) | set(KIND_OF_TEST.values()) <= set(SLOW_KINDS)


def test_the_tests_named_by_file_exist() -> None:
    files = {p.name for p in (ROOT / "tests").rglob("test_*.py")}
    assert {key.split("::")[0] for key in KIND_OF_TEST} <= files
