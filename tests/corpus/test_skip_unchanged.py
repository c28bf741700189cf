"""``openxiv ingest --skip-unchanged`` on real ../shared files: unchanged inputs are not read again
(size + mtime, or the content hash after a touch), changed ones and those that had errors are."""

from __future__ import annotations

import gzip
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from openxiv.corpus.cli import ingest
from openxiv.corpus.shared import SharedData


@pytest.fixture()
def inputs(shared_data: SharedData, tmp_path: Path, head: Any) -> Path:
    """A folder like ../shared/data: 200 listing lines, the unarXive sample, a valid and a broken PDF."""
    root = tmp_path / "data"
    for sub in ("corpus", "fulltext", "pdfs"):
        (root / sub).mkdir(parents=True)
    with gzip.open(root / "corpus" / "listing-head.jsonl.gz", "wt") as fh:
        fh.writelines(head(shared_data.listings[0], 200))
    shutil.copy(shared_data.fulltext / "unarxive-2212-sample.jsonl.gz", root / "fulltext")
    valid = min((shared_data.pdfs / "valid").glob("*.pdf"), key=lambda p: p.stat().st_size)
    shutil.copy(valid, root / "pdfs")
    shutil.copy(sorted((shared_data.pdfs / "broken").glob("*.pdf"))[0], root / "pdfs")
    (root / "pdfs" / "MANIFEST.json").write_text('{"not": "input"}')  # a folder's .json: passed over
    return root


def _ingest(db: Path, root: Path, *extra: str) -> Any:
    args = ["--db", str(db), "--skip-unchanged", "--no-progress", *extra]
    return CliRunner().invoke(ingest, args + [str(root / s) for s in ("corpus", "fulltext", "pdfs")])


def test_unchanged_inputs_are_not_read_again(inputs: Path, tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    first = _ingest(db, inputs)
    assert first.exit_code == 3, first.output  # the broken PDF is skipped: finished with exit 3
    assert "read 250, added 250" in first.output and "skipped 1" in first.output

    # nothing changed: only the broken PDF is read again (its error is reported again, exit 3 again)
    second = _ingest(db, inputs)
    assert second.exit_code == 3, second.output
    assert "4 of 5 input file(s) unchanged since they were ingested, not read again" in second.output
    assert "read 0, added 0, updated 0, unchanged 0, skipped 1" in second.output

    # a touch changes the mtime, not the content: the hash says unchanged (and is not asked again)
    listing = inputs / "corpus" / "listing-head.jsonl.gz"
    os.utime(listing, ns=(listing.stat().st_atime_ns, listing.stat().st_mtime_ns + 10**9))
    touched = _ingest(db, inputs)
    assert "4 of 5 input file(s) unchanged" in touched.output, touched.output

    # a changed file (one line fewer, other size) is read again, and only it
    with gzip.open(listing, "rt") as fh:
        lines = fh.readlines()
    with gzip.open(listing, "wt") as fh:
        fh.writelines(lines[:-1])
    changed = _ingest(db, inputs)
    assert "3 of 5 input file(s) unchanged" in changed.output, changed.output
    assert "read 199, added 0, updated 0, unchanged 199, skipped 1" in changed.output

    # another passage setting makes other records from the same bytes: everything is read again
    other = _ingest(db, inputs, "--passage-words", "150")
    assert "unchanged since" not in other.output, other.output
    assert "read 249" in other.output


def test_without_the_flag_every_input_is_read(inputs: Path, tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    assert _ingest(db, inputs).exit_code == 3
    args = ["--db", str(db), "--no-progress", str(inputs / "corpus")]
    plain = CliRunner().invoke(ingest, args)
    assert plain.exit_code == 0, plain.output
    assert "read 200, added 0, updated 0, unchanged 200" in plain.output
