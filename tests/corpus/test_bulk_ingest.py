"""The fast paths of a listing ingest (issue 13) on real data: same rows, same fingerprint, same errors.

- a whole shared listing file lands with the counts and the corpus fingerprint the code before the
  fast paths gave (computed with it on the same file);
- a first load into an empty database builds its secondary indexes after the load; the database
  it leaves is row for row the one an ingest with the indexes in place leaves;
- the indexes come back after a first load that was interrupted, and after one killed with -9
  (simulated by dropping them), at the next writable open;
- orjson reads the lines, but a line it could read differently from ``json`` gets ``json``'s
  object and message; a truncated gzip file keeps every whole line before the break.
"""

from __future__ import annotations

import gc
import gzip
import itertools
import json
import sqlite3
import weakref
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from openxiv.corpus import ingest as ingest_module
from openxiv.corpus.bulkload import deferred_indexes
from openxiv.corpus.readers import jsonl, read_path
from openxiv.corpus.records import PaperRecord, ReadError
from openxiv.corpus.schema import UNINDEXED, Base
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.store import Store

SETTINGS = Settings(passage_words=180, passage_overlap=40)

ASTRO_COUNTS = {"read": 14189, "added": 14152, "updated": 37, "unchanged": 0, "skipped": 0}
ASTRO_FINGERPRINT = "0a70e97c80ac2384042e2f1992858682b3e6c86d8b6a62013533bcc154883e2c"
"""What the ingest before issue 13's fast paths (commit 402b54b) gave for
``listing-astro-2504-2606.jsonl.gz`` into a fresh database: the fast paths must not change a paper."""


def _astro(listing_files: list[Path]) -> Path:
    (path,) = [p for p in listing_files if p.name == "listing-astro-2504-2606.jsonl.gz"]
    return path


def _indexes(db: Path) -> set[str]:
    con = sqlite3.connect(db)
    try:
        return {
            r[0]
            for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
        }
    finally:
        con.close()


def _rows(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of the tables an ingest fills, keyed by arXiv id (not by the row ids)."""
    con = sqlite3.connect(db)
    try:
        cols = [r[1] for r in con.execute("PRAGMA table_info(papers)") if r[1] != "id"]
        out = {"papers": con.execute(f"SELECT {', '.join(cols)} FROM papers ORDER BY arxiv_id").fetchall()}
        for table, rest in [
            ("paper_authors", "c.position, c.name, c.name_norm"),
            ("paper_categories", "c.position, c.category"),
            ("paper_sources", "c.source"),
        ]:
            q = f"SELECT p.arxiv_id, {rest} FROM {table} c JOIN papers p ON p.id = c.paper_id ORDER BY 1, 2"
            out[table] = con.execute(q).fetchall()
        return out
    finally:
        con.close()


def test_a_real_listing_file_lands_as_before(listing_files: list[Path], tmp_path: Path) -> None:
    store = Store(tmp_path / "c.sqlite")
    summary = store.ingest(read_path(_astro(listing_files)), settings=SETTINGS)
    assert summary.counts() == ASTRO_COUNTS
    assert store.fingerprint() == ASTRO_FINGERPRINT
    again = store.ingest(read_path(_astro(listing_files)), settings=SETTINGS)
    assert again.counts() == {**ASTRO_COUNTS, "added": 0, "updated": 0, "unchanged": ASTRO_COUNTS["read"]}
    assert store.fingerprint() == ASTRO_FINGERPRINT
    store.close()


def test_first_load_builds_indexes_after_and_leaves_the_same_rows(
    listing_files: list[Path], head, tmp_path: Path
) -> None:
    lines = head(_astro(listing_files), 3000)
    src = tmp_path / "listing-part.jsonl"
    src.write_text("".join(lines))
    wanted = {str(ix.name) for ix in deferred_indexes(Base.metadata)}
    assert {"ix_papers_primary_category", "ix_papers_title_norm"} <= wanted

    fresh_db = tmp_path / "fresh.sqlite"
    fresh = Store(fresh_db)
    seen_during: list[set[str]] = []

    def watched() -> Iterator[PaperRecord | ReadError]:
        for i, item in enumerate(read_path(src)):
            if i == 2500:  # mid-run: the indexes were dropped in a transaction of their own
                seen_during.append(_indexes(fresh_db))
            yield item

    fresh.ingest(watched(), settings=SETTINGS)
    fresh.close()
    assert not (wanted & seen_during[0]), "the secondary indexes are dropped while a first load runs"
    assert wanted <= _indexes(fresh_db)

    # the same lines into a database that already holds a paper: indexes kept up to date row by row
    kept_db = tmp_path / "kept.sqlite"
    kept = Store(kept_db)
    first, rest = lines[:1], lines[1:]
    (tmp_path / "one.jsonl").write_text("".join(first))
    (tmp_path / "rest.jsonl").write_text("".join(rest))
    kept.ingest(read_path(tmp_path / "one.jsonl"), settings=SETTINGS)
    assert wanted <= _indexes(kept_db)
    kept.ingest(read_path(tmp_path / "rest.jsonl"), settings=SETTINGS)
    kept.close()

    a, b = _rows(fresh_db), _rows(kept_db)
    sources = {"listing:listing-part.jsonl", "listing:one.jsonl", "listing:rest.jsonl"}
    assert {r[1] for r in b["paper_sources"]} <= sources
    assert a["papers"] == b["papers"]
    assert a["paper_authors"] == b["paper_authors"]
    assert a["paper_categories"] == b["paper_categories"]
    assert Store.open_readonly(fresh_db).fingerprint() == Store.open_readonly(kept_db).fingerprint()


def test_an_interrupted_first_load_still_builds_its_indexes(
    listing_files: list[Path], tmp_path: Path
) -> None:
    db = tmp_path / "c.sqlite"
    store = Store(db)

    def cut_short() -> Iterator[PaperRecord | ReadError]:
        yield from itertools.islice(read_path(_astro(listing_files)), 6000)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        store.ingest(cut_short(), settings=SETTINGS)
    store.close()
    wanted = {str(ix.name) for ix in deferred_indexes(Base.metadata)}
    assert wanted <= _indexes(db)
    assert Store.open_readonly(db).stats()["papers"] == 5000  # the one committed batch


class _Cycle:
    """An object in a reference cycle with itself: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_the_collector_runs_once_per_batch_and_is_restored(listing_files: list[Path], tmp_path: Path) -> None:
    """The automatic collector is off while an ingest runs; garbage cycles made during a batch are
    collected once the batch is written (memory stays bounded), and the collector's state is
    restored after the run, also when it fails, and left off when the caller turned it off."""
    cycles: list[weakref.ref[_Cycle]] = []
    seen: dict[str, object] = {}

    def with_cycles() -> Iterator[PaperRecord | ReadError]:
        for i, item in enumerate(read_path(_astro(listing_files))):
            if i < 5000:
                cycles.append(weakref.ref(_Cycle()))  # garbage at once, but only a collection frees it
            if i == 5000:  # the first batch was written when this record arrived
                seen["enabled"] = gc.isenabled()
            if i == 5001:
                seen["alive"] = sum(ref() is not None for ref in cycles)
            if i == 6000:
                break
            yield item

    store = Store(tmp_path / "c.sqlite")
    assert gc.isenabled()
    store.ingest(with_cycles(), settings=SETTINGS)
    assert seen == {"enabled": False, "alive": 0}
    assert gc.isenabled()

    def failing() -> Iterator[PaperRecord | ReadError]:
        yield from itertools.islice(read_path(_astro(listing_files)), 10)
        raise RuntimeError("broken input")

    with pytest.raises(RuntimeError):
        store.ingest(failing(), settings=SETTINGS)
    assert gc.isenabled()
    gc.disable()
    try:
        store.ingest(itertools.islice(read_path(_astro(listing_files)), 10), settings=SETTINGS)
        assert not gc.isenabled()
    finally:
        gc.enable()
    store.close()


def test_indexes_missing_after_a_kill_are_rebuilt_by_the_next_writable_open(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    Store(db).close()
    con = sqlite3.connect(db)
    con.execute("DROP INDEX ix_papers_primary_category")
    con.execute("DROP INDEX ix_papers_title_norm")
    con.commit()
    con.close()
    store = Store(db)
    assert sorted(store.rebuilt_indexes) == ["ix_papers_primary_category", "ix_papers_title_norm"]
    store.close()
    assert {"ix_papers_primary_category", "ix_papers_title_norm"} <= _indexes(db)
    assert Store(db).rebuilt_indexes == []


def test_lines_orjson_could_read_otherwise_get_json_s_reading(tmp_path: Path) -> None:
    big = 12345678901234567890123
    lines = [
        json.dumps({"id": "2301.00001", "title": "A paper", "authors": ["A. Author"]}),
        '{"id": ' + str(big) + ', "title": "Big number id"}',  # json reads an int, orjson a float
        '{"id": "2301.00002", "title": "Lone \\ud800 surrogate"}',
        '{"id": "2301.00003", "title": "Pair \\ud83d\\ude00 of surrogates", "abstract": "x  y\\n z"}',
        '{"id": "2301.00004", "title": NaN}',
        '{"id": "2301.00005", "title": "ok", "authors": "Not A List"}',
    ]
    src = tmp_path / "l.jsonl"
    src.write_text("\n".join(lines) + "\n")
    items = list(read_path(src, format="listing"))
    recs = [i for i in items if isinstance(i, PaperRecord)]
    errs = {i.location: i.reason for i in items if isinstance(i, ReadError)}
    assert [r.arxiv_id for r in recs] == ["2301.00001", "2301.00003"]
    assert recs[1].title == "Pair \U0001f600 of surrogates" and recs[1].abstract == "x y z"
    assert errs == {
        "line 2": f"id is not a string: {big}",
        "line 3": "title: a lone surrogate (\\ud800-\\udfff escape) is not text",
        "line 5": "title: expected a string, got a number",
        "line 6": "authors: expected an array of strings, got a string",
    }


def test_a_truncated_gzip_keeps_every_whole_line_before_the_break(
    listing_files: list[Path], tmp_path: Path
) -> None:
    data = _astro(listing_files).read_bytes()[:1_000_000]
    whole_lines = zlib.decompressobj(wbits=31).decompress(data).count(b"\n")
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(data)
    items = list(read_path(cut, format="listing"))
    assert sum(isinstance(i, PaperRecord) for i in items) == whole_lines
    assert isinstance(items[-1], ReadError) and items[-1].location == f"line {whole_lines + 1}"
    with gzip.open(cut, "rt") as fh, pytest.raises(EOFError):
        fh.read()


def test_a_corrupt_gzip_keeps_the_lines_before_the_damage_and_says_why(
    listing_files: list[Path], tmp_path: Path
) -> None:
    """Damaged (not truncated) deflate data: zlib raises its own error, which escaped the line reader
    ("listing reader failed: error: Error -3 ..."); it is the file's one `ReadError` now, naming the
    line it stopped at, and every whole line before the damage lands."""
    data = bytearray(_astro(listing_files).read_bytes()[:1_000_000])
    data[450_000:450_016] = b"\xff" * 16  # in the middle of the deflate stream: an invalid block type
    decoder = zlib.decompressobj(wbits=31)
    readable = b""
    with pytest.raises(zlib.error, match="invalid block type"):
        for start in range(0, len(data), 1024):
            before = decoder.copy()
            readable += decoder.decompress(bytes(data[start : start + 1024]))
    for byte in data[start : start + 1024]:  # what the step that failed gives before the damage
        try:
            readable += before.decompress(bytes([byte]))
        except zlib.error:
            break
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(bytes(data))
    items = list(read_path(bad, format="listing"))
    records = [i for i in items if isinstance(i, PaperRecord)]
    errors = [i for i in items if isinstance(i, ReadError)]
    assert len(errors) == 1 and errors[0] is items[-1]
    assert errors[0].location == f"line {len(records) + 1}"
    assert "cannot read file" in errors[0].reason and "gzip" in errors[0].reason
    assert 0 < len(records) == readable.count(b"\n")  # every whole line before the damage


def test_the_columns_no_query_looks_up_have_no_index(listing_files: list[Path], head, tmp_path: Path) -> None:
    """`schema.UNINDEXED` columns get no index; the look-ups openxiv's SQL makes on those tables
    (by title, by paper id for the writer's child rows) still search an index."""
    src = tmp_path / "part.jsonl"
    src.write_text("".join(head(_astro(listing_files), 200)))
    db = tmp_path / "c.sqlite"
    with Store(db) as store:
        store.ingest(read_path(src), settings=SETTINGS)
    con = sqlite3.connect(db)
    try:
        indexed = {
            f"{table}.{col[2]}"
            for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
            for ix in con.execute(f"PRAGMA index_list({table})").fetchall()
            for col in con.execute(f"PRAGMA index_info({ix[1]})").fetchall()
        }
        assert "papers.title_norm" in indexed and not set(UNINDEXED) & indexed
        for sql, index in [
            ("SELECT arxiv_id FROM papers WHERE title_norm IN ('a')", "ix_papers_title_norm"),
            ("SELECT * FROM paper_authors WHERE paper_id IN (1, 2)", "PRIMARY KEY"),
            ("SELECT * FROM paper_categories WHERE paper_id IN (1, 2)", "PRIMARY KEY"),
            ("SELECT paper_id, source FROM paper_sources WHERE paper_id IN (1, 2)", "sqlite_autoindex"),
        ]:
            plan = " ".join(r[3] for r in con.execute(f"EXPLAIN QUERY PLAN {sql}"))
            assert "SEARCH" in plan and index in plan, (sql, plan)
    finally:
        con.close()


def _reference_lines(path: Path, limit: int) -> list[bytes | None]:
    """The lines `gzip.GzipFile` (or the plain file) gives, ``None`` for one over ``limit`` bytes."""
    opener = gzip.open if path.read_bytes()[:2] == b"\x1f\x8b" else open
    out: list[bytes | None] = []
    with opener(path, "rb") as fh:
        for line in fh:
            out.append(None if len(line.rstrip(b"\n")) > limit else line)
    return out


def test_lines_of_gzip_members_padding_and_long_lines_are_gzip_s(
    listing_files: list[Path], head, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The block reader gives the lines `gzip.GzipFile` gives: two members with zero padding
    between them, lines over the limit (mid-file, and last without a line break) reported alone,
    in gzipped and plain files; data after a member that is not one is "not a gzipped file"."""
    limit = 3000
    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", limit)
    lines = [line.encode() for line in head(_astro(listing_files), 400)]
    assert max(map(len, lines)) > limit > min(map(len, lines))
    body = b"".join(lines)
    for name, data in [
        ("members.jsonl.gz", gzip.compress(body[:300_000]) + b"\0" * 700 + gzip.compress(body[300_000:])),
        ("last-long.jsonl.gz", gzip.compress(body + b"x" * (2 * limit))),
        ("plain.jsonl", body + b"y" * (limit - 5)),
        ("plain-long.jsonl", body + b"z" * (300_000)),
    ]:
        path = tmp_path / name
        path.write_bytes(data)
        with path.open("rb") as raw:
            got = list(jsonl._lines(jsonl._blocks(raw)))
        assert got == _reference_lines(path, limit), name
        assert None in got
    items = list(read_path(tmp_path / "members.jsonl.gz", format="listing"))
    errors = [i for i in items if isinstance(i, ReadError)]
    assert len(items) == 400 and all(e.reason == f"line longer than {limit:,} bytes" for e in errors)
    bad = tmp_path / "trailing.jsonl.gz"
    bad.write_bytes(gzip.compress(b"".join(lines[:5])) + b"\0\0PK\x03\x04")
    items = list(read_path(bad, format="listing"))
    assert [type(i) for i in items] == [PaperRecord] * 5 + [ReadError]
    with gzip.open(bad, "rb") as fh, pytest.raises(gzip.BadGzipFile) as info:
        fh.read()
    assert items[-1].reason == f"cannot read file: {info.value}"
    crc = bytearray(gzip.compress(b"".join(lines[:5])))
    crc[-8] ^= 1  # a wrong checksum in the trailer: every line is whole, the file ends with the error
    bad.write_bytes(bytes(crc))
    items = list(read_path(bad, format="listing"))
    assert [type(i) for i in items] == [PaperRecord] * 5 + [ReadError]
    assert items[-1].reason.startswith("cannot read file: corrupt gzip data")


def test_a_first_load_writes_without_foreign_key_checks_and_leaves_every_reference_whole(
    listing_files: list[Path], fulltext_dir: Path, head, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer's rows on a first load skip SQLite's per-row foreign-key check (`ingest._batch`):
    the database it leaves passes ``PRAGMA foreign_key_check`` (papers with authors, categories,
    sources, sections and passages, and papers updated within the load), the checks are back on
    for every later use of the store, and a later ingest runs with them."""
    lines = head(_astro(listing_files), 400)
    src = tmp_path / "listing-part.jsonl"
    src.write_text("".join(lines + lines[:50]))  # 50 papers seen twice: updated within the load
    (unarxive,) = sorted(fulltext_dir.glob("unarxive-*.jsonl.gz"))
    db = tmp_path / "c.sqlite"
    store = Store(db)
    during: list[int] = []
    real_write = ingest_module.write_batch

    def spy(conn, *args, **kwargs):  # type: ignore[no-untyped-def]
        during.append(conn.exec_driver_sql("PRAGMA foreign_keys").scalar())
        return real_write(conn, *args, **kwargs)

    monkeypatch.setattr(ingest_module, "write_batch", spy)
    first = store.ingest(itertools.chain(read_path(src), read_path(unarxive)), settings=SETTINGS)
    assert first.added == 400 + 49 and first.updated + first.unchanged == 50
    again = store.ingest(read_path(src), settings=SETTINGS)  # not a first load: checks on
    assert again.added == 0
    assert during == [0, 1], during
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    store.close()
    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA foreign_key_check").fetchall() == []
        assert con.execute("SELECT count(*) FROM passages").fetchone()[0] > 1000
        assert con.execute("SELECT count(*) FROM paper_authors").fetchone()[0] > 1000
    finally:
        con.close()
