"""What the streaming build's stages read from the snapshot's corpus copy: only the columns each one
uses, in plain SQL.

Every stage after ``copy`` reads the corpus copy again, `READ_CHUNK` rows at a time (docs/scale.md,
«The streaming build»). Read as records (`openxiv.corpus.store.Store.iter_papers`,
``iter_passages``), each pass paid for SQLAlchemy's result rows, both JSON lists of every paper and
a frozen `Paper` of nineteen fields (and every passage's text, section name and offsets for the
``read`` stage, which keeps only its paper row and id), whatever the stage used of them. Here each
stage selects the columns it uses, in the same order (papers by ``arxiv_id``, passages by
``(arxiv_id, ordinal)``), through `sqlite3` on the read-only copy, and gets tuples whose values are
the ones the records carried: text columns as stored, the JSON lists and dates decoded as
`openxiv.corpus.reads.record_from_values` and `openxiv.corpus.records.best_date` decode them, only
where a stage needs them (`MetaRow`). A column an older database lacks reads as ``NULL``, the
default its record field had.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing
from datetime import date
from pathlib import Path
from typing import Any

from openxiv.corpus.reads import json_list
from openxiv.corpus.records import DatePrecision, best_date

__all__ = ["MetaRow", "meta_rows", "paper_rows", "paper_texts", "passage_papers", "passage_texts"]

_PASSAGES = (
    "FROM passages JOIN papers ON papers.id = passages.paper_id ORDER BY papers.arxiv_id, passages.ordinal"
)
"""`openxiv.corpus.store.Store.iter_passages`'s rows and order (its outer join on the section adds
only the section's name: at most one row per passage, by the sections' unique key)."""


def _connect(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{db.resolve()}?mode=ro", uri=True)
    conn.execute("PRAGMA cache_size=-65536")  # the store's connections' page cache
    return conn


def _chunks(cur: sqlite3.Cursor, size: int) -> Iterator[list[tuple[Any, ...]]]:
    while rows := cur.fetchmany(size):
        yield rows


def paper_rows(db: Path, columns: Sequence[str], size: int) -> Iterator[list[tuple[Any, ...]]]:
    """``columns`` of every paper, in row (``arxiv_id``) order, ``size`` rows at a time; a column
    the database lacks is ``None``."""
    with closing(_connect(db)) as conn:
        have = {r[1] for r in conn.execute("PRAGMA table_info(papers)")}
        select = ", ".join(c if c in have else "NULL" for c in columns)
        yield from _chunks(conn.execute(f"SELECT {select} FROM papers ORDER BY arxiv_id"), size)


_LEAD = (
    "CASE WHEN abstract IS NULL OR abstract = '' THEN "
    "(SELECT text FROM passages WHERE passages.paper_id = papers.id ORDER BY ordinal LIMIT 1) "
    "ELSE abstract END"
)
"""A paper's abstract, or for a paper without one its first passage (by the passages' unique key)."""


def paper_texts(db: Path, size: int, lead: bool) -> Iterator[list[tuple[str | None, str | None]]]:
    """``(title, text)`` of every paper in row order, ``size`` at a time: the text is the abstract,
    or with ``lead`` a paper without abstract gets its full text's first passage in its place
    (`openxiv.indexer.building.stages.paper_side_texts`)."""
    with closing(_connect(db)) as conn:
        text = _LEAD if lead else "abstract"
        yield from _chunks(conn.execute(f"SELECT title, {text} FROM papers ORDER BY arxiv_id"), size)


def passage_papers(db: Path, size: int) -> Iterator[list[tuple[int, str]]]:
    """``(passage id, paper arxiv_id)`` of every passage, in passage order, ``size`` at a time."""
    with closing(_connect(db)) as conn:
        yield from _chunks(conn.execute(f"SELECT passages.id, papers.arxiv_id {_PASSAGES}"), size)


def passage_texts(db: Path, size: int) -> Iterator[list[str]]:
    """Every passage's text, in passage order, ``size`` at a time."""
    with closing(_connect(db)) as conn:
        for rows in _chunks(conn.execute(f"SELECT passages.text {_PASSAGES}"), size):
            yield [r[0] for r in rows]


def _day(value: str | None) -> date | None:
    return None if value is None else date.fromisoformat(value)


class MetaRow:
    """What `openxiv.indexer.engine.meta.PaperMeta.from_docs` reads of a paper, from its row."""

    __slots__ = ("arxiv_id", "authors", "categories", "date", "date_precision", "journal_ref")
    COLUMNS = ("arxiv_id", "published", "first_seen", "authors_json", "categories_json", "journal_ref")

    def __init__(self, row: tuple[str, str | None, str | None, str, str, str | None]) -> None:
        arxiv_id, published, first_seen, authors, categories, journal_ref = row
        self.arxiv_id = arxiv_id
        d: tuple[date | None, DatePrecision | None] = best_date(arxiv_id, _day(published), _day(first_seen))
        self.date, self.date_precision = d
        self.authors = json_list(authors)
        self.categories = json_list(categories)
        self.journal_ref = journal_ref


def meta_rows(db: Path, size: int) -> Iterator[MetaRow]:
    """A `MetaRow` of every paper, in row order."""
    for rows in paper_rows(db, MetaRow.COLUMNS, size):
        yield from map(MetaRow, rows)
