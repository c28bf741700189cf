"""Pseudo-relevance feedback (RM3-style) on BM25 over paper text: a third ranked list for fusion.

A topic query names a field in a few words ("diffusion language models"); the papers of that field
share many more words than the query holds. Feedback takes the query's ``docs`` best papers by BM25
on paper text as if they were relevant and builds an expanded query from their words (relevance
model, Lavrenko & Croft 2001; RM3 as in Anserini):

- ``P(d|q)``: the feedback papers' BM25 scores, normalised to sum 1;
- ``P(w|d)``: a paper's BM25 term weights (idf · saturated tf, the index's own matrix), normalised
  per paper, so a word common to the whole corpus counts little;
- ``P(w|R) = Σ_d P(d|q) · P(w|d)``; the ``terms`` best words (query words among them when they are
  characteristic) with weights normalised to sum 1 form the expanded query.

The expanded query ranks the papers once more (``Σ_w P(w|R) · bm25(w, d)``) and that list enters the
fusion as its own side with weight ``weight`` next to the BM25 and dense families. It replaces
nothing: the original query's BM25 list still carries the exact matches a known-item query needs.
Feeding the expansion back into the BM25 paper scores instead (classic RM3 interpolation) lets the
expanded paper texts outscore full-text passages and loses known items (docs/indexing.md).

A *confident* first pass keeps its head: its first ``head`` places (the ranking without feedback)
stay as they are and feedback reorders only the places below. A query is confident when its best
BM25 score (paper text or passage) is at least ``gate`` times its 10th, or when the best passage of
its best paper holds at least ``coverage`` of the query's words (`passage_coverage`). An exact
sentence or a bag of a paper's rare words shows one or the other; a topic query's scores are flat
and no single passage holds its words (dev sets: the score ratio's median is 1.21 for topic
queries, 2.21 / 1.64 for exact / keyword known items; the coverage's 95th percentile is 0.80 for
topic queries, its 25th 1.00 for both kinds of known items). Keeping the head rather than skipping
feedback gives a confident query the recall below it and its known item the first places it had
(selective feedback: Cronen-Townsend, Zhou & Croft 2004; the choice: docs/indexing.md).
The default ``gate`` 1 makes every query confident (feedback below the first 10 places only): the
gated head (1.2 / 0.6) gains topic R@10 but lost the issue-14 rule's tie-break on known-item MRR.

Only papers the original query matches get a feedback score (the expansion reorders, it adds none),
so ``total_count`` and the filters mean what they meant without feedback. The per-paper term view
(`openxiv.indexer.engine.doc_terms`) is the BM25 matrix by rows, written by the build and
memory-mapped when the snapshot opens; its time and memory, and the cost per query, are measured by
`scripts/bench_quality.py --feedback-cost` (docs/indexing.md, «Pseudo-relevance feedback»).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from openxiv.corpus.settings.model import Settings
from openxiv.indexer.engine.doc_terms import DocTerms
from openxiv.indexer.engine.maxscore import top_k_pruned
from openxiv.indexer.engine.paper_pass import PaperPass
from openxiv.indexer.engine.sparse import PassageIndex, SparseIndex
from openxiv.indexer.engine.topk import top_k_rows

__all__ = [
    "FeedbackConfig",
    "confident",
    "confident_head",
    "confident_top",
    "expand",
    "expanded_scores",
    "feedback_list",
    "keep_head",
    "passage_coverage",
    "rescore",
]


@dataclass(frozen=True)
class FeedbackConfig:
    docs: int = 10
    """Feedback papers: the query's best BM25 papers taken as relevant (0 = feedback off)."""
    terms: int = 20
    """Words of the expanded query."""
    weight: float = 0.3
    """Weight of the feedback list in the fusion (the BM25 family has ``weight_bm25``)."""
    gate: float = 1.0
    """Confident when the first pass's best BM25 score is at least ``gate`` times its 10th (<= 1:
    always, 0: this test off)."""
    coverage: float = 0.6
    """Confident when the best passage of the best paper holds this share of the query's words (> 1: never)."""
    head: int = 10
    """Places of the ranking without feedback a confident query keeps."""

    @classmethod
    def of(cls, settings: Settings) -> FeedbackConfig:
        return cls(
            settings.prf_docs,
            settings.prf_terms,
            settings.prf_weight,
            settings.prf_gate,
            settings.prf_coverage,
            settings.prf_head,
        )

    @property
    def enabled(self) -> bool:
        return self.docs > 0 and self.terms > 0 and self.weight > 0


@numba.njit(nogil=True)
def _accumulate_matched(
    data, indptr, indices, token_ids, weights, scores, out
):  # pragma: no cover - compiled
    """``out[d] += Σ_t weights[t] · bm25(t, d)`` over the postings of ``token_ids``, for the rows
    whose ``scores`` are positive only (the papers the original query matches): a factor of 1 or 0
    per posting instead of a pass over every row afterwards to zero the others, and instead of a
    branch, which a filter that keeps some of the papers makes unpredictable."""
    one, zero = np.float32(1.0), np.float32(0.0)
    for i in range(token_ids.size):
        t = token_ids[i]
        w = weights[i]
        for j in range(indptr[t], indptr[t + 1]):
            d = indices[j]
            out[d] += (w * data[j]) * (one if scores[d] > 0 else zero)


def confident(scores: np.ndarray, ratio: float) -> bool:
    """Whether the first pass already singles out its answer: the best score is at least ``ratio``
    times the 10th (an exact sentence or a title matched). ``ratio`` <= 0 never says so; ``ratio``
    <= 1 always does (every query keeps its head: the shipped default)."""
    return confident_top(top_k_rows(scores, 10)[1], ratio)


def confident_top(top: np.ndarray, ratio: float) -> bool:
    """`confident` from the first pass's best 10 scores (best first) instead of all of them."""
    if ratio <= 0.0:
        return False
    if ratio <= 1.0:
        return True
    return top.size == 10 and float(top[0]) >= ratio * float(top[9])


def confident_head(
    config: FeedbackConfig,
    query: str,
    top: tuple[np.ndarray, np.ndarray],
    passages: PassageIndex | None = None,
    passage_scores: np.ndarray | None = None,
    coverage: float | None = None,
) -> int:
    """``config.head`` when the first pass is confident, else 0: its best BM25 score stands out
    (paper text or passage; ``top``: its best 10 rows and scores, `openxiv.indexer.engine.first_pass`),
    or the best paper's best passage holds the query's words (``passage_scores`` over ``passages``,
    when the passage side ran; `passage_coverage`; or ``coverage``, that share computed by a backend
    holding no `PassageIndex`: `openxiv.indexer.engine.milvus_feedback`)."""
    if confident_top(top[1], config.gate):
        return config.head
    if coverage is None:
        if passages is None or passage_scores is None or not top[0].size:
            return 0
        coverage = passage_coverage(passages, int(top[0][0]), passage_scores, query)
    return config.head if coverage >= config.coverage else 0


def expand(
    doc_terms: DocTerms,
    scores: np.ndarray,
    config: FeedbackConfig,
    ranked: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The expansion terms and weights for a query whose BM25 scores over all rows are ``scores``.
    ``ranked``: ``top_k_rows(scores, n)`` for some ``n >= config.docs`` when the caller has it (its
    first ``docs`` rows are the feedback papers: one order, ties by row, so a prefix of it)."""
    if ranked is not None and ranked[0].size >= config.docs:
        rows, top = ranked[0][: config.docs], ranked[1][: config.docs]
    else:
        rows, top = top_k_rows(scores, config.docs)
    if rows.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float64)
    return doc_terms.relevance_model(rows, top / top.sum(), config.terms)


def rescore(
    doc_terms: DocTerms,
    scores: np.ndarray,
    config: FeedbackConfig,
    ranked: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """The expanded query's BM25 score of every row, kept only where the original query matches
    (``scores`` > 0); all zeros when nothing matches. ``ranked``: as in `expand`."""
    terms, weights = expand(doc_terms, scores, config, ranked)
    return expanded_scores(doc_terms.sparse, terms, weights, scores)


def expanded_scores(
    sparse: SparseIndex, terms: np.ndarray, weights: np.ndarray, scores: np.ndarray
) -> np.ndarray:
    """``Σ_w weights[w] · bm25(terms[w], d)`` of every row ``d`` of ``sparse`` where ``scores`` > 0
    (0 elsewhere): the expanded query scored over every posting of its terms."""
    out = np.zeros(sparse.n_docs, dtype=np.float32)
    if terms.size:
        _accumulate_matched(
            sparse.data, sparse.indptr, sparse.indices, terms, weights.astype(np.float32), scores, out
        )
    return out


def feedback_list(
    doc_terms: DocTerms,
    paper_scores: np.ndarray | PaperPass,
    config: FeedbackConfig,
    depth: int,
    ranked: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The feedback side: the ``depth`` best papers for the expanded query. ``paper_scores``: the
    original query's score of every paper, or its pass (`openxiv.indexer.engine.paper_pass`), whose
    ranked list gives the feedback papers and whose matches the papers the expansion may score;
    a pruned pass ranks the expanded query by exact top-k pruning too
    (`openxiv.indexer.engine.maxscore`: the same rows and scores as `rescore` and a cut).
    ``ranked``: the original query's ranking when the caller has it (`expand`)."""
    if not isinstance(paper_scores, PaperPass):
        return top_k_rows(rescore(doc_terms, paper_scores, config, ranked), depth)
    papers = paper_scores
    sparse = doc_terms.sparse
    if not papers.pruned or sparse.term_max is None:
        return top_k_rows(rescore(doc_terms, papers.full(), config, (papers.rows, papers.scores)), depth)
    rows, top = papers.top(config.docs)
    if rows.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    terms, weights = doc_terms.relevance_model(rows, top / top.sum(), config.terms)
    if terms.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    return top_k_pruned(
        sparse.data, sparse.indptr, sparse.indices, sparse.term_max, sparse.n_docs,
        terms, depth, weights.astype(np.float32), papers.matches,
    )  # fmt: skip


def passage_coverage(passages: PassageIndex, paper_row: int, passage_scores: np.ndarray, query: str) -> float:
    """Share of the query's distinct words (passage vocabulary) that the best passage of
    ``paper_row`` holds; 0 when the paper has no passages or the query no known word. A known-item
    query is one passage's words, so its best paper's best passage holds them all; a topic query's
    words are spread over many papers."""
    lo, hi = int(passages.ptr[paper_row]), int(passages.ptr[paper_row + 1])
    tokens = np.unique(passages.sparse.query_tokens(query))
    if hi <= lo or tokens.size == 0:
        return 0.0
    pos = lo + int(np.argmax(passage_scores[lo:hi]))
    sparse, held = passages.sparse, 0
    for t in tokens.tolist():
        column = sparse.indices[sparse.indptr[t] : sparse.indptr[t + 1]]  # rows ascending (CSC)
        i = int(np.searchsorted(column, pos))
        held += i < column.size and int(column[i]) == pos
    return held / tokens.size


def keep_head(
    plain: tuple[np.ndarray, np.ndarray], fed: tuple[np.ndarray, np.ndarray], head: int
) -> tuple[np.ndarray, np.ndarray]:
    """The fused ranking with feedback (``fed``: rows, scores) below the first ``head`` rows of the
    one without (``plain``). The tail keeps ``fed``'s scores; the kept rows keep ``plain``'s score
    differences, shifted to sit just above the tail's best, so scores decrease down the list and
    the kept rows tie only where ``plain`` tied them (then in its arxiv_id order). Without a tail
    (every candidate kept: a narrowly filtered search) the kept rows keep ``plain``'s scores, which
    were shifted to 1e-06 before (issue 21)."""
    kept_rows, kept_scores = plain[0][:head], plain[1][:head].astype(np.float64)
    fed_rows, fed_scores = fed
    tail = ~np.isin(fed_rows, kept_rows)
    tail_scores = fed_scores[tail].astype(np.float64)
    if kept_rows.size and tail_scores.size:  # no tail: the kept rows keep their own scores
        kept_scores = float(tail_scores[0]) + HEAD_STEP + (kept_scores - kept_scores[-1])
    rows = np.concatenate([kept_rows, fed_rows[tail]]).astype(np.int64)
    return rows, np.concatenate([kept_scores, tail_scores])


HEAD_STEP = 1e-6
"""How far the last kept row sits above the best row of the tail (any positive gap keeps the order)."""
