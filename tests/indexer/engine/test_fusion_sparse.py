"""Fusion formulas and the BM25 top-k selection, on small arrays whose answers are known."""

from __future__ import annotations

import numpy as np
import pytest

from openxiv.indexer.engine.fusion import (
    Side,
    fuse,
    fuse_with_extra,
    merge_max,
    rrf,
    top_sorted,
    weighted_minmax,
    weighted_zscore,
)
from openxiv.indexer.engine.sparse import PassageIndex, SparseIndex
from openxiv.indexer.engine.topk import top_k_rows


def test_rrf_formula_weights_and_ties() -> None:
    a = Side("a", np.array([3, 1, 2]), np.array([9.0, 5.0, 1.0]))
    b = Side("b", np.array([2, 3]), np.array([0.9, 0.8]), weight=2.0)
    rows, scores = rrf([a, b], k=10)
    expect = {3: 1 / 11 + 2 / 12, 1: 1 / 12, 2: 1 / 13 + 2 / 11}
    assert dict(zip(rows.tolist(), scores.tolist(), strict=True)) == pytest.approx(expect)
    assert rows.tolist() == sorted(expect, key=lambda r: -expect[r])
    # equal fused scores come out by ascending row (= ascending arxiv_id)
    tie = rrf([Side("a", np.array([7, 4]), np.ones(2)), Side("b", np.array([4, 7]), np.ones(2))], k=60)
    assert tie[0].tolist() == [4, 7]


def test_weighted_minmax() -> None:
    a = Side("a", np.array([0, 1, 2]), np.array([10.0, 6.0, 2.0]))
    b = Side("b", np.array([2, 5]), np.array([0.5, 0.5]), weight=0.5)  # constant side: w to each
    rows, scores = weighted_minmax([a, b])
    assert dict(zip(rows.tolist(), scores.tolist(), strict=True)) == pytest.approx(
        {0: 1.0, 1: 0.5, 2: 0.5, 5: 0.5}
    )
    assert rows.tolist() == [0, 1, 2, 5]
    with pytest.raises(ValueError, match="unknown fusion"):
        fuse([a, b], "borda")


def test_weighted_zscore() -> None:
    # a: mean 4, population sd sqrt(8) -> z = (6-4)/sd, 0, (0-4)/sd ... on [6, 4, 2] scores
    a = Side("a", np.array([0, 1, 2]), np.array([6.0, 4.0, 2.0]))
    b = Side("b", np.array([2, 5]), np.array([3.0, 1.0]), weight=0.5)  # z = +1, -1
    rows, scores = weighted_zscore([a, b])
    sd = np.sqrt(8 / 3)
    za = {0: 2 / sd, 1: 0.0, 2: -2 / sd}
    expect = {
        0: za[0] + 0.5 * -1.0,  # absent from b: b's lowest z
        1: za[1] + 0.5 * -1.0,
        2: za[2] + 0.5 * 1.0,
        5: za[2] + 0.5 * -1.0,  # absent from a: a's lowest z
    }
    assert dict(zip(rows.tolist(), scores.tolist(), strict=True)) == pytest.approx(expect)
    assert rows.tolist() == sorted(expect, key=lambda r: (-expect[r], r))
    # a side with one outstanding hit outweighs a flat side that ranks another paper first
    sharp = Side("bm25", np.array([1, 2, 3, 4]), np.array([30.0, 5.0, 4.9, 4.8]))
    flat = Side("dense", np.array([2, 1, 3, 4]), np.array([0.52, 0.51, 0.50, 0.49]))
    assert weighted_zscore([sharp, flat])[0][0] == 1
    assert fuse([sharp, flat], "zscore")[0].tolist() == weighted_zscore([sharp, flat])[0].tolist()
    assert weighted_zscore([Side("e", np.array([], np.int64), np.array([]))])[0].size == 0


def _side(rng: np.random.Generator, name: str, n: int, pool: int, weight: float, levels: int) -> Side:
    rows = rng.choice(pool, size=n, replace=False).astype(np.int64)
    scores = np.sort(rng.integers(0, levels, size=n).astype(np.float64) / 7.0)[::-1]  # many ties
    return Side(name, rows, scores, weight)


@pytest.mark.parametrize("method", ["weighted", "rrf", "zscore"])
def test_fuse_with_extra_is_both_fusions_to_the_last_float(method: str) -> None:
    """One pass gives exactly ``fuse(sides + [extra])`` and the head of ``fuse(sides)``: same rows,
    same float scores (not approximately), ties included, whatever sides are empty or alone."""
    rng = np.random.default_rng(13)
    empty = Side("e", np.zeros(0, np.int64), np.zeros(0))
    for trial in range(300):
        n_sides = [0, 1, 2, 2, 3][trial % 5]
        levels = [3, 50, 10_000][trial % 3]
        sides = [
            _side(rng, f"s{i}", int(rng.integers(0, 60)), 80, float(rng.uniform(0.1, 2)), levels)
            for i in range(n_sides)
        ]
        if trial % 7 == 0 and sides:
            sides[0] = empty
        extra = empty if trial % 11 == 0 else _side(rng, "fb", int(rng.integers(1, 40)), 80, 0.3, levels)
        head = [1, 5, 10, 200][trial % 4]
        fed, plain_head = fuse_with_extra(sides, extra, method, 60, head)
        want_fed = fuse([*sides, extra], method, 60)
        want_plain = fuse(sides, method, 60) if sides else (np.zeros(0, np.int64), np.zeros(0))
        assert fed[0].tolist() == want_fed[0].tolist() and fed[1].tolist() == want_fed[1].tolist()
        assert plain_head[0].tolist() == want_plain[0][:head].tolist()
        assert plain_head[1].tolist() == want_plain[1][:head].tolist()


def test_top_sorted_is_the_head_of_the_full_sort() -> None:
    rows = np.array([9, 3, 5, 1, 7, 2])
    scores = np.array([1.0, 2.0, 2.0, 0.5, 2.0, 3.0])
    assert top_sorted(rows, scores, 3)[0].tolist() == [2, 3, 5]  # the tie at the cut by ascending row
    assert top_sorted(rows, scores, 0)[0].size == 0
    assert top_sorted(rows, scores, 10)[0].tolist() == [2, 3, 5, 7, 9, 1]


def test_merge_max_counts_a_paper_once() -> None:
    papers = Side("p", np.array([1, 2]), np.array([8.0, 3.0]))
    passages = Side("q", np.array([2, 4]), np.array([9.0, 1.0]))
    m = merge_max("bm25", [papers, passages])
    assert m.rows.tolist() == [2, 1, 4] and m.scores.tolist() == [9.0, 8.0, 1.0]


def test_top_k_rows_is_exact_at_the_cut() -> None:
    s = np.array([0, 2, 5, 2, 2, 0, 7], dtype=np.float32)
    rows, vals = top_k_rows(s, 3)
    assert rows.tolist() == [6, 2, 1] and vals.tolist() == [7, 5, 2]
    rows, _ = top_k_rows(s, 10)  # only positive scores are hits
    assert rows.tolist() == [6, 2, 1, 3, 4]
    rng = np.random.default_rng(0)
    for _ in range(50):
        s = rng.integers(0, 4, size=40).astype(np.float32)
        k = int(rng.integers(1, 40))
        pos = np.flatnonzero(s > 0)
        expect = pos[np.lexsort((pos, -s[pos]))][:k]
        assert top_k_rows(s, k)[0].tolist() == expect.tolist()


def test_sparse_filter_and_passage_collapse(tmp_path) -> None:  # type: ignore[no-untyped-def]
    texts = ["graph neural networks", "neural radiance fields", "graph theory of networks", "cooking pasta"]
    ix = SparseIndex.build(texts)
    rows, _ = ix.search("graph networks", 10)
    assert rows.tolist() == [0, 2] or rows.tolist() == [2, 0]
    allowed = np.array([False, True, True, True])
    assert ix.search("graph networks", 10, allowed)[0].tolist() == [2]
    ix.save(tmp_path / "s")
    again = SparseIndex.load(tmp_path / "s")
    assert again.search("graph networks", 10)[0].tolist() == rows.tolist()

    # passages 0,1 belong to paper 0; 2 to paper 2; paper 1 has none
    p = PassageIndex.build(
        [
            "graph networks intro",
            "deep graph networks results graph",
            "neural graph",
        ],
        np.array([0, 0, 2]),
        np.array([100, 101, 102]),
        3,
    )
    hits = p.search("graph networks", 10)
    assert hits.papers.tolist() == [0, 2] and hits.passage_ids.tolist()[0] in (100, 101)
    assert p.search("graph", 10, np.array([False, True, True])).papers.tolist() == [2]
    assert p.has_passages(np.array([0, 1, 2])).tolist() == [True, False, True]
    assert p.best_passage(1, hits.passage_scores) is None
    assert p.best_passage(2, hits.passage_scores) == 102


def test_vectorised_build_equals_bm25s_build() -> None:
    import gzip
    import itertools
    import json

    import bm25s
    import Stemmer

    from openxiv.corpus.shared import SharedData
    from openxiv.indexer.engine.sparse import VectorisedBM25

    path = SharedData.default().listing("astro")
    if not path.exists():
        pytest.skip(f"shared data not found at {path.parent} (set OPENXIV_SHARED)")
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        texts = [
            (r["title"] or "") + "\n" + (r["abstract"] or "")
            for r in map(json.loads, itertools.islice(fh, 2000))
        ]
    tokens = bm25s.tokenize(texts, stopwords="en", stemmer=Stemmer.Stemmer("english"), show_progress=False)
    ref = bm25s.BM25(k1=1.2, b=0.75)
    ref.index(tokens, show_progress=False)
    ours = VectorisedBM25(k1=1.2, b=0.75)
    ours.index(tokens, show_progress=False)
    assert ours.vocab_dict == ref.vocab_dict
    np.testing.assert_array_equal(ours.scores["indices"], ref.scores["indices"])
    # Both compute tfc and idf * tfc in float64 (bm25s: a float64 average length makes its float32
    # term counts float64; NumPy 2 keeps a float64 scalar strong) and round twice to float32: the
    # idf (a float64 log: math.log there, np.log here, each within an ulp of float64) and the
    # weight. The float64 values agree to ~1e-15, so each rounding can differ by one float32 ulp
    # (<= 2^-23 relative) only when they straddle a rounding boundary: 2 ulp on every CPU.
    np.testing.assert_allclose(ours.scores["data"], ref.scores["data"], rtol=2 * 2.0**-23)
    n = ref.scores["indptr"].size  # ours also has a (empty) column for the "" token bm25s adds last
    np.testing.assert_array_equal(ours.scores["indptr"][:n], ref.scores["indptr"])
    assert (ours.scores["indptr"][n:] == ref.scores["indptr"][-1]).all()
