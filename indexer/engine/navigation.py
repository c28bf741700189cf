"""Passages as results, facet counts and an author's papers over the embedded snapshot (issue 41).

`Navigation` is mixed into `openxiv.indexer.engine.hybrid.HybridBackend` and reads what it loaded:

- `top_passages`: the top passages across papers, not one per paper. The units are the full-text
  passages of the BM25 passage index and each paper's own text (title + abstract, the BM25 paper
  index), scored on one scale as a search's lexical family does (a passage's score times the
  query's passage factor, `openxiv.indexer.engine.passage_calibration`), ranked by score, then paper
  row (arxiv_id order), the paper's text before its passages, passages in order. Every unit is
  scored, so the ranking is exact at any depth and every page is a slice of one ranking (what the
  tiling of a paper search guarantees for papers). The filter mask applies before the cut; ``within``
  restricts to given papers (S2's snippet search ``paperIds``).
- `facet_counts`: the papers a query matches (a query term in their title + abstract or in a
  passage, after the filters: the papers a search's ``total_count`` counts) by year, month,
  category and author, from the snapshot's metadata postings (`openxiv.indexer.engine.meta`).
- `author_papers`: the papers of every folded name an author query matches (the ``authors``
  filter's rule, `openxiv.indexer.engine.postings.AuthorMatcher`, narrowed by `same_person` so that
  initials alone do not match), newest first.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from openxiv.corpus.normalize import fold
from openxiv.indexer.backend import (
    FacetCounts,
    PassageHit,
    PassageResult,
    SearchFilters,
    UnknownPapers,
    check_deadline,
    check_page,
)
from openxiv.indexer.engine.meta import NO_DATE, PaperMeta
from openxiv.indexer.engine.postings import PREFIX_MIN, gather
from openxiv.indexer.engine.ranking import ms_since
from openxiv.indexer.engine.sparse import PassageIndex, SparseIndex
from openxiv.indexer.engine.topk import top_k_rows

__all__ = ["Navigation", "counts_by_key", "date_counts", "posting_keys", "same_person", "top_keys"]


def posting_keys(ptr: np.ndarray) -> np.ndarray:
    """The key of every posting of CSR postings with offsets ``ptr`` (int32: a key per posting)."""
    n_keys = max(int(ptr.size) - 1, 0)
    return np.repeat(np.arange(n_keys, dtype=np.int32), np.diff(np.asarray(ptr)))


def counts_by_key(
    mask: np.ndarray, ptr: np.ndarray, rows: np.ndarray, keys: np.ndarray | None = None
) -> np.ndarray:
    """Per key of CSR postings (``ptr``, ``rows``), how many of its rows ``mask`` holds; ``keys``:
    `posting_keys` of ``ptr`` when the caller keeps them."""
    n_keys = int(ptr.size) - 1
    if n_keys <= 0 or rows.size == 0:
        return np.zeros(max(n_keys, 0), dtype=np.int64)
    hit = np.asarray(mask, dtype=bool)[np.asarray(rows)]
    keys = posting_keys(ptr) if keys is None else keys
    return np.bincount(keys[hit], minlength=n_keys)


def same_person(query: str, folded_name: str) -> bool:
    """Whether a name the ``authors`` filter matched (``folded_name``) is the author ``query`` asks
    for: besides the filter's rule, a word of two letters or more matches a whole word of the name
    (or its start, from 4 letters), so "Ashish Vaswani" keeps "a vaswani" but not "a v titova",
    whose words are only the query's initials."""
    words = [w for w in fold(query).split() if len(w) > 1]
    if not words:  # initials only ("A. V."): the filter's rule alone
        return True
    name = [w for w in folded_name.split() if len(w) > 1]
    return any(n == w or (len(w) >= PREFIX_MIN and n.startswith(w)) for w in words for n in name)


def date_counts(days: np.ndarray) -> tuple[list[tuple[int, int]], list[tuple[str, int]], int]:
    """``days`` (days since 1970, `NO_DATE` unknown) counted by year and by month, and the undated.
    The distinct days are counted first (a few thousand at most), then turned into months."""
    values = np.asarray(days)
    known = values[values != NO_DATE]
    distinct, per_day = np.unique(known, return_counts=True)
    months = distinct.astype("datetime64[D]").astype("datetime64[M]")
    month_keys, where = np.unique(months, return_inverse=True)
    per_month = np.bincount(where.ravel(), weights=per_day, minlength=month_keys.size).astype(np.int64)
    years: dict[int, int] = {}
    for m, c in zip(month_keys.tolist(), per_month.tolist(), strict=True):
        years[m.year] = years.get(m.year, 0) + int(c)
    return (
        sorted(years.items()),
        [(str(m), int(c)) for m, c in zip(month_keys.astype("datetime64[M]"), per_month, strict=True)],
        int(values.size - known.size),
    )


def top_keys(counts: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` keys with the most counts (more than 0), most first, ties by key: a partition, not a
    sort of every key."""
    if k <= 0 or counts.size == 0:
        return np.zeros(0, dtype=np.int64)
    if counts.size > k:
        kth = np.partition(counts, counts.size - k)[counts.size - k]
        above = np.flatnonzero(counts > kth)
        cand = np.concatenate([above, np.flatnonzero(counts == kth)[: k - above.size]])
    else:
        cand = np.arange(counts.size)
    cand = cand[counts[cand] > 0]
    return cand[np.lexsort((cand, -counts[cand]))]


class Navigation:
    """`openxiv.indexer.backend.Navigable` over the loaded BM25 indexes and metadata arrays."""

    meta: PaperMeta
    bm25_papers: SparseIndex
    passages: PassageIndex | None
    calibration: Any

    def _posting_keys(self, name: str) -> np.ndarray:
        """`posting_keys` of the category or author postings, made on first use and kept (4 bytes a
        posting: a facet count then costs a gather and a bincount, not a repeat per request)."""
        kept: dict[str, np.ndarray] = self.__dict__.setdefault("_facet_keys", {})
        if name not in kept:
            kept[name] = posting_keys(self.meta.cat_ptr if name == "categories" else self.meta.author_ptr)
        return kept[name]

    def _allowed(self, filters: SearchFilters | None, within: tuple[str, ...]) -> np.ndarray | None:
        """The filter mask, narrowed to the rows of ``within`` when given."""
        allowed = self.meta.mask(filters)
        if not within:
            return allowed
        rows = [self.meta.row_of(a) for a in within]
        missing = [a for a, r in zip(within, rows, strict=True) if r is None]
        if missing:
            raise UnknownPapers(missing)
        only = np.zeros(self.meta.n, dtype=bool)
        only[np.asarray(rows, dtype=np.int64)] = True
        return only if allowed is None else only & allowed

    def top_passages(
        self,
        query: str,
        *,
        top_k: int = 10,
        offset: int = 0,
        filters: SearchFilters | None = None,
        within: tuple[str, ...] = (),
        deadline: float | None = None,
    ) -> PassageResult:
        t0 = time.perf_counter()
        check_page(top_k, offset)
        check_deadline(deadline, "filters")
        allowed = self._allowed(filters, within)
        timings = {"filter": ms_since(t0)}
        check_deadline(deadline, "bm25")
        t = time.perf_counter()
        depth = offset + top_k
        paper_scores = self.bm25_papers.masked_scores(query, allowed)
        rows, scores = top_k_rows(paper_scores, depth)
        total = int(np.count_nonzero(paper_scores))
        units_row, units_sub = rows.astype(np.int64), np.full(rows.size, -1, dtype=np.int64)
        index = self.passages
        if index is not None and index.n_passages:
            factor = self.calibration.factor(query, self.bm25_papers, index)
            full = index.sparse.scores(index.sparse.query_tokens(query))
            if allowed is not None:
                np.multiply(full, np.asarray(allowed)[index.paper_row], out=full)
            prow, pscore = top_k_rows(full, depth)
            total += int(np.count_nonzero(full))
            units_row = np.concatenate([units_row, np.asarray(index.paper_row)[prow].astype(np.int64)])
            units_sub = np.concatenate([units_sub, prow.astype(np.int64)])
            scores = np.concatenate([scores, (pscore * np.float32(factor)).astype(np.float32)])
        timings["bm25"] = ms_since(t)
        order = np.lexsort((units_sub, units_row, -scores))[offset:depth]
        hits = []
        for i in order.tolist():
            sub = int(units_sub[i])
            pid = None if sub < 0 else int(index.passage_ids[sub])  # type: ignore[union-attr]
            hits.append(PassageHit(str(self.meta.arxiv_ids[units_row[i]]), float(scores[i]), pid))
        timings["total"] = ms_since(t0)
        return PassageResult(hits=hits, total_count=total, timings_ms=timings)

    def facet_counts(
        self,
        query: str,
        *,
        filters: SearchFilters | None = None,
        top_authors: int = 10,
        deadline: float | None = None,
    ) -> FacetCounts:
        t0 = time.perf_counter()
        check_deadline(deadline, "filters")
        allowed = self.meta.mask(filters)
        if query.strip():
            check_deadline(deadline, "bm25")
            matches = self.bm25_papers.masked_scores(query, allowed) > 0
            index = self.passages
            if index is not None and index.n_passages:
                matches |= index.search(query, 1, allowed).paper_scores > 0
        else:
            matches = np.ones(self.meta.n, dtype=bool) if allowed is None else np.asarray(allowed).copy()
        check_deadline(deadline, "counts")
        meta = self.meta
        years, months, undated = date_counts(np.asarray(meta.dates)[matches])
        per_cat = counts_by_key(matches, meta.cat_ptr, meta.cat_rows, self._posting_keys("categories"))
        cats = sorted(
            ((meta.categories[k], int(per_cat[k])) for k in np.flatnonzero(per_cat).tolist()),
            key=lambda kv: (-kv[1], kv[0]),
        )
        per_author = counts_by_key(matches, meta.author_ptr, meta.author_rows, self._posting_keys("authors"))
        authors = []
        for k in top_keys(per_author, top_authors).tolist():
            posted = np.asarray(meta.author_rows[meta.author_ptr[k] : meta.author_ptr[k + 1]])
            example = int(posted[np.asarray(matches)[posted]][0])
            authors.append((meta.authors[k], int(per_author[k]), str(meta.arxiv_ids[example])))
        return FacetCounts(
            total=int(np.count_nonzero(matches)),
            years=years,
            months=months,
            undated=undated,
            categories=cats,
            authors=authors,
            timings_ms={"total": ms_since(t0)},
        )

    def author_papers(self, name: str) -> tuple[list[str], list[str]]:
        meta = self.meta
        keys = [k for k in meta.author_keys([name]) if same_person(name, meta.authors[k])]
        if not keys:
            return [], []
        rows = np.unique(
            np.asarray(meta.author_rows)[gather(meta.author_ptr, np.asarray(keys, dtype=np.int64))]
        )
        days = np.asarray(meta.dates)[rows].astype(np.int64)
        order = np.lexsort((rows, -days))  # newest first; undated (NO_DATE) last; ties by id
        return [meta.authors[k] for k in keys], [str(meta.arxiv_ids[r]) for r in rows[order]]
