"""``openxiv search`` and ``openxiv paper`` as a person reads them in a terminal (issue 21, item 8),
and a ``between`` range with equal ends on the command line (item 3), on the BM25-only snapshot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from openxiv.service.cli import cli

PAPER = "hep-ph/0004165"  # a plain text with sections and long paragraphs
LISTED = "2504.13996"  # a listing paper (metadata and abstract only)


def run(root: Path, *args: str, columns: int = 80) -> Result:
    runner = CliRunner(env={"COLUMNS": str(columns)})
    return runner.invoke(cli, [*args, "--index", str(root)], catch_exceptions=False)


def test_a_search_without_hits_ends_its_line(bm25_snapshot: Path) -> None:
    none = run(bm25_snapshot, "search", "qwxyzzyq")
    assert none.exit_code == 0 and none.output == (
        "No papers found for 'qwxyzzyq'. Try other keywords or fewer filters.\n"
    )
    past = run(bm25_snapshot, "search", "galaxy", "--offset", "5000", "--long")
    assert past.exit_code == 0 and "past the" in past.output and past.output.endswith("end.\n")


READS = [
    ("search", "magnetic field", "--long", "-k", "5"),
    ("paper", PAPER),
    ("paper", PAPER, "--section", "Introduction"),
    ("paper", LISTED, "--brief"),
    ("paper", LISTED, "--full"),
    ("paper", PAPER, "--find", "magnetic field mass"),
]


@pytest.mark.parametrize("columns", [40, 72, 120])
def test_long_search_and_paper_wrap_to_the_terminal_width(bm25_snapshot: Path, columns: int) -> None:
    for args in READS:
        out = run(bm25_snapshot, *args, columns=columns)
        assert out.exit_code == 0, out.output
        wide = [line for line in out.output.splitlines() if len(line) > columns and " " in line.strip()]
        assert not wide, (args, columns, wide[:3])
        unwrapped = run(bm25_snapshot, *args, columns=100_000).output
        assert out.output.split() == unwrapped.split(), args  # only line breaks differ
        assert max(len(line) for line in unwrapped.splitlines()) > columns  # there was wrapping to do


def test_a_between_range_with_equal_ends_is_that_period(bm25_snapshot: Path) -> None:
    between = ["--date-search-type", "between", "--date-str", "2025-04", "--date-str", "2025-04"]
    equal = run(bm25_snapshot, "search", "galaxy", "-k", "20", *between, "--json")
    assert equal.exit_code == 0, equal.output
    exact = run(
        bm25_snapshot,
        "search",
        "galaxy",
        "-k",
        "20",
        "--date-search-type",
        "exact",
        "--date-str",
        "2025-04",
        "--json",
    )
    body = json.loads(equal.output)
    assert body["result"] and all(h["date"].startswith("2025-04") for h in body["result"])
    assert body == json.loads(exact.output)


def test_a_closed_pipe_ends_quietly_with_0(bm25_snapshot: Path) -> None:
    """``openxiv search ... | head -1`` (issue 36, item 7): when the reader has closed the pipe,
    openxiv ends with 0 and says nothing, as ``grep`` and ``git`` do (Click's own answer is exit 1).
    The read end is closed before openxiv writes, so its first write meets it, whatever the timing."""
    for args in (["search", "model", "-k", "100"], ["search", "model", "--json"], ["paper", PAPER]):
        read, write = os.pipe()
        os.close(read)
        try:
            proc = subprocess.run(
                [str(Path(sys.executable).parent / "openxiv"), *args, "--index", str(bm25_snapshot)],
                stdout=write, stderr=subprocess.PIPE, timeout=300, check=False,
            )  # fmt: skip
        finally:
            os.close(write)
        assert proc.returncode == 0 and proc.stderr == b"", (args, proc.stderr.decode(errors="replace"))
