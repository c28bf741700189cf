"""`first_top`: the first pass's best rows from the two lexical sides' ranked lists are the rows the
whole array gives (`top_k_rows` of the elementwise max), ties included, on score vectors built to
tie and on a real BM25 snapshot with full texts."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from openxiv.indexer.engine.first_pass import first_scores, first_top
from openxiv.indexer.engine.ranking import BM25_PASSAGE_SCALE
from openxiv.indexer.engine.topk import top_k_rows

QUERIES = ["neural network training", "galaxy", "learning", "graph", "stellar mass function", "zzzz unknown"]


def _hits(paper_scores: np.ndarray, depth: int) -> SimpleNamespace:
    rows, scores = top_k_rows(paper_scores, depth)
    return SimpleNamespace(papers=rows, scores=scores, paper_scores=paper_scores)


def _check(paper_s: np.ndarray, ph: Any, scale: float, depth: int, k: int) -> None:
    rows, scores = top_k_rows(paper_s, depth)
    got = first_top(rows, scores, paper_s, ph, scale, depth, k)
    want = top_k_rows(first_scores(paper_s, ph, scale), k)
    assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
    assert got[1].dtype == want[1].dtype


def test_equal_to_the_whole_array_on_scores_made_to_tie() -> None:
    rng = np.random.default_rng(7)
    for trial in range(400):
        n = int(rng.integers(1, 200))
        # few distinct values, many zeros: long ties at every cut, lists that end inside a tie
        paper_s = (rng.integers(0, 5, n) * (rng.random(n) < 0.6)).astype(np.float32)
        passage = (rng.integers(0, 7, n) * (rng.random(n) < 0.4) / 3).astype(np.float32)
        if trial % 2:  # neighbouring floats that scaling can round to one value: a tie the list has not
            ulps = rng.integers(0, 40, n).astype(np.float32) * np.spacing(np.float32(1.5))
            passage = ((np.float32(1.5) + ulps) * (rng.random(n) < 0.7)).astype(np.float32)
            paper_s *= np.float32(0.1)  # below every passage: the passages decide the cut
        depth = int(rng.integers(1, 40))
        k = int(rng.integers(1, 15))
        scale = [BM25_PASSAGE_SCALE, 1.0, 0.3333333][trial % 3]
        _check(paper_s, None, scale, depth, k)
        _check(paper_s, _hits(passage, depth), scale, depth, k)


def test_equal_to_the_whole_array_on_a_real_snapshot(sparse_index: Any) -> None:
    backend = sparse_index.backend
    for text in QUERIES:
        for depth in (5, 10, 1000):
            paper_s = backend.bm25_papers.masked_scores(text, None)
            ph = backend.passages.search(text, depth, None)
            _check(paper_s, ph, backend.passage_scale, depth, 10)
            _check(paper_s, None, backend.passage_scale, depth, 10)


def _collapse(passages: Any, full: np.ndarray, allowed: np.ndarray | None, k: int) -> tuple[list, list, list]:
    """The passage side's answer written plainly, paper by paper: each allowed paper's best positive
    passage score and the first passage holding it, the best ``k`` papers (ties by row)."""
    best = np.zeros(passages.n_papers, dtype=np.float32)
    first: dict[int, int] = {}
    for p in range(passages.n_papers):
        lo, hi = int(passages.ptr[p]), int(passages.ptr[p + 1])
        if hi > lo and (allowed is None or allowed[p]) and full[lo:hi].max() > 0:
            best[p] = full[lo:hi].max()
            first[p] = int(passages.passage_ids[lo + int(np.argmax(full[lo:hi]))])
    rows, scores = top_k_rows(best, k)
    return rows.tolist(), scores.tolist(), [first[int(r)] for r in rows]


def test_the_passage_side_collapses_to_each_papers_first_best_passage(sparse_index: Any) -> None:
    """`PassageIndex.search` (one compiled pass over the passage scores) against the plain collapse,
    with and without a filter, on the real snapshot's full texts."""
    passages = sparse_index.backend.passages
    rng = np.random.default_rng(3)
    for text in QUERIES:
        for allowed in (None, rng.random(passages.n_papers) < 0.5):
            for k in (3, 1000):
                hits = passages.search(text, k, allowed)
                want = _collapse(passages, hits.passage_scores, allowed, k)
                assert (hits.papers.tolist(), hits.scores.tolist(), hits.passage_ids.tolist()) == want
                assert np.all(hits.paper_scores[hits.papers] == hits.scores)
