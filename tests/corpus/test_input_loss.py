"""Nothing under an input folder is lost in silence (issue 21, item 10): a sub-folder that cannot be
read, a broken symbolic link and a link loop are each reported, and the ingest exits 3."""

from __future__ import annotations

import ctypes
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from openxiv.corpus.readers import read_path
from openxiv.corpus.records import PaperRecord, ReadError

_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 1, 2


def _without_dac_override() -> None:
    """In the child before exec: drop the capabilities that let root read any file, so the child
    (still uid 0) meets ``chmod 000`` as any user does: ``os.scandir`` raises EACCES, the error
    the walk really sees on a folder it may not read."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _listing(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as fh:
        fh.writelines(lines)


@pytest.fixture()
def damaged_folder(listing_files: list[Path], head: Any, tmp_path: Path) -> Any:
    """``inputs/``: a readable listing (100 papers), ``locked/`` (100 more, mode 000), a broken
    link, a link to itself and a link to the folder above."""
    lines = head(listing_files[0], 200)
    root = tmp_path / "inputs"
    _listing(root / "a.jsonl.gz", lines[:100])
    _listing(root / "locked" / "b.jsonl.gz", lines[100:])
    (root / "gone.jsonl.gz").symlink_to(tmp_path / "nowhere.jsonl.gz")
    (root / "self.jsonl").symlink_to("self.jsonl")
    (root / "sub").mkdir()
    (root / "sub" / "up").symlink_to("..", target_is_directory=True)
    (root / "locked").chmod(0)
    yield root
    (root / "locked").chmod(0o755)


EXPECTED = {
    ("gone.jsonl.gz", "file"): "broken symbolic link",
    ("locked", "folder"): "cannot read folder: Permission denied",
    ("self.jsonl", "file"): "symbolic link loop",
    ("sub/up", "folder"): "symbolic link loop",
}


def test_links_that_lead_nowhere_are_reported(damaged_folder: Path) -> None:
    """Links root meets too (the locked folder it reads: root bypasses the mode)."""
    items = list(read_path(damaged_folder))
    errors = {(e.source, e.location): e.reason for e in items if isinstance(e, ReadError)}
    assert set(errors) == set(EXPECTED) - {("locked", "folder")}, errors
    for key, reason in errors.items():
        assert EXPECTED[key] in reason, (key, reason)
    assert sum(isinstance(i, PaperRecord) for i in items) == 200


def test_unreadable_folder_is_reported_and_exits_3(damaged_folder: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.jsonl"
    run = subprocess.run(
        [sys.executable, "-m", "openxiv.service.cli", "ingest", str(damaged_folder), "--db",
         str(tmp_path / "c.sqlite"), "--report", str(report), "--no-progress"],
        capture_output=True, text=True, timeout=300, preexec_fn=_without_dac_override,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    assert run.returncode == 3, (run.returncode, run.stdout, run.stderr)
    assert "read 100, added 100" in run.stdout and "skipped 4" in run.stdout
    for (source, location), reason in EXPECTED.items():
        assert f"  {source}, {location}: " in run.stdout and reason in run.stdout, (source, run.stdout)
    rows = [json.loads(line) for line in report.read_text().splitlines()]
    assert rows[0]["skipped"] == 4
    assert {(r["source"], r["location"]) for r in rows[1:]} == set(EXPECTED)


def test_parallel_ingest_reports_the_same(damaged_folder: Path) -> None:
    from openxiv.corpus.parallel import read_parallel, read_tasks

    serial = [i for i in read_path(damaged_folder) if isinstance(i, ReadError)]
    tasks = read_tasks([damaged_folder])
    parallel = [i for i in read_parallel(tasks, None, 2) if isinstance(i, ReadError)]
    assert parallel == serial and len(serial) == 3
