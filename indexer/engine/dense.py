"""Dense vector search over FAISS: inner product on unit-norm vectors (= cosine similarity).

Row ``i`` of the index is document ``i`` of the snapshot's document list (the caller keeps that
mapping). Below ``ann_threshold`` vectors the index is exact: every stored vector is scored, as
float16 (``IndexScalarQuantizer`` QT_fp16, the default ``storage``) or float32 (``IndexFlatIP``).
Exact search reads every vector, so half the bytes is faster at the same recall (docs/embeddings.md,
«Dense index»; BENCHMARKS.md, «Dense ANN vs exact (FAISS)»). Above the threshold an approximate
index of kind ``ann`` (`ANN_KINDS`):

- ``ivf`` (the default): ``IndexIVFScalarQuantizer`` with float16 codes, ``4 sqrt(n)`` lists of
  which 1/32 (at least 16) are probed (`ivf_lists`). A score is the inner product with the same
  float16-rounded vector the exact fp16 index stores; the index trains its lists on a sample
  (`train`) before rows are added, can be memory-mapped (workers share it), and its build is a
  k-means over a sample plus one pass;
- ``hnsw``: ``IndexHNSWFlat`` (float32 vectors and a graph), read into memory; its build grows as
  n log n.

docs/scale.md («The dense index by size») has the measurements and the rule that picks ``ivf``.
Recall against exact search is measured by ``scripts/bench_ann.py`` and ``scripts/bench_scale_steps.py
dense``. Results are deterministic: best score first, ties broken by lower row id. Filters
(``allowed``) apply before the top-k is cut, so a query asking for k hits gets k hits whenever k
rows are allowed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import faiss
import numpy as np

__all__ = ["ANN_KINDS", "STORAGES", "DenseIndex", "DenseIndexError", "use_all_cores"]

STORAGES = ("fp16", "fp32")
ANN_KINDS = ("ivf", "hnsw")
"""The approximate kinds, for more than ``ann_threshold`` vectors (the exact one is ``flat``)."""

# FAISS's k-means wants at least 39 training points per list; an IVF trains on this many per list
# (a strided sample of the rows, `train_rows`), so a corpus of n rows gets at most n / 40 lists.
IVF_TRAIN_PER_LIST = 40

INDEX_FILE = "dense.faiss"
META_FILE = "dense.json"

# Below this many allowed rows, a filtered HNSW query is answered exactly from the allowed rows alone:
# cheaper than a filtered graph walk and it can never come back short. (Exact indexes filter inside
# their FAISS scan at any size.)
EXACT_SUBSET_MAX = 20_000

CORES = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
"""FAISS threads for building (`use_all_cores`); importing this module leaves FAISS's setting alone,
so ``openxiv serve``'s one thread (``OMP_NUM_THREADS``) holds."""
# Up to this many queries per call run on one OpenMP thread: a single query split over threads
# spends most of its CPU time in barriers (docs/service.md, «Concurrency and tuning»), and a service
# answers concurrent requests on separate threads anyway.
SINGLE_THREAD_MAX_QUERIES = 4


def use_all_cores() -> None:
    """Let FAISS use every core this process may run on (`CORES`): what an index build wants. An
    explicit call of the build, never done on import, so a server keeps the threads it chose."""
    faiss.omp_set_num_threads(CORES)


_faiss: Any = faiss  # the SWIG module's stubs lack the search-parameter classes


class DenseIndexError(ValueError):
    """Bad vectors, a bad query, or an unreadable index directory."""


def _as_matrix(x: np.ndarray, dim: int | None, what: str) -> np.ndarray:
    a = np.asarray(x, dtype=np.float32)
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2 or (dim is not None and a.shape[1] != dim):
        want = f"(n, {dim})" if dim is not None else "(n, dim)"
        raise DenseIndexError(f"{what}: expected a {want} float array, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise DenseIndexError(f"{what}: contains NaN or infinite values")
    return np.ascontiguousarray(a)


def _order(scores: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort one result row by (-score, id); ``-1`` padding goes last."""
    valid = ids >= 0
    key_score = np.where(valid, -scores, np.inf)
    key_id = np.where(valid, ids, np.iinfo(np.int64).max)
    o = np.lexsort((key_id, key_score))
    return scores[o], ids[o]


def ivf_lists(n: int) -> tuple[int, int]:
    """``(nlist, nprobe)`` of an IVF over ``n`` rows: ``4 sqrt(n)`` lists (at most n / 40, so each
    list has its training points), 1/32 of them probed (at least 16)."""
    nlist = max(1, min(int(4 * np.sqrt(max(n, 1))), n // IVF_TRAIN_PER_LIST))
    return nlist, min(nlist, max(16, nlist // 32))


def train_rows(n: int, nlist: int) -> np.ndarray:
    """The rows an IVF of ``nlist`` lists over ``n`` rows trains on: evenly strided over all rows
    (not the first ones, which a corpus may hold in date order), the same on every run."""
    m = min(n, IVF_TRAIN_PER_LIST * nlist)
    return np.unique(np.linspace(0, n - 1, m).astype(np.int64)) if n else np.zeros(0, dtype=np.int64)


class DenseIndex:
    def __init__(self, index: Any, kind: str, params: dict[str, Any] | None = None) -> None:
        self.index = index
        self.kind = kind
        """``flat`` (exact), ``ivf`` or ``hnsw`` (approximate)."""
        self.params: dict[str, Any] = dict(params or {})
        self.readonly = False

    @property
    def approximate(self) -> bool:
        return self.kind in ANN_KINDS

    # ----------------------------------------------------------------------------------- build
    @classmethod
    def build(
        cls,
        vectors: np.ndarray,
        ann_threshold: int = 200_000,
        *,
        ann: str = "ivf",
        hnsw_m: int = 32,
        ef_construction: int = 200,
        ef_search: int = 256,
        dim: int | None = None,
        storage: str = "fp16",
    ) -> DenseIndex:
        """Exact search for ``n <= ann_threshold`` vectors (stored as ``storage``: ``fp16`` or ``fp32``),
        else the approximate kind ``ann`` (an IVF is trained on `train_rows` of ``vectors``).

        ``dim`` is only needed for an empty index (``vectors`` of shape ``(0, dim)`` suffices too)."""
        vecs = np.asarray(vectors, dtype=np.float32)
        if vecs.ndim == 2:
            dim = int(vecs.shape[1])
        if dim is None or dim <= 0:
            raise DenseIndexError(f"vectors: expected an (n, dim) array, got shape {vecs.shape}")
        vecs = _as_matrix(vecs.reshape(-1, dim), dim, "vectors")
        out = cls.create(
            len(vecs),
            dim,
            ann_threshold,
            ann=ann,
            hnsw_m=hnsw_m,
            ef_construction=ef_construction,
            ef_search=ef_search,
            storage=storage,
        )
        if out.needs_training:
            out.train(vecs[out.train_rows()])
        if len(vecs):
            out.index.add(vecs)
        return out

    @classmethod
    def create(
        cls,
        n: int,
        dim: int,
        ann_threshold: int = 200_000,
        *,
        ann: str = "ivf",
        hnsw_m: int = 32,
        ef_construction: int = 200,
        ef_search: int = 256,
        storage: str = "fp16",
    ) -> DenseIndex:
        """An empty index of the kind `build` picks for ``n`` vectors, to be filled with `add` (a
        streaming build adds its vectors a chunk at a time; an exact index ends the same bytes). An
        IVF must be trained first (`needs_training`, `train_rows`, `train`)."""
        if storage not in STORAGES:
            raise DenseIndexError(f"storage must be one of {', '.join(STORAGES)}, got {storage!r}")
        if ann not in ANN_KINDS:
            raise DenseIndexError(f"ann must be one of {', '.join(ANN_KINDS)}, got {ann!r}")
        if dim <= 0:
            raise DenseIndexError(f"dim must be > 0, got {dim}")
        if n > ann_threshold and ann == "hnsw":
            index: Any = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = ef_construction
            index.hnsw.efSearch = ef_search
            params = {"M": hnsw_m, "efConstruction": ef_construction, "efSearch": ef_search}
            out = cls(index, "hnsw", params)
        elif n > ann_threshold:
            nlist, nprobe = ivf_lists(n)
            quantizer: Any = faiss.IndexFlatIP(dim)
            ivf = faiss.IndexIVFScalarQuantizer(
                quantizer, dim, nlist, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT
            )
            ivf.by_residual = False  # float16 of each vector (as the exact fp16 index), not of its residual
            ivf.own_fields = True
            quantizer.this.disown()  # the IVF frees its quantizer
            ivf.nprobe = nprobe
            ivf.set_direct_map_type(_faiss.DirectMap.Array)  # reconstruct(row) for exact rescoring
            out = cls(ivf, "ivf", {"nlist": nlist, "nprobe": nprobe, "codes": "fp16", "rows": n})
        elif storage == "fp16":
            sq = faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT)
            if not sq.is_trained:
                sq.train(np.zeros((1, dim), dtype=np.float32))  # fp16 has nothing to learn
            out = cls(sq, "flat", {"storage": "fp16"})
        else:
            out = cls(faiss.IndexFlatIP(dim), "flat", {"storage": "fp32"})
        out.params["ann_threshold"] = int(ann_threshold)
        return out

    @property
    def needs_training(self) -> bool:
        return not bool(self.index.is_trained)

    def train_rows(self) -> np.ndarray:
        """The rows (of the ``rows`` the index was created for) its training sample is: `train_rows`."""
        return train_rows(int(self.params.get("rows", 0)), int(self.params.get("nlist", 1)))

    def train(self, sample: np.ndarray) -> None:
        """Learn an IVF's lists (k-means over ``sample``, FAISS's fixed seed): before any `add`."""
        if not self.needs_training:
            raise DenseIndexError(f"a {self.kind} index has nothing to train")
        vecs = _as_matrix(sample, self.dim, "training sample")
        if len(vecs) < int(self.params.get("nlist", 1)):
            raise DenseIndexError(f"training sample: {len(vecs)} rows for {self.params.get('nlist')} lists")
        self.index.train(vecs)

    @property
    def ntotal(self) -> int:
        return int(self.index.ntotal)

    @property
    def dim(self) -> int:
        return int(self.index.d)

    def add(self, vectors: np.ndarray) -> range:
        """Append rows (incremental update); returns the row ids they got."""
        if self.readonly:
            raise DenseIndexError("this index was loaded with mmap=True (read-only); load(mmap=False) to add")
        vecs = _as_matrix(vectors, self.dim, "vectors")
        if self.needs_training:
            raise DenseIndexError("this IVF index is not trained yet: train() it on a sample before add()")
        start = self.ntotal
        if len(vecs):
            self.index.add(vecs)
        return range(start, self.ntotal)

    # ---------------------------------------------------------------------------------- search
    def search(
        self, query_vecs: np.ndarray, k: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top ``k`` rows per query: ``(scores, ids)`` of shape ``(nq, k)``, best first, ties by lower
        id; rows past the available hits hold score ``-inf`` and id ``-1``. ``allowed`` (bool, one per
        row) restricts the candidates before the cut. A 1-D query gives ``(1, k)`` arrays."""
        q = _as_matrix(query_vecs, self.dim, "query")
        nq, n = len(q), self.ntotal
        if k < 0:
            raise DenseIndexError(f"k must be >= 0, got {k}")
        scores = np.full((nq, k), -np.inf, dtype=np.float32)
        ids = np.full((nq, k), -1, dtype=np.int64)
        if k == 0 or n == 0:
            return scores, ids
        if allowed is not None:
            allowed = np.asarray(allowed, dtype=bool)
            if allowed.shape != (n,):
                raise DenseIndexError(f"allowed: expected {n} booleans (one per row), got {allowed.shape}")
            n_allowed = int(allowed.sum())
            if n_allowed == 0:
                return scores, ids
            if n_allowed == n:
                allowed = None
            elif self.approximate and n_allowed <= EXACT_SUBSET_MAX:
                # a graph walk (or a probe of a few lists) over few allowed rows is slow or can come
                # back short; an exact index
                # scans every code anyway and skips the others itself (IDSelectorBitmap), which is
                # cheaper than gathering the allowed vectors with float16 storage, where gathering means
                # decoding (docs/embeddings.md, «Dense index»)
                return self._subset_exact(q, k, np.flatnonzero(allowed), scores, ids)
        want = min(k, n if allowed is None else int(allowed.sum()))
        s, i = self._faiss_search(q, want, allowed)
        for r in range(nq):
            if self.approximate and int((i[r] >= 0).sum()) < want:
                # the graph walk or the probed lists came back short (heavy filter): answer it exactly
                sub = np.flatnonzero(allowed) if allowed is not None else np.arange(n)
                s2, i2 = self._subset_exact(q[r : r + 1], k, sub, scores[r : r + 1], ids[r : r + 1])
                scores[r], ids[r] = s2[0], i2[0]
                continue
            sr, ir = _order(s[r], i[r])
            m = min(k, len(ir))
            scores[r, :m], ids[r, :m] = sr[:m], ir[:m]
        return scores, ids

    def _faiss_search(
        self, q: np.ndarray, want: int, allowed: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """FAISS search widened until the last kept score is strictly above the first dropped one,
        so tie-breaking by id is exact even at the cut."""
        n = self.ntotal
        limit = n if allowed is None else int(allowed.sum())
        params = None
        bitmap = None
        if allowed is not None:
            bitmap = np.packbits(allowed, bitorder="little")
            sel = faiss.IDSelectorBitmap(n, faiss.swig_ptr(bitmap))
            if self.kind == "hnsw":
                params = _faiss.SearchParametersHNSW(sel=sel, efSearch=self.params.get("efSearch", 256))
            elif self.kind == "ivf":
                params = _faiss.SearchParametersIVF(sel=sel, nprobe=int(self.params["nprobe"]))
            else:
                params = _faiss.SearchParameters(sel=sel)
        fetch = min(limit, want + 8)
        single = len(q) <= SINGLE_THREAD_MAX_QUERIES
        threads = faiss.omp_get_max_threads()
        while True:
            if single:
                faiss.omp_set_num_threads(1)
            try:
                if params is not None:
                    s, i = self.index.search(q, fetch, params=params)
                else:
                    s, i = self.index.search(q, fetch)
            finally:
                if single:
                    faiss.omp_set_num_threads(threads)  # the caller's setting, not ours
            if fetch >= limit or self.approximate:
                break
            last_kept = np.sort(s, axis=1)[:, ::-1][:, want - 1]
            if np.all(s.min(axis=1) < last_kept):
                break
            fetch = min(limit, fetch * 2)
        del bitmap  # kept alive until here: the selector points into it
        return s, i

    def _subset_exact(
        self, q: np.ndarray, k: int, rows: np.ndarray, scores: np.ndarray, ids: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        vecs = self.reconstruct(rows)
        sims = q @ vecs.T
        m = min(k, len(rows))
        for r in range(len(q)):
            row = sims[r]
            if m < len(row):
                # everything scoring at least the m-th best (ties included), then an exact sort
                kth = np.partition(row, len(row) - m)[len(row) - m]
                cand = np.flatnonzero(row >= kth)
            else:
                cand = np.arange(len(row))
            o = cand[np.lexsort((rows[cand], -row[cand]))][:m]
            scores[r, :m] = row[o]
            ids[r, :m] = rows[o]
        return scores, ids

    def reconstruct(self, rows: np.ndarray) -> np.ndarray:
        """The stored vectors of ``rows`` (as stored: float16-rounded under ``fp16`` storage)."""
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        return np.asarray(self.index.reconstruct_batch(rows), dtype=np.float32)

    # ------------------------------------------------------------------------------ persistence
    def save(self, directory: str | Path) -> Path:
        """Write ``dense.faiss`` and ``dense.json`` (kind, dim, ntotal, parameters) into ``directory``."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / (INDEX_FILE + ".tmp")
        faiss.write_index(self.index, str(tmp))
        os.replace(tmp, d / INDEX_FILE)
        meta = {
            "kind": self.kind,
            "dim": self.dim,
            "ntotal": self.ntotal,
            "metric": "inner_product",
            "params": self.params,
            "faiss_version": faiss.__version__,
        }
        (d / META_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        return d / INDEX_FILE

    @classmethod
    def load(cls, directory: str | Path, mmap: bool = True) -> DenseIndex:
        """Open a saved index; ``mmap=True`` maps the vectors read-only instead of reading them."""
        d = Path(directory)
        path, meta_path = d / INDEX_FILE, d / META_FILE
        if not path.exists() or not meta_path.exists():
            raise DenseIndexError(f"{d}: no dense index here (expected {INDEX_FILE} and {META_FILE})")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        try:
            if mmap:
                index = faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY)
            else:
                index = faiss.read_index(str(path))
        except RuntimeError as exc:
            raise DenseIndexError(f"{path}: cannot read the FAISS index: {exc}") from exc
        if int(index.ntotal) != int(meta["ntotal"]) or int(index.d) != int(meta["dim"]):
            raise DenseIndexError(f"{path}: index does not match {META_FILE} (ntotal/dim)")
        out = cls(index, meta["kind"], meta.get("params"))
        if out.kind == "hnsw":
            out.index.hnsw.efSearch = int(out.params.get("efSearch", 256))
        elif out.kind == "ivf":
            out.index.nprobe = int(out.params["nprobe"])
        out.readonly = mmap
        return out

    def info(self) -> dict[str, Any]:
        return {"kind": self.kind, "dim": self.dim, "ntotal": self.ntotal, **self.params}
