"""Documents that are not arXiv papers (issue 39, item 2): the corpus keeps arXiv ids only.

A benchmark collection with other ids (CSFCube's Semantic Scholar ids) maps them itself
(``scripts/bench_csfcube.py``, docs/corpus.md "Documents that are not arXiv papers"); ingest keeps
refusing every record whose id is not an arXiv id, foreign or malformed, line by line. Real listing
lines of ../shared with the id swapped.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

from click.testing import CliRunner

from openxiv.corpus.cli import EXIT_SKIPPED, ingest

REFUSED = {
    "10010426": "a bare Semantic Scholar corpus id",
    "s2:10010426": "a namespaced foreign id",
    "2313.00001": "month 13",
    "0612.0001": "a new-style id before 0704",
    "1501.0001": "a 4-digit number after 1412",
    "hep-th/9013001": "an old-style month 13",
    "10.1145/3340531.3412123": "a DOI outside arXiv",
}
ACCEPTED = {"csfcube/9108001": "csfcube/9108001", "arXiv:2301.00001v2": "2301.00001"}


def test_ingest_refuses_foreign_and_malformed_ids(listing_files: list[Path], tmp_path: Path) -> None:
    with gzip.open(listing_files[0], "rt", encoding="utf-8") as fh:
        lines = [json.loads(next(fh)) for _ in range(len(REFUSED) + len(ACCEPTED))]
    given = [*REFUSED, *ACCEPTED]
    src = tmp_path / "foreign.jsonl"
    src.write_text("".join(json.dumps({**obj, "id": i}) + "\n" for obj, i in zip(lines, given, strict=True)))
    db = tmp_path / "c.sqlite"
    result = CliRunner().invoke(ingest, ["--db", str(db), "--format", "listing", str(src), "--no-progress"])
    assert result.exit_code == EXIT_SKIPPED, result.output
    for n, bad in enumerate(REFUSED, 1):
        assert f"foreign.jsonl, line {n}:" in result.output, (bad, REFUSED[bad], result.output)
    with sqlite3.connect(db) as con:
        stored = {r[0] for r in con.execute("SELECT arxiv_id FROM papers")}
    assert stored == set(ACCEPTED.values())
