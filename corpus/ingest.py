"""The ingest loop of `Store.ingest`: records in, batches of one transaction each, the run recorded.

Records are gathered into batches of `BATCH_RECORDS` (or `BATCH_CHARS` of full text) and each batch
is merged and written by `openxiv.corpus.writer.write_batch` in one transaction, with the inputs
skipped so far; a killed ingest leaves every committed batch and an intact database. An ingest into
an empty database builds its secondary indexes once at the end (`openxiv.corpus.bulkload`).

Python's cyclic garbage collector is paused while the loop runs and collects the young objects
once per batch instead (`_collect_per_batch`): a batch keeps thousands of records, lists and rows
alive, which the automatic collections walked again and again (about a twelfth of a first listing
load's CPU, BENCHMARKS.md, «Ingest»); collecting once per batch keeps any garbage cycle alive for
one batch at most, so memory stays bounded on an input of any length.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import replace
from datetime import datetime
from typing import cast

from sqlalchemy import Connection, Engine, Table, insert

from openxiv.corpus.bulkload import deferred_indexes, drop_indexes, ensure_indexes
from openxiv.corpus.ids import try_canonical_id
from openxiv.corpus.records import PaperRecord, ReadError
from openxiv.corpus.runs import IngestSummary, end_run, start_run
from openxiv.corpus.schema import Base, IngestError
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.writer import BatchCounts, write_batch

__all__ = ["BATCH_CHARS", "BATCH_ERRORS", "BATCH_RECORDS", "ERROR_SAMPLE", "ingest_items"]

ERRS = cast(Table, IngestError.__table__)

BATCH_RECORDS = 5000
BATCH_CHARS = 16_000_000
BATCH_ERRORS = 5000
"""Skipped inputs held before they are written to ``ingest_errors`` (a batch is written then)."""
ERROR_SAMPLE = 1000
"""Skipped inputs `IngestSummary.errors` keeps in memory (the first ones); every one is in
``ingest_errors`` under the run's id (`openxiv.corpus.runs.run_errors`), so a flood of bad lines
costs the database rows, not memory (issue 21; peak memory: BENCHMARKS.md, «Ingest memory»)."""


@contextmanager
def _collect_per_batch() -> Iterator[Callable[[], object]]:
    """No automatic cyclic collection inside the block; the function it yields collects the young
    generations (call it between batches). A caller that disabled the collector keeps it disabled
    and gets a function that does nothing."""
    if not gc.isenabled():
        yield lambda: None
        return
    gc.disable()
    try:
        yield lambda: gc.collect(1)
    finally:
        gc.enable()


@contextmanager
def _batch(engine: Engine, first_load: bool) -> Iterator[Connection]:
    """One batch's transaction. On a first load into an empty database (``first_load``) SQLite's
    foreign-key checks are off for it: every author, category, source, section and passage row the
    writer inserts belongs to a paper row it inserted itself, under an id it assigned, and it
    deletes child rows itself rather than through cascades, so checking each child row against
    ``papers`` re-verified what the writer guarantees (a thirtieth of a first listing load's CPU).
    The pragma is set outside the transaction (SQLite ignores it inside one) and set back before
    the connection returns to the pool; ``tests/corpus/test_bulk_ingest.py`` runs
    ``PRAGMA foreign_key_check`` on a first load's database."""
    with engine.connect() as conn:
        if first_load:
            conn.exec_driver_sql("PRAGMA foreign_keys=OFF")
        try:
            yield conn
            conn.commit()
        finally:
            if first_load:
                conn.rollback()  # nothing left after the commit; after an error, the batch's rows
                conn.exec_driver_sql("PRAGMA foreign_keys=ON")
                conn.commit()


def _defer_indexes(engine: Engine) -> bool:
    """Into an empty database, drop the indexes `openxiv.corpus.bulkload` builds after the load."""
    with engine.begin() as conn:
        if conn.exec_driver_sql("SELECT 1 FROM papers LIMIT 1").first() is not None:
            return False
        drop_indexes(conn, deferred_indexes(Base.metadata))
    return True


def _end_run(engine: Engine, summary: IngestSummary, started: datetime) -> None:
    summary.seconds = (datetime.now() - started).total_seconds()
    assert summary.run_id is not None
    with engine.begin() as conn:
        end_run(conn, summary.run_id, summary.status, summary.counts())


def ingest_items(
    engine: Engine, items: Iterable[PaperRecord | ReadError], settings: Settings
) -> IngestSummary:
    """Upsert every record, report every `ReadError` (what `Store.ingest` does; see there)."""
    started = datetime.now()
    summary = IngestSummary()
    with engine.begin() as conn:
        summary.run_id = start_run(conn, started)
    committed = IngestSummary()
    deferred = _defer_indexes(engine)
    batch: list[PaperRecord] = []
    errors: list[ReadError] = []
    chars = 0

    def skip(err: ReadError) -> None:
        summary.skipped += 1
        if len(summary.errors) < ERROR_SAMPLE:
            summary.errors.append(err)
        errors.append(err)
        if len(errors) >= BATCH_ERRORS:
            flush()

    def flush() -> None:
        nonlocal chars
        counts = BatchCounts()
        with _batch(engine, deferred) as conn:
            if batch:
                counts = write_batch(conn, batch, settings.passage_words, settings.passage_overlap)
            if errors:
                rows = [{"run_id": summary.run_id, "source": e.source, "location": e.location,
                         "reason": e.reason} for e in errors]  # fmt: skip
                conn.execute(insert(ERRS), rows)
        summary.added += counts.added  # counted once committed, so an interrupted run is exact
        summary.updated += counts.updated
        summary.unchanged += counts.unchanged
        committed.read, committed.skipped = summary.read, summary.skipped
        batch.clear()
        errors.clear()
        chars = 0
        collect()

    try:
        with _collect_per_batch() as collect:
            for item in items:
                if isinstance(item, ReadError):
                    skip(item)
                    continue
                canonical = try_canonical_id(item.arxiv_id)
                if canonical is None:
                    skip(ReadError(item.source, "record", f"invalid arXiv id {item.arxiv_id!r}"))
                    continue
                if canonical != item.arxiv_id:
                    item = replace(item, arxiv_id=canonical)
                summary.read += 1
                batch.append(item)
                if item.sections:
                    chars += sum(len(s.text) for s in item.sections)
                if len(batch) >= BATCH_RECORDS or chars >= BATCH_CHARS:
                    flush()
            flush()
        if deferred:
            ensure_indexes(engine, Base.metadata)
    except BaseException as exc:
        summary.status = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
        summary.read, summary.skipped = committed.read, committed.skipped
        if deferred:
            # what stopped the run is the error to show; if this fails too, the next open builds them
            with suppress(Exception):
                ensure_indexes(engine, Base.metadata)
        _end_run(engine, summary, started)
        raise
    summary.status = "finished"
    _end_run(engine, summary, started)
    return summary
