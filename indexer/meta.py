"""Per-paper metadata arrays of a snapshot, and filters turned into boolean masks over paper rows.

Row ``i`` is the ``i``-th paper in arxiv_id order (the order of `Store.iter_index_docs`), the same
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
- ``authors.json`` + ``author_ptr.npy`` + ``author_rows.npy``: distinct normalized author names and
  their postings.

Author matching is case- and accent-insensitive on normalized names (NFKD, marks dropped, casefolded,
punctuation to spaces): a query of 4+ characters matches any author name containing it; a shorter
query (``Li``) must equal a whole word of the name, so it does not match every ``Lin`` and ``Olivia``.
"""

from __future__ import annotations

import calendar
import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np

from openxiv.corpus.records import IndexDoc
from openxiv.indexer.backend import SearchFilters

__all__ = ["NO_DATE", "PaperMeta", "normalize_name"]

NO_DATE = np.iinfo(np.int32).min
_EPOCH = date(1970, 1, 1).toordinal()
_NON_ALNUM = re.compile(r"[^0-9a-z]+")
SUBSTRING_MIN = 4


def normalize_name(name: str) -> str:
    """``"José  Núñez-Pérez"`` -> ``"jose nunez perez"``."""
    decomposed = unicodedata.normalize("NFKD", name)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    return _NON_ALNUM.sub(" ", stripped).strip()


def _day(d: date | None) -> int:
    return NO_DATE if d is None else d.toordinal() - _EPOCH


def _last_day(d: date | None, precision: str | None) -> int:
    """The last day a date of this precision may stand for (the month's last day for ``month``)."""
    if d is None or precision != "month":
        return _day(d)
    return _day(d.replace(day=calendar.monthrange(d.year, d.month)[1]))


def _postings(lists: list[list[int]], n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR of key -> rows from per-row key lists."""
    keys = np.fromiter((k for ks in lists for k in ks), dtype=np.int64)
    rows = np.repeat(np.arange(len(lists), dtype=np.int32), [len(ks) for ks in lists])
    order = np.lexsort((rows, keys))
    ptr = np.zeros(n_keys + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys, minlength=n_keys), out=ptr[1:])
    return ptr, rows[order]


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

    def __post_init__(self) -> None:
        self._row = {str(a): i for i, a in enumerate(self.arxiv_ids)}
        starts = np.zeros(len(self.authors), dtype=np.int64)
        if self.authors:
            np.cumsum([len(a) + 1 for a in self.authors[:-1]], out=starts[1:])
        self._author_starts = starts
        self._author_blob = "\n".join(self.authors)

    @property
    def n(self) -> int:
        return int(self.arxiv_ids.size)

    def row_of(self, arxiv_id: str) -> int | None:
        return self._row.get(arxiv_id)

    # --- building -----------------------------------------------------------------------------
    @classmethod
    def from_docs(cls, docs: Iterable[IndexDoc]) -> PaperMeta:
        ids: list[str] = []
        days: list[int] = []
        ends: list[int] = []
        cat_index: dict[str, int] = {}
        author_index: dict[str, int] = {}
        cats: list[list[int]] = []
        auths: list[list[int]] = []
        for d in docs:
            ids.append(d.arxiv_id)
            days.append(_day(d.date))
            ends.append(_last_day(d.date, d.date_precision))
            cats.append(sorted({cat_index.setdefault(c, len(cat_index)) for c in d.categories if c}))
            names = {normalize_name(a) for a in d.authors}
            auths.append(sorted({author_index.setdefault(a, len(author_index)) for a in names if a}))
        cat_ptr, cat_rows = _postings(cats, len(cat_index))
        author_ptr, author_rows = _postings(auths, len(author_index))
        return cls(
            np.asarray(ids, dtype=str) if ids else np.zeros(0, dtype="<U1"),
            np.asarray(days, dtype=np.int32),
            np.asarray(ends, dtype=np.int32),
            list(cat_index),
            cat_ptr,
            cat_rows,
            list(author_index),
            author_ptr,
            author_rows,
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
        )

    # --- filtering ----------------------------------------------------------------------------
    def _rows_of(self, keys: Iterable[int], ptr: np.ndarray, rows: np.ndarray) -> np.ndarray:
        mask = np.zeros(self.n, dtype=bool)
        for k in keys:
            mask[rows[ptr[k] : ptr[k + 1]]] = True
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
        keys: set[int] = set()
        for raw in wanted:
            q = normalize_name(raw)
            if not q:
                continue
            if len(q) >= SUBSTRING_MIN:
                pattern = re.escape(q)
            else:
                pattern = r"(?<![0-9a-z])" + re.escape(q) + r"(?![0-9a-z])"
            offsets = [m.start() for m in re.finditer(pattern, self._author_blob)]
            if offsets:
                found = np.searchsorted(self._author_starts, offsets, side="right") - 1
                keys.update(int(k) for k in np.unique(found))
        return sorted(keys)

    def mask(self, filters: SearchFilters | None) -> np.ndarray | None:
        """Boolean mask over paper rows (``None`` when nothing is filtered)."""
        if filters is None or filters.empty:
            return None
        mask = np.ones(self.n, dtype=bool)
        if filters.categories:
            mask &= self._rows_of(self.category_keys(filters.categories), self.cat_ptr, self.cat_rows)
        if filters.authors:
            mask &= self._rows_of(self.author_keys(filters.authors), self.author_ptr, self.author_rows)
        if filters.date_from is not None or filters.date_to is not None:
            known = self.dates != NO_DATE
            lo = _day(filters.date_from) if filters.date_from else np.iinfo(np.int32).min + 1
            hi = _day(filters.date_to) if filters.date_to else np.iinfo(np.int32).max
            mask &= known & (self.date_ends >= lo) & (self.dates <= hi)
        return mask
