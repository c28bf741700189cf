"""Every page is a slice of one ranking of the query (`openxiv.indexer.engine.tiling`, issue 21 item 1).

Before: each request cut its sides at ``max(candidates, offset + top_k)``, so pages past the
candidate depth each had a ranking of their own (ten pages of 10 at offset 990 against one page of
100: 47 papers twice, 57 never, on a 20k-paper index)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from openxiv.indexer.backend import SearchFilters
from openxiv.indexer.engine.tiling import Block, pin, tile
from openxiv.indexer.snapshot import open_index

COMMON = "learning model data based results"
"""Common words: well over 1,100 of the test index's papers match them, with and without the filter."""
MODES = (None, "weighted", "zscore", "rrf", "bm25", "dense")
FILTERS = (None, SearchFilters(categories=("cs",)))


def _ids(result: Any) -> list[str]:
    return [h.arxiv_id for h in result.hits]


def _pages(backend: Any, query: str, start: int, stop: int, size: int, **kw: Any) -> list[str]:
    out: list[str] = []
    for offset in range(start, stop, size):
        out += _ids(backend.search(query, top_k=min(size, stop - offset), offset=offset, **kw))
    return out


@pytest.fixture(scope="module")
def opened(test_index: Any) -> Any:
    ix = open_index(test_index.root, test_index.settings)
    yield ix
    ix.close()


@pytest.mark.parametrize("filters", FILTERS, ids=("no-filter", "cs"))
@pytest.mark.parametrize("mode", MODES, ids=[m or "default" for m in MODES])
def test_offsets_990_to_1089_tile_in_pages_of_any_size(opened: Any, mode: str | None, filters: Any) -> None:
    backend = opened.backend
    assert backend.settings.candidates == 1000  # the pages straddle the first block's end
    whole = backend.search(COMMON, top_k=100, offset=990, mode=mode, filters=filters)
    assert whole.total_count > 1100
    want = _ids(whole)
    assert len(want) == 100 == len(set(want))
    for size in (10, 7, 33):
        assert _pages(backend, COMMON, 990, 1090, size, mode=mode, filters=filters) == want, size
    # the page of 100 is the slice of a deeper request too, and scores never go up down the list
    deeper = backend.search(COMMON, top_k=100, offset=950, mode=mode, filters=filters)
    assert _ids(deeper)[40:] == want[:60]
    scores = [h.score for h in deeper.hits]
    assert all(a >= b for a, b in itertools.pairwise(scores))


def test_paged_to_its_end_the_ranking_holds_each_match_once(opened: Any) -> None:
    backend = opened.backend
    first = backend.search(COMMON, top_k=100)
    seen = _pages(backend, COMMON, 0, first.total_count + 100, 100)
    assert len(seen) == len(set(seen)) == first.total_count
    assert seen[:100] == _ids(first)


def test_small_blocks_tile_on_a_bm25_snapshot(sparse_index: Any) -> None:
    """The same on the small BM25 snapshot with 16-paper blocks (feedback and the prior on), many
    block boundaries in one walk; no model needed."""
    backend = sparse_index.backend.tuned(candidates=16)
    total = backend.search("model", top_k=1).total_count
    assert total > 64
    walk = _pages(backend, "model", 0, total, 10)
    assert len(walk) == len(set(walk)) == total
    assert _pages(backend, "model", 0, total, 7) == walk
    assert _ids(backend.search("model", top_k=50, offset=13)) == walk[13:63]


def test_a_block_adds_places_and_never_moves_earlier_ones() -> None:
    rankings = {
        2: Block(2, np.array([5, 3, 9]), np.array([3.0, 2.0, 1.0])),
        4: Block(4, np.array([3, 7, 5, 1, 2]), np.array([9.0, 8.0, 7.0, 6.0, 5.0])),
        8: Block(8, np.array([7, 3, 1, 2, 5, 8]), np.array([9.0, 8.0, 7.0, 6.0, 5.0, 4.0])),
    }
    tiled = tile(rankings[2], rankings.__getitem__, need=100, total=6)
    assert tiled.rows.tolist() == [5, 3, 7, 1, 2, 8]
    assert tiled.block.tolist() == [0, 0, 1, 1, 2, 2]
    assert (np.diff(tiled.scores) < 0).all()
    assert tile(rankings[2], rankings.__getitem__, need=2, total=6).rows.tolist() == [5, 3]
    # a pinned row goes first and leaves its place below
    pinned = pin(rankings[2], np.array([9]))
    tiled = tile(rankings[2], rankings.__getitem__, need=100, total=6, pinned=pinned)
    assert tiled.rows.tolist() == [9, 5, 3, 7, 1, 2, 8]
    assert (np.diff(tiled.scores) < 0).all()
