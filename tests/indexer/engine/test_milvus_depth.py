"""Which places of a shallow Milvus answer are exact (`openxiv.indexer.engine.milvus_depth`), on a
brute-force reference: a side asked for ``k`` hits returns the best ``k`` of every candidate."""

from __future__ import annotations

import numpy as np

from openxiv.indexer.engine.fusion import Side, fuse, merge_max
from openxiv.indexer.engine.milvus_depth import SHALLOW_MIN, certain, per_paper, shallow_depths, side


def _family(
    papers: dict[int, float], passages: list[tuple[int, int, float]], k: int, rng: np.random.Generator
) -> tuple[np.ndarray, int]:
    """The bm25 family (paper text max 0.8 x best passage) from lists asked ``k`` deep (ties at a cut
    broken at random, as Milvus may), and how many of its places `certain` vouches for."""
    top = sorted(papers.items(), key=lambda p: (-p[1], rng.random()))[:k]
    text = side(top, len(top) >= k)
    asked = k * 10
    got = sorted(passages, key=lambda h: (-h[2], rng.random()))[:asked]
    by_paper = per_paper(got, k, len(got) >= asked)
    fam = merge_max(
        "bm25", [Side("p", text.rows, text.scores), Side("q", by_paper.rows, by_paper.scores * 0.8)]
    )
    rows, scores = fuse([fam], "weighted")
    floors = [text.floor, None if by_paper.floor is None else float(np.float32(by_paper.floor) * 0.8)]
    return rows, certain(scores, floors)


def test_the_certain_places_of_a_shallow_ranking_are_those_of_the_deep_one() -> None:
    rng = np.random.default_rng(7)
    useful = 0
    for trial in range(200):
        n = int(rng.integers(5, 400))
        levels = int(rng.integers(2, 40))  # few score levels: ties at the floors
        papers = {r: float(rng.integers(1, levels)) / 3 for r in range(n) if rng.random() < 0.7}
        passages = [
            (int(rng.integers(0, n)), pid, float(rng.integers(1, levels)) / 3)
            for pid in range(int(rng.integers(0, 3 * n)))
        ]
        deep, _ = _family(papers, passages, 10_000, rng)
        for k in (1, 3, 20, 50):
            rows, sure = _family(papers, passages, k, rng)
            assert rows[:sure].tolist() == deep[:sure].tolist(), (trial, k)
            useful += k == 50 and sure >= min(10, deep.size)
            with_passages = len({p for p, _, _ in passages})
            if len(papers) < k and len(passages) < 10 * k and with_passages <= k:  # all lists short
                assert sure == rows.size == deep.size

    assert useful >= 100  # and they usually cover a first page of 10


def test_a_short_list_is_complete_and_a_cut_one_has_a_floor() -> None:
    hits = [(1, 10, 5.0), (1, 11, 4.0), (2, 12, 3.0), (3, 13, 2.0)]
    short = per_paper(hits, depth=5, full=False)
    assert short.floor is None and short.rows.tolist() == [1, 2, 3] and short.passages[1] == 10
    cut = per_paper(hits, depth=2, full=False)
    assert cut.rows.tolist() == [1, 2] and cut.floor == 3.0
    full = per_paper(hits, depth=5, full=True)
    assert full.floor == 2.0


def test_depths_double_from_twice_the_page_up_to_the_candidates() -> None:
    assert shallow_depths(10, 1000) == [20, 40, 80, 160, 320, 640]
    assert shallow_depths(1, 1000)[0] == SHALLOW_MIN
    assert shallow_depths(500, 1000) == [] and shallow_depths(1000, 1000) == []
