"""The hybrid dense side over an approximate index, HNSW or IVF (`search_among`): an unfiltered deep
list kept to the lexical matches, plus the lexical top scored exactly, on real MiniLM vectors of real
abstracts. "Exactly" is against the vectors as the index stores them (float32 in HNSW, float16 in
the IVF)."""

from __future__ import annotations

import numpy as np
import pytest

from openxiv.indexer.encoders.embed import Encoder
from openxiv.indexer.engine.dense import DenseIndex
from openxiv.indexer.engine.dense_lexical import search_among

QUERIES = ["graph neural networks for molecules", "dark matter halo simulations", "speech recognition"]


@pytest.fixture(scope="module", params=["hnsw", "ivf"])
def hnsw(dense_vectors: np.ndarray, request: pytest.FixtureRequest) -> DenseIndex:
    """An approximate index of each kind (named for the first one, which the tests were written for)."""
    index = DenseIndex.build(dense_vectors, ann_threshold=0, ann=request.param)
    assert index.kind == request.param
    return index


def _stored(index: DenseIndex) -> np.ndarray:
    return index.reconstruct(np.arange(index.ntotal))


@pytest.fixture(scope="module")
def qvecs(minilm: Encoder) -> list[np.ndarray]:
    return [minilm.encode_query(q) for q in QUERIES]


def _mask(n: int, seed: int, share: float) -> np.ndarray:
    return np.random.default_rng(seed).random(n) < share


def _exact(vectors: np.ndarray, q: np.ndarray, allowed: np.ndarray, k: int) -> np.ndarray:
    rows = np.flatnonzero(allowed)
    s = vectors[rows] @ q
    return rows[np.lexsort((rows, -s))][:k]


def test_a_deep_list_covering_the_corpus_is_the_exact_answer(
    hnsw: DenseIndex, qvecs: list[np.ndarray]
) -> None:
    allowed = _mask(hnsw.ntotal, 3, 0.4)
    for q in qvecs:
        s, r = search_among(hnsw, q, 20, allowed, None, deep=hnsw.ntotal, exact_max=0)
        assert r.tolist() == _exact(_stored(hnsw), q, allowed, 20).tolist()
        assert np.all(np.diff(s) <= 1e-6)


def test_the_lexical_top_is_scored_exactly_and_only_allowed_rows_come_back(
    hnsw: DenseIndex, qvecs: list[np.ndarray]
) -> None:
    allowed = _mask(hnsw.ntotal, 4, 0.3)
    stored = _stored(hnsw)
    for q in qvecs:
        best = _exact(stored, q, allowed, 10)
        # a shallow deep list (10 of the whole corpus) misses most allowed rows: the known rows fill in
        known = np.concatenate([best, np.flatnonzero(~allowed)[:5]])  # not-allowed known rows are ignored
        s, r = search_among(hnsw, q, 10, allowed, known, deep=10, exact_max=0)
        assert r.tolist() == best.tolist()
        np.testing.assert_allclose(s, stored[best] @ q, atol=1e-5)
        _, shallow = search_among(hnsw, q, 10, allowed, None, deep=10, exact_max=0)
        assert allowed[shallow].all() and shallow.size <= 10


def test_deep_zero_a_flat_index_and_few_matches_keep_the_filtered_search(
    hnsw: DenseIndex, dense_vectors: np.ndarray, qvecs: list[np.ndarray]
) -> None:
    allowed = np.zeros(hnsw.ntotal, dtype=bool)
    allowed[::3] = True
    flat = DenseIndex.build(dense_vectors)
    for q in qvecs:
        for index, deep, exact_max in ((hnsw, 0, 0), (flat, 500, 0), (hnsw, 500, hnsw.ntotal)):
            _, r = search_among(index, q, 15, allowed, None, deep=deep, exact_max=exact_max)
            _, wr = index.search(q, 15, allowed=allowed)
            assert r.tolist() == wr[0][wr[0] >= 0].tolist()
