"""The dense paper side of a hybrid query without searching the approximate index under a mask of
every lexical match.

A mode that runs a lexical side ranks the dense side only among the papers matching a query term
(`openxiv.indexer.engine.hybrid`). Done as a filtered HNSW walk or IVF probe (an id selector of
every match), its cost grows with the corpus, far above an unfiltered search's (measured in
docs/scale.md, «The latency model»): ten times the papers match ten times more rows.

`search_among` answers it from two small candidate sets instead:

1. the approximate index (HNSW or IVF) searched *unfiltered* for ``deep`` neighbours, of which the
   lexical matches are kept (their scores are the exact inner products with the stored vectors:
   HNSW stores them as float32, the IVF as float16, as the exact fp16 index does);
2. the rows the lexical sides already ranked highest (``known``: BM25's top ``depth`` papers and
   papers by passage), scored exactly from their stored vectors;

and returns the best ``k`` of their union by (score, row). A lexical match missing from both (far
down the dense ranking of the whole corpus *and* outside BM25's top) is left out: the measured cost
on topic recall is in BENCHMARKS.md («Scale»). ``total_count`` and paging do not change: they are
defined by the lexical sides, and the dense side still returns ``min(k, matches)`` papers.

Exact (flat) indexes scan every vector whatever the mask, and few matches (``<=
EXACT_SUBSET_MAX``) are scored exactly: both keep `DenseIndex.search` (so the answers of a corpus
below the ANN threshold are unchanged), as does ``deep=0`` (the setting ``OPENXIV_HNSW_DEEP``).
"""

from __future__ import annotations

import numpy as np

from openxiv.indexer.engine.dense import EXACT_SUBSET_MAX, DenseIndex
from openxiv.indexer.engine.ranking import PASSAGE_OVERFETCH
from openxiv.indexer.engine.sparse import PassageIndex

__all__ = ["passages_among", "search_among"]


def search_among(
    index: DenseIndex,
    qvec: np.ndarray,
    k: int,
    allowed: np.ndarray | None,
    known: np.ndarray | None,
    deep: int,
    exact_max: int = EXACT_SUBSET_MAX,
) -> tuple[np.ndarray, np.ndarray]:
    """Best ``k`` rows among ``allowed`` for one query vector: ``(scores, rows)``, 1-D, best first,
    ties by lower row (see the module docstring for when it is approximate). Up to ``exact_max``
    allowed rows keep `DenseIndex.search` (exact over the allowed rows)."""
    if allowed is None or not index.approximate or deep <= 0 or k <= 0:
        return _one(index.search(qvec, k, allowed=allowed))
    n_allowed = int(np.count_nonzero(allowed))
    if n_allowed <= exact_max or n_allowed == index.ntotal:
        return _one(index.search(qvec, k, allowed=allowed))
    s, r = _one(index.search(qvec, min(max(deep, k), index.ntotal)))
    keep = allowed[r]
    s, r = s[keep], r[keep]
    if known is not None and known.size:
        extra = np.setdiff1d(np.asarray(known, dtype=np.int64), r)
        extra = extra[allowed[extra]]
        if extra.size:
            q = np.asarray(qvec, dtype=np.float32).reshape(-1)
            s = np.concatenate([s, index.reconstruct(extra) @ q])
            r = np.concatenate([r, extra])
    order = np.lexsort((r, -s))[:k]
    return s[order].astype(np.float32), r[order].astype(np.int64)


def _one(result: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Row 0 of a `DenseIndex.search` answer, padding dropped."""
    s, r = np.asarray(result[0])[0], np.asarray(result[1])[0]
    keep = r >= 0
    return s[keep], r[keep]


def passages_among(
    index: DenseIndex, passages: PassageIndex, qvec: np.ndarray, depth: int, allowed: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, dict[int, int]]:
    """The dense passage side collapsed to papers: the best ``depth`` papers among ``allowed`` by
    their best passage (of ``depth · PASSAGE_OVERFETCH`` passages searched), as ``(rows, scores,
    {row: winning passage id})``, best first, ties by passage row."""
    pallowed = None if allowed is None else allowed[passages.paper_row]
    k = min(depth * PASSAGE_OVERFETCH, passages.n_passages)
    s, r = _one(index.search(qvec, k, allowed=pallowed))
    papers = np.asarray(passages.paper_row[r], dtype=np.int64)
    order = np.lexsort((r, papers, -s))  # best first; collapse keeps each paper's first
    s, r, papers = s[order], r[order], papers[order]
    _, first = np.unique(papers, return_index=True)
    first = np.sort(first)[:depth]
    rows, best = papers[first], s[first].astype(np.float32)
    winners = passages.passage_ids[r[first]]
    return rows, best, dict(zip(rows.tolist(), winners.tolist(), strict=True))
