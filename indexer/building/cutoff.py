"""The build-time cutoff (``openxiv index build --until YYYY-MM-DD``): a snapshot as of a date.

Benchmark hosts want an index that cannot leak papers submitted after their benchmark's cutoff,
whatever a request asks. `apply_cutoff` runs on the snapshot's own corpus copy, right after the
``copy`` stage and before the ``read`` stage, and deletes every paper first submitted after the
cutoff (its sections, passages, authors, categories and sources go with it: the schema's foreign keys
cascade). Everything the snapshot holds is then made from what is left (BM25, vectors, metadata,
tldrs, the store the service reads papers from), so no search, paper read or similar-papers call on
that snapshot can return a later paper. The source database is untouched.

A paper's submission day is `openxiv.corpus.records.best_date`'s: the v1 date, else the first day
it was listed; known only to the month (from the id), the month's *last* day, so the paper is kept
only when the whole month is before the cutoff. A paper with no date at all is left out (it cannot be
shown to be older). The manifest's ``cutoff`` records the day and what was removed.
"""

from __future__ import annotations

import calendar
import sqlite3
from datetime import date
from pathlib import Path

from openxiv.corpus.records import best_date
from openxiv.indexer.manifest import CutoffInfo

__all__ = ["apply_cutoff", "submitted_by"]

_DELETE_CHUNK = 500


def submitted_by(arxiv_id: str, published: date | None, first_seen: date | None) -> date | None:
    """The latest day a paper may have been first submitted (``None``: no date known)."""
    day, precision = best_date(arxiv_id, published, first_seen)
    if day is None or precision != "month":
        return day
    return day.replace(day=calendar.monthrange(day.year, day.month)[1])


def _day(value: str | None) -> date | None:
    return date.fromisoformat(value[:10]) if value else None


def apply_cutoff(corpus_copy: Path, until: date) -> CutoffInfo:
    """Delete from ``corpus_copy`` (the snapshot's, never the source) the papers submitted after
    ``until`` and those with no date; what was kept and removed."""
    conn = sqlite3.connect(corpus_copy)
    try:
        conn.execute("PRAGMA foreign_keys=ON")
        rows = conn.execute("SELECT id, arxiv_id, published, first_seen FROM papers").fetchall()
        later: list[int] = []
        undated: list[int] = []
        for pk, arxiv_id, published, first_seen in rows:
            day = submitted_by(arxiv_id, _day(published), _day(first_seen))
            if day is None:
                undated.append(pk)
            elif day > until:
                later.append(pk)
        gone = later + undated
        with conn:
            for i in range(0, len(gone), _DELETE_CHUNK):
                chunk = gone[i : i + _DELETE_CHUNK]
                conn.execute(f"DELETE FROM papers WHERE id IN ({','.join('?' * len(chunk))})", chunk)
        conn.execute("VACUUM")
    finally:
        conn.close()
    return CutoffInfo(
        until=until.isoformat(),
        kept=len(rows) - len(gone),
        removed_later=len(later),
        removed_undated=len(undated),
    )
