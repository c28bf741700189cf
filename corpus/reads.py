"""The one mapping from a ``papers`` row to a record, and the reads of a page of search hits.

`record_from_values` reads a ``papers`` row into a `Paper` (what the store serves) or a `PaperState`
(what the writer merges into; the writer's `_paper_row` is the other direction). The ``papers``
columns are the schema's (`PAPER_COLUMNS`, from `openxiv.corpus.schema.PaperRow`); what each record
reads is derived from its fields (`record_columns`).

A search hit needs its paper and, for passage evidence, one passage: a handful of rows by primary
or unique key, on every request. Through SQLAlchemy (an expanding ``IN``, result rows, per-column
type processing) a page of 10 papers cost several times what SQLite spends answering it
(BENCHMARKS.md, «Search service», the store rows of the in-process stages). `papers_by_id` and
`passages_by_id` send the same SQL themselves (the papers through `paper_rows`, the read the
writer's ingest shares) and build the same records (`Store.get_papers`, `Store.get_passages` call
them), so every caller of the store gets the same `Paper` and `Passage` values as before, only
cheaper. The statements are rebuilt per call (a string join; SQLite's own statement cache keeps
the compiled forms per connection).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import fields
from datetime import date
from typing import Any, TypeVar, cast

import orjson
from sqlalchemy import Boolean, Date, Row, Table

from openxiv.corpus.merge import PaperState
from openxiv.corpus.records import Paper, PaperFields, Passage
from openxiv.corpus.schema import PaperRow

__all__ = [
    "COLUMN_FIELDS",
    "DATE_COLUMNS",
    "IN_CHUNK",
    "PAPER_COLUMNS",
    "RECORD_COLUMNS",
    "in_marks",
    "json_list",
    "paper_from_row",
    "paper_from_values",
    "paper_rows",
    "papers_by_id",
    "passages_by_id",
    "record_columns",
    "record_from_values",
]

P: Table = cast(Table, PaperRow.__table__)

PAPER_COLUMNS = tuple(c.name for c in P.columns)
"""The ``papers`` columns, in the schema's order: what the writer inserts
(`openxiv.corpus.writer._paper_row`)."""
DATE_COLUMNS = frozenset(c.name for c in P.columns if isinstance(c.type, Date))
"""``papers`` columns SQLite stores as ISO text and SQLAlchemy reads as `date`."""
_BOOL_COLUMNS = frozenset(c.name for c in P.columns if isinstance(c.type, Boolean))
"""``papers`` columns SQLite stores as 0/1 and SQLAlchemy reads as `bool`."""
_JSON_LISTS = ("authors", "categories")
"""Fields stored as JSON arrays (``<name>_json``); every other `PaperFields` field is a column of its own."""
COLUMN_FIELDS = tuple(f.name for f in fields(PaperFields) if f.name not in _JSON_LISTS)
"""The `PaperFields` fields stored in a column of the same name."""

R = TypeVar("R", Paper, PaperState)


def _own_columns(cls: type[Paper] | type[PaperState]) -> tuple[str, ...]:
    """The fields of ``cls`` beyond `PaperFields` that are ``papers`` columns of the same name."""
    names = {f.name for f in fields(cls)}
    return tuple(c for c in PAPER_COLUMNS if c in names and c not in COLUMN_FIELDS)


_OWN = {cls: _own_columns(cls) for cls in (Paper, PaperState)}


def record_columns(cls: type[Paper] | type[PaperState]) -> tuple[str, ...]:
    """The ``papers`` columns `record_from_values` reads into ``cls``, with the row id first."""
    return ("id", *COLUMN_FIELDS, *(f"{name}_json" for name in _JSON_LISTS), *_OWN[cls])


RECORD_COLUMNS = record_columns(Paper)
"""The ``papers`` columns `paper_from_row` reads (with the row id): what a paper query selects."""


def record_from_values(cls: type[R], values: Mapping[Any, Any], sources: Sequence[str]) -> R:
    """The ``cls`` record of a ``papers`` row's values by column name (`record_columns`), typed as
    SQLAlchemy gives them (dates as `date`, booleans as `bool`: `paper_rows` converts SQLite's values).
    By name, so a select may omit columns an older database lacks (an index snapshot's copy of the
    corpus made before a column existed, e.g. ``title_source``): that field keeps its default."""
    return cls(
        **{name: values[name] for name in COLUMN_FIELDS if name in values},
        authors=json_list(values["authors_json"]),
        categories=json_list(values["categories_json"]),
        sources=tuple(sources),
        **{name: values[name] for name in _OWN[cls]},
    )


def paper_from_row(row: Row[Any], sources: Sequence[str]) -> Paper:
    """The `Paper` a ``papers`` row holds (any result row with the `RECORD_COLUMNS`)."""
    return record_from_values(Paper, row._mapping, sources)


def paper_from_values(values: Mapping[Any, Any], sources: Sequence[str]) -> Paper:
    """The `Paper` of a ``papers`` row's values by column name (`record_from_values`)."""
    return record_from_values(Paper, values, sources)


def json_list(text: str) -> tuple[str, ...]:
    """A stored JSON array as a tuple: orjson reads it (a third of `json`'s CPU, most of building a
    page of search hits' papers); `json` reads what orjson refuses (a lone surrogate escape), so the
    values are `json`'s in every case."""
    try:
        return tuple(orjson.loads(text))
    except orjson.JSONDecodeError:
        return tuple(json.loads(text))


IN_CHUNK = 900
"""Values bound per ``IN (...)``: under SQLite's default limit of 999 host parameters."""


def in_marks(n: int) -> str:
    """The ``n`` placeholders of an ``IN (...)`` list: ``?, ?, ...``."""
    return ", ".join("?" * n)


def paper_rows(
    execute: Callable[[str, tuple[Any, ...]], Iterable[Sequence[Any]]],
    columns: Sequence[str],
    canonical: Sequence[str],
) -> Iterator[tuple[dict[str, Any], list[str]]]:
    """Each stored paper among the ``canonical`` ids: its ``columns`` (``id`` first) by name, dates
    as `date` and booleans as `bool` (SQLite keeps ISO text and 0/1), and its sources in name order. In plain SQL through
    ``execute(sql, params)`` (a DB-API cursor's ``execute``, or a SQLAlchemy connection's
    ``exec_driver_sql`` inside the writer's transaction): SQLAlchemy's expanding ``IN`` and its row
    processing cost more than SQLite's look-ups, both for a page of search hits (`papers_by_id`)
    and for the stored papers an ingest batch merges with (`openxiv.corpus.writer._load`)."""
    names = tuple(columns)
    select = ", ".join(names)
    dates = [i for i, name in enumerate(names) if name in DATE_COLUMNS]
    bools = [i for i, name in enumerate(names) if name in _BOOL_COLUMNS]
    for start in range(0, len(canonical), IN_CHUNK):
        part = tuple(canonical[start : start + IN_CHUNK])
        rows = list(execute(f"SELECT {select} FROM papers WHERE arxiv_id IN ({in_marks(len(part))})", part))
        if not rows:
            continue
        sources: dict[int, list[str]] = {}
        sql = f"SELECT paper_id, source FROM paper_sources WHERE paper_id IN ({in_marks(len(rows))}) ORDER BY source"
        for pid, name in execute(sql, tuple(r[0] for r in rows)):
            sources.setdefault(pid, []).append(name)
        for row in rows:
            values = dict(zip(names, row, strict=True))
            for i in dates:
                if row[i] is not None:
                    values[names[i]] = date.fromisoformat(row[i])
            for i in bools:
                values[names[i]] = bool(row[i])
            yield values, sources.get(row[0], [])


_PASSAGES = (
    "SELECT passages.id, papers.arxiv_id, passages.section_idx, sections.name, passages.ordinal, "
    "passages.text, passages.char_start, passages.char_end FROM passages "
    "JOIN papers ON papers.id = passages.paper_id "
    "LEFT OUTER JOIN sections ON sections.paper_id = passages.paper_id AND sections.idx = passages.section_idx "
    "WHERE passages.id IN ({marks})"
)
"""`openxiv.corpus.store.Store._passage_query` written out: a passage with its paper's id and its
section's name (``NULL`` for the paper-level passage)."""


def papers_by_id(cur: Any, columns: Sequence[str], canonical: Sequence[str]) -> dict[str, Paper]:
    """The papers among the ``canonical`` ids, keyed by id, with their sources (sorted by name).
    ``columns``: the ``papers`` columns to read, ``id`` first (`RECORD_COLUMNS` less those an older
    database lacks, which `paper_from_values` then finds missing exactly as before)."""
    out: dict[str, Paper] = {}
    for values, sources in paper_rows(cur.execute, columns, canonical):
        paper = paper_from_values(values, sources)
        out[paper.arxiv_id] = paper
    return out


def passages_by_id(cur: Any, passage_ids: Sequence[int]) -> dict[int, Passage]:
    """The passages among ``passage_ids``, keyed by id."""
    ids = list(dict.fromkeys(int(i) for i in passage_ids))
    out: dict[int, Passage] = {}
    for start in range(0, len(ids), IN_CHUNK):
        part = ids[start : start + IN_CHUNK]
        for r in cur.execute(_PASSAGES.format(marks=in_marks(len(part))), part):
            out[r[0]] = Passage(*r)
    return out
