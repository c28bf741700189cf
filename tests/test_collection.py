"""Every test file runs in some suite: no folder or file drops out of pytest's collection unseen.

pytest skips folders by name (its default ``norecursedirs`` holds ``build``, ``dist``, ``venv`` ...),
and ``tests/indexer/build/`` once dropped out that way: its 35 tests never ran in any suite. Every
suite (`make test`, `test-heavy`, `test-all`, `test-fast`) walks the tree the same way (the
configuration in pyproject.toml) and differs only in its ``-m`` marker expression. So the check has
two halves:

- the walk: every ``tests/**/test_*.py`` on disk is collected by pytest under the project's own
  configuration (`collected_files`, pytest's walk itself, through the `collection_probe` plugin);
- the markers: every marker the default suite leaves out (``-m 'not heavy and not extended'`` in
  ``addopts``) is run by a named suite in the Makefile (``-m heavy``, or ``-m ""`` for all), so every
  collected test is in the default suite or in a named one.

Both halves are shown to fail on planted trees: a folder named ``build`` under pytest's default
``norecursedirs``, and a marker left out with no suite to run it.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
PROBE_ARGS = ("-p", "collection_probe", "-p", "no:cacheprovider", "--collect-only", "-q")


def collected_files(root: Path) -> set[str]:
    """The test files (paths relative to ``root``) pytest collects when run in ``root`` with its
    configuration, each once (`collection_probe`: pytest's walk, no test module imported)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", *PROBE_ARGS, "--rootdir", str(root)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode in (0, 5), run.stdout + run.stderr  # 5: nothing collected
    return {line.split("::")[0] for line in run.stdout.splitlines() if line.endswith("::probe")}


def files_on_disk(root: Path) -> set[str]:
    """Every ``test_*.py`` under ``root``'s ``tests/`` (hidden and cache folders aside)."""
    return {
        p.relative_to(root).as_posix()
        for p in (root / "tests").rglob("test_*.py")
        if not any(part.startswith(".") or part == "__pycache__" for part in p.relative_to(root).parts)
    }


def uncovered_markers(addopts: str, makefile: str) -> list[str]:
    """The markers the default suite leaves out (``not X`` in ``addopts``' ``-m``) that no Makefile
    suite runs (``pytest ... -m X``, or ``-m ""``: every test)."""
    args = shlex.split(addopts)
    expr = args[args.index("-m") + 1] if "-m" in args else ""
    left_out = re.findall(r"\bnot\s+(\w+)", expr)
    suites: set[str] = set()
    for line in makefile.splitlines():
        if "pytest" in line and "-m" in line:
            words = shlex.split(line.split("pytest", 1)[1])
            suites.add(words[words.index("-m") + 1] if words.index("-m") + 1 < len(words) else "")
    if "" in suites:
        return []
    return [m for m in left_out if m not in suites]


# --- the repository -----------------------------------------------------------------------------------


def test_every_test_file_is_collected() -> None:
    on_disk = files_on_disk(ROOT)
    assert "tests/indexer/building/test_reproducible_build.py" in on_disk
    missing = sorted(on_disk - collected_files(ROOT))
    assert missing == [], f"test files no suite collects: {missing}"


def test_every_marker_the_default_suite_leaves_out_has_a_suite() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    addopts = config["tool"]["pytest"]["ini_options"]["addopts"]
    assert "not heavy" in addopts
    assert uncovered_markers(addopts, (ROOT / "Makefile").read_text(encoding="utf-8")) == []


# --- the checks fail on planted trees -----------------------------------------------------------------


def _plant(root: Path, ini: str) -> Path:
    (root / "pyproject.toml").write_text(f'[tool.pytest.ini_options]\ntestpaths = ["tests"]\n{ini}')
    for rel in ("tests/part/test_a.py", "tests/part/build/test_b.py", "tests/build/test_c.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("def test_x() -> None:\n    assert True\n")
    return root


def test_a_folder_pytest_skips_by_default_is_found(tmp_path: Path) -> None:
    root = _plant(tmp_path, "")  # pytest's default norecursedirs: `build` is skipped
    assert files_on_disk(root) - collected_files(root) == {
        "tests/part/build/test_b.py",
        "tests/build/test_c.py",
    }


def test_a_norecursedirs_that_keeps_build_folders_collects_them(tmp_path: Path) -> None:
    root = _plant(tmp_path, 'norecursedirs = [".*", "__pycache__"]\n')
    assert collected_files(root) == files_on_disk(root)


def test_a_marker_left_out_without_a_suite_is_found() -> None:
    makefile = "test:\n\tpytest -q\ntest-heavy:\n\tpytest -q -m heavy\n"
    assert uncovered_markers("-ra -m 'not heavy and not extended'", makefile) == ["extended"]
    assert uncovered_markers("-ra -m 'not heavy'", makefile) == []
    assert uncovered_markers("-ra -m 'not heavy and not extended'", makefile + 'all:\n\tpytest -m ""\n') == []
