"""Batch upsert of paper records into the corpus database (used by `Store.ingest`): `_paper_row` writes
a record as a ``papers`` row, in the schema's columns (`openxiv.corpus.reads.PAPER_COLUMNS`); the
reverse mapping, a row read into a record, is `openxiv.corpus.reads.record_from_values`, which the
writer also uses for the stored papers it merges with.

A batch is merged in memory against the stored papers it touches (one query each for papers and
sources), then written with ``executemany`` inside the caller's transaction: new papers get ids
assigned here, changed papers are updated in place, and child rows (authors, categories, sources,
sections, passages) are rewritten only when they changed; so are the references
(`openxiv.corpus.references`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from itertools import repeat
from json.encoder import encode_basestring
from typing import cast

from sqlalchemy import Connection, Table, delete, func, select

from openxiv.corpus.merge import PaperState, content_hash, merge_record
from openxiv.corpus.normalize import normalize_names, normalize_title
from openxiv.corpus.passages import chunk_sections
from openxiv.corpus.reads import (
    COLUMN_FIELDS,
    DATE_COLUMNS,
    IN_CHUNK,
    PAPER_COLUMNS,
    paper_rows,
    record_columns,
    record_from_values,
)
from openxiv.corpus.records import PaperRecord, best_date
from openxiv.corpus.references import ReferenceOffers
from openxiv.corpus.schema import AuthorRow, CategoryRow, PaperRow, PassageRow, SectionRow, SourceRow

__all__ = ["BatchCounts", "write_batch"]

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


_LOAD_COLUMNS = (*record_columns(PaperState), "passages_hash")
"""What `_load` reads of a stored paper an ingest batch merges with."""


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


_DATE_FIELDS = tuple(name for name in COLUMN_FIELDS if name in DATE_COLUMNS)
_PLAIN_FIELDS = tuple(name for name in COLUMN_FIELDS if name not in DATE_COLUMNS)


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
