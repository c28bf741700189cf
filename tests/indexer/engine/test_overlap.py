"""A lone search encodes its query on a helper thread beside its BM25 sides, and runs its feedback pass
there beside the dense search (`openxiv.indexer.engine.overlap`): the same answers as running the stages in
turn, and only while one search is in flight."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from openxiv.corpus.settings.model import Settings
from openxiv.indexer.backend import SearchFilters
from openxiv.indexer.engine.overlap import Overlap
from openxiv.indexer.snapshot import open_index

QUERIES = ("graph neural networks for molecules", "the of and", "robot grasping", "zzzqqq unknownword")


def _answers(index: Any, mode: str | None = None) -> list[Any]:
    """Hits with their signals in order (the v1 body lists them so), and the stages timed, in order."""
    out: list[Any] = []
    for q in QUERIES:
        res = index.backend.search(q, top_k=10, mode=mode)
        out.append([(h.arxiv_id, h.score, h.passage_id, list(h.signals.items())) for h in res.hits])
        out.append(list(res.timings_ms))
    return out


def test_a_lone_search_answers_the_same_with_its_encoding_overlapped(
    onnx_index: tuple[Path, list[tuple[str, str]]], tmp_path: Path
) -> None:
    root, titles = onnx_index
    base = Settings(data_dir=tmp_path)
    with open_index(root, base.replace(serve_overlap=False)) as plain, open_index(root, base) as overlapped:
        assert _answers(overlapped) == _answers(plain)
        assert _answers(overlapped, "rrf") == _answers(plain, "rrf")
        assert _answers(overlapped, "dense") == _answers(plain, "dense")  # nothing to overlap with
        res = overlapped.backend.search(titles[0][1], top_k=3)
        assert res.hits[0].arxiv_id == titles[0][0]
        assert {"bm25", "encode", "dense"} <= set(res.timings_ms)  # encode: its own time on the helper
        helpers = [t for t in threading.enumerate() if t.name.startswith("openxiv-overlap")]
        assert helpers, "a lone search handed its encoding to the helper thread"
        assert plain.backend.overlap._pool is None  # OPENXIV_SERVE_OVERLAP=0: never started
    assert not any(t.name.startswith("openxiv-overlap") and t.is_alive() for t in helpers)  # closed


def test_a_lone_search_answers_the_same_with_its_passage_side_on_the_helper(
    sparse_index: Any, tmp_path: Path
) -> None:
    """A snapshot with full-text passages: the passage side runs on the helper thread beside the
    paper side; the hits, their winning passages and the counts are the ones of the stages in turn."""
    base = Settings(data_dir=tmp_path, embed="none")
    snap = sparse_index.path
    with open_index(snap, base.replace(serve_overlap=False)) as plain, open_index(snap, base) as overlapped:
        assert overlapped.backend.passages is not None
        for mode in (None, "bm25", "bm25_passages"):
            assert _answers(overlapped, mode) == _answers(plain, mode)
            for q in QUERIES:
                assert (
                    overlapped.backend.search(q, mode=mode).total_count
                    == plain.backend.search(q, mode=mode).total_count
                )
        assert any(h.passage_id for q in QUERIES for h in overlapped.backend.search(q, top_k=10).hits)
        astro = SearchFilters(categories=("astro-ph",))
        for q in ("galaxy formation", "neural network training"):
            got, want = (ix.backend.search(q, top_k=20, filters=astro) for ix in (overlapped, plain))
            assert [(h.arxiv_id, h.score, h.passage_id) for h in got.hits] == [
                (h.arxiv_id, h.score, h.passage_id) for h in want.hits
            ]
            assert got.total_count == want.total_count < overlapped.backend.search(q).total_count
        helpers = [t for t in threading.enumerate() if t.name.startswith("openxiv-overlap")]
        assert helpers, "a lone search handed its passage side to the helper thread"
        assert plain.backend.overlap._pool is None


def test_concurrent_searches_run_their_own_stages_and_agree(
    onnx_index: tuple[Path, list[tuple[str, str]]], tmp_path: Path
) -> None:
    root, _ = onnx_index
    with open_index(root, Settings(data_dir=tmp_path)) as index:
        expected = _answers(index)
        errors: list[int] = []

        def worker(i: int) -> None:
            for _ in range(3):
                if _answers(index) != expected:
                    errors.append(i)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []


def test_overlap_hands_over_only_while_one_search_is_in_flight() -> None:
    overlap = Overlap()
    with overlap.search() as first:
        assert first is True
        with overlap.search() as second:
            assert second is False  # another search runs: each one keeps its stages
        assert overlap.submit(lambda: threading.current_thread().name).result().startswith("openxiv-overlap")
    with overlap.search() as again:
        assert again is True  # counted out again
    with Overlap(enabled=False).search() as off:
        assert off is False
    overlap.close()
