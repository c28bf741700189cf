"""Batch upsert of paper records into the corpus database (used by `Store.ingest`), and the one
mapping between a ``papers`` row and a record: `record_from_values` reads a row into a `Paper` (what
the store serves) or a `PaperState` (what the writer merges into), `_paper_row` writes one. The
``papers`` columns are the schema's (`PAPER_COLUMNS`, from `openxiv.corpus.schema.PaperRow`); what
each record reads is derived from its fields (`record_columns`).

A batch is merged in memory against the stored papers it touches (one query each for papers and
sources), then written with ``executemany`` inside the caller's transaction: new papers get ids
assigned here, changed papers are updated in place, and child rows (authors, categories, sources,
sections, passages) are rewritten only when they changed; so are the references
(`openxiv.corpus.references`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import date
from itertools import repeat
from json.encoder import encode_basestring
from typing import Any, TypeVar, cast

import orjson
from sqlalchemy import Boolean, Connection, Date, Row, Table, delete, func, select

from openxiv.corpus.merge import PaperState, content_hash, merge_record
from openxiv.corpus.normalize import normalize_names, normalize_title
from openxiv.corpus.passages import chunk_sections
from openxiv.corpus.records import Paper, PaperFields, PaperRecord, best_date
from openxiv.corpus.references import ReferenceOffers
from openxiv.corpus.schema import AuthorRow, CategoryRow, PaperRow, PassageRow, SectionRow, SourceRow

__all__ = [
    "DATE_COLUMNS",
    "IN_CHUNK",
    "PAPER_COLUMNS",
    "RECORD_COLUMNS",
    "BatchCounts",
    "in_marks",
    "json_list",
    "paper_from_row",
    "paper_from_values",
    "paper_rows",
    "record_columns",
    "record_from_values",
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


PAPER_COLUMNS = tuple(c.name for c in P.columns)
"""The ``papers`` columns, in the schema's order: what the writer inserts (`_paper_row`)."""
DATE_COLUMNS = frozenset(c.name for c in P.columns if isinstance(c.type, Date))
"""``papers`` columns SQLite stores as ISO text and SQLAlchemy reads as `date`."""
_BOOL_COLUMNS = frozenset(c.name for c in P.columns if isinstance(c.type, Boolean))
"""``papers`` columns SQLite stores as 0/1 and SQLAlchemy reads as `bool`."""
_JSON_LISTS = ("authors", "categories")
"""Fields stored as JSON arrays (``<name>_json``); every other `PaperFields` field is a column of its own."""
_COLUMN_FIELDS = tuple(f.name for f in fields(PaperFields) if f.name not in _JSON_LISTS)

R = TypeVar("R", Paper, PaperState)


def _own_columns(cls: type[Paper] | type[PaperState]) -> tuple[str, ...]:
    """The fields of ``cls`` beyond `PaperFields` that are ``papers`` columns of the same name."""
    names = {f.name for f in fields(cls)}
    return tuple(c for c in PAPER_COLUMNS if c in names and c not in _COLUMN_FIELDS)


_OWN = {cls: _own_columns(cls) for cls in (Paper, PaperState)}


def record_columns(cls: type[Paper] | type[PaperState]) -> tuple[str, ...]:
    """The ``papers`` columns `record_from_values` reads into ``cls``, with the row id first."""
    return ("id", *_COLUMN_FIELDS, *(f"{name}_json" for name in _JSON_LISTS), *_OWN[cls])


RECORD_COLUMNS = record_columns(Paper)
"""The ``papers`` columns `paper_from_row` reads (with the row id): what a paper query selects."""


def record_from_values(cls: type[R], values: Mapping[Any, Any], sources: Sequence[str]) -> R:
    """The ``cls`` record of a ``papers`` row's values by column name (`record_columns`), typed as
    SQLAlchemy gives them (dates as `date`, booleans as `bool`: `paper_rows` converts SQLite's values).
    By name, so a select may omit columns an older database lacks (an index snapshot's copy of the
    corpus made before a column existed, e.g. ``title_source``): that field keeps its default."""
    return cls(
        **{name: values[name] for name in _COLUMN_FIELDS if name in values},
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


_LOAD_COLUMNS = (*record_columns(PaperState), "passages_hash")
"""What `_load` reads of a stored paper an ingest batch merges with."""


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
    processing cost more than SQLite's look-ups, both for a page of search hits (`openxiv.corpus.reads`)
    and for the stored papers an ingest batch merges with (`_load`)."""
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


def _load(conn: Connection, ids: Sequence[str]) -> dict[str, _Stored]:
    """The stored state of the papers among ``ids`` (`paper_rows`: a tenth of a first ingest, which
    finds nothing, and most of a re-ingest's reading, went to SQLAlchemy's reads)."""
    out: dict[str, _Stored] = {}
    for values, sources in paper_rows(conn.exec_driver_sql, _LOAD_COLUMNS, ids):
        state = record_from_values(PaperState, values, sources)
        out[state.arxiv_id] = _Stored(values["id"], state, values["passages_hash"])
    return out


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


_DATE_FIELDS = tuple(name for name in _COLUMN_FIELDS if name in DATE_COLUMNS)
_PLAIN_FIELDS = tuple(name for name in _COLUMN_FIELDS if name not in DATE_COLUMNS)


def _paper_row(pid: int, st: PaperState, passages_hash: str | None) -> tuple[object, ...]:
    """Values in `PAPER_COLUMNS` order, as SQLAlchemy's SQLite types store them (ISO dates, 0/1): the
    fields by column name, then the columns derived from them (a column without a value here is a
    `KeyError`, never a shifted row)."""
    values: dict[str, object] = {name: getattr(st, name) for name in _PLAIN_FIELDS}
    values.update((name, _iso(getattr(st, name))) for name in _DATE_FIELDS)
    values.update(
        id=pid,
        title_norm=normalize_title(st.title) or None,
        primary_category=st.categories[0] if st.categories else None,
        authors_json=_json_strings(st.authors),
        categories_json=_json_strings(st.categories),
        date_precision=best_date(st.arxiv_id, st.published, st.first_seen)[1],
        has_fulltext=int(st.sections_hash is not None),
        sections_hash=st.sections_hash,
        passages_hash=passages_hash,
        content_hash=content_hash(st, passages_hash or ""),
    )
    return tuple([values[name] for name in PAPER_COLUMNS])


def write_batch(
    conn: Connection, records: Sequence[PaperRecord], passage_words: int, passage_overlap: int
) -> BatchCounts:
    """Merge ``records`` into the database inside the open transaction on ``conn``."""
    counts = BatchCounts()
    ids = list(dict.fromkeys(r.arxiv_id for r in records))
    stored = _load(conn, ids)
    offers = ReferenceOffers()
    states = _merge(records, {k: v.state for k, v in stored.items()}, counts, offers)
    next_id = (conn.execute(select(func.max(P.c.id))).scalar() or 0) + 1
    rows = _BatchRows()
    pid_of: dict[str, int] = {}
    for aid in ids:
        st = states[aid]
        old = stored.get(aid)
        pid = old.paper_id if old is not None else next_id
        pid_of[aid] = pid
        if old is not None and st.same_stored(old.state):
            continue
        counts.changed_ids.append(aid)
        if old is None:
            next_id += 1
        passages_hash = rows.add_text(pid, st, old, passage_words, passage_overlap)
        rows.add_paper(pid, st, old, passages_hash)
    rows.write(conn)
    changed = set(counts.changed_ids)
    for aid in offers.write(conn, pid_of):  # a paper whose only change is its references was updated
        if aid not in changed:
            counts.changed_ids.append(aid)
            counts.updated += 1
            counts.unchanged = max(0, counts.unchanged - 1)
    return counts


def _merge(
    records: Sequence[PaperRecord],
    states: dict[str, PaperState],
    counts: BatchCounts,
    offers: ReferenceOffers,
) -> dict[str, PaperState]:
    """Each record merged into ``states`` (the stored papers, by id), in order; ``counts`` says which
    records added, updated or changed nothing; ``offers`` hears each record's references."""
    for rec in records:
        cur = states.get(rec.arxiv_id)
        offers.offer(cur, rec)
        new = merge_record(cur, rec)
        if cur is None:
            counts.added += 1
        elif new.same_stored(cur):
            counts.unchanged += 1
            continue
        else:
            counts.updated += 1
        states[rec.arxiv_id] = new
    return states


@dataclass
class _BatchRows:
    """The rows a batch writes, table by table, and the papers whose child rows are rewritten."""

    new: list[tuple[object, ...]] = field(default_factory=list)
    updated: list[tuple[object, ...]] = field(default_factory=list)
    authors: list[tuple[object, ...]] = field(default_factory=list)
    categories: list[tuple[object, ...]] = field(default_factory=list)
    sources: list[tuple[object, ...]] = field(default_factory=list)
    sections: list[tuple[object, ...]] = field(default_factory=list)
    passages: list[tuple[object, ...]] = field(default_factory=list)
    rewrite_meta: list[int] = field(default_factory=list)
    rewrite_text: list[int] = field(default_factory=list)

    def add_text(self, pid: int, st: PaperState, old: _Stored | None, words: int, overlap: int) -> str | None:
        """The sections and passages of a new or changed full text; the paper's passages hash."""
        passages_hash = old.passages_hash if old is not None else None
        text_changed = st.sections is not None and (
            old is None or st.sections_hash != old.state.sections_hash
        )
        if not text_changed or st.sections is None:
            return passages_hash
        chunks = chunk_sections([s.text for s in st.sections], words, overlap)
        h = hashlib.sha256()
        for ch in chunks:
            h.update(ch.text.encode("utf-8", "surrogatepass"))
            h.update(b"\x1e")
        if old is not None:
            self.rewrite_text.append(pid)
        self.sections.extend((pid, i, s.number, s.name, s.text) for i, s in enumerate(st.sections))
        self.passages.extend(
            (pid, ch.section_idx, ch.ordinal, ch.text, ch.char_start, ch.char_end) for ch in chunks
        )
        return h.hexdigest()

    def add_paper(self, pid: int, st: PaperState, old: _Stored | None, passages_hash: str | None) -> None:
        """The paper's row, and its authors, categories and new sources where they changed."""
        row = _paper_row(pid, st, passages_hash)
        if old is None:
            self.new.append(row)
        else:
            self.updated.append((*row[1:], pid))
        if old is None or st.authors != old.state.authors or st.categories != old.state.categories:
            if old is not None:
                self.rewrite_meta.append(pid)
            # rows zipped in C: a generator's frame per row was a tenth of a first load's Python work
            n, m = len(st.authors), len(st.categories)
            self.authors.extend(
                zip(repeat(pid, n), range(n), st.authors, normalize_names(st.authors), strict=True)
            )
            self.categories.extend(zip(repeat(pid, m), range(m), st.categories, strict=True))
        before = set(old.state.sources) if old is not None else set()
        for name in st.sources:
            if name not in before:
                self.sources.append((pid, name))

    def write(self, conn: Connection) -> None:
        _insert(conn, P, PAPER_COLUMNS, self.new)
        if self.updated:
            sets = ", ".join(f"{k} = ?" for k in PAPER_COLUMNS[1:])
            conn.exec_driver_sql(f"UPDATE papers SET {sets} WHERE id = ?", self.updated)
        for part in _int_chunks(self.rewrite_meta):
            conn.execute(delete(A).where(A.c.paper_id.in_(part)))
            conn.execute(delete(C).where(C.c.paper_id.in_(part)))
        for part in _int_chunks(self.rewrite_text):
            conn.execute(delete(PAS).where(PAS.c.paper_id.in_(part)))
            conn.execute(delete(SEC).where(SEC.c.paper_id.in_(part)))
        _insert(conn, A, AUTHOR_COLUMNS, self.authors)
        _insert(conn, C, CATEGORY_COLUMNS, self.categories)
        _insert(conn, S, SOURCE_COLUMNS, self.sources)
        _insert(conn, SEC, SECTION_COLUMNS, self.sections)
        _insert(conn, PAS, PASSAGE_COLUMNS, self.passages)


def _insert(conn: Connection, table: Table, columns: Sequence[str], rows: list[tuple[object, ...]]) -> None:
    """``executemany`` straight on the driver: SQLAlchemy's per-row processing costs more (docs/corpus.md, «Speed»)."""
    if rows:
        sql = f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        conn.exec_driver_sql(sql, rows)


def _int_chunks(seq: list[int], n: int = IN_CHUNK) -> Iterable[list[int]]:
    for i in range(0, len(seq), n):
        yield seq[i : i + n]
