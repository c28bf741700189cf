"""Passage calibration (`openxiv.indexer.engine.passage_calibration`) on a small real BM25 snapshot
with full texts: passage scores put on the paper texts' idf level per query (issue 37)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from openxiv.indexer.engine.passage_calibration import (
    PassageCalibration,
    every_term,
    passage_factor,
    quantile_hits,
)
from openxiv.indexer.engine.ranking import BM25_PASSAGE_SCALE


def _df_by_search(index: Any, word: str) -> int:
    """How many rows a one-word query matches, counted through the scoring kernel (not the matrix
    pointers the calibration reads)."""
    return int(np.count_nonzero(index.scores(index.query_tokens(word)) > 0))


def _idf(n: int, df: int) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def test_one_word_factor_is_the_ratio_of_the_two_collections_idf(sparse_index: Any) -> None:
    backend = sparse_index.backend
    papers, passages = backend.bm25_papers, backend.passages.sparse
    for word in ("model", "galaxy", "language"):
        dp, ds = _df_by_search(papers, word), _df_by_search(passages, word)
        assert dp > 0 and ds > 0, word
        want = _idf(papers.n_docs, dp) / _idf(passages.n_docs, ds)
        assert math.isclose(passage_factor(word, papers, passages, 1.0, 0.8), want, rel_tol=1e-9)
        assert math.isclose(passage_factor(word, papers, passages, 1.5, 0.8), 1.5 * want, rel_tol=1e-9)


def test_no_shared_term_falls_back_and_fixed_ignores_the_query(sparse_index: Any) -> None:
    backend = sparse_index.backend
    idf = PassageCalibration("idf", 1.0, BM25_PASSAGE_SCALE)
    fixed = PassageCalibration("fixed", 1.0, BM25_PASSAGE_SCALE)
    assert idf.factor("qqzzxv wwkkpt", backend.bm25_papers, backend.passages) == BM25_PASSAGE_SCALE
    assert fixed.factor("large language model", backend.bm25_papers, backend.passages) == BM25_PASSAGE_SCALE
    assert idf.factor("large language model", backend.bm25_papers, backend.passages) != BM25_PASSAGE_SCALE


def _full_text_share(backend: Any, query: str, k: int = 10) -> float:
    full = np.diff(np.asarray(backend.passages.ptr)[: backend.meta.n + 1]) > 0
    hits = backend.search(query, top_k=k, mode="bm25").hits
    return float(np.mean([full[backend.meta.row_of(h.arxiv_id)] for h in hits]))


def test_a_short_query_no_longer_favours_full_texts(sparse_index: Any) -> None:
    """12 of 372 papers have a full text. "model" is common among the listing abstracts and rarer
    among passages, so under the fixed factor the full texts' higher idf puts them first (8 of the
    first 10); on the paper texts' idf level they hold the place their words earn (1 of 10)."""
    backend = sparse_index.backend
    query = "model"
    before = backend.tuned(passage_norm="fixed")
    after = backend.tuned(passage_norm="idf", passage_norm_scale=1.0)
    assert after.calibration.factor(query, backend.bm25_papers, backend.passages) < BM25_PASSAGE_SCALE
    assert _full_text_share(before, query) >= 0.5
    assert _full_text_share(after, query) <= 0.1
    assert backend.settings.passage_norm == "idf"  # the default


def test_a_full_text_sentence_still_finds_its_paper_first(sparse_index: Any) -> None:
    backend = sparse_index.backend
    for row, arxiv_id in enumerate(backend.meta.arxiv_ids.tolist()):
        passages = sparse_index.store.passages(str(arxiv_id))
        if len(passages) >= 3 and backend.passages.has_passages(np.array([row]))[0]:
            sentence = " ".join(passages[1].text.split()[:24])
            hits = backend.search(sentence, top_k=10).hits
            assert hits[0].arxiv_id == str(arxiv_id)
            return
    raise AssertionError("the small index has full texts")


def test_quantile_maps_the_jth_full_text_onto_the_others_at_the_same_relative_rank(sparse_index: Any) -> None:
    """``quantile``: among the papers holding every query term, the j-th best full text (by its best
    passage) gets the paper-text score at rank (j+1)·n_a/n_f of the other papers; the order among
    full texts and the winning passages stay."""
    backend = sparse_index.backend
    papers, passages = backend.bm25_papers, backend.passages
    query = "model"
    paper_scores = papers.scores(papers.query_tokens(query))
    hits = passages.search(query, 1000)
    assert quantile_hits(query, paper_scores, hits, papers, passages) is None  # 12 full texts: too few
    mapped = quantile_hits(query, paper_scores, hits, papers, passages, min_population=1)
    assert mapped is not None
    every = every_term(query, papers, passages)
    has_full = passages.ptr[1:] > passages.ptr[:-1]
    f_rows = np.flatnonzero(every & has_full & (hits.paper_scores > 0))
    others = np.sort(paper_scores[every & ~has_full & (paper_scores > 0)])[::-1]
    assert f_rows.size >= 2 and others.size > f_rows.size
    ranked = f_rows[np.argsort(-hits.paper_scores[f_rows], kind="stable")]
    for j, row in enumerate(ranked):
        want = others[min((j + 1) * others.size // ranked.size, others.size - 1)]
        assert math.isclose(float(mapped.paper_scores[row]), float(want), rel_tol=1e-6), j
    assert np.array_equal(mapped.papers, hits.papers) and np.array_equal(mapped.passage_ids, hits.passage_ids)
    assert np.all(np.diff(mapped.scores) <= 1e-6)  # still best first
    assert np.array_equal(mapped.paper_scores > 0, hits.paper_scores > 0)  # the same papers match


def test_quantile_without_populations_is_the_idf_factor(sparse_index: Any) -> None:
    backend = sparse_index.backend
    papers, passages = backend.bm25_papers, backend.passages
    quantile = PassageCalibration("quantile", 1.0, BM25_PASSAGE_SCALE)
    idf = PassageCalibration("idf", 1.0, BM25_PASSAGE_SCALE)
    query = "model"
    paper_scores = papers.scores(papers.query_tokens(query))
    hits = passages.search(query, 100)
    same, factor = quantile.calibrate(query, paper_scores, hits, papers, passages)
    assert same is hits and factor == idf.factor(query, papers, passages)
    # the search through the backend agrees: the default's idf ranking, byte for byte
    a = backend.tuned(passage_norm="quantile").search(query, top_k=20, mode="bm25").hits
    b = backend.tuned(passage_norm="idf").search(query, top_k=20, mode="bm25").hits
    assert [(h.arxiv_id, h.score) for h in a] == [(h.arxiv_id, h.score) for h in b]
