"""The best rows of a query's first BM25 pass without another pass over the corpus.

Two gates look at the first pass's best scores over every paper, ``first = max(paper text score,
passage_scale * best passage score)``: pseudo-relevance feedback's confident head
(`openxiv.indexer.engine.prf.confident`) and the query-kind profile
(`openxiv.indexer.engine.query_kind.profile`). Built as an array, ``first`` is an elementwise max and
then several top-k cuts over one float per paper: at millions of papers, passes of milliseconds each
that the lexical sides have already made. `first_top` takes its best ``k`` rows from the two sides'
own ranked lists instead.

It is exact, ties included: the candidates are every row of each list scoring at least that list's
``k``-th score (scaled, for passages). A row outside both is beaten strictly by ``k`` candidates:
if its ``first`` is its paper score, by the ``k`` rows of the paper list scoring above it; if it is
its scaled passage score, by the ``k`` rows of the passage list (scaling by a positive number never
reverses an order). When a list ends inside the tie at its ``k``-th score (rows beyond it might tie
too), the array is built as before.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from openxiv.indexer.engine.paper_pass import PaperPass, scores_of
from openxiv.indexer.engine.topk import top_k_rows

__all__ = ["first_scores", "first_top"]


def first_scores(paper_s: np.ndarray | PaperPass, ph: Any, scale: float) -> np.ndarray:
    """``first`` over every paper: the paper text score, or the scaled best passage score if higher."""
    s = scores_of(paper_s)
    return s if ph is None else np.maximum(s, scale * ph.paper_scores)


def _ties_kept(vals: np.ndarray, k: int, depth: int) -> int | None:
    """How many rows of a ranked list (``vals`` best first, cut at ``depth``) score at least its
    ``k``-th score; ``None`` when the cut may have left out rows of that tie."""
    n = int(vals.size)
    m = n if n <= k else int(np.count_nonzero(vals >= vals[k - 1]))  # best first: a prefix
    if m == n and n >= depth:
        return None
    return m


def first_top(
    rows: np.ndarray,
    scores: np.ndarray,
    paper_s: np.ndarray | PaperPass,
    ph: Any,
    scale: float,
    depth: int,
    k: int,
) -> tuple[np.ndarray, np.ndarray]:
    """``top_k_rows(first_scores(paper_s, ph, scale), k)`` from the paper side's ranked list
    (``rows``, ``scores``: ``top_k_rows(paper_s, depth)``) and the passage side's (``ph.papers``,
    ``ph.scores`` at the same ``depth``); ``paper_s``: every paper's score, or the pass that scores
    the candidates alone (`openxiv.indexer.engine.paper_pass.PaperPass.at`)."""
    m = _ties_kept(scores, k, depth)
    cands = [rows[:m]] if m is not None else None
    if ph is not None and cands is not None:
        scaled = scale * ph.scores
        mp = _ties_kept(scaled, k, depth)
        cands = None if mp is None else [*cands, ph.papers[:mp]]
    if cands is None:  # a list ends inside its tie: the whole array
        return top_k_rows(first_scores(paper_s, ph, scale), k)
    c = np.unique(np.concatenate(cands).astype(np.int64))  # ascending: ties keep row order
    at = paper_s.at(c) if isinstance(paper_s, PaperPass) else paper_s[c]
    vals = at if ph is None else np.maximum(at, scale * ph.paper_scores[c])
    best, top = top_k_rows(vals, k)
    return c[best], top
