"""Batch upsert of paper records into the corpus database (used by `Store.ingest`), and the one
mapping between a ``papers`` row and a `Paper` record (`paper_from_row`, `_paper_row`).

A batch is merged in memory against the stored papers it touches (one query each for papers and
sources), then written with ``executemany`` inside the caller's transaction: new papers get ids
assigned here, changed papers are updated in place, and child rows (authors, categories, sources,
sections, passages) are rewritten only when they changed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import date
from itertools import repeat
from json.encoder import encode_basestring
from typing import Any, cast

import orjson
from sqlalchemy import Connection, Date, Row, Table, delete, func, select

from openxiv.corpus.merge import PaperState, content_hash, merge_record
from openxiv.corpus.normalize import normalize_names, normalize_title
from openxiv.corpus.passages import chunk_sections
from openxiv.corpus.records import Paper, PaperFields, PaperRecord, best_date
from openxiv.corpus.schema import AuthorRow, CategoryRow, PaperRow, PassageRow, SectionRow, SourceRow

__all__ = [
    "DATE_COLUMNS",
    "IN_CHUNK",
    "RECORD_COLUMNS",
    "BatchCounts",
    "in_marks",
    "paper_from_row",
    "paper_from_values",
    "paper_rows",
    "write_batch",
]

P: Table = cast(Table, PaperRow.__table__)
A: Table = cast(Table, AuthorRow.__table__)
C: Table = cast(Table, CategoryRow.__table__)
S: Table = cast(Table, SourceRow.__table__)
SEC: Table = cast(Table, SectionRow.__table__)
PAS: Table = cast(Table, PassageRow.__table__)


@dataclass
class BatchCounts:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    changed_ids: list[str] = field(default_factory=list)


@dataclass
class _Stored:
    paper_id: int
    state: PaperState
    passages_hash: str | None


_JSON_LISTS = ("authors", "categories")
"""Fields stored as JSON arrays (``<name>_json``); every other `PaperFields` field is a column of its own."""
_COLUMN_FIELDS = tuple(f.name for f in fields(PaperFields) if f.name not in _JSON_LISTS)
RECORD_COLUMNS = ("id", *_COLUMN_FIELDS, "authors_json", "categories_json", "has_fulltext", "content_hash")
"""The ``papers`` columns `paper_from_row` reads (with the row id): what a paper query selects."""


def paper_from_row(row: Row[Any], sources: Sequence[str]) -> Paper:
    """The `Paper` a ``papers`` row holds (any result row with the `RECORD_COLUMNS`). By column
    name: the select may omit columns an older database lacks."""
    return paper_from_values(row._mapping, sources)


def paper_from_values(values: Mapping[Any, Any], sources: Sequence[str]) -> Paper:
    """The `Paper` of a ``papers`` row's values by column name, typed as SQLAlchemy gives them
    (dates as `date`; `openxiv.corpus.reads` converts SQLite's text dates before calling this)."""
    return Paper(
        **{name: values.get(name) for name in _COLUMN_FIELDS},  # type: ignore[arg-type]  # .get: an older database
        authors=_json_list(values["authors_json"]),
        categories=_json_list(values["categories_json"]),
        sources=tuple(sources),
        has_fulltext=bool(values["has_fulltext"]),
        content_hash=values["content_hash"],
    )


def _json_list(text: str) -> tuple[str, ...]:
    """A stored JSON array as a tuple: orjson reads it (a third of `json`'s CPU, most of building a
    page of search hits' papers); `json` reads what orjson refuses (a lone surrogate escape), so the
    values are `json`'s in every case."""
    try:
        return tuple(orjson.loads(text))
    except orjson.JSONDecodeError:
        return tuple(json.loads(text))


DATE_COLUMNS = frozenset(c.name for c in P.columns if isinstance(c.type, Date))
"""``papers`` columns SQLite stores as ISO text and SQLAlchemy reads as `date`."""
_LOAD_COLUMNS = ("id", "sections_hash", "passages_hash", "authors_json", "categories_json", *_COLUMN_FIELDS)


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
    as `date` (SQLite keeps them as ISO text), and its sources in name order. In plain SQL through
    ``execute(sql, params)`` (a DB-API cursor's ``execute``, or a SQLAlchemy connection's
    ``exec_driver_sql`` inside the writer's transaction): SQLAlchemy's expanding ``IN`` and its row
    processing cost more than SQLite's look-ups, both for a page of search hits (`openxiv.corpus.reads`)
    and for the stored papers an ingest batch merges with (`_load`)."""
    names = tuple(columns)
    select = ", ".join(names)
    dates = [i for i, name in enumerate(names) if name in DATE_COLUMNS]
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
            yield values, sources.get(row[0], [])


def _load(conn: Connection, ids: Sequence[str]) -> dict[str, _Stored]:
    """The stored state of the papers among ``ids`` (`paper_rows`: a tenth of a first ingest, which
    finds nothing, and most of a re-ingest's reading, went to SQLAlchemy's reads)."""
    out: dict[str, _Stored] = {}
    for values, sources in paper_rows(conn.exec_driver_sql, _LOAD_COLUMNS, ids):
        state = PaperState(
            **{name: values[name] for name in _COLUMN_FIELDS},
            authors=_json_list(values["authors_json"]),
            categories=_json_list(values["categories_json"]),
            sources=tuple(sources),
            sections_hash=values["sections_hash"],
        )
        out[state.arxiv_id] = _Stored(values["id"], state, values["passages_hash"])
    return out


PAPER_COLUMNS = (
    "id", "arxiv_id", "version", "title", "title_norm", "abstract", "primary_category", "authors_json",
    "categories_json", "published", "updated", "first_seen", "date_precision", "comment", "license", "journal_ref", "doi",
    "has_fulltext", "sections_hash", "passages_hash", "content_hash", "title_source",
)  # fmt: skip
AUTHOR_COLUMNS = ("paper_id", "position", "name", "name_norm")
CATEGORY_COLUMNS = ("paper_id", "position", "category")
SOURCE_COLUMNS = ("paper_id", "source")
SECTION_COLUMNS = ("paper_id", "idx", "number", "name", "text")
PASSAGE_COLUMNS = ("paper_id", "section_idx", "ordinal", "text", "char_start", "char_end")


def _iso(d: date | None) -> str | None:
    return None if d is None else d.isoformat()


def _json_strings(values: Sequence[str]) -> str:
    """``json.dumps(list(values), ensure_ascii=False)`` of a list of strings, the same text without
    building an encoder per call (two per paper row)."""
    return "[" + ", ".join(map(encode_basestring, values)) + "]"


def _paper_row(pid: int, st: PaperState, passages_hash: str | None) -> tuple[object, ...]:
    """Values in `PAPER_COLUMNS` order, as SQLAlchemy's SQLite types store them (ISO dates, 0/1)."""
    return (
        pid,
        st.arxiv_id,
        st.version,
        st.title,
        normalize_title(st.title) or None,
        st.abstract,
        st.categories[0] if st.categories else None,
        _json_strings(st.authors),
        _json_strings(st.categories),
        _iso(st.published),
        _iso(st.updated),
        _iso(st.first_seen),
        best_date(st.arxiv_id, st.published, st.first_seen)[1],
        st.comment,
        st.license,
        st.journal_ref,
        st.doi,
        int(st.sections_hash is not None),
        st.sections_hash,
        passages_hash,
        content_hash(st, passages_hash or ""),
        st.title_source,
    )


def write_batch(
    conn: Connection, records: Sequence[PaperRecord], passage_words: int, passage_overlap: int
) -> BatchCounts:
    """Merge ``records`` into the database inside the open transaction on ``conn``."""
    counts = BatchCounts()
    ids = list(dict.fromkeys(r.arxiv_id for r in records))
    stored = _load(conn, ids)
    states: dict[str, PaperState] = {k: v.state for k, v in stored.items()}
    for rec in records:
        cur = states.get(rec.arxiv_id)
        new = merge_record(cur, rec)
        if cur is None:
            counts.added += 1
        elif new.same_stored(cur):
            counts.unchanged += 1
            continue
        else:
            counts.updated += 1
        states[rec.arxiv_id] = new

    next_id = (conn.execute(select(func.max(P.c.id))).scalar() or 0) + 1
    new_rows: list[tuple[object, ...]] = []
    upd_rows: list[tuple[object, ...]] = []
    authors: list[tuple[object, ...]] = []
    cats: list[tuple[object, ...]] = []
    sources: list[tuple[object, ...]] = []
    sections: list[tuple[object, ...]] = []
    passages: list[tuple[object, ...]] = []
    rewrite_meta: list[int] = []
    rewrite_text: list[int] = []
    for aid in ids:
        st = states[aid]
        old = stored.get(aid)
        if old is not None and st.same_stored(old.state):
            continue
        counts.changed_ids.append(aid)
        pid = old.paper_id if old is not None else next_id
        if old is None:
            next_id += 1
        passages_hash = old.passages_hash if old is not None else None
        text_changed = st.sections is not None and (
            old is None or st.sections_hash != old.state.sections_hash
        )
        if text_changed and st.sections is not None:
            chunks = chunk_sections([s.text for s in st.sections], passage_words, passage_overlap)
            h = hashlib.sha256()
            for ch in chunks:
                h.update(ch.text.encode("utf-8", "surrogatepass"))
                h.update(b"\x1e")
            passages_hash = h.hexdigest()
            if old is not None:
                rewrite_text.append(pid)
            sections.extend((pid, i, s.number, s.name, s.text) for i, s in enumerate(st.sections))
            passages.extend(
                (pid, ch.section_idx, ch.ordinal, ch.text, ch.char_start, ch.char_end) for ch in chunks
            )
        row = _paper_row(pid, st, passages_hash)
        if old is None:
            new_rows.append(row)
        else:
            upd_rows.append((*row[1:], pid))
        if old is None or st.authors != old.state.authors or st.categories != old.state.categories:
            if old is not None:
                rewrite_meta.append(pid)
            # rows zipped in C: a generator's frame per row was a tenth of a first load's Python work
            n, m = len(st.authors), len(st.categories)
            authors.extend(
                zip(repeat(pid, n), range(n), st.authors, normalize_names(st.authors), strict=True)
            )
            cats.extend(zip(repeat(pid, m), range(m), st.categories, strict=True))
        before = set(old.state.sources) if old is not None else set()
        for name in st.sources:
            if name not in before:
                sources.append((pid, name))

    _insert(conn, P, PAPER_COLUMNS, new_rows)
    if upd_rows:
        sets = ", ".join(f"{k} = ?" for k in PAPER_COLUMNS[1:])
        conn.exec_driver_sql(f"UPDATE papers SET {sets} WHERE id = ?", upd_rows)
    for part in _int_chunks(rewrite_meta):
        conn.execute(delete(A).where(A.c.paper_id.in_(part)))
        conn.execute(delete(C).where(C.c.paper_id.in_(part)))
    for part in _int_chunks(rewrite_text):
        conn.execute(delete(PAS).where(PAS.c.paper_id.in_(part)))
        conn.execute(delete(SEC).where(SEC.c.paper_id.in_(part)))
    _insert(conn, A, AUTHOR_COLUMNS, authors)
    _insert(conn, C, CATEGORY_COLUMNS, cats)
    _insert(conn, S, SOURCE_COLUMNS, sources)
    _insert(conn, SEC, SECTION_COLUMNS, sections)
    _insert(conn, PAS, PASSAGE_COLUMNS, passages)
    return counts


def _insert(conn: Connection, table: Table, columns: Sequence[str], rows: list[tuple[object, ...]]) -> None:
    """``executemany`` straight on the driver: SQLAlchemy's per-row processing costs more (docs/corpus.md, «Speed»)."""
    if rows:
        sql = f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        conn.exec_driver_sql(sql, rows)


def _int_chunks(seq: list[int], n: int = IN_CHUNK) -> Iterable[list[int]]:
    for i in range(0, len(seq), n):
        yield seq[i : i + n]
