"""`top_k_rows` through a sampled threshold gives the rows the plain cut gives (every positive score
sorted by score, then row), ties at the cut included, on real BM25 scores and on vectors built to
fool the sample; and the sampled path is the one taken on real scores."""

from __future__ import annotations

import gzip
import itertools
import json

import numpy as np
import pytest

from openxiv.corpus.shared import SharedData
from openxiv.indexer.engine.sparse import SparseIndex
from openxiv.indexer.engine.topk import SAMPLED_FROM, _above_sampled, top_k_rows

QUERIES = ["neural network training", "graph", "learning", "the", "diffusion language models", "zzzz"]


def _plain(scores: np.ndarray, k: int) -> tuple[list[int], list[float]]:
    pos = np.flatnonzero(scores > 0)
    order = pos[np.lexsort((pos, -scores[pos]))][: max(k, 0)]
    return order.tolist(), scores[order].tolist()


def _same(scores: np.ndarray, k: int) -> None:
    rows, vals = top_k_rows(scores, k)
    assert (rows.tolist(), vals.tolist()) == _plain(scores, k)
    assert vals.dtype == scores.dtype


@pytest.fixture(scope="module")
def real_bm25() -> SparseIndex:
    """BM25 over 6,000 real cs titles and abstracts."""
    listing = SharedData.default().listing("cs")
    if not listing.exists():
        pytest.skip(f"shared listing not found: {listing} (set OPENXIV_SHARED)")
    with gzip.open(listing, "rt", encoding="utf-8") as fh:
        texts = [f"{o['title']} {o['abstract']}" for o in map(json.loads, itertools.islice(fh, 6000))]
    return SparseIndex.build(texts)


@pytest.mark.parametrize("query", QUERIES)
def test_equal_to_the_plain_cut_on_real_scores(real_bm25: SparseIndex, query: str) -> None:
    base = real_bm25.scores(real_bm25.query_tokens(query))
    copies = -(-SAMPLED_FROM * 2 // base.size)
    tied = np.tile(base, copies)  # every score repeated: ties at every cut, broken by row
    apart = np.concatenate([base * np.float32(1 + 1e-3 * c) for c in range(copies)])
    for scores in (tied, apart, apart.astype(np.float64)):
        for k in (1, 10, 100, 1000, 2000):
            _same(scores, k)
    if base.max() > 0 and np.count_nonzero(base) * copies > 3000:
        assert _above_sampled(tied, 1000) is not None  # the sampled path answered, not the fallback


def test_equal_to_the_plain_cut_when_the_sample_misleads() -> None:
    n = SAMPLED_FROM * 3
    rng = np.random.default_rng(3)
    stride = n // (1 << 14)
    # the strided sample sees only the high scores: its threshold passes fewer than k rows
    high_on_the_stride = rng.random(n).astype(np.float32) * 0.1
    high_on_the_stride[::stride] += 5.0
    assert _above_sampled(high_on_the_stride, 1000) is None
    # the sample sees only zeros and low scores: its threshold passes far more than the buffer holds
    low_on_the_stride = (rng.random(n) + 1.0).astype(np.float32)
    low_on_the_stride[::stride] = rng.random(low_on_the_stride[::stride].size) * 0.01
    low_on_the_stride[1::stride] = 0.0
    found = _above_sampled(low_on_the_stride, 1000)
    assert found is not None and found.size > 6000
    few_values = rng.integers(0, 3, n).astype(np.float32)  # two positive values: one long tie
    for scores in (high_on_the_stride, low_on_the_stride, few_values, np.zeros(n, np.float32)):
        for k in (0, 1, 999, 1000, 1024):
            _same(scores, k)


def test_a_sparse_vector_with_fewer_positive_rows_than_k() -> None:
    scores = np.zeros(SAMPLED_FROM * 2, dtype=np.float32)
    scores[[5, 70_000, 9, 131_000]] = [1.0, 3.0, 1.0, 2.0]
    assert top_k_rows(scores, 1000)[0].tolist() == [70_000, 131_000, 5, 9]
    _same(scores, 2)
