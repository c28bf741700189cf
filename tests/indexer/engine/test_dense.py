"""DenseIndex on real MiniLM embeddings of real abstracts: exact = brute force, filters, persistence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from openxiv.indexer.encoders.embed import Encoder
from openxiv.indexer.engine.dense import DenseIndex, DenseIndexError

QUERIES = [
    "large language model reasoning with reinforcement learning",
    "diffusion models for image generation",
    "exoplanet atmospheres",
    "vision-language models for video understanding",
    "retrieval augmented generation",
]


@pytest.fixture(scope="module")
def queries(minilm: Encoder) -> np.ndarray:
    return np.stack([minilm.encode_query(q) for q in QUERIES])


STORAGE = pytest.mark.parametrize("storage", ["fp16", "fp32"])


def stored(vecs: np.ndarray, storage: str) -> np.ndarray:
    """The vectors as the index keeps them: exact search is exact over these."""
    return vecs.astype(np.float16).astype(np.float32) if storage == "fp16" else vecs


def brute_force(vecs: np.ndarray, q: np.ndarray, k: int, allowed: np.ndarray | None = None):
    sims = q @ vecs.T
    if allowed is not None:
        sims = np.where(allowed[None, :], sims, -np.inf)
    ids = np.stack([np.lexsort((np.arange(len(vecs)), -row))[:k] for row in sims])
    return np.take_along_axis(sims, ids, axis=1), ids


def assert_same_ranking(s1, i1, s2, i2):
    np.testing.assert_allclose(s1, s2, atol=1e-5)
    # ids agree except where two neighbours have (numerically) equal scores
    for r in range(len(i1)):
        for a, b, sa in zip(i1[r], i2[r], s1[r], strict=True):
            if a != b:
                assert abs(float(sa) - float(s2[r][list(i2[r]).index(a)])) < 1e-5


@STORAGE
def test_exact_search_equals_brute_force(dense_vectors: np.ndarray, queries: np.ndarray, storage: str):
    index = DenseIndex.build(dense_vectors, ann_threshold=10_000, storage=storage)
    assert index.kind == "flat" and index.ntotal == len(dense_vectors) and index.dim == 384
    assert index.params["storage"] == storage
    s, i = index.search(queries, 20)
    bs, bi = brute_force(stored(dense_vectors, storage), queries, 20)
    assert s.shape == (len(QUERIES), 20)
    assert_same_ranking(s, i, bs, bi)
    # a single 1-D query gives one row
    _, i1 = index.search(queries[0], 5)
    assert i1.shape == (1, 5) and list(i1[0]) == list(i[0][:5])


def test_each_abstract_finds_itself_first(dense_vectors: np.ndarray):
    index = DenseIndex.build(dense_vectors, ann_threshold=10_000)
    _, i = index.search(dense_vectors[:50], 1)
    assert list(i[:, 0]) == list(range(50))


@STORAGE
def test_allowed_restricts_before_the_cut(dense_vectors: np.ndarray, queries: np.ndarray, storage: str):
    n = len(dense_vectors)
    index = DenseIndex.build(dense_vectors, ann_threshold=10_000, storage=storage)
    for allowed in (np.arange(n) % 3 == 0, np.arange(n) >= n - 60, np.arange(n) % 2 == 1):
        s, i = index.search(queries, 15, allowed=allowed)
        assert (i >= 0).all(), "k allowed rows exist, so k hits come back"
        assert allowed[i].all()
        bs, bi = brute_force(stored(dense_vectors, storage), queries, 15, allowed)
        assert_same_ranking(s, i, bs, bi)
    few = np.zeros(n, dtype=bool)
    few[[7, 11, 250]] = True
    s, i = index.search(queries, 10, allowed=few)
    assert sorted(i[0][:3]) == [7, 11, 250] and (i[:, 3:] == -1).all() and np.isneginf(s[:, 3:]).all()
    none = np.zeros(n, dtype=bool)
    assert (index.search(queries, 5, allowed=none)[1] == -1).all()
    with pytest.raises(DenseIndexError, match="allowed"):
        index.search(queries, 5, allowed=np.ones(3, dtype=bool))


def test_ties_break_by_lower_row_id(dense_vectors: np.ndarray):
    vecs = np.concatenate([dense_vectors[:30], dense_vectors[5:6], dense_vectors[30:60], dense_vectors[5:6]])
    for threshold in (10_000, 10):
        index = DenseIndex.build(vecs, ann_threshold=threshold)
        _, i = index.search(dense_vectors[5], 3)
        assert list(i[0]) == [5, 30, 61]


@STORAGE
def test_save_load_round_trip(dense_vectors: np.ndarray, queries: np.ndarray, tmp_path: Path, storage: str):
    index = DenseIndex.build(dense_vectors, ann_threshold=10_000, storage=storage)
    index.save(tmp_path / "idx")
    s, i = index.search(queries, 10)
    for mmap in (True, False):
        loaded = DenseIndex.load(tmp_path / "idx", mmap=mmap)
        assert loaded.kind == "flat" and loaded.ntotal == index.ntotal
        s2, i2 = loaded.search(queries, 10)
        np.testing.assert_array_equal(i, i2)
        np.testing.assert_array_equal(s, s2)
    with pytest.raises(DenseIndexError, match="read-only"):
        DenseIndex.load(tmp_path / "idx", mmap=True).add(dense_vectors[:1])
    with pytest.raises(DenseIndexError, match="no dense index"):
        DenseIndex.load(tmp_path / "missing")


def test_fp16_storage_halves_the_file_and_keeps_the_ranking(
    dense_vectors: np.ndarray, queries: np.ndarray, tmp_path: Path
):
    full = DenseIndex.build(dense_vectors, ann_threshold=10_000, storage="fp32")
    half = DenseIndex.build(dense_vectors, ann_threshold=10_000)  # the default
    assert half.params["storage"] == "fp16"
    size = {name: ix.save(tmp_path / name).stat().st_size for name, ix in (("full", full), ("half", half))}
    assert size["half"] < 0.55 * size["full"]
    s32, i32 = full.search(queries, 50)
    s16, i16 = half.search(queries, 50)
    assert np.abs(s16 - s32).max() < 2e-3
    overlap = np.mean([len(set(a) & set(b)) / 50 for a, b in zip(i16, i32, strict=True)])
    assert overlap >= 0.96
    with pytest.raises(DenseIndexError, match="storage"):
        DenseIndex.build(dense_vectors, storage="int4")


@STORAGE
def test_incremental_add(dense_vectors: np.ndarray, queries: np.ndarray, tmp_path: Path, storage: str):
    whole = DenseIndex.build(dense_vectors, ann_threshold=10_000, storage=storage)
    part = DenseIndex.build(dense_vectors[:200], ann_threshold=10_000, storage=storage)
    part.save(tmp_path / "p")
    part = DenseIndex.load(tmp_path / "p", mmap=False)
    rows = part.add(dense_vectors[200:])
    assert rows == range(200, len(dense_vectors)) and part.ntotal == whole.ntotal
    np.testing.assert_array_equal(part.search(queries, 10)[1], whole.search(queries, 10)[1])
    empty = DenseIndex.build(np.zeros((0, 384), dtype=np.float32), ann_threshold=10)
    assert empty.ntotal == 0 and (empty.search(queries, 3)[1] == -1).all()


def test_hnsw_path(dense_vectors: np.ndarray, queries: np.ndarray, tmp_path: Path):
    index = DenseIndex.build(dense_vectors, ann_threshold=100, hnsw_m=16, ef_search=64)
    assert index.kind == "hnsw" and index.params["M"] == 16
    s, i = index.search(queries, 10)
    _, bi = brute_force(dense_vectors, queries, 10)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(i, bi, strict=True)])
    assert recall >= 0.9
    assert (np.diff(s, axis=1) <= 1e-6).all()
    allowed = np.arange(len(dense_vectors)) % 4 == 0
    _, fi = index.search(queries, 10, allowed=allowed)
    assert allowed[fi].all() and (fi >= 0).all()
    index.save(tmp_path / "h")
    loaded = DenseIndex.load(tmp_path / "h")
    assert loaded.kind == "hnsw" and loaded.params["efSearch"] == 64
    np.testing.assert_array_equal(loaded.search(queries, 10)[1], i)
    index.add(dense_vectors[:3])
    assert index.ntotal == len(dense_vectors) + 3


def test_bad_input_is_a_clear_error(dense_vectors: np.ndarray):
    index = DenseIndex.build(dense_vectors, ann_threshold=10_000)
    with pytest.raises(DenseIndexError, match="shape"):
        index.search(np.ones((2, 10), dtype=np.float32), 5)
    with pytest.raises(DenseIndexError, match="NaN"):
        index.add(np.full((1, 384), np.nan, dtype=np.float32))
    with pytest.raises(DenseIndexError, match="k must be"):
        index.search(dense_vectors[0], -1)
    assert index.search(dense_vectors[0], 0)[1].shape == (1, 0)
    _, i = index.search(dense_vectors[0], 10_000)
    assert (i[0, : index.ntotal] >= 0).all() and (i[0, index.ntotal :] == -1).all()
