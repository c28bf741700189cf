"""DenseIndex on real MiniLM embeddings of real abstracts: exact = brute force, filters, persistence.

What "exact" promises, on any CPU (docs/indexing.md, «Dense scores across CPUs»). FAISS scores a
float32 query ``q`` against a stored vector ``x̂`` (float32, or float16 under ``fp16`` storage) in
float32 arithmetic whose order depends on the SIMD path (1, 8 or 16 lanes, FMA or not, BLAS
blocking for many queries): the last digits of a score differ between CPUs. The bound holds for
every order:

- Decoding is exact: every float16 value is a float32 value (11-bit significand, exponents
  -24..15 inside float32's range), so F16C's ``vcvtph2ps`` and FAISS's scalar decoder give the
  stored value itself.
- Each product ``q_j * x̂_j`` is rounded at most once (not at all inside an FMA), each of the d - 1
  additions once, whatever the order. Higham (Accuracy and Stability of Numerical Algorithms,
  2002, §3.1, eq. 3.5): ``|score - q·x̂| <= gamma_d * sum_j |q_j x̂_j|`` with ``gamma_d = d u / (1 - d
  u)`` and u = 2^-24 (float32 rounding to nearest). For d = 384 and unit vectors
  ``sum_j |q_j x̂_j| <= |q| |x̂| <= 1 + 2^-11``, so ``tau <= 2.29e-5``.
- The reference here is ``q·x̂`` in float64 over FAISS's own stored vectors (``reconstruct``, not
  NumPy's float16 rounding: FAISS's encoder breaks rounding ties differently in a few components):
  a float32 times a float16 is exact in float64 (24 + 11 bits <= 53), the float64 sum's error is
  ``gamma_d(2^-53) sum|q_j x̂_j|``, about 4e-14, added to the bound below. No BLAS, no SIMD choice.

So the promise: FAISS may rank ``a`` above ``c`` only if ``s_c - s_a <= tau_a + tau_c`` (the exact
scores); candidates further apart come in the exact order on every CPU, and only near-ties (<= 4.6e-5
apart) may come in another order on another CPU. ``fp16`` storage itself (not CPU-dependent) moves
a score by at most ``2^-11 sum_j |q_j x_j| + 2^-25 sum_j |q_j|`` (relative rounding of a normal
float16, half the subnormal spacing 2^-24 below 2^-14): `storage_bound`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from float_bounds import FP16_MIN_NORMAL, FP16_SUBNORMAL_ERR, U16, U32, U64, gamma

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


def exact_scores(q: np.ndarray, stored: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``q·x̂`` for every query and stored row, in float64, and ``tau``: the bound on the distance of
    FAISS's float32 score from it, plus the float64 reference's own (module docstring)."""
    q64, x64 = q.astype(np.float64), stored.astype(np.float64)
    d = q.shape[1]
    magnitude = np.abs(q64) @ np.abs(x64).T
    return q64 @ x64.T, (gamma(d, U32) + gamma(d, U64)) * magnitude


def storage_bound(q: np.ndarray, vecs: np.ndarray) -> np.ndarray:
    """How far float16 storage may move ``q·x`` (per query, row): relative 2^-11 on normal components,
    absolute 2^-25 on subnormal ones."""
    q64, x64 = np.abs(q.astype(np.float64)), np.abs(vecs.astype(np.float64))
    normal = x64 >= FP16_MIN_NORMAL
    return U16 * (q64 @ np.where(normal, x64, 0).T) + FP16_SUBNORMAL_ERR * (q64 @ (~normal).T)


def brute_force(vecs: np.ndarray, q: np.ndarray, k: int, allowed: np.ndarray | None = None):
    sims = q @ vecs.T
    if allowed is not None:
        sims = np.where(allowed[None, :], sims, -np.inf)
    ids = np.stack([np.lexsort((np.arange(len(vecs)), -row))[:k] for row in sims])
    return np.take_along_axis(sims, ids, axis=1), ids


def assert_exact_up_to_ties(index: DenseIndex, q: np.ndarray, s, i, allowed: np.ndarray | None = None):
    """FAISS's top-k is the exact top-k except between candidates closer than their bounds: each
    score is within ``tau`` of the exact one, and ``a`` ranked above ``c`` (returned or not, allowed)
    means ``s_c - tau_c <= s_a + tau_a``."""
    n = index.ntotal
    exact, tau = exact_scores(q, index.reconstruct(np.arange(n)))
    ok = np.ones(n, dtype=bool) if allowed is None else allowed
    for r in range(len(q)):
        got = i[r][i[r] >= 0]
        e, t = exact[r, got], tau[r, got]
        over = np.abs(s[r][: len(got)] - e) - t
        assert over.max() <= 0, f"query {r}: row {got[over.argmax()]} scored {over.max():.2e} past its bound"
        hi, lo = e + t, e - t  # the exact score's interval as FAISS may see it
        assert (lo[1:] <= np.minimum.accumulate(hi)[:-1]).all(), f"query {r}: order beyond near-ties"
        rest = ok.copy()
        rest[got] = False
        if rest.any():
            assert (exact[r, rest] - tau[r, rest]).max() <= hi.min(), f"query {r}: a better row left out"
        # and the brute force order in float64 is the same wherever no near-tie decides it
        bf = np.flatnonzero(ok)[np.lexsort((np.flatnonzero(ok), -exact[r, ok]))][: len(got)]
        differ = got != bf
        assert (np.abs(exact[r, got[differ]] - exact[r, bf[differ]]) <= 2 * tau[r].max()).all()


@STORAGE
def test_exact_search_equals_brute_force(dense_vectors: np.ndarray, queries: np.ndarray, storage: str):
    index = DenseIndex.build(dense_vectors, ann_threshold=10_000, storage=storage)
    assert index.kind == "flat" and index.ntotal == len(dense_vectors) and index.dim == 384
    assert index.params["storage"] == storage
    s, i = index.search(queries, 20)
    assert s.shape == (len(QUERIES), 20)
    assert_exact_up_to_ties(index, queries, s, i)
    tau = exact_scores(queries, index.reconstruct(np.arange(index.ntotal)))[1]
    assert tau.max() < 2.3e-5  # the derived 2.29e-5 for d = 384 unit vectors
    # what is stored: the vectors themselves, or each within float16 rounding of them
    stored = index.reconstruct(np.arange(index.ntotal))
    if storage == "fp32":
        np.testing.assert_array_equal(stored, dense_vectors)
    else:
        err, mag = np.abs(stored - dense_vectors), np.abs(dense_vectors)
        assert (err <= np.where(mag >= FP16_MIN_NORMAL, U16 * mag, FP16_SUBNORMAL_ERR)).all()
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
        assert_exact_up_to_ties(index, queries, s, i, allowed)
    few = np.zeros(n, dtype=bool)
    few[[7, 11, 250]] = True
    s, i = index.search(queries, 10, allowed=few)
    assert sorted(i[0][:3]) == [7, 11, 250] and (i[:, 3:] == -1).all() and np.isneginf(s[:, 3:]).all()
    none = np.zeros(n, dtype=bool)
    assert (index.search(queries, 5, allowed=none)[1] == -1).all()
    with pytest.raises(DenseIndexError, match="allowed"):
        index.search(queries, 5, allowed=np.ones(3, dtype=bool))


def test_ties_break_by_lower_row_id(dense_vectors: np.ndarray):
    """Copies of one vector score the same float on any CPU: one call scores every row with the same
    kernel and the same order of operations, whichever kernel this CPU gets (every FAISS SIMD level
    here is run by scripts/check_float_paths.py), so the tie is exact and breaks by row id."""
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
    # the j-th best scores differ by at most what float16 rounding moves a score plus both float32
    # bounds (module docstring): 4.9e-4 + 4.6e-5 for unit vectors, whatever the CPU
    bound = storage_bound(queries, dense_vectors)
    for ix in (full, half):
        bound += exact_scores(queries, ix.reconstruct(np.arange(ix.ntotal)))[1]
    assert (np.abs(s16 - s32) <= bound.max(axis=1, keepdims=True)).all()
    assert bound.max() < 5.4e-4
    # which papers: a property of these vectors, not of a CPU (a near-tie at the cut moves 1/250)
    overlap = np.mean([len(set(a) & set(b)) / 50 for a, b in zip(i16, i32, strict=True)])
    assert overlap >= 0.96, overlap
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
    index = DenseIndex.build(dense_vectors, ann_threshold=100, ann="hnsw", hnsw_m=16, ef_search=64)
    assert index.kind == "hnsw" and index.params["M"] == 16
    s, i = index.search(queries, 10)
    _, bi = brute_force(dense_vectors, queries, 10)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(i, bi, strict=True)])
    assert recall >= 0.9
    assert (np.diff(s, axis=1) <= 0).all()  # sorted by the score itself: exact on any CPU
    allowed = np.arange(len(dense_vectors)) % 4 == 0
    _, fi = index.search(queries, 10, allowed=allowed)
    assert allowed[fi].all() and (fi >= 0).all()
    index.save(tmp_path / "h")
    loaded = DenseIndex.load(tmp_path / "h")
    assert loaded.kind == "hnsw" and loaded.params["efSearch"] == 64
    np.testing.assert_array_equal(loaded.search(queries, 10)[1], i)
    index.add(dense_vectors[:3])
    assert index.ntotal == len(dense_vectors) + 3


def test_ivf_path(dense_vectors: np.ndarray, queries: np.ndarray, tmp_path: Path):
    """The default approximate kind: float16 codes in probed lists. Its scores are the exact ones of
    the stored (float16) vectors, so whatever it finds is ranked as the exact fp16 index ranks it;
    it is memory-mapped when loaded, and reconstructs rows (the hybrid side's exact rescoring)."""
    n = len(dense_vectors)
    index = DenseIndex.build(dense_vectors, ann_threshold=100)
    assert index.kind == "ivf" and index.approximate
    nlist, nprobe = index.params["nlist"], index.params["nprobe"]
    assert nlist == n // 40 and 1 <= nprobe <= nlist  # every list has its 40 training rows
    stored = index.reconstruct(np.arange(n))
    exact = DenseIndex.build(dense_vectors, ann_threshold=10_000)  # the exact fp16 index stores the same
    np.testing.assert_array_equal(stored, exact.reconstruct(np.arange(n)))
    s, i = index.search(queries, 10)
    ref, tau = exact_scores(queries, stored)
    for r in range(len(queries)):
        assert np.all(np.abs(s[r] - ref[r, i[r]]) <= tau[r, i[r]])
    _, bi = brute_force(dense_vectors, queries, 10)
    assert np.mean([len(set(a) & set(b)) / 10 for a, b in zip(i, bi, strict=True)]) >= 0.9
    allowed = np.arange(n) % 4 == 0
    _, fi = index.search(queries, 10, allowed=allowed)
    assert allowed[fi].all() and (fi >= 0).all()
    index.save(tmp_path / "v")
    loaded = DenseIndex.load(tmp_path / "v")
    assert loaded.kind == "ivf" and loaded.readonly and loaded.index.nprobe == nprobe
    np.testing.assert_array_equal(loaded.search(queries, 10)[1], i)
    np.testing.assert_array_equal(loaded.reconstruct(np.array([0, n - 1])), stored[[0, n - 1]])
    untrained = DenseIndex.create(n, dense_vectors.shape[1], 100)
    assert untrained.needs_training
    with pytest.raises(DenseIndexError, match="not trained"):
        untrained.add(dense_vectors[:5])
    with pytest.raises(DenseIndexError, match="ann must be"):
        DenseIndex.create(n, 384, 100, ann="pq")


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
