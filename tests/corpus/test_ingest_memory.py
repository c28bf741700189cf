"""Hostile inputs cost bounded memory (issue 21, item 11): skipped lines are kept as a sample in
memory and all of them in ``ingest_errors``; a huge line inside a small gzip is refused while it is
being decompressed, never held whole. Peak RSS figures: scripts/bench_ingest_memory.py."""

from __future__ import annotations

import gzip
import json
import sqlite3
import tracemalloc
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from openxiv.corpus.cli import ingest
from openxiv.corpus.ingest import BATCH_ERRORS, ERROR_SAMPLE
from openxiv.corpus.readers import read_path
from openxiv.corpus.readers.limits import MAX_LINE_BYTES
from openxiv.corpus.records import PaperRecord, ReadError
from openxiv.corpus.store import Store

BAD = ERROR_SAMPLE + 2 * BATCH_ERRORS + 17


def test_a_flood_of_bad_lines_is_kept_in_the_database_not_in_memory(
    listing_files: list[Path], head: Any, tmp_path: Path
) -> None:
    path = tmp_path / "flood.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        fh.writelines(head(listing_files[0], 50))
        fh.writelines(f"{{broken {i}\n" for i in range(BAD))
    with Store(tmp_path / "c.sqlite") as store:
        summary = store.ingest(read_path(path))
    assert summary.read == 50 and summary.skipped == BAD
    assert len(summary.errors) == ERROR_SAMPLE  # the first ones, in order
    assert (
        summary.errors[0].location == "line 51" and summary.errors[-1].location == f"line {50 + ERROR_SAMPLE}"
    )
    with sqlite3.connect(tmp_path / "c.sqlite") as conn:
        assert conn.execute("SELECT count(*) FROM ingest_errors").fetchone()[0] == BAD

    report = tmp_path / "report.jsonl"
    run = CliRunner().invoke(
        ingest, ["--db", str(tmp_path / "d.sqlite"), str(path), "--report", str(report), "--no-progress"]
    )
    assert run.exit_code == 3, run.output
    assert f"Skipped {BAD} input(s):" in run.output and f"and {BAD - 20} more" in run.output
    rows = [json.loads(line) for line in report.read_text().splitlines()]
    assert rows[0]["skipped"] == BAD and len(rows) == BAD + 1
    assert [r["location"] for r in rows[1:]] == [f"line {51 + i}" for i in range(BAD)]


def test_a_huge_line_in_a_small_gzip_is_refused_while_decompressing(
    listing_files: list[Path], head: Any, tmp_path: Path
) -> None:
    """160 MB of one byte pack into ~160 KB, less than one block of input: decompressed in one call,
    the whole line was in memory at once."""
    good = head(listing_files[0], 2)
    path = tmp_path / "bomb.jsonl.gz"
    with gzip.open(path, "wb") as fh:
        fh.write(good[0].encode())
        fh.write(b'{"id": "2504.00001", "title": "')
        block = b"a" * (1 << 20)
        for _ in range(160):
            fh.write(block)
        fh.write(b'"}\n')
        fh.write(good[1].encode())
    assert path.stat().st_size < 1 << 20
    tracemalloc.start()
    try:
        items = list(read_path(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [type(i) for i in items] == [PaperRecord, ReadError, PaperRecord]
    err = items[1]
    assert isinstance(err, ReadError) and err.location == "line 2" and "line longer than" in err.reason
    assert peak < MAX_LINE_BYTES + (16 << 20), f"peak {peak / 2**20:.0f} MiB"
