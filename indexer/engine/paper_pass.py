"""One query's BM25 pass over the paper rows, as the later stages read it: the best ``depth`` rows, the
rows that match, and any row's exact score on demand.

The stages after the lexical one read three things of the paper side: its ranked list (fusion, the
feedback papers, the first pass's best 10), which papers hold a query term (``total_count``, the
dense side's mask, the papers feedback may score) and, now and then, the score of a paper outside the
list (a paper found by its passages, `openxiv.indexer.engine.first_pass.first_top`). None needs every
paper's score. `paper_pass` therefore ranks by exact top-k pruning
(`openxiv.indexer.engine.maxscore`) when the snapshot has its term bounds and ``pruned`` is on, marks
the matching rows in a pass over the terms' rows that adds no score, and scores single rows by a
search in each term's rows; the whole score vector is made only if a stage asks for it (`full`).
Without term bounds (a snapshot built before them) or with pruning off, it scores every row as
before. Either way every list, mask and score is the same, bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from openxiv.indexer.engine.maxscore import mark_matches, score_rows, top_k_pruned
from openxiv.indexer.engine.sparse import SparseIndex
from openxiv.indexer.engine.topk import top_k_rows

__all__ = ["PaperPass", "paper_pass", "scores_of"]


@dataclass
class PaperPass:
    """The paper side of one query at one depth (every array over the paper rows)."""

    index: SparseIndex
    tokens: np.ndarray
    """The query's term ids (repeats kept)."""
    allowed: np.ndarray | None
    """The filter mask (``None``: every row)."""
    depth: int
    rows: np.ndarray
    """The best ``depth`` rows, best first, ties by ascending row."""
    scores: np.ndarray
    """Their float32 scores."""
    matches: np.ndarray
    """The rows with a positive score within the filter (holding a query term)."""
    pruned: bool
    """Whether the ranked lists come from pruning (the feedback query's too)."""
    _full: np.ndarray | None = field(default=None, repr=False)

    def full(self) -> np.ndarray:
        """Every row's score, 0 outside the filter (made on first need when the pass was pruned)."""
        if self._full is None:
            s = self.index.scores(self.tokens)
            if self.allowed is not None:
                np.multiply(s, self.allowed, out=s)
            self._full = s
        return self._full

    def at(self, rows: np.ndarray) -> np.ndarray:
        """The scores of ``rows`` (0 outside the filter)."""
        if self._full is not None:
            return self._full[rows]
        idx = self.index
        out = score_rows(idx.data, idx.indptr, idx.indices, self.tokens, rows)
        return out * self.allowed[rows] if self.allowed is not None else out

    def top(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The best ``k`` rows and scores: a prefix of the ranked list when it holds them."""
        if k <= self.depth or self.rows.size < self.depth:
            return self.rows[:k], self.scores[:k]
        return top_k_rows(self.full(), k)


def paper_pass(
    index: SparseIndex, query: str, depth: int, allowed: np.ndarray | None, pruned: bool
) -> PaperPass:
    """``query``'s pass over ``index`` at ``depth`` within ``allowed`` (see the module docstring)."""
    tokens = index.query_tokens(query)
    bounds = index.term_max if pruned else None
    if bounds is None or index.n_docs == 0:
        s = index.scores(tokens)
        if allowed is not None:
            np.multiply(s, allowed, out=s)  # 0 outside; a pass, not a gather of the masked rows
        rows, scores = top_k_rows(s, depth)
        return PaperPass(index, tokens, allowed, depth, rows, scores, s > 0, False, s)
    rows, scores = top_k_pruned(
        index.data, index.indptr, index.indices, bounds, index.n_docs, tokens, depth, mask=allowed
    )
    matches = mark_matches(index.indptr, index.indices, index.n_docs, tokens)
    if allowed is not None:
        np.logical_and(matches, allowed, out=matches)
    return PaperPass(index, tokens, allowed, depth, rows, scores, matches, True)


def scores_of(papers: np.ndarray | PaperPass) -> np.ndarray:
    """Every row's score: the array itself, or the pass's `PaperPass.full`."""
    return papers.full() if isinstance(papers, PaperPass) else papers
