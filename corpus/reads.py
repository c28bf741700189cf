"""The reads of a page of search hits (papers and passages by id), in plain SQL on a DB-API cursor.

A search hit needs its paper and, for passage evidence, one passage: a handful of rows by primary
or unique key, on every request. Through SQLAlchemy (an expanding ``IN``, result rows, per-column
type processing) a page of 10 papers cost several times what SQLite spends answering it
(BENCHMARKS.md, «Search service», the store rows of the in-process stages). These functions send the same SQL themselves and
build the same records (`Store.get_papers`, `Store.get_passages` call them), so every caller of the
store gets the same `Paper` and `Passage` values as before, only cheaper. The statements are
rebuilt per call (a string join; SQLite's own statement cache keeps the compiled forms per
connection).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from openxiv.corpus.records import Paper, Passage
from openxiv.corpus.writer import DATE_COLUMNS, paper_from_values

__all__ = ["IN_CHUNK", "papers_by_id", "passages_by_id"]

IN_CHUNK = 900
"""Values bound per ``IN (...)``: under SQLite's default limit of 999 host parameters."""

_PASSAGES = (
    "SELECT passages.id, papers.arxiv_id, passages.section_idx, sections.name, passages.ordinal, "
    "passages.text, passages.char_start, passages.char_end FROM passages "
    "JOIN papers ON papers.id = passages.paper_id "
    "LEFT OUTER JOIN sections ON sections.paper_id = passages.paper_id AND sections.idx = passages.section_idx "
    "WHERE passages.id IN ({marks})"
)
"""`openxiv.corpus.store.Store._passage_query` written out: a passage with its paper's id and its
section's name (``NULL`` for the paper-level passage)."""


def _marks(n: int) -> str:
    return ", ".join("?" * n)


def papers_by_id(cur: Any, columns: Sequence[str], canonical: Sequence[str]) -> dict[str, Paper]:
    """The papers among the ``canonical`` ids, keyed by id, with their sources (sorted by name).
    ``columns``: the ``papers`` columns to read, ``id`` first (`RECORD_COLUMNS` less those an older
    database lacks, which `paper_from_values` then finds missing exactly as before)."""
    names = tuple(columns)
    select = ", ".join(names)
    dates = [i for i, name in enumerate(names) if name in DATE_COLUMNS]
    out: dict[str, Paper] = {}
    for start in range(0, len(canonical), IN_CHUNK):
        part = list(canonical[start : start + IN_CHUNK])
        rows = cur.execute(
            f"SELECT {select} FROM papers WHERE arxiv_id IN ({_marks(len(part))})", part
        ).fetchall()
        if not rows:
            continue
        sources: dict[int, list[str]] = {}
        sql = f"SELECT paper_id, source FROM paper_sources WHERE paper_id IN ({_marks(len(rows))}) ORDER BY source"
        for pid, name in cur.execute(sql, [r[0] for r in rows]):
            sources.setdefault(pid, []).append(name)
        for row in rows:
            values = dict(zip(names, row, strict=True))
            for i in dates:
                if row[i] is not None:
                    values[names[i]] = date.fromisoformat(row[i])
            paper = paper_from_values(values, sources.get(row[0], ()))
            out[paper.arxiv_id] = paper
    return out


def passages_by_id(cur: Any, passage_ids: Sequence[int]) -> dict[int, Passage]:
    """The passages among ``passage_ids``, keyed by id."""
    ids = list(dict.fromkeys(int(i) for i in passage_ids))
    out: dict[int, Passage] = {}
    for start in range(0, len(ids), IN_CHUNK):
        part = ids[start : start + IN_CHUNK]
        for r in cur.execute(_PASSAGES.format(marks=_marks(len(part))), part):
            out[r[0]] = Passage(*r)
    return out
