"""Per-paper metadata arrays of a snapshot, and filters turned into boolean masks over paper rows.

Row ``i`` is the ``i``-th paper in arxiv_id order (the order of `Store.iter_papers`), the same
row numbering as the BM25 paper matrix and the dense paper vectors. Stored as plain ``.npy`` files:

- ``arxiv_ids.npy``: unicode array of canonical ids;
- ``dates.npy``: int32 days since 1970-01-01 (``NO_DATE`` when unknown): the first day of the
  paper's date;
- ``date_ends.npy``: the last day it may be: the same day for a date known to the day, the last day
  of the month for a date known only to the month (from the arXiv id). A date filter keeps a paper
  whose period *overlaps* the filter's range, so ``before 2018`` keeps a paper of 2017-06 and
  ``after 2017-06-15`` keeps it too (it may be from the second half of June). Snapshots written
  before this file existed read their dates as exact days;
- ``categories.json`` + ``cat_ptr.npy`` + ``cat_rows.npy``: category names and, per name, the rows
  that carry it (CSR postings);
- ``authors.json`` + ``author_ptr.npy`` + ``author_rows.npy``: distinct folded author names
  (`openxiv.corpus.normalize.normalize_name`) and their postings; ``author_tokens_*``: their words
  (`openxiv.indexer.engine.postings.TokenIndex`);
- ``venues.json`` + ``venue_ptr.npy`` + ``venue_rows.npy`` (+ ``venue_tokens_*``): distinct folded
  journal references and their postings; ``venue_years.npy`` + ``venue_year_ptr.npy`` +
  ``venue_year_rows.npy``: the years written in them.

Author and venue values are looked up in token postings (`openxiv.indexer.engine.postings`, which states
the matching rules), so a filter costs time proportional to what it matches. The mask of a filter
set is cached (`MASK_CACHE` entries), so a batch of queries with one filter set builds it once.
"""

from __future__ import annotations

import calendar
import json
import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import numpy as np

from openxiv.corpus.normalize import normalize_name
from openxiv.corpus.records import Paper
from openxiv.indexer.backend import SearchFilters, UnsupportedFilter
from openxiv.indexer.engine.postings import AuthorMatcher, TokenIndex, Venues, gather
from openxiv.indexer.layout import REFERENCES
from openxiv.indexer.tables.references import CITATIONS_FILE

__all__ = ["MASK_CACHE", "NO_DATE", "PaperMeta", "day_number"]

NO_DATE = np.iinfo(np.int32).min
_EPOCH = date(1970, 1, 1).toordinal()
MASK_CACHE = 64
"""Filter masks kept per snapshot (one bool per paper each: 64 x 101k papers = 6.5 MB)."""


_ID_CHUNK = 50_000
"""Ids turned into a numpy array at a time while the metadata is read (`PaperMeta.from_docs`)."""


def _flat_postings(keys: array[int], counts: array[int], n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """`openxiv.indexer.engine.postings.csr` of the rows' key lists given flat (``keys`` of every row
    one after another, ``counts`` per row): the same arrays without a Python list per row."""
    k = np.frombuffer(keys, dtype=np.int32).astype(np.int64) if len(keys) else np.zeros(0, np.int64)
    n = np.frombuffer(counts, dtype=np.int32) if len(counts) else np.zeros(0, np.int32)
    rows = np.repeat(np.arange(n.size, dtype=np.int32), n)
    order = np.lexsort((rows, k))
    ptr = np.zeros(n_keys + 1, dtype=np.int64)
    np.cumsum(np.bincount(k, minlength=n_keys), out=ptr[1:])
    return ptr, rows[order]


def _citations(path: Path, n: int) -> np.ndarray | None:
    """The snapshot's citation counts by row, when it has them for these ``n`` rows."""
    if not path.is_file():
        return None
    counts = np.load(path, mmap_mode="r")
    return counts if counts.size == n else None


def day_number(d: date | None) -> int:
    return NO_DATE if d is None else d.toordinal() - _EPOCH


def _last_day(d: date | None, precision: str | None) -> int:
    """The last day a date of this precision may stand for (the month's last day for ``month``)."""
    if d is None or precision != "month":
        return day_number(d)
    return day_number(d.replace(day=calendar.monthrange(d.year, d.month)[1]))


@dataclass
class PaperMeta:
    arxiv_ids: np.ndarray
    dates: np.ndarray
    date_ends: np.ndarray
    categories: list[str]
    cat_ptr: np.ndarray
    cat_rows: np.ndarray
    authors: list[str]
    author_ptr: np.ndarray
    author_rows: np.ndarray
    venues: Venues | None = None
    """Journal-reference postings; ``None``: a snapshot built before venues were indexed."""
    author_tokens: TokenIndex | None = None
    """Words of the author names (derived from ``authors`` when a snapshot predates them)."""
    citations: np.ndarray | None = None
    """In-corpus citation count by row (``references/citations.npy``, counted within this corpus
    only); ``None``: a snapshot built before them, where ``min_citation`` is an `UnsupportedFilter`."""
    _masks: OrderedDict[SearchFilters, np.ndarray | None] = field(
        default_factory=OrderedDict, init=False, repr=False
    )

    def __post_init__(self) -> None:
        self._row = {str(a): i for i, a in enumerate(self.arxiv_ids)}
        if self.author_tokens is None:
            self.author_tokens = TokenIndex.build(self.authors)
        self._author_match = AuthorMatcher(self.author_tokens)
        self._lock = threading.Lock()

    @property
    def n(self) -> int:
        return int(self.arxiv_ids.size)

    def row_of(self, arxiv_id: str) -> int | None:
        return self._row.get(arxiv_id)

    # --- building -----------------------------------------------------------------------------
    @classmethod
    def from_docs(cls, docs: Iterable[Paper]) -> PaperMeta:
        """The arrays of ``docs`` (in row order), read once: a build streams them in, and per paper only
        flat arrays of numbers (and its id and journal reference) are kept, never the records."""
        ids: list[np.ndarray] = []
        chunk: list[str] = []
        days, ends = array("i"), array("i")
        cat_index: dict[str, int] = {}
        author_index: dict[str, int] = {}
        cat_keys, cat_counts = array("i"), array("i")
        author_keys, author_counts = array("i"), array("i")
        refs: list[str | None] = []
        for d in docs:
            chunk.append(d.arxiv_id)
            if len(chunk) >= _ID_CHUNK:
                ids.append(np.asarray(chunk, dtype=str))
                chunk = []
            days.append(day_number(d.date))
            ends.append(_last_day(d.date, d.date_precision))
            cats = sorted({cat_index.setdefault(c, len(cat_index)) for c in d.categories if c})
            cat_keys.extend(cats)
            cat_counts.append(len(cats))
            # ids in the order of the sorted names, not of the set (its order follows the hash seed)
            names = sorted({normalize_name(a) for a in d.authors})
            auths = sorted({author_index.setdefault(a, len(author_index)) for a in names if a})
            author_keys.extend(auths)
            author_counts.append(len(auths))
            refs.append(d.journal_ref)
        if chunk:
            ids.append(np.asarray(chunk, dtype=str))
        cat_ptr, cat_rows = _flat_postings(cat_keys, cat_counts, len(cat_index))
        author_ptr, author_rows = _flat_postings(author_keys, author_counts, len(author_index))
        return cls(
            np.concatenate(ids) if ids else np.zeros(0, dtype="<U1"),
            np.frombuffer(days, dtype=np.int32).copy(),
            np.frombuffer(ends, dtype=np.int32).copy(),
            list(cat_index),
            cat_ptr,
            cat_rows,
            list(author_index),
            author_ptr,
            author_rows,
            Venues.build(refs),
        )

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        np.save(directory / "arxiv_ids.npy", self.arxiv_ids)
        np.save(directory / "dates.npy", self.dates)
        np.save(directory / "date_ends.npy", self.date_ends)
        np.save(directory / "cat_ptr.npy", self.cat_ptr)
        np.save(directory / "cat_rows.npy", self.cat_rows)
        np.save(directory / "author_ptr.npy", self.author_ptr)
        np.save(directory / "author_rows.npy", self.author_rows)
        (directory / "categories.json").write_text(json.dumps(self.categories), encoding="utf-8")
        (directory / "authors.json").write_text(
            json.dumps(self.authors, ensure_ascii=False), encoding="utf-8"
        )
        assert self.author_tokens is not None
        self.author_tokens.save(directory, "author_tokens")
        if self.venues is not None:
            self.venues.save(directory)

    @classmethod
    def load(cls, directory: Path) -> PaperMeta:
        def arr(name: str) -> np.ndarray:
            return np.load(directory / name, mmap_mode="r")

        dates = arr("dates.npy")
        return cls(
            np.load(directory / "arxiv_ids.npy"),
            dates,
            arr("date_ends.npy") if (directory / "date_ends.npy").is_file() else dates,
            json.loads((directory / "categories.json").read_text(encoding="utf-8")),
            arr("cat_ptr.npy"),
            arr("cat_rows.npy"),
            json.loads((directory / "authors.json").read_text(encoding="utf-8")),
            arr("author_ptr.npy"),
            arr("author_rows.npy"),
            Venues.load(directory),
            TokenIndex.load(directory, "author_tokens"),
            _citations(directory.parent / REFERENCES / CITATIONS_FILE, dates.size),
        )

    def citation_count(self, arxiv_id: str) -> int | None:
        """The paper's in-corpus citation count; ``None`` when the snapshot has no counts or no such paper."""
        row = self._row.get(arxiv_id)
        return None if row is None or self.citations is None else int(self.citations[row])

    def citation_rows(self, min_citation: int) -> np.ndarray:
        """Mask of the rows cited by at least ``min_citation`` corpus papers."""
        if self.citations is None:
            raise UnsupportedFilter(
                "min_citation: this index was built before citation counts were stored; rebuild it "
                "(openxiv index build)"
            )
        return np.asarray(self.citations) >= min_citation

    # --- filtering ----------------------------------------------------------------------------
    def _rows_of(self, keys: Iterable[int], ptr: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Mask of the rows posted under any of ``keys``: one gather, no Python loop per key."""
        mask = np.zeros(self.n, dtype=bool)
        mask[rows[gather(ptr, np.fromiter(keys, dtype=np.int64))]] = True
        return mask

    def category_keys(self, wanted: Iterable[str]) -> list[int]:
        """Category ids equal to a wanted value or inside a wanted archive (``cs`` -> ``cs.*``)."""
        want = [w.strip() for w in wanted if w.strip()]
        lower = [w.lower() for w in want]
        return [
            i
            for i, c in enumerate(self.categories)
            if any(c.lower() == w or c.lower().startswith(w + ".") for w in lower)
        ]

    def author_keys(self, wanted: Iterable[str]) -> list[int]:
        """Author-name keys matching any wanted name (rule: `openxiv.indexer.engine.postings`)."""
        found = [self._author_match.keys(w) for w in wanted]
        return np.unique(np.concatenate(found)).tolist() if found else []

    def _venues(self, name: str) -> Venues:
        if self.venues is None:
            raise UnsupportedFilter(
                f"{name}: this index was built before venues were indexed; rebuild it (openxiv index build)"
            )
        return self.venues

    def mask(self, filters: SearchFilters | None) -> np.ndarray | None:
        """Boolean mask over paper rows (``None`` when nothing is filtered), read-only and cached.

        Equal filter sets share one mask, so a batch of queries (or many clients sending the same
        filters) pays for it once.
        """
        if filters is None or filters.empty:
            return None
        with self._lock:
            if filters in self._masks:
                self._masks.move_to_end(filters)
                return self._masks[filters]
        mask = self._build_mask(filters)
        if mask is not None:
            mask.flags.writeable = False
        with self._lock:
            self._masks[filters] = mask
            while len(self._masks) > MASK_CACHE:
                self._masks.popitem(last=False)
        return mask

    def _build_mask(self, filters: SearchFilters) -> np.ndarray | None:
        mask = np.ones(self.n, dtype=bool)
        if filters.categories:
            mask &= self._rows_of(self.category_keys(filters.categories), self.cat_ptr, self.cat_rows)
        if filters.authors:
            mask &= self._rows_of(self.author_keys(filters.authors), self.author_ptr, self.author_rows)
        if filters.venues:
            v = self._venues("venue")
            mask &= self._rows_of(v.venue_keys(filters.venues), v.ptr, v.rows)
        if filters.venue_year is not None:
            v = self._venues("venue_year")
            mask &= self._rows_of(v.year_keys(filters.venue_year), v.year_ptr, v.year_rows)
        if filters.date_from is not None or filters.date_to is not None:
            known = self.dates != NO_DATE
            lo = day_number(filters.date_from) if filters.date_from else np.iinfo(np.int32).min + 1
            hi = day_number(filters.date_to) if filters.date_to else np.iinfo(np.int32).max
            mask &= known & (self.date_ends >= lo) & (self.dates <= hi)
        if filters.min_citation is not None:
            mask &= self.citation_rows(filters.min_citation)
        return mask
