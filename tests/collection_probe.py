"""A pytest plugin for `test_collection.py`: pytest walks the tree as every suite does (``testpaths``,
``norecursedirs``, ``python_files``, conftest ``collect_ignore``), but each test file it would import
becomes one placeholder item (``<file>::probe``) instead: the walk is pytest's own, and no test module
is imported, so the whole tree is listed in seconds.

Used as ``python -m pytest -p collection_probe --collect-only -q`` with this folder on ``PYTHONPATH``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

PROBE = "probe"


class ProbeItem(pytest.Item):
    def runtest(self) -> None:  # only collected, never run
        raise AssertionError("a collection probe does not run")


class ProbeFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        yield ProbeItem.from_parent(self, name=PROBE)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.Collector:
    """Called for every file pytest's python plugin would import as a test module."""
    return ProbeFile.from_parent(parent, path=module_path)
