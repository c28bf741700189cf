"""Exact top-k BM25 by MaxScore (`openxiv.indexer.engine.maxscore`, `paper_pass`, feedback's pruned
list) gives the rows, the order and the float32 score bits of scoring every posting and cutting: on
the shared dev queries over real BM25, with filters and feedback weights, and on corpora built so
that the cut falls inside long ties, across the pruning windows."""

from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from openxiv.corpus.shared import SharedData
from openxiv.indexer.engine.doc_terms import DocTerms
from openxiv.indexer.engine.maxscore import WINDOW, mark_matches, score_rows, term_maxima, top_k_pruned
from openxiv.indexer.engine.paper_pass import paper_pass
from openxiv.indexer.engine.prf import FeedbackConfig, feedback_list, rescore
from openxiv.indexer.engine.sparse import TERM_MAX, SparseIndex
from openxiv.indexer.engine.topk import top_k_rows

KS = (1, 10, 1000)


def _dev_queries(shared: SharedData, per_file: int) -> list[str]:
    out: list[str] = []
    for name in ("topic_queries_dev.jsonl", "topic_queries_more_dev.jsonl", "fulltext_known_item_dev.jsonl"):
        path = shared.root / "gold" / name
        if not path.is_file():
            pytest.skip(f"shared dev queries not found: {path} (set OPENXIV_SHARED)")
        with path.open(encoding="utf-8") as fh:
            out += [json.loads(line)["query"] for line in itertools.islice(fh, per_file)]
    return out


@pytest.fixture(scope="module")
def real_bm25() -> SparseIndex:
    """BM25 over 12,000 real cs titles and abstracts (two pruning windows)."""
    listing = SharedData.default().listing("cs")
    if not listing.exists():
        pytest.skip(f"shared listing not found: {listing} (set OPENXIV_SHARED)")
    with gzip.open(listing, "rt", encoding="utf-8") as fh:
        texts = [f"{o['title']} {o['abstract']}" for o in map(json.loads, itertools.islice(fh, 12000))]
    return SparseIndex.build(texts)


def _exhaustive(ix: SparseIndex, tokens: np.ndarray, k: int, mask: np.ndarray | None) -> Any:
    s = ix.scores(tokens)
    if mask is not None:
        np.multiply(s, mask, out=s)
    return top_k_rows(s, k)


def _pruned(ix: SparseIndex, tokens: np.ndarray, k: int, mask: np.ndarray | None, w: Any = None) -> Any:
    assert ix.term_max is not None
    return top_k_pruned(ix.data, ix.indptr, ix.indices, ix.term_max, ix.n_docs, tokens, k, w, mask)


def _same(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> None:
    assert a[0].tolist() == b[0].tolist()
    assert a[1].astype(np.float32).tobytes() == b[1].tobytes()  # the score bits, not just close


def test_same_rows_and_score_bits_on_the_dev_queries(real_bm25: SparseIndex) -> None:
    queries = _dev_queries(SharedData.default(), 12)
    rng = np.random.default_rng(5)
    filters = [None, rng.random(real_bm25.n_docs) < 0.2]
    for q in queries:
        tokens = real_bm25.query_tokens(q)
        for k, mask in itertools.product(KS, filters):
            _same(_exhaustive(real_bm25, tokens, k, mask), _pruned(real_bm25, tokens, k, mask))
    assert len(queries) == 36


def test_feedback_weights_and_its_match_mask(real_bm25: SparseIndex) -> None:
    """The expanded query (20 weighted terms, only papers the original query matches) pruned and
    exhaustive (`rescore` and a cut) agree; `feedback_list` over a pruned pass takes the pruned path."""
    terms = DocTerms(real_bm25)
    config = FeedbackConfig(docs=10, terms=20)
    for q in _dev_queries(SharedData.default(), 8):
        for depth in (10, 1000):
            exhaustive = paper_pass(real_bm25, q, depth, None, pruned=False)
            pruned = paper_pass(real_bm25, q, depth, None, pruned=True)
            assert pruned.pruned and not exhaustive.pruned
            _same((exhaustive.rows, exhaustive.scores), (pruned.rows, pruned.scores))
            assert np.array_equal(exhaustive.matches, pruned.matches)
            before = top_k_rows(rescore(terms, exhaustive.full(), config), depth)
            _same(before, feedback_list(terms, exhaustive, config, depth))
            _same(before, feedback_list(terms, pruned, config, depth))
            assert pruned._full is None  # nothing asked for every paper's score


def test_scores_of_single_rows_and_matches(real_bm25: SparseIndex) -> None:
    tokens = real_bm25.query_tokens("diffusion language models for code generation")
    full = real_bm25.scores(tokens)
    rows = np.arange(0, real_bm25.n_docs, 7)
    assert score_rows(real_bm25.data, real_bm25.indptr, real_bm25.indices, tokens, rows).tobytes() == (
        full[rows].tobytes()
    )
    assert np.array_equal(
        mark_matches(real_bm25.indptr, real_bm25.indices, real_bm25.n_docs, tokens), full > 0
    )


def _tied_corpus(n: int) -> list[str]:
    """``n`` texts from five templates, so BM25 gives about five distinct scores and every cut falls
    inside a tie thousands of rows long, spread over every pruning window."""
    templates = [
        "graph neural networks for molecules",
        "graph neural networks",
        "neural networks for molecules and proteins",
        "molecules",
        "protein structure prediction with graph models",
    ]
    return [templates[(i * 7) % len(templates)] for i in range(n)]


@pytest.mark.parametrize("query", ["graph neural networks molecules", "molecules", "graph graph protein"])
def test_ties_at_the_cut_keep_the_lowest_rows(query: str) -> None:
    ix = SparseIndex.build(_tied_corpus(3 * WINDOW + 123))
    tokens = ix.query_tokens(query)
    assert tokens.size
    full = ix.scores(tokens)
    assert np.unique(full[full > 0]).size <= 5
    rng = np.random.default_rng(11)
    for k in (1, 5, 999, WINDOW + 1, 2 * WINDOW + 7):
        for mask in (None, rng.random(ix.n_docs) < 0.5):
            _same(_exhaustive(ix, tokens, k, mask), _pruned(ix, tokens, k, mask))
            w = rng.random(tokens.size).astype(np.float32)
            exp = top_k_rows(_weighted(ix, tokens, w, mask), k)
            _same(exp, _pruned(ix, tokens, k, mask, w))


def _weighted(ix: SparseIndex, tokens: np.ndarray, w: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """``Σ_i w_i · bm25(t_i, d)`` as feedback's kernel adds it (term order, float32)."""
    out = np.zeros(ix.n_docs, np.float32)
    for t, wt in zip(tokens.tolist(), w.tolist(), strict=True):
        lo, hi = int(ix.indptr[t]), int(ix.indptr[t + 1])
        rows = np.asarray(ix.indices[lo:hi])
        out[rows] = out[rows] + np.float32(wt) * ix.data[lo:hi]  # a row once per term: no lost add
    if mask is not None:
        out = out * mask
    return out


def test_near_ties_of_float_rounding() -> None:
    """Scores equal up to the last float32 digit (one term repeated in a longer text) are ordered by
    their bits, as the exhaustive cut orders them: the bounds' slack never drops a row."""
    texts = [("alpha " * (1 + i % 3)) + ("beta " * (i % 5)) + "gamma" for i in range(2 * WINDOW)]
    ix = SparseIndex.build(texts)
    for q in ("alpha beta gamma", "alpha alpha beta", "gamma"):
        tokens = ix.query_tokens(q)
        for k in (1, 3, 100, WINDOW):
            _same(_exhaustive(ix, tokens, k, None), _pruned(ix, tokens, k, None))


def test_term_maxima_bound_every_posting(real_bm25: SparseIndex) -> None:
    tm = term_maxima(real_bm25.data, real_bm25.indptr)
    cols = np.repeat(np.arange(tm.size), np.diff(real_bm25.indptr))
    assert np.all(real_bm25.data <= tm[cols])
    assert np.array_equal(tm, real_bm25.term_max)  # the build computed the same


def test_a_snapshot_without_bounds_serves_every_posting(real_bm25: SparseIndex, tmp_path: Path) -> None:
    """An index saved before the bounds existed loads without them and scores every posting; the
    answers are the same, and bounds made from the matrix later are the ones the build writes."""
    real_bm25.save(tmp_path / "bm25")
    (tmp_path / "bm25" / TERM_MAX).unlink()
    old = SparseIndex.load(tmp_path / "bm25")
    assert old.term_max is None
    q = "retrieval augmented generation"
    before = paper_pass(old, q, 100, None, pruned=True)
    assert not before.pruned
    assert np.array_equal(old.ensure_term_max(), real_bm25.term_max)
    after = paper_pass(old, q, 100, None, pruned=True)
    assert after.pruned
    _same((before.rows, before.scores), (after.rows, after.scores))


def test_the_engine_answers_the_same_with_pruning_off(sparse_index: Any) -> None:
    """Every stage over a real snapshot (paper and passage sides, feedback, filters, deeper pages):
    the same hits, scores and counts with pruning on and off (the default)."""
    off = sparse_index.backend
    assert not off.settings.bm25_pruning and off.bm25_papers.term_max is not None
    on = off.tuned(bm25_pruning=True)
    from openxiv.indexer.backend import SearchFilters

    queries = _dev_queries(SharedData.default(), 6)
    for q, mode, filters in itertools.product(
        queries, (None, "bm25", "rrf", "bm25_papers"), (None, SearchFilters(categories=("cs.CL",)))
    ):
        for top_k, offset in ((10, 0), (20, 3)):
            a = on.search(q, top_k=top_k, offset=offset, mode=mode, filters=filters)
            b = off.search(q, top_k=top_k, offset=offset, mode=mode, filters=filters)
            assert a.hits == b.hits  # ids, scores, evidence passages and signals
            assert a.total_count == b.total_count
