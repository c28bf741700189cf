"""Category prior: papers of the fields a query's best results belong to move up below the kept head.

A topic query ("diffusion language models") names a field; its relevant papers mostly carry the
arXiv categories its best results carry (cs.CL, cs.LG), while the papers that merely share its words
come from anywhere (a "diffusion" paper of cond-mat). The prior predicts the query's categories from
the first ``docs`` papers of the fused ranking, each weighted by ``1 / rank`` (the first paper says
most), and gives every candidate the summed share of its categories, at most 1:

    share(c) = Σ_{i ≤ docs, c ∈ cats(i)} (1 / i) / Σ_{i ≤ docs} (1 / i)
    prior(d) = min(1, Σ_{c ∈ cats(d)} share(c))
    (0 for a paper without categories; with ``uncategorised="mean"``, the mean of prior(d') over
    the candidates d' that have categories)

The sum rewards a paper cross-listed in two predicted fields (cs.CL and cs.LG) over one in a single
field; it beat the best single category (max) and the mean on the dev topic queries, and 1/rank
beat uniform and score weights by 2-fold cross-validation (docs/indexing.md, «Category prior»).
A paper without categories (most full texts read from plain text or PDFs carry none) has prior 0,
so every categorised candidate of a predicted field moves above it; `PriorConfig.uncategorised`
``mean`` gives it the candidates' expected prior instead, its field being unknown (issue 37; measured
without effect on the dev sets, so not the default: docs/indexing.md, «Category prior»).

Candidates below the first ``head`` places are re-scored ``lo + (s − lo) · (1 + weight · prior(d))``
(``lo`` the lowest fused score of the list, so the factor works for every fusion mode, ``zscore``'s
negative scores included) and re-sorted; the first ``head`` places stay exactly as they were, so a
known item found in the top 10 keeps its place (the same construction as feedback's kept head,
`openxiv.indexer.engine.prf.keep_head`). It reorders the fused candidates and adds or drops none, so
``total_count``, filters and paging mean what they meant.

Categories are read from the snapshot's metadata (``PaperMeta``'s category postings, inverted once
per process into a per-paper view by `PaperCategories`): no rebuild.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from openxiv.corpus.settings.model import Settings
from openxiv.indexer.engine.fusion import sort_desc
from openxiv.indexer.engine.meta import PaperMeta
from openxiv.indexer.engine.prf import keep_head

__all__ = ["CategoryPrior", "PaperCategories", "PriorConfig", "category_prior"]


@dataclass(frozen=True)
class PriorConfig:
    docs: int = 50
    """First papers of the fused ranking that predict the query's categories (0 = prior off)."""
    weight: float = 2.0
    """``weight`` in the boost ``1 + weight · prior``: at 2 a paper wholly in the predicted fields scores up to 3 times."""
    head: int = 10
    """Places of the fused ranking the prior never moves."""
    uncategorised: str = "zero"
    """A paper without categories: ``zero`` prior, or the ``mean`` of the categorised candidates'."""

    @classmethod
    def of(cls, settings: Settings) -> PriorConfig:
        return cls(
            settings.prior_docs, settings.prior_weight, settings.prior_head, settings.prior_uncategorised
        )

    @property
    def enabled(self) -> bool:
        return self.docs > 0 and self.weight > 0


class PaperCategories:
    """The categories of each paper row: the inverse of `PaperMeta`'s category postings (CSR)."""

    def __init__(self, meta: PaperMeta) -> None:
        self.n_categories = len(meta.categories)
        ptr = np.asarray(meta.cat_ptr, dtype=np.int64)
        counts = ptr[1:] - ptr[:-1]
        cat_of_posting = np.repeat(np.arange(self.n_categories, dtype=np.int64), counts)
        rows = np.asarray(meta.cat_rows, dtype=np.int64)
        order = np.lexsort((cat_of_posting, rows))
        self.cats = cat_of_posting[order]
        """Category ids of row r: ``cats[ptr[r]:ptr[r+1]]``, ascending."""
        self.ptr = np.zeros(meta.n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=meta.n), out=self.ptr[1:])

    def of(self, row: int) -> np.ndarray:
        return self.cats[self.ptr[row] : self.ptr[row + 1]]

    def _flat(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(position in ``rows``, category id) for every category of every row."""
        lo, hi = self.ptr[rows], self.ptr[rows + 1]
        counts = hi - lo
        owner = np.repeat(np.arange(rows.size), counts)
        starts = np.repeat(lo - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
        return owner, self.cats[starts + np.arange(int(counts.sum()))]

    def shares(self, rows: np.ndarray) -> np.ndarray:
        """``share(c)`` of every category for predicting papers ``rows`` (best first, 1/rank weights)."""
        out = np.zeros(self.n_categories, dtype=np.float64)
        if rows.size == 0:
            return out
        weights = 1.0 / np.arange(1, rows.size + 1, dtype=np.float64)
        owner, cats = self._flat(rows.astype(np.int64))
        np.add.at(out, cats, weights[owner])
        return out / weights.sum()

    def prior(self, rows: np.ndarray, shares: np.ndarray, uncategorised: str = "zero") -> np.ndarray:
        """``prior(d)`` of each row: the summed share of its categories, at most 1. A row without
        any gets 0, or with ``uncategorised="mean"`` the mean prior of the rows that have some: its
        field is unknown, and the expected prior of a candidate is what says nothing either way."""
        owner, cats = self._flat(rows.astype(np.int64))
        out = np.minimum(np.bincount(owner, weights=shares[cats], minlength=rows.size), 1.0)
        if uncategorised == "mean":
            known = self.ptr[rows + 1] > self.ptr[rows]
            if known.any() and not known.all():
                out[~known] = out[known].mean()
        return out


def category_prior(
    categories: PaperCategories, rows: np.ndarray, scores: np.ndarray, config: PriorConfig
) -> tuple[np.ndarray, np.ndarray]:
    """The fused ranking (``rows``, ``scores``: best first) with the places below ``config.head``
    re-scored by the category prior and re-sorted (ties by row, i.e. arxiv_id); the same rows."""
    if not config.enabled or rows.size <= config.head:
        return rows, scores
    scores = scores.astype(np.float64)
    shares = categories.shares(rows[: config.docs])
    lo = float(scores.min())
    boosted = lo + (scores - lo) * (
        1.0 + config.weight * categories.prior(rows, shares, config.uncategorised)
    )
    return keep_head((rows, scores), sort_desc(rows.astype(np.int64), boosted), config.head)


class CategoryPrior:
    """The prior of one snapshot for a backend: its `PaperCategories` view, built on the first query
    that uses the prior (a few milliseconds for the whole corpus) and shared by every `tuned` view."""

    def __init__(self, meta: PaperMeta) -> None:
        self.meta = meta
        self._view: PaperCategories | None = None
        self._lock = threading.Lock()

    def apply(
        self, rows: np.ndarray, scores: np.ndarray, config: PriorConfig
    ) -> tuple[np.ndarray, np.ndarray]:
        """`category_prior` on a fused ranking of this snapshot."""
        if not config.enabled or rows.size <= config.head:
            return rows, scores
        with self._lock:
            if self._view is None:
                self._view = PaperCategories(self.meta)
        return category_prior(self._view, rows, scores, config)
