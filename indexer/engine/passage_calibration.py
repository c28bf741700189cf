"""Passage calibration: the factor on BM25 passage scores before they meet paper-text scores.

A paper's BM25 family score is its best unit: its title + abstract or its best full-text passage
(`openxiv.indexer.engine.fusion.merge_max`). The two are BM25 over two collections, and each
collection weighs a word by its own inverse document frequency, ``idf = ln(1 + (N − df + ½) /
(df + ½))`` (the weights `openxiv.indexer.engine.sparse` builds). A word that is common among
abstracts and rare among full-text passages (``agent``, ``language`` in a corpus of recent
computer-science abstracts and older physics full texts) weighs up to twice as much in a passage,
so on a short query every paper that happens to have a full text outranked the on-topic abstracts
(issue 37: raw 7.2 against 3.8 for "large language model agents"), and a word rare among abstracts
but common in passages did the opposite to full-text known items.

BM25F's principle (Robertson, Zaragoza & Taylor, CIKM 2004) is one set of collection statistics for
all fields of a document. Scores are precomputed per collection, so the calibration applies it per
query: the passage side is multiplied by

    c(q) = scale · Σ_t idf_papers(t) / Σ_t idf_passages(t)

over the query's terms that both collections hold (repeats counted, as BM25 counts them), i.e. the
passage scores are put on the paper side's idf level. It reads only the two vocabularies' document
frequencies (a few array lookups per query term, no pass over papers or passages) and depends on
the query alone, not on filters or depth, so every block of one search and every page agree.
``fixed`` is the rule before issue 37: one constant factor (`BM25_PASSAGE_SCALE`) for every query.

``quantile`` grades the calibration per paper (`quantile_hits`). One factor per query puts both
collections on one idf level, but the two sides' score distributions still differ by more than a
factor: a short query's first page flipped between all abstracts and all full texts as the factor
crossed one point. ``quantile`` normalises the passage side onto the paper side per query, by rank:
among the papers holding every query term (as the index analyses it; in their title + abstract or in
any passage), the full texts ranked by their best passage and the other papers ranked by their
title + abstract are two populations of sizes ``n_f`` and ``n_a``; the ``j``-th best full text gets
the paper-text score found at rank ``j·n_a/n_f`` among the other papers, so the merged list takes full
texts in proportion to their share of the papers that hold the query, and having a full text gives
no advantage, nor a handicap, by itself. Every full text's best passage score is mapped through the
same monotone function (interpolated between the population's points, scaled beyond its ends), so
the order among full texts, and the passage a paper is shown with, do not change. A query whose
populations are smaller than `MIN_POPULATION` (full-text known items: a sentence held by one paper)
keeps the ``idf`` factor. It reads the query terms' postings on both sides (the same postings BM25
reads) and sorts the two populations' scores.

The choice and ``scale`` were measured on the dev sets (BENCHMARKS.md, «Passage calibration»).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from openxiv.indexer.engine.paper_pass import PaperPass, scores_of
from openxiv.indexer.engine.sparse import PassageHits, analyze

__all__ = [
    "CALIBRATIONS",
    "MIN_POPULATION",
    "PassageCalibration",
    "idf_of",
    "passage_factor",
    "quantile_hits",
]

CALIBRATIONS = ("idf", "fixed", "quantile")
MIN_POPULATION = 10
"""Fewest papers of each population (full texts, others) holding every query term for ``quantile``
to map by rank: a first page of each; below it a rank says little and the ``idf`` factor applies."""


def idf_of(index: Any, term_id: int) -> float:
    """The BM25 idf of vocabulary id ``term_id`` in ``index`` (a `SparseIndex`), from its column's
    document frequency: ``ln(1 + (N − df + ½) / (df + ½))``, the weight its matrix was built with."""
    df = int(index.indptr[term_id + 1] - index.indptr[term_id])
    n = int(index.n_docs)
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def passage_factor(query: str, papers: Any, passages: Any, scale: float, fallback: float) -> float:
    """``c(q)`` of the module doc for ``query`` over ``papers`` (the paper-text `SparseIndex`) and
    ``passages`` (the passage `SparseIndex`); ``fallback`` when no query term is in both (then a
    passage and a paper text never match the same word, and the factor orders nothing between them)."""
    words = analyze([query], papers.stemmer_name)[0]
    num = den = 0.0
    for w in words:
        tp, ts = papers.vocab.get(w), passages.vocab.get(w)
        if tp is None or ts is None:
            continue
        num += idf_of(papers, tp)
        den += idf_of(passages, ts)
    return scale * num / den if den > 0.0 else fallback


def _rows_of(index: Any, term_id: int) -> np.ndarray:
    return np.asarray(index.indices[index.indptr[term_id] : index.indptr[term_id + 1]], dtype=np.int64)


def every_term(query: str, papers: Any, passages: Any) -> np.ndarray:
    """Papers (rows) whose title + abstract or passages hold every term of ``query``, as analysed."""
    n = int(papers.n_docs)
    out = np.ones(n, dtype=bool)
    for w in set(analyze([query], papers.stemmer_name)[0]):
        has = np.zeros(n, dtype=bool)
        tp, ts = papers.vocab.get(w), passages.sparse.vocab.get(w)
        if tp is not None:
            has[_rows_of(papers, tp)] = True
        if ts is not None:
            has[passages.paper_row[_rows_of(passages.sparse, ts)]] = True
        out &= has
    return out


def _transfer(full_pop: np.ndarray, other_pop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rank map's points (module doc): passage scores ascending (distinct) and the paper-text
    score each maps to."""
    p = np.sort(full_pop)[::-1]
    a = np.sort(other_pop)[::-1]
    at = np.minimum((np.arange(1, p.size + 1) * a.size) // p.size, a.size - 1)
    mapped = a[at]
    xs, inv = np.unique(p, return_inverse=True)  # ascending, distinct
    ys = np.zeros(xs.size, dtype=np.float64)
    np.maximum.at(ys, inv, mapped)  # a tie takes its best rank's value
    return xs, ys


def _apply(xs: np.ndarray, ys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values`` through the map: interpolated inside, scaled by the end point's ratio outside."""
    out = np.interp(values, xs, ys).astype(np.float32)
    lo, hi = values < xs[0], values > xs[-1]
    out[lo] = values[lo] * (ys[0] / xs[0])
    out[hi] = values[hi] * (ys[-1] / xs[-1])
    out[values <= 0] = 0.0
    return out


def quantile_hits(
    query: str,
    paper_scores: np.ndarray,
    hits: PassageHits,
    papers: Any,
    passages: Any,
    min_population: int = MIN_POPULATION,
) -> PassageHits | None:
    """``hits`` with every paper's best passage score mapped onto the paper-text scores by rank
    (module doc, ``quantile``); ``None`` when a population is smaller than ``min_population``."""
    every = every_term(query, papers, passages)
    has_full = passages.ptr[1:] > passages.ptr[:-1]
    best = hits.paper_scores
    full_pop = best[every & has_full & (best > 0)]
    other_pop = paper_scores[every & ~has_full & (paper_scores > 0)]
    if full_pop.size < min_population or other_pop.size < min_population:
        return None
    xs, ys = _transfer(full_pop, other_pop)
    return replace(hits, scores=_apply(xs, ys, hits.scores), paper_scores=_apply(xs, ys, best))


@dataclass(frozen=True)
class PassageCalibration:
    """How passage scores are scaled per query (``Settings.passage_norm`` /
    ``passage_norm_scale``)."""

    method: str
    """``idf`` (the module doc's ``c(q)``), ``quantile`` (by rank, per paper; ``c(q)`` for a query
    it cannot map) or ``fixed`` (``fixed`` for every query)."""
    scale: float
    """``scale`` of ``c(q)``."""
    fixed: float
    """The factor of ``fixed``, and of ``idf`` when no query term is in both collections."""

    def factor(self, query: str, papers: Any, passages: Any) -> float:
        if self.method == "fixed" or passages is None:
            return self.fixed
        return passage_factor(query, papers, passages.sparse, self.scale, self.fixed)

    def calibrate(
        self,
        query: str,
        paper_scores: np.ndarray | PaperPass | None,
        hits: PassageHits,
        papers: Any,
        passages: Any,
    ) -> tuple[PassageHits, float]:
        """The passage side's hits as they meet paper texts and the factor still to apply to them:
        ``quantile`` maps ``hits`` itself (factor 1) when it can; otherwise ``hits`` and `factor`.
        ``paper_scores``: every paper's text score, or the pass that makes them on demand
        (`openxiv.indexer.engine.paper_pass`; only ``quantile`` reads them)."""
        if self.method == "quantile" and paper_scores is not None and passages is not None:
            mapped = quantile_hits(query, scores_of(paper_scores), hits, papers, passages)
            if mapped is not None:
                return mapped, 1.0
        return hits, self.factor(query, papers, passages)
