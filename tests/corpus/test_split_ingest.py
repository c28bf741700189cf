"""One big OAI/Kaggle metadata file is parsed by every ingest worker, in line-aligned byte ranges,
and stores what the serial ingest stores (issue 24, item 4).

The file is made of real records from ../shared: the OAI-snapshot objects the unarXive sample
carries, and listing records written in the OAI format (as ``scripts/bench_scale_steps.py oai`` writes
them), some of them again later as a second version (merged, so the order of storing matters),
with a malformed line, an invalid id and blank lines planted among them.
"""

from __future__ import annotations

import gzip
import json
import shutil
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from openxiv.corpus.parallel import _split, read_tasks
from openxiv.corpus.readers import read_file
from openxiv.corpus.readers.split import spans, split_format
from openxiv.corpus.records import ReadError
from openxiv.corpus.shared import SharedData
from openxiv.corpus.store import Store

SPLIT = 16_384
"""Bytes per range in these tests: the ~0.5 MB file is cut into ~30 ranges."""
BAD = "{not json\n"


def _oai(listing: dict[str, Any], version: int = 1) -> dict[str, Any]:
    """A listing record as a line of the OAI snapshot (`scripts/bench_scale_steps.py`'s ``write_oai``)."""
    seen = date.fromisoformat(listing["first_seen"])
    created = seen.strftime("%a, %d %b %Y 00:00:00 GMT")
    names = [a for a in listing["authors"] if a.split()]
    return {"id": listing["id"], "submitter": names[0] if names else None, "authors": ", ".join(names),
            "title": listing["title"], "comments": listing.get("comment"), "journal-ref": None, "doi": None,
            "report-no": None, "categories": " ".join(listing["categories"]), "license": None,
            "abstract": listing["abstract"],
            "versions": [{"version": f"v{v}", "created": created} for v in range(1, version + 1)],
            "update_date": seen.isoformat(),
            "authors_parsed": [[a.split()[-1], " ".join(a.split()[:-1]), ""] for a in names]}  # fmt: skip


@pytest.fixture(scope="module")
def snapshot(shared_data: SharedData, head, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """~330 lines, ~0.5 MB: real OAI objects, listing records, a malformed line, an invalid id."""
    meta = [json.loads(line)["metadata"] for line in head(shared_data.unarxive, 1000)]
    listing = [json.loads(line) for line in head(shared_data.listing("cs"), 260)]
    lines = [json.dumps(m) + "\n" for m in meta]
    lines += [json.dumps(_oai(r), ensure_ascii=False) + "\n" for r in listing[:200]]
    lines.insert(120, BAD)
    lines.insert(150, "\n")
    lines.insert(170, json.dumps({**meta[0], "id": "not-an-id"}) + "\n")
    lines += [json.dumps(_oai(r, 2), ensure_ascii=False) + "\n" for r in listing[::3]]  # v2 of the same
    lines += [json.dumps(_oai(r), ensure_ascii=False) + "\n" for r in listing[200:]]
    lines[-1] = lines[-1].rstrip("\n")  # the last line without its newline
    path = tmp_path_factory.mktemp("split") / "arxiv-metadata-oai-snapshot.json"
    path.write_text("".join(lines), encoding="utf-8")
    assert path.stat().st_size > 20 * SPLIT
    return path


def test_spans_cover_the_file_at_line_starts_with_true_line_numbers(snapshot: Path) -> None:
    data = snapshot.read_bytes()
    for size in (1, 1000, SPLIT, len(data) // 2, len(data)):
        cut = list(spans(snapshot, size))
        assert b"".join(data[s:e] for s, e, _ in cut) == data
        assert all(s == 0 or data[s - 1 : s] == b"\n" for s, _, _ in cut)
        assert [line for _, _, line in cut] == [data[:s].count(b"\n") + 1 for s, _, _ in cut]
        assert len(cut) == 1 or all(e - s >= size for s, e, _ in cut[:-1])
    line_start = [e for _, e, _ in spans(snapshot, SPLIT)][3]
    assert next(spans(snapshot, line_start))[1] == line_start  # a target at a line start ends a span


def test_the_spans_read_what_the_whole_file_reads(snapshot: Path) -> None:
    whole = list(read_file(snapshot))
    parts = [item for span in spans(snapshot, SPLIT) for item in read_file(snapshot, "oai", span=span)]
    assert parts == whole
    bad_line = snapshot.read_text(encoding="utf-8").split("\n").index(BAD.strip()) + 1
    errors = [e for e in whole if isinstance(e, ReadError)]
    assert [(e.location, e.reason.split(":")[0]) for e in errors] == [
        (f"line {bad_line}", "invalid JSON"),
        (f"line {bad_line + 50}", "invalid id"),
    ]


def test_which_files_are_cut(snapshot: Path, tmp_path: Path) -> None:
    assert split_format(snapshot, None, SPLIT) == "oai"
    assert split_format(snapshot, "oai", snapshot.stat().st_size) is None  # not larger than a range
    packed = tmp_path / "snapshot.jsonl.gz"
    packed.write_bytes(gzip.compress(snapshot.read_bytes(), compresslevel=1))
    named_plain = tmp_path / "packed.jsonl"
    shutil.copy(packed, named_plain)
    assert split_format(packed, None, 100) is None  # a deflate stream decodes only from its start
    assert split_format(named_plain, "oai", 100) is None  # gzip data is known by its bytes
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("[1, 2, 3]\n" * 10_000)
    assert split_format(garbage, None, 100) is None  # its "unknown format" error is the whole file's
    units = list(_split(read_tasks([packed, snapshot]), None, SPLIT))
    assert units[0] == (str(packed), None, False)
    assert len(units) > 20 and {u[:3] for u in units[1:]} == {(str(snapshot), "oai", False)}


def _ingest(db: Path, inputs: list[Path], *extra: str) -> tuple[int, str]:
    from openxiv.service.cli import cli

    args = ["ingest", "--db", str(db), "--no-progress", "--report", f"{db}.report", *extra, *map(str, inputs)]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    summary = next(line for line in result.output.splitlines() if line.startswith(f"{db}:"))
    return result.exit_code, summary.split(":", 1)[1].split(" in ")[0]  # "read 1, added 1, ..."


def _contents(db: Path) -> dict[str, Any]:
    with Store.open_readonly(db) as store, store.engine.connect() as conn:
        rows = {t: conn.execute(text(f"SELECT * FROM {t} ORDER BY 1, 2")).all()
                for t in ("papers", "paper_authors", "paper_categories", "paper_sources")}  # fmt: skip
        errors = conn.execute(text("SELECT source, location, reason FROM ingest_errors ORDER BY id")).all()
        runs = conn.execute(
            text("SELECT status, read, added, updated, unchanged, skipped FROM ingest_runs ORDER BY id")
        ).all()
        return {"fingerprint": store.fingerprint(), "rows": rows, "errors": errors, "runs": runs}


def _report(db: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in Path(f"{db}.report").read_text(encoding="utf-8").splitlines()]
    for key in ("db", "seconds", "run_id"):
        lines[0].pop(key, None)
    return lines


def test_workers_parse_one_big_file_in_ranges_and_store_what_the_serial_ingest_stores(
    snapshot: Path, tmp_path: Path
) -> None:
    serial, parallel = tmp_path / "serial.sqlite", tmp_path / "w2.sqlite"
    workers = ("--ingest-workers", "2", "--ingest-split-bytes", str(SPLIT))
    assert _ingest(serial, [snapshot]) == _ingest(parallel, [snapshot], *workers)
    assert _report(parallel) == _report(serial)
    want = _contents(serial)
    assert len(want["rows"]["papers"]) > 250 and len(want["errors"]) == 2
    assert _contents(parallel) == want
    code, again = _ingest(parallel, [snapshot], *workers)  # a re-ingest changes nothing
    assert code == 3 and again.startswith(" read ") and "added 0, updated 0" in again
    assert _contents(parallel)["fingerprint"] == want["fingerprint"]


def test_a_split_ingest_completes_an_interrupted_one(snapshot: Path, tmp_path: Path) -> None:
    """An ingest stopped after its first batches left them committed; running the same ingest again
    with workers stores the rest, as a serial rerun does."""
    lines = snapshot.read_bytes().split(b"\n")
    first = tmp_path / "first" / snapshot.name  # the same file name: the same record sources
    first.parent.mkdir()
    first.write_bytes(b"\n".join(lines[:100]) + b"\n")
    serial, parallel = tmp_path / "serial.sqlite", tmp_path / "w2.sqlite"
    for db in (serial, parallel):
        _ingest(db, [first])
    _ingest(serial, [snapshot])
    _ingest(parallel, [snapshot], "--ingest-workers", "2", "--ingest-split-bytes", str(SPLIT))
    assert _contents(parallel) == _contents(serial)
