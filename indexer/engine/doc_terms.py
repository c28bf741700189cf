"""`DocTerms`: the terms (and BM25 weights) of each paper, the row-major copy of the BM25 matrix
that pseudo-relevance feedback reads (`openxiv.indexer.engine.prf`).

The BM25 matrix is stored by column (a term's postings); feedback needs the words of its ten
feedback papers, so it needs the matrix by row. Made in memory at open (one ``tocsr`` pass), that
copy costs every server process seconds at millions of papers and a private copy of the matrix's
size. The build therefore writes it into the snapshot (`write_doc_terms`, three ``doc_terms_*.npy``
files beside the matrix), and serving memory-maps it (`DocTerms.load`): the worker processes share
its pages, and feedback touches only its feedback papers' rows. A snapshot built before it has no
such files and is transposed at open, as before.

`write_doc_terms` transposes with bounded memory: the rows' lengths first (one pass over the
postings), then blocks of consecutive rows, each gathered from every column's next postings (a
column's rows ascend, so one cursor per column walks it once over all the blocks) into a buffer
written at its place in the files. The rows come out with their terms in ascending term id, the
same arrays scipy's ``tocsr`` makes (tested equal), so feedback adds the same floats in the same
order either way.
"""

from __future__ import annotations

from pathlib import Path

import numba
import numpy as np
import scipy.sparse

from openxiv.indexer.engine.sparse import SparseIndex

__all__ = ["DocTerms", "relevance_model", "write_doc_terms"]

FILES = {"ptr": "doc_terms_ptr.npy", "terms": "doc_terms_terms.npy", "weights": "doc_terms_weights.npy"}
"""The arrays of `DocTerms` in a BM25 directory of the snapshot."""
BLOCK_ENTRIES = 1 << 24
"""Entries (term + weight) gathered per block of rows by `write_doc_terms`: its buffers' size."""


class DocTerms:
    """Row-major copy of a `SparseIndex` matrix: the terms (and BM25 weights) of each document."""

    def __init__(self, sparse: SparseIndex, arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None):
        """The copy of ``sparse``'s matrix: made now, or ``arrays`` (``ptr, terms, weights``) read back."""
        self.sparse = sparse
        if arrays is None:
            n_vocab = sparse.indptr.size - 1
            csc = scipy.sparse.csc_matrix(
                (sparse.data, sparse.indices, sparse.indptr), shape=(sparse.n_docs, n_vocab), copy=False
            )
            csr = csc.tocsr()  # one O(nnz) pass in C
            arrays = (csr.indptr.astype(np.int64), csr.indices, csr.data.astype(np.float32, copy=False))
        self.ptr, self.terms, self.weights = arrays
        """Terms of document d: ``terms[ptr[d]:ptr[d+1]]``, ascending, with their BM25 ``weights``."""

    @classmethod
    def load(cls, sparse: SparseIndex, directory: Path) -> DocTerms | None:
        """The copy the build wrote beside ``sparse``'s matrix, memory-mapped; ``None`` when the
        snapshot has none (built before it), or one of another matrix's shape."""
        paths = {name: Path(directory) / file for name, file in FILES.items()}
        if not all(p.is_file() for p in paths.values()):
            return None
        ptr, terms, weights = (np.load(paths[n], mmap_mode="r") for n in ("ptr", "terms", "weights"))
        if ptr.shape != (sparse.n_docs + 1,) or terms.shape != sparse.indices.shape:
            return None
        return cls(sparse, (ptr, terms, weights))

    def relevance_model(
        self, rows: np.ndarray, doc_weights: np.ndarray, n_terms: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """`relevance_model` over this matrix's rows."""
        return relevance_model(self.ptr, self.terms, self.weights, rows, doc_weights, n_terms)


def relevance_model(
    ptr: np.ndarray,
    terms_of: np.ndarray,
    weights_of: np.ndarray,
    rows: np.ndarray,
    doc_weights: np.ndarray,
    n_terms: int,
) -> tuple[np.ndarray, np.ndarray]:
    """``P(w|R)`` over the terms of ``rows`` (weighted by ``doc_weights``) of the row-major matrix
    ``ptr`` / ``terms_of`` / ``weights_of`` (a `DocTerms`' arrays, or the feedback papers' own read
    back from Milvus: `openxiv.indexer.engine.milvus_feedback`): the ``n_terms`` best term ids and
    their weights (summing to 1), best first, ties by term id."""
    terms, contrib = [], []
    for row, dw in zip(rows.tolist(), doc_weights.tolist(), strict=True):
        lo, hi = int(ptr[row]), int(ptr[row + 1])
        w = weights_of[lo:hi].astype(np.float64)
        total = float(w.sum())
        if hi <= lo or total <= 0:
            continue
        terms.append(terms_of[lo:hi])
        contrib.append(dw * w / total)
    if not terms:
        return np.zeros(0, np.int64), np.zeros(0, np.float64)
    uniq, inv = np.unique(np.concatenate(terms), return_inverse=True)
    p = np.bincount(inv, weights=np.concatenate(contrib), minlength=uniq.size)
    order = np.lexsort((uniq, -p))[:n_terms]
    best, pw = uniq[order].astype(np.int64), p[order]
    return best, pw / pw.sum()


def write_doc_terms(sparse: SparseIndex, directory: Path, block_entries: int = BLOCK_ENTRIES) -> int:
    """Write ``sparse``'s matrix by rows into ``directory`` (`FILES`), holding at most about
    ``block_entries`` entries besides the matrix; returns the bytes written."""
    n_docs, nnz = sparse.n_docs, int(sparse.indices.size)
    lengths = np.zeros(n_docs, dtype=np.int64)
    step = max(1, block_entries)
    for lo in range(0, nnz, step):
        lengths += np.bincount(sparse.indices[lo : lo + step], minlength=n_docs)
    ptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    directory = Path(directory)
    np.save(directory / FILES["ptr"], ptr)
    terms_dtype = np.dtype(np.int32)
    with (
        _NpyWriter(directory / FILES["terms"], terms_dtype, nnz) as terms_out,
        _NpyWriter(directory / FILES["weights"], np.dtype(np.float32), nnz) as weights_out,
    ):
        cursor = np.asarray(sparse.indptr[:-1], dtype=np.int64).copy()
        row = 0
        while row < n_docs:
            end = _block_end(ptr, row, block_entries)
            size = int(ptr[end] - ptr[row])
            terms = np.empty(size, dtype=terms_dtype)
            weights = np.empty(size, dtype=np.float32)
            fill = ptr[row:end] - ptr[row]
            _gather_rows(sparse.indptr, sparse.indices, sparse.data, cursor, row, end, fill, terms, weights)
            terms_out.write(terms)
            weights_out.write(weights)
            row = end
    return sum((directory / f).stat().st_size for f in FILES.values())


def _block_end(ptr: np.ndarray, row: int, block_entries: int) -> int:
    """The end of the block of rows starting at ``row``: as many rows as fit ``block_entries``
    entries, and at least one."""
    end = int(np.searchsorted(ptr, ptr[row] + block_entries, side="right")) - 1
    return min(max(end, row + 1), ptr.size - 1)


@numba.njit(nogil=True)
def _gather_rows(indptr, indices, data, cursor, lo, hi, fill, terms, weights):  # pragma: no cover - compiled
    """Rows ``lo..hi-1`` of the matrix into ``terms``/``weights`` (``fill[r - lo]``: where row r's
    next entry goes); ``cursor[t]``: column t's first posting not yet gathered, moved past the block."""
    for t in range(indptr.size - 1):
        j = cursor[t]
        end = indptr[t + 1]
        while j < end and indices[j] < hi:
            r = indices[j] - lo
            terms[fill[r]] = t
            weights[fill[r]] = data[j]
            fill[r] += 1
            j += 1
        cursor[t] = j


class _NpyWriter:
    """A ``.npy`` file of ``count`` items of ``dtype`` written block by block, in order."""

    def __init__(self, path: Path, dtype: np.dtype, count: int) -> None:
        self.path, self.dtype, self.count, self.written = path, dtype, count, 0
        self.fh = open(path, "wb")  # noqa: SIM115 - closed by __exit__
        header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": (count,)}
        np.lib.format.write_array_header_1_0(self.fh, header)

    def write(self, block: np.ndarray) -> None:
        np.ascontiguousarray(block, dtype=self.dtype).tofile(self.fh)
        self.written += int(block.size)

    def __enter__(self) -> _NpyWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.fh.close()
        if exc[0] is None and self.written != self.count:
            raise RuntimeError(f"{self.path}: {self.written} of {self.count} items written")
