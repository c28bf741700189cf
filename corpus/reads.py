"""The reads of a page of search hits (papers and passages by id), in plain SQL on a DB-API cursor.

A search hit needs its paper and, for passage evidence, one passage: a handful of rows by primary
or unique key, on every request. Through SQLAlchemy (an expanding ``IN``, result rows, per-column
type processing) a page of 10 papers cost several times what SQLite spends answering it
(BENCHMARKS.md, «Search service», the store rows of the in-process stages). These functions send
the same SQL themselves (the papers through `openxiv.corpus.writer.paper_rows`, the read the
writer's ingest shares) and build the same records (`Store.get_papers`, `Store.get_passages` call
them), so every caller of the store gets the same `Paper` and `Passage` values as before, only
cheaper. The statements are rebuilt per call (a string join; SQLite's own statement cache keeps
the compiled forms per connection).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openxiv.corpus.records import Paper, Passage
from openxiv.corpus.writer import IN_CHUNK, in_marks, paper_from_values, paper_rows

__all__ = ["papers_by_id", "passages_by_id"]

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
