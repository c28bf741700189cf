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
The choice and ``scale`` were measured on the dev sets (BENCHMARKS.md, «Passage calibration»).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from openxiv.indexer.engine.sparse import analyze

__all__ = ["CALIBRATIONS", "PassageCalibration", "idf_of", "passage_factor"]

CALIBRATIONS = ("idf", "fixed")


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


@dataclass(frozen=True)
class PassageCalibration:
    """How passage scores are scaled per query (``Settings.passage_norm`` /
    ``passage_norm_scale``)."""

    method: str
    """``idf`` (the module doc's ``c(q)``) or ``fixed`` (``fixed`` for every query)."""
    scale: float
    """``scale`` of ``c(q)``."""
    fixed: float
    """The factor of ``fixed``, and of ``idf`` when no query term is in both collections."""

    def factor(self, query: str, papers: Any, passages: Any) -> float:
        if self.method == "fixed" or passages is None:
            return self.fixed
        return passage_factor(query, papers, passages.sparse, self.scale, self.fixed)
